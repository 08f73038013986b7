/*
 * group.c - files opened over a group: tess_file_open_group, the collective state it attaches,
 * and the group operations it installs on the file (file.h: close, set_view, set_realms,
 * access_all). This is the front end's side of the core/coll boundary: file.c and access.c
 * never include src/coll; they call these through the table.
 *
 * Opening (collective; every step ends in one agreement, so every member gets the same
 * result, and a failure anywhere closes what was opened and frees the transport):
 *  1. the arguments and every hint, checked locally on every member as tess_file_open checks
 *     them (tessi_file_hints: collective hints too), then one agreement that also compares the
 *     path (a hash), the flags and the collective hints, and agrees on data sieving: whether any
 *     member may sieve writes (tess_method sieve or pmd, or auto with romio_ds_write not
 *     disable), which decides where the write gate is static (driver/gate.c: storage whose
 *     locks cannot be tested; elsewhere the gate itself keeps ranks that disagree on
 *     romio_ds_write from losing updates, issue 11). Nothing exists yet: a bad hint on any
 *     member creates nothing.
 *  2. with TESS_CREATE, rank 0 creates the file (TESS_EXCL: nobody had created it); agree;
 *  3. the others open it; agree;
 *  4. the collective state: aggregators, realm types, the two-phase workspace; agree.
 */
#include "core/file.h"

#include "coll/coll.h"
#include "type/type.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------------ hints */

/* The collective hints of the file, from its hint table values (validated at open). */
static void coll_hints(const tess_file *f, tessi_coll_hints *h)
{
    const tessi_hint_val *hv = f->hv;
    *h = (tessi_coll_hints){.cb_nodes = hv[TESSI_H_CB_NODES].given ? hv[TESSI_H_CB_NODES].i : 0,
                            .cb_buffer = hv[TESSI_H_CB_BUFFER].i,
                            .cb_read = (int)hv[TESSI_H_CB_READ].i,
                            .cb_write = (int)hv[TESSI_H_CB_WRITE].i,
                            .realms = (int)hv[TESSI_H_REALMS].i,
                            .striping_unit = hv[TESSI_H_STRIPING_UNIT].given
                                                 ? hv[TESSI_H_STRIPING_UNIT].i : 0,
                            .realm_size = hv[TESSI_H_REALM_SIZE].i,
                            .sieve_threshold = hv[TESSI_H_CB_SIEVE].i,
                            .pipeline = hv[TESSI_H_CB_PIPELINE].i,
                            .pack = (int)hv[TESSI_H_CB_PACK].i};
}

/* The collective hints as numbers, each twice (v, -v): after a MIN reduction, v == -(-v) on
 * every member iff all gave the same value. Fills 2 * (number of collective hints). */
static int64_t hint_vector(const tess_file *f, int64_t *v)
{
    int64_t n = 0;
    for (int k = 0; k < TESSI_NHINTS; k++)
        if (tessi_hints_table[k].scope == TESSI_SCOPE_COLL) {
            v[n++] = f->hv[k].i;
            v[n++] = -f->hv[k].i;
        }
    return n;
}

/* ------------------------------------------------------------------ group operations */

static void coll_free(tessi_coll *c)
{
    if (!c)
        return;
    tessi_twophase_fini(c);
    tess_type_free(c->periodic.type);
    free(c->aggs);
    free(c->memo);
    free(c->recs);
    free(c->scratch);
    free(c);
}

static int coll_close(tess_file *f, int rc)
{
    tessi_coll *c = f->coll;
    rc = tessi_group_agree(&c->g, rc, "tess_file_close", NULL, 2);
    c->g.ops->free(c->g.ctx);
    coll_free(c);
    f->coll = NULL;
    return rc;
}

static int coll_set_view(tess_file *f, int64_t disp, tess_type *etype, tess_type *filetype)
{
    tessi_view v;
    tessi_view_init(&v);
    int rc = tessi_view_set(&v, disp, etype, filetype);
    tessi_coll *c = f->coll;
    if ((rc = tessi_group_agree(&c->g, rc, "tess_file_set_view", NULL, 2))) {
        tessi_view_release(&v);
        return rc;
    }
    tessi_view_release(&f->view);
    f->view = v;
    return 0;
}

static int coll_set_realms(tess_file *f, int64_t disp, tess_type *realm, int64_t shift)
{
    tessi_coll *c = f->coll;
    int rc = 0;
    if (realm)
        rc = tessi_realms_check(realm, shift, c->naggs);
    if ((rc = tessi_group_agree(&c->g, rc, "tess_file_set_realms", NULL, 2)))
        return rc;
    tess_type_free(c->periodic.type);
    c->periodic = (tessi_realm_type){.type = realm ? tess_type_ref(realm) : NULL,
                                     .anchor = disp, .shift = shift};
    c->h.realms = realm ? TESSI_REALM_USER : TESSI_REALM_EVEN;
    return 0;
}

/* ------------------------------------------------------------------ access */

/* This process's record: its verdict and the shape of its access. */
static int make_record(const char *who, tess_file *f, int64_t offset, const void *buf,
                       int64_t count, const tess_type *memtype, bool write, tessi_coll_rec *r)
{
    int64_t total = 0;
    *r = (tessi_coll_rec){.op = write ? 2 : 1, .atomic = f->atomic};
    int rc = tessi_file_check_access(who, f, offset, buf, count, memtype, write, &total);
    if (rc == 0 && total > 0) {
        tessi_rsrc src;
        if ((rc = tessi_view_regions(&src, &f->view, offset, total, NULL)) == 0) {
            const tess_type *ft = f->view.filetype;
            int64_t fsize = tess_type_size(ft);
            tessi_i128 est = ((tessi_i128)total * tess_type_num_regions(ft) + fsize - 1) / fsize;
            r->lo = src.lo;
            r->hi = src.hi;
            r->regions = est > INT64_MAX ? INT64_MAX : (int64_t)est;
            r->mblocks = tessi_type_blocks(memtype, total);
            tessi_rsrc_close(&src);
        }
    }
    r->bytes = rc ? 0 : total;
    r->rc = rc;
    return rc;
}

/* The verdict of the records: mine, else the first failed rank's, else a read/write mix-up. */
static int records_verdict(const tessi_coll *c, int mine, const char *who)
{
    if (mine)
        return mine;
    for (int r = 0; r < c->g.size; r++)
        if (c->recs[r].rc)
            return tessi_error((int)c->recs[r].rc, "%s: failed on rank %d: %s", who, r,
                               tess_strerror((int)c->recs[r].rc));
    for (int r = 1; r < c->g.size; r++)
        if (c->recs[r].op != c->recs[0].op)
            return tessi_error(TESS_ERR_ARG, "%s: rank %d reads while rank %d writes in the same "
                               "collective call", who, c->recs[r].op == 1 ? r : 0,
                               c->recs[r].op == 1 ? 0 : r);
    return 0;
}

/* One line for the tess_debug_decisions file: how the collective access runs and why. */
static void log_choice(const tessi_coll *c, bool write, int64_t data, int64_t atomic,
                       const tessi_coll_choice *how, const tessi_hints *h)
{
    char line[256];
    int n = snprintf(line, sizeof line, "tessera collective: %s ranks=%d data=%lld%s "
                     "independent_s=%.4g twophase_s=%.4g (exchange %.4g x %.3g measured) "
                     "aggregators=%d -> %s\n",
                     write ? "write" : "read", c->g.size, (long long)data,
                     atomic ? " atomic" : "", how->ind, how->tp, how->xtp, how->xscale,
                     how->naggs,
                     how->twophase ? "two-phase" : "independent");
    if (n > 0)
        tessi_log_decision(h, line, n < (int)sizeof line ? n : (int)sizeof line - 1);
}

/* Does this read repeat the shape of the last one, which every member ran independently? */
static bool read_ahead(const tessi_coll *c, const tessi_coll_rec *mine)
{
    const tessi_coll_rec *a = &c->ahead;
    return c->ahead_ok && mine->op == 1 && mine->rc == 0 && mine->bytes > 0 &&
           mine->bytes == a->bytes && mine->lo == a->lo && mine->hi == a->hi &&
           mine->regions == a->regions && mine->mblocks == a->mblocks;
}

/* The collective access; rc0: a failure of this process found before (it joins the
 * agreement with it and moves nothing). */
static int coll_access_rc(int rc0, const char *who, tess_file *f, int64_t offset, void *buf,
                          int64_t count, tess_type *memtype, int64_t *bytes, bool write)
{
    tessi_coll *c = f->coll;
    tessi_coll_rec mine = {.rc = rc0, .op = write ? 2 : 1};
    int64_t done = 0, data = 0, atomic = 0;
    int rc = rc0 ? rc0 : make_record(who, f, offset, buf, count, memtype, write, &mine);
    if (read_ahead(c, &mine)) { /* its outcome goes out with the record */
        rc = tessi_file_access(who, f, offset, buf, count, memtype, &done, write);
        mine.rc = rc;
        mine.early = 1;
    }
    c->ahead_ok = false;
    tessi_coll_stamp(c, &mine);
    double t0 = tessi_now();
    int err = c->g.ops->allgather(c->g.ctx, &mine, sizeof mine, c->recs);
    double step = tessi_now() - t0;
    tessi_storage_emit(&f->st, (tessi_event){.kind = TESSI_EV_EXCHANGE, .seconds = step});
    tessi_coll_learn(c, NULL, step, -1);
    if (err)
        return rc ? rc : err;
    if ((rc = records_verdict(c, rc, who)))
        goto out;
    int64_t active = 0;
    for (int r = 0; r < c->g.size; r++) {
        data += c->recs[r].bytes;
        atomic |= c->recs[r].atomic;
        active += c->recs[r].bytes > 0;
    }
    if (data == 0) /* nobody has data: done, on every rank alike */
        goto out;
    /* atomic mode: each access under its own extent lock, which two-phase (one access spread
     * over several aggregators) cannot hold */
    tessi_coll_choice how = {.twophase = false};
    if (!atomic) /* independent sieving writes lock: they take turns where they overlap */
        tessi_coll_decide(c, &f->hints, write, f->sieve_writes, &how);
    if (f->hints.decisions[0] && c->g.rank == 0)
        log_choice(c, write, data, atomic, &how, &f->hints);
    if (!how.twophase) {
        int64_t late = 0; /* members whose access is still to do */
        for (int r = 0; r < c->g.size; r++)
            late += !c->recs[r].early;
        if (late) {
            if (!mine.early) { /* priced as the policy priced it: `active` writers at once */
                c->shared.model.p = c->shared.dirty.p = active;
                rc = tessi_file_access_hinted(who, f, &c->shared, offset, buf, count, memtype,
                                              &done, write);
            }
            rc = tessi_group_agree(&c->g, rc, who, NULL, 2);
        }
        c->ahead_ok = rc == 0 && !write;
        c->ahead = mine;
        goto out;
    }
    done = 0; /* a read ahead guessed wrong: two-phase reads it again */
    tessi_coll_access a = {.c = c, .st = &f->st, .hints = &f->hints, .view = &f->view,
                           .write = write,
                           .lock_writes = write && tessi_gate_locked_writes(&f->st),
                           .readable = f->readable, .naggs = how.naggs, .buf = buf,
                           .memtype = memtype,
                           .count = count, .start = offset * f->view.esize, .bytes = mine.bytes,
                           .recs = c->recs};
    tessi_storage_emit(&f->st, (tessi_event){.kind = TESSI_EV_ACCESS, .len = mine.bytes});
    double x0 = f->st.stats.exchange_seconds;
    rc = tessi_twophase(&a, &done);
    tessi_coll_learn(c, &how, -1, rc ? -1 : f->st.stats.exchange_seconds - x0);
out:
    if (bytes)
        *bytes = done;
    return rc;
}

static int coll_access(const char *who, tess_file *f, int64_t offset, void *buf, int64_t count,
                       tess_type *memtype, int64_t *bytes, bool write)
{
    return coll_access_rc(0, who, f, offset, buf, count, memtype, bytes, write);
}

int tessi_file_group_offsets(tess_file *f, int rc, int64_t mine, int64_t *before, int64_t *total)
{
    tessi_coll *c = f->coll;
    int64_t rec[2] = {rc, mine}, *all = c->scratch; /* 2 * size entries */
    int err = c->g.ops->allgather(c->g.ctx, rec, sizeof rec, all);
    if (rc || err)
        return rc ? rc : err;
    *before = *total = 0;
    for (int r = 0; r < c->g.size; r++) {
        if (all[2 * r])
            return tessi_error((int)all[2 * r], "team access: failed on rank %d: %s", r,
                               tess_strerror((int)all[2 * r]));
        *before += r < c->g.rank ? all[2 * r + 1] : 0;
        *total += all[2 * r + 1];
    }
    return 0;
}

int tessi_file_group_access(tess_file *f, int rc, int64_t disp, tess_type *filetype, void *buf,
                            int64_t count, tess_type *memtype, int64_t *bytes, bool write)
{
    const char *who = write ? "tess_team_write" : "tess_team_read";
    tessi_view saved = f->view, v;
    tessi_view_init(&v);
    if (rc == 0 && filetype)
        rc = tessi_view_set(&v, disp, TESS_BYTE, filetype);
    f->view = v; /* this process's pieces, for this access only */
    rc = coll_access_rc(rc, who, f, 0, buf, count, memtype, bytes, write);
    tessi_view_release(&f->view);
    f->view = saved;
    return rc;
}

/* The group operations of a file opened over a group. */
static const tessi_file_group coll_group = {
    .close = coll_close,
    .set_view = coll_set_view,
    .set_realms = coll_set_realms,
    .access_all = coll_access,
};

/* ------------------------------------------------------------------ open */

/* FNV-1a of the path: equal paths give equal hashes (the check compares hashes). */
static int64_t path_hash(const char *p)
{
    uint64_t h = UINT64_C(14695981039346656037);
    for (; *p; p++)
        h = (h ^ (unsigned char)*p) * UINT64_C(1099511628211);
    return (int64_t)(h >> 1);
}

/* The number of collective hints (the same on every member: one table). */
static int64_t coll_hint_count(void)
{
    int64_t n = 0;
    for (int k = 0; k < TESSI_NHINTS; k++)
        n += tessi_hints_table[k].scope == TESSI_SCOPE_COLL;
    return n;
}

/* Step 1: the arguments and hints of every member (rc: a failure found before), then one
 * agreement comparing the path, the flags and the collective hints, and agreeing on data
 * sieving (see the top of this file). On success f holds the checked hints. */
static int check_everywhere(const tessi_coll_group *g, int rc, const char *path, int flags,
                            const tess_info *info, tess_file *f, const char **rest)
{
    const char *who = "tess_file_open_group";
    int64_t v[7 + 2 * TESSI_NHINTS] = {0}, nv = 7 + 2 * coll_hint_count();
    if (rc == 0 && !path)
        rc = tessi_error(TESS_ERR_ARG, "%s: path is NULL", who);
    if (rc == 0)
        rc = tessi_file_check_flags(who, flags);
    bool checked = rc == 0 && (rc = tessi_file_hints(who, path, flags, info, f, rest)) == 0;
    if (checked) {
        int64_t h = path_hash(path), sw = f->sieve_writes;
        int64_t mine[5] = {h, -h, flags, -(int64_t)flags, -sw};
        memcpy(v + 2, mine, sizeof mine);
        hint_vector(f, v + 7);
    }
    if ((rc = tessi_group_agree(g, rc, who, v, nv)))
        goto fail;
    if (v[2] != -v[3] || v[4] != -v[5])
        rc = tessi_error(TESS_ERR_ARG, "%s: the processes give different %s", who,
                         v[2] != -v[3] ? "paths" : "flags");
    for (int64_t i = 7; rc == 0 && i < nv; i += 2)
        if (v[i] != -v[i + 1])
            rc = tessi_error(TESS_ERR_ARG, "%s: the processes give different collective hints "
                             "(cb_nodes, cb_buffer_size, romio_cb_*, tess_realms, striping_unit, "
                             "tess_realm_size, tess_cb_sieve_threshold, tess_cb_pipeline, "
                             "tess_cb_pack must agree)", who);
    if (rc)
        goto fail;
    /* sieving writes anywhere: where the write gate is static, everybody locks (read-only
     * members write nothing) */
    f->sieve_writes = -v[6] && !(flags & TESS_RDONLY);
    return 0;
fail:
    if (checked)
        tessi_file_hints_release(f);
    return rc;
}

/* Step 4: the collective state of f over g (local), then the agreement. */
static int attach(const tessi_coll_group *g, tess_file *f)
{
    const char *who = "tess_file_open_group";
    tessi_coll *c = calloc(1, sizeof *c);
    int rc = c ? 0 : tessi_error(TESS_ERR_NOMEM, "%s: out of memory", who);
    if (rc == 0) {
        c->g = *g;
        c->scratch = malloc(sizeof(int64_t) * 2 * (size_t)g->size);
        c->recs = malloc(sizeof(tessi_coll_rec) * (size_t)g->size);
        if (!c->recs || !c->scratch)
            rc = tessi_error(TESS_ERR_NOMEM, "%s: out of memory", who);
    }
    if (rc == 0) {
        coll_hints(f, &c->h);
        c->shared = f->hints; /* final once the file is open; each call sets its p */
        rc = tessi_coll_place_aggregators(c);
    }
    if (rc == 0)
        rc = tessi_coll_memo_init(c);
    if (rc == 0 && c->h.realms == TESSI_REALM_CYCLIC)
        rc = tessi_realms_cyclic(c->naggs, c->h.realm_size, &c->periodic);
    if (rc == 0)
        rc = tessi_twophase_init(c);
    /* the processors of the smallest node (the policy's parallelism, equal everywhere) */
    int64_t v[3] = {0, 0, sysconf(_SC_NPROCESSORS_ONLN)};
    if ((rc = tessi_group_agree(g, rc, who, v, 3))) {
        coll_free(c);
        return rc;
    }
    c->cores = (int)tessi_max64(1, tessi_min64(v[2], INT32_MAX));
    f->coll = c;
    f->group = &coll_group;
    f->hv[TESSI_H_CB_NODES].i = c->naggs; /* the aggregators in use (tess_file_get_info) */
    return 0;
}

int tess_file_open_group(const struct tess_group_ops *ops, void *ctx, const char *path,
                         int flags, const tess_info *info, tess_file **out)
{
    const char *who = "tess_file_open_group", *rest = path;
    tessi_coll_group g;
    int rc = tessi_group_init(&g, ops, ctx);
    if (rc) /* a table of another layout: nothing of it can be called, ctx stays the caller's */
        return rc;
    tess_file *f = out ? calloc(1, sizeof *f) : NULL;
    if (!f)
        rc = out ? tessi_error(TESS_ERR_NOMEM, "%s: out of memory", who)
                 : tessi_error(TESS_ERR_ARG, "%s: out is NULL", who);
    if ((rc = check_everywhere(&g, rc, path, flags, info, f, &rest))) {
        free(f);
        ops->free(ctx);
        return rc;
    }
    if (!(f->path = strdup(path))) { /* a local failure: the first agreement below reports it */
        rc = tessi_error(TESS_ERR_NOMEM, "%s: out of memory", who);
        tessi_file_hints_release(f);
        free(f);
        f = NULL;
    }
    /* f holds checked hints. 2. rank 0 creates; 3. the others open what exists. An open that
     * fails frees f (tessi_file_open_checked); one that succeeds makes f an open file. */
    bool create = flags & TESS_CREATE, opened = false;
    if (create && g.rank == 0 && rc == 0) {
        opened = (rc = tessi_file_open_checked(rest, flags, info, f, &f)) == 0;
        f = opened ? f : NULL;
    }
    if (create && (rc = tessi_group_agree(&g, rc, who, NULL, 2)))
        goto fail;
    if ((!create || g.rank != 0) && rc == 0) {
        opened = (rc = tessi_file_open_checked(rest, flags & ~(TESS_CREATE | TESS_EXCL), info,
                                               f, &f)) == 0;
        f = opened ? f : NULL;
    }
    if ((rc = tessi_group_agree(&g, rc, who, NULL, 2)) || (rc = attach(&g, f)))
        goto fail;
    *out = f;
    return 0;
fail:
    if (opened) { /* not collective yet: closes this handle only */
        tess_file_close(f);
    } else if (f) { /* checked, never opened */
        tessi_file_hints_release(f);
        free(f->path);
        free(f);
    }
    ops->free(ctx);
    return rc;
}
