/*
 * test_coll_edge.c - the collective calls where things go wrong or are unusual:
 *  - tess_file_open_mpi: different paths or hints on one rank, bad hints, a missing file,
 *    TESS_EXCL on an existing file: the same error on every rank; a bad collective hint with
 *    TESS_CREATE creates nothing (issue 11);
 *  - no data anywhere, no data on some ranks, empty memory types: no hang, nothing written;
 *  - bad input on one rank (negative count, NULL memtype or buffer, a read mixed with a write,
 *    an illegal view, realms that do not partition the file): the error on every rank, the file
 *    and the view unchanged, and the next call works;
 *  - a storage error injected on one aggregator (write, read, the read-modify-write read, at the
 *    first round or a later one, pipelined or not): the error on every rank, the next call works;
 *  - a collective write that runs independently: a storage error on one rank reaches every
 *    rank by the agreement after the I/O, bad input on one rank writes nothing;
 *  - reading past the end of file: a short count and zeros;
 *  - the _all calls on a file opened without a communicator;
 *  - the Table I counters of a regular interleaved pattern, exactly: desired, accessed, I/O
 *    operations, largest access, resent bytes, and the request sizes (encoded view against the
 *    flattened pairs);
 *  - romio_cb_* = automatic with the model's documented defaults: interleaved 8-byte elements go
 *    two-phase; one contiguous block per rank goes independent; a sparse pattern whose ranks do
 *    not overlap at all (8 bytes every 64 in each rank's own block) still goes two-phase when
 *    the ranks cannot sieve (romio_ds_write = disable): ROMIO's interleave rule would not;
 *  - the exchange's staging as the model decides it: 8-byte memory pieces packed, 64 KiB ones
 *    described;
 *  - atomic mode on one rank: every rank's collective access goes independent, under its lock;
 *    tess_file_get_info reports the group's hints.
 *
 * usage: mpiexec -n P test_coll_edge   (P >= 2)
 */
#include "coll_test.h"
#include "driver/driver.h"

#include <errno.h>

static char g_path[256];
static int P, me;

/* Expect code on every rank; a rank other than `culprit` sees "failed on rank <culprit>". */
#define CT_ALL_ERR(call, code, culprit)                                                      \
    do {                                                                                     \
        CT_ERR(call, code);                                                                  \
        if (me != (culprit) && (culprit) >= 0) {                                             \
            char ct_want_[64];                                                               \
            snprintf(ct_want_, sizeof ct_want_, "failed on rank %d", (culprit));             \
            CT_CHECK(strstr(tess_last_error(), ct_want_) != NULL);                           \
        }                                                                                    \
    } while (0)

static void where(const char *what)
{
    snprintf(ct_where, sizeof ct_where, "%s", what);
}

/* Rank r's byte j of the interleaved pattern: blocks of `blk` bytes, rank r's k-th at
 * (k * P + r) * blk. */
static unsigned char pat(int r, int64_t j, int gen) { return (unsigned char)(j * 7 + r * 31 + gen); }

/* The file expected after rank r wrote nblk interleaved blocks of blk bytes, generation gen. */
static void check_interleaved(int64_t blk, int64_t nblk, int gen)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) {
        unsigned char *got;
        int64_t size = ct_get(g_path, &got);
        CT_EQ(size, blk * nblk * P);
        for (int64_t x = 0; x < size; x++) {
            int64_t b = x / blk, r = b % P, j = (b / P) * blk + x % blk;
            if (got[x] != pat((int)r, j, gen)) {
                fprintf(stderr, "byte %lld: %d, expected %d\n", (long long)x, got[x],
                        pat((int)r, j, gen));
                ct_fail(__FILE__, __LINE__, "interleaved file content");
            }
        }
        free(got);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* The interleaved view: nblk blocks of blk bytes, this rank's lane of P. */
static tess_type *lane_view(int64_t blk)
{
    tess_type *b, *s, *v;
    int64_t one = 1, d = me * blk;
    CT_OK(tess_type_contiguous(blk, TESS_BYTE, &b));
    CT_OK(tess_type_struct(1, &one, &d, &b, &s));
    CT_OK(tess_type_resized(s, 0, blk * P, &v));
    tess_type_free(b);
    tess_type_free(s);
    return v;
}

static unsigned char *pattern_buffer(int64_t n, int gen)
{
    unsigned char *m = malloc((size_t)n);
    CT_CHECK(m);
    for (int64_t j = 0; j < n; j++)
        m[j] = pat(me, j, gen);
    return m;
}

static void test_open(void)
{
    tess_file *f = NULL;
    char other[300];
    where("open: different paths");
    snprintf(other, sizeof other, "%s%s", g_path, me == P - 1 ? ".x" : "");
    CT_ALL_ERR(ct_open(MPI_COMM_WORLD, other, TESS_RDWR | TESS_CREATE, NULL, &f), TESS_ERR_ARG,
               -1);
    CT_CHECK(f == NULL);
    where("open: missing file");
    unlink(g_path);
    MPI_Barrier(MPI_COMM_WORLD);
    CT_ALL_ERR(ct_open(MPI_COMM_WORLD, g_path, TESS_RDWR, NULL, &f), TESS_ERR_NOENT, -1);
    where("open: TESS_EXCL");
    CT_OK(ct_open(MPI_COMM_WORLD, g_path, TESS_RDWR | TESS_CREATE | TESS_EXCL, NULL, &f));
    CT_OK(tess_file_close(f));
    CT_ALL_ERR(ct_open(MPI_COMM_WORLD, g_path, TESS_RDWR | TESS_CREATE | TESS_EXCL, NULL, &f),
               TESS_ERR_EXIST, 0);
    where("open: a bad hint on one rank");
    const char *bad[] = {"cb_nodes", me == 1 ? "0" : "1", NULL};
    CT_ALL_ERR(ct_open(MPI_COMM_WORLD, g_path, TESS_RDWR, bad, &f), TESS_ERR_ARG, 1);
    where("open: hints that differ");
    const char *diff[] = {"cb_buffer_size", me == 1 ? "4096" : "8192", NULL};
    CT_ALL_ERR(ct_open(MPI_COMM_WORLD, g_path, TESS_RDWR, diff, &f), TESS_ERR_ARG, -1);
    const char *realm[] = {"tess_realms", "sideways", NULL};
    CT_ALL_ERR(ct_open(MPI_COMM_WORLD, g_path, TESS_RDWR, realm, &f), TESS_ERR_ARG, -1);
    where("open: a bad collective hint creates nothing (issue 11)");
    static const char *const badc[][2] = {
        {"cb_nodes", "0"}, {"cb_buffer_size", "4294967296"}, {"tess_realms", "square"},
        {"tess_cb_sieve_threshold", "-3"}, {"striping_unit", "0"},
        {"romio_cb_write", "sometimes"}, {"tess_cb_pipeline", "yes"}, {"tess_realm_size", "-1"}};
    for (size_t i = 0; i < sizeof badc / sizeof badc[0]; i++) {
        const char *kv[] = {badc[i][0], badc[i][1], NULL};
        f = NULL;
        unlink(g_path);
        MPI_Barrier(MPI_COMM_WORLD);
        CT_ALL_ERR(ct_open(MPI_COMM_WORLD, g_path, TESS_RDWR | TESS_CREATE, kv, &f),
                   TESS_ERR_ARG, -1);
        CT_CHECK(f == NULL && access(g_path, F_OK) != 0);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    where("open: MPI_COMM_NULL");
    CT_ERR(ct_open(MPI_COMM_NULL, g_path, TESS_RDWR, NULL, &f), TESS_ERR_ARG);
    where("open: flags that differ");
    CT_ALL_ERR(ct_open(MPI_COMM_WORLD, g_path, me == 0 ? TESS_RDWR : TESS_RDONLY, NULL, &f),
               TESS_ERR_ARG, -1);
}

static void test_no_data(void)
{
    const char *kv[] = {"romio_cb_write", "enable", "romio_cb_read", "enable", "cb_nodes", "2",
                        NULL};
    tess_file *f;
    tess_type *empty;
    int64_t got = -1, blk = 100, nblk = 8;
    unsigned char *m = pattern_buffer(blk * nblk, 0);
    CT_OK(tess_type_contiguous(0, TESS_BYTE, &empty));
    unlink(g_path);
    CT_OK(ct_open(MPI_COMM_WORLD, g_path, TESS_RDWR | TESS_CREATE, kv, &f));
    where("no data anywhere");
    CT_OK(tess_file_write_at_all(f, 0, NULL, 0, TESS_BYTE, &got));
    CT_EQ(got, 0);
    CT_OK(tess_file_read_at_all(f, 5, NULL, 0, TESS_INT32, &got));
    CT_EQ(got, 0);
    CT_OK(tess_file_write_at_all(f, 0, m, 3, empty, &got)); /* data bytes: none */
    CT_EQ(got, 0);
    CT_EQ(ct_get(g_path, NULL), 0);
    where("no data on some ranks, empty types on others");
    tess_type *view = lane_view(blk);
    CT_OK(tess_file_set_view(f, 0, TESS_BYTE, view));
    int64_t n = me == 0 ? 0 : blk * nblk;
    CT_OK(tess_file_write_at_all(f, 0, m, me == 1 ? 2 : n, me == 1 ? empty : TESS_BYTE, &got));
    CT_EQ(got, me == 1 ? 0 : n);
    MPI_Barrier(MPI_COMM_WORLD);
    /* and every rank writes: the holes the others left are filled */
    CT_OK(tess_file_write_at_all(f, 0, m, blk * nblk, TESS_BYTE, &got));
    check_interleaved(blk, nblk, 0);
    CT_OK(tess_file_close(f));
    tess_type_free(view);
    tess_type_free(empty);
    free(m);
}

static void test_bad_input(void)
{
    const char *kv[] = {"romio_cb_write", "enable", "romio_cb_read", "enable", "cb_nodes", "2",
                        "cb_buffer_size", "256", NULL};
    int64_t blk = 64, nblk = 16, got = -1;
    unsigned char *m = pattern_buffer(blk * nblk, 1);
    tess_file *f;
    unlink(g_path);
    CT_OK(ct_open(MPI_COMM_WORLD, g_path, TESS_RDWR | TESS_CREATE, kv, &f));
    tess_type *view = lane_view(blk);
    CT_OK(tess_file_set_view(f, 0, TESS_BYTE, view));
    CT_OK(tess_file_write_at_all(f, 0, m, blk * nblk, TESS_BYTE, &got));
    check_interleaved(blk, nblk, 1);
    unsigned char *m2 = pattern_buffer(blk * nblk, 2);
    where("negative count on the last rank");
    CT_ALL_ERR(tess_file_write_at_all(f, 0, m2, me == P - 1 ? -5 : blk * nblk, TESS_BYTE, &got),
               TESS_ERR_ARG, P - 1);
    check_interleaved(blk, nblk, 1); /* unchanged */
    where("NULL memtype on rank 1");
    CT_ALL_ERR(tess_file_write_at_all(f, 0, m2, blk * nblk, me == 1 ? NULL : TESS_BYTE, &got),
               TESS_ERR_ARG, 1);
    where("NULL buffer with data on rank 0");
    CT_ALL_ERR(tess_file_write_at_all(f, 0, me == 0 ? NULL : m2, blk * nblk, TESS_BYTE, &got),
               TESS_ERR_ARG, 0);
    check_interleaved(blk, nblk, 1);
    where("rank 0 reads while the others write");
    CT_ALL_ERR(me == 0 ? tess_file_read_at_all(f, 0, m2, blk * nblk, TESS_BYTE, &got)
                       : tess_file_write_at_all(f, 0, m2, blk * nblk, TESS_BYTE, &got),
               TESS_ERR_ARG, -1);
    check_interleaved(blk, nblk, 1);
    where("an illegal view on rank 1");
    tess_type *neg;
    CT_OK(tess_type_hvector(2, 1, -4, TESS_BYTE, &neg)); /* decreasing: not a filetype */
    CT_ALL_ERR(tess_file_set_view(f, 0, TESS_BYTE, me == 1 ? neg : view), TESS_ERR_VIEW, 1);
    where("the next calls after the errors");
    CT_OK(tess_file_write_at_all(f, 0, m2, blk * nblk, TESS_BYTE, &got)); /* the old view */
    CT_EQ(got, blk * nblk);
    check_interleaved(blk, nblk, 2);
    memset(m2, 0, (size_t)(blk * nblk));
    CT_OK(tess_file_read_at_all(f, 0, m2, blk * nblk, TESS_BYTE, &got));
    for (int64_t j = 0; j < blk * nblk; j++)
        CT_EQ(m2[j], pat(me, j, 2));
    where("realms that leave holes");
    tess_type *blk3, *realm;
    CT_OK(tess_type_contiguous(3, TESS_BYTE, &blk3));
    CT_OK(tess_type_resized(blk3, 0, 3 * 2 + 1, &realm)); /* 2 aggregators, 1 byte missing */
    CT_ALL_ERR(tess_file_set_realms(f, 0, realm, 3), TESS_ERR_VIEW, -1);
    tess_type_free(realm);
    CT_OK(tess_type_resized(blk3, 0, 6, &realm));
    CT_ALL_ERR(tess_file_set_realms(f, 0, realm, me == 1 ? 2 : 3), TESS_ERR_VIEW, 1);
    CT_OK(tess_file_set_realms(f, -1, realm, 3));
    CT_OK(tess_file_write_at_all(f, 0, m, blk * nblk, TESS_BYTE, &got));
    check_interleaved(blk, nblk, 1);
    CT_OK(tess_file_close(f));
    tess_type_free(realm);
    tess_type_free(blk3);
    tess_type_free(neg);
    tess_type_free(view);
    free(m);
    free(m2);
}

/* A fault of class op on rank `culprit` (an aggregator) after `after` of its calls. */
static void fault_case(const char *pipe, int op, int64_t after, int err, int code, int gen,
                       bool holes)
{
    char kvbuf[8] = "";
    snprintf(kvbuf, sizeof kvbuf, "%d", P);
    /* windows start at data: holes inside one need a window longer than a period + a block */
    const char *kv[] = {"romio_cb_write", "enable", "romio_cb_read", "enable", "cb_nodes", kvbuf,
                        "cb_buffer_size", holes ? "1000" : "200", "tess_cb_pipeline", pipe,
                        NULL};
    int64_t blk = 50, nblk = 20, got;
    int culprit = P - 1;
    unsigned char *m = pattern_buffer(blk * nblk, gen), *r = malloc((size_t)(blk * nblk));
    tess_file *f;
    CT_CHECK(r);
    snprintf(ct_where, sizeof ct_where, "fault op %d after %lld, pipeline %s%s", op,
             (long long)after, pipe, holes ? ", holes" : "");
    unlink(g_path);
    CT_OK(ct_open(MPI_COMM_WORLD, g_path, TESS_RDWR | TESS_CREATE, kv, &f));
    tess_type *view = lane_view(blk);
    CT_OK(tess_file_set_view(f, 0, TESS_BYTE, view));
    if (holes) { /* the file first, then rank 0 writes nothing: holes in every window */
        CT_OK(tess_file_write_at_all(f, 0, m, blk * nblk, TESS_BYTE, &got));
        MPI_Barrier(MPI_COMM_WORLD);
    }
    if (me == culprit)
        tessi_fault_inject(op, after, 1, err);
    if (op == TESSI_OP_READ && !holes)
        CT_OK(tess_file_write_at_all(f, 0, m, blk * nblk, TESS_BYTE, &got));
    int rc = op == TESSI_OP_READ && !holes
                 ? tess_file_read_at_all(f, 0, r, blk * nblk, TESS_BYTE, &got)
                 : tess_file_write_at_all(f, 0, m, holes && me == 0 ? 0 : blk * nblk,
                                          TESS_BYTE, &got);
    CT_ALL_ERR(rc, code, culprit);
    tessi_fault_clear();
    MPI_Barrier(MPI_COMM_WORLD);
    /* the next collective calls work */
    CT_OK(tess_file_write_at_all(f, 0, m, blk * nblk, TESS_BYTE, &got));
    CT_EQ(got, blk * nblk);
    check_interleaved(blk, nblk, gen);
    CT_OK(tess_file_read_at_all(f, 0, r, blk * nblk, TESS_BYTE, &got));
    CT_CHECK(memcmp(r, m, (size_t)(blk * nblk)) == 0);
    CT_OK(tess_file_close(f));
    tess_type_free(view);
    free(m);
    free(r);
}

static void test_faults(void)
{
    for (int pipe = 0; pipe < 2; pipe++) {
        const char *pv = pipe ? "enable" : "disable";
        fault_case(pv, TESSI_OP_WRITE, 0, -EIO, TESS_ERR_IO, 3, false);
        fault_case(pv, TESSI_OP_WRITE, 2, -ENOSPC, TESS_ERR_NOSPACE, 4, false);
        fault_case(pv, TESSI_OP_READ, 0, -EIO, TESS_ERR_IO, 5, false);
        fault_case(pv, TESSI_OP_READ, 3, -EIO, TESS_ERR_IO, 6, false);
        fault_case(pv, TESSI_OP_READ, 0, -EIO, TESS_ERR_IO, 7, true); /* read-modify-write */
    }
}

/* The file after each rank r wrote its contiguous block of blk bytes at r * blk, generation
 * gen[r] (every byte against the byte map). */
static void check_blocks(int64_t blk, const int *gen)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) {
        unsigned char *got;
        int64_t size = ct_get(g_path, &got);
        CT_EQ(size, blk * P);
        for (int64_t x = 0; x < size; x++)
            if (got[x] != pat((int)(x / blk), x % blk, gen[x / blk])) {
                fprintf(stderr, "byte %lld: %d, expected %d\n", (long long)x, got[x],
                        pat((int)(x / blk), x % blk, gen[x / blk]));
                ct_fail(__FILE__, __LINE__, "block file content");
                break;
            }
        free(got);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/*
 * A collective write that runs independently (romio_cb_write = disable: the branch automatic
 * takes for one contiguous block per rank, chosen for sure), where the agreement after the I/O
 * carries the verdict: a storage fault on the last rank is reported on every rank, naming it,
 * while the others' blocks are written; bad input on rank 0 leaves the file untouched; the next
 * call works.
 */
static void test_independent_faults(void)
{
    const char *kv[] = {"romio_cb_write", "disable", NULL};
    const int64_t blk = 4096;
    int gen[64];
    tess_file *f;
    int64_t got = -1;
    unsigned char *m[4];
    CT_CHECK(P <= 64);
    for (int g = 0; g < 4; g++)
        m[g] = pattern_buffer(blk, 20 + g);
    where("independent write");
    unlink(g_path);
    CT_OK(ct_open(MPI_COMM_WORLD, g_path, TESS_RDWR | TESS_CREATE, kv, &f));
    CT_OK(tess_file_write_at_all(f, blk * me, m[0], blk, TESS_BYTE, &got));
    CT_EQ(got, blk);
    for (int r = 0; r < P; r++)
        gen[r] = 20;
    check_blocks(blk, gen);
    where("independent write: a storage fault on the last rank");
    if (me == P - 1)
        tessi_fault_inject(TESSI_OP_WRITE, 0, 1, -EIO);
    CT_ALL_ERR(tess_file_write_at_all(f, blk * me, m[1], blk, TESS_BYTE, &got), TESS_ERR_IO,
               P - 1);
    tessi_fault_clear();
    for (int r = 0; r < P - 1; r++)
        gen[r] = 21;
    check_blocks(blk, gen);
    where("independent write: bad input on rank 0");
    CT_ALL_ERR(tess_file_write_at_all(f, blk * me, me == 0 ? NULL : m[2], blk, TESS_BYTE, &got),
               TESS_ERR_ARG, 0);
    check_blocks(blk, gen); /* untouched */
    where("independent write: the next call");
    CT_OK(tess_file_write_at_all(f, blk * me, m[3], blk, TESS_BYTE, &got));
    for (int r = 0; r < P; r++)
        gen[r] = 23;
    check_blocks(blk, gen);
    CT_OK(tess_file_close(f));
    for (int g = 0; g < 4; g++)
        free(m[g]);
}

/*
 * A collective write the group runs independently is priced with every writer at the storage
 * at once, as the policy priced it. Each rank writes 64 regions of 1 KiB, 24 KiB apart, of one
 * fresh file. By the documented defaults (model.h: a write call 4.5 us per contending process
 * onto clean pages, 4 us onto the dirty pages of an overwrite; a written byte 0.18 or 0.16 ns,
 * a read byte 0.08 ns), one process overwriting them moves them best one call each (64 x 4 us
 * + 64 KiB = 0.27 ms, against about 0.37 ms for reading the 1.4 MiB of holes and writing the
 * 1.5 MiB extent), while two or more writers of the file make every call cost two or more
 * (0.59 ms at 2 onto clean pages, against 0.40 ms): sieving then wins. The same access by
 * tess_file_write_at (one process) must not sieve. The file must hold every rank's regions
 * and zeros elsewhere.
 */
static void test_independent_priced_shared(void)
{
    const char *kv[] = {"romio_cb_write", "disable", NULL};
    enum { N = 64, LEN = 1024, STRIDE = 24576 };
    tess_type *ft;
    tess_file *f;
    tess_stats s;
    int64_t got = -1;
    unsigned char *m = malloc(N * LEN), *img = NULL;
    CT_CHECK(m && P <= STRIDE / LEN);
    for (int64_t j = 0; j < N * LEN; j++)
        m[j] = pat(me, j, 5);
    CT_OK(tess_type_hvector(N, LEN, STRIDE, TESS_BYTE, &ft));
    where("independent collective write priced for the group");
    unlink(g_path);
    MPI_Barrier(MPI_COMM_WORLD);
    CT_OK(ct_open(MPI_COMM_WORLD, g_path, TESS_RDWR | TESS_CREATE, kv, &f));
    CT_OK(tess_file_set_view(f, (int64_t)me * LEN, TESS_BYTE, ft));
    CT_OK(tess_file_write_at_all(f, 0, m, N * LEN, TESS_BYTE, &got));
    CT_EQ(got, N * LEN);
    CT_OK(tess_file_stats(f, &s));
    CT_CHECK(s.last_method == TESS_METHOD_SIEVE || s.last_method == TESS_METHOD_PMD);
    CT_OK(tess_file_sync(f));
    MPI_Barrier(MPI_COMM_WORLD);
    int64_t size = ct_get(g_path, &img);
    CT_EQ(size, (int64_t)(P - 1) * LEN + (N - 1) * STRIDE + LEN);
    for (int64_t x = 0; x < size; x++) {
        int64_t r = (x % STRIDE) / LEN, j = x / STRIDE * LEN + x % LEN;
        CT_EQ(img[x], r < P ? pat((int)r, j, 5) : 0);
    }
    free(img);
    where("the same access by one process alone");
    MPI_Barrier(MPI_COMM_WORLD);
    tess_file_reset_stats(f);
    CT_OK(tess_file_write_at(f, 0, m, N * LEN, TESS_BYTE, &got));
    CT_OK(tess_file_stats(f, &s));
    CT_CHECK(s.last_method == TESS_METHOD_NAIVE || s.last_method == TESS_METHOD_LIST);
    CT_OK(tess_file_close(f));
    tess_type_free(ft);
    free(m);
}

static void test_eof(void)
{
    const char *kv[] = {"romio_cb_read", "enable", "cb_buffer_size", "64", NULL};
    int64_t blk = 10, nblk = 30, got = -1, fsize = 437;
    tess_file *f;
    where("reading past the end of file");
    if (me == 0) {
        unlink(g_path);
        unsigned char d[437];
        for (int i = 0; i < 437; i++)
            d[i] = (unsigned char)(i * 13 + 1);
        ct_put(g_path, d, fsize);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    CT_OK(ct_open(MPI_COMM_WORLD, g_path, TESS_RDONLY, kv, &f));
    tess_type *view = lane_view(blk);
    CT_OK(tess_file_set_view(f, 0, TESS_BYTE, view));
    unsigned char *r = malloc((size_t)(blk * nblk));
    CT_CHECK(r);
    memset(r, 0xee, (size_t)(blk * nblk));
    CT_OK(tess_file_read_at_all(f, 0, r, blk * nblk, TESS_BYTE, &got));
    int64_t expect = 0;
    for (int64_t j = 0; j < blk * nblk; j++) {
        int64_t x = ((j / blk) * P + me) * blk + j % blk;
        CT_EQ(r[j], x < fsize ? (unsigned char)(x * 13 + 1) : 0);
        expect += x < fsize;
    }
    CT_EQ(got, expect);
    CT_OK(tess_file_close(f));
    tess_type_free(view);
    free(r);
}

static void test_independent_file(void)
{
    char mine[300];
    tess_file *f;
    int64_t got;
    unsigned char d[100], r[100];
    where("_all on a file opened without a communicator");
    snprintf(mine, sizeof mine, "%s.%d", g_path, me);
    for (int i = 0; i < 100; i++)
        d[i] = (unsigned char)(i + me);
    CT_OK(tess_file_open(mine, TESS_RDWR | TESS_CREATE, NULL, &f));
    CT_OK(tess_file_write_at_all(f, 10, d, 100, TESS_BYTE, &got));
    CT_EQ(got, 100);
    CT_OK(tess_file_read_at_all(f, 10, r, 100, TESS_BYTE, &got));
    CT_CHECK(memcmp(d, r, 100) == 0);
    CT_ERR(tess_file_write_at_all(f, 0, d, -1, TESS_BYTE, &got), TESS_ERR_ARG);
    CT_OK(tess_file_set_realms(f, 0, NULL, 0));
    CT_OK(tess_file_close(f));
    unlink(mine);
}

/*
 * Table I on a dense interleaved write and read: blocks of blk bytes, nblk per rank, even
 * realms over 2 aggregators (ranks 0 and 1 on one node), buffer B, no pipelining. Each
 * aggregator owns E/2 bytes and covers them in ceil(E/2 / B) windows of one storage call each.
 */
static void test_table1(void)
{
    const int64_t blk = 1000, nblk = 64, B = 16000, E = blk * nblk * P, A = 2;
    const char *kv[] = {"romio_cb_write", "enable", "romio_cb_read", "enable", "cb_nodes", "2",
                        "cb_buffer_size", "16000", "tess_cb_pipeline", "disable", NULL};
    int64_t got, n = blk * nblk;
    unsigned char *m = pattern_buffer(n, 9);
    tess_file *f;
    tess_stats s;
    where("Table I counters");
    unlink(g_path);
    CT_OK(ct_open(MPI_COMM_WORLD, g_path, TESS_RDWR | TESS_CREATE, kv, &f));
    tess_type *view = lane_view(blk);
    size_t enc = 0;
    tess_type_encode(view, NULL, 0, &enc);
    CT_OK(tess_file_set_view(f, 0, TESS_BYTE, view));
    for (int op = 0; op < 2; op++) {
        tess_file_reset_stats(f);
        if (op == 0)
            CT_OK(tess_file_write_at_all(f, 0, m, n, TESS_BYTE, &got));
        else
            CT_OK(tess_file_read_at_all(f, 0, m, n, TESS_BYTE, &got));
        CT_EQ(got, n);
        CT_OK(tess_file_stats(f, &s));
        bool agg = me < A;
        int64_t z = E / A, windows = (z + B - 1) / B;
        CT_EQ(s.desired_bytes, n);
        CT_EQ(s.accessed_bytes, agg ? z : 0);
        CT_EQ(s.io_ops, agg ? windows : 0);
        CT_EQ(s.max_access, agg ? (B < z ? B : z) : 0);
        CT_EQ(s.resent_bytes, agg ? n - n / A : n); /* the share in its own realm stays */
        CT_EQ(s.flat_request_bytes, 16 * nblk);    /* one pair per block */
        CT_EQ(s.request_bytes, A * (48 + (int64_t)enc)); /* the encoded view to each aggregator */
        CT_CHECK(s.request_bytes < s.flat_request_bytes);
        CT_EQ(s.peak_buffer_bytes, agg ? B : 0);
    }
    check_interleaved(blk, nblk, 9);

    /* a filetype of 4096 one-byte blocks of which an access touches 2: pairs are smaller than
     * the encoded type (about 64 KiB), so they are what goes to the aggregators */
    where("request sizes: pairs where smaller");
    int64_t *dis = malloc(sizeof(int64_t) * 4096), *len = malloc(sizeof(int64_t) * 4096);
    tess_type *idx;
    CT_CHECK(dis && len);
    for (int64_t k = 0; k < 4096; k++) {
        dis[k] = (k * P + me) * 3 + (k % 5);
        len[k] = 1;
    }
    CT_OK(tess_type_hindexed(4096, len, dis, TESS_BYTE, &idx));
    tess_type_encode(idx, NULL, 0, &enc);
    CT_OK(tess_file_set_view(f, 0, TESS_BYTE, idx));
    tess_file_reset_stats(f);
    CT_OK(tess_file_write_at_all(f, 100, m, 2, TESS_BYTE, &got));
    CT_OK(tess_file_stats(f, &s));
    CT_EQ(s.flat_request_bytes, 32);
    CT_CHECK(s.request_bytes >= 48 + 32 && s.request_bytes <= 2 * 48 + 32);
    CT_CHECK(s.request_bytes < (int64_t)enc);
    memset(m, 0, 2);
    CT_OK(tess_file_read_at_all(f, 100, m, 2, TESS_BYTE, &got));
    CT_EQ(m[0], pat(me, 0, 9));
    CT_EQ(m[1], pat(me, 1, 9));
    tess_type_free(idx);
    free(dis);
    free(len);
    CT_OK(tess_file_close(f));
    tess_type_free(view);
    free(m);
}

/* One automatic decision: did the collective write (read) of n bytes in `count` regions of
 * `len` bytes, `stride` apart, from `start`, go two-phase? (Data checked on the way.) */
static bool went_twophase(const char *const *kv, int64_t start, int64_t len, int64_t stride,
                          int64_t count, bool write)
{
    tess_file *f;
    tess_type *vec;
    tess_stats s;
    int64_t n = len * count, got;
    unsigned char *m = pattern_buffer(n, 11), *r = malloc((size_t)n);
    CT_CHECK(r);
    unlink(g_path);
    CT_OK(ct_open(MPI_COMM_WORLD, g_path, TESS_RDWR | TESS_CREATE, kv, &f));
    CT_OK(tess_type_hvector(count, len, stride, TESS_BYTE, &vec));
    CT_OK(tess_file_set_view(f, start, TESS_BYTE, vec));
    tess_file_reset_stats(f);
    CT_OK(tess_file_write_at_all(f, 0, m, n, TESS_BYTE, &got));
    CT_OK(tess_file_stats(f, &s));
    bool tp = s.request_bytes > 0;
    tess_file_reset_stats(f);
    CT_OK(tess_file_read_at_all(f, 0, r, n, TESS_BYTE, &got));
    CT_CHECK(memcmp(r, m, (size_t)n) == 0);
    CT_OK(tess_file_stats(f, &s));
    if (!write)
        tp = s.request_bytes > 0;
    CT_OK(tess_file_close(f));
    tess_type_free(vec);
    free(m);
    free(r);
    return tp;
}

static void test_auto(void)
{
    const char *dflt[] = {NULL};
    const char *nods[] = {"romio_ds_write", "disable", NULL};
    where("automatic: interleaved 8-byte elements");
    CT_CHECK(went_twophase(dflt, 8 * me, 8, 8 * P, 16384, true));
    where("automatic: one contiguous block per rank");
    CT_CHECK(!went_twophase(dflt, (1 << 20) * (int64_t)me, 1 << 20, 1 << 20, 1, true));
    CT_CHECK(!went_twophase(dflt, (1 << 20) * (int64_t)me, 1 << 20, 1 << 20, 1, false));
    where("automatic: sparse, non-overlapping, noncontiguous, no sieving");
    CT_CHECK(went_twophase(nods, (int64_t)me * 8192 * 64, 8, 64, 8192, true));
}

/*
 * The exchange's staging as the model decides it (tess_cb_pack automatic, the MPI transport):
 * a client's memory of 8-byte pieces 24 bytes apart (FLASH's shape) is packed into a staging
 * buffer, every byte it sends (writes) or receives (reads) once; memory of 64 KiB pieces goes
 * as a derived datatype, unpacked. One aggregator (rank 0), whose side is the 4 KiB (64 KiB)
 * blocks of the interleaved view: described, not staged. The data is checked both ways.
 */
static void test_staging(void)
{
    const char *kv[] = {"romio_cb_write", "enable", "romio_cb_read", "enable", "cb_nodes", "1",
                        NULL};
    for (int big = 0; big < 2; big++) {
        int64_t piece = big ? 65536 : 8, blk = big ? 65536 : 4096, nblk = big ? 2 : 16;
        int64_t n = blk * nblk, span = n / piece * 3 * piece, got;
        unsigned char *m = calloc((size_t)span, 1), *r = calloc((size_t)span, 1);
        tess_type *mt, *ft = lane_view(blk);
        tess_file *f;
        tess_stats s;
        CT_CHECK(m && r);
        where(big ? "staging: 64 KiB memory pieces stay described" :
                    "staging: 8-byte memory pieces are packed");
        CT_OK(tess_type_hvector(n / piece, piece, 3 * piece, TESS_BYTE, &mt));
        for (int64_t j = 0; j < n; j++)
            m[(j / piece) * 3 * piece + j % piece] = pat(me, j, 13 + big);
        unlink(g_path);
        CT_OK(ct_open(MPI_COMM_WORLD, g_path, TESS_RDWR | TESS_CREATE, kv, &f));
        CT_OK(tess_file_set_view(f, 0, TESS_BYTE, ft));
        for (int op = 0; op < 2; op++) {
            tess_file_reset_stats(f);
            if (op == 0)
                CT_OK(tess_file_write_at_all(f, 0, m, 1, mt, &got));
            else
                CT_OK(tess_file_read_at_all(f, 0, r, 1, mt, &got));
            CT_EQ(got, n);
            CT_OK(tess_file_stats(f, &s));
            CT_EQ(s.resent_bytes, me == 0 ? 0 : n);
            CT_EQ(s.packed_bytes, me == 0 || big ? 0 : n);
        }
        CT_CHECK(memcmp(m, r, (size_t)span) == 0);
        CT_OK(tess_file_close(f));
        check_interleaved(blk, nblk, 13 + big);
        tess_type_free(mt);
        tess_type_free(ft);
        free(m);
        free(r);
    }
}

/* Atomic mode on one rank: every rank's collective access runs independently (no access
 * descriptions sent), each under its extent lock; get_info shows the group's hints. */
static void test_atomic_and_info(void)
{
    const char *kv[] = {"romio_cb_write", "enable", "cb_nodes", "1", "tess_realms", "aligned",
                        NULL};
    tess_file *f;
    tess_info *info;
    tess_stats s;
    int64_t blk = 64, nblk = 16, got;
    char v[64];
    int found = 0;
    unsigned char *m = pattern_buffer(blk * nblk, 21);
    tess_type *ft = lane_view(blk);
    unlink(g_path);
    CT_OK(ct_open(MPI_COMM_WORLD, g_path, TESS_RDWR | TESS_CREATE, kv, &f));
    where("get_info of a group file");
    CT_OK(tess_file_get_info(f, &info));
    const char *want[][2] = {{"cb_nodes", "1"}, {"romio_cb_write", "enable"},
                             {"tess_realms", "aligned"}, {"striping_unit", "1048576"},
                             {"cb_buffer_size", "16777216"}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        CT_OK(tess_info_get(info, want[i][0], v, sizeof v, &found));
        CT_CHECK(found && strcmp(v, want[i][1]) == 0);
    }
    tess_info_free(info);
    where("atomic mode on rank 0 only");
    CT_OK(tess_file_set_view(f, 0, TESS_BYTE, ft));
    if (me == 0)
        CT_OK(tess_file_set_atomicity(f, 1));
    tess_file_reset_stats(f);
    CT_OK(tess_file_write_at_all(f, 0, m, blk * nblk, TESS_BYTE, &got));
    CT_EQ(got, blk * nblk);
    CT_OK(tess_file_stats(f, &s));
    CT_EQ(s.request_bytes, 0);
    CT_EQ(s.resent_bytes, 0);
    if (me == 0)
        CT_EQ(s.lock_ops, 2);
    CT_OK(tess_file_close(f));
    check_interleaved(blk, nblk, 21);
    tess_type_free(ft);
    free(m);
}

/* A collective read of n bytes at 0 into r, checked against m. */
static void read_checked(tess_file *f, unsigned char *r, const unsigned char *m, int64_t n)
{
    int64_t got = -1;
    memset(r, 0, (size_t)n);
    CT_OK(tess_file_read_at_all(f, 0, r, n, TESS_BYTE, &got));
    CT_EQ(got, n);
    CT_CHECK(memcmp(r, m, (size_t)n) == 0);
}

/*
 * Read ahead (src/core/group.c): a collective read of the shape of the last one, which went
 * independent on every rank, reads before the records' exchange and sends its outcome with
 * them. A storage error there fails every rank; with bad input on another rank the call fails
 * everywhere, and the rank that read ahead reports its own error (which shows that it did read
 * ahead); a rank whose shape changed reads after the exchange; a guess gone wrong (the group
 * goes two-phase) reads again. Every read's bytes are checked.
 */
static void test_read_ahead(void)
{
    int64_t blk = 1 << 22, got;
    unsigned char *m = pattern_buffer(blk, 22), *r = malloc((size_t)blk);
    tess_file *f;
    tess_type *own, *lanes;
    tess_stats s;
    CT_CHECK(r);
    /* no sieving: small interleaved reads go two-phase at the end */
    const char *kv[] = {"romio_ds_read", "disable", NULL};
    where("read ahead");
    unlink(g_path);
    CT_OK(ct_open(MPI_COMM_WORLD, g_path, TESS_RDWR | TESS_CREATE, kv, &f));
    CT_OK(tess_type_contiguous(blk, TESS_BYTE, &own));
    CT_OK(tess_file_set_view(f, me * blk, TESS_BYTE, own));
    CT_OK(tess_file_write_at_all(f, 0, m, blk, TESS_BYTE, &got));
    read_checked(f, r, m, blk); /* independent: the next read of this shape reads ahead */
    read_checked(f, r, m, blk);
    where("read ahead: a storage error");
    if (me == P - 1)
        tessi_fault_inject(TESSI_OP_READ, 0, 1, -EIO);
    CT_ALL_ERR(tess_file_read_at_all(f, 0, r, blk, TESS_BYTE, &got), TESS_ERR_IO, P - 1);
    tessi_fault_clear();
    read_checked(f, r, m, blk);
    read_checked(f, r, m, blk);
    where("read ahead: bad input on rank 0");
    if (me == P - 1)
        tessi_fault_inject(TESSI_OP_READ, 0, 1, -EIO);
    CT_ERR(tess_file_read_at_all(f, 0, me == 0 ? NULL : r, blk, TESS_BYTE, &got),
           me == P - 1 ? TESS_ERR_IO : TESS_ERR_ARG);
    tessi_fault_clear();
    read_checked(f, r, m, blk);
    where("read ahead: rank 0 changes its shape");
    read_checked(f, r, m, me == 0 ? blk / 2 : blk);
    read_checked(f, r, m, blk);
    read_checked(f, r, m, blk);
    where("read ahead: the group goes two-phase");
    /* rank 0 keeps its shape; the others read every 8-byte element of rank 0's block whose
     * index is theirs modulo P: interleaved, small, unsieved: two-phase */
    int64_t elems = blk / (8 * P);
    tess_type *vec;
    CT_OK(tess_type_contiguous(8, TESS_BYTE, &lanes));
    CT_OK(tess_type_hvector(elems, 1, 8 * P, lanes, &vec));
    CT_OK(tess_file_set_view(f, 8 * me, TESS_BYTE, me == 0 ? own : vec));
    tess_file_reset_stats(f);
    int64_t n = me == 0 ? blk : 8 * elems;
    memset(r, 0, (size_t)blk);
    CT_OK(tess_file_read_at_all(f, 0, r, n, TESS_BYTE, &got));
    CT_EQ(got, n);
    for (int64_t j = 0; j < n; j++) { /* rank 0's block: byte x is pat(0, x, 22) */
        int64_t x = me == 0 ? j : 8 * me + (j / 8) * 8 * P + j % 8;
        CT_EQ(r[j], (unsigned char)(x * 7 + 22));
    }
    CT_OK(tess_file_stats(f, &s));
    CT_CHECK(s.request_bytes > 0); /* it went two-phase */
    CT_OK(tess_file_close(f));
    tess_type_free(own);
    tess_type_free(lanes);
    tess_type_free(vec);
    free(m);
    free(r);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    P = ct_size();
    me = ct_rank();
    if (P < 2) {
        fprintf(stderr, "test_coll_edge needs at least 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    ct_path(g_path, sizeof g_path, "edge");
    /* the cost model's documented defaults, whatever profile this machine has */
    unsetenv("TESS_PROFILE");
    setenv("XDG_CONFIG_HOME", "/nonexistent/tessera-test-config", 1);
    test_open();
    test_no_data();
    test_bad_input();
    test_faults();
    test_independent_faults();
    test_independent_priced_shared();
    test_eof();
    test_independent_file();
    test_table1();
    test_auto();
    test_staging();
    test_atomic_and_info();
    test_read_ahead();
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) {
        unlink(g_path);
        printf("test_coll_edge: passed on %d ranks\n", P);
    }
    MPI_Finalize();
    return 0;
}
