/*
 * test_rados_faults.c - the RADOS driver when the cluster fails. Starts its own cluster (two
 * BlueStore OSDs on files, cephx off) with `tessera cluster` (argument 1: the tessera program):
 *  - with cephx off, stats.auth_insecure says so (and nothing is printed);
 *  - an OSD killed (SIGKILL) while three processes are in calls: every process gets an error
 *    within the tess_rados_timeout (10 s) plus a margin, none hangs;
 *  - after the OSD restarts, every byte synced before the kill reads back;
 *  - a full OSD: a write returns TESS_ERR_NOSPACE (the OSDs are marked full with the
 *    `injectfull` admin command, Ceph's own test hook: filling a real 1 GiB device would take
 *    longer than the whole suite may).
 */
#include "rados/rados_common.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>

static char dir[] = "/tmp/tess_rados_faults_XXXXXX";
static char conf[256];
static const char *tessera;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static pid_t parent;
static bool stopped;

static void cluster(const char *verb);

/* A failed check exits: the cluster must not outlive the test (the parent stops it). */
static void stop_at_exit(void)
{
    if (getpid() == parent && !stopped)
        cluster("stop");
}

static void cluster(const char *verb)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "'%s' cluster %s --dir %s%s > %s/%s.out 2>&1", tessera, verb, dir,
             strcmp(verb, "start") == 0 ? " --osds 2 --store bluestore" : "", dir, verb);
    int rc = system(cmd);
    if (strcmp(verb, "start") == 0 && rc != 0) {
        /* no cluster can start here (rados_cluster_start says why): skip, as the others */
        fprintf(stderr, "cannot start the fault cluster (see %s): skipped\n", dir);
        exit(77);
    }
}

static int open_file(const char *path, int flags, tess_file **f, const char *method)
{
    const char *kv[] = {"striping_unit", "512", "striping_factor", "4",
                        "tess_rados_object_size", "512", "tess_rados_timeout", "10",
                        "tess_method", method, NULL};
    setenv("TESS_TEST_RADOS_CONF", conf, 1);
    return rt_open(path, flags, f, kv);
}

static pid_t osd_pid(int osd)
{
    char p[512];
    snprintf(p, sizeof p, "%s/run/osd.%d.pid", dir, osd);
    FILE *f = fopen(p, "r");
    CHECK(f);
    long pid = 0;
    CHECK(fscanf(f, "%ld", &pid) == 1);
    fclose(f);
    return (pid_t)pid;
}

/* The time of the kill, shared with the children (0 until then). */
static volatile double *killed_at;

/* A child: loop over calls until one fails; exit 0 if it failed after the kill and within the
 * timeout plus a margin, 4 if it failed otherwise, 2 if it never failed within 90 s. */
static int child(int id)
{
    tess_file *f;
    char path[256];
    snprintf(path, sizeof path, "rados:tessera/faults.busy.%d", id);
    if (open_file(path, TESS_RDWR | TESS_CREATE, &f, id % 2 ? "datatype" : "list")) {
        double late = *killed_at ? now() - *killed_at : -1;
        printf("process %d: open failed %.1f s after the kill (%s)\n", id, late,
               tess_last_error());
        fflush(stdout);
        return *killed_at && late < 10 + 10 ? 0 : 3;
    }
    tess_type *ft;
    /* 128 objects per call: some surely on the OSD that dies (the placement groups of 2 OSDs
     * are not split evenly: a few objects may all live on one OSD) */
    CHECK_OK(tess_type_vector(256, 16, 256, TESS_BYTE, &ft));
    CHECK_OK(tess_file_set_view(f, 0, TESS_BYTE, ft));
    static char buf[4096];
    double start = now();
    for (int i = 0;; i++) {
        int64_t moved;
        int rc = i % 2 ? tess_file_read_at(f, 0, buf, sizeof buf, TESS_BYTE, &moved)
                       : tess_file_write_at(f, 0, buf, sizeof buf, TESS_BYTE, &moved);
        if (rc) {
            double late = *killed_at ? now() - *killed_at : -1;
            printf("process %d: error %.1f s after the kill (%s)\n", id, late,
                   tess_last_error());
            fflush(stdout);
            return *killed_at && late < 10 + 10 ? 0 : 4;
        }
        if (now() - start > 90) {
            printf("process %d: %d calls succeeded, the last %.1f s after the kill\n", id, i,
                   *killed_at ? now() - *killed_at : -1);
            fflush(stdout);
            return 2;
        }
    }
}

static void test_kill_and_restart(void)
{
    killed_at = mmap(NULL, sizeof *killed_at, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                     -1, 0);
    CHECK(killed_at != MAP_FAILED);
    *killed_at = 0;
    pid_t kids[3];
    for (int i = 0; i < 3; i++) {
        fflush(stdout);
        kids[i] = fork();
        CHECK(kids[i] >= 0);
        if (kids[i] == 0)
            _exit(child(i));
    }
    /* durable data (written after the fork: a process that forks must not have used librados,
     * whose threads may hold locks the child would inherit held) */
    char path[256] = "rados:tessera/faults.durable";
    tess_file *f;
    CHECK_OK(open_file(path, TESS_RDWR | TESS_CREATE, &f, "list"));
    int64_t n = 2 << 20, moved;
    char *data = malloc((size_t)n), *back = malloc((size_t)n);
    for (int64_t i = 0; i < n; i++)
        data[i] = (char)(i * 7 + (i >> 12));
    CHECK_OK(tess_file_write_at(f, 0, data, n, TESS_BYTE, &moved));
    CHECK_OK(tess_file_sync(f));
    tess_stats st;
    CHECK_OK(tess_file_stats(f, &st));
    CHECK(st.auth_insecure == 1);
    CHECK_OK(tess_file_close(f));

    sleep(2);
    pid_t osd = osd_pid(0);
    double t0 = *killed_at = now();
    CHECK(kill(osd, SIGKILL) == 0);
    for (int i = 0; i < 3; i++) {
        int st_;
        CHECK(waitpid(kids[i], &st_, 0) == kids[i]);
        if (!WIFEXITED(st_) || WEXITSTATUS(st_) != 0) {
            fprintf(stderr, "process %d: status %d after the OSD was killed\n", i,
                    WIFEXITED(st_) ? WEXITSTATUS(st_) : -1);
            exit(1);
        }
    }
    printf("every process returned an error %.1f s after the kill at most\n", now() - t0);

    /* restart the OSD: the synced bytes read back */
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "ceph-osd -c %s -i 0 >> %s/restart.out 2>&1", conf, dir);
    CHECK(system(cmd) == 0);
    double until = now() + 120;
    int rc;
    do {
        rc = open_file(path, TESS_RDONLY, &f, "list");
        if (rc == 0) {
            memset(back, 0, (size_t)n);
            rc = tess_file_read_at(f, 0, back, n, TESS_BYTE, &moved);
            CHECK_OK(tess_file_close(f));
        }
    } while (rc && now() < until);
    CHECK_OK(rc);
    CHECK(moved == n && memcmp(back, data, (size_t)n) == 0);
    printf("after the restart every synced byte read back (%lld bytes)\n", (long long)n);
    free(data);
    free(back);
}

static void test_full(void)
{
    char cmd[1024];
    tess_file *f;
    CHECK_OK(open_file("rados:tessera/faults.full", TESS_RDWR | TESS_CREATE, &f, "list"));
    for (int osd = 0; osd < 2; osd++) {
        snprintf(cmd, sizeof cmd, "ceph --admin-daemon %s/run/osd.%d.asok injectfull full "
                 "> /dev/null 2>&1", dir, osd);
        CHECK(system(cmd) == 0);
    }
    static char buf[1 << 16];
    int64_t moved, off = 0;
    int rc = 0;
    double until = now() + 60;
    /* new data (new objects) until the OSDs' full state reaches the pool */
    while ((rc = tess_file_write_at(f, off, buf, sizeof buf, TESS_BYTE, &moved)) == 0 &&
           now() < until) {
        off += sizeof buf;
        usleep(200000);
    }
    if (rc != TESS_ERR_NOSPACE) {
        fprintf(stderr, "a write to a full cluster returned %d: %s\n", rc, tess_last_error());
        exit(1);
    }
    printf("a full OSD: %s\n", tess_last_error());
    tess_file_close(f);
}

int main(int argc, char **argv)
{
    CHECK(argc >= 2);
    tessera = argv[1];
    CHECK(mkdtemp(dir));
    snprintf(conf, sizeof conf, "%s/ceph.conf", dir);
    parent = getpid();
    cluster("start");
    atexit(stop_at_exit);
    test_kill_and_restart();
    test_full();
    cluster("stop");
    stopped = true;
    snprintf(conf, sizeof conf, "rm -rf %s", dir);
    CHECK(system(conf) == 0);
    printf("test_rados_faults: passed\n");
    return 0;
}
