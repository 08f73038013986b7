/*
 * test_pmd_auto.c - `auto`'s bookkeeping and pmd and auto under concurrent writers (issue 4),
 * against independent oracles:
 *
 *  1. auto's bookkeeping: method names and bad hints; a huge access is estimated from a prefix
 *     sample scaled to the whole (naive's estimate, linear, written out); an access of the same
 *     shape reuses the decision, another phase does not; on one region auto's figures are the
 *     methods' own estimates (estimates.h) and it runs the lowest (auto's rule written out);
 *     the decision log's lines, their pages and reuse marks; the documented defaults without a
 *     profile;
 *  2. concurrent writers: pmd and auto writers whose sieved groups span the others' bytes,
 *     and a contiguous writer, all at once; no update may be lost (the file against the bytes
 *     each writer put). Storage without locks: groups with holes are moved directly, counted in
 *     lock_fallbacks, the file checked byte by byte.
 *
 * Usage: test_pmd_auto [cases [seed]] (cases: single-region cases, 200 unless given)
 */
#include "pmd_test_common.h"

#include "driver/driver.h"

#include <inttypes.h>

static char logpath[64];

/* ------------------------------------------------------------------ 1: auto's bookkeeping */

static bool close_to(double a, double b, double rel)
{
    double d = a > b ? a - b : b - a;
    return d <= rel * (a > b ? a : b);
}

static void sampling_and_reuse(void)
{
    enum { N = 10000, LEN = 4, STRIDE = 16 };
    tess_type *v, *ft;
    tess_file *f;
    tess_stats s;
    int64_t n;
    pt_unit_profile();
    static unsigned char file[N * STRIDE * 2], buf[N * LEN];
    tf_put(pt_path, file, sizeof file);
    CHECK_OK(tess_type_vector(N, LEN, STRIDE, TESS_BYTE, &v));
    CHECK_OK(tess_type_resized(v, 0, N * STRIDE, &ft));
    pt_hints h = {.method = "auto"};
    CHECK_OK(pt_open(&h, TESS_RDWR, &f));
    CHECK_OK(tess_file_set_view(f, 0, TESS_BYTE, ft));
    CHECK_OK(tess_file_read_at(f, 0, buf, N * LEN, TESS_BYTE, &n));
    CHECK_OK(tess_file_stats(f, &s));
    /* 1024 regions of 4 bytes looked at, scaled by 40000 / 4096 */
    CHECK(s.est_regions == 1024 && s.est_scale == (double)(N * LEN) / (1024 * LEN));
    CHECK(s.regions == N && s.auto_decisions == 1 && s.auto_reused == 0);
    /* naive's estimate is linear in regions and bytes: the scaled sample gives the whole */
    CHECK(close_to(s.est_seconds[TESS_METHOD_NAIVE], N * 1.0 + N * LEN / 1024.0, 1e-12));
    double first[TESS_METHOD_COUNT];
    memcpy(first, s.est_seconds, sizeof first);
    /* the same shape (next tile: same phase) reuses the decision; another phase does not */
    CHECK_OK(tess_file_read_at(f, N * LEN, buf, N * LEN, TESS_BYTE, &n));
    CHECK_OK(tess_file_stats(f, &s));
    CHECK(s.auto_decisions == 2 && s.auto_reused == 1);
    CHECK(memcmp(first, s.est_seconds, sizeof first) == 0);
    CHECK_OK(tess_file_read_at(f, 2, buf, N * LEN, TESS_BYTE, &n));
    CHECK_OK(tess_file_stats(f, &s));
    CHECK(s.auto_decisions == 3 && s.auto_reused == 1);
    CHECK_OK(tess_file_close(f));
    tess_type_free(v);
    tess_type_free(ft);
}

/* A contiguous access (one file region): auto's figures are the methods' own estimates of that
 * region, exactly. */
static void single_region(int64_t cases, rt_rng *r)
{
    unsigned char buf[5000];
    memset(buf, 7, sizeof buf);
    tf_put(pt_path, buf, sizeof buf);
    for (int64_t c = 0; c < cases; c++) {
        tessi_model saved = pt_random_model(r, rt_chance(r, 70));
        pt_save_profile(&saved);
        pt_hints h = pt_random_hints(r, "auto");
        bool write = rt_chance(r, 50);
        int64_t buffer = atoll(write ? h.wr : h.rd), len = rt_int(r, 1, 4000), n;
        tess_region reg = {.off = rt_int(r, 0, 999), .len = len};
        tessi_model m = pt_file_model(&saved, atoll(h.pairs), h.uring[0] == 'e');
        method_costs e;
        int64_t groups;
        free(pt_estimate(&m, write, buffer, &reg, 1, &e, &groups));
        tess_file *f;
        tess_stats s;
        CHECK_OK(pt_open(&h, TESS_RDWR, &f));
        if (write)
            CHECK_OK(tess_file_write_at(f, reg.off, buf, len, TESS_BYTE, &n));
        else
            CHECK_OK(tess_file_read_at(f, reg.off, buf, len, TESS_BYTE, &n));
        CHECK_OK(tess_file_stats(f, &s));
        CHECK(s.est_regions == 1 && s.est_scale == 1.0);
        CHECK(s.est_seconds[TESS_METHOD_NAIVE] == e.naive.seconds &&
              s.est_seconds[TESS_METHOD_LIST] == e.list.seconds &&
              s.est_seconds[TESS_METHOD_SIEVE] == e.sieve.seconds &&
              s.est_seconds[TESS_METHOD_PMD] == e.pmd.seconds);
        CHECK(s.last_method == pt_expected_choice(&e, 0));
        CHECK_OK(tess_file_close(f));
    }
}

static void decision_log(void)
{
    tess_file *f;
    tess_stats s;
    int64_t n;
    unsigned char buf[64] = {0};
    pt_unit_profile();
    unlink(logpath);
    const char *kv[] = {"tess_profile", pt_prof, "tess_debug_decisions", logpath, NULL};
    CHECK_OK(tf_open(pt_path, TESS_RDWR | TESS_CREATE, &f, kv));
    /* new data, then two overwrites of it (dirty pages: priced apart, the second reuses) */
    for (int k = 0; k < 3; k++)
        CHECK_OK(tess_file_write_at(f, 0, buf, 64, TESS_BYTE, &n));
    CHECK_OK(tess_file_read_at(f, 0, buf, 64, TESS_BYTE, &n));
    CHECK_OK(tess_file_stats(f, &s));
    CHECK(s.auto_decisions == 4 && s.auto_reused == 1 && s.last_method == TESS_METHOD_NAIVE);
    CHECK(s.method_accesses[TESS_METHOD_NAIVE] == 4 && s.model_defaults == 0);
    CHECK_OK(tess_file_close(f));
    unsigned char *text;
    int64_t len = tf_get(logpath, &text);
    text[len] = '\0';
    char *l1 = (char *)text, *l2 = strchr(l1, '\n') + 1, *l3 = strchr(l2, '\n') + 1;
    char *l4 = strchr(l3, '\n') + 1;
    CHECK(strncmp(l1, "tessera auto: write at=0 bytes=64 ", 34) == 0);
    CHECK(strstr(l1, "-> naive\n") && strstr(l1, "est_s naive=") && strstr(l1, "model=profile"));
    CHECK(strstr(l1, "pages=clean") && strstr(l2, "pages=dirty") && strstr(l3, "pages=dirty"));
    CHECK(strstr(l2, "-> naive\n") == l3 - strlen("-> naive\n"));
    CHECK(strstr(l3, "-> naive (reused)\n") == l4 - strlen("-> naive (reused)\n"));
    CHECK(strncmp(l4, "tessera auto: read ", 19) == 0 &&
          strchr(l4, '\n') == (char *)text + len - 1);
    free(text);
    unlink(logpath);
    /* no log anywhere but where asked; an unwritable log fails the open */
    const char *bad[] = {"tess_debug_decisions", "/nonexistent-dir/log", NULL};
    CHECK_ERR(tf_open(pt_path, TESS_RDWR, &f, bad), TESS_ERR_NOENT);
    const char *empty[] = {"tess_debug_decisions", "", NULL};
    CHECK_ERR(tf_open(pt_path, TESS_RDWR, &f, empty), TESS_ERR_ARG);
}

static void hints_and_names(void)
{
    tess_file *f;
    tess_stats s;
    int64_t n;
    unsigned char buf[16] = {0};
    pt_unit_profile();
    tf_put(pt_path, buf, sizeof buf);
    CHECK(strcmp(tess_method_name(TESS_METHOD_NONE), "none") == 0);
    CHECK(strcmp(tess_method_name(TESS_METHOD_NAIVE), "naive") == 0);
    CHECK(strcmp(tess_method_name(TESS_METHOD_SIEVE), "sieve") == 0);
    CHECK(strcmp(tess_method_name(TESS_METHOD_LIST), "list") == 0);
    CHECK(strcmp(tess_method_name(TESS_METHOD_PMD), "pmd") == 0);
    CHECK(strcmp(tess_method_name(TESS_METHOD_COUNT), "unknown") == 0);
    const char *model_bad[] = {"tess_model", "warm", NULL};
    CHECK_ERR(tf_open(pt_path, TESS_RDWR, &f, model_bad), TESS_ERR_ARG);
    CHECK(strstr(tess_last_error(), "cached|uncached"));
    const char *method_bad[] = {"tess_method", "fastest", NULL};
    CHECK_ERR(tf_open(pt_path, TESS_RDWR, &f, method_bad), TESS_ERR_ARG);
    CHECK(strstr(tess_last_error(), "auto|naive|sieve|list|pmd"));
    const char *missing[] = {"tess_profile", "/nonexistent-dir/profile", NULL};
    CHECK_ERR(tf_open(pt_path, TESS_RDWR, &f, missing), TESS_ERR_NOENT);
    /* uncached without an uncached variant: the cached one */
    const char *unc[] = {"tess_profile", pt_prof, "tess_model", "uncached", NULL};
    CHECK_OK(tf_open(pt_path, TESS_RDWR, &f, unc));
    CHECK_OK(tess_file_close(f));
    /* no profile anywhere: the documented defaults, and stats say so */
    char empty_dir[64];
    snprintf(empty_dir, sizeof empty_dir, "tess_pmd_cfg_%ld", (long)getpid());
    CHECK(mkdir(empty_dir, 0755) == 0);
    char *old = getenv("TESS_PROFILE");
    unsetenv("TESS_PROFILE");
    char abs[4096];
    CHECK(getcwd(abs, sizeof abs - 80));
    strcat(abs, "/");
    strcat(abs, empty_dir);
    setenv("XDG_CONFIG_HOME", abs, 1);
    CHECK_OK(tess_file_open(pt_path, TESS_RDWR, NULL, &f));
    CHECK_OK(tess_file_stats(f, &s));
    CHECK(s.last_method == TESS_METHOD_NONE && s.model_defaults == 0);
    CHECK_OK(tess_file_read_at(f, 0, buf, 16, TESS_BYTE, &n));
    CHECK_OK(tess_file_stats(f, &s));
    CHECK(s.model_defaults == 1 && s.method_accesses[s.last_method] == 1);
    CHECK_OK(tess_file_close(f));
    if (old)
        setenv("TESS_PROFILE", old, 1);
    unsetenv("XDG_CONFIG_HOME");
    rmdir(empty_dir);
}

/* ------------------------------------------------------------------ 2: concurrency */

#define NB 256
#define B 64
#define CHUNK 8

static unsigned char value(int round, int64_t byte)
{
    return (unsigned char)(round * 131 + byte * 7 + byte / B);
}

/* A profile where calls are dear, bytes cheap and lists not batched: pmd sieves across the
 * 192-byte holes. */
static void sieving_profile(void)
{
    tessi_model m;
    tessi_model_defaults(&m);
    m.dir[0].s = m.dir[1].s = 1e-3;
    m.batched = false;
    pt_save_profile(&m);
}

/* Writer `first` (0 or 1) writes blocks 4k + first through a strided view with `method`. */
static int strided_writer(int round, int first, const char *method)
{
    tess_file *f;
    tess_type *v, *ft;
    tess_stats s;
    unsigned char buf[CHUNK * B];
    int64_t n;
    const char *kv[] = {"tess_method", method, "ind_wr_buffer_size", "1000",
                        "tess_profile", pt_prof, NULL};
    CHECK_OK(tf_open(pt_path, TESS_WRONLY, &f, kv));
    CHECK_OK(tess_type_vector(1, B, B, TESS_BYTE, &v));
    CHECK_OK(tess_type_resized(v, 0, 4 * B, &ft));
    CHECK_OK(tess_file_set_view(f, first * B, TESS_BYTE, ft));
    for (int64_t c = 0; c < NB / 4; c += CHUNK) {
        for (int64_t j = 0; j < CHUNK * B; j++)
            buf[j] = value(round, (4 * (c + j / B) + first) * B + j % B);
        CHECK_OK(tess_file_write_at(f, c * B, buf, CHUNK * B, TESS_BYTE, &n));
        CHECK(n == CHUNK * B);
    }
    CHECK_OK(tess_file_stats(f, &s));
    /* sieved (holes read and rewritten) under locks, or, where the write gate did not admit a
     * read-modify-write in time (a busy machine: driver/gate.c), naively as a lock fallback */
    CHECK((s.lock_fallbacks == 0 && s.lock_ops > 0 && s.accessed_bytes > 2 * NB / 4 * B) ||
          s.lock_fallbacks > 0);
    CHECK(s.method_accesses[TESS_METHOD_PMD] + s.method_accesses[TESS_METHOD_SIEVE] ==
          NB / 4 / CHUNK);
    CHECK_OK(tess_file_close(f));
    tess_type_free(v);
    tess_type_free(ft);
    return 0;
}

/* Blocks 4i+2 .. 4i+3 as contiguous writes with the default method. */
static int contiguous_writer(int round)
{
    tess_file *f;
    unsigned char buf[2 * B];
    int64_t n;
    const char *kv[] = {"tess_profile", pt_prof, NULL};
    CHECK_OK(tf_open(pt_path, TESS_WRONLY, &f, kv));
    for (int64_t i = NB / 4 - 1; i >= 0; i--) {
        int64_t off = (4 * i + 2) * B;
        for (int64_t j = 0; j < 2 * B; j++)
            buf[j] = value(round, off + j);
        CHECK_OK(tess_file_write_at(f, off, buf, 2 * B, TESS_BYTE, &n));
        CHECK(n == 2 * B);
    }
    CHECK_OK(tess_file_close(f));
    return 0;
}

static void check_round(int round)
{
    unsigned char *now;
    CHECK(tf_get(pt_path, &now) == NB * B);
    for (int64_t k = 0; k < NB * B; k++)
        if (now[k] != value(round, k)) {
            fprintf(stderr, "round %d: byte %lld (block %lld) lost its update\n", round,
                    (long long)k, (long long)(k / B));
            exit(1);
        }
    free(now);
}

/* Writers 0 and 1 sieve with pmd or auto (alternating over the rounds), writer 2 writes
 * contiguously. */
static int writer(int w, int round)
{
    static const char *const methods[] = {"pmd", "auto"};
    return w < 2 ? strided_writer(round, w, methods[(round + w) % 2]) : contiguous_writer(round);
}

static void concurrency(int rounds)
{
    sieving_profile();
    for (int round = 0; round < rounds; round++) {
        unsigned char old[NB * B];
        for (int64_t k = 0; k < NB * B; k++)
            old[k] = (unsigned char)~value(round, k);
        tf_put(pt_path, old, NB * B);
        tf_race(3, round, writer);
        check_round(round);
    }
}

/* Storage that refuses locks: pmd's groups with holes are moved directly (counted once), the
 * others go on unlocked; the file is right. */
static void no_locks(void)
{
    tess_file *f;
    tess_type *v, *ft;
    tess_stats s;
    unsigned char buf[NB / 4 * B];
    int64_t n;
    sieving_profile();
    const char *kv[] = {"tess_method", "pmd", "ind_wr_buffer_size", "1000", "tess_profile", pt_prof,
                        NULL};
    unsigned char old[NB * B];
    for (int64_t k = 0; k < NB * B; k++)
        old[k] = (unsigned char)~value(7, k);
    tf_put(pt_path, old, NB * B);
    CHECK_OK(tf_open(pt_path, TESS_RDWR, &f, kv));
    CHECK_OK(tess_type_vector(1, B, B, TESS_BYTE, &v));
    CHECK_OK(tess_type_resized(v, 0, 4 * B, &ft));
    CHECK_OK(tess_file_set_view(f, 0, TESS_BYTE, ft));
    for (int64_t j = 0; j < NB / 4 * B; j++)
        buf[j] = value(7, 4 * (j / B) * B + j % B);
    tessi_fault_inject(TESSI_OP_LOCK, 0, -1, -ENOLCK);
    CHECK_OK(tess_file_write_at(f, 0, buf, NB / 4 * B, TESS_BYTE, &n));
    tessi_fault_clear();
    CHECK(n == NB / 4 * B);
    CHECK_OK(tess_file_stats(f, &s));
    CHECK(s.lock_fallbacks == 1 && s.lock_ops == 0 && s.accessed_bytes == NB / 4 * B);
    CHECK(s.io_ops == NB / 4 && s.peak_buffer_bytes == 0);
    CHECK_OK(tess_file_close(f));
    unsigned char *now;
    CHECK(tf_get(pt_path, &now) == NB * B);
    for (int64_t k = 0; k < NB * B; k++)
        CHECK(now[k] == ((k / B) % 4 == 0 ? value(7, k) : old[k]));
    free(now);
    tess_type_free(v);
    tess_type_free(ft);
}

int main(int argc, char **argv)
{
    int64_t cases = argc > 1 ? atoll(argv[1]) : 200;
    uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 0) : 20250131;
    pt_init("pmd_auto");
    snprintf(logpath, sizeof logpath, "tess_pmd_auto_log_%ld", (long)getpid());
    rt_rng r;
    rt_seed(&r, seed);
    hints_and_names();
    sampling_and_reuse();
    single_region(cases, &r);
    decision_log();
    no_locks();
    concurrency(20);
    pt_finish();
    printf("test_pmd_auto: %" PRId64 " single-region cases (seed %" PRIu64 ")\n", cases, seed);
    return 0;
}
