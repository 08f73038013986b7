/*
 * datatype.c - datatype I/O (paper 000 section III): the access goes to the storage as its
 * description (the view's filetype, displacement and the stream range of the call) and the
 * storage servers find the file regions themselves, by cursor, next to the data: one request
 * per server object touched, however many regions the access has (driver call dtio; the RADOS
 * driver runs it in the OSDs). The data travels packed in stream order: the memory side is
 * gathered into (scattered from) a staging buffer of at most TESSI_DATATYPE_CHUNK bytes, or used
 * in place when it is one contiguous run. Accessed bytes are exactly the desired bytes.
 *
 * A driver may refuse a call with -E2BIG (too many regions for one request of one object): the
 * chunk is halved until it fits.
 *
 * Where the driver has no datatype I/O, or the access has no description (ftype NULL), the
 * method is list I/O.
 *
 * The estimate: one request per object of the storage's striping the data touches, per call
 * of at most TESSI_DATATYPE_CHUNK stream bytes, each at the measured price of a datatype
 * request (dt_call), the servers' work per region (dt_region), every data byte once, and the
 * staging copy when memory is not one run. Without datatype I/O on the storage, list's.
 */
#include "method/method.h"

#include <stdlib.h>
#include <string.h>

/* Stream bytes per driver call: bounds the staging buffer and the size of one request. */
#define TESSI_DATATYPE_CHUNK (INT64_C(32) << 20)

static int datatype_move(tessi_access *a, bool write, int64_t *done)
{
    *done = 0;
    if (!a->ftype || !(a->st->caps & TESSI_CAP_DATATYPE))
        return write ? tessi_method_list.write(a, done) : tessi_method_list.read(a, done);
    if (a->bytes == 0)
        return 0;
    /* memory that is one run is used in place */
    tess_region m;
    int rc = tessi_rsrc_peek(a->mem, &m);
    if (rc)
        return rc;
    bool in_place = m.len == a->bytes;
    int64_t cap = a->bytes < TESSI_DATATYPE_CHUNK ? a->bytes : TESSI_DATATYPE_CHUNK;
    char *stage = in_place ? NULL : malloc((size_t)cap);
    if (!in_place && !stage)
        return tessi_error(TESS_ERR_NOMEM, "datatype: cannot allocate a %lld-byte stage",
                           (long long)cap);
    if (!in_place)
        tessi_note_buffer(a, cap);
    /* the storage finds the regions; walk them here only where a caller counts them as they
     * are consumed (two-phase's storage calls; an independent access has counted them) */
    tess_region f;
    while (a->file->regions && (rc = tessi_rsrc_peek(a->file, &f)) == 0 && f.len > 0)
        tessi_rsrc_take(a->file, f.len);
    if (rc) {
        free(stage);
        return rc;
    }
    while (*done < a->bytes) {
        int64_t n = a->bytes - *done < cap ? a->bytes - *done : cap;
        char *p = in_place ? a->buf + m.off + *done : stage;
        if (write && !in_place && (rc = tessi_stage_mem(a, *done, stage, n, false)))
            break;
        int64_t moved = tessi_drv_dtio(a->st, write ? TESSI_OP_WRITE : TESSI_OP_READ, a->fdisp,
                                       a->ftype, a->fstart + *done, n, p);
        if (moved == -E2BIG && n > 1) { /* more regions in one object than a request may
                                            carry: halve the chunk */
            cap = n / 2;
            continue;
        }
        if (moved < 0) {
            rc = tessi_drv_error(a->st, (int)moved, write ? "datatype write" : "datatype read",
                                 a->fdisp, 0);
            break;
        }
        if (!write && !in_place && (rc = tessi_stage_mem(a, *done, stage, moved, true)))
            break;
        *done += moved;
        if (moved < n) /* end of file */
            break;
    }
    free(stage);
    return rc;
}

/* ------------------------------------------------------------------ estimate */

/* The distinct objects of the striping that units [b0, b1] of one call touch, counted as they
 * come in increasing order: the objects of the current object set are a bit map. */
typedef struct objects {
    const tessi_model *m;
    int64_t set;            /* the object set being counted (-1: none yet) */
    int64_t in_set, total;  /* its objects seen; objects of the sets before */
    uint64_t seen[64];      /* positions of the set seen (factor <= 4096) */
} objects;

static void objects_flush(objects *o)
{
    o->total += o->in_set;
    o->in_set = 0;
    o->set = -1;
    memset(o->seen, 0, sizeof o->seen);
}

static void objects_add(objects *o, int64_t b0, int64_t b1)
{
    int64_t factor = o->m->factor, rows = o->m->objsize / o->m->unit;
    for (int64_t b = b0; b <= b1;) {
        int64_t set = b / factor / rows, pos = b % factor;
        if (set != o->set) {
            o->total += o->in_set;
            o->in_set = 0;
            o->set = set;
            memset(o->seen, 0, sizeof o->seen);
        }
        if (!(o->seen[pos / 64] >> (pos % 64) & 1)) {
            o->seen[pos / 64] |= UINT64_C(1) << (pos % 64);
            o->in_set++;
        }
        /* every object of the set seen: on to the next set */
        b = o->in_set == factor ? (set + 1) * rows * factor : b + 1;
    }
}

/* Requests of the estimate's access: one per object per call. */
static int64_t requests(const tessi_est *e)
{
    const tessi_model *m = e->m;
    int64_t calls = (e->bytes + TESSI_DATATYPE_CHUNK - 1) / TESSI_DATATYPE_CHUNK;
    bool striped = m->unit > 0 && m->factor > 0 && m->factor <= 4096 && m->objsize >= m->unit;
    if (!striped)
        return calls;
    objects o = {.m = m, .set = -1};
    if (e->nr == 0) { /* an even spread: the units of the extent, per call */
        int64_t per = (e->hi - e->lo + calls - 1) / calls;
        for (int64_t c = 0; c < calls; c++) {
            int64_t lo = e->lo + c * per, hi = tessi_min64(e->hi, lo + per);
            if (hi > lo)
                objects_add(&o, lo / m->unit, (hi - 1) / m->unit);
            objects_flush(&o);
        }
        return o.total;
    }
    int64_t data = 0;
    for (int64_t i = 0; i < e->nr; i++) {
        if (data >= TESSI_DATATYPE_CHUNK) { /* the next call */
            objects_flush(&o);
            data = 0;
        }
        objects_add(&o, e->r[i].off / m->unit, (e->r[i].off + e->r[i].len - 1) / m->unit);
        data += e->r[i].len;
    }
    objects_flush(&o);
    return o.total;
}

static void datatype_estimate(const tessi_est *e, tessi_cost *out)
{
    if (!e->m->dtio) {
        tessi_method_list.estimate(e, out);
        return;
    }
    *out = (tessi_cost){.seconds = 0};
    if (e->bytes == 0)
        return;
    bool staged = e->pieces > e->regions;
    int64_t n = requests(e);
    out->calls = n;
    out->bytes = e->bytes;
    out->peak = staged ? tessi_min64(e->bytes, TESSI_DATATYPE_CHUNK) : 0;
    out->seconds = tessi_model_dtio(e->m, e->write, n, e->regions) +
                   (double)e->bytes * tessi_model_byte(e->m, e->write) +
                   (staged ? tessi_model_copy(e->m, e->bytes) : 0);
}

static int datatype_read(tessi_access *a, int64_t *done) { return datatype_move(a, false, done); }

static int datatype_write(tessi_access *a, int64_t *done) { return datatype_move(a, true, done); }

const struct tess_method tessi_method_datatype = {
    .version = TESSI_METHOD_VERSION,
    .name = "datatype",
    .read = datatype_read,
    .write = datatype_write,
    .estimate = datatype_estimate,
};
