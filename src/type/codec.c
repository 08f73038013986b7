/*
 * codec.c - tess_type_encode / tess_type_decode: the portable wire form of a datatype.
 *
 * Wire form (version 2). Integers are little-endian; "i64" is two's complement.
 *   header   4 bytes "TSTY", u16 version (2), u16 reserved (0)
 *   node     u8 tag, then by tag:
 *     0 BUILTIN       u8 id: 0 byte 1 char 2 int8 3 int16 4 int32 5 int64 6 uint8 7 uint16
 *                     8 uint32 9 uint64 10 float 11 double
 *     1 CONTIG        u8 align, i64 lb, extent, count, disp0; child (count instances at disp0)
 *     2 VECTOR        u8 align, i64 lb, extent, count, disp0, blocklen, stride; child
 *     3 BLOCKINDEXED  u8 align, i64 lb, extent, count, disp0, blocklen, count x i64 displ;
 *                     child
 *     4 INDEXED       u8 align, i64 lb, extent, count, disp0, count x i64 blocklen,
 *                     count x i64 displ; child
 *     5 STRUCT        as INDEXED, then count children
 *     6 REF           i64 index: the index-th composite node (tags 1-5) completed earlier,
 *                     numbered from 0 in the order their encodings end (postorder)
 * Blocklengths are >= 1 (a normalized type has no empty blocks); CONTIG's count may be 0 (the
 * empty type).
 * The root node follows the header and must end exactly at the end of the buffer. Every
 * composite node carries its own lb and extent (they differ from what its blocks imply after
 * tess_type_resized) and its alignment (a power of 2; 1 for an empty type), which a struct
 * built from the decoded type pads to and which normalization may no longer show in the
 * elements (a struct of int32 and double is held as bytes); displacements are bytes from the node's origin, plus disp0. REF keeps a
 * shared subtree (a darray's dimensions share their element type) encoded once, so the wire
 * form is as small as the type in memory.
 *
 * Decoding rebuilds each node with the public constructors (so the result is normalized and
 * validated as any constructed type) and then tess_type_resized when the encoded bounds differ
 * from the rebuilt ones. The decoder trusts nothing: nesting is bounded by TESSI_MAX_DEPTH,
 * every array length is checked against the bytes left before anything is allocated (so the
 * work and memory are proportional to the encoded length), sums are checked for overflow, and
 * any constructor's refusal becomes TESS_ERR_DECODE.
 */
#include "type/type.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define WIRE_VERSION 2
#define HEADER_LEN 8

enum { TAG_BUILTIN = 0, TAG_CONTIG, TAG_VECTOR, TAG_BLOCKINDEXED, TAG_INDEXED, TAG_STRUCT,
       TAG_REF };

static const unsigned char magic[4] = {'T', 'S', 'T', 'Y'};

/* The predefined types by wire id. */
static tess_type *builtin_by_id(unsigned id)
{
    tess_type *const table[] = {TESS_BYTE,   TESS_CHAR,   TESS_INT8,   TESS_INT16,
                                TESS_INT32,  TESS_INT64,  TESS_UINT8,  TESS_UINT16,
                                TESS_UINT32, TESS_UINT64, TESS_FLOAT,  TESS_DOUBLE};
    return id < sizeof table / sizeof table[0] ? table[id] : NULL;
}

static int builtin_id(const tess_type *t)
{
    for (unsigned id = 0; builtin_by_id(id); id++)
        if (builtin_by_id(id) == t)
            return (int)id;
    return -1;
}

/* ------------------------------------------------------------------ encode */

/* Bytes go to buf while they fit; pos counts them all, so one pass also measures. */
typedef struct {
    unsigned char *buf;
    size_t cap, pos;
    tessi_nodemap seen; /* composite node -> postorder index */
    int64_t completed;  /* composite nodes finished so far */
} writer;

static void put_u8(writer *w, unsigned v)
{
    if (w->buf && w->pos < w->cap)
        w->buf[w->pos] = (unsigned char)v;
    w->pos++;
}

static void put_i64(writer *w, int64_t v)
{
    uint64_t u = (uint64_t)v;
    for (int i = 0; i < 8; i++)
        put_u8(w, (unsigned)(u >> (8 * i)) & 0xff);
}

static int encode_node(writer *w, const tess_type *t)
{
    int64_t idx, b, nb;
    int rc;

    if (t->kind == TESSI_BUILTIN) {
        int id = builtin_id(t);
        if (id < 0)
            return tessi_error(TESS_ERR_INTERNAL, "tess_type_encode: unknown predefined type");
        put_u8(w, TAG_BUILTIN);
        put_u8(w, (unsigned)id);
        return 0;
    }
    idx = tessi_nodemap_get(&w->seen, t);
    if (idx >= 0) {
        put_u8(w, TAG_REF);
        put_i64(w, idx);
        return 0;
    }
    put_u8(w, (unsigned)t->kind); /* tessi_kind values are the wire tags 1-5 */
    put_u8(w, t->align);
    put_i64(w, t->lb);
    put_i64(w, t->extent);
    put_i64(w, t->count);
    put_i64(w, t->disp0);
    switch (t->kind) {
    case TESSI_VECTOR:
        put_i64(w, t->blocklen);
        put_i64(w, t->stride);
        break;
    case TESSI_BLOCKINDEXED:
        put_i64(w, t->blocklen);
        for (b = 0; b < t->count; b++)
            put_i64(w, t->displs[b]);
        break;
    case TESSI_INDEXED:
    case TESSI_STRUCT:
        for (b = 0; b < t->count; b++)
            put_i64(w, t->blocklens[b]);
        for (b = 0; b < t->count; b++)
            put_i64(w, t->displs[b]);
        break;
    default:
        break;
    }
    nb = t->kind == TESSI_STRUCT ? t->count : 1;
    for (b = 0; b < nb; b++) {
        rc = encode_node(w, tessi_block_child(t, b));
        if (rc)
            return rc;
    }
    return tessi_nodemap_put(&w->seen, t, w->completed++);
}

int tess_type_encode(const tess_type *t, void *buf, size_t cap, size_t *len)
{
    writer w = {.buf = buf, .cap = cap};
    int rc;

    if (!t || !len)
        return tessi_error(TESS_ERR_ARG, "tess_type_encode: NULL %s", !t ? "type" : "len");
    for (int i = 0; i < 4; i++)
        put_u8(&w, magic[i]);
    put_u8(&w, WIRE_VERSION & 0xff);
    put_u8(&w, WIRE_VERSION >> 8);
    put_u8(&w, 0);
    put_u8(&w, 0);
    rc = encode_node(&w, t);
    if (rc)
        goto fail;
    *len = w.pos;
    if (buf && w.pos > cap)
        rc = tessi_error(TESS_ERR_TRUNCATE, "tess_type_encode: %zu bytes needed, %zu given",
                         w.pos, cap);
fail:
    tessi_nodemap_free(&w.seen);
    return rc;
}

/* ------------------------------------------------------------------ decode */

typedef struct {
    const unsigned char *p;
    size_t len, pos;
    tess_type **done; /* composite nodes completed so far, postorder (one reference each) */
    int64_t ndone, cap;
} reader;

static int bad(const reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad(const reader *r, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return tessi_error(TESS_ERR_DECODE, "tess_type_decode: byte %zu of %zu: %s", r->pos, r->len,
                       msg);
}

static size_t left(const reader *r) { return r->len - r->pos; }

/* The readers set *v on every path (0 when the input ends), so no caller reads an
 * indeterminate value whatever path the optimizer takes. */
static int get_u8(reader *r, unsigned *v)
{
    *v = 0;
    if (left(r) < 1)
        return bad(r, "truncated (a 1-byte field is missing)");
    *v = r->p[r->pos++];
    return 0;
}

static int get_i64(reader *r, const char *what, int64_t *v)
{
    uint64_t u = 0;
    *v = 0;
    if (left(r) < 8)
        return bad(r, "truncated (%s is missing)", what);
    for (int i = 0; i < 8; i++)
        u |= (uint64_t)r->p[r->pos + (size_t)i] << (8 * i);
    r->pos += 8;
    *v = (int64_t)u; /* two's complement: implementation-defined in C11, exact on gcc/clang */
    return 0;
}

/* Map a constructor's refusal of decoded values to TESS_ERR_DECODE (memory stays NOMEM). */
static int rejected(int rc, size_t node_pos)
{
    char msg[400];
    if (rc == TESS_ERR_NOMEM)
        return rc;
    snprintf(msg, sizeof msg, "%s", tess_last_error());
    return tessi_error(TESS_ERR_DECODE,
                       "tess_type_decode: node at byte %zu is not a valid type: %s", node_pos,
                       msg);
}

static int remember(reader *r, tess_type *t)
{
    if (r->ndone == r->cap) {
        int64_t cap = r->cap ? 2 * r->cap : 16;
        tess_type **done = realloc(r->done, (size_t)cap * sizeof *done);
        if (!done)
            return tessi_error(TESS_ERR_NOMEM, "tess_type_decode: out of memory");
        r->done = done;
        r->cap = cap;
    }
    r->done[r->ndone++] = tess_type_ref(t);
    return 0;
}

/*
 * Rebuild the loop of a composite node from decoded fields with the constructors. displs are
 * bytes with disp0 already added; kids holds one child (count for STRUCT).
 */
static int construct(int kind, int64_t count, int64_t disp0, int64_t blocklen, int64_t stride,
                     const int64_t *blens, const int64_t *displs, tess_type **kids,
                     tess_type **out)
{
    tess_type *v = NULL;
    int64_t one = 1;
    int rc;

    switch (kind) {
    case TAG_CONTIG:
        return tess_type_hindexed(1, &count, &disp0, kids[0], out);
    case TAG_VECTOR:
        if (disp0 == 0)
            return tess_type_hvector(count, blocklen, stride, kids[0], out);
        /* one instance at disp0: the normalizer shifts the vector, no extra level */
        rc = tess_type_hvector(count, blocklen, stride, kids[0], &v);
        if (rc == 0) {
            rc = tess_type_hindexed(1, &one, &disp0, v, out);
        } else if (rc == TESS_ERR_OVERFLOW) {
            /*
             * The vector at origin 0 reaches beyond int64 bytes although the one at disp0 does
             * not: shift the first block instead (blocklen instances at disp0, repeated). Same
             * typemap; with blocklen 1 the shift then stays in the child's own node.
             */
            rc = tess_type_hindexed(1, &blocklen, &disp0, kids[0], &v);
            if (rc == 0)
                rc = tess_type_hvector(count, 1, stride, v, out);
        }
        tess_type_free(v);
        return rc;
    case TAG_BLOCKINDEXED:
        return tess_type_hblockindexed(count, blocklen, displs, kids[0], out);
    case TAG_INDEXED:
        return tess_type_hindexed(count, blens, displs, kids[0], out);
    default:
        return tess_type_struct(count, blens, displs, kids, out);
    }
}

static int decode_node(reader *r, int level, tess_type **out)
{
    size_t at = r->pos;
    unsigned tag = 0, id = 0, align = 0;
    int64_t lb, extent, count, disp0, blocklen = 0, stride = 0, idx, nkids = 0, b, per_entry;
    int64_t *blens = NULL, *displs = NULL;
    tess_type **kids = NULL, *t = NULL, *sized = NULL;
    int rc;

    rc = get_u8(r, &tag);
    if (rc)
        return rc;
    if (tag == TAG_BUILTIN) {
        rc = get_u8(r, &id);
        if (rc)
            return rc;
        if (!builtin_by_id(id))
            return bad(r, "unknown predefined type id %u", id);
        *out = builtin_by_id(id);
        return 0;
    }
    if (tag == TAG_REF) {
        rc = get_i64(r, "a reference index", &idx);
        if (rc)
            return rc;
        if (idx < 0 || idx >= r->ndone)
            return bad(r, "reference to node %lld, but only %lld nodes precede it",
                       (long long)idx, (long long)r->ndone);
        *out = tess_type_ref(r->done[idx]);
        return 0;
    }
    if (tag > TAG_REF)
        return bad(r, "unknown node tag %u", tag);
    if (level >= TESSI_MAX_DEPTH)
        return bad(r, "nesting deeper than %d levels", TESSI_MAX_DEPTH);
    if ((rc = get_u8(r, &align)))
        return rc;
    if (align == 0 || (align & (align - 1)))
        return bad(r, "alignment %u is not a power of 2", align);
    if ((rc = get_i64(r, "lb", &lb)) || (rc = get_i64(r, "extent", &extent)) ||
        (rc = get_i64(r, "count", &count)) || (rc = get_i64(r, "disp0", &disp0)))
        return rc;
    if (count < 0)
        return bad(r, "negative count %lld", (long long)count);
    if (tag == TAG_VECTOR || tag == TAG_BLOCKINDEXED)
        if ((rc = get_i64(r, "blocklen", &blocklen)) ||
            (tag == TAG_VECTOR && (rc = get_i64(r, "stride", &stride))))
            return rc;
    /*
     * A normalized tree has no empty blocks (type.h), so no encoder writes one; refusing them
     * also spares the constructors a walk over up to 2^63 empty blocks.
     */
    if ((tag == TAG_VECTOR || tag == TAG_BLOCKINDEXED) && blocklen < 1)
        return bad(r, "blocklen %lld < 1 (encoded blocks are never empty)", (long long)blocklen);
    /*
     * Bytes each block costs on the wire: arrays of 8-byte entries, and for a struct a child of
     * at least 2 bytes. Checking count against the bytes left before allocating keeps memory
     * and work proportional to the input.
     */
    per_entry = tag == TAG_BLOCKINDEXED ? 8 : tag == TAG_INDEXED ? 16 : tag == TAG_STRUCT ? 18 : 0;
    if (per_entry && (uint64_t)count > left(r) / (uint64_t)per_entry)
        return bad(r, "count %lld needs %lld bytes per block, only %zu bytes left",
                   (long long)count, (long long)per_entry, left(r));
    nkids = tag == TAG_STRUCT ? count : 1;
    if (per_entry) {
        displs = malloc((size_t)(count ? count : 1) * sizeof *displs);
        blens = malloc((size_t)(count ? count : 1) * sizeof *blens);
        if (!displs || !blens) {
            rc = tessi_error(TESS_ERR_NOMEM, "tess_type_decode: out of memory");
            goto fail;
        }
    }
    for (b = 0; (tag == TAG_INDEXED || tag == TAG_STRUCT) && b < count; b++) {
        if ((rc = get_i64(r, "a blocklength", &blens[b])))
            goto fail;
        if (blens[b] < 1) {
            rc = bad(r, "blocklength %lld < 1 (encoded blocks are never empty)",
                     (long long)blens[b]);
            goto fail;
        }
    }
    if (per_entry) {
        for (b = 0; b < count; b++) {
            if ((rc = get_i64(r, "a displacement", &displs[b])))
                goto fail;
            if (!tessi_add(displs[b], disp0, &displs[b])) {
                rc = bad(r, "displacement + disp0 overflows int64");
                goto fail;
            }
        }
    }
    kids = calloc((size_t)nkids, sizeof *kids);
    if (!kids) {
        rc = tessi_error(TESS_ERR_NOMEM, "tess_type_decode: out of memory");
        goto fail;
    }
    for (b = 0; b < nkids; b++)
        if ((rc = decode_node(r, level + 1, &kids[b])))
            goto fail;
    rc = construct((int)tag, count, disp0, blocklen, stride, blens, displs, kids, &t);
    if (rc) {
        rc = rejected(rc, at);
        goto fail;
    }
    if (t->lb != lb || t->extent != extent) {
        rc = tess_type_resized(t, lb, extent, &sized);
        if (rc) {
            rc = rejected(rc, at);
            goto fail;
        }
        tess_type_free(t);
        t = sized;
    }
    if (t->size == 0 && align != 1) {
        rc = bad(r, "alignment %u of the empty node at byte %zu (must be 1)", align, at);
        goto fail;
    }
    t->align = (uint8_t)align; /* t is the constructor's new node, referenced only here */
    rc = remember(r, t);
    if (rc)
        goto fail;
    *out = t;
    t = NULL;
fail:
    tess_type_free(t);
    for (b = 0; kids && b < nkids; b++)
        tess_type_free(kids[b]);
    free(kids);
    free(blens);
    free(displs);
    return rc;
}

int tess_type_decode(const void *buf, size_t len, tess_type **out)
{
    reader r = {.p = buf, .len = len};
    tess_type *t = NULL;
    int rc;

    if (!out || (!buf && len))
        return tessi_error(TESS_ERR_ARG, "tess_type_decode: NULL %s", !out ? "out" : "buf");
    if (len < HEADER_LEN)
        return bad(&r, "%zu bytes is shorter than the %d-byte header", len, HEADER_LEN);
    for (int i = 0; i < 4; i++)
        if (r.p[i] != magic[i])
            return bad(&r, "bad magic (not an encoded tessera type)");
    if (r.p[4] != WIRE_VERSION || r.p[5] != 0)
        return bad(&r, "unsupported version %u", (unsigned)r.p[4] | (unsigned)r.p[5] << 8);
    if (r.p[6] || r.p[7])
        return bad(&r, "reserved header bytes are not zero");
    r.pos = HEADER_LEN;
    rc = decode_node(&r, 0, &t);
    if (rc)
        goto fail;
    if (r.pos != len) {
        rc = bad(&r, "%zu trailing bytes after the type", len - r.pos);
        goto fail;
    }
    *out = t;
    t = NULL;
fail:
    tess_type_free(t);
    for (int64_t i = 0; i < r.ndone; i++)
        tess_type_free(r.done[i]);
    free(r.done);
    return rc;
}
