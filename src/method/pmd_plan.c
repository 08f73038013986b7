/*
 * pmd_plan.c - Algorithm 1 of paper 003 (when to sieve) and Algorithm 2 (how to sieve), as a
 * streaming planner over regions in increasing file order. O(1) time per region and O(1)
 * memory: the planner holds one open candidate group and one open run of regions moved alone,
 * never the regions themselves (a group is an index range plus its extent). See pmd.h for the
 * contract.
 */
#include "method/pmd.h"

bool tessi_pmd_join(const tessi_model *m, bool write, bool group_covered, int64_t hole,
                    int64_t len)
{
    double rd = tessi_model_byte(m, false), v;
    if (!write)
        v = (double)hole * rd + tessi_model_copy(m, len);
    else if (hole == 0 && group_covered)
        v = tessi_model_copy(m, len);
    else if (!m->locks)
        return false;
    else
        v = (double)hole * (rd + tessi_model_byte(m, true)) + (double)len * rd +
            tessi_model_copy(m, len);
    return v < tessi_model_alone(m, write);
}

int tessi_plan_init(tessi_planner *pl, const tessi_model *m, bool write, int64_t buf)
{
    if (!pl || !m)
        return tessi_error(TESS_ERR_ARG, "tessi_plan_init: NULL planner or model");
    if (buf < 1)
        return tessi_error(TESS_ERR_ARG, "tessi_plan_init: buffer %lld < 1", (long long)buf);
    int rc = tessi_model_check(m);
    if (rc)
        return rc;
    *pl = (tessi_planner){.m = m, .write = write, .buf = buf, .end = INT64_MIN};
    return 0;
}

void tessi_plan_run_kind(const tessi_model *m, bool write, tessi_group *run)
{
    tessi_cost direct = {0}, list = {0};
    tessi_group g = *run;
    g.kind = TESSI_GROUP_LIST;
    tessi_group_cost(m, write, &g, &list);
    g.kind = TESSI_GROUP_DIRECT;
    tessi_group_cost(m, write, &g, &direct);
    run->kind = m->batched && list.seconds < direct.seconds ? TESSI_GROUP_LIST
                                                             : TESSI_GROUP_DIRECT;
}

/* Emit the open run (tessi_plan_run_kind). */
static void emit_run(tessi_planner *pl, tessi_group *out, int64_t *k)
{
    if (pl->run.count == 0)
        return;
    tessi_plan_run_kind(pl->m, pl->write, &pl->run);
    out[(*k)++] = pl->run;
    pl->run.count = 0;
}

/*
 * Close the open group. Algorithm 1 admitted each of its regions on its variable cost alone;
 * here the costs shared by the whole group (one call instead of a call per region, and for a
 * write with holes the read-modify-write's read call and lock) decide: sieve when that is
 * strictly cheaper than moving every region alone, else the regions join the run. A group of
 * one region is always moved alone (no staging copy).
 */
static void close_group(tessi_planner *pl, tessi_group *out, int64_t *k)
{
    tessi_group g = pl->grp;
    if (g.count == 0)
        return;
    pl->grp.count = 0;
    if (g.count >= 2) {
        tessi_cost sieve = {0};
        g.kind = TESSI_GROUP_SIEVE;
        g.rmw = g.lock = pl->write && g.data < g.len;
        tessi_group_cost(pl->m, pl->write, &g, &sieve);
        double alone = (double)g.count * tessi_model_alone(pl->m, pl->write) +
                       (double)g.data * tessi_model_byte(pl->m, pl->write);
        if (sieve.seconds < alone) {
            emit_run(pl, out, k);
            out[(*k)++] = g;
            return;
        }
    }
    if (pl->run.count == 0) {
        pl->run = (tessi_group){.kind = TESSI_GROUP_DIRECT, .first = g.first, .count = g.count,
                                .off = g.off, .len = g.len, .data = g.data};
        return;
    }
    pl->run.count += g.count;
    pl->run.len = g.off + g.len - pl->run.off;
    pl->run.data += g.data;
}

/* One region: join the open group (Algorithm 1, within the buffer) or close it and open the
 * next group with this region. */
static int push_one(tessi_planner *pl, const tess_region *r, tessi_group *out, int64_t *k)
{
    int64_t end;
    if (r->off < 0 || r->len <= 0 || !tessi_add(r->off, r->len, &end))
        return tessi_error(TESS_ERR_ARG, "plan: region %lld (offset %lld, length %lld) is empty, "
                           "before byte 0 or ends past int64", (long long)pl->next,
                           (long long)r->off, (long long)r->len);
    if (r->off < pl->end)
        return tessi_error(TESS_ERR_ARG, "plan: region %lld at offset %lld starts before the end "
                           "%lld of the previous one (regions must increase)",
                           (long long)pl->next, (long long)r->off, (long long)pl->end);
    tessi_group *g = &pl->grp;
    if (g->count > 0) {
        int64_t hole = r->off - (g->off + g->len);
        if (end - g->off <= pl->buf &&
            tessi_pmd_join(pl->m, pl->write, g->data == g->len, hole, r->len)) {
            g->count++;
            g->len = end - g->off;
            g->data += r->len;
            pl->end = end;
            pl->next++;
            return 0;
        }
        close_group(pl, out, k);
    }
    *g = (tessi_group){.first = pl->next, .count = 1, .off = r->off, .len = r->len,
                       .data = r->len};
    pl->end = end;
    pl->next++;
    return 0;
}

int tessi_plan_push(tessi_planner *pl, const tess_region *r, int64_t n, tessi_group *out,
                    int64_t cap, int64_t *used, int64_t *produced)
{
    if (!pl || (n > 0 && !r) || n < 0 || !out || !used || !produced)
        return tessi_error(TESS_ERR_ARG, "tessi_plan_push: NULL argument or n < 0");
    if (cap < TESSI_PLAN_EMIT_MAX)
        return tessi_error(TESS_ERR_ARG, "tessi_plan_push: room for %lld groups, need %d",
                           (long long)cap, TESSI_PLAN_EMIT_MAX);
    *used = *produced = 0;
    while (*used < n && cap - *produced >= TESSI_PLAN_EMIT_MAX) {
        int rc = push_one(pl, &r[*used], out, produced);
        if (rc)
            return rc;
        (*used)++;
    }
    return 0;
}

int tessi_plan_flush(tessi_planner *pl, tessi_group *out, int64_t cap, int64_t *produced)
{
    if (!pl || !out || !produced || cap < TESSI_PLAN_EMIT_MAX)
        return tessi_error(TESS_ERR_ARG, "tessi_plan_flush: NULL argument or cap < %d",
                           TESSI_PLAN_EMIT_MAX);
    *produced = 0;
    close_group(pl, out, produced);
    emit_run(pl, out, produced);
    return 0;
}
