/*
 * test_coll_threads.c - collective I/O without mpirun: the members of a group are threads of
 * this process (the thread transport, coll/thread.h), so two-phase runs in a unit test.
 *  - random interleaved views with holes (a tile cut into pieces dealt to random ranks or to
 *    nobody), contiguous or strided memory, every realm kind, small collective buffers (many
 *    rounds), pipelined or not, 1 to P aggregators, the exchange staged (tess_cb_pack forced)
 *    or not (ruled out, or automatic: this transport's blocks cost nothing, so never):
 *    collective writes checked against a byte map of the file read with plain POSIX calls,
 *    collective reads checked against the data;
 *  - bad input on one member: the error on every member, the file unchanged;
 *  - HPIO's c-nc pattern: every aggregator writes its window as one span (holes read first),
 *    and no update is lost to another process writing the holes meanwhile (spans);
 *  - issue 11: a collective open with any bad collective hint (on every member, or on one)
 *    fails everywhere and creates nothing; members that disagree on romio_ds_write all take the
 *    locks that protect the sieving members' read-modify-writes.
 *
 * usage: test_coll_threads [cases] [seed]
 */
#include "base/hints.h"
#include "coll/thread.h"
#include "test_file_common.h"

#include <pthread.h>

enum { P = 4, TILE = 512, TILES = 24 };

static char path[64];
static tessi_team *team;
static pthread_barrier_t sync_all;
static unsigned seed = 20250611;

/* One case: the hints and the pieces of the tile each rank owns. */
typedef struct {
    const char *kv[20];
    char nodes[8], buf[16];
    int owner[TILE];     /* byte of the tile -> rank that owns it, -1: nobody */
    bool strided_mem;    /* memory: every other 3 bytes (a vector), else contiguous */
    int bad_rank;        /* >= 0: that rank passes a negative count */
    int pack;            /* tess_cb_pack: 0 automatic, 1 enable, 2 disable */
} scenario;

static scenario sc;
static int64_t packed_forced; /* bytes staged in the cases that forced staging */

static unsigned next_rand(void)
{
    seed = seed * 1103515245u + 12345u;
    return (seed >> 8) & 0xffffff;
}

/* The data byte j of rank r's access (generation gen). */
static unsigned char pat(int r, int64_t j, int gen)
{
    return (unsigned char)(j * 13 + r * 71 + gen);
}

static void make_scenario(int k)
{
    static const char *const realms[] = {"even", "aligned", "persistent", "balanced", "cyclic"};
    int n = 0;
    memset(&sc, 0, sizeof sc);
    for (int x = 0; x < TILE;) { /* pieces of 1 to 40 bytes */
        int len = 1 + (int)(next_rand() % 40), who = (int)(next_rand() % (P + 1)) - 1;
        for (int i = 0; i < len && x < TILE; i++)
            sc.owner[x++] = who;
    }
    snprintf(sc.nodes, sizeof sc.nodes, "%d", 1 + (int)(next_rand() % P));
    snprintf(sc.buf, sizeof sc.buf, "%d", 64 << (next_rand() % 8));
    sc.kv[n++] = "romio_cb_write", sc.kv[n++] = "enable";
    sc.kv[n++] = "romio_cb_read", sc.kv[n++] = "enable";
    sc.kv[n++] = "cb_nodes", sc.kv[n++] = sc.nodes;
    sc.kv[n++] = "cb_buffer_size", sc.kv[n++] = sc.buf;
    sc.kv[n++] = "tess_realms", sc.kv[n++] = realms[k % 5];
    sc.kv[n++] = "striping_unit", sc.kv[n++] = "96";
    sc.kv[n++] = "tess_cb_pipeline", sc.kv[n++] = next_rand() % 2 ? "enable" : "disable";
    sc.strided_mem = next_rand() % 2;
    sc.bad_rank = k % 7 == 3 ? (int)(next_rand() % P) : -1;
    sc.pack = (int)(next_rand() % 3);
    sc.kv[n++] = "tess_cb_pack", sc.kv[n++] = tessi_hint_tristate[sc.pack];
    sc.kv[n] = NULL;
}

/* Rank r's filetype: its pieces of the tile, extent TILE. NULL when it owns nothing. */
static tess_type *rank_view(int r, int64_t *size)
{
    int64_t lens[TILE], offs[TILE], n = 0;
    *size = 0;
    for (int x = 0; x < TILE; x++) {
        if (sc.owner[x] != r)
            continue;
        if (n > 0 && offs[n - 1] + lens[n - 1] == x) {
            lens[n - 1]++;
        } else {
            offs[n] = x;
            lens[n++] = 1;
        }
        ++*size;
    }
    if (n == 0)
        return NULL;
    tess_type *h, *t;
    CHECK_OK(tess_type_hindexed(n, lens, offs, TESS_BYTE, &h));
    CHECK_OK(tess_type_resized(h, 0, TILE, &t));
    tess_type_free(h);
    return t;
}

/* The memory type of `bytes` data bytes: contiguous, or 1 byte in every 3 (a vector). */
static void mem_layout(int64_t bytes, tess_type **mt, int64_t *count, int64_t *span)
{
    if (!sc.strided_mem) {
        *mt = TESS_BYTE;
        *count = bytes;
        *span = bytes;
        return;
    }
    tess_type *v;
    CHECK_OK(tess_type_vector(1, 1, 1, TESS_BYTE, &v));
    CHECK_OK(tess_type_resized(v, 0, 3, mt));
    tess_type_free(v);
    *count = bytes;
    *span = bytes * 3;
}

/* The expected file after every rank wrote generation gen (brute force over the tiles). */
static void check_file(int gen)
{
    unsigned char *got;
    int64_t seen[P] = {0}, size = tf_get(path, &got), end = 0;
    for (int64_t t = 0; t < TILES; t++)
        for (int x = 0; x < TILE; x++) {
            int r = sc.owner[x];
            if (r < 0 || r == sc.bad_rank)
                continue;
            int64_t at = t * TILE + x;
            CHECK(at < size && got[at] == pat(r, seen[r]++, gen));
            end = at + 1;
        }
    CHECK(size == end);
    free(got);
}

typedef struct {
    int rank;
    int rc_write, rc_read;
} job;

/* Member `rank` of the team opens the file with the hints kv (key, value, ..., NULL). */
static tess_file *open_member(int rank, const char *const *kv)
{
    void *ctx;
    tess_file *f;
    tess_info *info;
    CHECK_OK(tessi_team_ctx(team, rank, &ctx));
    CHECK_OK(tess_info_create(&info));
    for (int i = 0; kv[i]; i += 2)
        CHECK_OK(tess_info_set(info, kv[i], kv[i + 1]));
    CHECK_OK(tess_file_open_group(&tessi_thread_ops, ctx, path, TESS_RDWR | TESS_CREATE, info,
                                  &f));
    tess_info_free(info);
    return f;
}

static void *run_rank(void *arg)
{
    job *j = arg;
    int64_t size, count, span, n;
    tess_type *mt;
    tess_file *f = open_member(j->rank, sc.kv);
    tess_type *ft = rank_view(j->rank, &size);
    CHECK_OK(tess_file_set_view(f, 0, TESS_BYTE, ft ? ft : TESS_BYTE));
    int64_t bytes = ft ? size * TILES : 0;
    mem_layout(bytes, &mt, &count, &span);
    unsigned char *m = calloc(1, (size_t)span + 1), *back = calloc(1, (size_t)span + 1);
    CHECK(m && back);
    for (int64_t k = 0; k < bytes; k++)
        m[sc.strided_mem ? 3 * k : k] = pat(j->rank, k, 1);
    int64_t my_count = j->rank == sc.bad_rank ? -1 : count;
    tess_stats st;
    j->rc_write = tess_file_write_at_all(f, 0, m, my_count, mt, &n);
    CHECK(j->rc_write || n == bytes);
    CHECK_OK(tess_file_stats(f, &st));
    CHECK(j->rc_write || bytes == 0 || st.request_bytes > 0); /* it went two-phase */
    CHECK(sc.pack == 1 || st.packed_bytes == 0); /* staged only where forced */
    if (sc.pack == 1)
        __atomic_fetch_add(&packed_forced, st.packed_bytes, __ATOMIC_RELAXED);
    pthread_barrier_wait(&sync_all); /* the file is checked by the main thread in between */
    pthread_barrier_wait(&sync_all);
    j->rc_read = tess_file_read_at_all(f, 0, back, count, mt, &n);
    if (j->rc_read == 0 && j->rc_write == 0) {
        CHECK(n == bytes);
        for (int64_t k = 0; k < bytes; k++)
            CHECK(back[sc.strided_mem ? 3 * k : k] == pat(j->rank, k, 1));
    }
    CHECK_OK(tess_file_close(f));
    tess_type_free(ft);
    if (mt != TESS_BYTE)
        tess_type_free(mt);
    free(m);
    free(back);
    return NULL;
}

static void run_case(int k)
{
    pthread_t th[P];
    job jobs[P];
    make_scenario(k);
    unlink(path);
    for (int r = 0; r < P; r++) {
        jobs[r] = (job){.rank = r};
        CHECK(pthread_create(&th[r], NULL, run_rank, &jobs[r]) == 0);
    }
    pthread_barrier_wait(&sync_all);
    if (sc.bad_rank < 0) {
        check_file(1);
    } else { /* every rank got the error, nothing was written */
        CHECK(tf_get(path, NULL) == 0);
        for (int r = 0; r < P; r++)
            CHECK(jobs[r].rc_write == TESS_ERR_ARG);
    }
    pthread_barrier_wait(&sync_all);
    for (int r = 0; r < P; r++) {
        CHECK(pthread_join(th[r], NULL) == 0);
        CHECK(jobs[r].rc_read == 0 && (sc.bad_rank >= 0 || jobs[r].rc_write == 0));
    }
}

/* ---------------------------------------------------------------- spans */

/*
 * HPIO's c-nc pattern: region i of rank r at (i * P + r) * 2 * REG, REG bytes, a REG-byte hole
 * after each. The union of a window has holes every REG bytes, far below the sieve threshold:
 * each aggregator reads the holes and writes its window as one span (a read-modify-write
 * admitted by the write gate), never region by region. Then the same writes again and again
 * while another process writes each hole once with a plain write: no hole byte and no data
 * byte is lost (the gate makes that process lock while the aggregators read-modify-write).
 */
enum { REG = 8, NREG = 64 };

static pthread_barrier_t span_sync;
static pid_t hole_pid;  /* the hole writer, while it runs */
static int hole_status; /* its wait status once it ended */
static int go_pipe[2];  /* the hole writer starts when the write end closes */

static unsigned char hole_pat(int64_t h)
{
    return (unsigned char)(h * 7 + 1);
}

typedef struct {
    int rank, gens; /* gens: generations to write; 0: until the hole writer ends */
    tess_stats st;
} span_job;

static void *span_rank(void *arg)
{
    static const char *const kv[] = {"romio_cb_write", "enable", "cb_nodes", "2", NULL};
    span_job *j = arg;
    tess_file *f = open_member(j->rank, kv);
    tess_type *ft;
    unsigned char m[NREG * REG];
    int64_t n;
    CHECK_OK(tess_type_hvector(NREG, REG, P * 2 * REG, TESS_BYTE, &ft));
    CHECK_OK(tess_file_set_view(f, j->rank * 2 * REG, TESS_BYTE, ft));
    for (int g = 1; j->gens == 0 || g <= j->gens; g++) {
        for (int64_t k = 0; k < NREG * REG; k++)
            m[k] = pat(j->rank, k, g);
        CHECK_OK(tess_file_write_at_all(f, 0, m, NREG * REG, TESS_BYTE, &n));
        CHECK(n == NREG * REG);
        if (j->gens > 0)
            continue;
        pthread_barrier_wait(&span_sync); /* rank 0 starts the hole writer, or sees it end */
        if (j->rank == 0 && g == 1)
            close(go_pipe[1]);
        else if (j->rank == 0 && waitpid(hole_pid, &hole_status, WNOHANG) == hole_pid)
            hole_pid = 0;
        pthread_barrier_wait(&span_sync);
        if (hole_pid == 0) {
            j->gens = g;
            break;
        }
    }
    CHECK_OK(tess_file_stats(f, &j->st));
    CHECK_OK(tess_file_close(f));
    tess_type_free(ft);
    return NULL;
}

/* The collective writes on P threads (gens as in span_job); the jobs' stats and gens. */
static void span_writes(int gens, span_job *jobs)
{
    pthread_t th[P];
    for (int r = 0; r < P; r++) {
        jobs[r] = (span_job){.rank = r, .gens = gens};
        CHECK(pthread_create(&th[r], NULL, span_rank, &jobs[r]) == 0);
    }
    for (int r = 0; r < P; r++)
        CHECK(pthread_join(th[r], NULL) == 0);
}

/* Every data byte of generation gen, every hole byte written (holes) or never written. */
static void span_check(int gen, bool holes)
{
    unsigned char *got;
    int64_t size = tf_get(path, &got), seen[P] = {0};
    CHECK(size == NREG * P * 2 * REG - (holes ? 0 : REG));
    for (int64_t x = 0; x < size; x++) {
        int64_t slot = x / REG;
        if (slot % 2 == 0)
            CHECK(got[x] == pat((int)(slot / 2 % P), seen[slot / 2 % P]++, gen));
        else
            CHECK(got[x] == (holes ? hole_pat(slot / 2) : 0));
    }
    free(got);
}

/* The other process: one plain write of every hole, a few microseconds apart, once the pipe
 * closes (the collective writes are under way by then and go on until it ends). */
static int hole_writer(void)
{
    tess_file *f;
    char c;
    if (read(go_pipe[0], &c, 1) != 0 || tess_file_open(path, TESS_RDWR, NULL, &f))
        return 1;
    for (int64_t h = 0; h < NREG * P; h++) {
        unsigned char b[REG];
        memset(b, hole_pat(h), REG);
        if (tess_file_write_at(f, (2 * h + 1) * REG, b, REG, TESS_BYTE, NULL))
            return 1;
        usleep(20);
    }
    return tess_file_close(f) != 0;
}

static void spans(void)
{
    span_job jobs[P];
    unlink(path);
    span_writes(1, jobs);
    span_check(1, false);
    int64_t ops = 0;
    for (int r = 0; r < P; r++) { /* spans only: no access as small as a region */
        CHECK(jobs[r].st.min_access == 0 || jobs[r].st.min_access > REG);
        CHECK(jobs[r].st.lock_fallbacks == 0);
        ops += jobs[r].st.io_ops;
    }
    CHECK(ops >= 2 && ops <= 4); /* a span write (and a read of its holes) per aggregator */
    CHECK(pthread_barrier_init(&span_sync, NULL, P) == 0 && pipe(go_pipe) == 0);
    hole_pid = fork();
    CHECK(hole_pid >= 0);
    if (hole_pid == 0) {
        close(go_pipe[1]);
        _exit(hole_writer());
    }
    close(go_pipe[0]);
    span_writes(0, jobs);
    CHECK(WIFEXITED(hole_status) && WEXITSTATUS(hole_status) == 0);
    span_check(jobs[0].gens, true);
    pthread_barrier_destroy(&span_sync);
}

/* ---------------------------------------------------------------- issue 11 */

typedef struct {
    int rank;
    const char *key, *value; /* a hint given by `bad` (or by every rank when bad < 0) */
    int bad;
    int rc;
    tess_stats stats;        /* ds case: after one independent write */
} open_job;

static void *open_rank(void *arg)
{
    open_job *j = arg;
    void *ctx;
    tess_file *f = NULL;
    tess_info *info;
    CHECK_OK(tessi_team_ctx(team, j->rank, &ctx));
    CHECK_OK(tess_info_create(&info));
    if (j->bad < 0 || j->bad == j->rank)
        CHECK_OK(tess_info_set(info, j->key, j->value));
    j->rc = tess_file_open_group(&tessi_thread_ops, ctx, path, TESS_RDWR | TESS_CREATE, info, &f);
    tess_info_free(info);
    if (j->rc == 0) { /* one contiguous independent write of 100 bytes per rank */
        char data[100];
        memset(data, j->rank, sizeof data);
        CHECK_OK(tess_file_write_at(f, 100 * j->rank, data, 100, TESS_BYTE, NULL));
        CHECK_OK(tess_file_stats(f, &j->stats));
        CHECK_OK(tess_file_close(f));
    }
    return NULL;
}

static void open_all(const char *key, const char *value, int bad, open_job *jobs)
{
    pthread_t th[P];
    for (int r = 0; r < P; r++) {
        jobs[r] = (open_job){.rank = r, .key = key, .value = value, .bad = bad};
        CHECK(pthread_create(&th[r], NULL, open_rank, &jobs[r]) == 0);
    }
    for (int r = 0; r < P; r++)
        CHECK(pthread_join(th[r], NULL) == 0);
}

static void issue11(void)
{
    static const char *const bad[][2] = {
        {"cb_nodes", "0"}, {"cb_buffer_size", "4294967296"}, {"tess_realms", "square"},
        {"tess_cb_sieve_threshold", "-3"}, {"striping_unit", "0"},
        {"romio_cb_write", "sometimes"}, {"tess_cb_pipeline", "yes"}, {"tess_realm_size", "-1"},
        {"tess_cb_pack", "maybe"}};
    open_job jobs[P];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        for (int who = -1; who < P; who += 2) { /* everybody, then rank 0 alone, then rank 2 */
            unlink(path);
            open_all(bad[i][0], bad[i][1], who, jobs);
            for (int r = 0; r < P; r++)
                CHECK(jobs[r].rc == TESS_ERR_ARG);
            CHECK(access(path, F_OK) != 0); /* nothing created */
        }
    /* romio_ds_write = disable on rank 1 only: whether the others may sieve or not, nobody
     * does here, so the write gate lets every contiguous write go unlocked (a process that does
     * read-modify-write makes the others lock: test_gate, test_file_concurrent) */
    unlink(path);
    open_all("romio_ds_write", "disable", 1, jobs);
    for (int r = 0; r < P; r++)
        CHECK(jobs[r].rc == 0 && jobs[r].stats.lock_ops == 0);
    /* disabled everywhere: nobody sieves, nobody locks */
    open_all("romio_ds_write", "disable", -1, jobs);
    for (int r = 0; r < P; r++)
        CHECK(jobs[r].rc == 0 && jobs[r].stats.lock_ops == 0);
}

int main(int argc, char **argv)
{
    int cases = argc > 1 ? atoi(argv[1]) : 40;
    if (argc > 2)
        seed = (unsigned)strtoul(argv[2], NULL, 10);
    tf_path(path, sizeof path, "threads");
    unsetenv("TESS_PROFILE"); /* the model's documented defaults */
    setenv("XDG_CONFIG_HOME", "/nonexistent/tessera-test-config", 1);
    CHECK_OK(tessi_team_create(P, &team));
    CHECK(pthread_barrier_init(&sync_all, NULL, P + 1) == 0);
    for (int k = 0; k < cases; k++)
        run_case(k);
    CHECK(cases < 20 || packed_forced > 0); /* the staged path ran */
    spans();
    issue11();
    tessi_team_release(team);
    pthread_barrier_destroy(&sync_all);
    unlink(path);
    printf("test_coll_threads: %d cases on %d threads\n", cases, P);
    return 0;
}
