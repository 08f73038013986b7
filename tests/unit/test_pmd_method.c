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
 *  3. a hand-made view with a model whose costs are exact in binary, groups worked out by hand;
 *  4. huge accesses are estimated from a prefix sample; an access of the same shape reuses the
 *     decision; the decision log;
 *  5. concurrent writers: pmd and auto writers whose sieved groups span the others' bytes,
 *     and a contiguous writer, all at once; no update may be lost. Storage without locks:
 *     groups with holes are moved directly, counted in lock_fallbacks.
 *
 * Usage: test_pmd_method [cases [seed]]
 */
#include "estimates.h"
#include "randtype.h"
#include "test_file_common.h"

#include "driver/driver.h"
#include "method/pmd.h"

#include <inttypes.h>
#include <sys/wait.h>

#define GUARD 64

static char path[64], prof[64], logpath[64];

/* ------------------------------------------------------------------ models */

/* lo * 10^k * (1 + j/8), k in [0, decades], j in [0, 7]. */
static double rnd_scale(rt_rng *r, double lo, int decades)
{
    double v = lo;
    for (int64_t k = rt_int(r, 0, decades); k > 0; k--)
        v *= 10;
    return v * (1.0 + (double)rt_int(r, 0, 7) / 8.0);
}

/* A random model, wide enough that plans mix every kind of group. */
static tessi_model random_model(rt_rng *r, bool locks)
{
    tessi_model m;
    tessi_model_defaults(&m);
    for (int w = 0; w < 2; w++) {
        m.dir[w].s = rnd_scale(r, 1e-7, 4);
        m.dir[w].tt = rnd_scale(r, 1e-11, 3);
        m.dir[w].cud = rt_chance(r, 50) ? 0 : rnd_scale(r, 1e-11, 2);
        m.dir[w].te = rt_chance(r, 70) ? 0 : rnd_scale(r, 1e-7, 2);
        m.dir[w].lq_dep = rt_chance(r, 70) ? 0 : rnd_scale(r, 1e-7, 2);
        m.dir[w].list_call = rnd_scale(r, 1e-7, 3);
        m.dir[w].list_pair = rnd_scale(r, 1e-8, 3);
    }
    m.mc = rnd_scale(r, 1e-12, 3);
    m.lock = rnd_scale(r, 1e-7, 3);
    m.locks = locks;
    m.batched = rt_chance(r, 60);
    m.n = rt_int(r, 1, 4);
    return m;
}

/* Save m as the cached variant of the profile file prof. */
static void save_profile(const tessi_model *m)
{
    tessi_profile pf;
    tessi_profile_defaults(&pf);
    pf.defaults = false;
    pf.model[TESSI_CACHED] = *m;
    CHECK_OK(tessi_profile_save(prof, &pf));
}

/* The model a file opened with this profile and these hints prices with (file.c's rules). */
static tessi_model file_model(const tessi_model *saved, int64_t list_max, bool uring)
{
    tessi_model m = *saved;
    m.p = 1;
    m.list_max = list_max;
    if (!tessi_driver_find("posix")->submit || !uring)
        m.batched = false;
    return m;
}

/* Hints for a handle: method, buffers, batch size, io_uring, and the profile. */
typedef struct {
    const char *method;
    char rd[24], wr[24], pairs[24];
    const char *uring, *ds_read, *ds_write;
} hintset;

static int open_with(const hintset *h, int flags, tess_file **f)
{
    const char *kv[32];
    int k = 0;
    kv[k++] = "tess_profile", kv[k++] = prof;
    if (h->method)
        kv[k++] = "tess_method", kv[k++] = h->method;
    if (h->rd[0])
        kv[k++] = "ind_rd_buffer_size", kv[k++] = h->rd;
    if (h->wr[0])
        kv[k++] = "ind_wr_buffer_size", kv[k++] = h->wr;
    if (h->pairs[0])
        kv[k++] = "tess_list_max_pairs", kv[k++] = h->pairs;
    if (h->uring)
        kv[k++] = "tess_posix_uring", kv[k++] = h->uring;
    if (h->ds_read)
        kv[k++] = "romio_ds_read", kv[k++] = h->ds_read;
    if (h->ds_write)
        kv[k++] = "romio_ds_write", kv[k++] = h->ds_write;
    kv[k] = NULL;
    return tf_open(path, flags, f, kv);
}

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
    int64_t k = a->offset + j, fs = a->ft->nbytes;
    return a->disp + (k / fs) * a->ft->extent + a->ft->offsets[k % fs];
}

static int64_t mem_off(const access_desc *a, int64_t j)
{
    int64_t ms = a->mt->nbytes;
    return (j / ms) * a->mt->extent + a->mt->offsets[j % ms];
}

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
    int64_t fsize = tf_get(path, &file), expect = 0;
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
    int64_t size0 = tf_get(path, &before), size1 = size0;
    for (int64_t j = 0; j < a->total; j++)
        if (file_off(a, j) + 1 > size1)
            size1 = file_off(a, j) + 1;
    unsigned char *want = calloc((size_t)size1 + 1, 1);
    CHECK(want);
    memcpy(want, before, (size_t)size0);
    for (int64_t j = 0; j < a->total; j++)
        want[file_off(a, j)] = mem[mem_off(a, j) - lo];
    CHECK_OK(tess_file_write_at(f, a->offset, mem - lo, a->count, a->mt->type, &put));
    int64_t size2 = tf_get(path, &after);
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

/* Random hints for one handle (method given). */
static hintset random_hints(rt_rng *r, const char *method)
{
    static const char *const bufs[] = {"1", "7", "64", "300", "4096", "1048576"};
    static const char *const pairs[] = {"1", "2", "5", "64", "1024"};
    hintset h = {.method = method, .uring = rt_chance(r, 50) ? "enable" : "disable"};
    snprintf(h.rd, sizeof h.rd, "%s", bufs[rt_int(r, 0, 5)]);
    snprintf(h.wr, sizeof h.wr, "%s", bufs[rt_int(r, 0, 5)]);
    snprintf(h.pairs, sizeof h.pairs, "%s", pairs[rt_int(r, 0, 4)]);
    return h;
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
    tf_put(path, data, len);
    free(data);
}

/* ------------------------------------------------------------------ 1: oracle */

static void oracle(int64_t cases, rt_rng *r)
{
    static const char *const methods[] = {"pmd", "auto"};
    for (int64_t c = 0; c < cases; c++) {
        tessi_model m = random_model(r, rt_chance(r, 90));
        save_profile(&m);
        rt_type *ft = rt_random_limits(r, (int)rt_int(r, 1, 3),
                                       RT_NO_MPI | RT_NO_EMPTY | RT_MONOTONIC, 512, 4096);
        rt_type *mt = rt_random_limits(r, (int)rt_int(r, 0, 3), RT_NO_MPI |
                                       (rt_chance(r, 30) ? RT_MONOTONIC : 0), 256, 2048);
        CHECK(ft && mt);
        access_desc a;
        random_access(r, &a, ft, mt);
        random_file(&a, r, false);
        const char *method = methods[c % 2];
        hintset h = random_hints(r, method);
        tess_file *f;
        CHECK_OK(open_with(&h, TESS_RDWR, &f));
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

/* The estimate of the access's regions under model m with sieve buffer buf, and the groups of
 * pmd's plan (malloc'ed, *ngroups of them). */
static tessi_group *estimate(const tessi_model *m, bool write, int64_t buf, const tess_region *reg,
                             int64_t n, method_costs *e, int64_t *ngroups)
{
    tessi_planner pl;
    tessi_group *g = malloc(sizeof *g * (size_t)(n + TESSI_PLAN_EMIT_MAX));
    int64_t used, made;
    CHECK(g);
    estimate_all(m, write, buf, reg, n, 0, e);
    CHECK_OK(tessi_plan_init(&pl, m, write, buf));
    *ngroups = 0;
    for (int64_t i = 0; i < n; i++) {
        CHECK_OK(tessi_plan_push(&pl, &reg[i], 1, g + *ngroups, TESSI_PLAN_EMIT_MAX, &used,
                                 &made));
        *ngroups += made;
    }
    CHECK_OK(tessi_plan_flush(&pl, g + *ngroups, TESSI_PLAN_EMIT_MAX, &made));
    *ngroups += made;
    return g;
}

/* Lock pairs of a pmd write of these groups (pmd.c's contract): one per SIEVE group, one per
 * LIST batch of list_max regions, and for DIRECT regions one per window that starts at a
 * region and reaches the write buffer's extent (or the region's) within the group. */
static int64_t pmd_lock_pairs(const tessi_group *g, int64_t ng, const tess_region *reg,
                              int64_t list_max, int64_t wbuf)
{
    int64_t pairs = 0;
    for (int64_t k = 0; k < ng; k++) {
        if (g[k].kind == TESSI_GROUP_SIEVE)
            pairs++;
        else if (g[k].kind == TESSI_GROUP_LIST)
            pairs += (g[k].count + list_max - 1) / list_max;
        else
            for (int64_t i = g[k].first, end = g[k].off + g[k].len; i < g[k].first + g[k].count;) {
                int64_t reach = reg[i].len > wbuf ? reg[i].len : wbuf;
                int64_t hi = end - reg[i].off > reach ? reg[i].off + reach : end;
                pairs++;
                for (i++; i < g[k].first + g[k].count && reg[i].off + reg[i].len <= hi; i++)
                    ;
            }
    }
    return pairs;
}

/* auto's rule, written out: the lowest estimate among the candidates, ties to the first. */
static int expected_choice(const method_costs *e, int ds)
{
    const struct {
        int id;
        double sec;
        bool ok;
    } c[] = {{TESS_METHOD_NAIVE, e->naive.seconds, ds != 1},
             {TESS_METHOD_LIST, e->list.seconds, ds != 1},
             {TESS_METHOD_SIEVE, e->sieve.seconds, ds != 2},
             {TESS_METHOD_PMD, e->pmd.seconds, ds != 2}};
    int best = -1;
    for (int i = 0; i < 4; i++)
        if (c[i].ok && (best < 0 || c[i].sec < c[best].sec))
            best = i;
    return c[best].id;
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
    int64_t chosen[TESS_METHOD_MAX] = {0}, kinds[3] = {0};
    for (int64_t c = 0; c < cases; c++) {
        tessi_model saved = random_model(r, true);
        saved.batched = true; /* as the driver is (unless tess_posix_uring = disable) */
        save_profile(&saved);
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
        hintset h = random_hints(r, NULL);
        h.ds_read = h.ds_write = ds_names[ds];
        tessi_model m = file_model(&saved, atoll(h.pairs), h.uring[0] == 'e');
        method_costs e;
        tessi_group *plan = estimate(&m, write, atoll(write ? h.wr : h.rd), reg, nreg, &e,
                                     &groups);
        int64_t pmd_pairs = pmd_lock_pairs(plan, groups, reg, m.list_max, atoll(h.wr));
        for (int64_t k = 0; k < groups; k++)
            kinds[plan[k].kind]++;
        free(plan);
        for (int k = 0; k < 5; k++) {
            tess_file *f;
            tess_stats s;
            h.method = methods[k];
            CHECK_OK(open_with(&h, TESS_RDWR, &f));
            CHECK_OK(tess_file_set_view(f, a.disp, TESS_BYTE, ft->type));
            if (write)
                check_write(f, methods[k], &a, r);
            else
                check_read(f, methods[k], &a, r);
            CHECK_OK(tess_file_stats(f, &s));
            int id = k < 4 ? k == 0 ? TESS_METHOD_NAIVE : k == 1 ? TESS_METHOD_LIST
                           : k == 2 ? TESS_METHOD_SIEVE : TESS_METHOD_PMD
                           : expected_choice(&e, ds);
            const tessi_cost *want = cost_of(&e, id);
            /* locks: sieve locks each window, pmd its groups, batches and windows; on a file
             * where sieving writes can happen (auto), the others lock the access's extent */
            int64_t pairs = !write ? 0 : id == TESS_METHOD_SIEVE ? want->locks
                          : id == TESS_METHOD_PMD ? pmd_pairs : k == 4 && ds != 2;
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
        /* noncontiguous memory: naive pays a call per piece (here every byte is a piece) */
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
            CHECK_OK(open_with(&h, TESS_RDWR, &f));
            CHECK_OK(tess_file_set_view(f, a.disp, TESS_BYTE, ft->type));
            CHECK_OK(tess_file_read_at(f, a.offset, buf, a.count, two, &n));
            CHECK(n == a.count);
            CHECK_OK(tess_file_stats(f, &s));
            method_costs nc;
            estimate_all(&m, write, atoll(h.rd), reg, nreg, a.count, &nc);
            CHECK(nc.naive.calls == a.count && nc.sieve.seconds == e.sieve.seconds);
            CHECK(s.last_method == expected_choice(&nc, 0));
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
    for (int id = TESS_METHOD_NAIVE; id < TESS_METHOD_COUNT; id++)
        CHECK(chosen[id] > 0); /* the random models exercise every choice */
    for (int k = 0; k < 3; k++)
        CHECK(kinds[k] > 0); /* and every kind of group */
}

/* ------------------------------------------------------------------ 3: by hand */

/* A model where a call costs 1 and a byte 1/1024 (both directions), a lock pair 1/2, nothing
 * else costs anything, and lists are not batched: a region moved alone costs 1. */
static void unit_profile(void)
{
    tessi_model m = {.locks = true, .batched = false, .n = 1, .p = 1, .list_max = 64,
                     .lock = 0.5};
    for (int w = 0; w < 2; w++) {
        m.dir[w].s = 1.0;
        m.dir[w].tt = 1.0 / 1024;
    }
    save_profile(&m);
}

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
    tf_put(path, file, sizeof file);
    CHECK_OK(tess_type_hindexed(n, lens, offs, TESS_BYTE, &ft));
    hintset h = {.method = "pmd"};
    snprintf(write ? h.wr : h.rd, sizeof h.rd, "%s", buffer);
    CHECK_OK(open_with(&h, TESS_RDWR, &f));
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
    CHECK(tf_get(path, &now) == 8192);
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
    unit_profile();
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
     * 600/1024 > 2 + 200/1024 alone: one DIRECT run of three calls, written under two locks,
     * [0, 4096) (the buffer's reach from the first region: it holds the first two) and
     * [5000, 5100). */
    s = by_hand_case(true, o1, l1, 3, "4096");
    CHECK(s.io_ops == 3 && s.accessed_bytes == 300 && s.peak_buffer_bytes == 0);
    CHECK(s.lock_ops == 4 && s.lock_fallbacks == 0);
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

/* ------------------------------------------------------------------ 4: auto's bookkeeping */

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
    unit_profile();
    static unsigned char file[N * STRIDE * 2], buf[N * LEN];
    tf_put(path, file, sizeof file);
    CHECK_OK(tess_type_vector(N, LEN, STRIDE, TESS_BYTE, &v));
    CHECK_OK(tess_type_resized(v, 0, N * STRIDE, &ft));
    hintset h = {.method = "auto"};
    CHECK_OK(open_with(&h, TESS_RDWR, &f));
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
static void single_region(rt_rng *r)
{
    unsigned char buf[5000];
    memset(buf, 7, sizeof buf);
    tf_put(path, buf, sizeof buf);
    for (int c = 0; c < 200; c++) {
        tessi_model saved = random_model(r, rt_chance(r, 70));
        save_profile(&saved);
        hintset h = random_hints(r, "auto");
        bool write = rt_chance(r, 50);
        int64_t buffer = atoll(write ? h.wr : h.rd), len = rt_int(r, 1, 4000), n;
        tess_region reg = {.off = rt_int(r, 0, 999), .len = len};
        tessi_model m = file_model(&saved, atoll(h.pairs), h.uring[0] == 'e');
        method_costs e;
        int64_t groups;
        free(estimate(&m, write, buffer, &reg, 1, &e, &groups));
        tess_file *f;
        tess_stats s;
        CHECK_OK(open_with(&h, TESS_RDWR, &f));
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
        CHECK(s.last_method == expected_choice(&e, 0));
        CHECK_OK(tess_file_close(f));
    }
}

static void decision_log(void)
{
    tess_file *f;
    tess_stats s;
    int64_t n;
    unsigned char buf[64] = {0};
    unit_profile();
    unlink(logpath);
    const char *kv[] = {"tess_profile", prof, "tess_debug_decisions", logpath, NULL};
    CHECK_OK(tf_open(path, TESS_RDWR | TESS_CREATE, &f, kv));
    CHECK_OK(tess_file_write_at(f, 0, buf, 64, TESS_BYTE, &n));
    CHECK_OK(tess_file_write_at(f, 0, buf, 64, TESS_BYTE, &n));
    CHECK_OK(tess_file_read_at(f, 0, buf, 64, TESS_BYTE, &n));
    CHECK_OK(tess_file_stats(f, &s));
    CHECK(s.auto_decisions == 3 && s.auto_reused == 1 && s.last_method == TESS_METHOD_NAIVE);
    CHECK(s.method_accesses[TESS_METHOD_NAIVE] == 3 && s.model_defaults == 0);
    CHECK_OK(tess_file_close(f));
    unsigned char *text;
    int64_t len = tf_get(logpath, &text);
    text[len] = '\0';
    char *l1 = (char *)text, *l2 = strchr(l1, '\n') + 1, *l3 = strchr(l2, '\n') + 1;
    CHECK(strncmp(l1, "tessera auto: write at=0 bytes=64 ", 34) == 0);
    CHECK(strstr(l1, "-> naive\n") && strstr(l1, "est_s naive=") && strstr(l1, "model=profile"));
    CHECK(strstr(l2, "-> naive (reused)\n") == l3 - strlen("-> naive (reused)\n"));
    CHECK(strncmp(l3, "tessera auto: read ", 19) == 0 && strchr(l3, '\n') == (char *)text + len - 1);
    free(text);
    unlink(logpath);
    /* no log anywhere but where asked; an unwritable log fails the open */
    const char *bad[] = {"tess_debug_decisions", "/nonexistent-dir/log", NULL};
    CHECK_ERR(tf_open(path, TESS_RDWR, &f, bad), TESS_ERR_NOENT);
    const char *empty[] = {"tess_debug_decisions", "", NULL};
    CHECK_ERR(tf_open(path, TESS_RDWR, &f, empty), TESS_ERR_ARG);
}

static void hints_and_names(void)
{
    tess_file *f;
    tess_stats s;
    int64_t n;
    unsigned char buf[16] = {0};
    unit_profile();
    tf_put(path, buf, sizeof buf);
    CHECK(strcmp(tess_method_name(TESS_METHOD_NONE), "none") == 0);
    CHECK(strcmp(tess_method_name(TESS_METHOD_NAIVE), "naive") == 0);
    CHECK(strcmp(tess_method_name(TESS_METHOD_SIEVE), "sieve") == 0);
    CHECK(strcmp(tess_method_name(TESS_METHOD_LIST), "list") == 0);
    CHECK(strcmp(tess_method_name(TESS_METHOD_PMD), "pmd") == 0);
    CHECK(strcmp(tess_method_name(TESS_METHOD_COUNT), "unknown") == 0);
    const char *model_bad[] = {"tess_model", "warm", NULL};
    CHECK_ERR(tf_open(path, TESS_RDWR, &f, model_bad), TESS_ERR_ARG);
    CHECK(strstr(tess_last_error(), "cached|uncached"));
    const char *method_bad[] = {"tess_method", "fastest", NULL};
    CHECK_ERR(tf_open(path, TESS_RDWR, &f, method_bad), TESS_ERR_ARG);
    CHECK(strstr(tess_last_error(), "auto|naive|sieve|list|pmd"));
    const char *missing[] = {"tess_profile", "/nonexistent-dir/profile", NULL};
    CHECK_ERR(tf_open(path, TESS_RDWR, &f, missing), TESS_ERR_NOENT);
    /* uncached without an uncached variant: the cached one */
    const char *unc[] = {"tess_profile", prof, "tess_model", "uncached", NULL};
    CHECK_OK(tf_open(path, TESS_RDWR, &f, unc));
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
    CHECK_OK(tess_file_open(path, TESS_RDWR, NULL, &f));
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

/* ------------------------------------------------------------------ 5: concurrency */

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
    save_profile(&m);
}

/* Writer `first` (0 or 1) writes blocks 4k + first through a strided view with `method`. */
static int strided_writer(int round, int first, const char *method)
{
    tess_file *f;
    tess_type *v, *ft;
    tess_stats s;
    unsigned char buf[CHUNK * B];
    int64_t n;
    const char *kv[] = {"tess_method", method, "ind_wr_buffer_size", "1000", "tess_profile", prof,
                        NULL};
    CHECK_OK(tf_open(path, TESS_WRONLY, &f, kv));
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
    /* sieved (holes read and rewritten) under locks, never naively */
    CHECK(s.lock_fallbacks == 0 && s.lock_ops > 0 && s.accessed_bytes > 2 * NB / 4 * B);
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
    const char *kv[] = {"tess_profile", prof, NULL};
    CHECK_OK(tf_open(path, TESS_WRONLY, &f, kv));
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
    CHECK(tf_get(path, &now) == NB * B);
    for (int64_t k = 0; k < NB * B; k++)
        if (now[k] != value(round, k)) {
            fprintf(stderr, "round %d: byte %lld (block %lld) lost its update\n", round,
                    (long long)k, (long long)(k / B));
            exit(1);
        }
    free(now);
}

static void concurrency(int rounds)
{
    static const char *const methods[] = {"pmd", "auto"};
    sieving_profile();
    for (int round = 0; round < rounds; round++) {
        unsigned char old[NB * B];
        for (int64_t k = 0; k < NB * B; k++)
            old[k] = (unsigned char)~value(round, k);
        tf_put(path, old, NB * B);
        int go[2];
        CHECK(pipe(go) == 0);
        pid_t pids[3];
        for (int w = 0; w < 3; w++) {
            pids[w] = fork();
            CHECK(pids[w] >= 0);
            if (pids[w] == 0) {
                char c;
                close(go[1]);
                CHECK(read(go[0], &c, 1) == 0); /* wait for the gate */
                _exit(w < 2 ? strided_writer(round, w, methods[(round + w) % 2])
                            : contiguous_writer(round));
            }
        }
        close(go[0]);
        close(go[1]);
        for (int w = 0; w < 3; w++) {
            int status;
            CHECK(waitpid(pids[w], &status, 0) == pids[w]);
            CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        }
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
    const char *kv[] = {"tess_method", "pmd", "ind_wr_buffer_size", "1000", "tess_profile", prof,
                        NULL};
    unsigned char old[NB * B];
    for (int64_t k = 0; k < NB * B; k++)
        old[k] = (unsigned char)~value(7, k);
    tf_put(path, old, NB * B);
    CHECK_OK(tf_open(path, TESS_RDWR, &f, kv));
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
    CHECK(tf_get(path, &now) == NB * B);
    for (int64_t k = 0; k < NB * B; k++)
        CHECK(now[k] == ((k / B) % 4 == 0 ? value(7, k) : old[k]));
    free(now);
    tess_type_free(v);
    tess_type_free(ft);
}

int main(int argc, char **argv)
{
    int64_t cases = argc > 1 ? atoll(argv[1]) : 1000;
    uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 0) : 20250131;
    tf_path(path, sizeof path, "pmd");
    snprintf(prof, sizeof prof, "tess_pmd_profile_%ld", (long)getpid());
    snprintf(logpath, sizeof logpath, "tess_pmd_log_%ld", (long)getpid());
    rt_rng r;
    rt_seed(&r, seed);
    hints_and_names();
    by_hand();
    sampling_and_reuse();
    single_region(&r);
    decision_log();
    no_locks();
    concurrency(20);
    oracle(cases, &r);
    counters(cases / 4, &r);
    unlink(path);
    unlink(prof);
    printf("test_pmd_method: %" PRId64 " oracle and %" PRId64 " counter cases (seed %" PRIu64
           ")\n", cases, cases / 4, seed);
    return 0;
}
