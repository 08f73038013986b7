/*
 * test_file_oracle.c - every method's reads and writes checked against a brute-force byte map.
 *
 * Random file views (filetypes from the random-type oracle in tests/randtype.c: all
 * constructors, nested up to 3 levels, negative displacements, resized; byte maps computed from
 * the constructor definitions, never by Tessera's cursor) and random memory types (also
 * noncontiguous, overlapping for writes, negative displacements), random etypes, offsets,
 * counts and file sizes (reads past the end of file included). Each access goes through one of
 * the methods naive, sieve, list, auto, pmd with random buffer and batch hints, and its result is
 * compared with the byte map: the memory buffer (guards included) after a read, the whole file
 * after a write. Naive and list with noncontiguous memory take both of their paths here (a
 * call or iovec per piece, and staging through the buffer the window hints bound, 1 byte up). Non-monotonic filetypes must be refused by set_view. A second part runs large
 * regular views (thousands of regions) through each method.
 *
 * Usage: test_file_oracle [cases [seed]]
 */
#include "randtype.h"
#include "test_file_common.h"

#include <inttypes.h>

#define GUARD 64
#define NMETHODS 5

static const char *const method_names[NMETHODS] = {"naive", "sieve", "list", "auto", "pmd"};

typedef struct {
    tess_file *f[NMETHODS];
    int64_t rd_buffer, wr_buffer;
} handles;

/* (Re)open one handle per method with random window and batch hints, batches through io_uring
 * or one vectored call per region. */
static void open_handles(const char *path, rt_rng *r, handles *h)
{
    static const char *const bufs[] = {"1", "7", "64", "512", "4096", "1048576"};
    static const char *const pairs[] = {"1", "2", "5", "64", "1024"};
    const char *rd = bufs[rt_int(r, 0, 5)], *wr = bufs[rt_int(r, 0, 5)];
    const char *np = pairs[rt_int(r, 0, 4)], *uring = rt_chance(r, 50) ? "enable" : "disable";
    h->rd_buffer = atoll(rd);
    h->wr_buffer = atoll(wr);
    for (int m = 0; m < NMETHODS; m++) {
        if (h->f[m])
            CHECK_OK(tess_file_close(h->f[m]));
        const char *kv[] = {"tess_method", method_names[m], "ind_rd_buffer_size", rd,
                            "ind_wr_buffer_size", wr, "tess_list_max_pairs", np,
                            "tess_posix_uring", uring, NULL};
        CHECK_OK(tf_open(path, TESS_RDWR | TESS_CREATE, &h->f[m], kv));
    }
}

/* An etype of es bytes: a predefined type or a contiguous run of bytes. */
static tess_type *make_etype(int64_t es, rt_rng *r)
{
    if (es == 1)
        return TESS_BYTE;
    if (es == 4 && rt_chance(r, 50))
        return TESS_INT32;
    if (es == 8 && rt_chance(r, 50))
        return TESS_DOUBLE;
    tess_type *t;
    CHECK_OK(tess_type_contiguous(es, TESS_BYTE, &t));
    return t;
}

/* One access, described independently of Tessera. */
typedef struct {
    const rt_type *ft, *mt;
    int64_t disp, es, offset, count, total;
} access_desc;

static int64_t file_off(const access_desc *a, int64_t j)
{
    return rt_byte_at(a->ft, a->disp, a->offset * a->es + j);
}

static int64_t mem_off(const access_desc *a, int64_t j) { return rt_byte_at(a->mt, 0, j); }

/* Contiguous file regions of the access (file offsets increase: count the breaks). */
static int64_t file_regions(const access_desc *a)
{
    int64_t n = 0;
    for (int64_t j = 0; j < a->total; j++)
        n += j == 0 || file_off(a, j) != file_off(a, j - 1) + 1;
    return n;
}

static void fill_random(unsigned char *p, int64_t n, rt_rng *r)
{
    for (int64_t i = 0; i < n; i++)
        p[i] = (unsigned char)rt_u64(r);
}

static void check_stats(tess_file *f, const access_desc *a, int m, bool write, int64_t moved,
                        int64_t buffer)
{
    tess_stats s;
    CHECK_OK(tess_file_stats(f, &s));
    CHECK(s.desired_bytes == a->total);
    CHECK(s.accessed_bytes >= moved);
    CHECK(s.peak_buffer_bytes <= buffer);
    if (m == 0 || m == 2) /* naive and list move exactly the data */
        CHECK(s.accessed_bytes == moved);
    if (write)
        CHECK(s.regions == file_regions(a));
    else
        CHECK(s.regions <= file_regions(a));
    CHECK(s.io_ops == 0 || (s.min_access <= s.max_access && s.min_access >= 0));
}

/* Read through Tessera and compare the whole memory area (guards too) with the byte map. */
static void do_read(const char *path, tess_file *f, int m, const access_desc *a, rt_rng *r,
                    int64_t buffer)
{
    int64_t lo, hi, fsize, got = -1;
    unsigned char *file;
    rt_span(a->mt, a->count, &lo, &hi);
    int64_t n = hi - lo + 2 * GUARD;
    unsigned char *mem = malloc((size_t)n), *want = malloc((size_t)n);
    CHECK(mem && want);
    fill_random(mem, n, r);
    memcpy(want, mem, (size_t)n);
    fsize = tf_get(path, &file);
    int64_t expect = 0;
    for (int64_t j = 0; j < a->total; j++) {
        int64_t fo = file_off(a, j);
        want[GUARD - lo + mem_off(a, j)] = fo < fsize ? file[fo] : 0;
        expect += fo < fsize;
    }
    tess_file_reset_stats(f);
    CHECK_OK(tess_file_read_at(f, a->offset, mem + GUARD - lo, a->count, a->mt->type, &got));
    if (got != expect || memcmp(mem, want, (size_t)n) != 0) {
        fprintf(stderr, "read mismatch: method %s got %" PRId64 " expected %" PRId64
                " bytes\n filetype %s\n memtype %s\n disp %" PRId64 " es %" PRId64
                " offset %" PRId64 " count %" PRId64 " file size %" PRId64 "\n",
                method_names[m], got, expect, a->ft->recipe, a->mt->recipe, a->disp, a->es,
                a->offset, a->count, fsize);
        exit(1);
    }
    check_stats(f, a, m, false, got, buffer);
    free(file);
    free(mem);
    free(want);
}

/* Write through Tessera and compare the whole file with the byte map. */
static void do_write(const char *path, tess_file *f, int m, const access_desc *a, rt_rng *r,
                     int64_t buffer)
{
    int64_t lo, hi, put = -1;
    unsigned char *before, *after;
    rt_span(a->mt, a->count, &lo, &hi);
    unsigned char *mem = malloc((size_t)(hi - lo + 1));
    CHECK(mem);
    fill_random(mem, hi - lo, r);
    int64_t size0 = tf_get(path, &before), size1 = size0;
    for (int64_t j = 0; j < a->total; j++)
        if (file_off(a, j) + 1 > size1)
            size1 = file_off(a, j) + 1;
    unsigned char *want = calloc((size_t)size1 + 1, 1);
    CHECK(want);
    memcpy(want, before, (size_t)size0);
    for (int64_t j = 0; j < a->total; j++)
        want[file_off(a, j)] = mem[mem_off(a, j) - lo];
    tess_file_reset_stats(f);
    CHECK_OK(tess_file_write_at(f, a->offset, mem - lo, a->count, a->mt->type, &put));
    int64_t size2 = tf_get(path, &after);
    if (put != a->total || size2 != size1 || memcmp(after, want, (size_t)size1) != 0) {
        fprintf(stderr, "write mismatch: method %s wrote %" PRId64 " of %" PRId64
                ", size %" PRId64 " expected %" PRId64 "\n filetype %s\n memtype %s\n disp %"
                PRId64 " es %" PRId64 " offset %" PRId64 " count %" PRId64 "\n",
                method_names[m], put, a->total, size2, size1, a->ft->recipe, a->mt->recipe,
                a->disp, a->es, a->offset, a->count);
        exit(1);
    }
    check_stats(f, a, m, true, a->total, buffer);
    free(before);
    free(after);
    free(want);
    free(mem);
}

/* An etype size dividing the filetype's size. */
static int64_t pick_es(const rt_type *ft, rt_rng *r)
{
    static const int64_t cand[] = {8, 4, 3, 2};
    int64_t es = 1;
    for (int i = 0; i < 4; i++)
        if (ft->nbytes % cand[i] == 0 && rt_chance(r, 40))
            es = cand[i];
    return es;
}

/* Random file contents reaching somewhat before and after the access's last byte. */
static void random_file(const char *path, const access_desc *a, rt_rng *r)
{
    int64_t reach = a->total ? file_off(a, a->total - 1) + 1 : 64;
    int64_t len = rt_chance(r, 30) ? rt_int(r, 0, reach) : reach + rt_int(r, 0, 256);
    unsigned char *data = malloc((size_t)len + 1);
    CHECK(data);
    fill_random(data, len, r);
    tf_put(path, data, len);
    free(data);
}

/* One random case; returns 1 if it ran an access, 0 if the view was (rightly) refused. */
static int one_case(const char *path, handles *h, rt_rng *r)
{
    unsigned fl = RT_NO_MPI | RT_NO_EMPTY | (rt_chance(r, 85) ? RT_MONOTONIC : 0);
    rt_type *ft = rt_random_limits(r, (int)rt_int(r, 1, 3), fl, 512, 4096);
    if (!ft) {
        fprintf(stderr, "rt_random: %s\n", rt_error());
        exit(1);
    }
    access_desc a = {.ft = ft, .es = pick_es(ft, r)};
    a.disp = (ft->true_lb < 0 ? -ft->true_lb : 0) + rt_int(r, 0, 64);
    if (rt_chance(r, 5))
        a.disp = -ft->true_lb - 1;
    int m = (int)rt_int(r, 0, NMETHODS - 1);
    tess_file *f = h->f[m];
    tess_type *et = make_etype(a.es, r);
    int rc = tess_file_set_view(f, a.disp, et, ft->type);
    bool legal = ft->monotonic && a.disp >= 0 && a.disp + ft->true_lb >= 0;
    tess_type_free(et);
    if (!legal) {
        if (rc != (a.disp < 0 ? TESS_ERR_ARG : TESS_ERR_VIEW)) {
            fprintf(stderr, "set_view of an illegal view returned %d\n filetype %s disp %"
                    PRId64 "\n", rc, ft->recipe, a.disp);
            exit(1);
        }
        rt_free(ft);
        return 0;
    }
    if (rc) {
        fprintf(stderr, "set_view of a legal view failed: %s\n filetype %s disp %" PRId64 "\n",
                tess_last_error(), ft->recipe, a.disp);
        exit(1);
    }
    rt_type *mt = rt_random_limits(r, (int)rt_int(r, 0, 3), RT_NO_MPI | (rt_chance(r, 30) ?
                                   RT_MONOTONIC : 0), 256, 2048);
    CHECK(mt);
    a.mt = mt;
    a.count = rt_int(r, 0, 4);
    while (mt->nbytes && (a.count * mt->nbytes) % a.es)
        a.count++;
    a.total = a.count * mt->nbytes;
    a.offset = rt_int(r, 0, 3 * ft->nbytes / a.es);
    random_file(path, &a, r);
    bool write = rt_chance(r, 50) || rt_overlaps(mt, a.count);
    if (write)
        do_write(path, f, m, &a, r, h->wr_buffer);
    else
        do_read(path, f, m, &a, r, h->rd_buffer);
    rt_free(mt);
    rt_free(ft);
    return 1;
}

/* Large regular views: a vector filetype of many small regions, memory a vector too. Small
 * windows, then windows whose data outgrows the relay of the both-noncontiguous move
 * (TESSI_STAGE_TMP, 64 KiB), so its pieces end inside regions of both sides. */
static void large_cases(const char *path, rt_rng *r)
{
    enum { N = 40000 };
    static const char *const windows[][2] = {{"4000", "3000"}, {"1048576", "200000"}};
    tess_type *v, *ft, *mt;
    CHECK_OK(tess_type_vector(N, 3, 7, TESS_BYTE, &v)); /* tiles every 7 N bytes: */
    CHECK_OK(tess_type_resized(v, 0, 7 * N, &ft));       /* block b of any tile at 7 b */
    tess_type_free(v);
    CHECK_OK(tess_type_vector(N * 3 / 5, 5, 6, TESS_BYTE, &mt));
    unsigned char *mem = malloc(N * 7), *back = malloc(N * 7), *file;
    CHECK(mem && back);
    for (int c = 0; c < 2 * NMETHODS; c++) {
        int m = c % NMETHODS;
        tess_file *f;
        const char *kv[] = {"tess_method", method_names[m], "ind_rd_buffer_size",
                            windows[c / NMETHODS][0], "ind_wr_buffer_size",
                            windows[c / NMETHODS][1], NULL};
        fill_random(mem, N * 7, r);
        tf_put(path, "", 0);
        CHECK_OK(tf_open(path, TESS_RDWR, &f, kv));
        CHECK_OK(tess_file_set_view(f, 11, TESS_BYTE, ft));
        int64_t n;
        CHECK_OK(tess_file_write_at(f, 5, mem, 1, mt, &n));
        CHECK(n == N * 3);
        int64_t size = tf_get(path, &file);
        CHECK(size == 11 + (int64_t)(N * 3 + 5 - 1) / 3 * 7 + (N * 3 + 5 - 1) % 3 + 1);
        for (int64_t j = 0; j < N * 3; j++) {
            int64_t k = 5 + j, fo = 11 + k / 3 * 7 + k % 3, mo = j / 5 * 6 + j % 5;
            CHECK(file[fo] == mem[mo]);
        }
        tess_stats s;
        CHECK_OK(tess_file_stats(f, &s));
        CHECK(s.regions == N + 1); /* blocks 1 .. N + 1 of the view */
        memset(back, 0, N * 7);
        tess_file_reset_stats(f);
        CHECK_OK(tess_file_read_at(f, 5, back, 1, mt, &n));
        CHECK(n == N * 3);
        for (int64_t j = 0; j < N * 3; j++)
            CHECK(back[j / 5 * 6 + j % 5] == mem[j / 5 * 6 + j % 5]);
        CHECK_OK(tess_file_stats(f, &s));
        CHECK(s.regions == N + 1);
        CHECK_OK(tess_file_close(f));
        free(file);
    }
    tess_type_free(ft);
    tess_type_free(mt);
    free(mem);
    free(back);
}

int main(int argc, char **argv)
{
    int64_t cases = argc > 1 ? atoll(argv[1]) : 3000;
    uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 0) : 20240601;
    char path[64];
    tf_path(path, sizeof path, "oracle");
    rt_rng r;
    rt_seed(&r, seed);
    handles h = {.f = {NULL}};
    int64_t ran = 0;
    for (int64_t c = 0; c < cases; c++) {
        if (c % 100 == 0)
            open_handles(path, &r, &h);
        ran += one_case(path, &h, &r);
    }
    for (int m = 0; m < NMETHODS; m++)
        CHECK_OK(tess_file_close(h.f[m]));
    large_cases(path, &r);
    unlink(path);
    printf("test_file_oracle: %" PRId64 " accesses and %" PRId64 " refused views checked "
           "(seed %" PRIu64 ")\n", ran, cases - ran, seed);
    return 0;
}
