/*
 * types.c - `tessera bench types`: pack and unpack throughput of Tessera's datatype engine
 * next to MPI_Pack/MPI_Unpack of the same MPI datatype, built from the same parameters.
 *
 * For each shape the benchmark builds (1) the Tessera type, (2) the equivalent MPI type and
 * (3) a reference list of (offset, length) regions computed by brute force straight from the
 * constructor definitions. Before timing, tess_pack's output is compared with the reference
 * pack and with MPI_Pack's output, and both unpacks with the reference unpack: the check column
 * says ok or what failed. Then pack and unpack are timed for both libraries and a hand-written
 * loop for the shape (what a C programmer writes for that one layout, compiled with the
 * benchmark), side by side on the same buffers (time_alts); the medians are printed in GB/s
 * (1e9 bytes of packed data per second) with the median ratios to Tessera.
 */
#include "types.h"

#include <stdlib.h>
#include <string.h>

/* -------------------------------------------------------------- timed operations */

typedef struct op_ctx {
    const shape *s;
    const void *src;   /* typed buffer (pack input) */
    void *packbuf;     /* packed buffer (pack output, unpack input) */
    void *dst;         /* typed buffer (unpack output) */
} op_ctx;

static int op_tess_pack(void *p)
{
    op_ctx *c = p;
    int64_t got = 0;
    int rc = tess_pack(c->src, c->s->count, c->s->tt, 0, c->packbuf, c->s->packed, &got);
    if (rc != 0)
        return bench_tess_fail(rc, "tess_pack");
    if (got != c->s->packed)
        return bench_fail("tess_pack: packed %lld of %lld bytes", (long long)got,
                          (long long)c->s->packed);
    return 0;
}

static int op_tess_unpack(void *p)
{
    op_ctx *c = p;
    int64_t got = 0;
    int rc = tess_unpack(c->packbuf, c->s->packed, c->dst, c->s->count, c->s->tt, 0, &got);
    if (rc != 0)
        return bench_tess_fail(rc, "tess_unpack");
    if (got != c->s->packed)
        return bench_fail("tess_unpack: unpacked %lld of %lld bytes", (long long)got,
                          (long long)c->s->packed);
    return 0;
}

static int op_hand_pack(void *p)
{
    op_ctx *c = p;
    hand(c->s, (unsigned char *)c->src, c->packbuf, 1);
    return 0;
}

static int op_hand_unpack(void *p)
{
    op_ctx *c = p;
    hand(c->s, c->dst, c->packbuf, 0);
    return 0;
}

#ifdef TESS_BENCH_MPI
static int op_mpi_pack(void *p)
{
    op_ctx *c = p;
    int pos = 0;
    int rc = MPI_Pack(c->src, (int)c->s->count, c->s->mt, c->packbuf, (int)c->s->packed, &pos,
                      MPI_COMM_SELF);
    if (rc != MPI_SUCCESS)
        return mpi_ok(rc, c->s, "MPI_Pack");
    if (pos != c->s->packed)
        return bench_fail("MPI_Pack: packed %d of %lld bytes", pos, (long long)c->s->packed);
    return 0;
}

static int op_mpi_unpack(void *p)
{
    op_ctx *c = p;
    int pos = 0;
    int rc = MPI_Unpack(c->packbuf, (int)c->s->packed, &pos, c->dst, (int)c->s->count, c->s->mt,
                        MPI_COMM_SELF);
    if (rc != MPI_SUCCESS)
        return mpi_ok(rc, c->s, "MPI_Unpack");
    if (pos != c->s->packed)
        return bench_fail("MPI_Unpack: unpacked %d of %lld bytes", pos, (long long)c->s->packed);
    return 0;
}
#endif

/* ------------------------------------------------------------------ timing */

/* The alternatives timed side by side: Tessera, MPI (absent without MPI), the hand loop. */
enum { ALT_T, ALT_MPI, ALT_HAND, NALT };

/* Repetitions the timing arrays hold (the --reps maximum). */
#define MAX_REPS 1000

/* What one direction (pack or unpack) of a shape measured. */
typedef struct {
    double sec[NALT];   /* median seconds per call; 0 for an absent alternative */
    double ratio[NALT]; /* median over repetitions of alternative i's time over Tessera's in the
                           same repetition (Tessera's throughput over i's), quartiles below */
    double lo[NALT], hi[NALT];
} timed;

/* Batches a slot is timed in (at most; one call at least each). */
#define SLOT_BATCHES 16

/*
 * One slot: iters calls of fn in up to SLOT_BATCHES batches, each timed; *sec gets the median
 * batch's seconds per call, so that the slot survives being descheduled in one batch (the
 * machine runs other work: with 2 CPUs and a load above 2 that happens every few slots).
 */
static int time_slot(bench_fn fn, void *ctx, int64_t iters, double *sec)
{
    double per[SLOT_BATCHES];
    int nb = iters < SLOT_BATCHES ? (int)iters : SLOT_BATCHES;
    for (int b = 0; b < nb; b++) {
        int64_t calls = iters / nb + (b < iters % nb);
        if (bench_rep(fn, ctx, calls, &per[b]) != 0)
            return -1;
    }
    *sec = bench_median(per, nb);
    return 0;
}

/* The q-quantile (0..1) of n sorted values, by nearest rank. */
static double quantile(const double *v, int n, double q)
{
    int i = (int)(q * (double)(n - 1) + 0.5);
    return v[i];
}

/*
 * Time the present alternatives of one direction on the same buffers (ctx): each calibrated
 * (bench_calibrate: an untimed call, then calls per slot to last t->min_rep_sec), then t->reps
 * repetitions, each a palindrome of slots (T, M, H, H, M, T, the start rotating from one
 * repetition to the next) so that a drift in the machine's speed and the cache state each slot
 * leaves to the next weigh alike on every alternative. The ratios are taken within a
 * repetition, from slots at most a few tens of milliseconds apart, and their median reported:
 * a burst of other work on the machine moves whole repetitions, not one alternative's median.
 * Without the palindrome and the shared buffers, a memcpy against the same memcpy read
 * 0.82-1.06x from run to run.
 */
static int time_alts(const bench_fn fn[NALT], void *ctx, const bench_timing *t, timed *out)
{
    int reps = t->reps < 1 ? 1 : t->reps > MAX_REPS ? MAX_REPS : t->reps;
    int live[NALT], n = 0;
    int64_t iters[NALT] = {0};
    static double sec[NALT][MAX_REPS], ratio[NALT][MAX_REPS];
    memset(out, 0, sizeof *out);
    for (int i = 0; i < NALT; i++)
        if (fn[i]) {
            if (bench_calibrate(fn[i], ctx, t, &iters[i]) != 0)
                return -1;
            live[n++] = i;
        }
    for (int r = 0; r < reps; r++) {
        for (int k = 0; k < n; k++)
            sec[live[k]][r] = 0;
        for (int j = 0; j < 2 * n; j++) {
            int k = j < n ? j : 2 * n - 1 - j, i = live[(k + r) % n];
            double s = 0;
            if (time_slot(fn[i], ctx, iters[i], &s) != 0)
                return -1;
            sec[i][r] += s / 2;
        }
        for (int k = 0; k < n; k++)
            ratio[live[k]][r] = sec[live[k]][r] / sec[ALT_T][r];
    }
    for (int k = 0; k < n; k++) {
        int i = live[k];
        out->sec[i] = bench_median(sec[i], reps);
        out->ratio[i] = bench_median(ratio[i], reps); /* sorts: the quartiles next */
        out->lo[i] = quantile(ratio[i], reps, 0.25);
        out->hi[i] = quantile(ratio[i], reps, 0.75);
    }
    return 0;
}

/* ---------------------------------------------------------------- one shape */

static void put_gbs(bench_table *t, int64_t bytes, double sec)
{
    if (sec > 0)
        bench_table_cell(t, "%.2f", (double)bytes / sec / 1e9);
    else
        bench_table_cell(t, "%s", "n/a");
}

static void put_ratio(bench_table *t, const timed *d, int i)
{
    if (d->sec[i] > 0)
        bench_table_cell(t, "%.2fx", d->ratio[i]);
    else
        bench_table_cell(t, "%s", "n/a");
}

static void put_spread(bench_table *t, const timed *d, int i)
{
    if (d->sec[i] > 0)
        bench_table_cell(t, "%.2f-%.2f", d->lo[i], d->hi[i]);
    else
        bench_table_cell(t, "%s", "n/a");
}

/* What a shape measured, for the spread table under the figures. */
typedef struct {
    char name[40];
    timed pack, unpack;
} shape_times;

/*
 * Build buffers, check, time, print one row; *st gets the figures. Returns 0, or -1 when the
 * shape could not run. Every alternative reads and writes the same buffers (src, pk, dst): with
 * a buffer of its own each, the pages under each (their cache sets, their TLB reach) differ,
 * and so did the figures of identical work.
 */
static int run_shape(shape *s, const types_opts *o, const bench_mpi *m, bench_table *tab,
                     shape_times *st, int *failures)
{
    int use_mpi = 0;
#ifdef TESS_BENCH_MPI
    use_mpi = m->active && s->have_mt;
#else
    (void)m;
#endif
    int rc = -1;
    unsigned char *src = bench_alloc(s->span, 0), *dst = bench_alloc(s->span, 0);
    unsigned char *ref_dst = bench_alloc(s->span, 0);
    unsigned char *pk_ref = bench_alloc(s->packed, 0), *pk = bench_alloc(s->packed, 0);
    unsigned char *pk_m = bench_alloc(s->packed, 0);
    char check[96] = "";
    if (!src || !dst || !ref_dst || !pk_ref || !pk || !pk_m) {
        bench_fail("types: %s: out of memory (%lld-byte buffers)", s->name, (long long)s->span);
        goto done;
    }
    bench_fill_random(src, s->span, 42);
    op_ctx c = {s, src, pk, dst};

    /* correctness first: reference pack/unpack against both libraries and the hand loop */
    ref_pack(s, src, pk_ref);
    ref_unpack(s, pk_ref, ref_dst);
    int bad_tp = 0, bad_tu = 0, bad_mp = 0, bad_mu = 0, t_ne_m = 0, bad_h = 0;
    op_hand_pack(&c);
    bad_h = memcmp(pk, pk_ref, (size_t)s->packed) != 0;
    memset(dst, 0, (size_t)s->span);
    op_hand_unpack(&c);
    bad_h = bad_h || memcmp(dst, ref_dst, (size_t)s->span) != 0;
    if (op_tess_pack(&c) != 0)
        goto done;
    bad_tp = memcmp(pk, pk_ref, (size_t)s->packed) != 0;
    memset(dst, 0, (size_t)s->span);
    if (op_tess_unpack(&c) != 0)
        goto done;
    bad_tu = memcmp(dst, ref_dst, (size_t)s->span) != 0;
#ifdef TESS_BENCH_MPI
    if (use_mpi) {
        op_ctx cm = {s, src, pk_m, dst};
        if (op_mpi_pack(&cm) != 0)
            goto done;
        bad_mp = memcmp(pk_m, pk_ref, (size_t)s->packed) != 0;
        t_ne_m = memcmp(pk, pk_m, (size_t)s->packed) != 0;
        memset(dst, 0, (size_t)s->span);
        if (op_mpi_unpack(&cm) != 0)
            goto done;
        bad_mu = memcmp(dst, ref_dst, (size_t)s->span) != 0;
    }
#endif
    if (bad_tp || bad_tu || bad_mp || bad_mu || t_ne_m || bad_h) {
        snprintf(check, sizeof check, "FAIL(%s%s%s%s%s%s)", bad_tp ? "pack " : "",
                 bad_tu ? "unpack " : "", t_ne_m ? "pack!=MPI " : "", bad_mp ? "MPI_Pack " : "",
                 bad_mu ? "MPI_Unpack " : "", bad_h ? "hand loop " : "");
        size_t l = strlen(check);
        if (l >= 2 && check[l - 2] == ' ')
            memmove(check + l - 2, ")", 2);
        (*failures)++;
    } else {
        snprintf(check, sizeof check, "ok");
    }

    bench_fn packs[NALT] = {op_tess_pack, NULL, op_hand_pack};
    bench_fn unpacks[NALT] = {op_tess_unpack, NULL, op_hand_unpack};
#ifdef TESS_BENCH_MPI
    if (use_mpi) {
        packs[ALT_MPI] = op_mpi_pack;
        unpacks[ALT_MPI] = op_mpi_unpack;
    }
#endif
    snprintf(st->name, sizeof st->name, "%s", s->name);
    if (time_alts(packs, &c, &o->timing, &st->pack) != 0)
        goto done;
    /* unpack input: the reference stream (every pack wrote the same when the checks passed) */
    memcpy(pk, pk_ref, (size_t)s->packed);
    if (time_alts(unpacks, &c, &o->timing, &st->unpack) != 0)
        goto done;

    char b1[32];
    bench_table_cell(tab, "%s", s->name);
    bench_table_cell(tab, "%s", bench_fmt_bytes(s->packed, b1, sizeof b1));
    bench_table_cell(tab, "%lld", (long long)s->nreg);
    bench_table_cell(tab, "%lld", (long long)tess_type_footprint(s->tt));
    const timed *d[2] = {&st->pack, &st->unpack};
    for (int k = 0; k < 2; k++) {
        put_gbs(tab, s->packed, d[k]->sec[ALT_T]);
        put_gbs(tab, s->packed, d[k]->sec[ALT_MPI]);
        put_ratio(tab, d[k], ALT_MPI);
        put_gbs(tab, s->packed, d[k]->sec[ALT_HAND]);
        put_ratio(tab, d[k], ALT_HAND);
    }
    bench_table_cell(tab, "%s", check);
    bench_table_end_row(tab);
    rc = 0;
done:
    if (rc != 0) {
        bench_table_cell(tab, "%s", s->name);
        bench_table_cell(tab, "%s", "error (see above)");
        bench_table_end_row(tab);
        st->name[0] = '\0';
        (*failures)++;
    }
    bench_free(src);
    bench_free(dst);
    bench_free(ref_dst);
    bench_free(pk_ref);
    bench_free(pk);
    bench_free(pk_m);
    return rc;
}

/* The detail under the figures: how far the per-repetition ratios spread. */
static void print_spread(const shape_times *st, int n)
{
    static const char *const heads[] = {"shape", "pack T/MPI", "T/hand", "unpack T/MPI",
                                        "T/hand"};
    static const int widths[] = {22, 12, 12, 12, 12};
    bench_table tab;
    printf("\nspread: 25th-75th percentile of the per-repetition ratios\n");
    bench_table_init(&tab, stdout, 5, heads, widths);
    bench_table_header(&tab);
    for (int i = 0; i < n; i++) {
        if (!st[i].name[0])
            continue;
        bench_table_cell(&tab, "%s", st[i].name);
        put_spread(&tab, &st[i].pack, ALT_MPI);
        put_spread(&tab, &st[i].pack, ALT_HAND);
        put_spread(&tab, &st[i].unpack, ALT_MPI);
        put_spread(&tab, &st[i].unpack, ALT_HAND);
        bench_table_end_row(&tab);
    }
}

/* ------------------------------------------------------------------ the command */

int bench_types_main(int argc, char **argv)
{
    types_opts o = {.use_mpi = 1};
    int64_t reps = 0;
    int cpu_time = 0;
    bench_opt opts[] = {
        {.name = "bytes", .kind = BENCH_OPT_SIZE, .dst = &o.bytes, .min = 64, .max = 1 << 30,
         .arg = "SIZE", .help = "packed bytes per call for each shape (k/m/g suffixes)",
         .def = "16m", .quick = "1m"},
        {.name = "array", .kind = BENCH_OPT_SIZE, .dst = &o.array, .min = 1, .max = 2048,
         .arg = "N", .help = "3-D subarray: edge of the full array of doubles", .def = "256",
         .quick = "64"},
        {.name = "sub", .kind = BENCH_OPT_SIZE, .dst = &o.sub, .min = 1, .arg = "N",
         .help = "3-D subarray: edge of the centred sub-block (at most --array)", .def = "128",
         .quick = "32"},
        {.name = "reps", .kind = BENCH_OPT_SIZE, .dst = &reps, .arg = "N", .min = 1,
         .max = MAX_REPS, .help = "repetitions, the medians are printed", .def = "15"},
        BENCH_OPT_MIN_MS(&o.timing.min_rep_sec, "10", "2"),
        {.name = "seed", .kind = BENCH_OPT_SIZE, .dst = &o.seed, .arg = "N",
         .help = "seed of the indexed shape's random blocks", .def = "1"},
        {.name = "only", .kind = BENCH_OPT_TEXT, .dst = &o.only, .arg = "TEXT",
         .help = "run only the shapes whose name contains TEXT"},
        BENCH_OPT_NO_MPI(&o.use_mpi, "do not initialize MPI (MPI columns print n/a)"),
        BENCH_OPT_CPU_TIME(&cpu_time),
        BENCH_OPT_QUICKLY(&o.quick, "small sizes for the demo"),
    };
    const bench_command cmd = {
        .name = "types", .opts = opts, .nopts = BENCH_NOPTS(opts),
        .about = "  Pack/unpack GB/s of Tessera next to MPI_Pack/MPI_Unpack of the same MPI type.\n"};
    int status = bench_parse(&cmd, argc, argv, 0);
    if (status >= 0)
        return status;
    if (o.sub > o.array) {
        fprintf(stderr, "tessera: --array 1..2048 and 1 <= --sub <= --array\n");
        return 2;
    }
    o.timing.reps = (int)reps;
    bench_use_cpu_clock(cpu_time);

    bench_mpi m;
    if (bench_mpi_init(&m, o.use_mpi, NULL, NULL) != 0)
        return 1;
    int failures = 0, nst = 0;
    shape_times st[TYPES_NSHAPES];
    if (m.rank != 0)
        goto out; /* single-process benchmark: extra ranks idle */

    char b1[32];
    printf("tessera bench types: pack/unpack throughput, GB/s = 1e9 packed bytes per second\n");
    printf("  target %s packed per call, median of %d repetitions, each a palindrome of slots "
           "(T MPI hand hand MPI T, rotating) of >= %.0f ms; buffers warmed and shared by all, "
           "one untimed call first\n",
           bench_fmt_bytes(o.bytes, b1, sizeof b1), o.timing.reps, o.timing.min_rep_sec * 1e3);
    bench_print_machine(stdout);
    printf("  timing: %s\n", bench_clock_name());
    printf("  MPI: %s%s\n", m.library,
           m.size > 1 ? " (extra ranks idle: this benchmark is single-process)" : "");
    printf("  T/MPI, T/hand = median over the repetitions of Tessera's throughput over MPI's and "
           "over the hand-written loop's in the same repetition (>1 means Tessera is faster);\n"
           "  hand = a C loop written for that one shape; type mem = bytes of the Tessera type "
           "(tess_type_footprint);\n"
           "  regions = contiguous regions per call (adjacent ones merged); check = tess_pack vs"
           " MPI_Pack, and every pack/unpack vs a brute-force reference\n\n");

    static const char *const heads[] = {"shape",   "bytes/call", "regions", "type mem",
                                        "pack T",  "MPI",        "T/MPI",   "hand",
                                        "T/hand",  "unpk T",     "MPI",     "T/MPI",
                                        "hand",    "T/hand",     "check"};
    static const int widths[] = {22, 10, 8, 8, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 5};
    bench_table tab;
    bench_table_init(&tab, stdout, 15, heads, widths);
    bench_table_header(&tab);

    for (int i = 0; i < TYPES_NSHAPES; i++) {
        shape s;
        memset(&s, 0, sizeof s);
        int mk = types_make_shape(i, &s, &o, m.active);
        if (mk == 0 && o.only && !strstr(s.name, o.only)) {
            shape_free(&s);
            continue;
        }
        if (mk != 0) {
            bench_table_cell(&tab, "%s", s.name[0] ? s.name : "(shape)");
            bench_table_cell(&tab, "%s", "could not build (see above)");
            bench_table_end_row(&tab);
            failures++;
        } else {
            run_shape(&s, &o, &m, &tab, &st[nst++], &failures);
        }
        shape_free(&s);
    }
    print_spread(st, nst);
    if (failures)
        printf("\n%d shape(s) failed a check or could not run\n", failures);
out:
    bench_mpi_finalize(&m);
    return failures ? 1 : 0;
}
