/*
 * cluster.c - `tessera cluster start|stop`: a local Ceph cluster for the RADOS driver's tests
 * and benchmarks. The daemons are started and stopped by tools/cluster.sh (embedded in the
 * program); this file parses the options, runs the script and, with --delay-us, sets and
 * calibrates the OSDs' per-request delay.
 *
 * The delay: the kernel's netem qdisc is not available here, so the OSDs' own injection is
 * used: osd_debug_inject_dispatch_delay_duration with osd_debug_inject_dispatch_delay_probability
 * 1, set on each OSD by the `injectargs` command (what `ceph tell osd.N config set` does; the
 * OSDs of this release refuse `config set` sent through librados' rados_osd_command). The setting is not the delay a request sees (the OSD
 * dispatches a request's messages more than once), so it is calibrated: the median round trip of
 * a one-byte read is measured without delay and with the setting, and the setting is scaled
 * until the added time matches --delay-us (within 10%, at most 4 rounds). The output says the
 * mechanism, the setting and the added delay measured.
 */
#include "cmds.h"

#include <rados/librados.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern const char tess_cluster_sh[];

static int usage(FILE *f)
{
    fprintf(f, "usage: tessera cluster start --dir D --osds N [--delay-us U] [--cephx]\n"
               "                             [--store memstore|bluestore] [--op-tracker]\n"
               "       tessera cluster delay --dir D --delay-us U\n"
               "       tessera cluster stop --dir D\n"
               "A monitor and N OSDs on loopback (plain processes), pool `tessera`, D/ceph.conf.\n"
               "--delay-us adds a calibrated delay to every OSD request (Ceph's dispatch delay\n"
               "injection); delay changes it on a running cluster. --op-tracker keeps the\n"
               "OSDs' op tracker on (dump_historic_ops; off by default, as benchmarks run).\n"
               "stop ends exactly the daemons started in D.\n");
    return f == stdout ? 0 : 2;
}

static int run_script(const char *verb, const char *dir, int osds, const char *store, int cephx,
                      int tracker)
{
    char n[16], x[4], t[4];
    snprintf(n, sizeof n, "%d", osds);
    snprintf(x, sizeof x, "%d", cephx);
    snprintf(t, sizeof t, "%d", tracker);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        execlp("sh", "sh", "-c", tess_cluster_sh, "cluster.sh", verb, dir, n, store, x, t,
               (char *)NULL);
        _exit(127);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0)
        ;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Seconds of a one-byte read over objects spread on every OSD: median, or mean when mean. */
static double probe(rados_ioctx_t io, int reps, bool mean)
{
    double *t = malloc(sizeof *t * (size_t)reps), res = 0;
    char b, oid[32];
    for (int i = 0; i < reps; i++) {
        snprintf(oid, sizeof oid, "tessera.probe.%d", i % 16);
        double t0 = now();
        rados_read(io, oid, &b, 1, 0);
        t[i] = now() - t0;
        res += t[i] / reps;
    }
    qsort(t, (size_t)reps, sizeof *t, cmp_double);
    if (!mean)
        res = t[reps / 2];
    free(t);
    return res;
}

static int set_delay(rados_t c, int osds, double probability, double seconds)
{
    char cmd[256];
    const char *keys[] = {"osd_debug_inject_dispatch_delay_probability",
                          "osd_debug_inject_dispatch_delay_duration"};
    char vals[2][32];
    snprintf(vals[0], sizeof vals[0], "%.4f", seconds > 0 ? probability : 0);
    snprintf(vals[1], sizeof vals[1], "%.6f", seconds);
    for (int osd = 0; osd < osds; osd++) {
        for (int k = 0; k < 2; k++) {
            snprintf(cmd, sizeof cmd, "{\"prefix\": \"injectargs\", \"injected_args\": "
                     "[\"--%s=%s\"]}", keys[k], vals[k]);
            const char *argv[] = {cmd};
            char *out, *status;
            size_t outlen, statuslen;
            int rc = rados_osd_command(c, osd, argv, 1, "", 0, &out, &outlen, &status,
                                       &statuslen);
            rados_buffer_free(out);
            rados_buffer_free(status);
            if (rc < 0) {
                fprintf(stderr, "tessera cluster: osd.%d injectargs %s: %s\n", osd, keys[k],
                        strerror(-rc));
                return rc;
            }
        }
    }
    return 0;
}

int tess_cluster_delay(const char *dir, double delay_us, char *report, size_t cap)
{
    int osds = 0;
    char conf[1100];
    snprintf(conf, sizeof conf, "%s/ceph.conf", dir);
    rados_t c;
    rados_ioctx_t io;
    int rc = rados_create(&c, NULL);
    if (rc == 0 && (rc = rados_conf_read_file(c, conf)) == 0 &&
        (rc = rados_conf_set(c, "rados_osd_op_timeout", "60")) == 0)
        rc = rados_connect(c);
    if (rc == 0)
        rc = rados_ioctx_create(c, "tessera", &io);
    if (rc) {
        snprintf(report, cap, "cannot connect with %s: %s", conf, strerror(-rc));
        rados_shutdown(c);
        return 1;
    }
    if (osds <= 0) {
        uint64_t max = 0;
        char *out, *st;
        size_t ol, sl;
        const char *cmd[] = {"{\"prefix\": \"osd stat\", \"format\": \"json\"}"};
        if (rados_mon_command(c, cmd, 1, "", 0, &out, &ol, &st, &sl) == 0) {
            const char *p = strstr(out, "\"num_osds\":");
            if (p)
                max = strtoull(p + 11, NULL, 10);
            rados_buffer_free(out);
            rados_buffer_free(st);
        }
        osds = (int)max;
    }
    for (int i = 0; i < 16; i++) {
        char oid[32];
        snprintf(oid, sizeof oid, "tessera.probe.%d", i);
        rados_write_full(io, oid, "x", 1);
    }
    /* The OSD sleeps at several points of a request, and a sleep has a floor (the wake-up
     * time of a thread): the smallest delay at probability 1 is `floor`. Above it the sleep
     * length is scaled; below it the probability is lowered so that the mean added time is
     * the target (each request then sees either about floor or nothing). */
    double target = delay_us * 1e-6, setting = 1e-6, prob = 1, added = 0, floor_s = 0;
    rc = set_delay(c, osds, 0, 0);
    double base = probe(io, 300, false), base_mean = probe(io, 300, true);
    if (rc == 0 && target > 0 && (rc = set_delay(c, osds, 1, setting)) == 0)
        floor_s = added = probe(io, 200, false) - base;
    bool by_probability = target < 0.9 * floor_s;
    for (int round = 0; rc == 0 && target > 0 && round < 5; round++) {
        if (by_probability) {
            prob = prob * target / (added > 1e-6 ? added : 1e-6);
            prob = prob > 1 ? 1 : prob < 0.001 ? 0.001 : prob;
        } else if (round > 0 || added < 0.9 * target) {
            /* added grows about linearly with the setting: step along the last slope */
            double slope = setting > 1e-6 && added > floor_s ? (added - floor_s) / setting : 4;
            setting += (target - added) / slope;
            setting = setting < 1e-6 ? 1e-6 : setting;
        }
        if ((rc = set_delay(c, osds, prob, setting)))
            break;
        added = by_probability ? probe(io, 600, true) - base_mean : probe(io, 100, false) - base;
        if (added > 0.9 * target && added < 1.1 * target)
            break;
    }
    char note[160] = "";
    if (by_probability)
        snprintf(note, sizeof note, " (below the injection's floor of %.0f us a request is "
                 "delayed by about that or not at all)", floor_s * 1e6);
    if (rc == 0 && target > 0)
        snprintf(report, cap, "delay: %.0f us per request added by Ceph's OSD dispatch delay injection "
               "(osd_debug_inject_dispatch_delay_duration = %.1f us, _probability = %.3f, on %d "
               "OSDs); measured %s%.0f us added to a %.0f us one-byte read%s",
               delay_us, setting * 1e6, prob, osds, by_probability ? "a mean of " : "",
               added * 1e6, base * 1e6, note);
    else if (rc == 0)
        snprintf(report, cap, "delay: none (dispatch delay injection off); one-byte read "
                 "%.0f us", base * 1e6);
    else
        snprintf(report, cap, "setting the delay failed: %s", strerror(-rc));
    rados_ioctx_destroy(io);
    rados_shutdown(c);
    return rc ? 1 : 0;
}

int tess_cmd_cluster(int argc, char **argv)
{
    const char *verb = argc > 1 ? argv[1] : "", *dir = NULL, *store = "memstore";
    int osds = 0, cephx = 0, tracker = 0;
    double delay = -1;
    if (strcmp(verb, "--help") == 0 || strcmp(verb, "-h") == 0)
        return usage(stdout);
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--dir") == 0 && v)
            dir = v, i++;
        else if (strcmp(a, "--osds") == 0 && v)
            osds = atoi(v), i++;
        else if (strcmp(a, "--delay-us") == 0 && v)
            delay = atof(v), i++;
        else if (strcmp(a, "--store") == 0 && v)
            store = v, i++;
        else if (strcmp(a, "--cephx") == 0)
            cephx = 1;
        else if (strcmp(a, "--op-tracker") == 0)
            tracker = 1;
        else if (strcmp(a, "--help") == 0)
            return usage(stdout);
        else
            return usage(stderr);
    }
    if (!dir)
        return usage(stderr);
    if (strcmp(verb, "stop") == 0)
        return run_script("stop", dir, 0, store, 0, 0) ? 1 : 0;
    char report[512];
    if (strcmp(verb, "delay") == 0) {
        if (delay < 0)
            return usage(stderr);
        int st = tess_cluster_delay(dir, delay, report, sizeof report);
        fprintf(st ? stderr : stdout, "%s\n", report);
        return st;
    }
    if (strcmp(verb, "start") != 0 || osds < 1 || osds > 64 ||
        (strcmp(store, "memstore") != 0 && strcmp(store, "bluestore") != 0))
        return usage(stderr);
    int st = run_script("start", dir, osds, store, cephx, tracker);
    if (st == 77) {
        fprintf(stderr, "tessera cluster: the Ceph daemons are not installed\n");
        return 77;
    }
    if (st) {
        fprintf(stderr, "tessera cluster: start failed (logs in %s/log); stopping what "
                "started\n", dir);
        run_script("stop", dir, 0, store, 0, 0);
        return 1;
    }
    printf("cluster: 1 monitor and %d OSDs (%s) on 127.0.0.1, pool tessera, cephx %s; "
           "conf %s/ceph.conf\n", osds, store, cephx ? "on" : "off", dir);
    if (delay > 0) {
        int st = tess_cluster_delay(dir, delay, report, sizeof report);
        fprintf(st ? stderr : stdout, "%s\n", report);
        if (st) {
            run_script("stop", dir, 0, store, 0, 0);
            return 1;
        }
    }
    return 0;
}
