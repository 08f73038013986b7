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

const struct tess_method tessi_method_sieve = {
    .version = TESSI_METHOD_VERSION,
    .name = "sieve",
    .read = sieve_read,
    .write = sieve_write,
};
