/*
 * test_rados_oracle.c - every method on the RADOS driver against a brute-force byte map.
 *
 * Random legal views (filetypes from tests/randtype.c, monotonic, with the byte maps computed
 * from the constructor definitions), random memory types, offsets and counts, random striping
 * (units of 7 bytes to 4 KiB, 1 to 4 objects per row, 1 to 3 units per object so that object
 * sets change often). Writes go through naive, list, sieve (lock-free read-modify-write) and
 * datatype (compound requests or the OSDs' Lua program); after each the whole file, read
 * straight from the RADOS objects by the oracle's own placement (rados_common.h), must equal
 * the byte map. Reads
 * through every method must give the byte map's bytes (zeros past the end of file) and leave
 * the rest of the memory untouched (memory types that overlap are left out: MPI makes them
 * erroneous). A large regular view follows: datatype I/O through compound requests and through
 * the OSD program, each checked to be the path taken.
 *
 * Usage: test_rados_oracle [cases [seed]]
 */
#include "randtype.h"
#include "rados/rados_common.h"

#define NMETHODS 4
#define GUARD 32

static const char *const methods[NMETHODS] = {"naive", "list", "sieve", "datatype"};

typedef struct {
    const rt_type *ft, *mt;
    int64_t disp, offset, count, total;
} acc;

static int64_t file_off(const acc *a, int64_t j)
{
    return rt_byte_at(a->ft, a->disp, a->offset + j);
}

static int64_t mem_off(const acc *a, int64_t j) { return rt_byte_at(a->mt, 0, j); }

static void fill(unsigned char *p, int64_t n, rt_rng *r)
{
    for (int64_t i = 0; i < n; i++)
        p[i] = (unsigned char)rt_u64(r);
}

/* The expected file: map[0 .. *size). */
typedef struct {
    unsigned char *map;
    int64_t size, cap;
} model;

static void model_grow(model *m, int64_t size)
{
    if (size > m->cap) {
        m->map = realloc(m->map, (size_t)size);
        CHECK(m->map);
        memset(m->map + m->cap, 0, (size_t)(size - m->cap));
        m->cap = size;
    }
    if (size > m->size)
        m->size = size;
}

static void check_image(const char *path, const model *m)
{
    unsigned char *img = malloc((size_t)m->size + 1);
    CHECK(img);
    rt_image(path, img, m->size);
    for (int64_t i = 0; i < m->size; i++) {
        if (img[i] != m->map[i]) {
            fprintf(stderr, "file byte %" PRId64 " of %" PRId64 " is %u, expected %u\n", i,
                    m->size, img[i], m->map[i]);
            exit(1);
        }
    }
    free(img);
}

static void one_case(rt_rng *r, int index)
{
    static const char *const units[] = {"7", "64", "100", "512", "4096"};
    char path[256], unit[16], factor[8], objsize[24], pairs[8];
    snprintf(path, sizeof path, "rados:tessera/oracle.%ld.%d", (long)getpid(), index);
    snprintf(unit, sizeof unit, "%s", units[rt_int(r, 0, 4)]);
    snprintf(factor, sizeof factor, "%d", (int)rt_int(r, 1, 4));
    snprintf(objsize, sizeof objsize, "%lld", atoll(unit) * rt_int(r, 1, 3));
    snprintf(pairs, sizeof pairs, "%d", (int)(rt_chance(r, 50) ? 64 : rt_int(r, 1, 4)));
    tess_file *f[NMETHODS];
    for (int m = 0; m < NMETHODS; m++) {
        const char *kv[] = {"tess_method", methods[m], "striping_unit", unit,
                            "striping_factor", factor, "tess_rados_object_size", objsize,
                            "tess_list_max_pairs", pairs, "ind_rd_buffer_size", "256",
                            "ind_wr_buffer_size", "300", NULL};
        CHECK_OK(rt_open(path, TESS_RDWR | TESS_CREATE, &f[m], kv));
    }
    model md = {0};
    /* initial contents, written contiguously */
    int64_t init = rt_int(r, 0, 3000);
    model_grow(&md, init);
    fill(md.map, init, r);
    int64_t moved;
    CHECK_OK(tess_file_write_at(f[0], 0, md.map, init, TESS_BYTE, &moved));
    CHECK(moved == init);
    CHECK_OK(tess_file_sync(f[0])); /* the size other handles see is published by sync */
    for (int step = 0; step < 6; step++) {
        rt_type *ft = rt_random_limits(r, (int)rt_int(r, 1, 3),
                                       RT_NO_MPI | RT_NO_EMPTY | RT_MONOTONIC, 256, 2048);
        rt_type *mt = rt_random_limits(r, (int)rt_int(r, 0, 2), RT_NO_MPI, 128, 1024);
        CHECK(ft && mt);
        acc a = {.ft = ft, .mt = mt};
        a.disp = (ft->true_lb < 0 ? -ft->true_lb : 0) + rt_int(r, 0, 50);
        a.count = rt_int(r, 1, 4);
        a.total = a.count * mt->nbytes;
        a.offset = rt_int(r, 0, 2 * ft->nbytes);
        int m = (int)rt_int(r, 0, NMETHODS - 1);
        if (rt_overlaps(mt, a.count)) {
            /* MPI makes overlapping memory erroneous for reads too; the driver's parallel
             * requests leave such bytes in no defined order */
            rt_free(ft);
            rt_free(mt);
            continue;
        }
        bool write = rt_chance(r, 50);
        for (int k = 0; k < NMETHODS; k++)
            CHECK_OK(tess_file_set_view(f[k], a.disp, TESS_BYTE, ft->type));
        int64_t lo, hi;
        rt_span(mt, a.count, &lo, &hi);
        int64_t n = hi - lo + 2 * GUARD;
        unsigned char *mem = malloc((size_t)n + 1), *want = malloc((size_t)n + 1);
        CHECK(mem && want);
        unsigned char *base = mem + GUARD - lo;
        fill(mem, n, r);
        memcpy(want, mem, (size_t)n);
        if (write) {
            int64_t end = a.total ? file_off(&a, a.total - 1) + 1 : 0;
            model_grow(&md, end);
            for (int64_t j = 0; j < a.total; j++)
                md.map[file_off(&a, j)] = base[mem_off(&a, j)];
            int rc = tess_file_write_at(f[m], a.offset, base, a.count, mt->type, &moved);
            if (rc) {
                fprintf(stderr, "%s write failed: %s\n filetype %s\n", methods[m],
                        tess_last_error(), ft->recipe);
                exit(1);
            }
            CHECK(moved == a.total);
            CHECK_OK(tess_file_sync(f[m]));
            check_image(path, &md);
        } else {
            int64_t expect = 0;
            for (int64_t j = 0; j < a.total; j++) {
                int64_t fo = file_off(&a, j);
                unsigned char *w = want + GUARD - lo + mem_off(&a, j);
                *w = fo < md.size ? md.map[fo] : 0;
                if (fo < md.size)
                    expect = j + 1;
            }
            int rc = tess_file_read_at(f[m], a.offset, base, a.count, mt->type, &moved);
            if (rc) {
                fprintf(stderr, "%s read failed: %s\n filetype %s\n", methods[m],
                        tess_last_error(), ft->recipe);
                exit(1);
            }
            if (moved != expect || memcmp(mem, want, (size_t)n) != 0) {
                fprintf(stderr, "%s read: %" PRId64 " bytes (expected %" PRId64 "), memory %s"
                        "\n filetype %s disp %" PRId64 " offset %" PRId64 " unit %s factor %s"
                        " objsize %s\n", methods[m], moved, expect,
                        memcmp(mem, want, (size_t)n) ? "differs" : "equal", ft->recipe, a.disp,
                        a.offset, unit, factor, objsize);
                exit(1);
            }
        }
        if (m == 3 && a.total > 0) {
            tess_stats s;
            CHECK_OK(tess_file_stats(f[m], &s));
            CHECK(s.method_accesses[TESS_METHOD_DATATYPE] > 0);
        }
        free(mem);
        free(want);
        rt_free(ft);
        rt_free(mt);
    }
    for (int m = 0; m < NMETHODS; m++)
        CHECK_OK(tess_file_close(f[m]));
    CHECK_OK(rt_delete(path));
    free(md.map);
}

/* Large regular views: a 2-D subarray of 4-byte elements (256 rows of 16 bytes, 2 KiB apart,
 * over 4 objects of 64 KiB units: 64 regions in each object). Every method writes it (the file
 * read straight from the objects must equal the byte map), every method reads it back. Datatype
 * I/O sends one request per object touched: a compound request of the object's extents at
 * tess_list_max_pairs 64 (no program runs on the OSDs), the Lua program at 16; and a call
 * whose objects take both. */
static void large_case(void)
{
    static const struct {
        const char *method, *pairs;
        int64_t programs; /* requests that run the OSD program, per write or read */
    } v[] = {{"naive", "64", 0}, {"list", "64", 0}, {"sieve", "64", 0},
             {"datatype", "64", 0}, {"datatype", "16", 4}};
    enum { NV = sizeof v / sizeof v[0] };
    char path[256];
    rt_name(path, sizeof path, "large");
    int64_t sizes[2] = {512, 512}, sub[2] = {256, 4}, starts[2] = {100, 60};
    tess_type *ft;
    CHECK_OK(tess_type_subarray(2, sizes, sub, starts, TESS_ORDER_C, TESS_INT32, &ft));
    int64_t total = 256 * 4 * 4, end = ((100 + 255) * 512 + 64) * 4;
    char *data = malloc((size_t)total), *back = malloc((size_t)total);
    unsigned char *map = calloc(1, (size_t)end), *img = malloc((size_t)end);
    CHECK(data && back && map && img);
    for (int m = 0; m < NV; m++) {
        const char *kv[] = {"tess_method", v[m].method, "tess_list_max_pairs", v[m].pairs,
                            "striping_unit", "65536", "striping_factor", "4", NULL};
        tess_file *f;
        CHECK_OK(rt_open(path, TESS_RDWR | TESS_CREATE, &f, kv));
        CHECK_OK(tess_file_set_view(f, 0, TESS_INT32, ft));
        for (int64_t i = 0; i < total; i++) {
            data[i] = (char)(i * 31 + m);
            map[((100 + i / 16) * 512 + 60) * 4 + i % 16] = (unsigned char)data[i];
        }
        int64_t moved;
        tess_file_reset_stats(f);
        CHECK_OK(tess_file_write_at(f, 0, data, total / 4, TESS_INT32, &moved));
        CHECK(moved == total);
        tess_stats s;
        CHECK_OK(tess_file_stats(f, &s));
        CHECK(s.server_programs == v[m].programs);
        if (strcmp(v[m].method, "datatype") == 0)
            CHECK(s.server_requests <= 4);
        CHECK_OK(tess_file_sync(f));
        rt_image(path, img, end);
        CHECK(memcmp(img, map, (size_t)end) == 0);
        for (int k = 0; k < NV; k++) {
            const char *kv2[] = {"tess_method", v[k].method, "tess_list_max_pairs", v[k].pairs,
                                 NULL};
            tess_file *g;
            CHECK_OK(rt_open(path, TESS_RDONLY, &g, kv2));
            CHECK_OK(tess_file_set_view(g, 0, TESS_INT32, ft));
            memset(back, 0, (size_t)total);
            CHECK_OK(tess_file_read_at(g, 0, back, total / 4, TESS_INT32, &moved));
            CHECK(moved == total && memcmp(back, data, (size_t)total) == 0);
            CHECK_OK(tess_file_stats(g, &s));
            CHECK(s.server_programs == v[k].programs);
            CHECK_OK(tess_file_close(g));
        }
        CHECK_OK(tess_file_close(f));
    }
    /* a call whose objects take both kinds of request: the first 100 rows are 28, 32, 32 and 8
     * regions in objects 3, 0, 1, 2; at 16 pairs three programs and one compound request */
    const char *kv[] = {"tess_method", "datatype", "tess_list_max_pairs", "16", NULL};
    tess_file *f;
    tess_stats s;
    int64_t moved, part = 100 * 16;
    CHECK_OK(rt_open(path, TESS_RDWR, &f, kv));
    CHECK_OK(tess_file_set_view(f, 0, TESS_INT32, ft));
    for (int64_t i = 0; i < part; i++) {
        data[i] = (char)(i * 7 + 3);
        map[((100 + i / 16) * 512 + 60) * 4 + i % 16] = (unsigned char)data[i];
    }
    for (int w = 1; w >= 0; w--) {
        tess_file_reset_stats(f);
        if (w) {
            CHECK_OK(tess_file_write_at(f, 0, data, part / 4, TESS_INT32, &moved));
            CHECK_OK(tess_file_sync(f));
            rt_image(path, img, end);
            CHECK(memcmp(img, map, (size_t)end) == 0);
        } else {
            memset(back, 0, (size_t)total);
            CHECK_OK(tess_file_read_at(f, 0, back, part / 4, TESS_INT32, &moved));
            CHECK(memcmp(back, data, (size_t)part) == 0);
        }
        CHECK(moved == part);
        CHECK_OK(tess_file_stats(f, &s));
        CHECK(s.server_programs == 3 && s.server_requests >= 4);
    }
    CHECK_OK(tess_file_close(f));
    CHECK_OK(rt_delete(path));
    tess_type_free(ft);
    free(data);
    free(back);
    free(map);
    free(img);
}

/* A read whose program replies are many times the program's reply chunk (64 KiB): the tile
 * reader's shape, rows of 3072 bytes 7596 apart (3-byte pixels) over 64 KiB units, about 300 KiB
 * per object. Written by list I/O (no program), read back by the program at an offset that
 * starts inside a row; the bytes must equal the byte map's. Then the file grows to two
 * instances of the filetype without a write, and the program reads both: the second one lies
 * past the end of every object, so the OSDs fill whole covers with zeros. */
static void chunked_reply_case(void)
{
    char path[256];
    rt_name(path, sizeof path, "chunked");
    tess_type *px, *ft;
    CHECK_OK(tess_type_contiguous(3, TESS_BYTE, &px));
    int64_t sizes[2] = {400, 2532}, sub[2] = {400, 1024}, starts[2] = {0, 700};
    CHECK_OK(tess_type_subarray(2, sizes, sub, starts, TESS_ORDER_C, px, &ft));
    int64_t total = 400 * 3072, end = 400 * 7596, skip = 999;
    char *data = malloc((size_t)total), *back = malloc((size_t)total);
    unsigned char *map = calloc(1, (size_t)end), *img = malloc((size_t)end);
    CHECK(data && back && map && img);
    for (int64_t i = 0; i < total; i++) {
        data[i] = (char)(i * 13 + i / 251);
        map[(i / 3072) * 7596 + 2100 + i % 3072] = (unsigned char)data[i];
    }
    const char *kw[] = {"tess_method", "list", "striping_unit", "65536", "striping_factor", "4",
                        NULL};
    const char *kr[] = {"tess_method", "datatype", "tess_list_max_pairs", "16", NULL};
    tess_file *f;
    tess_stats s;
    int64_t moved;
    CHECK_OK(rt_open(path, TESS_RDWR | TESS_CREATE, &f, kw));
    CHECK_OK(tess_file_set_view(f, 0, px, ft));
    CHECK_OK(tess_file_write_at(f, 0, data, total, TESS_BYTE, &moved));
    CHECK(moved == total);
    CHECK_OK(tess_file_set_size(f, 2 * end));
    CHECK_OK(tess_file_sync(f));
    CHECK_OK(tess_file_close(f));
    rt_image(path, img, end);
    CHECK(memcmp(img, map, (size_t)end) == 0);
    CHECK_OK(rt_open(path, TESS_RDONLY, &f, kr));
    CHECK_OK(tess_file_set_view(f, 0, px, ft));
    memset(back, 0, (size_t)total);
    tess_file_reset_stats(f);
    CHECK_OK(tess_file_read_at(f, skip / 3, back, total - skip, TESS_BYTE, &moved));
    CHECK(moved == total - skip && memcmp(back, data + skip, (size_t)(total - skip)) == 0);
    CHECK_OK(tess_file_stats(f, &s));
    CHECK(s.server_programs == 4);
    char *two = malloc((size_t)(2 * total));
    CHECK(two);
    memset(two, 1, (size_t)(2 * total));
    CHECK_OK(tess_file_read_at(f, 0, two, 2 * total, TESS_BYTE, &moved));
    CHECK(moved == 2 * total && memcmp(two, data, (size_t)total) == 0);
    for (int64_t i = total; i < 2 * total; i++)
        CHECK(two[i] == 0);
    free(two);
    CHECK_OK(tess_file_close(f));
    CHECK_OK(rt_delete(path));
    tess_type_free(ft);
    tess_type_free(px);
    free(data);
    free(back);
    free(map);
    free(img);
}

int main(int argc, char **argv)
{
    rt_conf();
    int cases = argc > 1 ? atoi(argv[1]) : 40;
    rt_rng r;
    rt_seed(&r, argc > 2 ? strtoull(argv[2], NULL, 10) : 1);
    for (int i = 0; i < cases; i++)
        one_case(&r, i);
    large_case();
    chunked_reply_case();
    printf("test_rados_oracle: %d random cases, the large views and the chunked reply passed\n",
           cases);
    return 0;
}
