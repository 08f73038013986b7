/*
 * plan.c - the contiguity analyzer and the work manager of team accesses (team.h). Pure
 * functions of the pieces: every member computing a plan from the same slots gets the same one.
 */
#include "team/team.h"

#include <stdlib.h>
#include <string.h>

#define ALIGN 4096 /* shares are whole pages: aligned blocks for the page cache and O_DIRECT */

/* Grow *arr (elements of size sz) to hold at least need; 0 or TESS_ERR_NOMEM. */
static int grow(void **arr, int64_t *cap, int64_t need, size_t sz)
{
    if (need <= *cap)
        return 0;
    int64_t n = *cap ? *cap : 16;
    while (n < need)
        n *= 2;
    void *p = realloc(*arr, (size_t)n * sz);
    if (!p)
        return tessi_error(TESS_ERR_NOMEM, "team access: out of memory (%lld entries)",
                           (long long)need);
    *arr = p;
    *cap = n;
    return 0;
}

void tessi_tplan_release(tessi_tplan *p)
{
    free(p->pc);
    free(p->iov);
    free(p->runs);
    memset(p, 0, sizeof *p);
}

void tessi_tpart_release(tessi_tpart *p)
{
    free(p->iov);
    free(p->runs);
    memset(p, 0, sizeof *p);
}

int tessi_tplan_add(tessi_tplan *p, const tessi_tpiece *pc, int64_t n)
{
    int rc = grow((void **)&p->pc, &p->cap_pc, p->npc + n, sizeof *p->pc);
    for (int64_t i = 0; rc == 0 && i < n; i++)
        if (pc[i].len > 0)
            p->pc[p->npc++] = pc[i];
    return rc;
}

/* File order, ties in data order (a stable sort: qsort is not, the index breaks ties). */
typedef struct {
    tessi_tpiece pc;
    int64_t idx;
} keyed;

static int by_offset(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    if (x->pc.off != y->pc.off)
        return x->pc.off < y->pc.off ? -1 : 1;
    return (x->idx > y->idx) - (x->idx < y->idx);
}

static int sort_pieces(tessi_tplan *p)
{
    bool in_order = true;
    for (int64_t i = 1; i < p->npc && in_order; i++)
        in_order = p->pc[i - 1].off <= p->pc[i].off;
    if (in_order)
        return 0;
    keyed *k = malloc(sizeof *k * (size_t)p->npc);
    if (!k)
        return tessi_error(TESS_ERR_NOMEM, "team access: out of memory sorting %lld pieces",
                           (long long)p->npc);
    for (int64_t i = 0; i < p->npc; i++)
        k[i] = (keyed){.pc = p->pc[i], .idx = i};
    qsort(k, (size_t)p->npc, sizeof *k, by_offset);
    for (int64_t i = 0; i < p->npc; i++)
        p->pc[i] = k[i].pc;
    free(k);
    return 0;
}

/* Start a run at piece pc, or extend the last one (file-adjacent, merge allowed). */
static void place(tessi_tplan *p, const tessi_tpiece *pc, bool merge)
{
    tessi_trun *r = p->nruns ? &p->runs[p->nruns - 1] : NULL;
    if (!merge || !r || r->off + r->len != pc->off) {
        p->runs[p->nruns++] = (tessi_trun){.off = pc->off, .len = pc->len, .iov0 = p->niov,
                                          .niov = 1};
        p->iov[p->niov++] = (struct iovec){.iov_base = pc->mem, .iov_len = (size_t)pc->len};
        return;
    }
    r->len += pc->len;
    struct iovec *last = &p->iov[p->niov - 1];
    if ((char *)last->iov_base + last->iov_len == pc->mem) {
        last->iov_len += (size_t)pc->len;
    } else {
        p->iov[p->niov++] = (struct iovec){.iov_base = pc->mem, .iov_len = (size_t)pc->len};
        r->niov++;
    }
}

int tessi_tplan_analyze(tessi_tplan *p, int hint, bool sorted)
{
    p->niov = p->nruns = p->total = 0;
    for (int64_t i = 0; i < p->npc; i++)
        p->total += p->pc[i].len;
    if (p->npc == 0)
        return 0;
    if (hint == TESS_TEAM_CONTIG) { /* one pass, no merging structures: one run, one iovec */
        for (int64_t i = 1; i < p->npc; i++) {
            const tessi_tpiece *a = &p->pc[i - 1], *b = &p->pc[i];
            if (a->mem + a->len != b->mem || a->off + a->len != b->off)
                return tessi_error(TESS_ERR_ARG, "team access: hint CONTIG, but piece %lld "
                                   "does not follow piece %lld in %s", (long long)i,
                                   (long long)(i - 1), a->mem + a->len != b->mem ? "memory"
                                                                                 : "the file");
        }
        int rc = grow((void **)&p->runs, &p->cap_runs, 1, sizeof *p->runs);
        if (rc == 0)
            rc = grow((void **)&p->iov, &p->cap_iov, 1, sizeof *p->iov);
        if (rc)
            return rc;
        p->runs[0] = (tessi_trun){.off = p->pc[0].off, .len = p->total, .iov0 = 0, .niov = 1};
        p->iov[0] = (struct iovec){.iov_base = p->pc[0].mem, .iov_len = (size_t)p->total};
        p->nruns = p->niov = 1;
        return 0;
    }
    int rc = sorted ? 0 : sort_pieces(p);
    if (rc == 0)
        rc = grow((void **)&p->runs, &p->cap_runs, p->npc, sizeof *p->runs);
    if (rc == 0)
        rc = grow((void **)&p->iov, &p->cap_iov, p->npc, sizeof *p->iov);
    for (int64_t i = 0; rc == 0 && i < p->npc; i++)
        place(p, &p->pc[i], hint == TESS_TEAM_UNKNOWN);
    return rc;
}

void tessi_tplan_split(tessi_tplan *p, int64_t s_min, int active, int team)
{
    int64_t w = active < team ? active : team;
    if (w < 1)
        w = 1;
    if (p->total / w < s_min) /* fewer workers, each at least s_min (one when all is small) */
        w = p->total / s_min > 1 ? p->total / s_min : 1;
    int64_t share = (p->total + w - 1) / w;
    share = (share + ALIGN - 1) / ALIGN * ALIGN;
    p->share = share;
    p->workers = p->total == 0 ? 0 : (int)((p->total + share - 1) / share);
}

int tessi_tplan_part(const tessi_tplan *p, int j, tessi_tpart *out)
{
    out->niov = out->nruns = out->bytes = 0;
    if (j >= p->workers)
        return 0;
    int64_t lo = (int64_t)j * p->share, hi = tessi_min64(lo + p->share, p->total), at = 0;
    int64_t r = 0;
    while (r < p->nruns && at + p->runs[r].len <= lo) /* the first run reaching into [lo, hi) */
        at += p->runs[r++].len;
    for (; r < p->nruns && at < hi; at += p->runs[r++].len) {
        const tessi_trun *run = &p->runs[r];
        int64_t from = tessi_max64(lo - at, 0), to = tessi_min64(hi - at, run->len);
        int rc = grow((void **)&out->runs, &out->cap_runs, out->nruns + 1, sizeof *out->runs);
        if (rc == 0)
            rc = grow((void **)&out->iov, &out->cap_iov, out->niov + run->niov,
                      sizeof *out->iov);
        if (rc)
            return rc;
        out->runs[out->nruns++] = (tessi_trun){.off = run->off + from, .len = to - from,
                                              .iov0 = out->niov, .niov = 0};
        int64_t pos = 0; /* byte of the run where iovec k starts */
        for (int64_t k = run->iov0; k < run->iov0 + run->niov; k++) {
            int64_t len = (int64_t)p->iov[k].iov_len, a = tessi_max64(from, pos),
                    b = tessi_min64(to, pos + len);
            if (a < b) {
                out->iov[out->niov++] = (struct iovec){
                    .iov_base = (char *)p->iov[k].iov_base + (a - pos), .iov_len = (size_t)(b - a)};
                out->runs[out->nruns - 1].niov++;
            }
            pos += len;
        }
        out->bytes += to - from;
    }
    return 0;
}

int tessi_tpart_own(tessi_tpart *out, const tess_team_args *a, int64_t at)
{
    out->niov = out->nruns = out->bytes = 0;
    int rc = grow((void **)&out->runs, &out->cap_runs, 1, sizeof *out->runs);
    if (rc == 0)
        rc = grow((void **)&out->iov, &out->cap_iov, a->n, sizeof *out->iov);
    for (int64_t i = 0; rc == 0 && i < a->n; i++)
        if (a->iov[i].iov_len > 0) {
            if (out->niov == 0 && a->offsets)
                at = a->offsets[i];
            out->iov[out->niov++] = a->iov[i];
            out->bytes += (int64_t)a->iov[i].iov_len;
        }
    if (rc == 0 && out->bytes > 0)
        out->runs[out->nruns++] = (tessi_trun){.off = at, .len = out->bytes, .iov0 = 0,
                                              .niov = out->niov};
    return rc;
}
