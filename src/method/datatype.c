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
    /* the storage finds the regions; walk them here only to count them (Table I) */
    tess_region f;
    while ((rc = tessi_rsrc_peek(a->file, &f)) == 0 && f.len > 0)
        tessi_rsrc_take(a->file, f.len);
    if (rc) {
        free(stage);
        return rc;
    }
    while (*done < a->bytes) {
        int64_t n = a->bytes - *done < cap ? a->bytes - *done : cap;
        char *p = in_place ? a->buf + m.off + *done : stage;
        if (write && !in_place && (rc = tessi_stage_copy(a, stage, n, false)))
            break;
        int64_t moved = tessi_drv_dtio(a->st, write ? TESSI_OP_WRITE : TESSI_OP_READ, a->fdisp,
                                       a->ftype, a->fstart + *done, n, p);
        if (moved == -E2BIG && n > 1) {
            /* more regions in one object than a request may carry: halve the chunk */
            cap = n / 2;
            if (write && !in_place && (rc = tessi_rsrc_seek(a->mem, *done)))
                break;
            continue;
        }
        if (moved < 0) {
            rc = tessi_drv_error(a->st, (int)moved, write ? "datatype write" : "datatype read",
                                 a->fdisp, 0);
            break;
        }
        if (!write && !in_place && (rc = tessi_stage_copy(a, stage, moved, true)))
            break;
        *done += moved;
        if (moved < n) /* end of file */
            break;
    }
    free(stage);
    return rc;
}

static int datatype_read(tessi_access *a, int64_t *done) { return datatype_move(a, false, done); }

static int datatype_write(tessi_access *a, int64_t *done) { return datatype_move(a, true, done); }

const struct tess_method tessi_method_datatype = {
    .version = TESSI_METHOD_VERSION,
    .name = "datatype",
    .read = datatype_read,
    .write = datatype_write,
};
