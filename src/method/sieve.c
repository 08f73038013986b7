/*
 * sieve.c - data sieving (paper 000 II-B). The requested file extent is covered by windows of
 * at most ind_rd_buffer_size (reads) or ind_wr_buffer_size (writes) bytes; each window is one
 * storage read into a staging buffer, data is copied out (reads) or in (writes) and, for writes,
 * the window is written back: a read-modify-write under a write lock on that window only.
 * Accessed bytes include the holes inside windows; calls are about file extent / buffer.
 *
 * A window starts at the first unconsumed data byte. Read windows end at min(start + buffer,
 * end of the access) (a trailing hole may be read: harmless); write windows end exactly at the
 * last data byte they hold, so a write never extends the file past its own data. A write window
 * that its data fully covers is not read first: a plain write, locked only where the write gate
 * says plain writes must lock (driver/gate.c). Where the storage has an atomic read-modify-write
 * of its own (TESSI_CAP_RMW: RADOS guards the write-back by object versions) every window goes
 * through it, takes no lock and does not ask the gate. Where the gate does not admit a
 * read-modify-write or the storage refuses locks, the rest of the write is done naively (a lock
 * fallback, counted in stats.lock_fallbacks; no error).
 *
 * A window's data is a range of the access's stream, found by position (tessi_rsrc_stream_at)
 * and moved with the pack engine in one step (tessi_stage_move): regions are never visited one
 * by one, so a window of tiny regions costs what the engine's copy loops cost.
 */
#include "method/method.h"
#include "method/pmd.h"

#include <stdlib.h>
#include <string.h>

/* The staging buffer (the buffer hint, but never more than the access's file extent) and,
 * when memory and the file are both noncontiguous, a second one for the data. */
typedef struct stage {
    char *buf, *tmp;
    int64_t size;
} stage;

static int stage_alloc(tessi_access *a, int64_t hint, stage *st)
{
    int64_t span = a->file->hi - a->file->lo;
    st->size = hint < span ? hint : span;
    return tessi_stage_alloc(a, st->size, &st->buf, &st->tmp);
}

static void stage_free(stage *st) { tessi_stage_free(st->buf); }

static int sieve_read(tessi_access *a, int64_t *done)
{
    tessi_rsrc *f = a->file;
    int64_t pos = 0, hi = f->hi;
    tess_region r;
    stage st;
    *done = 0;
    if (a->bytes == 0)
        return 0;
    int rc = stage_alloc(a, a->hints->rd_buffer, &st);
    while (rc == 0 && pos < a->bytes) {
        if ((rc = tessi_rsrc_peek(f, &r)))
            break;
        int64_t ws = r.off, we = hi - ws < st.size ? hi : ws + st.size, end, avail;
        int64_t got = tessi_drv_pread(a->st, st.buf, we - ws, ws);
        if (got < 0) {
            rc = tessi_drv_error(a->st, (int)got, "sieve read", ws, we - ws);
            break;
        }
        /* the window's data: up to we, or to the end of file inside it */
        if ((rc = tessi_rsrc_stream_at(f, we, &end)) ||
            (rc = got < we - ws ? tessi_rsrc_stream_at(f, ws + got, &avail) : (avail = end, 0)) ||
            (rc = tessi_stage_move(a, st.buf, ws, pos, avail - pos, true, st.tmp)))
            break;
        *done += avail - pos;
        if (avail < end) /* end of file */
            break;
        pos = end;
        rc = tessi_rsrc_seek(f, pos);
    }
    stage_free(&st);
    return rc;
}

/* The next write window from the source's position pos: [*ws, *we) holding the data bytes
 * [pos, *end), at most size long, ending at its last data byte. */
static int plan_window(tessi_rsrc *f, int64_t pos, int64_t size, int64_t *ws, int64_t *we,
                       int64_t *end)
{
    tess_region r;
    int rc = tessi_rsrc_peek(f, &r);
    if (rc)
        return rc;
    *ws = r.off;
    if ((rc = tessi_rsrc_stream_at(f, r.off > INT64_MAX - size ? INT64_MAX : r.off + size, end)))
        return rc;
    if (*end - pos <= r.len) { /* the window's data is one run */
        *we = r.off + (*end - pos);
        return 0;
    }
    rc = tessi_rsrc_offset_at(f, *end - 1, we);
    ++*we;
    return rc;
}

/* Read-modify-write of one locked window [ws, we) holding the data bytes [pos, end). */
static int rmw_window(tessi_access *a, stage *st, int64_t ws, int64_t we, int64_t pos,
                      int64_t end)
{
    int64_t len = we - ws;
    if (end - pos < len) {
        int64_t got = tessi_drv_pread(a->st, st->buf, len, ws);
        if (got < 0)
            return tessi_drv_error(a->st, (int)got, "sieve read-modify-write read", ws, len);
        memset(st->buf + got, 0, (size_t)(len - got)); /* past end of file */
    }
    int rc = tessi_stage_move(a, st->buf, ws, pos, end - pos, false, st->tmp);
    if (rc)
        return rc;
    int64_t put = tessi_drv_pwrite(a->st, st->buf, len, ws);
    return put < 0 ? tessi_drv_error(a->st, (int)put, "sieve write", ws, len) : 0;
}

/* Lock-free read-modify-write (TESSI_CAP_RMW) of window [ws, we) holding the data bytes
 * [pos, end): the fill may run more than once (tessi_stage_move leaves both sources where they
 * are, so it repeats itself exactly). */
typedef struct {
    tessi_access *a;
    char *tmp;
    int64_t ws, pos, end;
    int err; /* fill's own failure (a TESS_ERR_* code), kept apart from the driver's errnos */
} rmw_arg;

static int rmw_fill(void *arg, char *buf)
{
    rmw_arg *w = arg;
    w->err = tessi_stage_move(w->a, buf, w->ws, w->pos, w->end - w->pos, false, w->tmp);
    return w->err ? -ECANCELED : 0;
}

static int rmw_lockfree(tessi_access *a, stage *st, int64_t ws, int64_t we, int64_t pos,
                        int64_t end)
{
    rmw_arg w = {.a = a, .tmp = st->tmp, .ws = ws, .pos = pos, .end = end};
    int rc = tessi_drv_rmw(a->st, st->buf, ws, we - ws, end - pos == we - ws, rmw_fill, &w);
    if (w.err)
        return w.err;
    return rc ? tessi_drv_error(a->st, rc, "sieve read-modify-write", ws, we - ws) : 0;
}

/* Window by window: through the storage's own read-modify-write where it has one; else one
 * with holes is read-modify-written when the write gate admits it, under a write lock, and a
 * covered one is a plain write, locked only when the gate says so. */
static int sieve_write(tessi_access *a, int64_t *done)
{
    int64_t ws, we, end, pos = 0, moved;
    tessi_lock lk = {.held = false};
    stage st;
    *done = 0;
    if (a->bytes == 0)
        return 0;
    int rc = stage_alloc(a, a->hints->wr_buffer, &st);
    while (rc == 0 && pos < a->bytes) {
        if ((rc = plan_window(a->file, pos, st.size, &ws, &we, &end)))
            break;
        bool rmw = end - pos < we - ws;
        lk = (tessi_lock){.held = false};
        if (a->st->caps & TESSI_CAP_RMW) { /* the storage's own: no lock, no gate */
            rc = rmw_lockfree(a, &st, ws, we, pos, end);
        } else {
            if ((rmw ? tessi_gate_admit(a->st) : tessi_gate_locked_writes(a->st)) &&
                (rc = tessi_lock_range(a->st, &lk, ws, we - ws, true, false)))
                break;
            if (rmw && !lk.held) { /* not admitted, or no locks here: the rest goes naive, a
                                      plain write (locked when the gate says so) */
                tessi_lock_fallback(a->st, ws, we - ws);
                if ((tessi_gate_locked_writes(a->st) &&
                     (rc = tessi_lock_range(a->st, &lk, ws, a->file->hi - ws, true, false))) ||
                    (rc = tessi_rsrc_seek(a->mem, pos)))
                    break;
                rc = tessi_unlock_range(a->st, &lk, tessi_naive_move(a, true, &moved));
                *done += moved;
                break;
            }
            rc = tessi_unlock_range(a->st, &lk, rmw_window(a, &st, ws, we, pos, end));
        }
        if (rc == 0) {
            *done += end - pos;
            pos = end;
            rc = tessi_rsrc_seek(a->file, pos);
        }
    }
    stage_free(&st);
    return rc;
}

/* ------------------------------------------------------------------ estimate */

/* Add k windows of len bytes holding data bytes each (a write window with holes is read first
 * under a lock; a covered one is a plain write, priced unlocked as a handle alone on its file
 * writes). */
static void add_windows(tessi_windows *w, int64_t k, int64_t len, int64_t data)
{
    bool wr = w->e->write;
    tessi_group g = {.kind = TESSI_GROUP_SIEVE, .count = 1, .len = len, .data = data,
                     .lock = wr && data < len, .rmw = wr && data < len};
    tessi_cost one = {0};
    tessi_group_cost(w->e->m, wr, &g, &one);
    tessi_cost_add(&w->c, &one, k);
}

/*
 * A read window always spans buf bytes unless it is the last, which ends at the access's end,
 * so reads track ws only; write windows end at their last data byte. A region crossing
 * ws + buf is cut there and its rest fills whole windows and then opens the next.
 */
void tessi_windows_add(tessi_windows *w, int64_t o, int64_t e)
{
    int64_t B = w->e->buf;
    if (w->open && o - w->ws >= B) {
        add_windows(w, 1, w->e->write ? w->we - w->ws : B, w->data);
        w->open = false;
    }
    if (!w->open) {
        w->open = true;
        w->ws = w->we = o;
        w->data = 0;
    }
    if (e - w->ws <= B) {
        w->we = e;
        w->data += e - o;
        return;
    }
    /* the window [ws, ws + B) closes holding the region's head; the rest [ws + B, e) fills
     * nfull covered windows and opens the last one */
    add_windows(w, 1, B, w->data + (w->ws + B - o));
    int64_t rest = e - w->ws - B, nfull = (rest - 1) / B;
    if (nfull > 0)
        add_windows(w, nfull, B, B);
    w->ws += B + nfull * B;
    w->we = e;
    w->data = e - w->ws;
}

/* The last window closes (reads: at the access's end; writes: at its last data byte); writes
 * on storage without locks go naive (see sieve_write). */
void tessi_windows_end(tessi_windows *w, tessi_cost *out)
{
    const tessi_est *e = w->e;
    *out = (tessi_cost){.seconds = 0};
    if (e->bytes == 0)
        return;
    if (e->write && !e->m->locks) {
        tessi_method_naive.estimate(e, out);
    } else {
        if (w->open)
            add_windows(w, 1, (e->write ? w->we : e->hi) - w->ws, w->data);
        *out = w->c;
    }
    int64_t extent = e->hi - e->lo;
    out->peak = extent < e->buf ? extent : e->buf; /* stage_alloc's buffer */
}

/* The windows of an even spread of regions of len bytes, hole bytes apart: a window holds the
 * g regions that fit in the buffer from its first one (reads span the whole buffer but for the
 * last window); a region longer than the buffer fills windows of its own. */
static void spread_windows(tessi_windows *w)
{
    const tessi_est *e = w->e;
    int64_t n = e->regions, len = e->bytes / n, B = e->buf;
    int64_t hole = n > 1 ? (e->hi - e->lo - e->bytes) / (n - 1) : 0;
    if (len > B) {
        int64_t per = (len + B - 1) / B;
        add_windows(w, n * per, (len + per - 1) / per, len / per);
        return;
    }
    int64_t g = (B + hole) / (len + hole), k = (n + g - 1) / g, last = n - (k - 1) * g;
    if (k > 1)
        add_windows(w, k - 1, e->write ? g * len + (g - 1) * hole : B, g * len);
    add_windows(w, 1, last * len + (last - 1) * hole, last * len);
}

/* Windows of buf bytes from the first data byte (tessi_windows_add); without the regions,
 * those of an even spread. */
static void sieve_estimate(const tessi_est *e, tessi_cost *out)
{
    tessi_windows w = {.e = e};
    if (e->nr > 0)
        for (int64_t i = 0; i < e->nr; i++)
            tessi_windows_add(&w, e->r[i].off, e->r[i].off + e->r[i].len);
    else if (e->bytes > 0 && !(e->write && !e->m->locks))
        spread_windows(&w);
    tessi_windows_end(&w, out);
}

const struct tess_method tessi_method_sieve = {
    .version = TESSI_METHOD_VERSION,
    .name = "sieve",
    .sieves = true,
    .read = sieve_read,
    .write = sieve_write,
    .estimate = sieve_estimate,
};
