/*
 * test_pmd_method.c - the pmd method and `auto` (issue 4), against independent oracles:
 *
 *  1. oracle: pmd and auto reads and writes on random views and random memory types, each
 *     file handle priced by a random cost model (a profile written here, so the plans mix
 *     direct, list and sieved groups), checked against a byte map built by brute force
 *     (the whole memory area after a read, the whole file after a write);
 *  2. counters: with contiguous memory, the Table I counters of every method (naive, list,
 *     sieve, pmd, auto) equal the method's own estimate (of the regions computed by brute
 *     force): calls, bytes moved, peak buffer, locks; and auto runs the candidate with the
 *     lowest estimate (ties to naive, list, sieve, pmd), under the romio_ds_* constraints;
 *     pmd takes the cheapest of its plan, every region alone and classic sieving (its way);
 *  3. a hand-made view with a model whose costs are exact in binary, groups worked out by hand.
 *
 * auto's bookkeeping (sampling, reuse, the decision log, hints) and concurrent writers are
 * test_pmd_auto's.
 *
 * Usage: test_pmd_method [cases [seed]]
 */
#include "pmd_test_common.h"

#include <inttypes.h>

#define GUARD 64

/* ------------------------------------------------------------------ accesses */

/* One access, described independently of Tessera. */
typedef struct {
    const rt_type *ft, *mt;
    int64_t disp, offset, count, total;
} access_desc;

/* The byte, as the generator describes types: contiguous memory of `count` bytes. */
static int64_t byte_offset0 = 0;
static const rt_type byte_rt = {.type = NULL, .offsets = &byte_offset0, .nbytes = 1, .lb = 0,
                                .extent = 1, .true_lb = 0, .true_ub = 1, .nregions = 1,
                                .monotonic = 1, .recipe = "byte"};

static int64_t file_off(const access_desc *a, int64_t j)
{
    return rt_byte_at(a->ft, a->disp, a->offset + j);
}

static int64_t mem_off(const access_desc *a, int64_t j) { return rt_byte_at(a->mt, 0, j); }

/* The merged file regions of the access (malloc'ed), by brute force over its bytes. */
static int64_t file_regions(const access_desc *a, tess_region **out)
{
    tess_region *r = malloc(sizeof *r * (size_t)(a->total + 1));
    int64_t n = 0;
    CHECK(r);
    for (int64_t j = 0; j < a->total; j++) {
        int64_t fo = file_off(a, j);
        if (n > 0 && r[n - 1].off + r[n - 1].len == fo)
            r[n - 1].len++;
        else
            r[n++] = (tess_region){.off = fo, .len = 1};
    }
    *out = r;
    return n;
}

static void fill_random(unsigned char *p, int64_t n, rt_rng *r)
{
    for (int64_t i = 0; i < n; i++)
        p[i] = (unsigned char)rt_u64(r);
}

/* Read through f and compare the whole memory area (guards too) with the byte map. */
static void check_read(tess_file *f, const char *method, const access_desc *a, rt_rng *r)
{
    int64_t lo, hi, got = -1;
    unsigned char *file;
    rt_span(a->mt, a->count, &lo, &hi);
    int64_t n = hi - lo + 2 * GUARD;
    unsigned char *mem = malloc((size_t)n), *want = malloc((size_t)n);
    CHECK(mem && want);
    fill_random(mem, n, r);
    memcpy(want, mem, (size_t)n);
    int64_t fsize = tf_get(pt_path, &file), expect = 0;
    for (int64_t j = 0; j < a->total; j++) {
        int64_t fo = file_off(a, j);
        want[GUARD - lo + mem_off(a, j)] = fo < fsize ? file[fo] : 0;
        expect += fo < fsize;
    }
    CHECK_OK(tess_file_read_at(f, a->offset, mem + GUARD - lo, a->count, a->mt->type, &got));
    if (got != expect || memcmp(mem, want, (size_t)n) != 0) {
        fprintf(stderr, "read mismatch: %s got %" PRId64 " expected %" PRId64 " bytes\n"
                " filetype %s\n memtype %s\n disp %" PRId64 " offset %" PRId64 " count %"
                PRId64 " file size %" PRId64 "\n", method, got, expect, a->ft->recipe,
                a->mt->recipe, a->disp, a->offset, a->count, fsize);
        exit(1);
    }
    free(file);
    free(mem);
    free(want);
}

/* Write through f and compare the whole file with the byte map. */
static void check_write(tess_file *f, const char *method, const access_desc *a, rt_rng *r)
{
    int64_t lo, hi, put = -1;
    unsigned char *before, *after;
    rt_span(a->mt, a->count, &lo, &hi);
    unsigned char *mem = malloc((size_t)(hi - lo + 1));
    CHECK(mem);
    fill_random(mem, hi - lo, r);
    int64_t size0 = tf_get(pt_path, &before), size1 = size0;
    for (int64_t j = 0; j < a->total; j++)
        if (file_off(a, j) + 1 > size1)
            size1 = file_off(a, j) + 1;
    unsigned char *want = calloc((size_t)size1 + 1, 1);
    CHECK(want);
    memcpy(want, before, (size_t)size0);
    for (int64_t j = 0; j < a->total; j++)
        want[file_off(a, j)] = mem[mem_off(a, j) - lo];
    CHECK_OK(tess_file_write_at(f, a->offset, mem - lo, a->count, a->mt->type, &put));
    int64_t size2 = tf_get(pt_path, &after);
    if (put != a->total || size2 != size1 || memcmp(after, want, (size_t)size1) != 0) {
        fprintf(stderr, "write mismatch: %s wrote %" PRId64 " of %" PRId64 ", size %" PRId64
                " expected %" PRId64 "\n filetype %s\n memtype %s\n disp %" PRId64 " offset %"
                PRId64 " count %" PRId64 "\n", method, put, a->total, size2, size1,
                a->ft->recipe, a->mt->recipe, a->disp, a->offset, a->count);
        exit(1);
    }
    free(before);
    free(after);
    free(want);
    free(mem);
}

/* A random legal view of ft at a random displacement; the access's offset and count. */
static void random_access(rt_rng *r, access_desc *a, const rt_type *ft, const rt_type *mt)
{
    *a = (access_desc){.ft = ft, .mt = mt};
    a->disp = (ft->true_lb < 0 ? -ft->true_lb : 0) + rt_int(r, 0, 64);
    a->count = rt_int(r, 0, 4);
    a->total = a->count * mt->nbytes;
    a->offset = rt_int(r, 0, 3 * ft->nbytes);
}

/* A file reaching around the access's last byte (shorter than it in some cases). */
static void random_file(const access_desc *a, rt_rng *r, bool cover)
{
    int64_t reach = a->total ? file_off(a, a->total - 1) + 1 : 64;
    int64_t len = !cover && rt_chance(r, 30) ? rt_int(r, 0, reach) : reach + rt_int(r, 0, 256);
    unsigned char *data = malloc((size_t)len + 1);
    CHECK(data);
    fill_random(data, len, r);
    tf_put(pt_path, data, len);
    free(data);
}

/* ------------------------------------------------------------------ 1: oracle */

static void oracle(int64_t cases, rt_rng *r)
{
    static const char *const methods[] = {"pmd", "auto"};
    for (int64_t c = 0; c < cases; c++) {
        tessi_model m = pt_random_model(r, rt_chance(r, 90));
        pt_save_profile(&m);
        rt_type *ft = rt_random_limits(r, (int)rt_int(r, 1, 3),
                                       RT_NO_MPI | RT_NO_EMPTY | RT_MONOTONIC, 512, 4096);
        rt_type *mt = rt_random_limits(r, (int)rt_int(r, 0, 3), RT_NO_MPI |
                                       (rt_chance(r, 30) ? RT_MONOTONIC : 0), 256, 2048);
        CHECK(ft && mt);
        access_desc a;
        random_access(r, &a, ft, mt);
        random_file(&a, r, false);
        const char *method = methods[c % 2];
        pt_hints h = pt_random_hints(r, method);
        tess_file *f;
        CHECK_OK(pt_open(&h, TESS_RDWR, &f));
        CHECK_OK(tess_file_set_view(f, a.disp, TESS_BYTE, ft->type));
        bool write = rt_chance(r, 50) || rt_overlaps(mt, a.count);
        if (write)
            check_write(f, method, &a, r);
        else
            check_read(f, method, &a, r);
        tess_stats s;
        CHECK_OK(tess_file_stats(f, &s));
        CHECK(s.peak_buffer_bytes <= atoll(write ? h.wr : h.rd));
        CHECK(s.model_defaults == 0);
        if (c % 2 == 0)
            CHECK(s.last_method == TESS_METHOD_PMD && s.auto_decisions == 0);
        else
            CHECK(s.auto_decisions == 1 && s.method_accesses[s.last_method] == 1);
        /* more accesses of the same shape (a tile or two on: the remembered plan and decision
         * are replayed, moved), in either direction, the file rewritten in between */
        for (int again = (int)rt_int(r, 0, 3); again > 0; again--) {
            access_desc b = a;
            b.offset += ft->nbytes * rt_int(r, 0, 2);
            random_file(&b, r, false);
            if (rt_chance(r, 50) || rt_overlaps(mt, b.count))
                check_write(f, method, &b, r);
            else
                check_read(f, method, &b, r);
        }
        CHECK_OK(tess_file_close(f));
        rt_free(ft);
        rt_free(mt);
    }
}

/* ------------------------------------------------------------------ 2: counters */

/* pmd's ways (pmd.c), in its order of preference on a tie. */
enum { WAY_ALONE, WAY_PLAN, WAY_CLASSIC, NWAYS };

/*
 * The way pmd takes (pmd.c): the cheapest of its plan (the groups g[0..ng)), every region alone
 * (one run of them all, LIST where the storage batches and that is cheaper, else DIRECT) and
 * classic sieving (e->sieve), a later way replacing an earlier one only when cheaper by more
 * than rounding. Its estimate must be that way's price. *pairs: the lock pairs of its write by
 * a handle alone on its file: the plan's SIEVE groups with holes (its read-modify-writes; plain
 * writes are unlocked), sieve's windows with holes, none when every region moves alone.
 */
static int pmd_way(const tessi_model *m, bool write, const tessi_group *g, int64_t ng,
                   const tess_region *reg, int64_t nreg, const method_costs *e, int64_t *pairs)
{
    tessi_cost plan = {0}, direct = {0}, list = {0};
    int64_t data = 0, plan_pairs = 0;
    for (int64_t k = 0; k < ng; k++) {
        tessi_group_cost(m, write, &g[k], &plan);
        plan_pairs += g[k].kind == TESSI_GROUP_SIEVE && g[k].data < g[k].len;
    }
    for (int64_t i = 0; i < nreg; i++)
        data += reg[i].len;
    tessi_group run = {.kind = TESSI_GROUP_DIRECT, .count = nreg, .data = data};
    tessi_group_cost(m, write, &run, &direct);
    run.kind = TESSI_GROUP_LIST;
    tessi_group_cost(m, write, &run, &list);
    const tessi_cost *alone = m->batched && list.seconds < direct.seconds ? &list : &direct;
    int way = WAY_ALONE;
    double best = alone->seconds, margin = 1.0 - 1e-9;
    if (plan.seconds < best * margin) {
        way = WAY_PLAN;
        best = plan.seconds;
    }
    if (e->sieve.seconds < best * margin)
        way = WAY_CLASSIC;
    const tessi_cost *want = way == WAY_PLAN ? &plan : way == WAY_ALONE ? alone : &e->sieve;
    CHECK(e->pmd.seconds == want->seconds && e->pmd.calls == want->calls &&
          e->pmd.bytes == want->bytes && e->pmd.locks == want->locks);
    *pairs = way == WAY_PLAN ? plan_pairs : way == WAY_ALONE ? 0 : e->sieve.locks;
    return way;
}

static const tessi_cost *cost_of(const method_costs *e, int id)
{
    return id == TESS_METHOD_NAIVE ? &e->naive : id == TESS_METHOD_LIST ? &e->list
         : id == TESS_METHOD_SIEVE ? &e->sieve : &e->pmd;
}

static void counters(int64_t cases, rt_rng *r)
{
    static const char *const methods[] = {"naive", "list", "sieve", "pmd", "auto"};
    static const char *const ds_names[] = {NULL, "enable", "disable"};
    int64_t chosen[TESS_METHOD_MAX] = {0}, kinds[3] = {0}, ways[NWAYS] = {0};
    for (int64_t c = 0; c < cases; c++) {
        tessi_model saved = pt_random_model(r, true);
        saved.batched = true; /* as the driver is (unless tess_posix_uring = disable) */
        pt_save_profile(&saved);
        rt_type *ft = rt_random_limits(r, (int)rt_int(r, 1, 3),
                                       RT_NO_MPI | RT_NO_EMPTY | RT_MONOTONIC, 512, 4096);
        CHECK(ft);
        rt_type mt = byte_rt;
        mt.type = TESS_BYTE;
        access_desc a;
        random_access(r, &a, ft, &mt);
        a.count = rt_int(r, 1, 3 * ft->nbytes < 1000 ? 3 * ft->nbytes : 1000); /* < sample */
        a.total = a.count;
        random_file(&a, r, true); /* no end of file inside the access: counters are exact */
        tess_region *reg;
        int64_t nreg = file_regions(&a, &reg), groups;
        bool write = rt_chance(r, 50);
        int ds = (int)rt_int(r, 0, 2);
        pt_hints h = pt_random_hints(r, NULL);
        h.ds_read = h.ds_write = ds_names[ds];
        tessi_model m = pt_file_model(&saved, atoll(h.pairs), h.uring[0] == 'e');
        method_costs e;
        tessi_group *plan = pt_estimate(&m, write, atoll(write ? h.wr : h.rd), reg, nreg, &e,
                                     &groups);
        int64_t pmd_pairs;
        ways[pmd_way(&m, write, plan, groups, reg, nreg, &e, &pmd_pairs)]++;
        for (int64_t k = 0; k < groups; k++)
            kinds[plan[k].kind]++;
        free(plan);
        for (int k = 0; k < 5; k++) {
            tess_file *f;
            tess_stats s;
            h.method = methods[k];
            CHECK_OK(pt_open(&h, TESS_RDWR, &f));
            CHECK_OK(tess_file_set_view(f, a.disp, TESS_BYTE, ft->type));
            if (write)
                check_write(f, methods[k], &a, r);
            else
                check_read(f, methods[k], &a, r);
            CHECK_OK(tess_file_stats(f, &s));
            int id = k < 4 ? k == 0 ? TESS_METHOD_NAIVE : k == 1 ? TESS_METHOD_LIST
                           : k == 2 ? TESS_METHOD_SIEVE : TESS_METHOD_PMD
                           : pt_expected_choice(&e, ds);
            const tessi_cost *want = cost_of(&e, id);
            /* locks: a handle alone on its file locks only its read-modify-writes (sieve's
             * windows with holes, pmd's SIEVE groups with holes): the write gate lets its plain
             * writes go unlocked */
            int64_t pairs = !write ? 0 : id == TESS_METHOD_PMD ? pmd_pairs : want->locks;
            CHECK(id != TESS_METHOD_PMD || want->locks == pmd_pairs || !write);
            if (s.last_method != id || s.io_ops != want->calls ||
                s.accessed_bytes != want->bytes || s.peak_buffer_bytes != want->peak ||
                s.lock_ops != 2 * pairs || s.regions != nreg) {
                fprintf(stderr, "counters of %s (%s, ran %s) on %" PRId64 " regions: calls %"
                        PRId64 "/%" PRId64 " bytes %" PRId64 "/%" PRId64 " peak %" PRId64 "/%"
                        PRId64 " lock_ops %" PRId64 "/%" PRId64 " regions %" PRId64 "\n"
                        " filetype %s disp %" PRId64 " offset %" PRId64 " count %" PRId64
                        " hints rd %s wr %s pairs %s uring %s\n",
                        methods[k], write ? "write" : "read", tess_method_name((int)s.last_method),
                        nreg, s.io_ops, want->calls, s.accessed_bytes, want->bytes,
                        s.peak_buffer_bytes, want->peak, s.lock_ops, 2 * pairs, s.regions,
                        ft->recipe, a.disp, a.offset, a.count, h.rd, h.wr, h.pairs, h.uring);
                exit(1);
            }
            if (k == 4) { /* the estimates auto saw are the model's, exactly */
                CHECK(s.auto_decisions == 1 && s.auto_reused == 0);
                CHECK(s.est_regions == nreg && s.est_scale == 1.0);
                CHECK(s.est_seconds[TESS_METHOD_NAIVE] == e.naive.seconds &&
                      s.est_seconds[TESS_METHOD_LIST] == e.list.seconds &&
                      s.est_seconds[TESS_METHOD_SIEVE] == e.sieve.seconds &&
                      s.est_seconds[TESS_METHOD_PMD] == e.pmd.seconds);
                chosen[id]++;
            }
            /* the same shape a tile on (the file covers it): the same counters, the plan and
             * the decision replayed */
            access_desc b = a;
            b.offset += ft->nbytes;
            random_file(&b, r, true);
            tess_file_reset_stats(f);
            if (write)
                check_write(f, methods[k], &b, r);
            else
                check_read(f, methods[k], &b, r);
            tess_stats s2;
            CHECK_OK(tess_file_stats(f, &s2));
            CHECK(s2.io_ops == s.io_ops && s2.accessed_bytes == s.accessed_bytes &&
                  s2.lock_ops == s.lock_ops && s2.peak_buffer_bytes == s.peak_buffer_bytes &&
                  s2.last_method == s.last_method && s2.auto_reused == (k == 4));
            CHECK_OK(tess_file_close(f));
        }
        /* noncontiguous memory: naive pays a call per piece (here every byte is a piece), or
         * stages the memory side: a call per file region (and per end of a chunk of the
         * buffer inside one) and a copy, whichever its estimate finds cheaper */
        if (ds == 0 && !write && a.count >= 2) {
            tess_type *gap, *two;
            tess_file *f;
            tess_stats s;
            int64_t n;
            CHECK_OK(tess_type_vector(1, 1, 1, TESS_BYTE, &gap));
            CHECK_OK(tess_type_resized(gap, 0, 2, &two)); /* every other byte */
            unsigned char *buf = calloc((size_t)(2 * a.count), 1);
            CHECK(buf);
            h.method = "auto";
            CHECK_OK(pt_open(&h, TESS_RDWR, &f));
            CHECK_OK(tess_file_set_view(f, a.disp, TESS_BYTE, ft->type));
            CHECK_OK(tess_file_read_at(f, a.offset, buf, a.count, two, &n));
            CHECK(n == a.count);
            CHECK_OK(tess_file_stats(f, &s));
            method_costs nc;
            estimate_all(&m, write, atoll(h.rd), reg, nreg, a.count, &nc);
            int64_t cuts = (a.count - 1) / atoll(h.rd);
            CHECK(nc.naive.peak > 0 ? nc.naive.calls == nreg + cuts : nc.naive.calls == a.count);
            CHECK(nc.sieve.seconds == e.sieve.seconds);
            CHECK(s.last_method == pt_expected_choice(&nc, 0));
            CHECK_OK(tess_file_close(f));
            tess_type_free(gap);
            tess_type_free(two);
            free(buf);
        }
        free(reg);
        rt_free(ft);
    }
    printf("auto chose: naive %" PRId64 ", list %" PRId64 ", sieve %" PRId64 ", pmd %" PRId64
           "\n", chosen[TESS_METHOD_NAIVE], chosen[TESS_METHOD_LIST], chosen[TESS_METHOD_SIEVE],
           chosen[TESS_METHOD_PMD]);
    printf("pmd groups: direct %" PRId64 ", list %" PRId64 ", sieve %" PRId64 "\n",
           kinds[TESSI_GROUP_DIRECT], kinds[TESSI_GROUP_LIST], kinds[TESSI_GROUP_SIEVE]);
    printf("pmd ways: plan %" PRId64 ", alone %" PRId64 ", classic %" PRId64 "\n",
           ways[WAY_PLAN], ways[WAY_ALONE], ways[WAY_CLASSIC]);
    for (int id = TESS_METHOD_NAIVE; id <= TESS_METHOD_PMD; id++)
        CHECK(chosen[id] > 0); /* the random models exercise every choice auto prices */
    for (int k = 0; k < 3; k++)
        CHECK(kinds[k] > 0); /* and every kind of group */
    CHECK(ways[WAY_CLASSIC] > 0); /* and pmd falling back on classic sieving (bytes checked
                                     against the byte map like every other case) */
    CHECK(ways[WAY_ALONE] > 0 && ways[WAY_PLAN] > 0); /* alone runs naive's loop, the plan
                                                          its own groups: both counted */
}

/* ------------------------------------------------------------------ 3: by hand */

/* Move the regions of an hindexed filetype with pmd (one tile, contiguous memory). */
static tess_stats by_hand_case(bool write, const int64_t *offs, const int64_t *lens, int n,
                               const char *buffer)
{
    tess_type *ft;
    tess_file *f;
    tess_stats s;
    unsigned char data[1024], file[8192];
    int64_t total = 0, moved;
    for (int i = 0; i < n; i++)
        total += lens[i];
    for (int i = 0; i < 8192; i++)
        file[i] = (unsigned char)(i * 7);
    for (int i = 0; i < 1024; i++)
        data[i] = (unsigned char)(i * 13 + 1);
    tf_put(pt_path, file, sizeof file);
    CHECK_OK(tess_type_hindexed(n, lens, offs, TESS_BYTE, &ft));
    pt_hints h = {.method = "pmd"};
    snprintf(write ? h.wr : h.rd, sizeof h.rd, "%s", buffer);
    CHECK_OK(pt_open(&h, TESS_RDWR, &f));
    CHECK_OK(tess_file_set_view(f, 0, TESS_BYTE, ft));
    unsigned char got[1024];
    if (write)
        CHECK_OK(tess_file_write_at(f, 0, data, total, TESS_BYTE, &moved));
    else
        CHECK_OK(tess_file_read_at(f, 0, got, total, TESS_BYTE, &moved));
    CHECK(moved == total);
    CHECK_OK(tess_file_stats(f, &s));
    CHECK_OK(tess_file_close(f));
    unsigned char *now;
    CHECK(tf_get(pt_path, &now) == 8192);
    for (int i = 0, k = 0; i < n; i++)
        for (int64_t j = 0; j < lens[i]; j++, k++) {
            int64_t fo = offs[i] + j;
            CHECK(write ? now[fo] == data[k] : got[k] == file[fo]);
            now[fo] = file[fo];
        }
    CHECK(memcmp(now, file, sizeof file) == 0); /* nothing else changed */
    free(now);
    tess_type_free(ft);
    return s;
}

static void by_hand(void)
{
    pt_unit_profile();
    /* Regions [0,100) [200,300) [5000,5100). Reads: the second joins the first (hole 100
     * costs 100/1024 < 1, the call it saves); the third does not (4700/1024 > 1). The group
     * [0,300) costs 1 + 300/1024 < 2 + 200/1024 alone: SIEVE; the third goes DIRECT. */
    const int64_t o1[] = {0, 200, 5000}, l1[] = {100, 100, 100};
    tess_stats s = by_hand_case(false, o1, l1, 3, "4096");
    CHECK(s.io_ops == 2 && s.accessed_bytes == 400 && s.peak_buffer_bytes == 300);
    CHECK(s.min_access == 100 && s.max_access == 300 && s.lock_ops == 0);
    /* A 250-byte buffer cannot hold [0,300): every region alone, one DIRECT run. */
    s = by_hand_case(false, o1, l1, 3, "250");
    CHECK(s.io_ops == 3 && s.accessed_bytes == 300 && s.peak_buffer_bytes == 0);
    /* Writes: the hole is read and rewritten (2 * 100/1024) and the region read (100/1024):
     * 300/1024 < 1, so it joins; but the group's read-modify-write costs 1/2 (lock) + 2 calls +
     * 600/1024 > 2 + 200/1024 alone: one DIRECT run of three calls, plain writes, unlocked (the
     * handle is alone on the file: the write gate lets it write unlocked). */
    s = by_hand_case(true, o1, l1, 3, "4096");
    CHECK(s.io_ops == 3 && s.accessed_bytes == 300 && s.peak_buffer_bytes == 0);
    CHECK(s.lock_ops == 0 && s.lock_fallbacks == 0);
    /* Regions [0,100) [110,210) [220,320): the group's read-modify-write costs 1/2 + 2 +
     * 640/1024 = 3.125 < 3 + 300/1024 alone: SIEVE, read then written (2 calls, 640 bytes),
     * under one lock. */
    const int64_t o2[] = {0, 110, 220}, l2[] = {100, 100, 100};
    s = by_hand_case(true, o2, l2, 3, "4096");
    CHECK(s.io_ops == 2 && s.accessed_bytes == 640 && s.peak_buffer_bytes == 320);
    CHECK(s.lock_ops == 2 && s.max_access == 320);
    /* Reads of the same: one SIEVE read of 320 bytes. */
    s = by_hand_case(false, o2, l2, 3, "4096");
    CHECK(s.io_ops == 1 && s.accessed_bytes == 320 && s.peak_buffer_bytes == 320);
}

int main(int argc, char **argv)
{
    int64_t cases = argc > 1 ? atoll(argv[1]) : 1000;
    uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 0) : 20250131;
    pt_init("pmd");
    rt_rng r;
    rt_seed(&r, seed);
    by_hand();
    oracle(cases, &r);
    counters(cases / 4, &r);
    pt_finish();
    printf("test_pmd_method: %" PRId64 " oracle and %" PRId64 " counter cases (seed %" PRIu64
           ")\n", cases, cases / 4, seed);
    return 0;
}
