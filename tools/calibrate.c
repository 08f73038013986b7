/*
 * calibrate.c - `tessera calibrate [--quick] [--driver NAME] [--out FILE] [path]`: measure the
 * cost model's parameters of a storage driver (default posix, or the driver a "<driver>:"
 * prefix of path names: rados:POOL/DIR) on the storage behind path (default: the current
 * directory), print each with its median and range over the repetitions, and save the profile
 * (default: where files of that driver opened without hint tess_profile look for it:
 * $TESS_PROFILE, else $XDG_CONFIG_HOME/tessera/profile[.<driver>], else
 * ~/.config/tessera/profile[.<driver>]).
 */
#include "cmds.h"

#include "driver/driver.h"
#include "model/model.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: tessera calibrate [--quick] [--driver NAME] [--out FILE] [path]\n"
            "  Measure the cost model (per-call start-up, transfer time per byte, memcpy, lock,\n"
            "  list batches, datatype-I/O requests where the driver has them; page cache and,\n"
            "  where the file system allows, uncached), and s_min and active threads of thread\n"
            "  teams (paper 001 3.4.4), on the storage behind path (default .) and save the\n"
            "  profile. A path rados:POOL/DIR calibrates the RADOS driver on that pool (the\n"
            "  cluster: $CEPH_CONF, else librados' search).\n"
            "  --quick        about a second instead of about fifteen\n"
            "  --driver NAME  the storage driver to measure (default posix, or the path's\n"
            "                 prefix)\n"
            "  --out FILE     write the profile there instead of the default location\n"
            "                 ($TESS_PROFILE, else $XDG_CONFIG_HOME/tessera/profile,\n"
            "                 else ~/.config/tessera/profile; profile.NAME for other drivers)\n");
}

static void print_param(int id, const tessi_model *m, const tessi_spread *s)
{
    double v = tessi_param_get(m, id);
    const char *key = tessi_param_key(id), *doc = tessi_param_doc(id);
    if (!s->measured) {
        printf("  %-16s %10.3g %-5s %-22s %s (not measured)\n", key, v, tessi_param_unit(id), "",
               doc);
        return;
    }
    if (strcmp(tessi_param_unit(id), "s/B") == 0) /* a time per byte reads best as a rate */
        printf("  %-16s %10.4g GB/s  [%8.4g, %8.4g]   %s\n", key, 1e-9 / v, 1e-9 / s->max,
               1e-9 / s->min, doc);
    else
        printf("  %-16s %10.4g us    [%8.4g, %8.4g]   %s\n", key, v * 1e6, s->min * 1e6,
               s->max * 1e6, doc);
}

static void print_variant(const char *title, const tessi_model *m, const tessi_spread *sp)
{
    printf("\n%s\n  %-16s %10s %-5s  %-22s\n", title, "parameter", "median", "", "[min, max]");
    for (int id = 0; id < TESSI_NPARAMS; id++)
        print_param(id, m, &sp[id]);
    printf("  byte-range locks: %s; list batches: %s\n", m->locks ? "granted" : "refused",
           m->batched ? "one call per batch" : "unavailable (one call per region)");
    printf("  (te, cud and lq_dep cannot be told apart from s and tt on one storage: 0)\n");
}

int tess_cmd_calibrate(int argc, char **argv)
{
    const char *dir = ".", *out = NULL, *driver = "posix";
    bool quick = false, have_dir = false, driver_given = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(argv[i], "--quick") == 0) {
            quick = true;
        } else if (strcmp(argv[i], "--driver") == 0 && i + 1 < argc) {
            driver = argv[++i];
            driver_given = true;
        } else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc) {
            out = argv[++i];
        } else if (strncmp(argv[i], "--out=", 6) == 0 && argv[i][6]) {
            out = argv[i] + 6;
        } else if (argv[i][0] == '-' || have_dir) {
            fprintf(stderr, "tessera calibrate: unexpected argument '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        } else {
            dir = argv[i];
            have_dir = true;
        }
    }

    const char *rest;
    const struct tess_driver *by_path = tessi_driver_of_path(dir, &rest);
    if (by_path && driver_given && strcmp(driver, by_path->name) != 0) {
        fprintf(stderr, "tessera calibrate: path '%s' names the %s driver, --driver %s\n", dir,
                by_path->name, driver);
        return 2;
    }
    if (by_path) {
        driver = by_path->name;
        dir = rest;
    }
    char where[4096];
    tessi_profile_source src;
    if (!out) {
        if (tessi_profile_locate(NULL, driver, where, sizeof where, &src) != 0) {
            fprintf(stderr, "tessera calibrate: %s (use --out FILE)\n", tess_last_error());
            return 1;
        }
        out = where;
    }

    static tessi_profile pf;
    static tessi_calib_spread sp;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = tessi_calibrate(driver, dir, quick, &pf, &sp);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (rc) {
        fprintf(stderr, "tessera calibrate: %s\n", tess_last_error());
        return 1;
    }
    static const char *const modes[] = {"none (no device behind the page cache, or no way around it)",
                                        "O_DIRECT", "fsync + posix_fadvise(DONTNEED)"};
    printf("tessera calibrate: %s mode, %.1f s\n  driver   %s\n  storage  %s\n  machine  %s\n"
           "  date     %s\n  uncached %s\n",
           quick ? "quick" : "full",
           (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec), pf.driver,
           pf.storage, pf.machine, pf.date, modes[pf.uncached]);
    print_variant("page cache", &pf.model[TESSI_CACHED], sp.v[TESSI_CACHED]);
    if (pf.uncached != TESSI_UNCACHED_NONE)
        print_variant(pf.uncached == TESSI_UNCACHED_DIRECT ? "uncached (O_DIRECT; writes reach "
                                                             "the device)"
                                                           : "uncached (evicted before each "
                                                             "sample; writes fdatasync'ed)",
                      &pf.model[TESSI_UNCACHED], sp.v[TESSI_UNCACHED]);

    /* thread teams: s_min and active threads (paper 001 3.4.4) */
    static tessi_team_curve tc;
    if ((rc = tessi_calibrate_team(driver, dir, quick, &pf, &tc))) {
        fprintf(stderr, "tessera calibrate: %s\n", tess_last_error());
        return 1;
    }
    printf("\nthread teams (page cache; tessera_team.h, tessera_omp.h)\n"
           "  one thread, block size -> GB/s:");
    for (int k = 0; k < tc.nsizes; k++)
        printf("%s %lldK %.2f", k % 6 ? "," : "\n   ", (long long)(tc.size[k] >> 10),
               tc.size_bw[k] * 1e-9);
    printf("\n  blocks of s_min, threads -> GB/s:\n   ");
    for (int k = 0; k < tc.nthreads; k++)
        printf("%s %d %.2f", k ? "," : "", tc.threads[k], tc.threads_bw[k] * 1e-9);
    printf("\n  s_min %lld bytes, active threads %lld (within 10%% of the best bandwidth)\n",
           (long long)pf.team_smin, (long long)pf.team_active);

    if ((rc = tessi_profile_save(out, &pf))) {
        fprintf(stderr, "tessera calibrate: %s\n", tess_last_error());
        return 1;
    }
    printf("\nprofile written to %s\n", out);
    return 0;
}
