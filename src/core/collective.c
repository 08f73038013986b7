/*
 * collective.c - the collective calls: tess_file_read_at_all / tess_file_write_at_all, the
 * collective forms of set_view and close, tess_file_set_realms, the collective hints, where the
 * aggregators go, and the choice between two-phase and independent access. MPI-free: the group
 * is reached only through the communicator table (method/comm.h); src/mpi/ makes one over MPI.
 *
 * Hints of a file opened with a communicator (parsed at open; every rank must give the same
 * values, else the open fails everywhere; unknown keys are ignored):
 *   cb_nodes                 aggregators, >= 1, clamped to the group size (default: one per
 *                            node, see place_aggregators)
 *   cb_buffer_size           collective buffer per aggregator, bytes, 1 .. 2^30    (16 MiB)
 *   romio_cb_read            enable | disable | automatic: two-phase for reads     (automatic)
 *   romio_cb_write           enable | disable | automatic: two-phase for writes    (automatic)
 *   tess_realms              even | aligned | persistent | balanced | cyclic       (even)
 *   striping_unit            bytes, 1 .. 2^40: aligned realm boundaries (default 1 MiB when
 *                            aligned), persistent realm rounding, cyclic block default
 *   tess_realm_size          cyclic realm block, bytes, 1 .. 2^40 (default striping_unit, else
 *                            1 MiB)
 *   tess_cb_sieve_threshold  file bytes per region below which an aggregator moves its buffer
 *                            as one span (sieving), 0 .. 2^40                      (16 KiB)
 *   tess_cb_pipeline         enable | disable: overlap exchange and storage       (disable)
 *                            (two halves of the buffer; off by default because without an
 *                            asynchronous progress engine in MPI the transfer happens inside the
 *                            wait anyway, and on page-cached storage both halves are CPU copies:
 *                            measured 3x slower at 4 ranks on 2 cores)
 *
 * romio_cb_* = automatic decides per call from the records every rank shares (no interleaving
 * rule): the cost model of the file prices the best independent method of each rank (list I/O
 * or sieving of its own extent, sieving writes paying a read and a lock) against two-phase
 * (the aggregators' windows, sieved or listed, plus moving every byte between processes and a
 * fixed cost per round), each as the slowest process; two-phase runs when it is cheaper. So a
 * sparse, non-overlapping but fragmented pattern goes collective whenever the aggregate is dense
 * enough for the aggregators' windows to beat each rank's small regions.
 */
#include "core/collective.h"

#include "type/type.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__extension__ typedef __int128 i128;

#define HINT_CAP 1024
#define MAX_CB_BUFFER (INT64_C(1) << 30)
#define MAX_BYTES_HINT (INT64_C(1) << 40)

/* Seconds a round of two-phase costs besides storage and data: the agreement (a small
 * allreduce) and the messages' latency, about what an allreduce and a message take between the
 * processes of one node. Used by romio_cb_* = automatic only. */
#define ROUND_SECONDS 20e-6

/* ------------------------------------------------------------------ hints */

static int hint_int(const tess_info *info, const char *key, int64_t min, int64_t max,
                    int64_t *out)
{
    char val[HINT_CAP], *end;
    int found = 0;
    int rc = info ? tess_info_get(info, key, val, sizeof val, &found) : 0;
    if (rc || !found)
        return rc;
    errno = 0;
    long long v = strtoll(val, &end, 10);
    if (val[0] < '0' || val[0] > '9' || *end || errno || v < min || v > max)
        return tessi_error(TESS_ERR_ARG, "tess_file_open_mpi: hint %s = '%s' is not an integer "
                           "in [%lld, %lld]", key, val, (long long)min, (long long)max);
    *out = v;
    return 0;
}

static int hint_pick(const tess_info *info, const char *key, const char *const *names, int n,
                     int *out)
{
    char val[HINT_CAP];
    int found = 0;
    int rc = info ? tess_info_get(info, key, val, sizeof val, &found) : 0;
    if (rc || !found)
        return rc;
    for (int i = 0; i < n; i++)
        if (strcmp(val, names[i]) == 0) {
            *out = i;
            return 0;
        }
    return tessi_error(TESS_ERR_ARG, "tess_file_open_mpi: hint %s = '%s' is not one of its "
                       "values", key, val);
}

static int parse_hints(const tess_info *info, tessi_coll_hints *h)
{
    static const char *const cb_names[] = {"automatic", "enable", "disable"};
    static const char *const realm_names[] = {"even", "aligned", "persistent", "balanced",
                                              "cyclic"};
    static const char *const onoff[] = {"disable", "enable"};
    int pipe = 0, rc;
    *h = (tessi_coll_hints){.cb_nodes = 0, .cb_buffer = 16 << 20, .cb_read = TESSI_DS_AUTOMATIC,
                            .cb_write = TESSI_DS_AUTOMATIC, .realms = TESSI_REALM_EVEN,
                            .sieve_threshold = 16 << 10};
    if ((rc = hint_int(info, "cb_nodes", 1, INT64_MAX, &h->cb_nodes)) ||
        (rc = hint_int(info, "cb_buffer_size", 1, MAX_CB_BUFFER, &h->cb_buffer)) ||
        (rc = hint_pick(info, "romio_cb_read", cb_names, 3, &h->cb_read)) ||
        (rc = hint_pick(info, "romio_cb_write", cb_names, 3, &h->cb_write)) ||
        (rc = hint_pick(info, "tess_realms", realm_names, 5, &h->realms)) ||
        (rc = hint_int(info, "striping_unit", 1, MAX_BYTES_HINT, &h->striping_unit)) ||
        (rc = hint_int(info, "tess_realm_size", 1, MAX_BYTES_HINT, &h->realm_size)) ||
        (rc = hint_int(info, "tess_cb_sieve_threshold", 0, MAX_BYTES_HINT,
                       &h->sieve_threshold)) ||
        (rc = hint_pick(info, "tess_cb_pipeline", onoff, 2, &pipe)))
        return rc;
    h->pipeline = pipe;
    if (!h->realm_size)
        h->realm_size = h->striping_unit ? h->striping_unit : INT64_C(1) << 20;
    return 0;
}

/* Set key to the decimal value v in out. */
static int info_int(tess_info *out, const char *key, int64_t v)
{
    char text[24];
    snprintf(text, sizeof text, "%lld", (long long)v);
    return tess_info_set(out, key, text);
}

int tessi_coll_get_info(const tess_file *f, tess_info *out)
{
    static const char *const cb_names[] = {"automatic", "enable", "disable"};
    static const char *const realm_names[] = {"even", "aligned", "persistent", "balanced",
                                              "cyclic"};
    tessi_coll_hints h;
    int64_t naggs = 1;
    int rc = 0;
    if (f->coll) {
        h = f->coll->h;
        naggs = f->coll->naggs;
    } else {
        parse_hints(NULL, &h);
    }
    if ((rc = info_int(out, "cb_nodes", naggs)) ||
        (rc = info_int(out, "cb_buffer_size", h.cb_buffer)) ||
        (rc = tess_info_set(out, "romio_cb_read", cb_names[h.cb_read])) ||
        (rc = tess_info_set(out, "romio_cb_write", cb_names[h.cb_write])) ||
        (h.realms != TESSI_REALM_USER && /* tess_file_set_realms: no hint says that */
         (rc = tess_info_set(out, "tess_realms", realm_names[h.realms]))) ||
        (rc = info_int(out, "tess_realm_size", h.realm_size)) ||
        (rc = info_int(out, "tess_cb_sieve_threshold", h.sieve_threshold)) ||
        (rc = tess_info_set(out, "tess_cb_pipeline", h.pipeline ? "enable" : "disable")))
        return rc;
    if (h.striping_unit || h.realms == TESSI_REALM_ALIGNED)
        rc = info_int(out, "striping_unit", h.striping_unit ? h.striping_unit
                                                           : INT64_C(1) << 20);
    return rc;
}

/* The hints as numbers, each twice (v, -v): after a MIN reduction, v == -(-v) on every rank iff
 * all ranks gave the same value. */
#define NHINTS 9
static void hint_vector(const tessi_coll_hints *h, int64_t *v)
{
    int64_t x[NHINTS] = {h->cb_nodes, h->cb_buffer, h->cb_read, h->cb_write, h->realms,
                         h->striping_unit, h->realm_size, h->sieve_threshold, h->pipeline};
    for (int i = 0; i < NHINTS; i++) {
        v[2 * i] = x[i];
        v[2 * i + 1] = -x[i];
    }
}

/* ------------------------------------------------------------------ aggregators */

/*
 * Where the aggregators go. Default count: one per node (ROMIO's rule: a node's processes share
 * its memory bandwidth and its path to storage, so a second aggregator on a node adds exchange
 * traffic without adding bandwidth). Placement: the first rank of every node, then the second
 * of every node, and so on, so any count spreads over the nodes.
 */
static int place_aggregators(tessi_coll *c)
{
    int P = c->size, nnodes = 0;
    int *node = malloc(sizeof(int) * (size_t)P * 3);
    if (!node)
        return tessi_error(TESS_ERR_NOMEM, "tess_file_open_mpi: out of memory (%d ranks)", P);
    int *within = node + P, *order = within + P, *count;
    c->comm->nodes(c->ctx, node);
    for (int r = 0; r < P; r++)
        nnodes = node[r] + 1 > nnodes ? node[r] + 1 : nnodes;
    /* order: ranks by (index within their node, node), by a counting sort on that key */
    if (!(count = calloc((size_t)P + 1, sizeof(int)))) {
        free(node);
        return tessi_error(TESS_ERR_NOMEM, "tess_file_open_mpi: out of memory (%d ranks)", P);
    }
    for (int r = 0; r < P; r++) /* within[r]: r's index among its node's ranks */
        within[r] = count[node[r]]++;
    memset(count, 0, sizeof(int) * ((size_t)P + 1));
    for (int r = 0; r < P; r++)
        count[within[r] + 1]++;
    for (int i = 0; i < P; i++)
        count[i + 1] += count[i];
    for (int r = 0; r < P; r++) /* each index lists every node having that many ranks once */
        order[count[within[r]]++] = r;
    free(count);
    c->naggs = (int)(c->h.cb_nodes ? (c->h.cb_nodes < P ? c->h.cb_nodes : P) : nnodes);
    c->aggs = malloc(sizeof(int) * (size_t)c->naggs);
    if (!c->aggs) {
        free(node);
        return tessi_error(TESS_ERR_NOMEM, "tess_file_open_mpi: out of memory");
    }
    c->my_agg = -1;
    for (int a = 0; a < c->naggs; a++) {
        c->aggs[a] = order[a];
        if (order[a] == c->rank)
            c->my_agg = a;
    }
    free(node);
    return 0;
}

/* A periodic realm type: blocks of `block` bytes dealt round-robin to naggs aggregators. */
static int cyclic_type(int naggs, int64_t block, tessi_realm_type *out)
{
    tess_type *blk = NULL;
    int64_t ext;
    if (!tessi_mul(block, naggs, &ext))
        return tessi_error(TESS_ERR_OVERFLOW, "tess_file_open_mpi: tess_realm_size %lld times "
                           "%d aggregators overflows", (long long)block, naggs);
    int rc = tess_type_contiguous(block, TESS_BYTE, &blk);
    if (rc == 0)
        rc = tess_type_resized(blk, 0, ext, &out->type);
    tess_type_free(blk);
    out->anchor = 0;
    out->shift = block;
    return rc;
}

static void coll_free(tessi_coll *c)
{
    if (!c)
        return;
    tessi_twophase_fini(c);
    tess_type_free(c->periodic.type);
    free(c->aggs);
    free(c->recs);
    free(c->scratch);
    free(c);
}

int tessi_coll_attach(tess_file *f, const struct tessi_comm *comm, void *ctx,
                      const tess_info *info)
{
    int64_t v[2 + 2 * NHINTS] = {0};
    tessi_coll *c = NULL;
    int rc = 0;
    if (comm->version != TESSI_COMM_VERSION) { /* a build mismatch: every rank has it */
        comm->free(ctx);
        return tessi_error(TESS_ERR_INTERNAL, "tess_file_open_mpi: communicator table "
                           "version %d, expected %d", comm->version, TESSI_COMM_VERSION);
    }
    if (!(c = calloc(1, sizeof *c)))
        rc = tessi_error(TESS_ERR_NOMEM, "tess_file_open_mpi: out of memory");
    else {
        c->comm = comm;
        c->ctx = ctx;
        c->rank = comm->rank(ctx);
        c->size = comm->size(ctx);
        c->scratch = malloc(sizeof(int64_t) * 2 * (size_t)c->size);
        if (!(c->recs = malloc(sizeof(tessi_coll_rec) * (size_t)c->size)) || !c->scratch)
            rc = tessi_error(TESS_ERR_NOMEM, "tess_file_open_mpi: out of memory");
    }
    if (rc == 0 && (rc = parse_hints(info, &c->h)) == 0 && (rc = place_aggregators(c)) == 0 &&
        c->h.realms == TESSI_REALM_CYCLIC)
        rc = cyclic_type(c->naggs, c->h.realm_size, &c->periodic);
    if (rc == 0)
        rc = tessi_twophase_init(c);
    /* agree on the verdict and on the hints */
    if (rc == 0)
        hint_vector(&c->h, v + 2);
    v[0] = rc;
    v[1] = rc ? -(int64_t)comm->rank(ctx) - 1 : 0;
    int err = comm->allreduce(ctx, v, 2 + 2 * NHINTS, TESSI_REDUCE_MIN);
    if (err || rc)
        rc = rc ? rc : err;
    else if (v[0])
        rc = tessi_error((int)v[0], "tess_file_open_mpi: failed on rank %lld: %s",
                         (long long)(-v[1] - 1), tess_strerror((int)v[0]));
    for (int i = 0; rc == 0 && i < NHINTS; i++)
        if (v[2 + 2 * i] != -v[3 + 2 * i])
            rc = tessi_error(TESS_ERR_ARG, "tess_file_open_mpi: the ranks give different "
                             "collective hints (cb_nodes, cb_buffer_size, romio_cb_*, "
                             "tess_realms, striping_unit, tess_realm_size, "
                             "tess_cb_sieve_threshold, tess_cb_pipeline must agree)");
    if (rc) {
        coll_free(c);
        comm->free(ctx);
        return rc;
    }
    f->coll = c;
    return 0;
}

int tessi_coll_close(tess_file *f, int rc)
{
    tessi_coll *c = f->coll;
    rc = tessi_coll_agree(c, rc, "tess_file_close");
    c->comm->free(c->ctx);
    coll_free(c);
    f->coll = NULL;
    return rc;
}

int tessi_coll_set_view(tess_file *f, int64_t disp, tess_type *etype, tess_type *filetype)
{
    tessi_view v;
    tessi_view_init(&v);
    int rc = tessi_view_set(&v, disp, etype, filetype);
    if ((rc = tessi_coll_agree(f->coll, rc, "tess_file_set_view"))) {
        tessi_view_release(&v);
        return rc;
    }
    tessi_view_release(&f->view);
    f->view = v;
    return 0;
}

/* ------------------------------------------------------------------ realms by call */

/* Check that the tiles of t from anchor + a * shift, a in [0, naggs), partition the file: one
 * period of t (its extent) is covered exactly once. */
static int check_partition(const tess_type *t, int64_t shift, int naggs)
{
    int64_t period = t->extent, nreg = t->num_regions, n = 0, size;
    if (t->size <= 0 || period <= 0 || !t->monotonic || t->true_ub - t->true_lb > period)
        return tessi_error(TESS_ERR_VIEW, "tess_file_set_realms: the realm type must have data "
                           "in increasing, non-overlapping regions within its extent");
    if (shift < 0 || !tessi_mul(t->size, naggs, &size) || size != period)
        return tessi_error(TESS_ERR_VIEW, "tess_file_set_realms: %d realms of %lld bytes do not "
                           "fill the period of %lld bytes", naggs, (long long)t->size,
                           (long long)period);
    if (nreg > (INT64_C(1) << 20) / naggs)
        return tessi_error(TESS_ERR_UNSUPPORTED, "tess_file_set_realms: %lld regions per realm "
                           "tile are too many to check", (long long)nreg);
    tess_region *r = malloc(sizeof(tess_region) * (size_t)(2 * nreg * naggs + 1));
    tess_cursor *cur = NULL;
    int rc = r ? tess_cursor_create(t, 1, &cur)
               : tessi_error(TESS_ERR_NOMEM, "tess_file_set_realms: out of memory");
    for (int a = 0; rc == 0 && a < naggs; a++) {
        int64_t got;
        tess_region g;
        if ((rc = tess_cursor_seek(cur, 0)))
            break;
        while ((rc = tess_cursor_next(cur, &g, 1, -1, &got)) == 0 && got == 1) {
            int64_t off = (int64_t)((((i128)g.off + (i128)a * shift) % period + period) % period);
            int64_t first = g.len < period - off ? g.len : period - off;
            r[n++] = (tess_region){off, first};
            if (first < g.len) /* wraps into the next period */
                r[n++] = (tess_region){0, g.len - first};
        }
    }
    /* sort by offset (insertion sort on a bounded, mostly ordered list) and check the cover */
    for (int64_t i = 1; rc == 0 && i < n; i++)
        for (int64_t j = i; j > 0 && r[j - 1].off > r[j].off; j--) {
            tess_region x = r[j];
            r[j] = r[j - 1];
            r[j - 1] = x;
        }
    for (int64_t i = 0, at = 0; rc == 0 && i < n; at += r[i].len, i++)
        if (r[i].off != at)
            rc = tessi_error(TESS_ERR_VIEW, "tess_file_set_realms: the realms %s at byte %lld "
                             "of the period", r[i].off < at ? "overlap" : "leave a hole",
                             (long long)(r[i].off < at ? r[i].off : at));
    tess_cursor_free(cur);
    free(r);
    return rc;
}

int tess_file_set_realms(tess_file *f, int64_t disp, tess_type *realm, int64_t shift)
{
    if (!f)
        return tessi_error(TESS_ERR_ARG, "tess_file_set_realms: f is NULL");
    tessi_coll *c = f->coll;
    int rc = 0;
    if (c && realm)
        rc = check_partition(realm, shift, c->naggs);
    if (c)
        rc = tessi_coll_agree(c, rc, "tess_file_set_realms");
    if (rc || !c) /* without a group there are no aggregators: nothing to set */
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
            i128 est = ((i128)total * ft->num_regions + ft->size - 1) / ft->size;
            r->lo = src.lo;
            r->hi = src.hi;
            r->regions = est > INT64_MAX ? INT64_MAX : (int64_t)est;
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
    for (int r = 0; r < c->size; r++)
        if (c->recs[r].rc)
            return tessi_error((int)c->recs[r].rc, "%s: failed on rank %d: %s", who, r,
                               tess_strerror((int)c->recs[r].rc));
    for (int r = 1; r < c->size; r++)
        if (c->recs[r].op != c->recs[0].op)
            return tessi_error(TESS_ERR_ARG, "%s: rank %d reads while rank %d writes in the same "
                               "collective call", who, c->recs[r].op == 1 ? r : 0,
                               c->recs[r].op == 1 ? 0 : r);
    return 0;
}

/*
 * The model's time for one rank's access done independently, with what the file's independent
 * path can do: the method tess_method forces, else the cheaper of list I/O and sieving its own
 * extent (sieving not where romio_ds_<dir> = disable, nor for writes where this handle cannot
 * read-modify-write under locks). Sieving writes pay the read and the lock of every window, and
 * wait for the `meet` ranks whose extents overlap (this one included) to take their turns.
 */
static double independent_seconds(const tessi_model *m, const tessi_hints *h, bool write,
                                  const tessi_coll_rec *r, int64_t meet)
{
    if (r->bytes == 0)
        return 0;
    double ext = (double)(r->hi - r->lo), n = (double)r->bytes, k = (double)r->regions;
    double naive = k * tessi_model_call(m, write) + n * tessi_model_byte(m, write);
    double list = k * tessi_model_alone(m, write) + n * tessi_model_byte(m, write);
    double buf = (double)(write ? h->wr_buffer : h->rd_buffer), windows = ext / buf + 1;
    double sieve = windows * tessi_model_call(m, write) + ext * tessi_model_byte(m, write) +
                   n * m->mc;
    if (write) /* read-modify-write: the read and the lock of every window, and the turns of
                  the ranks whose extents overlap this one */
        sieve = (sieve + windows * (tessi_model_call(m, false) + m->lock) +
                 ext * tessi_model_byte(m, false)) * (double)(meet > 1 ? meet : 1);
    const char *forced = h->method ? h->method->name : NULL;
    if (forced && strcmp(forced, "naive") == 0)
        return naive;
    if (forced && strcmp(forced, "list") == 0)
        return list;
    if (forced && strcmp(forced, "sieve") == 0)
        return write && !m->locks ? naive : sieve;
    bool can_sieve = (write ? h->ds_write : h->ds_read) != TESSI_DS_DISABLE &&
                     (!write || m->locks);
    return can_sieve && sieve < list ? sieve : list;
}

static int cmp64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* First index of sorted v[0..n) whose value is >= x (strict: > x). */
static int64_t bound(const int64_t *v, int64_t n, int64_t x, bool strict)
{
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (v[mid] < x || (strict && v[mid] == x))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/*
 * romio_cb_* = automatic: two-phase when the model says it is faster than every rank doing its
 * own access with its best independent method (both as the slowest process). Sieving writes of
 * ranks whose extents overlap take turns under their locks (paper 000 II-B): a rank's sieving
 * write is priced times the number of ranks whose extents meet its own (found in O(P log P)
 * from the sorted starts and ends; no allocation, so every rank decides alike). Two-phase: each
 * aggregator's share of the aggregate extent in windows of cb_buffer_size, each window sieved
 * (one call, holes read and, for writes with holes, read first) or listed (its share of the
 * regions), whichever is cheaper; plus every byte copied out of and into process memory (2 mc
 * per byte, the slowest rank's bytes) and ROUND_SECONDS per round.
 */
static bool choose_twophase(const tessi_coll *c, const tessi_hints *h, bool write)
{
    int mode = write ? c->h.cb_write : c->h.cb_read;
    if (mode != TESSI_DS_AUTOMATIC)
        return mode == TESSI_DS_ENABLE;
    tessi_model mi = h->model, mc = h->model;
    int64_t glo = INT64_MAX, ghi = 0, data = 0, regions = 0, maxbytes = 0;
    double ind = 0;
    int active = 0;
    for (int r = 0; r < c->size; r++)
        active += c->recs[r].bytes > 0;
    mi.p = active > 0 ? active : 1;
    mc.p = c->naggs;
    int64_t *starts = c->scratch, *ends = c->scratch + c->size, k = 0;
    for (int r = 0; r < c->size; r++)
        if (c->recs[r].bytes > 0) {
            starts[k] = c->recs[r].lo;
            ends[k++] = c->recs[r].hi;
        }
    qsort(starts, (size_t)k, sizeof(int64_t), cmp64);
    qsort(ends, (size_t)k, sizeof(int64_t), cmp64);
    for (int r = 0; r < c->size; r++) {
        const tessi_coll_rec *x = &c->recs[r];
        if (x->bytes == 0)
            continue;
        /* ranks whose extent meets [lo, hi): started before hi, not ended by lo */
        int64_t meet = bound(starts, k, x->hi, false) - bound(ends, k, x->lo, true);
        double t = independent_seconds(&mi, h, write, x, meet);
        ind = t > ind ? t : ind;
        glo = x->lo < glo ? x->lo : glo;
        ghi = x->hi > ghi ? x->hi : ghi;
        data += x->bytes;
        regions += x->regions;
        maxbytes = x->bytes > maxbytes ? x->bytes : maxbytes;
    }
    double A = c->naggs, ext = (double)(ghi - glo) / A, n = (double)data / A;
    double rounds = ext / (double)c->h.cb_buffer + 1;
    bool holes = data < ghi - glo;
    double span = rounds * tessi_model_call(&mc, write) + ext * tessi_model_byte(&mc, write);
    if (write && holes)
        span += rounds * tessi_model_call(&mc, false) + ext * tessi_model_byte(&mc, false);
    double list = (double)regions / A * tessi_model_alone(&mc, write) +
                  n * tessi_model_byte(&mc, write);
    double coll = (span < list ? span : list) + 2 * mc.mc * (double)maxbytes +
                  rounds * ROUND_SECONDS;
    return coll < ind;
}

static int coll_access(const char *who, tess_file *f, int64_t offset, void *buf, int64_t count,
                       tess_type *memtype, int64_t *bytes, bool write)
{
    if (!f)
        return tessi_error(TESS_ERR_ARG, "%s: f is NULL", who);
    if (!f->coll) /* no group: the independent call */
        return write ? tess_file_write_at(f, offset, buf, count, memtype, bytes)
                     : tess_file_read_at(f, offset, buf, count, memtype, bytes);
    tessi_coll *c = f->coll;
    tessi_coll_rec mine;
    int64_t done = 0, data = 0, atomic = 0;
    int rc = make_record(who, f, offset, buf, count, memtype, write, &mine);
    double t0 = tessi_now();
    int err = c->comm->allgather(c->ctx, &mine, sizeof mine, c->recs);
    f->st.stats.exchange_seconds += tessi_now() - t0;
    if (err)
        return rc ? rc : err;
    if ((rc = records_verdict(c, rc, who)))
        goto out;
    for (int r = 0; r < c->size; r++) {
        data += c->recs[r].bytes;
        atomic |= c->recs[r].atomic;
    }
    if (data == 0) /* nobody has data: done, on every rank alike */
        goto out;
    /* atomic mode: each access under its own extent lock, which two-phase (one access spread
     * over several aggregators) cannot hold */
    if (atomic || !choose_twophase(c, &f->hints, write)) {
        rc = write ? tess_file_write_at(f, offset, buf, count, memtype, &done)
                   : tess_file_read_at(f, offset, buf, count, memtype, &done);
        rc = tessi_coll_agree(c, rc, who);
        goto out;
    }
    tessi_coll_access a = {.c = c, .st = &f->st, .hints = &f->hints, .view = &f->view,
                           .write = write, .lock_writes = f->sieve_writes,
                           .readable = f->readable, .buf = buf, .memtype = memtype,
                           .count = count, .start = offset * f->view.esize, .bytes = mine.bytes,
                           .recs = c->recs};
    f->st.stats.desired_bytes += mine.bytes;
    rc = tessi_twophase(&a, &done);
out:
    if (bytes)
        *bytes = done;
    return rc;
}

int tess_file_read_at_all(tess_file *f, int64_t offset, void *buf, int64_t count,
                          tess_type *memtype, int64_t *bytes)
{
    return coll_access("tess_file_read_at_all", f, offset, buf, count, memtype, bytes, false);
}

int tess_file_write_at_all(tess_file *f, int64_t offset, const void *buf, int64_t count,
                           tess_type *memtype, int64_t *bytes)
{
    /* writes only read from buf: the cast lets reads and writes share one path */
    return coll_access("tess_file_write_at_all", f, offset, (void *)buf, count, memtype, bytes,
                       true);
}
