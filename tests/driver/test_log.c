/*
 * test_log.c - the log-structured container (driver log, src/driver/log.c) beyond the driver
 * conformance test, each case against an oracle that is not the code under test:
 *  - the merged index (logindex.c): random entries added in random order with merges at random
 *    points, against the brute-force winner of every byte and the size replayed in stamp order;
 *  - writers at once: 2 processes x 2 threads, each thread its own log, random overlapping
 *    writes and set_size in rounds, checked against a byte map after every round through each
 *    process's handle (one process with tess_log_refresh = sync) and at the end through a new
 *    one; the writers are the 4 threads; `tessera log flatten` equals the byte map and
 *    `tessera log stat` counts the writers;
 *  - a writer killed with SIGKILL mid-write: what reads back is exactly the byte map after a
 *    prefix of its operations that holds every synced one; a new writer takes its log over;
 *  - torn and damaged index tails are ignored, and cut by a writer taking the log over (never
 *    one a live handle holds); what is not a container is refused, not removed;
 *  - tess_log_refresh = sync: another handle's writes appear after sync, not before;
 *  - reads racing writes on one handle and through another: every write seen whole or not at
 *    all, never older than what was seen before; reopened, the threads take the logs over;
 *  - locks tried without waiting see other handles' locks, so the write gate is live and plain
 *    writes take no lock;
 * argv[1], when given, is the `tessera` command (flatten and stat are run through it).
 */
#include "core/file.h"
#include "driver/driver.h"
#include "driver/log.h"
#include "log_test.h"
#include "test_file_common.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>

extern const struct tess_driver tess_log_driver;
static const struct tess_driver *const D = &tess_log_driver;

/* One operation: a write of [off, off + len) or a set_size to off (len < 0). */
typedef struct op {
    int id, writer;
    int64_t off, len;
    bool vectored;
} op;

/* Apply o to the byte map (bytes beyond *size are zero). */
static void map_apply(unsigned char *map, int64_t *size, const op *o)
{
    if (o->len < 0) {
        if (o->off < *size)
            memset(map + o->off, 0, (size_t)(*size - o->off));
        *size = o->off;
        return;
    }
    for (int64_t k = 0; k < o->len; k++)
        map[o->off + k] = lt_content(o->id, o->off + k);
    *size = o->off + o->len > *size ? o->off + o->len : *size;
}

/* Run o through the driver on handle h. */
static void run_op(void *h, const op *o, unsigned char *buf)
{
    if (o->len < 0) {
        CHECK(D->set_size(h, o->off) == 0);
        return;
    }
    for (int64_t k = 0; k < o->len; k++)
        buf[k] = lt_content(o->id, o->off + k);
    if (!o->vectored) {
        CHECK(D->pwrite(h, buf, o->len, o->off) == o->len);
        return;
    }
    int64_t a = o->len / 3;
    struct iovec v[3] = {{buf, (size_t)a}, {buf + a, 0}, {buf + a, (size_t)(o->len - a)}};
    CHECK(D->pwritev(h, v, 3, o->off) == o->len);
}

/* The handle reads exactly the byte map: size, contents, and nothing beyond. */
static void check_reads(void *h, const unsigned char *map, int64_t size, int64_t cap)
{
    unsigned char *back = malloc((size_t)cap);
    int64_t got = -1;
    CHECK(back && D->get_size(h, &got) == 0 && got == size);
    memset(back, 0xEE, (size_t)cap);
    CHECK(D->pread(h, back, cap, 0) == size);
    CHECK(memcmp(back, map, (size_t)size) == 0);
    free(back);
}

static void *open_log(const char *path, int flags, const char *refresh)
{
    tess_info *info;
    void *h;
    CHECK_OK(tess_info_create(&info));
    CHECK_OK(tess_info_set(info, "tess_log_refresh", refresh));
    CHECK(D->open(path, flags, info, &h) == 0);
    tess_info_free(info);
    return h;
}

/* ------------------------------------------------------------------ the merged index */

enum { MSPACE = 2048, MENTRIES = 200 };

static bool key_newer(const tessi_log_entry *a, const tessi_log_entry *b)
{
    return a->stamp != b->stamp ? a->stamp > b->stamp : a->writer > b->writer;
}

static void map_case(unsigned seed)
{
    tessi_log_entry e[MENTRIES];
    tessi_log_map m = {0};
    int n = 10 + (int)(lt_rnd(&seed) % (MENTRIES - 10));
    for (int i = 0; i < n; i++) {
        int kind = lt_rnd(&seed) % 10 < 8 ? TESSI_LOG_DATA
                   : lt_rnd(&seed) % 2    ? TESSI_LOG_TRUNCATE : TESSI_LOG_EXTEND;
        e[i] = (tessi_log_entry){.kind = kind, .writer = (int32_t)(lt_rnd(&seed) % 4),
                                 .stamp = lt_rnd(&seed) % 150, .logical = lt_rnd(&seed) % MSPACE};
        for (int j = 0; j < i; j++) /* (stamp, writer) is unique */
            if (e[j].stamp == e[i].stamp && e[j].writer == e[i].writer) {
                e[i].stamp += 1000;
                j = -1;
            }
        if (kind == TESSI_LOG_DATA) {
            e[i].length = 1 + lt_rnd(&seed) % tessi_min64(300, MSPACE - e[i].logical);
            e[i].physical = lt_rnd(&seed) % 10000;
        }
        CHECK(tessi_log_map_add(&m, &e[i]) == 0);
        if (lt_rnd(&seed) % 8 == 0)
            CHECK(tessi_log_map_flush(&m) == 0);
    }
    CHECK(tessi_log_map_flush(&m) == 0);
    for (int64_t k = 0; k < m.n; k++) /* sorted, disjoint, not empty */
        CHECK(m.ext[k].len > 0 && (k == 0 || tessi_log_end(&m.ext[k - 1]) <= m.ext[k].start));
    for (int64_t p = 0; p < MSPACE + 50; p++) {
        const tessi_log_entry *best = NULL;
        for (int i = 0; i < n; i++) {
            bool covers = e[i].kind == TESSI_LOG_DATA
                              ? e[i].logical <= p && p < e[i].logical + e[i].length
                              : e[i].kind == TESSI_LOG_TRUNCATE && p >= e[i].logical;
            if (covers && (!best || key_newer(&e[i], best)))
                best = &e[i];
        }
        int64_t k = tessi_log_map_find(&m, p);
        const tessi_log_extent *x = k < m.n && m.ext[k].start <= p ? &m.ext[k] : NULL;
        CHECK(!best == !x);
        if (best)
            CHECK(x->stamp == best->stamp && x->writer == best->writer &&
                  x->zero == (best->kind == TESSI_LOG_TRUNCATE) &&
                  (x->zero || x->phys + (p - x->start) == best->physical + (p - best->logical)));
    }
    /* the size: every entry in stamp order */
    int64_t size = 0, done = 0;
    for (const tessi_log_entry *last = NULL; done < n; done++) {
        const tessi_log_entry *next = NULL;
        for (int i = 0; i < n; i++)
            if ((!last || key_newer(&e[i], last)) && (!next || key_newer(next, &e[i])))
                next = &e[i];
        size = next->kind == TESSI_LOG_TRUNCATE ? next->logical
               : next->kind == TESSI_LOG_EXTEND ? tessi_max64(size, next->logical)
                                                : tessi_max64(size, next->logical + next->length);
        last = next;
    }
    CHECK(m.size == size);
    tessi_log_map_free(&m);
}

/* ------------------------------------------------------------------ writers at once */

enum { P = 2, T = 2, W = P * T, ROUNDS = 12, SPACE = 1 << 17, CHUNKS = 9, MAXOPS = 64 };
enum { CAP = SPACE + 8192 };

/* The operations of round r, all writers: the file is cut into chunks, each chunk owned by one
 * writer (or none) that writes 1 to 3 random ranges inside it (overlapping each other and what
 * earlier rounds wrote; never what another writer writes in this round). Every fourth round,
 * writer 0 alone sets the size. */
static int round_ops(int r, op *ops)
{
    unsigned s = 977u * (unsigned)r + 5u;
    int n = 0;
    if (r % 4 == 3) {
        int64_t size = SPACE / 2 + lt_rnd(&s) % (SPACE / 2 + 4096);
        ops[n++] = (op){.id = r * MAXOPS, .writer = 0, .off = size, .len = -1};
        return n;
    }
    int64_t cut[CHUNKS + 1];
    cut[0] = 0;
    cut[CHUNKS] = SPACE;
    for (int i = 1; i < CHUNKS; i++)
        cut[i] = cut[i - 1] + lt_rnd(&s) % ((SPACE - cut[i - 1]) / 3 + 1);
    for (int c = 0; c < CHUNKS; c++) {
        int owner = (int)(lt_rnd(&s) % (W + 1));
        for (int k = (int)(lt_rnd(&s) % 3); owner < W && k >= 0 && cut[c + 1] > cut[c]; k--) {
            int64_t a = cut[c] + lt_rnd(&s) % (cut[c + 1] - cut[c]);
            ops[n] = (op){.id = r * MAXOPS + n, .writer = owner, .off = a,
                          .len = 1 + lt_rnd(&s) % (cut[c + 1] - a), .vectored = lt_rnd(&s) % 2};
            n++;
        }
    }
    return n;
}

typedef struct shared {
    pthread_barrier_t bar;
} shared;

typedef struct worker {
    void *h;
    int proc, thread;
    bool sync_mode;
    shared *sh;
} worker;

/* One thread of one process: its operations of every round; between rounds, thread 0 checks
 * what its process's handle reads. */
static void *worker_main(void *arg)
{
    worker *wk = arg;
    unsigned char *buf = malloc(SPACE), *map = calloc(1, CAP);
    int64_t size = 0;
    op ops[MAXOPS];
    CHECK(buf && map);
    for (int r = 0; r < ROUNDS; r++) {
        int n = round_ops(r, ops);
        pthread_barrier_wait(&wk->sh->bar);
        for (int i = 0; i < n; i++)
            if (ops[i].writer == wk->proc * T + wk->thread)
                run_op(wk->h, &ops[i], buf);
        pthread_barrier_wait(&wk->sh->bar);
        if (wk->thread != 0)
            continue;
        for (int i = 0; i < n; i++)
            map_apply(map, &size, &ops[i]);
        if (wk->sync_mode) /* sync-barrier-sync: the writers synced nothing; this handle looks */
            CHECK(D->sync(wk->h) == 0);
        check_reads(wk->h, map, size, CAP);
    }
    free(buf);
    free(map);
    return NULL;
}

static void proc_main(const char *path, int p, shared *sh)
{
    worker wk[T];
    pthread_t tid[T];
    void *h = open_log(path, TESS_RDWR, p == 1 ? "sync" : "read");
    for (int t = 0; t < T; t++) {
        wk[t] = (worker){.h = h, .proc = p, .thread = t, .sync_mode = p == 1, .sh = sh};
        CHECK(pthread_create(&tid[t], NULL, worker_main, &wk[t]) == 0);
    }
    for (int t = 0; t < T; t++)
        pthread_join(tid[t], NULL);
    CHECK(D->close(h) == 0);
}

/* Run `tessera log flatten` into a plain file and `tessera log stat`; check both. */
static void check_tools(const char *tessera, const char *path, const unsigned char *map,
                        int64_t size, int writers)
{
    char flat[96], cmd[512], line[256];
    unsigned char *data;
    tf_path(flat, sizeof flat, "log_flat");
    snprintf(cmd, sizeof cmd, "%s log flatten %s %s", tessera, path, flat);
    CHECK(system(cmd) == 0);
    CHECK(tf_get(flat, &data) == size && memcmp(data, map, (size_t)size) == 0);
    free(data);
    unlink(flat);
    snprintf(cmd, sizeof cmd, "%s log stat %s", tessera, path);
    FILE *f = popen(cmd, "r");
    int seen = -1;
    CHECK(f);
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "writers %d", &seen) == 1)
            break;
    while (fgets(line, sizeof line, f))
        ;
    CHECK(pclose(f) == 0 && seen == writers);
    snprintf(cmd, sizeof cmd, "%s log flatten %s.missing %s 2>/dev/null", tessera, path, flat);
    CHECK(system(cmd) != 0);
}

static void test_writers(const char *tessera)
{
    char path[64];
    pid_t pid[P];
    tf_path(path, sizeof path, "log_writers");
    shared *sh =
        mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    pthread_barrierattr_t ba;
    CHECK(sh != MAP_FAILED && pthread_barrierattr_init(&ba) == 0 &&
          pthread_barrierattr_setpshared(&ba, PTHREAD_PROCESS_SHARED) == 0 &&
          pthread_barrier_init(&sh->bar, &ba, W) == 0);
    void *h = open_log(path, TESS_RDWR | TESS_CREATE | TESS_EXCL, "read");
    CHECK(D->close(h) == 0);
    fflush(NULL);
    for (int p = 0; p < P; p++) {
        CHECK((pid[p] = fork()) >= 0);
        if (pid[p] == 0) {
            proc_main(path, p, sh);
            _exit(0);
        }
    }
    for (int left = P; left > 0; left--) { /* a failed process leaves the others waiting */
        int status;
        pid_t done = wait(&status);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            for (int p = 0; p < P; p++)
                if (pid[p] != done)
                    kill(pid[p], SIGKILL);
            CHECK(!"a writer process failed");
        }
    }
    unsigned char *map = calloc(1, CAP);
    int64_t size = 0;
    op ops[MAXOPS];
    CHECK(map);
    for (int r = 0; r < ROUNDS; r++)
        for (int i = 0, n = round_ops(r, ops); i < n; i++)
            map_apply(map, &size, &ops[i]);
    h = open_log(path, TESS_RDONLY, "read");
    check_reads(h, map, size, CAP);
    /* one log per thread: P pids with T writers each */
    const tessi_log_map *m;
    tessi_log_writer_info *w;
    int32_t nw;
    CHECK(tessi_log_snapshot(h, &m, &w, &nw) == 0 && nw == W);
    for (int i = 0; i < W; i++) {
        int same = 0;
        for (int j = 0; j < W; j++)
            same += w[j].header.pid == w[i].header.pid && w[j].header.tid != w[i].header.tid;
        CHECK(w[i].header_ok && w[i].entries > 0 && w[i].valid_bytes == w[i].index_bytes &&
              same == T - 1);
    }
    free(w);
    CHECK(D->close(h) == 0);
    if (tessera)
        check_tools(tessera, path, map, size, W);
    CHECK(D->remove(path, NULL) == 0);
    free(map);
    pthread_barrier_destroy(&sh->bar);
    munmap(sh, sizeof *sh);
}

/* ------------------------------------------------------------------ SIGKILL */

enum { KSPACE = 1 << 20, KCAP = KSPACE + 65536, KSYNC_EVERY = 64, KSYNCED_BEFORE_KILL = 128 };

static op kill_op(int i)
{
    unsigned s = 7919u * (unsigned)i + 3u;
    if (i % 50 == 49)
        return (op){.id = i, .off = lt_rnd(&s) % KSPACE, .len = -1};
    int64_t off = lt_rnd(&s) % KSPACE;
    return (op){.id = i, .off = off, .len = 1 + lt_rnd(&s) % tessi_min64(32768, KSPACE - off),
                .vectored = i % 3 == 0};
}

typedef struct progress {
    atomic_long issued, synced; /* operations begun; operations made durable by a sync */
} progress;

static void kill_child(const char *path, progress *pr)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    unsigned char *buf = malloc(32768);
    void *h = open_log(path, TESS_RDWR | TESS_CREATE, "read");
    CHECK(buf);
    for (int i = 0; i < 1000000; i++) {
        op o = kill_op(i);
        atomic_store(&pr->issued, i + 1);
        run_op(h, &o, buf);
        if (i % KSYNC_EVERY == KSYNC_EVERY - 1) {
            CHECK(D->sync(h) == 0);
            atomic_store(&pr->synced, i + 1);
        }
    }
    _exit(2); /* never reached: the parent kills it long before */
}

/* Count the bytes of [from, to) where map and back differ. */
static int64_t mismatches(const unsigned char *map, const unsigned char *back, int64_t from,
                          int64_t to)
{
    int64_t n = 0;
    for (int64_t p = from; p < to; p++)
        n += map[p] != back[p];
    return n;
}

static void test_kill(void)
{
    char path[64];
    tf_path(path, sizeof path, "log_kill");
    progress *pr =
        mmap(NULL, sizeof *pr, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(pr != MAP_FAILED);
    atomic_init(&pr->issued, 0);
    atomic_init(&pr->synced, 0);
    fflush(NULL);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0)
        kill_child(path, pr);
    /* kill it among unsynced writes, not in a sync (where it spends most of its time) */
    long unsynced = 1 + getpid() % (KSYNC_EVERY - 8), ahead;
    do {
        long s = atomic_load(&pr->synced);
        ahead = s < KSYNCED_BEFORE_KILL ? 0 : atomic_load(&pr->issued) - s;
        CHECK(waitpid(pid, NULL, WNOHANG) == 0);
    } while (ahead < unsynced || ahead >= KSYNC_EVERY);
    CHECK(kill(pid, SIGKILL) == 0 && waitpid(pid, NULL, 0) == pid);
    long synced = atomic_load(&pr->synced), issued = atomic_load(&pr->issued);

    /* what reads back is the map after k operations, synced <= k <= issued */
    unsigned char *back = calloc(1, KCAP), *map = calloc(1, KCAP);
    int64_t rsize, size = 0;
    void *h = open_log(path, TESS_RDONLY, "read");
    CHECK(back && map && D->get_size(h, &rsize) == 0 && D->pread(h, back, KCAP, 0) == rsize);
    CHECK(D->close(h) == 0);
    long k = 0;
    for (; k < synced; k++) {
        op o = kill_op((int)k);
        map_apply(map, &size, &o);
    }
    int64_t bad = mismatches(map, back, 0, KCAP);
    while (!(bad == 0 && size == rsize) && k < issued) {
        op o = kill_op((int)k++);
        int64_t from = o.off, to = o.len < 0 ? tessi_max64(size, o.off) : o.off + o.len;
        bad -= mismatches(map, back, from, to);
        map_apply(map, &size, &o);
        bad += mismatches(map, back, from, to);
    }
    CHECK(bad == 0 && size == rsize);
    printf("killed after %ld operations begun, %ld synced: %ld read back\n", issued, synced, k);

    /* the container goes on: a new writer after the dead one */
    h = open_log(path, TESS_RDWR, "read");
    op more = {.id = 1 << 30, .off = 1000, .len = 5000};
    run_op(h, &more, back);
    map_apply(map, &size, &more);
    check_reads(h, map, size, KCAP);
    const tessi_log_map *m;
    tessi_log_writer_info *w;
    int32_t nw;
    /* its writer took the dead writer's log over: one log, its torn tail cut */
    CHECK(tessi_log_snapshot(h, &m, &w, &nw) == 0 && nw == 1 && w[0].entries == k + 1 &&
          w[0].valid_bytes == w[0].index_bytes);
    free(w);
    CHECK(D->close(h) == 0 && D->remove(path, NULL) == 0);
    free(back);
    free(map);
    munmap(pr, sizeof *pr);
}

/* ------------------------------------------------------------------ damaged tails, refresh */

/* Append len bytes to file name of container path (plain POSIX). */
static void append_raw(const char *path, const char *name, const void *b, size_t len)
{
    char file[128];
    snprintf(file, sizeof file, "%s/%s", path, name);
    int fd = open(file, O_WRONLY | O_APPEND);
    CHECK(fd >= 0 && write(fd, b, len) == (ssize_t)len && close(fd) == 0);
}

static void truncate_raw(const char *path, const char *name, off_t len)
{
    char file[128];
    snprintf(file, sizeof file, "%s/%s", path, name);
    CHECK(truncate(file, len) == 0);
}

static void test_damage(void)
{
    char path[64];
    unsigned char map[300] = {0}, scratch[100], b[TESSI_LOG_ENTRY];
    int64_t size = 0, good = TESSI_LOG_HEADER + TESSI_LOG_ENTRY;
    tf_path(path, sizeof path, "log_damage");
    void *h = open_log(path, TESS_RDWR | TESS_CREATE, "read");
    op first = {.id = 1, .off = 0, .len = 100};
    run_op(h, &first, scratch);
    map_apply(map, &size, &first);
    CHECK(D->sync(h) == 0 && D->close(h) == 0);
    /* a partial entry; an entry with one bit flipped; one pointing past its data log, followed
     * by a valid one (a reader stops at the first bad entry) */
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    tessi_log_entry inside = {.kind = TESSI_LOG_DATA, .logical = 100, .physical = 0, .length = 50,
                              .stamp = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec};
    tessi_log_entry past = inside, late = inside, decoded;
    past.physical = 100;
    late.stamp = INT64_MAX; /* a stamp no clock gives: refused, it would overflow the clock */
    tessi_log_entry_encode(&late, b);
    CHECK(!tessi_log_entry_decode(b, 0, &decoded));
    tessi_log_entry_encode(&inside, b);
    CHECK(tessi_log_entry_decode(b, 0, &decoded) && decoded.stamp == inside.stamp);
    for (int c = 0; c < 3; c++) {
        tessi_log_entry_encode(c == 2 ? &past : &inside, b);
        b[20] ^= c == 1 ? 4 : 0;
        append_raw(path, "index.0", b, c == 0 ? 20 : TESSI_LOG_ENTRY);
        if (c == 2) {
            tessi_log_entry_encode(&inside, b);
            append_raw(path, "index.0", b, TESSI_LOG_ENTRY);
        }
        h = open_log(path, TESS_RDONLY, "read");
        check_reads(h, map, size, sizeof map);
        CHECK(D->close(h) == 0);
        if (c < 2)
            truncate_raw(path, "index.0", good);
    }
    /* a writer takes the log nobody holds over: its entries stay, its damaged tail goes */
    h = open_log(path, TESS_RDWR, "read");
    op second = {.id = 2, .off = 50, .len = 100}, third = {.id = 3, .off = 120, .len = 30};
    run_op(h, &second, scratch);
    map_apply(map, &size, &second);
    check_reads(h, map, size, sizeof map);
    const tessi_log_map *m;
    tessi_log_writer_info *w;
    int32_t nw;
    CHECK(tessi_log_snapshot(h, &m, &w, &nw) == 0 && nw == 1 && w[0].entries == 2);
    CHECK(w[0].valid_bytes == good + TESSI_LOG_ENTRY && w[0].index_bytes == w[0].valid_bytes);
    free(w);
    /* while it holds the log, another handle's writer gets a new one */
    void *h2 = open_log(path, TESS_RDWR, "read");
    run_op(h2, &third, scratch);
    map_apply(map, &size, &third);
    check_reads(h, map, size, sizeof map);
    CHECK(tessi_log_snapshot(h2, &m, &w, &nw) == 0 && nw == 2 && w[1].entries == 1);
    free(w);
    CHECK(D->close(h2) == 0 && D->close(h) == 0);

    /* not a container: refused and left alone */
    char plain[80];
    snprintf(plain, sizeof plain, "%s.plain", path);
    CHECK(mkdir(plain, 0777) == 0);
    CHECK(D->open(plain, TESS_RDWR | TESS_CREATE, NULL, &h) == -EISDIR);
    CHECK(D->remove(plain, NULL) == -EISDIR && rmdir(plain) == 0);
    tf_put(plain, "x", 1);
    CHECK(D->open(plain, TESS_RDWR, NULL, &h) == -ENOTDIR);
    CHECK(D->remove(plain, NULL) == -ENOTDIR && unlink(plain) == 0);
    CHECK(D->remove(path, NULL) == 0 && D->remove(path, NULL) == -ENOENT);
}

/* With tess_log_refresh = sync another handle's writes show after sync; by default at once,
 * from a writer that did not exist at the last look too. */
static void test_refresh(void)
{
    char path[64];
    unsigned char map[64] = {0}, buf[64];
    int64_t size = 0, got;
    tf_path(path, sizeof path, "log_refresh");
    void *wr = open_log(path, TESS_RDWR | TESS_CREATE, "read");
    void *lazy = open_log(path, TESS_RDONLY, "sync"), *eager = open_log(path, TESS_RDONLY, "read");
    check_reads(lazy, map, 0, sizeof map); /* their first looks: no writer yet */
    check_reads(eager, map, 0, sizeof map);
    op a = {.id = 1, .off = 0, .len = 10}, b = {.id = 2, .off = 10, .len = 20};
    run_op(wr, &a, buf); /* a new writer */
    map_apply(map, &size, &a);
    check_reads(eager, map, size, sizeof map);
    run_op(wr, &b, buf); /* a known writer's log grows */
    map_apply(map, &size, &b);
    check_reads(eager, map, size, sizeof map);
    CHECK(D->get_size(lazy, &got) == 0 && got == 0);
    CHECK(D->sync(lazy) == 0);
    check_reads(lazy, map, size, sizeof map);
    CHECK(D->close(lazy) == 0 && D->close(eager) == 0 && D->close(wr) == 0);
    CHECK(D->remove(path, NULL) == 0);
}

/* ------------------------------------------------------------------ reads racing writes */

enum { CW = 2, CYCLES = 3, VERSIONS = 80, REGION = 3000 }; /* a version is a byte value */

typedef struct race {
    void *h, *other; /* the writers' handle; a second handle that only reads */
    int cycle;       /* versions of this cycle: VERSIONS * cycle + 1 .. VERSIONS * (cycle + 1) */
    atomic_int done;
} race;

typedef struct race_arg {
    race *r;
    int t;
} race_arg;

/* Writer t writes its region whole, VERSIONS times, each version's bytes all equal to it. */
static void *race_writer(void *arg)
{
    race_arg *a = arg;
    unsigned char buf[REGION];
    for (int v = VERSIONS * a->r->cycle + 1; v <= VERSIONS * (a->r->cycle + 1); v++) {
        memset(buf, v, sizeof buf);
        CHECK(D->pwrite(a->r->h, buf, REGION, (int64_t)a->t * REGION) == REGION);
    }
    atomic_fetch_add(&a->r->done, 1);
    return NULL;
}

/* A read sees every write whole or not at all (a log's bytes never change once indexed): each
 * region at one version, never older than the last seen. Through the writers' handle (t 0) or
 * the other one (t 1). */
static void *race_reader(void *arg)
{
    race_arg *a = arg;
    unsigned char buf[CW * REGION];
    int seen[CW] = {0};
    for (bool last = false; !last;) {
        last = atomic_load(&a->r->done) == CW;
        int64_t got = D->pread(a->t ? a->r->other : a->r->h, buf, sizeof buf, 0);
        CHECK(got >= 0);
        memset(buf + got, 0, sizeof buf - (size_t)got);
        for (int w = 0; w < CW; w++) {
            int v = buf[w * REGION];
            for (int k = 1; k < REGION; k++)
                CHECK(buf[w * REGION + k] == v);
            CHECK(v >= seen[w] && (!last || v == VERSIONS * (a->r->cycle + 1)));
            seen[w] = v;
        }
    }
    return NULL;
}

/* Reads racing writes, in cycles of opening, writing and closing: each cycle's threads take
 * the logs of the last cycle's over, so the container keeps one log per thread. */
static void test_race(void)
{
    char path[64];
    pthread_t tid[2 * CW];
    race_arg a[2 * CW];
    tf_path(path, sizeof path, "log_race");
    for (int cycle = 0; cycle < CYCLES; cycle++) {
        race r = {.cycle = cycle, .done = 0};
        r.h = open_log(path, TESS_RDWR | TESS_CREATE, "read");
        r.other = open_log(path, TESS_RDONLY, "read");
        for (int t = 0; t < 2 * CW; t++) {
            a[t] = (race_arg){.r = &r, .t = t % CW};
            CHECK(pthread_create(&tid[t], NULL, t < CW ? race_writer : race_reader, &a[t]) == 0);
        }
        for (int t = 0; t < 2 * CW; t++)
            pthread_join(tid[t], NULL);
        CHECK(D->close(r.other) == 0 && D->close(r.h) == 0);
    }
    void *h = open_log(path, TESS_RDONLY, "read");
    const tessi_log_map *m;
    tessi_log_writer_info *w;
    int32_t nw;
    CHECK(tessi_log_snapshot(h, &m, &w, &nw) == 0 && nw == CW);
    CHECK(w[0].entries == CYCLES * VERSIONS && w[1].entries == CYCLES * VERSIONS);
    free(w);
    CHECK(D->close(h) == 0 && D->remove(path, NULL) == 0);
}

/* ------------------------------------------------------------------ the write gate */

/* Locks can be tried on a container (another handle's count, the handle's own do not), so the
 * write gate is live: plain writes take no lock while nobody sieves, and read back. */
static void test_gate(void)
{
    char path[64], logpath[80];
    unsigned char buf[4096], back[4096];
    tess_file *f;
    tess_stats st;
    int64_t got;
    tf_path(path, sizeof path, "log_gate");
    void *a = open_log(path, TESS_RDWR | TESS_CREATE, "read"), *b = open_log(path, TESS_RDWR,
                                                                              "read");
    CHECK(D->test_lock && D->lock(a, 5, 1, true) == 0);
    CHECK(D->test_lock(b, 5, 1) == 1 && D->test_lock(a, 5, 1) == 0 && D->test_lock(b, 6, 1) == 0);
    CHECK(D->unlock(a, 5, 1) == 0 && D->test_lock(b, 5, 1) == 0);
    CHECK(D->close(a) == 0 && D->close(b) == 0);
    snprintf(logpath, sizeof logpath, "log:%s", path);
    CHECK_OK(tess_file_open(logpath, TESS_RDWR, NULL, &f));
    CHECK(f->st.gate.kind == TESSI_GATE_LIVE);
    for (int k = 0; k < 8; k++) {
        memset(buf, 'a' + k, sizeof buf);
        CHECK_OK(tess_file_write_at(f, k * (int64_t)sizeof buf, buf, sizeof buf, TESS_BYTE,
                                    &got));
    }
    CHECK_OK(tess_file_stats(f, &st));
    CHECK(st.lock_ops == 0);
    for (int k = 0; k < 8; k++) {
        memset(buf, 'a' + k, sizeof buf);
        CHECK_OK(tess_file_read_at(f, k * (int64_t)sizeof buf, back, sizeof back, TESS_BYTE,
                                   &got));
        CHECK(got == (int64_t)sizeof back && memcmp(buf, back, sizeof buf) == 0);
    }
    CHECK_OK(tess_file_close(f));
    CHECK(D->remove(path, NULL) == 0);
}

int main(int argc, char **argv)
{
    for (unsigned seed = 1; seed <= 60; seed++)
        map_case(seed);
    test_damage();
    test_refresh();
    test_race();
    test_gate();
    test_writers(argc > 1 ? argv[1] : NULL);
    test_kill();
    printf("log container: merged index, writers, kill, damage and refresh all hold\n");
    return 0;
}
