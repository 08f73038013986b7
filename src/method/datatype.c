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
 * The estimate prices what the driver sends: per call of at most TESSI_DATATYPE_CHUNK stream
 * bytes, one request per object of the storage's striping the data touches. An object whose
 * extents fit one compound request (list_max, hint tess_list_max_pairs) is priced as list
 * prices the same extents; any other runs the servers' program, at the measured price of a
 * datatype request (dt_call) and the servers' work per extent (dt_region). Then every data
 * byte once, and the staging copy when memory is not one run. Without datatype I/O on the
 * storage, list's.
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

/*
 * What the driver sends for the estimate's access (tessi_rados_dtio): per call, per object
 * touched, one request; a compound request of the object's extents where they are at most
 * list_max (runs contiguous in the object and in the stream, split at stripe units), else the
 * servers' program. Counted from the regions in increasing file order, one object set at a
 * time: the objects of a set are never touched again once a later set is.
 */
typedef struct sends {
    const tessi_model *m;
    bool write;
    int64_t set;                  /* the object set being counted (-1: none yet) */
    int64_t *end, *s_end, *ext;   /* per object of the set: where its last piece ended in the
                                     object and the stream; its extents (0: untouched) */
    int64_t *touched, ntouched;   /* the set's objects touched, in order */
    int64_t call_ext;             /* the compound extents of the current call */
    int64_t requests, programs, program_ext;
    double compound;              /* s: the compound requests of the calls before */
} sends;

static void sends_flush_set(sends *s)
{
    for (int64_t i = 0; i < s->ntouched; i++) {
        int64_t pos = s->touched[i], k = s->ext[pos];
        s->requests++;
        if (k <= s->m->list_max) {
            s->call_ext += k;
        } else {
            s->programs++;
            s->program_ext += k;
        }
        s->ext[pos] = 0;
        s->end[pos] = s->s_end[pos] = -1;
    }
    s->ntouched = 0;
    s->set = -1;
}

/* The end of a call: its compound requests go out together, priced as list batches of the
 * same extents (what list pays for the same requests). */
static void sends_flush_call(sends *s)
{
    sends_flush_set(s);
    if (s->call_ext) {
        tessi_cost c = {.seconds = 0};
        tessi_group g = {.kind = TESSI_GROUP_LIST, .count = s->call_ext};
        tessi_group_cost(s->m, s->write, &g, &c);
        s->compound += c.seconds;
    }
    s->call_ext = 0;
}

/* File bytes [off, off + len) at stream position spos, split at stripe units. */
static void sends_add(sends *s, int64_t off, int64_t len, int64_t spos)
{
    const tessi_model *m = s->m;
    while (len > 0) {
        int64_t obj, objoff, piece = tessi_min64(len, m->unit - off % m->unit);
        tessi_stripe_locate(m->unit, m->factor, m->objsize, off, &obj, &objoff);
        int64_t set = obj / m->factor, pos = obj % m->factor;
        if (set != s->set) {
            sends_flush_set(s);
            s->set = set;
        }
        if (s->ext[pos] == 0)
            s->touched[s->ntouched++] = pos;
        s->ext[pos] += objoff != s->end[pos] || spos != s->s_end[pos];
        s->end[pos] = objoff + piece, s->s_end[pos] = spos + piece;
        off += piece, len -= piece, spos += piece;
    }
}

/* The objects of the striping that units [b0, b1] touch (an even spread's call): each object
 * set holds factor objects over rows * factor units. */
static int64_t objects_of(const tessi_model *m, int64_t b0, int64_t b1)
{
    int64_t per = m->objsize / m->unit * m->factor, s0 = b0 / per, s1 = b1 / per;
    if (s0 == s1)
        return tessi_min64(m->factor, b1 - b0 + 1);
    return tessi_min64(m->factor, (s0 + 1) * per - b0) + (s1 - s0 - 1) * m->factor +
           tessi_min64(m->factor, b1 - s1 * per + 1);
}

/* Count the requests of e into s (striped storage; s's arrays hold m->factor entries). */
static void sends_count(sends *s, const tessi_est *e)
{
    const tessi_model *m = e->m;
    int64_t calls = (e->bytes + TESSI_DATATYPE_CHUNK - 1) / TESSI_DATATYPE_CHUNK;
    if (e->nr == 0) { /* an even spread: the units of each call's share of the extent, its
                         regions shared evenly among the objects it touches */
        int64_t per = (e->hi - e->lo + calls - 1) / calls;
        int64_t regions = (e->regions + calls - 1) / calls;
        for (int64_t c = 0; c < calls; c++) {
            int64_t lo = e->lo + c * per, hi = tessi_min64(e->hi, lo + per);
            if (hi <= lo)
                continue;
            int64_t objects = objects_of(m, lo / m->unit, (hi - 1) / m->unit);
            s->requests += objects;
            if ((regions + objects - 1) / objects <= m->list_max) {
                s->call_ext = regions;
                sends_flush_call(s);
            } else {
                s->programs += objects;
                s->program_ext += regions;
            }
        }
        return;
    }
    int64_t data = 0;
    for (int64_t i = 0; i < e->nr; i++) {
        int64_t off = e->r[i].off, len = e->r[i].len;
        while (len > 0) { /* a region may straddle two calls */
            if (data == TESSI_DATATYPE_CHUNK) {
                sends_flush_call(s);
                data = 0;
            }
            int64_t n = tessi_min64(len, TESSI_DATATYPE_CHUNK - data);
            sends_add(s, off, n, data);
            off += n, len -= n, data += n;
        }
    }
    sends_flush_call(s);
}

/* Fills *s for e: false when the storage is not striped (or too widely to count here, or out
 * of memory): then each call is one request of the program. */
static bool sends_of(const tessi_est *e, sends *s)
{
    const tessi_model *m = e->m;
    *s = (sends){.m = m, .write = e->write, .set = -1};
    if (!(m->unit > 0 && m->factor > 0 && m->factor <= 4096 && m->objsize >= m->unit))
        return false;
    int64_t *a = malloc(sizeof *a * 4 * (size_t)m->factor);
    if (!a)
        return false;
    s->end = a, s->s_end = a + m->factor, s->ext = a + 2 * m->factor;
    s->touched = a + 3 * m->factor;
    for (int64_t i = 0; i < m->factor; i++)
        s->end[i] = s->s_end[i] = -1, s->ext[i] = 0;
    sends_count(s, e);
    free(a);
    return true;
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
    sends s;
    if (!sends_of(e, &s)) {
        s.requests = s.programs = (e->bytes + TESSI_DATATYPE_CHUNK - 1) / TESSI_DATATYPE_CHUNK;
        s.program_ext = e->regions;
    }
    out->calls = s.requests;
    out->bytes = e->bytes;
    out->peak = staged ? tessi_min64(e->bytes, TESSI_DATATYPE_CHUNK) : 0;
    out->seconds = s.compound + tessi_model_dtio(e->m, e->write, s.programs, s.program_ext) +
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
