/*
 * test_calibrate.c - a quick calibration in a temporary directory: it succeeds, every measured
 * parameter is finite and > 0 (sanity only: a test never asserts a time), the profile it
 * makes saves and loads back identically, and it leaves no file behind. A directory that does
 * not exist is an error with a message.
 */
#include "check.h"
#include "model/model.h"

#include <dirent.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

static int entries(const char *d)
{
    int n = 0;
    DIR *dp = opendir(d);
    CHECK(dp);
    for (struct dirent *e; (e = readdir(dp));)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(dp);
    return n;
}

static void check_variant(const tessi_profile *pf, const tessi_calib_spread *sp, int var)
{
    const tessi_model *m = &pf->model[var];
    CHECK_OK(tessi_model_check(m));
    for (int id = 0; id < TESSI_NPARAMS; id++) {
        const tessi_spread *s = &sp->v[var][id];
        double v = tessi_param_get(m, id);
        if (!s->measured)
            continue;
        if (!(isfinite(v) && v > 0 && s->min > 0 && s->min <= s->med && s->med <= s->max &&
              isfinite(s->max))) {
            fprintf(stderr, "variant %d %s = %g [%g, %g]\n", var, tessi_param_key(id), v, s->min,
                    s->max);
            exit(1);
        }
    }
    /* what must have been measured everywhere */
    CHECK(sp->v[var][TESSI_PARAM_READ_S].measured && sp->v[var][TESSI_PARAM_READ_TT].measured);
    CHECK(sp->v[var][TESSI_PARAM_WRITE_S].measured && sp->v[var][TESSI_PARAM_WRITE_TT].measured);
    CHECK(sp->v[var][TESSI_PARAM_MC].measured);
    CHECK(sp->v[var][TESSI_PARAM_LOCK].measured == m->locks);
    /* the page cache has its dirty figures; uncached writes reach the device: an overwrite is
     * priced as new data */
    CHECK(sp->v[var][TESSI_PARAM_WRITE_S_DIRTY].measured == (var == TESSI_CACHED));
    CHECK(var == TESSI_CACHED || (m->dir[1].s_dirty == m->dir[1].s &&
                                  m->dir[1].tt_dirty == m->dir[1].tt));
    CHECK(!sp->v[var][TESSI_PARAM_READ_TE].measured && m->dir[0].te == 0 && m->n == 1);
}

int main(void)
{
    char dir[256], cwd[200], path[400];
    CHECK(getcwd(cwd, sizeof cwd));
    snprintf(dir, sizeof dir, "%s/calib-test-XXXXXX", cwd);
    CHECK(mkdtemp(dir));

    static tessi_profile pf, back;
    static tessi_calib_spread sp;
    CHECK_OK(tessi_calibrate("posix", dir, true, &pf, &sp));
    CHECK(!pf.defaults && pf.storage[0] && pf.date[0] && pf.machine[0]);
    CHECK(strcmp(pf.driver, "posix") == 0);
    CHECK(entries(dir) == 0); /* the temporary file is gone */
    check_variant(&pf, &sp, TESSI_CACHED);
    if (pf.uncached != TESSI_UNCACHED_NONE)
        check_variant(&pf, &sp, TESSI_UNCACHED);
    printf("uncached variant: %s; locks %d; batched %d\n",
           pf.uncached == TESSI_UNCACHED_DIRECT ? "O_DIRECT"
           : pf.uncached == TESSI_UNCACHED_DROP ? "drop" : "none",
           pf.model[0].locks, pf.model[0].batched);

    /* thread teams: s_min a block size of the sweep, active threads 1 .. 8, the curves
     * positive; the temporary file gone */
    static tessi_team_curve tc;
    CHECK_OK(tessi_calibrate_team("posix", dir, true, &pf, &tc));
    CHECK(pf.team_smin >= 8192 && pf.team_smin <= (4 << 20) && pf.team_active >= 1 &&
          pf.team_active <= 8 && tc.nsizes == 10 && tc.nthreads == 8);
    for (int k = 0; k < tc.nsizes; k++)
        CHECK(tc.size_bw[k] > 0);
    CHECK(entries(dir) == 0);

    snprintf(path, sizeof path, "%s/profile", dir);
    CHECK_OK(tessi_profile_save(path, &pf));
    CHECK_OK(tessi_profile_load(path, &back));
    CHECK(back.team_smin == pf.team_smin && back.team_active == pf.team_active);
    for (int var = 0; var < (pf.uncached != TESSI_UNCACHED_NONE ? 2 : 1); var++)
        for (int id = 0; id < TESSI_NPARAMS; id++)
            CHECK(tessi_param_get(&back.model[var], id) == tessi_param_get(&pf.model[var], id));
    CHECK(back.uncached == pf.uncached && strcmp(back.storage, pf.storage) == 0);
    CHECK(strcmp(back.driver, "posix") == 0);
    CHECK(unlink(path) == 0 && rmdir(dir) == 0);

    CHECK_ERR(tessi_calibrate("posix", dir, true, &pf, NULL), TESS_ERR_NOENT); /* dir gone */
    CHECK(strstr(tess_last_error(), dir));

    /* any driver calibrates through the driver interface: the in-memory one has no locks, no
     * batches and no uncached variant (memory storage) */
    CHECK_OK(tessi_calibrate("mem", "calib", true, &pf, &sp));
    CHECK(strcmp(pf.driver, "mem") == 0 && pf.uncached == TESSI_UNCACHED_NONE);
    CHECK(!pf.model[0].locks && !pf.model[0].batched);
    check_variant(&pf, &sp, TESSI_CACHED);
    CHECK_ERR(tessi_calibrate("nfs4", dir, true, &pf, NULL), TESS_ERR_ARG);
    printf("test_calibrate: ok\n");
    return 0;
}
