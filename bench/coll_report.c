/*
 * coll_report.c - what the collective runner prints (see coll_impl.h): the counters reduced over
 * ranks, the access in paper 000 Table I terms, the case's summary row, and the detail tables
 * (every method, the best against MPI-IO, Table I formulas against measurements, request sizes).
 */
#include "coll_impl.h"

#include <stdlib.h>
#include <string.h>

/* ================================================================= stats */



int coll_reduce_stats(const tess_stats *s, int nprocs, rstats *r)
{
    int64_t v[S_N] = {s->desired_bytes, s->accessed_bytes, s->io_ops,
                      s->resent_bytes,  s->regions,        s->lock_ops,
                      s->request_bytes, s->flat_request_bytes};
    int64_t sum[S_N], mx[S_N], mm[1], mn[1];
    int has = s->io_ops > 0;
    mn[0] = has ? s->min_access : INT64_MAX;
    mm[0] = has ? s->max_access : 0;
    double d[2] = {s->io_seconds, s->exchange_seconds}, dm[2];
    int64_t act = has;
    if (MPI_Allreduce(v, sum, S_N, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS ||
        MPI_Allreduce(v, mx, S_N, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS)
        return coll_fail("stats: MPI_Allreduce failed");
    int64_t gmin = 0, gmax = 0, gact = 0;
    if (MPI_Allreduce(&mn[0], &gmin, 1, MPI_INT64_T, MPI_MIN, MPI_COMM_WORLD) != MPI_SUCCESS ||
        MPI_Allreduce(&mm[0], &gmax, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS ||
        MPI_Allreduce(&act, &gact, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS ||
        MPI_Allreduce(d, dm, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS)
        return coll_fail("stats: MPI_Allreduce failed");
    for (int i = 0; i < S_N; i++) {
        r->mean[i] = (double)sum[i] / nprocs;
        r->max[i] = mx[i];
    }
    r->min_access = gmin == INT64_MAX ? 0 : gmin;
    r->max_access = gmax;
    r->io_s = dm[0];
    r->xchg_s = dm[1];
    r->active = (int)gact;
    return 0;
}


/* The MPI-IO hints worth showing, and which implementation it is. */
void coll_mpi_describe(shared *s, MPI_File fh)
{
    static const char *const keys[] = {"cb_nodes", "cb_buffer_size", "romio_cb_read",
                                       "romio_cb_write", "romio_ds_read", "romio_ds_write",
                                       "striping_unit"};
    MPI_Info info;
    size_t len = 0;
    int romio = 0, tessera = 0;
    s->mpi_hints[0] = '\0';
    if (MPI_File_get_info(fh, &info) == MPI_SUCCESS) {
        char method[64];
        if (MPI_Info_get(info, "tess_method", (int)sizeof method - 1, method, &tessera) !=
            MPI_SUCCESS)
            tessera = 0;
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
            char val[256];
            int flag = 0;
            if (MPI_Info_get(info, keys[i], (int)sizeof val - 1, val, &flag) == MPI_SUCCESS &&
                flag) {
                int k = snprintf(s->mpi_hints + len, sizeof s->mpi_hints - len, "%s%s=%s",
                                 len ? " " : "", keys[i], val);
                if (k > 0 && (size_t)k < sizeof s->mpi_hints - len)
                    len += (size_t)k;
                if (strncmp(keys[i], "romio_", 6) == 0)
                    romio = 1;
            }
        }
        MPI_Info_free(&info);
    }
    if (!len)
        snprintf(s->mpi_hints, sizeof s->mpi_hints, "(none of cb_nodes, cb_buffer_size, romio_* "
                                                    "reported by MPI_File_get_info)");
    const char *io = getenv("OMPI_MCA_io");
    if (tessera) { /* libtessera_mpiio preloaded or linked: its hints name it */
        snprintf(s->mpi_component, sizeof s->mpi_component, "Tessera (libtessera_mpiio)");
        return;
    }
#if defined(OPEN_MPI)
    if (io && *io)
        snprintf(s->mpi_component, sizeof s->mpi_component, "%s", io);
    else
        snprintf(s->mpi_component, sizeof s->mpi_component, "%s (Open MPI default)",
                 romio ? "romio" : "ompio");
#elif defined(MPICH)
    (void)io;
    snprintf(s->mpi_component, sizeof s->mpi_component, "ROMIO (MPICH%s)",
             romio ? "" : "; no romio_* hints reported");
#else
    (void)io;
    snprintf(s->mpi_component, sizeof s->mpi_component, "%s", romio ? "ROMIO" : "unknown");
#endif
}


/* ================================================================ output */

static const char *fmt_sz(double n, char *buf, size_t cap)
{
    if (n < 10240)
        snprintf(buf, cap, "%.0f", n);
    else if (n < 10.0 * 1048576)
        snprintf(buf, cap, "%.1fK", n / 1024);
    else if (n < 10.0 * 1073741824)
        snprintf(buf, cap, "%.2fM", n / 1048576);
    else
        snprintf(buf, cap, "%.2fG", n / 1073741824);
    return buf;
}

static const char *fmt_n(double n, char *buf, size_t cap)
{
    if (n < 100 && n != (double)(int64_t)n)
        snprintf(buf, cap, "%.2f", n); /* a mean over ranks: 0.25 is not 0 */
    else if (n < 1e6)
        snprintf(buf, cap, "%.0f", n);
    else
        snprintf(buf, cap, "%.4gM", n / 1e6);
    return buf;
}


static double mean_over_ranks(double v, int nprocs)
{
    double sum = 0;
    if (MPI_Allreduce(&v, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS)
        return -1;
    return sum / nprocs;
}


/* Collective: the Table I inputs and the request sizes from the per-call analysis. */
int coll_summarize(const shared *s, const call_info *ci, access_sum *a)
{
    const coll_pattern *p = s->p;
    const coll_opts *o = s->o;
    int np = s->env->size;
    a->ds_rd = o->ds_read ? o->ds_read : INT64_C(4) << 20;
    a->ds_wr = o->ds_write ? o->ds_write : INT64_C(512) << 10;
    a->tp_buf = o->cb_buffer_size ? o->cb_buffer_size : INT64_C(16) << 20;
    a->pairs = o->list_pairs ? o->list_pairs : 64;
    a->ds_rd_set = o->ds_read != 0;
    a->ds_wr_set = o->ds_write != 0;
    a->tp_set = o->cb_buffer_size != 0;
    a->pairs_set = o->list_pairs != 0;
    int64_t *first = malloc(sizeof *first * (size_t)p->ncalls);
    int64_t *end = malloc(sizeof *end * (size_t)p->ncalls);
    int64_t *nc = malloc(sizeof *nc * (size_t)p->ncalls);
    int64_t *enc_view = malloc(sizeof *enc_view * (size_t)p->nviews);
    a->agg_ext = malloc(sizeof *a->agg_ext * (size_t)p->ncalls);
    a->agg_n_call = malloc(sizeof *a->agg_n_call * (size_t)p->ncalls);
    int rc = -1;
    if (!first || !end || !nc || !enc_view || !a->agg_ext || !a->agg_n_call) {
        coll_fail("out of memory");
        goto out;
    }
    for (int v = 0; v < p->nviews; v++) {
        size_t len = 0;
        int trc = tess_type_encode(p->views[v].filetype.t, NULL, 0, &len);
        if (trc != 0 && trc != TESS_ERR_TRUNCATE) {
            coll_tfail(trc, "tess_type_encode");
            goto out;
        }
        enc_view[v] = (int64_t)len;
    }
    a->enc_first = enc_view[p->calls[0].view];
    double n = 0, frc = 0, pieces = 0, fext = 0, srd = 0, swr = 0, swa = 0, lops = 0, enc = 0,
           flat = 0;
    int64_t maxfr = 0, minfr = INT64_MAX;
    for (int c = 0; c < p->ncalls; c++) {
        const call_info *k = &ci[c];
        first[c] = k->n ? k->first : INT64_MAX;
        end[c] = k->n ? k->end : 0;
        nc[c] = k->n;
        if (!k->n)
            continue;
        int64_t ext = k->end - k->first;
        n += (double)k->n;
        frc += (double)k->frc;
        pieces += (double)k->pieces;
        fext += (double)ext;
        srd += (double)coll_ceil_div(ext, a->ds_rd);
        int holes = ext > k->n;
        swr += (double)(coll_ceil_div(ext, a->ds_wr) * (holes ? 2 : 1));
        swa += (double)(ext * (holes ? 2 : 1));
        lops += (double)coll_ceil_div(k->frc, a->pairs);
        if (k->max_fr > maxfr)
            maxfr = k->max_fr;
        if (k->min_fr < minfr)
            minfr = k->min_fr;
        enc += (double)(enc_view[p->calls[c].view] + 24);
        flat += 16.0 * (double)k->frc;
    }
    if (MPI_Allreduce(first, a->agg_ext, p->ncalls, MPI_INT64_T, MPI_MIN, MPI_COMM_WORLD) !=
            MPI_SUCCESS ||
        MPI_Allreduce(MPI_IN_PLACE, end, p->ncalls, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD) !=
            MPI_SUCCESS ||
        MPI_Allreduce(nc, a->agg_n_call, p->ncalls, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD) !=
            MPI_SUCCESS) {
        coll_fail("MPI_Allreduce failed");
        goto out;
    }
    a->agg_n = 0;
    for (int c = 0; c < p->ncalls; c++) {
        a->agg_ext[c] = end[c] > 0 ? end[c] - a->agg_ext[c] : 0;
        a->agg_n += (double)a->agg_n_call[c];
    }
    a->n = mean_over_ranks(n, np);
    a->frc = mean_over_ranks(frc, np);
    a->pieces = mean_over_ranks(pieces, np);
    a->fext = mean_over_ranks(fext, np);
    a->sieve_rd_ops = mean_over_ranks(srd, np);
    a->sieve_wr_ops = mean_over_ranks(swr, np);
    a->sieve_wr_acc = mean_over_ranks(swa, np);
    a->list_ops = mean_over_ranks(lops, np);
    a->enc = mean_over_ranks(enc, np);
    a->flat = mean_over_ranks(flat, np);
    a->enc_max = coll_over_ranks((int64_t)enc, MPI_MAX);
    a->flat_max = coll_over_ranks((int64_t)flat, MPI_MAX);
    a->max_fr = coll_over_ranks(maxfr, MPI_MAX);
    a->min_fr = coll_over_ranks(minfr, MPI_MIN);
    rc = 0;
out:
    free(first);
    free(end);
    free(nc);
    free(enc_view);
    return rc;
}

static void print_main_table(FILE *out, const access_sum *a, const mres *res)
{
    static const char *const heads[] = {"method",  "op",       "MB/s",    "vs MPI",  "reps",
                                        "desired", "accessed", "acc_max", "io_ops",  "ops_max",
                                        "resent",  "regions",  "locks",   "min_acc", "max_acc",
                                        "io_s",    "xchg_s",   "check"};
    static const int widths[] = {13, 5, 8, 6, 7, 8, 8, 8, 7, 7, 8, 7, 6, 7, 7, 7, 7, 6};
    bench_table t;
    bench_table_init(&t, out, 18, heads, widths);
    bench_table_header(&t);
    const mres *mpi = &res[COLL_M_MPI];
    char b[32];
    for (int m = 0; m < COLL_NMETHODS; m++) {
        const mres *r = &res[m];
        if (!r->selected)
            continue;
        for (int op = 0; op < 2; op++) {
            bench_table_cell(&t, "%s", op == 0 ? coll_method_names[m] : "");
            bench_table_cell(&t, "%s", op == 0 ? "write" : "read");
            if (r->unavailable || !(op == 0 ? r->wdone : r->rdone)) {
                bench_table_cell(&t, "%s", r->unavailable ? "n/a" : "FAILED");
                bench_table_end_row(&t);
                fprintf(out, "    (%s%s)\n", r->unavailable ? "not in this library: " : "",
                       r->why[0] ? r->why : "see messages above");
                break;
            }
            double sec = op == 0 ? r->wsec : r->rsec;
            double msec = mpi->ran ? (op == 0 ? mpi->wsec : mpi->rsec) : 0;
            bench_table_cell(&t, "%.1f", sec > 0 ? a->agg_n / sec / 1e6 : 0.0);
            if (m == COLL_M_MPI)
                bench_table_cell(&t, "%s", "-");
            else if (msec > 0 && sec > 0)
                bench_table_cell(&t, "%.2fx", msec / sec);
            else
                bench_table_cell(&t, "%s", "n/a");
            if ((op == 0 ? r->wreps : r->rreps) == 0)
                bench_table_cell(&t, "%s", "warm"); /* the warm-up op only (over budget) */
            else
                bench_table_cell(&t, "%dx%lld", op == 0 ? r->wreps : r->rreps,
                                 (long long)(op == 0 ? r->witers : r->riters));
            const rstats *st = op == 0 ? &r->ws : &r->rs;
            if (r->have_stats) {
                bench_table_cell(&t, "%s", fmt_sz(st->mean[S_DES], b, sizeof b));
                bench_table_cell(&t, "%s", fmt_sz(st->mean[S_ACC], b, sizeof b));
                bench_table_cell(&t, "%s", fmt_sz((double)st->max[S_ACC], b, sizeof b));
                bench_table_cell(&t, "%s", fmt_n(st->mean[S_OPS], b, sizeof b));
                bench_table_cell(&t, "%s", fmt_n((double)st->max[S_OPS], b, sizeof b));
                bench_table_cell(&t, "%s", fmt_sz(st->mean[S_RES], b, sizeof b));
                bench_table_cell(&t, "%s", fmt_n(st->mean[S_REG], b, sizeof b));
                bench_table_cell(&t, "%s", fmt_n(st->mean[S_LCK], b, sizeof b));
                bench_table_cell(&t, "%s", fmt_sz((double)st->min_access, b, sizeof b));
                bench_table_cell(&t, "%s", fmt_sz((double)st->max_access, b, sizeof b));
                bench_table_cell(&t, "%.4f", st->io_s);
                bench_table_cell(&t, "%.4f", st->xchg_s);
            } else {
                for (int i = 0; i < 12; i++)
                    bench_table_cell(&t, "%s", "-");
            }
            const char *chk = op == 0 ? r->wcheck : r->rcheck;
            if (m == COLL_M_MPI)
                bench_table_cell(&t, "%s*", chk);
            else
                bench_table_cell(&t, "%s", chk);
            bench_table_end_row(&t);
        }
    }
}

/* The best Tessera method of one direction among methods [from, COLL_NMETHODS): index or -1. */
static int best_of(const mres *res, int op, int from)
{
    int best = -1;
    for (int m = from; m < COLL_NMETHODS; m++) {
        const mres *r = &res[m];
        if (!r->selected || !r->ran || r->unavailable)
            continue;
        double sec = op == 0 ? r->wsec : r->rsec;
        if (sec > 0 && (best < 0 || sec < (op == 0 ? res[best].wsec : res[best].rsec)))
            best = m;
    }
    return best;
}

static void print_summary(FILE *out, const shared *s, const access_sum *a, const mres *res)
{
    const mres *mpi = &res[COLL_M_MPI];
    double ratio[2][2] = {{0, 0}, {0, 0}};
    fprintf(out, "\n");
    for (int kind = 0; kind < 2; kind++)
        for (int op = 0; op < 2; op++) {
            /* kind 0: every Tessera method; 1: the collective ones (tp-*, auto), the
               like-for-like comparison with MPI_File_*_at_all */
            int b = best_of(res, op, kind == 0 ? COLL_M_NAIVE : COLL_M_TP_EVEN);
            const char *dir = op == 0 ? "write" : "read ";
            const char *what = kind == 0 ? "best Tessera" : "best collective";
            if (b < 0) {
                fprintf(out, "%-15s %s: none ran\n", what, dir);
                continue;
            }
            double sec = op == 0 ? res[b].wsec : res[b].rsec;
            fprintf(out, "%-15s %s: %-13s %9.1f MB/s", what, dir, coll_method_names[b],
                   a->agg_n / sec / 1e6);
            if (mpi->selected && mpi->ran && (op == 0 ? mpi->wdone : mpi->rdone)) {
                double msec = op == 0 ? mpi->wsec : mpi->rsec;
                ratio[kind][op] = msec / sec;
                fprintf(out, "   MPI-IO %9.1f MB/s   Tessera/MPI-IO = %.2fx%s\n",
                       a->agg_n / msec / 1e6, ratio[kind][op],
                       ratio[kind][op] < 1.0 ? "   <-- Tessera BEHIND" : "");
            } else {
                fprintf(out, "   (no MPI-IO figure)\n");
            }
        }
    fprintf(out, "RATIO workload=%s case=\"%s\" np=%d mpiio=\"%s\" write=%.2f read=%.2f"
           " coll_write=%.2f coll_read=%.2f\n",
           s->o->workload, s->p->tag, s->env->size, s->mpi_component, ratio[0][0], ratio[0][1],
           ratio[1][0], ratio[1][1]);
}

static const char *match_text(double f, double m, int at_least)
{
    if (f < 0)
        return "-";
    if (at_least)
        return m >= f * 0.999 ? "yes" : "no";
    double tol = 0.1 * f + 1;
    return (m >= f - tol && m <= f + tol) ? "yes" : "no";
}

static void print_table1(FILE *out, const shared *s, const access_sum *a, const mres *res)
{
    char b1[32], b2[32], b3[32], b4[32], b5[32];
    int np = s->env->size;
    fprintf(out, "\npaper 000 Table I: formula next to measured (per client per op; mean over ranks for"
           " the independent methods;\n  two-phase: per aggregator, compared with the max over"
           " ranks; A = ranks with storage calls in the measured op)\n");
    fprintf(out, "  inputs: n = %s, fr count = %s, fr size = %s..%s, file ext = %s (per client, mean"
           " over %d ranks incl. idle ones)\n",
           fmt_sz(a->n, b1, sizeof b1), fmt_n(a->frc, b2, sizeof b2),
           fmt_sz((double)a->min_fr, b3, sizeof b3), fmt_sz((double)a->max_fr, b4, sizeof b4),
           fmt_sz(a->fext, b5, sizeof b5), np);
    double aggext = 0;
    for (int c = 0; c < s->p->ncalls; c++)
        aggext += (double)a->agg_ext[c];
    fprintf(out, "  agg file ext = %s (sum over the %d call(s) of one op); ds buffer = %s read / %s"
           " write%s; tp buffer = %s%s; fr per access = %lld%s\n",
           fmt_sz(aggext, b1, sizeof b1), s->p->ncalls, fmt_sz((double)a->ds_rd, b2, sizeof b2),
           fmt_sz((double)a->ds_wr, b3, sizeof b3),
           a->ds_rd_set || a->ds_wr_set ? "" : " (library defaults)",
           fmt_sz((double)a->tp_buf, b4, sizeof b4), a->tp_set ? "" : " (cb_buffer_size default)",
           (long long)a->pairs, a->pairs_set ? "" : " (tess_list_max_pairs default)");
    static const char *const heads[] = {"method", "op",     "n",      "acc(f)", "acc(m)",
                                        "ops(f)", "ops(m)", "reg(f)", "reg(m)", "resent",
                                        "A",      "acc ok", "ops ok"};
    static const int widths[] = {13, 5, 8, 9, 8, 9, 7, 9, 7, 8, 3, 6, 6};
    bench_table t;
    bench_table_init(&t, out, 13, heads, widths);
    bench_table_header(&t);
    for (int m = COLL_M_NAIVE; m < COLL_NMETHODS; m++) {
        const mres *r = &res[m];
        if (!r->selected || !r->ran || !r->have_stats || m == COLL_M_PMD || m == COLL_M_AUTO)
            continue;
        for (int op = 0; op < 2; op++) {
            const rstats *st = op == 0 ? &r->ws : &r->rs;
            double accf = -1, opsf = -1, accm, opsm;
            char regf[40]; /* "<=" and a size */
            int at_least = 0, A = st->active;
            accm = st->mean[S_ACC];
            opsm = st->mean[S_OPS];
            switch (m) {
            case COLL_M_NAIVE:
                accf = a->n;
                opsf = a->frc;
                at_least = 1;
                snprintf(regf, sizeof regf, "<=%s", fmt_sz((double)a->max_fr, b1, sizeof b1));
                break;
            case COLL_M_SIEVE:
                accf = op == 0 ? a->sieve_wr_acc : a->fext;
                opsf = op == 0 ? a->sieve_wr_ops : a->sieve_rd_ops;
                snprintf(regf, sizeof regf, "<=%s",
                         fmt_sz((double)(op == 0 ? a->ds_wr : a->ds_rd), b1, sizeof b1));
                break;
            case COLL_M_LIST:
                accf = a->n;
                opsf = a->list_ops;
                snprintf(regf, sizeof regf, "%s", fmt_sz((double)a->max_fr, b1, sizeof b1));
                break;
            default: { /* two-phase */
                accm = (double)st->max[S_ACC];
                opsm = (double)st->max[S_OPS];
                if (A < 1) {
                    snprintf(regf, sizeof regf, "-");
                    break;
                }
                double acc = 0, ops = 0;
                int64_t maxrealm = 0;
                for (int c = 0; c < s->p->ncalls; c++) {
                    int64_t e = a->agg_ext[c];
                    int holes = op == 0 && a->agg_n_call[c] < e;
                    acc += (double)e / A * (holes ? 2 : 1);
                    ops += (double)(coll_ceil_div(e, (int64_t)A * a->tp_buf) * (holes ? 2 : 1));
                    if (coll_ceil_div(e, A) > maxrealm)
                        maxrealm = coll_ceil_div(e, A);
                }
                accf = acc;
                opsf = ops;
                snprintf(regf, sizeof regf, "<=%s",
                         fmt_sz((double)(maxrealm < a->tp_buf ? maxrealm : a->tp_buf), b1,
                                sizeof b1));
                break;
            }
            }
            bench_table_cell(&t, "%s", op == 0 ? coll_method_names[m] : "");
            bench_table_cell(&t, "%s", op == 0 ? "write" : "read");
            bench_table_cell(&t, "%s", fmt_sz(a->n, b1, sizeof b1));
            bench_table_cell(&t, "%s", accf < 0 ? "-" : fmt_sz(accf, b2, sizeof b2));
            bench_table_cell(&t, "%s", fmt_sz(accm, b3, sizeof b3));
            if (opsf < 0)
                bench_table_cell(&t, "%s", "-");
            else
                bench_table_cell(&t, "%s%s", at_least ? ">=" : "", fmt_n(opsf, b4, sizeof b4));
            bench_table_cell(&t, "%s", fmt_n(opsm, b5, sizeof b5));
            bench_table_cell(&t, "%s", regf);
            bench_table_cell(&t, "%s", fmt_sz((double)st->max_access, b1, sizeof b1));
            bench_table_cell(&t, "%s", fmt_sz(st->mean[S_RES], b2, sizeof b2));
            bench_table_cell(&t, "%d", A);
            bench_table_cell(&t, "%s", match_text(accf, accm, 0));
            bench_table_cell(&t, "%s", match_text(opsf, opsm, at_least));
            bench_table_end_row(&t);
        }
    }
    fprintf(out, "  (f) paper formula, (m) measured; sieve and two-phase writes count a read-modify-"
           "write (x2) for calls whose\n  access has holes; naive's formula is a lower bound"
           " (one call per piece contiguous in file and memory: %s per client)\n",
           fmt_n(a->pieces, b1, sizeof b1));
}

static void print_requests(FILE *out, const access_sum *a, const mres *res)
{
    int any = 0;
    for (int m = COLL_M_TP_EVEN; m <= COLL_M_AUTO; m++)
        any |= res[m].selected && res[m].ran && res[m].have_stats;
    if (!any)
        return;
    char b1[32], b2[32], b3[32], b4[32], b5[32];
    fprintf(out, "\nrequest bytes sent: datatype-described vs flattened, per client per op (tess_stats "
           "request_bytes: what the client sent to\n  aggregators, its encoded filetype or pairs "
           "where smaller; flat_request_bytes: 16 B per file region cut at realm ends)\n");
    static const char *const heads[] = {"method", "op",  "described", "desc_max", "flattened",
                                        "flat_max", "flat/desc"};
    static const int widths[] = {13, 5, 10, 10, 10, 10, 9};
    bench_table t;
    bench_table_init(&t, out, 7, heads, widths);
    bench_table_header(&t);
    for (int m = COLL_M_TP_EVEN; m <= COLL_M_AUTO; m++) {
        const mres *r = &res[m];
        if (!r->selected || !r->ran || !r->have_stats)
            continue;
        for (int op = 0; op < 2; op++) {
            const rstats *st = op == 0 ? &r->ws : &r->rs;
            bench_table_cell(&t, "%s", op == 0 ? coll_method_names[m] : "");
            bench_table_cell(&t, "%s", op == 0 ? "write" : "read");
            bench_table_cell(&t, "%s", fmt_sz(st->mean[S_REQ], b1, sizeof b1));
            bench_table_cell(&t, "%s", fmt_sz((double)st->max[S_REQ], b2, sizeof b2));
            bench_table_cell(&t, "%s", fmt_sz(st->mean[S_FLAT], b3, sizeof b3));
            bench_table_cell(&t, "%s", fmt_sz((double)st->max[S_FLAT], b4, sizeof b4));
            if (st->mean[S_REQ] > 0)
                bench_table_cell(&t, "%.1fx", st->mean[S_FLAT] / st->mean[S_REQ]);
            else
                bench_table_cell(&t, "%s", "-");
            bench_table_end_row(&t);
        }
    }
    fprintf(out, "  cross-check computed by this benchmark from the access: encoded view %s (24 B + "
           "tess_type_encode of the filetype,\n  %lld B for the first view, per call) per "
           "aggregator reached, vs %s flattened (16 B x %s file regions, not cut at realm"
           " ends)\n",
           fmt_sz(a->enc, b1, sizeof b1), (long long)a->enc_first, fmt_sz(a->flat, b2, sizeof b2),
           fmt_n(a->frc, b5, sizeof b5));
}

/* ================================================================ a case */

void coll_summary_begin(bench_table *sum, const coll_opts *o, int nprocs)
{
    static const char *const heads[] = {"case", "write: best", "MB/s", "MPI-IO", "ratio",
                                        "read: best", "MB/s", "MPI-IO", "ratio"};
    static const int widths[] = {30, 13, 9, 9, 7, 13, 9, 9, 7};
    char ver[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    if (MPI_Get_library_version(ver, &len) != MPI_SUCCESS)
        snprintf(ver, sizeof ver, "unknown MPI library");
    ver[strcspn(ver, "\n\r,")] = '\0';
    if (o->rados) {
        static const char *const rheads[] = {"case", "delay us", "op", "datatype MB/s",
                                             "x list", "x naive", "req/c: datatype", "list",
                                             "naive"};
        static const int rwidths[] = {30, 9, 6, 14, 7, 8, 16, 7, 7};
        printf("tessera bench %s --driver rados: %d clients; MPI: %s; RADOS pool tessera\n",
               o->workload, nprocs, ver);
        printf("summary: datatype I/O against list I/O and naive (independent calls) at each "
               "added per-request delay; x = their time / datatype's, the median over rounds "
               "that alternate the methods (>1: datatype faster); req/c = RADOS requests per "
               "client and operation\n");
        bench_table_init(sum, stdout, 9, rheads, rwidths);
        bench_table_header(sum);
        return;
    }
    printf("tessera bench %s: %d processes; MPI: %s; %s figures; files in %s\n", o->workload,
           nprocs, ver, o->sync ? "synced" : "page-cache", o->dir);
    printf("summary: the fastest Tessera method against the MPI library's MPI-IO "
           "(MPI_File_*_at_all), MB/s; ratio = Tessera / MPI-IO\n");
    bench_table_init(sum, stdout, 9, heads, widths);
    bench_table_header(sum);
}

void coll_print_header(const shared *s, const access_sum *a, FILE *out)
{
    const coll_opts *o = s->o;
    const coll_pattern *p = s->p;
    char ver[MPI_MAX_LIBRARY_VERSION_STRING], b1[32], b2[32];
    int len = 0;
    if (MPI_Get_library_version(ver, &len) != MPI_SUCCESS)
        snprintf(ver, sizeof ver, "unknown MPI library");
    ver[strcspn(ver, "\n\r,")] = '\0';
    const char *io = getenv("OMPI_MCA_io");
    fprintf(out, "\n== tessera bench %s: %s ==\n%s", o->workload, p->title, p->notes);
    fprintf(out, "  %d processes; MPI: %s%s%s%s\n", s->env->size, ver,
            io ? " (OMPI_MCA_io=" : "", io ? io : "", io ? ")" : "");
    fprintf(out, "  one op = %d call(s) on %d view(s): %s desired (all ranks), file %s; files in"
                 " %s\n",
            p->ncalls, p->nviews, fmt_sz(a->agg_n, b1, sizeof b1),
            fmt_sz((double)s->file_size, b2, sizeof b2), o->dir);
    fprintf(out, "  %s figures: %s; all methods' files are open at once;"
                 " each method runs one untimed op,\n  then the timed repetitions of all methods"
                 " are interleaved (repetition 1 of each, then 2, ...) so that load drift hits"
                 " all alike;\n  a repetition: MPI_Barrier, I ops, MPI_Barrier; one op's time ="
                 " repetition / I, max over ranks; median of R printed (reps RxI;\n  I makes a"
                 " repetition last >= %.0f ms, R <= %lld cut to fit %.0f s; \"warm\": one op"
                 " exceeds the budget, the untimed op's time);\n  MB/s = 1e6 desired bytes (all"
                 " ranks) per second\n",
            o->sync ? "synced" : "page-cache",
            o->sync ? "every timed write includes tess_file_sync / MPI_File_sync"
                    : "nothing synced or dropped from the cache",
            o->min_rep * 1e3, (long long)o->reps, o->budget);
    fprintf(out, "  counters (tess_file_stats of the last timed op): per client = mean over ranks;"
                 " acc_max/ops_max = max over ranks;\n  min_acc/max_acc = min/max over ranks with"
                 " storage calls; io_s/xchg_s = max over ranks; sizes in bytes, K = KiB, M ="
                 " MiB\n");
    bench_print_machine(out);
}

/* The case's row of the summary table, and its figures for --results. */
static void summary_row(const shared *s, const access_sum *a, const mres *res)
{
    bench_table *t = s->o->summary;
    const mres *mpi = &res[COLL_M_MPI];
    bench_table_cell(t, "%s", s->p->tag);
    for (int op = 0; op < 2; op++) {
        int b = best_of(res, op, COLL_M_NAIVE);
        double msec = mpi->selected && mpi->ran && (op == 0 ? mpi->wdone : mpi->rdone)
                          ? (op == 0 ? mpi->wsec : mpi->rsec) : 0;
        double sec = b < 0 ? 0 : op == 0 ? res[b].wsec : res[b].rsec;
        bench_table_cell(t, "%s", b < 0 ? "none ran" : coll_method_names[b]);
        if (b >= 0)
            bench_table_cell(t, "%.1f", a->agg_n / sec / 1e6);
        else
            bench_table_cell(t, "%s", "-");
        if (msec > 0)
            bench_table_cell(t, "%.1f", a->agg_n / msec / 1e6);
        else
            bench_table_cell(t, "%s", "-");
        if (b >= 0 && msec > 0)
            bench_table_cell(t, "%.2fx", msec / sec);
        else
            bench_table_cell(t, "%s", "-");
        for (int m = 0; m < COLL_NMETHODS; m++) {
            const mres *r = &res[m];
            if (r->selected && r->ran && !r->unavailable && (op == 0 ? r->wdone : r->rdone))
                bench_result(s->o->report, s->p->tag, coll_method_names[m], m == COLL_M_MPI,
                             op == 0, op == 0 ? r->wsec : r->rsec, a->agg_n,
                             op == 0 ? r->wcheck : r->rcheck);
        }
    }
    bench_table_end_row(t);
}

void coll_print_results(const shared *s, const access_sum *a, const mres *res, FILE *out)
{
    summary_row(s, a, res);
    print_main_table(out, a, res);
    fprintf(out, "  check: write = the file against the expected image and the reference file"
                 " (%s's), read = every rank's buffer\n  (data and untouched holes);"
                 " * MPI-IO's checks are information only\n",
            s->have_ref ? coll_method_names[s->ref_method] : "none");
    if (res[COLL_M_MPI].selected)
        fprintf(out, "  MPI-IO: %s; hints: %s\n", s->mpi_component,
                s->mpi_hints[0] ? s->mpi_hints : "-");
    print_summary(out, s, a, res);
    if (s->p->table1)
        print_table1(out, s, a, res);
    print_requests(out, a, res);
    fflush(out);
}

void coll_print_test(const shared *s, const access_sum *a, const mres *res, int failures)
{
    const coll_opts *o = s->o;
    int nok = 0, nna = 0;
    char na[128] = "";
    for (int m = 1; m < COLL_NMETHODS; m++) {
        if (!res[m].selected)
            continue;
        if (res[m].unavailable) {
            nna++;
            size_t l = strlen(na);
            snprintf(na + l, sizeof na - l, "%s%s", l ? "," : "", coll_method_names[m]);
        } else if (res[m].ran && res[m].wok && res[m].rok) {
            nok++;
        }
    }
    if (!o->silent || failures) {
        printf("%s %s np=%d: %d Tessera method(s) verified (file bytes and reads)%s%s%s",
               o->workload, s->p->tag, s->env->size, nok, nna ? "; not in this library: " : "",
               na, failures ? "; FAILED" : "");
        if (res[COLL_M_MPI].selected)
            printf("; MPI-IO (information): file %s, read %s",
                   res[COLL_M_MPI].ran ? res[COLL_M_MPI].wcheck : "-",
                   res[COLL_M_MPI].ran ? res[COLL_M_MPI].rcheck : "-");
        printf("\n");
    }
    if (failures)
        print_main_table(stdout, a, res);
    fflush(stdout);
}
