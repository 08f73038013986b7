/*
 * coll_runner.c - the runner of the collective workloads (see coll_impl.h for the steps): the
 * operations of one method (views, calls, timed repetitions), the methods' files opened side by
 * side, the interleaved timed phases, and coll_run.
 */
#include "coll_impl.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { K_INDEP, K_COLL, K_MPI };

typedef struct runner {
    int kind;
    tess_file *tf;
    MPI_File mf;
    shared *s;
    int cur_view;
} runner;

static int r_set_view(runner *r, int vi)
{
    const coll_view *v = &r->s->p->views[vi];
    r->cur_view = vi;
    if (r->kind == K_MPI) {
        int rc = MPI_File_set_view(r->mf, (MPI_Offset)v->disp, v->etype.m, v->filetype.m,
                                   "native", MPI_INFO_NULL);
        return rc == MPI_SUCCESS ? 0 : coll_mfail(rc, "MPI_File_set_view");
    }
    int rc = tess_file_set_view(r->tf, v->disp, v->etype.t, v->filetype.t);
    return rc == 0 ? 0 : coll_tfail(rc, "tess_file_set_view");
}

static int r_call(runner *r, const coll_call *c, int write)
{
    coll_pattern *p = r->s->p;
    unsigned char *buf = (write ? r->s->wbuf : r->s->rbuf) + c->buf_off;
    const coll_type *mt = &p->mems[c->mem];
    int64_t want = c->count * tess_type_size(mt->t), got = 0;
    if (r->kind == K_MPI) {
        MPI_Status st;
        int rc = write ? MPI_File_write_at_all(r->mf, (MPI_Offset)c->offset, buf, (int)c->count,
                                               mt->m, &st)
                       : MPI_File_read_at_all(r->mf, (MPI_Offset)c->offset, buf, (int)c->count,
                                              mt->m, &st);
        if (rc != MPI_SUCCESS)
            return coll_mfail(rc, write ? "MPI_File_write_at_all" : "MPI_File_read_at_all");
        MPI_Count n = 0;
        if (MPI_Get_elements_x(&st, MPI_BYTE, &n) != MPI_SUCCESS)
            return coll_fail("MPI_Get_elements_x failed");
        got = (int64_t)n;
    } else {
        int rc;
        if (r->kind == K_COLL)
            rc = write ? tess_file_write_at_all(r->tf, c->offset, buf, c->count, mt->t, &got)
                       : tess_file_read_at_all(r->tf, c->offset, buf, c->count, mt->t, &got);
        else
            rc = write ? tess_file_write_at(r->tf, c->offset, buf, c->count, mt->t, &got)
                       : tess_file_read_at(r->tf, c->offset, buf, c->count, mt->t, &got);
        if (rc != 0)
            return coll_tfail(rc, r->kind == K_COLL
                                 ? (write ? "tess_file_write_at_all" : "tess_file_read_at_all")
                                 : (write ? "tess_file_write_at" : "tess_file_read_at"));
    }
    if (got != want)
        return coll_fail("%s moved %lld of %lld bytes", write ? "write" : "read", (long long)got,
                    (long long)want);
    return 0;
}

/* One operation: every call of the pattern. Collective calls are made on every rank even after
   a local error (so that no rank waits for another in a collective); independent I/O stops. */
static int r_op(runner *r, int write)
{
    coll_pattern *p = r->s->p;
    int err = 0;
    for (int i = 0; i < p->ncalls; i++) {
        const coll_call *c = &p->calls[i];
        if (c->view != r->cur_view && r_set_view(r, c->view) != 0)
            err = 1;
        if (r->kind == K_INDEP && (c->count == 0 || err))
            continue;
        if (r_call(r, c, write) != 0)
            err = 1;
    }
    if (write && r->s->o->sync) {
        if (r->kind == K_MPI) {
            int rc = MPI_File_sync(r->mf);
            if (rc != MPI_SUCCESS)
                err = 1, coll_mfail(rc, "MPI_File_sync");
        } else {
            int rc = tess_file_sync(r->tf);
            if (rc != 0)
                err = 1, coll_tfail(rc, "tess_file_sync");
        }
    }
    return err;
}

/*
 * One repetition on all ranks: MPI_Barrier, iters ops back to back, MPI_Barrier; *t gets the
 * max over ranks of that time divided by iters. The closing barrier matters for independent
 * methods on an oversubscribed machine: without it a rank that ran its ops while the others
 * were descheduled would report only its own share, not the span of the whole operation. With
 * reset, the counters are reset before the last op (so they describe one op). -1 if any rank
 * failed.
 */
static int r_rep(runner *r, int write, int64_t iters, int reset, double *t)
{
    if (MPI_Barrier(MPI_COMM_WORLD) != MPI_SUCCESS)
        return coll_fail("MPI_Barrier failed");
    double t0 = bench_now();
    int err = 0;
    /* every op runs even after an error: a rank that stopped early would leave the others
       waiting in a collective call */
    for (int64_t i = 0; i < iters; i++) {
        if (reset && i == iters - 1 && r->kind != K_MPI)
            tess_file_reset_stats(r->tf);
        err |= r_op(r, write);
    }
    if (MPI_Barrier(MPI_COMM_WORLD) != MPI_SUCCESS)
        return coll_fail("MPI_Barrier failed");
    double in[2] = {(bench_now() - t0) / (double)iters, (double)err}, out[2];
    if (MPI_Allreduce(in, out, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS)
        return coll_fail("MPI_Allreduce failed");
    *t = out[0];
    return out[1] != 0 ? -1 : 0;
}

static int r_op_timed(runner *r, int write, double *t) { return r_rep(r, write, 1, 0, t); }


static void file_path(const shared *s, int m, char *out, size_t cap)
{
    snprintf(out, cap, "%s/tessera-%s-%lld-%s.dat", s->o->dir, s->o->workload,
             (long long)s->pid0, coll_method_names[m]);
}

/* All ranks: 1 if ok on every rank. */

typedef struct mstate {
    runner r;
    int open;     /* the file is open on every rank */
    int alive;    /* no error so far (the same on every rank) */
    int reps;     /* timed repetitions (0: the warm-up op is the figure) */
    int64_t iters;
    double tw;    /* the warm-up op's time */
    double *t;    /* the repetitions' times */
    tess_stats st;
} mstate;

static int kind_of(int m)
{
    return m == COLL_M_MPI ? K_MPI : (m >= COLL_M_NAIVE && m <= COLL_M_PMD) ? K_INDEP : K_COLL;
}

/* Create (prefill) and open the method's file on every rank. Returns -1 only when the run
   cannot go on (an MPI call failed); a method that cannot open is marked in res. */
static int method_open(shared *s, int m, mstate *ms, mres *res)
{
    const coll_opts *o = s->o;
    memset(ms, 0, sizeof *ms);
    ms->r = (runner){.kind = kind_of(m), .tf = NULL, .mf = MPI_FILE_NULL, .s = s,
                     .cur_view = -1};
    char path[1200];
    file_path(s, m, path, sizeof path);
    memset(res, 0, sizeof *res);
    res->selected = 1;
    snprintf(res->wcheck, sizeof res->wcheck, "-");
    snprintf(res->rcheck, sizeof res->rcheck, "-");
    if (coll_prefill(s, path) != 0) {
        snprintf(res->why, sizeof res->why, "could not create %.150s", path);
        return 0;
    }
    int lrc = 0;
    if (ms->r.kind == K_MPI) {
        MPI_Info info;
        if (coll_mpi_info(o, &info) != 0) {
            lrc = -1;
        } else {
            int rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE, info,
                                   &ms->r.mf);
            MPI_Info_free(&info);
            if (rc != MPI_SUCCESS)
                lrc = coll_mfail(rc, "MPI_File_open");
        }
    } else {
        tess_info *info = NULL;
        if (coll_tess_hints(o, m, &info) != 0) {
            lrc = -1;
        } else {
            int rc = tess_file_open_mpi(MPI_COMM_WORLD, path, TESS_RDWR | TESS_CREATE, info,
                                        &ms->r.tf);
            tess_info_free(info);
            if (rc != 0) {
                lrc = rc;
                snprintf(res->why, sizeof res->why, "%s", tess_last_error());
                if (rc != TESS_ERR_ARG)
                    coll_tfail(rc, "tess_file_open_mpi");
            }
        }
    }
    /* MIN of {opened, -opened, refused}: opened everywhere, somewhere, hints refused
       everywhere (TESS_ERR_ARG on every rank) */
    int in[3] = {lrc == 0, -(lrc == 0), lrc == TESS_ERR_ARG}, out[3];
    if (MPI_Allreduce(in, out, 3, MPI_INT, MPI_MIN, MPI_COMM_WORLD) != MPI_SUCCESS)
        return coll_fail("MPI_Allreduce failed");
    int all_opened = out[0], any_opened = -out[1], all_arg = out[2];
    if (!all_opened) {
        if (any_opened)
            /* a collective open that failed on some ranks only: the library broke its contract;
               the handles that did open cannot be closed collectively and are left open */
            snprintf(res->why, sizeof res->why, "open failed on some ranks only");
        else if (all_arg && ms->r.kind != K_MPI)
            res->unavailable = 1; /* the hints were refused: a method this library lacks */
        else if (!res->why[0])
            snprintf(res->why, sizeof res->why, "open failed (see messages above)");
        if (s->env->rank == 0 && !o->keep)
            unlink(path);
        return 0;
    }
    if (ms->r.kind == K_MPI && s->env->rank == 0)
        coll_mpi_describe(s, ms->r.mf);
    ms->open = ms->alive = 1;
    return 0;
}

static int method_stats(mstate *ms)
{
    if (ms->r.kind == K_MPI)
        return 0;
    int rc = tess_file_stats(ms->r.tf, &ms->st);
    return rc == 0 ? 0 : coll_tfail(rc, "tess_file_stats");
}

/* The untimed op of one method (a read is verified on every rank), and how many timed
   repetitions of how many ops follow it. */
static void warm_up(shared *s, mstate *x, mres *r, int write)
{
    const coll_opts *o = s->o;
    if (!write)
        memset(s->rbuf, READ_FILL, (size_t)s->p->buf_bytes);
    if (x->r.kind != K_MPI)
        tess_file_reset_stats(x->r.tf);
    if (r_op_timed(&x->r, write, &x->tw) != 0) {
        x->alive = 0;
        snprintf(r->why, sizeof r->why, "%s failed (see messages above)",
                 write ? "write" : "read");
        return;
    }
    if (!write)
        r->rok = coll_check_read(s, r->rcheck, sizeof r->rcheck);
    x->reps = o->test ? 0 : (int)o->reps;
    x->iters = 1;
    if (!o->test && x->tw < o->min_rep) {
        double want = o->min_rep / (x->tw > 1e-7 ? x->tw : 1e-7);
        x->iters = want > 100000 ? 100000 : (int64_t)want + 1;
    }
    double per_rep = x->tw * (double)x->iters;
    if (per_rep * x->reps > o->budget)
        x->reps = (int)(o->budget / per_rep);
    if (x->reps < 1) {
        /* --test, or one op takes longer than the budget: the warm-up op is the figure
           (its counters were reset before it; --test prints none) */
        x->reps = 0;
        x->iters = 1;
        if (!o->test && coll_agree(method_stats(x) == 0) == 0)
            x->alive = 0;
    } else {
        free(x->t);
        x->t = malloc(sizeof *x->t * (size_t)x->reps);
        if (coll_agree(x->t != NULL) == 0) {
            x->alive = 0;
            snprintf(r->why, sizeof r->why, "out of memory");
        }
    }
}

/* The figures of one method's direction: the median, and the counters reduced over ranks. */
static void conclude(shared *s, mstate *x, mres *r, int write)
{
    double sec = x->reps > 0 ? bench_median(x->t, x->reps) : x->tw;
    if (write) {
        r->wdone = 1;
        r->wsec = sec;
        r->wreps = x->reps;
        r->witers = x->iters;
    } else {
        r->rdone = 1;
        r->rsec = sec;
        r->rreps = x->reps;
        r->riters = x->iters;
    }
    if (x->r.kind != K_MPI && !s->o->test &&
        coll_agree(coll_reduce_stats(&x->st, s->env->size, write ? &r->ws : &r->rs) == 0) == 0)
        x->alive = 0;
}

/*
 * One direction (write or read) for every open method. Each method first runs one untimed op
 * (a read is verified on every rank); then the timed repetitions of all methods are
 * interleaved (repetition 1 of every method, then repetition 2, ...), so that drift in the
 * machine's load, which other work on a small machine causes, hits every method alike.
 */
static void phase(shared *s, mstate *ms, mres *res, int write, const int *order, int n)
{
    int maxreps = 0;
    for (int k = 0; k < n; k++)
        if (ms[order[k]].alive) {
            warm_up(s, &ms[order[k]], &res[order[k]], write);
            if (ms[order[k]].reps > maxreps)
                maxreps = ms[order[k]].reps;
        }
    for (int rep = 0; rep < maxreps; rep++)
        for (int k = 0; k < n; k++) {
            mstate *x = &ms[order[k]];
            if (!x->alive || rep >= x->reps)
                continue;
            int last = rep == x->reps - 1;
            if (r_rep(&x->r, write, x->iters, last, &x->t[rep]) != 0) {
                x->alive = 0;
                snprintf(res[order[k]].why, sizeof res[order[k]].why,
                         "%s failed (see messages above)", write ? "write" : "read");
            } else if (last && coll_agree(method_stats(x) == 0) == 0) {
                x->alive = 0;
            }
        }
    for (int k = 0; k < n; k++)
        if (ms[order[k]].alive)
            conclude(s, &ms[order[k]], &res[order[k]], write);
}

/* Close (collective), then rank 0 checks the file; the first verified Tessera file becomes the
   reference the later files are compared with. */
static int method_close(shared *s, int m, mstate *ms, mres *res)
{
    const coll_opts *o = s->o;
    free(ms->t);
    ms->t = NULL;
    if (!ms->open)
        return 0;
    int crc = 0;
    if (ms->r.kind == K_MPI) {
        int rc = MPI_File_close(&ms->r.mf);
        if (rc != MPI_SUCCESS)
            crc = coll_mfail(rc, "MPI_File_close");
    } else {
        int rc = tess_file_close(ms->r.tf);
        if (rc != 0)
            crc = coll_tfail(rc, "tess_file_close");
    }
    ms->open = 0;
    if (coll_agree(crc == 0) == 0 && ms->alive) {
        ms->alive = 0;
        snprintf(res->why, sizeof res->why, "close failed (see messages above)");
    }
    char path[1200];
    file_path(s, m, path, sizeof path);
    int fok = 0;
    if (s->env->rank == 0) {
        coll_check_file(s, path, res->wcheck, sizeof res->wcheck);
        fok = strcmp(res->wcheck, "ok") == 0;
        if (fok && !s->have_ref && ms->r.kind != K_MPI) {
            snprintf(s->ref_path, sizeof s->ref_path, "%s", path);
            s->have_ref = 1;
            s->ref_method = m;
        } else if (!o->keep) {
            unlink(path);
        }
    }
    int both[2] = {fok, s->have_ref};
    if (MPI_Bcast(both, 2, MPI_INT, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
        return coll_fail("MPI_Bcast failed");
    fok = both[0];
    s->have_ref = both[1];
    res->wok = fok;
    res->ran = ms->alive;
    res->have_stats = ms->alive && ms->r.kind != K_MPI && !o->test;
    return 0;
}

/* Every selected method: open all, writes (interleaved), reads (interleaved), close and check.
   Tessera methods first, MPI-IO last. Returns -1 when the run could not go on. */
static int run_methods(shared *s, mres *res)
{
    mstate ms[COLL_NMETHODS];
    int order[COLL_NMETHODS], n = 0, rc = 0;
    memset(ms, 0, sizeof ms);
    for (int i = 1; i <= COLL_NMETHODS; i++) {
        int m = i % COLL_NMETHODS;
        if (s->o->methods & (1u << m))
            order[n++] = m;
    }
    for (int k = 0; k < n && rc == 0; k++)
        rc = method_open(s, order[k], &ms[order[k]], &res[order[k]]);
    if (rc == 0) {
        phase(s, ms, res, 1, order, n);
        phase(s, ms, res, 0, order, n);
    }
    for (int k = 0; k < n; k++)
        if (method_close(s, order[k], &ms[order[k]], &res[order[k]]) != 0)
            rc = -1;
    return rc;
}


/* ================================================================== run */

int coll_run(const coll_env *e, coll_pattern *p, const coll_opts *o, int built)
{
    shared s = {.env = e, .p = p, .o = o};
    snprintf(s.mpi_component, sizeof s.mpi_component, "not run");
    call_info *ci = NULL;
    access_sum a;
    memset(&a, 0, sizeof a);
    mres res[COLL_NMETHODS];
    memset(res, 0, sizeof res);
    int failures = 1;
    if (!coll_agree(built)) {
        if (e->rank == 0)
            fprintf(stderr, "tessera: %s: the pattern could not be built (see messages)\n",
                    o->workload);
        goto out;
    }
    int calls[2] = {p->ncalls, -p->ncalls}, rcalls[2];
    if (MPI_Allreduce(calls, rcalls, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS)
        goto out;
    if (rcalls[0] != -rcalls[1]) {
        if (e->rank == 0)
            fprintf(stderr, "tessera: %s: ranks disagree on the number of calls\n", o->workload);
        goto out;
    }
    ci = calloc((size_t)p->ncalls, sizeof *ci);
    if (!coll_agree(ci != NULL) || coll_prepare(&s, ci) != 0 || coll_summarize(&s, ci, &a) != 0)
        goto out;
    s.pid0 = (int64_t)getpid();
    if (MPI_Bcast(&s.pid0, 1, MPI_INT64_T, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
        goto out;
    if (e->rank == 0 && !o->test)
        coll_print_header(&s, &a, o->report->detail);

    /* Tessera methods first (the first verified file becomes the reference), MPI-IO last */
    failures = run_methods(&s, res) != 0;
    for (int m = 1; m < COLL_NMETHODS; m++) {
        const mres *r = &res[m];
        if (r->selected && !r->unavailable && (!r->ran || !r->wok || !r->rok))
            failures++;
    }
    if (e->rank == 0) {
        if (o->test)
            coll_print_test(&s, &a, res, failures);
        else
            coll_print_results(&s, &a, res, o->report->detail);
        if (s.have_ref && !o->keep)
            unlink(s.ref_path);
    }
out:
    if (MPI_Allreduce(MPI_IN_PLACE, &failures, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD) !=
        MPI_SUCCESS)
        failures = 1;
    free(ci);
    free(a.agg_ext);
    free(a.agg_n_call);
    bench_free(s.wbuf);
    bench_free(s.rbuf);
    bench_free(s.mmask);
    bench_free(s.cov);
    coll_pattern_free(p);
    return failures ? 1 : 0;
}
