/*
 * types.c - `tessera bench types`: pack and unpack throughput of Tessera's datatype engine
 * next to MPI_Pack/MPI_Unpack of the same MPI datatype, built from the same parameters.
 *
 * For each shape the benchmark builds (1) the Tessera type, (2) the equivalent MPI type and
 * (3) a reference list of (offset, length) regions computed by brute force straight from the
 * constructor definitions. Before timing, tess_pack's output is compared with the reference
 * pack and with MPI_Pack's output, and both unpacks with the reference unpack: the check column
 * says ok or what failed. Then pack and unpack are timed for both libraries, alternating
 * repetitions, and against a hand-written loop for the shape (what a C programmer writes for
 * that one layout, compiled with the benchmark), alternating again; the medians are printed in
 * GB/s (1e9 bytes of packed data per second) with the ratios of each pair.
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

/* ---------------------------------------------------------------- one shape */

static void put_gbs(bench_table *t, int64_t bytes, double sec)
{
    if (sec > 0)
        bench_table_cell(t, "%.2f", (double)bytes / sec / 1e9);
    else
        bench_table_cell(t, "%s", "n/a");
}

static void put_ratio(bench_table *t, double tess_sec, double mpi_sec)
{
    if (tess_sec > 0 && mpi_sec > 0)
        bench_table_cell(t, "%.2fx", mpi_sec / tess_sec);
    else
        bench_table_cell(t, "%s", "n/a");
}

/* Build buffers, check, time, print one row. Returns 0, or -1 when the shape could not run. */
static int run_shape(shape *s, const types_opts *o, const bench_mpi *m, bench_table *tab,
                     int *failures)
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
    unsigned char *pk_ref = bench_alloc(s->packed, 0), *pk_t = bench_alloc(s->packed, 0);
    unsigned char *pk_m = bench_alloc(s->packed, 0), *pk_h = bench_alloc(s->packed, 0);
    char check[96] = "";
    double t_pack = 0, m_pack = 0, t_unpack = 0, m_unpack = 0;
    double t_pack2 = 0, h_pack = 0, t_unpack2 = 0, h_unpack = 0;
    if (!src || !dst || !ref_dst || !pk_ref || !pk_t || !pk_m || !pk_h) {
        bench_fail("types: %s: out of memory (%lld-byte buffers)", s->name, (long long)s->span);
        goto done;
    }
    bench_fill_random(src, s->span, 42);
    op_ctx ct = {s, src, pk_t, dst};
    op_ctx cm = {s, src, pk_m, dst};
    op_ctx ch = {s, src, pk_h, dst};

    /* correctness first: reference pack/unpack against both libraries and the hand loop */
    ref_pack(s, src, pk_ref);
    ref_unpack(s, pk_ref, ref_dst);
    int bad_tp = 0, bad_tu = 0, bad_mp = 0, bad_mu = 0, t_ne_m = 0, bad_h = 0;
    op_hand_pack(&ch);
    bad_h = memcmp(pk_h, pk_ref, (size_t)s->packed) != 0;
    memset(dst, 0, (size_t)s->span);
    op_hand_unpack(&ch);
    bad_h = bad_h || memcmp(dst, ref_dst, (size_t)s->span) != 0;
    if (op_tess_pack(&ct) != 0)
        goto done;
    bad_tp = memcmp(pk_t, pk_ref, (size_t)s->packed) != 0;
    memset(dst, 0, (size_t)s->span);
    if (op_tess_unpack(&ct) != 0)
        goto done;
    bad_tu = memcmp(dst, ref_dst, (size_t)s->span) != 0;
#ifdef TESS_BENCH_MPI
    if (use_mpi) {
        if (op_mpi_pack(&cm) != 0)
            goto done;
        bad_mp = memcmp(pk_m, pk_ref, (size_t)s->packed) != 0;
        t_ne_m = memcmp(pk_t, pk_m, (size_t)s->packed) != 0;
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
    /* unpack input for the timed runs: the reference packed stream */
    memcpy(pk_t, pk_ref, (size_t)s->packed);
    memcpy(pk_m, pk_ref, (size_t)s->packed);
    memcpy(pk_h, pk_ref, (size_t)s->packed);

    bench_fn mp = NULL, mu = NULL;
#ifdef TESS_BENCH_MPI
    if (use_mpi) {
        mp = op_mpi_pack;
        mu = op_mpi_unpack;
    }
#endif
    if (bench_time_pair(op_tess_pack, &ct, mp, &cm, &o->timing, &t_pack, &m_pack) != 0)
        goto done;
    /* pack leaves its output in pk_t/pk_m: restore the unpack input (identical if checks ok) */
    memcpy(pk_t, pk_ref, (size_t)s->packed);
    memcpy(pk_m, pk_ref, (size_t)s->packed);
    if (bench_time_pair(op_tess_unpack, &ct, mu, &cm, &o->timing, &t_unpack, &m_unpack) != 0)
        goto done;
    /* Tessera against the hand loop: a second pair of interleaved runs */
    memcpy(pk_t, pk_ref, (size_t)s->packed);
    if (bench_time_pair(op_tess_pack, &ct, op_hand_pack, &ch, &o->timing, &t_pack2, &h_pack) != 0)
        goto done;
    memcpy(pk_t, pk_ref, (size_t)s->packed);
    memcpy(pk_h, pk_ref, (size_t)s->packed);
    if (bench_time_pair(op_tess_unpack, &ct, op_hand_unpack, &ch, &o->timing, &t_unpack2,
                        &h_unpack) != 0)
        goto done;

    char b1[32];
    bench_table_cell(tab, "%s", s->name);
    bench_table_cell(tab, "%s", bench_fmt_bytes(s->packed, b1, sizeof b1));
    bench_table_cell(tab, "%lld", (long long)s->nreg);
    bench_table_cell(tab, "%lld", (long long)tess_type_footprint(s->tt));
    put_gbs(tab, s->packed, t_pack);
    put_gbs(tab, s->packed, use_mpi ? m_pack : 0);
    put_ratio(tab, t_pack, use_mpi ? m_pack : 0);
    put_gbs(tab, s->packed, h_pack);
    put_ratio(tab, t_pack2, h_pack);
    put_gbs(tab, s->packed, t_unpack);
    put_gbs(tab, s->packed, use_mpi ? m_unpack : 0);
    put_ratio(tab, t_unpack, use_mpi ? m_unpack : 0);
    put_gbs(tab, s->packed, h_unpack);
    put_ratio(tab, t_unpack2, h_unpack);
    bench_table_cell(tab, "%s", check);
    bench_table_end_row(tab);
    rc = 0;
done:
    if (rc != 0) {
        bench_table_cell(tab, "%s", s->name);
        bench_table_cell(tab, "%s", "error (see above)");
        bench_table_end_row(tab);
        (*failures)++;
    }
    bench_free(src);
    bench_free(dst);
    bench_free(ref_dst);
    bench_free(pk_ref);
    bench_free(pk_t);
    bench_free(pk_m);
    bench_free(pk_h);
    return rc;
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
        BENCH_OPT_REPS(&reps, 1000, NULL),
        BENCH_OPT_MIN_MS(&o.timing.min_rep_sec, "20", "2"),
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
    int failures = 0;
    if (m.rank != 0)
        goto out; /* single-process benchmark: extra ranks idle */

    char b1[32];
    printf("tessera bench types: pack/unpack throughput, GB/s = 1e9 packed bytes per second\n");
    printf("  target %s packed per call, median of %d repetitions of >= %.0f ms each, buffers "
           "warmed, one untimed call first\n",
           bench_fmt_bytes(o.bytes, b1, sizeof b1), o.timing.reps, o.timing.min_rep_sec * 1e3);
    bench_print_machine(stdout);
    printf("  timing: %s\n", bench_clock_name());
    printf("  MPI: %s%s\n", m.library,
           m.size > 1 ? " (extra ranks idle: this benchmark is single-process)" : "");
    printf("  T/MPI, T/hand = Tessera's throughput over MPI's and over the hand-written loop's, "
           "each from its own interleaved runs (>1 means Tessera is faster);\n"
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
            run_shape(&s, &o, &m, &tab, &failures);
        }
        shape_free(&s);
    }
    if (failures)
        printf("\n%d shape(s) failed a check or could not run\n", failures);
out:
    bench_mpi_finalize(&m);
    return failures ? 1 : 0;
}
