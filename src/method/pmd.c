/*
 * pmd.c - performance-model-directed data sieving (paper 003, Algorithms 1 and 2).
 *
 * A second region source over the access's file regions (a twin of the file source with a
 * cursor of its own) feeds the streaming planner of pmd_plan.c (tessi_planner, with the
 * file's cost model and the buffer hint ind_rd_buffer_size or ind_wr_buffer_size); the groups
 * it emits, in file order, are moved from the access's own file and memory sources as they
 * come, so nothing is ever flattened:
 *  DIRECT  one storage call per file region, straight to/from the caller's memory (memory
 *          pieces gathered by a vectored call, TESSI_IOV_MAX at a time);
 *  LIST    batches of at most tess_list_max_pairs regions, as list I/O does (one driver batch
 *          where the driver batches, else one vectored call per region);
 *  SIEVE   one access of the group's extent [off, off + len) through a staging buffer,
 *          which is grown to the largest such extent and never exceeds the buffer hint
 *          (stats.peak_buffer_bytes is that extent). A read copies the data out; a write
 *          fills the buffer and writes it back, read first only if the group has holes. The
 *          data moves with the pack engine in one step (tessi_stage_move), never region by
 *          region.
 *
 * Writes and concurrent writers (the lost-update bug, see core/access.c and driver/gate.c): a
 * SIEVE group with holes is read-modify-written when the write gate admits it, under a write
 * lock on its extent, like a sieve window. The other writes are plain: where the gate says plain
 * writes must lock, a covered SIEVE group locks its extent, each LIST batch its extent, and
 * DIRECT regions windows of at most the write buffer's extent (see run_direct). Where the gate
 * refuses or the storage refuses locks, a group with holes is moved directly instead
 * (stats.lock_fallbacks counts the access once; no error). A storage with an atomic
 * read-modify-write of its own (TESSI_CAP_RMW) runs every SIEVE write through it, unlocked,
 * without asking the gate.
 *
 * Reads stop at end of file: *done is the length of the stream prefix whose file bytes exist.
 *
 * The plan is one of three ways pmd prices before it moves anything (choose_way): the plan,
 * every region alone (one run: naive's calls, or list batches) and classic sieving (sieve's
 * own windows and code). It takes the cheapest, so where the model says naive or classic
 * sieving is best, pmd is exactly that, at no cost beyond the pricing.
 *
 * Pricing and planning cost a walk of the regions with a second cursor and a few model
 * evaluations per region, done once: pricing keeps the plan's groups, which the plan then runs.
 * A file remembers its last way and plan per direction (tessi_memo), so repeated accesses of
 * one shape (the usual loop over time steps) price and plan once.
 *
 * The estimate is the price of the same way: the sum of its groups' costs.
 */
#include "method/method.h"
#include "method/pmd.h"

#include "type/type.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Regions moved from the planning source to the planner per step. */
#define PMD_CHUNK 64
/* Room for the groups one step can emit (the planner needs TESSI_PLAN_EMIT_MAX free). */
#define PMD_GROUPS 16

typedef struct pmd {
    tessi_access *a;
    bool write;
    int64_t *done;
    char *stage;          /* SIEVE staging buffer, cap bytes */
    char *tmp;            /* its companion when memory and file are both noncontiguous */
    int64_t cap;
    struct iovec *iov;    /* TESSI_IOV_MAX entries, allocated on first use */
    tessi_io_req *reqs;   /* list_max entries, allocated on the first LIST group */
    bool eof;             /* a read reached the end of file: stop */
    bool no_locks;        /* the storage refused a lock during this access */
    bool fell_back;       /* a group with holes was moved directly for want of a lock */
} pmd;

static int need_iov(pmd *p)
{
    if (!p->iov && !(p->iov = malloc(sizeof *p->iov * TESSI_IOV_MAX)))
        return tessi_error(TESS_ERR_NOMEM, "pmd: cannot allocate an iovec array");
    return 0;
}

/* Gather the memory pieces of the next len data bytes (at most max_iov of them) into iov;
 * *got receives the bytes they hold (less than len only when the iovecs ran out). */
static int gather(pmd *p, struct iovec *iov, int64_t max_iov, int64_t len, int64_t *niov,
                  int64_t *got)
{
    tess_region m;
    *niov = *got = 0;
    while (*got < len && *niov < max_iov) {
        int rc = tessi_rsrc_peek(p->a->mem, &m);
        if (rc)
            return rc;
        if (m.len == 0)
            return tessi_error(TESS_ERR_INTERNAL, "pmd: memory stream ended early");
        int64_t n = m.len < len - *got ? m.len : len - *got;
        iov[(*niov)++] = (struct iovec){.iov_base = p->a->buf + m.off, .iov_len = (size_t)n};
        tessi_rsrc_take(p->a->mem, n);
        *got += n;
    }
    return 0;
}

/* Move the file-contiguous run [off, off + len) with the memory stream: one call, or one per
 * TESSI_IOV_MAX memory pieces. */
static int move_run(pmd *p, int64_t off, int64_t len)
{
    tessi_access *a = p->a;
    struct iovec one;
    while (len > 0) {
        int64_t niov, n, moved, max_iov = 1;
        struct iovec *iov = &one;
        tess_region m;
        int rc = tessi_rsrc_peek(a->mem, &m);
        if (rc)
            return rc;
        if (m.len < len) { /* several memory pieces: a vectored call */
            if ((rc = need_iov(p)))
                return rc;
            iov = p->iov;
            max_iov = TESSI_IOV_MAX;
        }
        if ((rc = gather(p, iov, max_iov, len, &niov, &n)))
            return rc;
        if (niov == 1)
            moved = p->write ? tessi_drv_pwrite(a->st, iov->iov_base, n, off)
                             : tessi_drv_pread(a->st, iov->iov_base, n, off);
        else
            moved = p->write ? tessi_drv_pwritev(a->st, iov, niov, off)
                             : tessi_drv_preadv(a->st, iov, niov, off);
        if (moved < 0)
            return tessi_drv_error(a->st, (int)moved, p->write ? "pmd write" : "pmd read", off, n);
        *p->done += moved;
        if (moved < n) { /* end of file */
            p->eof = true;
            return 0;
        }
        off += n;
        len -= n;
    }
    return 0;
}

/* Lock [off, off + len) for a write (lk->held says whether it is): a storage that refuses
 * locks leaves it unlocked without error and is not asked again in this access. */
static int lock_range(pmd *p, tessi_lock *lk, int64_t off, int64_t len)
{
    *lk = (tessi_lock){.held = false};
    if (p->no_locks)
        return 0;
    int rc = tessi_lock_range(p->a->st, lk, off, len, true, false);
    p->no_locks = rc == 0 && !lk->held;
    return rc;
}

/*
 * DIRECT: one call per file region of the group's data bytes. A write locks one window at a
 * time: from a region's start, the write buffer's extent (or the region, if longer), within
 * the group; the regions ending inside it are written under that lock. So a long run of
 * sparse regions never locks other writers out of more than a sieve window's worth of file.
 */
static int run_direct(pmd *p, const tessi_group *g)
{
    int64_t data = g->data, end = g->off + g->len;
    tess_region f;
    int rc = 0;
    while (rc == 0 && data > 0 && !p->eof) {
        if ((rc = tessi_rsrc_peek(p->a->file, &f)))
            break;
        int64_t lo = f.off, hi = end, reach = f.len;
        tessi_lock lk = {.held = false};
        bool first = true;
        if (p->write && tessi_gate_locked_writes(p->a->st)) {
            if (reach < p->a->hints->wr_buffer)
                reach = p->a->hints->wr_buffer;
            hi = end - lo > reach ? lo + reach : end;
            rc = lock_range(p, &lk, lo, hi - lo);
        }
        while (rc == 0 && data > 0 && !p->eof) {
            if ((rc = tessi_rsrc_peek(p->a->file, &f)))
                break;
            if (f.len == 0) {
                rc = tessi_error(TESS_ERR_INTERNAL, "pmd: file stream ended early");
                break;
            }
            int64_t len = f.len < data ? f.len : data;
            if (!first && f.off + len > hi)
                break;
            if ((rc = move_run(p, f.off, len)))
                break;
            tessi_rsrc_take(p->a->file, len);
            data -= len;
            first = false;
        }
        rc = tessi_unlock_range(p->a->st, &lk, rc);
    }
    return rc;
}

/* One LIST batch: up to list_max requests (file regions, or parts of one when its memory
 * pieces exhaust the iovecs) of the group's remaining *data bytes. A write batch holds a lock
 * on the batch's extent. */
static int list_batch(pmd *p, int64_t *data)
{
    tessi_access *a = p->a;
    int64_t nreq = 0, niov = 0;
    tess_region f;
    while (*data > 0 && nreq < a->hints->list_max_pairs && niov < TESSI_IOV_MAX) {
        int rc = tessi_rsrc_peek(a->file, &f);
        if (rc)
            return rc;
        if (f.len == 0)
            return tessi_error(TESS_ERR_INTERNAL, "pmd: file stream ended early");
        int64_t want = f.len < *data ? f.len : *data, k, got;
        if ((rc = gather(p, p->iov + niov, TESSI_IOV_MAX - niov, want, &k, &got)))
            return rc;
        p->reqs[nreq++] = (tessi_io_req){.off = f.off, .iov = p->iov + niov, .niov = k,
                                         .len = got};
        niov += k;
        tessi_rsrc_take(a->file, got);
        *data -= got;
    }
    tessi_io_req *r = p->reqs;
    int64_t lo = r[0].off, len = r[nreq - 1].off + r[nreq - 1].len - lo;
    tessi_lock lk = {.held = false};
    int rc = p->write && tessi_gate_locked_writes(a->st) ? lock_range(p, &lk, lo, len) : 0;
    int err = rc || nreq == 1 ? -EOPNOTSUPP
                              : tessi_drv_submit(a->st, p->write ? TESSI_OP_WRITE : TESSI_OP_READ,
                                                 r, nreq);
    if (rc == 0 && err == -EOPNOTSUPP) { /* no batching: one vectored call per request, up
                                            to the first that fails or ends short */
        err = 0;
        for (int64_t i = 0; i < nreq; i++) {
            r[i].result = p->write ? tessi_drv_pwritev(a->st, r[i].iov, r[i].niov, r[i].off)
                                   : tessi_drv_preadv(a->st, r[i].iov, r[i].niov, r[i].off);
            if (r[i].result < r[i].len)
                break;
        }
    }
    rc = tessi_unlock_range(a->st, &lk, rc);
    if (rc == 0 && err)
        rc = tessi_drv_error(a->st, err, p->write ? "pmd write batch" : "pmd read batch",
                             r[0].off, r[0].len);
    for (int64_t i = 0; rc == 0 && i < nreq; i++) {
        if (r[i].result < 0)
            return tessi_drv_error(a->st, (int)r[i].result, p->write ? "pmd pwritev" :
                                   "pmd preadv", r[i].off, r[i].len);
        *p->done += r[i].result;
        if (r[i].result < r[i].len) { /* end of file */
            p->eof = true;
            break;
        }
    }
    return rc;
}

/* LIST: batches of list_max regions over the group's data bytes. */
static int run_list(pmd *p, int64_t data)
{
    if (!p->reqs &&
        !(p->reqs = malloc(sizeof *p->reqs * (size_t)p->a->hints->list_max_pairs)))
        return tessi_error(TESS_ERR_NOMEM, "pmd: cannot allocate a list batch");
    int rc = need_iov(p);
    while (rc == 0 && data > 0 && !p->eof)
        rc = list_batch(p, &data);
    return rc;
}

/* The staging buffer, at least len bytes (len <= the buffer hint, by the planner), and the
 * second one tessi_stage_move needs when neither side is contiguous. */
static int need_stage(pmd *p, int64_t len)
{
    if (len <= p->cap)
        return 0;
    tessi_stage_free(p->stage);
    p->stage = p->tmp = NULL;
    p->cap = 0;
    int rc = tessi_stage_alloc(p->a, len, &p->stage, &p->tmp);
    if (rc == 0)
        p->cap = len;
    return rc;
}

/* Move source s forward to stream position pos (>= its position): through the regions it
 * holds queued when they reach that far, else by a seek. A seek drops the queue, and the next
 * peek refills it from the cursor (a batch of TESSI_RSRC_BATCH regions): after every group of
 * a plan of many small groups, that refill would cost more than the group's storage call. */
static int advance(tessi_rsrc *s, int64_t pos)
{
    while (s->pos < pos && s->qi < s->qn)
        tessi_rsrc_take(s, tessi_min64(s->q[s->qi].len, pos - s->pos));
    return s->pos == pos ? 0 : tessi_rsrc_seek(s, pos);
}

/* The group's data bytes, the next g->data of the access (`have` bytes of the extent from
 * g->off are in the staging buffer), to or from memory with the pack engine; both sources then
 * move past them. A read stops at the end of file. */
static int copy_group(pmd *p, const tessi_group *g, int64_t have)
{
    tessi_access *a = p->a;
    int64_t pos = a->file->pos, end = pos + g->data;
    int rc = 0;
    if (!p->write && have < g->len && (rc = tessi_rsrc_stream_at(a->file, g->off + have, &end)))
        return rc;
    end = tessi_min64(end, pos + g->data);
    p->eof = end < pos + g->data;
    if ((rc = tessi_stage_move(a, p->stage, g->off, pos, end - pos, !p->write, p->tmp)))
        return rc;
    if (!p->write)
        *p->done += end - pos;
    if (p->eof)
        return 0;
    if ((rc = advance(a->file, end)))
        return rc;
    return advance(a->mem, end);
}

/* SIEVE read: one read of the extent, data copied out. */
static int sieve_read(pmd *p, const tessi_group *g)
{
    int rc = need_stage(p, g->len);
    if (rc)
        return rc;
    int64_t got = tessi_drv_pread(p->a->st, p->stage, g->len, g->off);
    if (got < 0)
        return tessi_drv_error(p->a->st, (int)got, "pmd sieve read", g->off, g->len);
    return copy_group(p, g, got);
}

/* SIEVE write, under the group's lock: read the extent if it has holes (zeros past the end
 * of file), fill in the data, write it back. */
static int sieve_write(pmd *p, const tessi_group *g)
{
    tessi_access *a = p->a;
    int rc = need_stage(p, g->len);
    if (rc)
        return rc;
    if (g->data < g->len) {
        int64_t got = tessi_drv_pread(a->st, p->stage, g->len, g->off);
        if (got < 0)
            return tessi_drv_error(a->st, (int)got, "pmd read-modify-write read", g->off,
                                   g->len);
        memset(p->stage + got, 0, (size_t)(g->len - got));
    }
    if ((rc = copy_group(p, g, g->len)))
        return rc;
    int64_t put = tessi_drv_pwrite(a->st, p->stage, g->len, g->off);
    if (put < 0)
        return tessi_drv_error(a->st, (int)put, "pmd sieve write", g->off, g->len);
    *p->done += g->data;
    return 0;
}

/* SIEVE write through the storage's own atomic read-modify-write (TESSI_CAP_RMW, no lock):
 * the fill may run again after a conflict, so it seeks both sources back each time. */
typedef struct {
    pmd *p;
    const tessi_group *g;
    int64_t fpos, mpos;
    int err; /* the fill's own failure (a TESS_ERR_* code), apart from the driver's errnos */
} group_fill;

static int fill_group(void *arg, char *stage)
{
    group_fill *w = arg;
    (void)stage; /* the pmd's staging buffer */
    int rc = tessi_rsrc_seek(w->p->a->file, w->fpos);
    if (rc || (rc = tessi_rsrc_seek(w->p->a->mem, w->mpos)) ||
        (rc = copy_group(w->p, w->g, w->g->len)))
        w->err = rc;
    return rc ? -ECANCELED : 0;
}

static int sieve_write_rmw(pmd *p, const tessi_group *g)
{
    tessi_access *a = p->a;
    group_fill w = {.p = p, .g = g, .fpos = a->file->pos, .mpos = a->mem->pos};
    int rc = need_stage(p, g->len);
    if (rc)
        return rc;
    rc = tessi_drv_rmw(a->st, p->stage, g->off, g->len, g->data == g->len, fill_group, &w);
    if (w.err)
        return w.err;
    if (rc)
        return tessi_drv_error(a->st, rc, "pmd read-modify-write", g->off, g->len);
    *p->done += g->data;
    return 0;
}

/* Move one group. A SIEVE write goes through the storage's atomic read-modify-write where it
 * has one. Else one with holes is a read-modify-write: done when the write gate admits it,
 * under a lock on the group's extent; otherwise (or where the storage refuses locks) its
 * regions are moved directly instead. A covered one is a plain write, locked when the gate
 * says so. */
static int run_group(pmd *p, const tessi_group *g)
{
    if (g->kind == TESSI_GROUP_DIRECT)
        return run_direct(p, g);
    if (g->kind == TESSI_GROUP_LIST)
        return run_list(p, g->data);
    if (!p->write)
        return sieve_read(p, g);
    if (p->a->st->caps & TESSI_CAP_RMW)
        return sieve_write_rmw(p, g);
    tessi_lock lk = {.held = false};
    bool rmw = g->data < g->len;
    int rc = (rmw ? tessi_gate_admit(p->a->st) : tessi_gate_locked_writes(p->a->st))
                 ? lock_range(p, &lk, g->off, g->len) : 0;
    if (rc)
        return rc;
    if (!lk.held && rmw) {
        if (!p->fell_back)
            tessi_lock_fallback(p->a->st, g->off, g->len);
        p->fell_back = true;
        rc = run_direct(p, g);
    } else {
        rc = sieve_write(p, g);
    }
    return tessi_unlock_range(p->a->st, &lk, rc);
}

/* Every region alone (the ALONE way, one group g of them all): a DIRECT run that needs no
 * lock is naive's own loop (its calls back to back, its staging rule for noncontiguous memory:
 * what naive would do, at naive's cost per region); a write the gate makes lock, or a LIST
 * run, goes through run_group. */
static int run_alone(pmd *p, const tessi_group *g)
{
    if (g->kind != TESSI_GROUP_DIRECT || (p->write && tessi_gate_locked_writes(p->a->st)))
        return run_group(p, g);
    int rc = tessi_naive_move(p->a, p->write, p->done);
    p->eof = rc == 0 && *p->done < p->a->bytes;
    return rc;
}

/* The planning source: the regions of the access's file source (its type, instances, base
 * and stream range), from their start, with a cursor of its own. */
static int plan_source(tessi_rsrc *plan, const tessi_rsrc *file)
{
    int rc = tessi_rsrc_open(plan, file->type, file->count, file->base, file->start,
                             file->bytes, NULL);
    plan->lo = file->lo;
    plan->hi = file->hi;
    return rc;
}

/* Fill r[0..*n) with the next regions of the planning source (*n == 0 at its end). */
static int next_regions(tessi_rsrc *s, tess_region *r, int64_t *n)
{
    for (*n = 0; *n < PMD_CHUNK; (*n)++) {
        int rc = tessi_rsrc_peek(s, &r[*n]);
        if (rc)
            return rc;
        if (r[*n].len == 0)
            break;
        tessi_rsrc_take(s, r[*n].len);
    }
    return 0;
}

/* Remember group g of the plan being made (memo->n < 0: the plan outgrew the memo). */
static void remember(tessi_pmd_memo *memo, const tessi_group *g)
{
    if (memo->n < 0)
        return;
    if (memo->n == memo->cap) {
        int64_t cap = memo->cap ? 2 * memo->cap : 16;
        tessi_group *grown = cap <= TESSI_PMD_MEMO_GROUPS
                                 ? realloc(memo->groups, sizeof *grown * (size_t)cap) : NULL;
        if (!grown) { /* too many groups (or no memory): plan afresh next time */
            memo->n = -1;
            return;
        }
        memo->groups = grown;
        memo->cap = cap;
    }
    memo->groups[memo->n++] = *g;
}

/* Run the remembered plan of an access of the same shape, moved by delta bytes. */
static int replay(pmd *p, const tessi_pmd_memo *memo, int64_t delta)
{
    int rc = 0;
    for (int64_t k = 0; rc == 0 && k < memo->n && !p->eof; k++) {
        tessi_group g = memo->groups[k];
        g.off += delta;
        rc = memo->way == TESSI_PMD_ALONE ? run_alone(p, &g) : run_group(p, &g);
    }
    return rc;
}

/* Plan the access (Algorithm 2, streamed from the planning source) and run the groups as they
 * come, remembering them in memo (may be NULL). */
static int plan_and_run(pmd *p, tessi_pmd_memo *memo)
{
    tessi_access *a = p->a;
    tessi_rsrc plan = {.cur = NULL};
    tessi_planner pl;
    tess_region r[PMD_CHUNK];
    tessi_group g[PMD_GROUPS];
    int64_t nr = 0, ri = 0, used, made;
    int rc;
    if ((rc = plan_source(&plan, a->file)) ||
        (rc = tessi_plan_init(&pl, tessi_access_model(a), p->write,
                              p->write ? a->hints->wr_buffer : a->hints->rd_buffer)))
        goto fail;
    for (;;) {
        if (ri == nr) {
            if ((rc = next_regions(&plan, r, &nr)))
                goto fail;
            ri = 0;
        }
        if (nr == 0)
            rc = tessi_plan_flush(&pl, g, PMD_GROUPS, &made);
        else
            rc = tessi_plan_push(&pl, r + ri, nr - ri, g, PMD_GROUPS, &used, &made);
        if (rc)
            goto fail;
        ri += nr ? used : 0;
        for (int64_t k = 0; k < made && !p->eof; k++) {
            if (memo)
                remember(memo, &g[k]);
            if ((rc = run_group(p, &g[k])))
                goto fail;
        }
        if (nr == 0 || p->eof)
            break;
    }
fail:
    tessi_rsrc_close(&plan);
    return rc;
}

/* A way replaces an earlier one only when cheaper by more than the rounding of sums: the same
 * windows priced as the plan's groups or as sieve's windows differ in the last bits. */
#define WAY_MARGIN (1.0 - 1e-9)

/* The way of three priced lowest (ties to the earlier: alone, plan, classic). A plan without
 * a sieved group prices exactly as every region alone, and alone runs naive's loop (run_alone),
 * cheaper per region than the plan's DIRECT runs: the tie goes to alone. */
static tessi_pmd_way cheapest_way(const tessi_cost *plan, const tessi_cost *alone,
                                  const tessi_cost *classic)
{
    tessi_pmd_way way = TESSI_PMD_ALONE;
    double best = alone->seconds;
    if (plan->seconds < best * WAY_MARGIN) {
        way = TESSI_PMD_PLAN;
        best = plan->seconds;
    }
    return classic->seconds < best * WAY_MARGIN ? TESSI_PMD_CLASSIC : way;
}

/*
 * Price the three ways of moving the access over its regions (from a planning source): the
 * plan's groups, every region alone (*alone: one run of them all, DIRECT or LIST) and classic
 * sieving's windows, as pmd_estimate prices them given the regions; *way gets the cheapest.
 * The plan's groups are remembered in memo (may be NULL) as they are priced, so that running
 * the plan replays them instead of planning a second time.
 * Algorithm 2 sieves a group only where that beats its regions alone, but it weighs one group
 * at a time: windows spanning every hole can be cheaper still (a lock and a read call per
 * window instead of per group), and a plan's runs between groups cost more list batches than
 * one run would. pmd is then never priced above naive's calls or sieve's windows.
 */
static int choose_way(pmd *p, tessi_pmd_way *way, tessi_group *alone, tessi_pmd_memo *memo)
{
    tessi_access *a = p->a;
    const tessi_model *m = tessi_access_model(a);
    tessi_est e = {.m = m, .write = p->write,
                   .buf = p->write ? a->hints->wr_buffer : a->hints->rd_buffer,
                   .bytes = a->bytes, .lo = a->file->lo, .hi = a->file->hi};
    tessi_windows w = {.e = &e};
    tessi_rsrc plan = {.cur = NULL};
    tessi_planner pl;
    tess_region r[PMD_CHUNK];
    tessi_group g[PMD_GROUPS];
    tessi_cost cp = {0}, ca = {0}, cs;
    int64_t nr, used, made, n = 0;
    int rc;
    if ((rc = plan_source(&plan, a->file)) || (rc = tessi_plan_init(&pl, m, p->write, e.buf)))
        goto fail;
    for (;;) {
        if ((rc = next_regions(&plan, r, &nr)))
            goto fail;
        for (int64_t i = 0; i < nr; i++)
            tessi_windows_add(&w, r[i].off, r[i].off + r[i].len);
        n += nr;
        int64_t ri = 0;
        do { /* the regions, or the flush at the end */
            rc = nr ? tessi_plan_push(&pl, r + ri, nr - ri, g, PMD_GROUPS, &used, &made)
                    : tessi_plan_flush(&pl, g, PMD_GROUPS, &made);
            if (rc)
                goto fail;
            for (int64_t k = 0; k < made; k++) {
                tessi_group_cost(m, p->write, &g[k], &cp);
                if (memo)
                    remember(memo, &g[k]);
            }
            ri += nr ? used : 0;
        } while (ri < nr);
        if (nr == 0)
            break;
    }
    tessi_windows_end(&w, &cs);
    *alone = (tessi_group){.kind = TESSI_GROUP_DIRECT, .count = n, .off = e.lo,
                           .len = e.hi - e.lo, .data = a->bytes};
    tessi_plan_run_kind(m, p->write, alone);
    tessi_group_cost(m, p->write, alone, &ca);
    *way = cheapest_way(&cp, &ca, &cs);
fail:
    tessi_rsrc_close(&plan);
    return rc;
}

/* Move the access the way chosen (memo: the plan's groups as choose_way remembered them, which
 * the plan replays when they all fit; the groups of the way taken are left there; may be NULL). */
static int run_way(pmd *p, tessi_pmd_way way, const tessi_group *alone, tessi_pmd_memo *memo)
{
    if (memo)
        memo->way = way; /* how replay runs the groups */
    if (way == TESSI_PMD_PLAN && memo && memo->n >= 0)
        return replay(p, memo, 0);
    if (memo)
        memo->n = 0;
    if (way == TESSI_PMD_CLASSIC)
        return p->write ? tessi_method_sieve.write(p->a, p->done)
                        : tessi_method_sieve.read(p->a, p->done);
    if (way == TESSI_PMD_PLAN)
        return plan_and_run(p, memo);
    if (memo)
        remember(memo, alone);
    return run_alone(p, alone);
}

/*
 * An access of the same shape as the last one planned in this direction (tessi_shape) has the
 * same regions moved by a constant, so the same way, and the same groups moved likewise: they
 * are replayed without planning. The way is remembered when the access completed (no end of
 * file cut it short), its groups when there were at most TESSI_PMD_MEMO_GROUPS.
 */
static int pmd_move(tessi_access *a, bool write, int64_t *done)
{
    pmd p = {.a = a, .write = write, .done = done};
    tessi_pmd_memo *memo = a->memo ? &a->memo->plan[write] : NULL;
    tessi_pmd_way way = TESSI_PMD_ALONE;
    tessi_shape shape;
    tessi_group alone;
    int rc;
    *done = 0;
    if (a->bytes == 0)
        return 0;
    tessi_shape_of(a, write, &shape);
    if (memo && memo->valid && tessi_same_shape(&memo->shape, &shape) &&
        (memo->way != TESSI_PMD_ALONE || memo->n >= 0)) {
        if (memo->way == TESSI_PMD_CLASSIC)
            rc = run_way(&p, memo->way, NULL, NULL);
        else if (memo->n >= 0)
            rc = replay(&p, memo, a->file->lo - memo->lo);
        else /* a plan of too many groups to remember */
            rc = plan_and_run(&p, NULL);
    } else {
        if (memo)
            *memo = (tessi_pmd_memo){.shape = shape, .lo = a->file->lo, .groups = memo->groups,
                                     .cap = memo->cap};
        if ((rc = choose_way(&p, &way, &alone, memo)) == 0)
            rc = run_way(&p, way, &alone, memo);
        if (memo) {
            memo->way = way;
            memo->valid = rc == 0 && !p.eof;
        }
    }
    tessi_stage_free(p.stage);
    free(p.iov);
    free(p.reqs);
    return rc;
}

static int pmd_read(tessi_access *a, int64_t *done) { return pmd_move(a, false, done); }

static int pmd_write(tessi_access *a, int64_t *done) { return pmd_move(a, true, done); }

/* ------------------------------------------------------------------ estimate */

/* Regions moved alone (DIRECT, LIST) gather their memory pieces as iovecs of vectored calls
 * (a SIEVE group moves its data with the pack engine): the memory pieces beyond one per file
 * region, in the share of the data bytes moved alone (an even spread of the pieces). */
static void iov_cost(const tessi_est *e, int64_t alone, tessi_cost *out)
{
    if (e->pieces > e->regions && alone > 0)
        out->seconds += tessi_model_iov(e->m, e->write, e->pieces - e->regions) *
                        ((double)alone / (double)e->bytes);
}

/* The plan of regions r[0..n) (as plan_and_run makes it), its groups priced into *out; returns
 * the data bytes its runs move alone. */
static int64_t plan_cost(const tessi_est *e, tessi_cost *out)
{
    tessi_planner pl;
    tessi_group g[TESSI_PLAN_EMIT_MAX];
    int64_t used, made = 0, alone = 0;
    int rc = tessi_plan_init(&pl, e->m, e->write, e->buf);
    for (int64_t i = 0; rc == 0 && i <= e->nr; i++) {
        rc = i < e->nr ? tessi_plan_push(&pl, &e->r[i], 1, g, TESSI_PLAN_EMIT_MAX, &used, &made)
                       : tessi_plan_flush(&pl, g, TESSI_PLAN_EMIT_MAX, &made);
        for (int64_t k = 0; rc == 0 && k < made; k++) {
            tessi_group_cost(e->m, e->write, &g[k], out);
            alone += g[k].kind == TESSI_GROUP_SIEVE ? 0 : g[k].data;
        }
    }
    if (rc) /* regions that do not increase: not a plan pmd can run */
        out->seconds = INFINITY;
    return alone;
}

/* k regions holding data bytes moved alone, as one run (tessi_plan_run_kind), priced into *out. */
static void run_cost(const tessi_est *e, int64_t k, int64_t data, tessi_cost *out)
{
    tessi_group g = {.kind = TESSI_GROUP_DIRECT, .count = k, .data = data};
    tessi_plan_run_kind(e->m, e->write, &g);
    tessi_group_cost(e->m, e->write, &g, out);
}

/*
 * The plan of an even spread (no regions given): regions of len bytes `hole` bytes apart. If
 * Algorithm 1 joins such a region to a group, groups hold g = (buf + hole) / (len + hole)
 * regions; each is sieved when that beats moving its regions alone (the planner's test), and
 * the rest of the regions are moved alone. Returns the data bytes moved alone.
 */
static int64_t spread_cost(const tessi_est *e, tessi_cost *out)
{
    int64_t k = e->regions, len = e->bytes / k;
    int64_t hole = k > 1 ? (e->hi - e->lo - e->bytes) / (k - 1) : 0;
    int64_t g = tessi_pmd_join(e->m, e->write, hole == 0, hole, len)
                    ? (e->buf + hole) / (len + hole) : 1;
    g = g < k ? g : k;
    if (g >= 2) {
        tessi_group grp = {.kind = TESSI_GROUP_SIEVE, .count = g, .len = g * len + (g - 1) * hole,
                           .data = g * len, .rmw = e->write && hole > 0,
                           .lock = e->write && hole > 0};
        tessi_cost one = {0};
        tessi_group_cost(e->m, e->write, &grp, &one);
        double alone = (double)g * tessi_model_alone(e->m, e->write) +
                       (double)grp.data * tessi_model_byte(e->m, e->write);
        if (one.seconds < alone) {
            int64_t rest = e->bytes - (k / g) * grp.data;
            tessi_cost_add(out, &one, k / g);
            if (k % g)
                run_cost(e, k % g, rest, out);
            return k % g ? rest : 0;
        }
    }
    run_cost(e, k, e->bytes, out);
    return e->bytes;
}

/* The way pmd_move chooses (choose_way), priced: the plan, every region alone, or classic
 * sieving, the cheapest; then the memory pieces of what moves alone (iov_cost; a tie-break
 * the choice leaves out, since pmd_move cannot see the pieces before it moves them). Every
 * region alone in one DIRECT run is naive's loop (run_alone), priced by naive's estimate. */
static void pmd_estimate(const tessi_est *e, tessi_cost *out)
{
    tessi_cost plan = {0}, alone = {0}, classic;
    *out = (tessi_cost){.seconds = 0};
    if (e->bytes == 0)
        return;
    int64_t moved_alone = e->nr > 0 ? plan_cost(e, &plan) : spread_cost(e, &plan);
    if (isinf(plan.seconds)) { /* regions pmd cannot run (see plan_cost) */
        *out = plan;
        return;
    }
    run_cost(e, e->regions, e->bytes, &alone);
    tessi_method_sieve.estimate(e, &classic);
    switch (cheapest_way(&plan, &alone, &classic)) {
    case TESSI_PMD_PLAN:
        *out = plan;
        iov_cost(e, moved_alone, out);
        break;
    case TESSI_PMD_ALONE: {
        tessi_group run = {.kind = TESSI_GROUP_DIRECT, .count = e->regions, .data = e->bytes};
        tessi_plan_run_kind(e->m, e->write, &run);
        if (run.kind == TESSI_GROUP_DIRECT) { /* naive's own loop (run_alone) */
            tessi_method_naive.estimate(e, out);
            break;
        }
        *out = alone;
        iov_cost(e, e->bytes, out);
        break;
    }
    case TESSI_PMD_CLASSIC:
        *out = classic;
        break;
    }
}

const struct tess_method tessi_method_pmd = {
    .version = TESSI_METHOD_VERSION,
    .name = "pmd",
    .sieves = true,
    .read = pmd_read,
    .write = pmd_write,
    .estimate = pmd_estimate,
};
