/*
 * test_file_features.c - the calls front ends such as an MPI-IO library need: tess_file_delete,
 * tess_file_preallocate (fallocate and its zero-writing fallback, checked against a byte map of
 * the file), atomic mode (locks counted, refused locks, torn reads between two handles never
 * seen), tess_file_get_info (defaults, given hints, a round trip through tess_file_open), the
 * info key iteration, the error codes for quota and read-only storage, the tracing hook (a
 * tracer sees exactly what the counters count) and the generated stats functions.
 */
#include "driver/driver.h"
#include "test_file_common.h"

#include <pthread.h>

static char path[64];

/* The value of key in info ("" when missing). */
static const char *info_value(const tess_info *info, const char *key)
{
    static char v[1024];
    int found = 0;
    CHECK_OK(tess_info_get(info, key, v, sizeof v, &found));
    return found ? v : "";
}

static void error_codes(void)
{
    CHECK(strcmp(tess_strerror(TESS_ERR_QUOTA), tess_strerror(TESS_ERR_NOSPACE)) != 0);
    CHECK(strcmp(tess_strerror(TESS_ERR_READONLY), tess_strerror(TESS_ERR_ACCESS)) != 0);
    CHECK(strcmp(tess_strerror(TESS_ERR_QUOTA), "unknown error") != 0);
    const struct {
        int err, code;
    } cases[] = {{ENOSPC, TESS_ERR_NOSPACE}, {EDQUOT, TESS_ERR_QUOTA},
                 {EROFS, TESS_ERR_READONLY}, {EACCES, TESS_ERR_ACCESS}};
    char data[100] = {1};
    tess_file *f;
    tf_put(path, "", 0);
    CHECK_OK(tf_open(path, TESS_RDWR, &f, NULL));
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tessi_fault_inject(TESSI_OP_WRITE, 0, 1, -cases[i].err);
        CHECK_ERR(tess_file_write_at(f, 0, data, 100, TESS_BYTE, NULL), cases[i].code);
    }
    CHECK_OK(tess_file_close(f));
    CHECK(tf_get(path, NULL) == 0);
}

static void delete_file(void)
{
    tess_file *f;
    const char *bad_driver[] = {"tess_driver", "nfs", NULL};
    const char *bad_value[] = {"ind_rd_buffer_size", "0", NULL};
    tess_info *info;
    CHECK_OK(tf_open(path, TESS_RDWR | TESS_CREATE, &f, NULL));
    CHECK_OK(tess_file_close(f));
    CHECK_ERR(tess_file_delete(NULL, NULL), TESS_ERR_ARG);
    for (const char *const *kv = bad_driver; kv; kv = kv == bad_driver ? bad_value : NULL) {
        CHECK_OK(tess_info_create(&info));
        CHECK_OK(tess_info_set(info, kv[0], kv[1]));
        CHECK_ERR(tess_file_delete(path, info), TESS_ERR_ARG);
        tess_info_free(info);
        CHECK(access(path, F_OK) == 0);
    }
    tessi_fault_inject(TESSI_OP_DELETE, 0, 1, -EROFS);
    CHECK_ERR(tess_file_delete(path, NULL), TESS_ERR_READONLY);
    CHECK(access(path, F_OK) == 0);
    CHECK_OK(tess_file_delete(path, NULL));
    CHECK(access(path, F_OK) != 0 && errno == ENOENT);
    CHECK_ERR(tess_file_delete(path, NULL), TESS_ERR_NOENT);
    CHECK_ERR(tf_open(path, TESS_RDWR, &f, NULL), TESS_ERR_NOENT);
}

/* The file is old[0..n) followed by zeros up to size, and has storage for size bytes. */
static void check_prealloc(const unsigned char *old, int64_t n, int64_t size)
{
    unsigned char *now;
    struct stat st;
    CHECK(tf_get(path, &now) == size);
    CHECK(memcmp(now, old, (size_t)n) == 0);
    for (int64_t k = n; k < size; k++)
        CHECK(now[k] == 0);
    free(now);
    CHECK(stat(path, &st) == 0 && (int64_t)st.st_blocks * 512 >= size);
}

static void preallocate(void)
{
    enum { N = 5000 };
    unsigned char old[N];
    tess_file *f;
    tess_stats s;
    for (int i = 0; i < N; i++)
        old[i] = (unsigned char)(i * 7 + 1);
    tf_put(path, old, N);
    CHECK_OK(tf_open(path, TESS_RDONLY, &f, NULL));
    CHECK_ERR(tess_file_preallocate(f, 1 << 20), TESS_ERR_ACCESS);
    CHECK_OK(tess_file_close(f));
    CHECK_OK(tf_open(path, TESS_WRONLY, &f, NULL));
    CHECK_ERR(tess_file_preallocate(NULL, 1), TESS_ERR_ARG);
    CHECK_ERR(tess_file_preallocate(f, -1), TESS_ERR_ARG);
    CHECK_OK(tess_file_preallocate(f, 100)); /* never shrinks */
    check_prealloc(old, N, N);
    CHECK_OK(tess_file_preallocate(f, 1 << 20));
    check_prealloc(old, N, 1 << 20);
    CHECK_OK(tess_file_close(f));

    /* the fallback (the storage refuses to reserve): zeros beyond the end of file only */
    tf_put(path, old, N);
    CHECK_OK(tf_open(path, TESS_RDWR, &f, NULL));
    int64_t size = (INT64_C(5) << 19) + 3;
    tessi_fault_inject(TESSI_OP_SIZE, 0, 1, -EOPNOTSUPP);
    CHECK_OK(tess_file_preallocate(f, size));
    CHECK_OK(tess_file_stats(f, &s));
    CHECK(s.accessed_bytes == size - N && s.io_ops == 3); /* 1 MiB per write */
    check_prealloc(old, N, size);
    tessi_fault_inject(TESSI_OP_SIZE, 0, 1, -EOPNOTSUPP);
    CHECK_OK(tess_file_preallocate(f, N)); /* nothing beyond the end: nothing written */
    CHECK_OK(tess_file_stats(f, &s));
    CHECK(s.io_ops == 3);
    const struct {
        int err, code;
    } fails[] = {{ENOSPC, TESS_ERR_NOSPACE}, {EDQUOT, TESS_ERR_QUOTA}};
    for (int i = 0; i < 2; i++) { /* the storage has no room: the file stays as it was */
        tessi_fault_inject(TESSI_OP_SIZE, 0, 1, -fails[i].err);
        CHECK_ERR(tess_file_preallocate(f, size + 10), fails[i].code);
    }
    CHECK_OK(tess_file_close(f));
    check_prealloc(old, N, size);
}

/* ---------------------------------------------------------------- atomicity */

enum { REG = 64, LEN = 8, ROUNDS = 400 };

typedef struct {
    tess_file *f;
    tess_type *ft;
    int torn;
} reader;

/* A strided view (REG regions of LEN bytes, LEN apart) and the naive method: one storage
 * call per region, so a write or a read is REG separate calls unless a lock covers it. */
static tess_file *open_strided(int flags, tess_type **ft)
{
    tess_file *f;
    tess_type *v;
    const char *kv[] = {"tess_method", "naive", NULL};
    CHECK_OK(tf_open(path, flags, &f, kv));
    CHECK_OK(tess_type_vector(1, LEN, LEN, TESS_BYTE, &v));
    CHECK_OK(tess_type_resized(v, 0, 2 * LEN, ft));
    tess_type_free(v);
    CHECK_OK(tess_file_set_view(f, 0, TESS_BYTE, *ft));
    CHECK_OK(tess_file_set_atomicity(f, 1));
    return f;
}

static void *read_loop(void *arg)
{
    reader *r = arg;
    unsigned char back[REG * LEN];
    for (int i = 0; i < ROUNDS; i++) {
        int64_t n;
        CHECK_OK(tess_file_read_at(r->f, 0, back, REG * LEN, TESS_BYTE, &n));
        CHECK(n == REG * LEN);
        for (int k = 1; k < REG * LEN; k++)
            r->torn += back[k] != back[0];
    }
    return NULL;
}

static void atomic_mode(void)
{
    unsigned char data[REG * LEN];
    tess_type *wt;
    tess_stats s;
    int on = -1;
    tf_put(path, "", 0);
    memset(data, 0, sizeof data);
    tess_file *w = open_strided(TESS_RDWR, &wt);
    CHECK_OK(tess_file_write_at(w, 0, data, REG * LEN, TESS_BYTE, NULL));
    CHECK_OK(tess_file_get_atomicity(w, &on));
    CHECK(on == 1);
    tess_file_reset_stats(w);
    CHECK_OK(tess_file_write_at(w, 0, data, REG * LEN, TESS_BYTE, NULL));
    CHECK_OK(tess_file_read_at(w, 0, data, REG * LEN, TESS_BYTE, NULL));
    CHECK_OK(tess_file_stats(w, &s));
    CHECK(s.lock_ops == 4 && s.io_ops == 2 * REG); /* a lock and an unlock per access */

    /* a writer alternating two patterns, a reader on another handle: no torn read */
    reader r = {.f = open_strided(TESS_RDONLY, &r.ft)};
    pthread_t th;
    CHECK(pthread_create(&th, NULL, read_loop, &r) == 0);
    for (int i = 0; i < ROUNDS; i++) {
        memset(data, i % 2 ? 0xAA : 0x55, sizeof data);
        CHECK_OK(tess_file_write_at(w, 0, data, REG * LEN, TESS_BYTE, NULL));
    }
    CHECK(pthread_join(th, NULL) == 0);
    CHECK(r.torn == 0);
    CHECK_OK(tess_file_close(r.f));
    tess_type_free(r.ft);

    /* a sieving write holds only the extent lock (its window locks are inside it) */
    CHECK_OK(tess_file_close(w));
    const char *kv[] = {"tess_method", "sieve", "ind_wr_buffer_size", "100", NULL};
    CHECK_OK(tf_open(path, TESS_RDWR, &w, kv));
    CHECK_OK(tess_file_set_view(w, 0, TESS_BYTE, wt));
    CHECK_OK(tess_file_set_atomicity(w, 1));
    tess_file_reset_stats(w);
    memset(data, 0x11, sizeof data);
    CHECK_OK(tess_file_write_at(w, 0, data, REG * LEN, TESS_BYTE, NULL));
    CHECK_OK(tess_file_stats(w, &s));
    CHECK(s.lock_ops == 2 && s.lock_fallbacks == 0 && s.io_ops > 2);

    /* a refused lock during an access is an error, and nothing is written */
    unsigned char *before, *after;
    int64_t len = tf_get(path, &before);
    memset(data, 0x22, sizeof data);
    tessi_fault_inject(TESSI_OP_LOCK, 0, 1, -ENOLCK);
    CHECK_ERR(tess_file_write_at(w, 0, data, REG * LEN, TESS_BYTE, NULL), TESS_ERR_UNSUPPORTED);
    CHECK(tf_get(path, &after) == len && memcmp(before, after, (size_t)len) == 0);
    free(before);
    free(after);

    /* storage without locks: atomic mode is refused, the file stays nonatomic */
    CHECK_OK(tess_file_set_atomicity(w, 0));
    CHECK_OK(tess_file_get_atomicity(w, &on));
    CHECK(on == 0);
    tessi_fault_inject(TESSI_OP_LOCK, 0, -1, -ENOLCK);
    CHECK_ERR(tess_file_set_atomicity(w, 1), TESS_ERR_UNSUPPORTED);
    CHECK_OK(tess_file_get_atomicity(w, &on));
    CHECK(on == 0);
    CHECK_OK(tess_file_write_at(w, 0, data, REG * LEN, TESS_BYTE, NULL)); /* sieve: naive */
    tessi_fault_clear();
    CHECK_ERR(tess_file_set_atomicity(NULL, 1), TESS_ERR_ARG);
    CHECK_ERR(tess_file_get_atomicity(w, NULL), TESS_ERR_ARG);
    CHECK_OK(tess_file_close(w));
    tess_type_free(wt);
}

/* ---------------------------------------------------------------- get_info */

/* Every key of a is in b with the same value, and both have as many keys. */
static void same_info(const tess_info *a, const tess_info *b)
{
    int64_t na, nb;
    char key[256], va[1024];
    CHECK_OK(tess_info_get_nkeys(a, &na));
    CHECK_OK(tess_info_get_nkeys(b, &nb));
    CHECK(na == nb && na > 0);
    for (int64_t k = 0; k < na; k++) {
        CHECK_OK(tess_info_get_nthkey(a, k, key, sizeof key));
        snprintf(va, sizeof va, "%s", info_value(a, key));
        CHECK(strcmp(va, info_value(b, key)) == 0);
    }
}

static void get_info(void)
{
    tess_file *f, *g;
    tess_info *info, *again;
    int64_t n;
    char key[4];
    tf_put(path, "", 0);
    CHECK_OK(tf_open(path, TESS_RDWR, &f, NULL));
    CHECK_ERR(tess_file_get_info(f, NULL), TESS_ERR_ARG);
    CHECK_OK(tess_file_get_info(f, &info));
    const char *defaults[][2] = {
        {"cb_buffer_size", "16777216"}, {"cb_nodes", "1"},  {"romio_cb_read", "automatic"},
        {"romio_cb_write", "automatic"}, {"romio_ds_read", "automatic"},
        {"romio_ds_write", "automatic"}, {"ind_rd_buffer_size", "4194304"},
        {"ind_wr_buffer_size", "1048576"}, {"tess_method", "auto"}, {"tess_driver", "posix"},
        {"tess_list_max_pairs", "64"}, {"tess_model", "cached"}, {"tess_realms", "even"},
        {"tess_cb_sieve_threshold", "16384"}, {"tess_cb_pipeline", "disable"},
        {"tess_posix_uring", "enable"}, {"tess_realm_size", "1048576"}};
    for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++)
        CHECK(strcmp(info_value(info, defaults[i][0]), defaults[i][1]) == 0);
    CHECK(info_value(info, "striping_unit")[0] == '\0');
    CHECK(info_value(info, "tess_debug_decisions")[0] == '\0');
    CHECK_OK(tess_info_get_nkeys(info, &n));
    CHECK_ERR(tess_info_get_nthkey(info, n, key, sizeof key), TESS_ERR_ARG);
    CHECK_ERR(tess_info_get_nthkey(info, 0, key, 1), TESS_ERR_TRUNCATE);
    tess_info_free(info);
    CHECK_OK(tess_file_close(f));

    const char *kv[] = {"tess_method", "sieve", "ind_wr_buffer_size", "1000", "tess_realms",
                        "aligned", "romio_ds_read", "disable", "tess_posix_uring", "disable",
                        "unknown_key", "x", NULL};
    CHECK_OK(tf_open(path, TESS_RDWR, &f, kv));
    CHECK_OK(tess_file_get_info(f, &info));
    for (int i = 0; kv[i + 2]; i += 2)
        CHECK(strcmp(info_value(info, kv[i]), kv[i + 1]) == 0);
    CHECK(strcmp(info_value(info, "striping_unit"), "1048576") == 0);
    CHECK(info_value(info, "unknown_key")[0] == '\0');
    CHECK_OK(tess_file_open(path, TESS_RDWR, info, &g)); /* the same settings again */
    CHECK_OK(tess_file_get_info(g, &again));
    same_info(info, again);
    tess_info_free(info);
    tess_info_free(again);
    CHECK_OK(tess_file_close(f));
    CHECK_OK(tess_file_close(g));
}

/* ---------------------------------------------------------------- tracing, stats */

typedef struct {
    int64_t io, lock, decision, method, bytes;
} tally;

static void tally_event(void *ctx, const tessi_event *e)
{
    tally *t = ctx;
    t->io += e->kind == TESSI_EV_IO;
    t->lock += e->kind == TESSI_EV_LOCK;
    t->decision += e->kind == TESSI_EV_DECISION;
    t->method += e->kind == TESSI_EV_METHOD;
    t->bytes += e->kind == TESSI_EV_IO && e->moved > 0 ? e->moved : 0;
}

static void tracing_and_stats(void)
{
    static const struct tessi_tracer counting = {.version = TESSI_TRACER_VERSION,
                                                 .name = "test", .event = tally_event};
    tally t = {0};
    tess_file *f;
    tess_stats s, sum;
    tess_type *v, *ft;
    unsigned char data[800] = {1};
    char text[4096];
    const char *kv[] = {"ind_wr_buffer_size", "64", NULL};
    tf_put(path, "", 0);
    tessi_tracer_install(&counting, &t);
    CHECK_OK(tf_open(path, TESS_RDWR, &f, kv));
    CHECK_OK(tess_type_vector(1, 8, 8, TESS_BYTE, &v));
    CHECK_OK(tess_type_resized(v, 0, 24, &ft));
    CHECK_OK(tess_file_set_view(f, 0, TESS_BYTE, ft));
    CHECK_OK(tess_file_write_at(f, 0, data, 800, TESS_BYTE, NULL));
    CHECK_OK(tess_file_read_at(f, 0, data, 800, TESS_BYTE, NULL));
    tessi_tracer_install(NULL, NULL);
    CHECK_OK(tess_file_stats(f, &s)); /* the hook saw what the counters count */
    CHECK(t.io > 0 && t.io == s.io_ops && t.lock == s.lock_ops && t.bytes == s.accessed_bytes);
    CHECK(t.decision == 2 && s.auto_decisions == 2 && t.method == 2);
    CHECK_OK(tess_file_write_at(f, 0, data, 800, TESS_BYTE, NULL)); /* not seen any more */
    CHECK_OK(tess_file_stats(f, &s));
    CHECK(t.io < s.io_ops && t.decision == 2 && s.auto_decisions == 3);
    /* the generated functions: merge two processes' stats, print them */
    sum = s;
    CHECK_OK(tess_stats_combine(&sum, &s, sizeof s));
    CHECK(sum.io_ops == 2 * s.io_ops && sum.max_access == s.max_access &&
          sum.min_access == s.min_access && sum.desired_bytes == 2 * s.desired_bytes);
    CHECK_OK(tess_stats_format(&s, sizeof s, text, sizeof text));
    char want[64];
    snprintf(want, sizeof want, "\nio_ops %lld\n", (long long)s.io_ops);
    CHECK(strstr(text, want) && strstr(text, "method_accesses[1] "));
    CHECK_ERR(tess_stats_format(&s, sizeof s, text, 20), TESS_ERR_TRUNCATE);
    CHECK(strlen(text) == 19);
    /* an older caller's smaller struct gets the fields it has, nothing beyond */
    memset(&sum, 0x5A, sizeof sum);
    CHECK_OK(tess_file_stats_sized(f, &sum, offsetof(tess_stats, io_seconds)));
    CHECK(sum.io_ops == s.io_ops && ((unsigned char *)&sum.io_seconds)[0] == 0x5A);
    CHECK_OK(tess_file_close(f));
    tess_type_free(v);
    tess_type_free(ft);
}

int main(void)
{
    tf_path(path, sizeof path, "features");
    error_codes();
    delete_file();
    preallocate();
    atomic_mode();
    get_info();
    tracing_and_stats();
    unlink(path);
    return 0;
}
