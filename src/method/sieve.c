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
 * that its data fully covers is not read first. Where the storage refuses locks the rest of the
 * write is done naively (a lock fallback, counted in stats.lock_fallbacks; no error).
 */
#include "method/method.h"

#include <stdlib.h>
#include <string.h>

/* Copy len bytes between the staging area and the memory stream at its current position. */
static int mem_copy(tessi_access *a, char *stage, int64_t len, bool to_mem)
{
    tess_region m;
    while (len > 0) {
        int rc = tessi_rsrc_peek(a->mem, &m);
        if (rc)
            return rc;
        if (m.len == 0)
            return tessi_error(TESS_ERR_INTERNAL, "sieve: memory stream ended early");
        int64_t n = m.len < len ? m.len : len;
        if (to_mem)
            memcpy(a->buf + m.off, stage, (size_t)n);
        else
            memcpy(stage, a->buf + m.off, (size_t)n);
        tessi_rsrc_take(a->mem, n);
        stage += n;
        len -= n;
    }
    return 0;
}

/* The staging buffer: the buffer hint, but never more than the access's file extent. */
static char *stage_alloc(tessi_access *a, int64_t hint, int64_t *size)
{
    int64_t span = a->file->hi - a->file->lo;
    *size = hint < span ? hint : span;
    char *stage = malloc((size_t)*size);
    if (!stage)
        tessi_error(TESS_ERR_NOMEM, "sieve: cannot allocate a %lld-byte window", (long long)*size);
    else
        tessi_note_buffer(a, *size);
    return stage;
}

/* Copy the window [ws, ws + got) of the file to the data pieces inside [ws, we). Sets *eof when
 * a piece reaches past what was read (the end of file). */
static int read_window(tessi_access *a, char *stage, int64_t ws, int64_t we, int64_t got,
                       int64_t *done, bool *eof)
{
    tess_region r;
    for (;;) {
        int rc = tessi_rsrc_peek(a->file, &r);
        if (rc || r.len == 0 || r.off >= we)
            return rc;
        int64_t len = r.len < we - r.off ? r.len : we - r.off;
        int64_t have = ws + got - r.off;
        *eof = have < len;
        if (*eof)
            len = have > 0 ? have : 0;
        if (len > 0 && (rc = mem_copy(a, stage + (r.off - ws), len, true)))
            return rc;
        *done += len;
        if (*eof)
            return 0;
        tessi_rsrc_take(a->file, len);
    }
}

static int sieve_read(tessi_access *a, int64_t *done)
{
    int64_t size = 0, hi = a->file->hi;
    tess_region r;
    bool eof = false;
    int rc = 0;
    *done = 0;
    char *stage = a->bytes ? stage_alloc(a, a->hints->rd_buffer, &size) : NULL;
    if (a->bytes && !stage)
        return TESS_ERR_NOMEM;
    while (!eof) {
        if ((rc = tessi_rsrc_peek(a->file, &r)) || r.len == 0)
            goto fail;
        int64_t ws = r.off, we = hi - ws < size ? hi : ws + size;
        int64_t got = tessi_drv_pread(a->st, stage, we - ws, ws);
        if (got < 0) {
            rc = tessi_drv_error(a->st, (int)got, "sieve read", ws, we - ws);
            goto fail;
        }
        if ((rc = read_window(a, stage, ws, we, got, done, &eof)))
            goto fail;
    }
fail:
    free(stage);
    return rc;
}

/* The next write window from the file source's position: [*ws, *we) holding *data bytes, at
 * most size long. Consumes the source (the caller seeks back). */
static int plan_window(tessi_rsrc *f, int64_t size, int64_t *ws, int64_t *we, int64_t *data)
{
    tess_region r;
    int rc = tessi_rsrc_peek(f, &r);
    int64_t limit = r.off > INT64_MAX - size ? INT64_MAX : r.off + size;
    *ws = *we = r.off;
    *data = 0;
    while (rc == 0 && r.len > 0 && r.off < limit) {
        int64_t len = r.len < limit - r.off ? r.len : limit - r.off;
        *data += len;
        *we = r.off + len;
        tessi_rsrc_take(f, len);
        rc = tessi_rsrc_peek(f, &r);
    }
    return rc;
}

/* Fill the window from memory: data bytes of the access from the file source's position. */
static int fill_window(tessi_access *a, char *stage, int64_t ws, int64_t data)
{
    tess_region r;
    while (data > 0) {
        int rc = tessi_rsrc_peek(a->file, &r);
        if (rc)
            return rc;
        int64_t len = r.len < data ? r.len : data;
        if ((rc = mem_copy(a, stage + (r.off - ws), len, false)))
            return rc;
        tessi_rsrc_take(a->file, len);
        data -= len;
    }
    return 0;
}

/* Read-modify-write of one locked window [ws, we) holding data bytes. */
static int rmw_window(tessi_access *a, char *stage, int64_t ws, int64_t we, int64_t data)
{
    int64_t len = we - ws;
    if (data < len) {
        int64_t got = tessi_drv_pread(a->st, stage, len, ws);
        if (got < 0)
            return tessi_drv_error(a->st, (int)got, "sieve read-modify-write read", ws, len);
        memset(stage + got, 0, (size_t)(len - got)); /* past end of file */
    }
    int rc = fill_window(a, stage, ws, data);
    if (rc)
        return rc;
    int64_t put = tessi_drv_pwrite(a->st, stage, len, ws);
    return put < 0 ? tessi_drv_error(a->st, (int)put, "sieve write", ws, len) : 0;
}

static int sieve_write(tessi_access *a, int64_t *done)
{
    int64_t size, ws, we, data, moved;
    tessi_lock lk = {.held = false};
    int rc = 0;
    *done = 0;
    char *stage = a->bytes ? stage_alloc(a, a->hints->wr_buffer, &size) : NULL;
    if (a->bytes && !stage)
        return TESS_ERR_NOMEM;
    while (rc == 0 && *done < a->bytes) {
        int64_t pos = a->file->pos;
        if ((rc = plan_window(a->file, size, &ws, &we, &data)) ||
            (rc = tessi_rsrc_seek(a->file, pos)) ||
            (rc = tessi_lock_range(a->st, &lk, ws, we - ws, true, false)))
            break;
        if (!lk.held) { /* no locks here: the rest goes naive */
            tessi_lock_fallback(a->st, ws, we - ws);
            rc = tessi_naive_move(a, true, &moved);
            *done += moved;
            break;
        }
        rc = tessi_unlock_range(a->st, &lk, rmw_window(a, stage, ws, we, data));
        *done += rc ? 0 : data;
    }
    free(stage);
    return rc;
}

/* ------------------------------------------------------------------ estimate */

/* sieve's windows over the regions of an estimate, followed as sieve_read and sieve_write
 * make them: [ws, we) holding data bytes is the open one (open: one exists); closed windows
 * are priced into c. */
typedef struct windows {
    const tessi_est *e;
    bool open;
    int64_t ws, we, data;
    tessi_cost c;
} windows;

/* Add k windows of len bytes holding data bytes each (a write window is locked; it is read
 * first unless covered). */
static void add_windows(windows *w, int64_t k, int64_t len, int64_t data)
{
    bool wr = w->e->write;
    tessi_group g = {.kind = TESSI_GROUP_SIEVE, .count = 1, .len = len, .data = data,
                     .lock = wr, .rmw = wr && data < len};
    tessi_cost one = {0};
    tessi_group_cost(w->e->m, wr, &g, &one);
    tessi_cost_add(&w->c, &one, k);
}

/*
 * Region [o, e) (o >= every earlier end). A read window always spans buf bytes unless it is
 * the last, which ends at the access's end, so reads track ws only; write windows end at
 * their last data byte. A region crossing ws + buf is cut there and its rest fills whole
 * windows and then opens the next.
 */
static void add_region(windows *w, int64_t o, int64_t e)
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

/* The windows of an even spread of regions of len bytes, hole bytes apart: a window holds the
 * g regions that fit in the buffer from its first one (reads span the whole buffer but for the
 * last window); a region longer than the buffer fills windows of its own. */
static void spread_windows(windows *w)
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

/* Windows of buf bytes from the first data byte; the last ends at the access's end (reads) or
 * its last data byte (writes). Without the regions, those of an even spread. Without locks
 * writes go naive (see sieve_write). */
static void sieve_estimate(const tessi_est *e, tessi_cost *out)
{
    windows w = {.e = e};
    int64_t extent = e->hi - e->lo;
    *out = (tessi_cost){.seconds = 0};
    if (e->bytes == 0)
        return;
    if (e->write && !e->m->locks) {
        tessi_method_naive.estimate(e, out);
    } else if (e->nr > 0) {
        for (int64_t i = 0; i < e->nr; i++)
            add_region(&w, e->r[i].off, e->r[i].off + e->r[i].len);
        add_windows(&w, 1, (e->write ? w.we : e->hi) - w.ws, w.data);
        *out = w.c;
    } else {
        spread_windows(&w);
        *out = w.c;
    }
    out->peak = extent < e->buf ? extent : e->buf; /* stage_alloc's buffer */
}

const struct tess_method tessi_method_sieve = {
    .version = TESSI_METHOD_VERSION,
    .name = "sieve",
    .sieves = true,
    .read = sieve_read,
    .write = sieve_write,
    .estimate = sieve_estimate,
};
