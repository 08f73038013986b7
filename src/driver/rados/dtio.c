/*
 * dtio.c - datatype I/O for the RADOS driver: the client side of src/driver/rados/dtio.lua.
 *
 * For each object an access touches, one request. Where the object's part of the access is
 * more extents than one compound request carries (tess_list_max_pairs), the request goes to
 * the Lua object class (cls_lua, eval_bufferlist): the embedded program, and as its input the
 * encoded filetype, the view displacement, the stream range of the call and the stripe
 * geometry (see dtio.lua for the wire form); writes append the data bytes that fall in the
 * object, in stream order. The OSD finds the regions itself. Where the extents fit one compound
 * request, that request carries them instead, straight to or from the packed data (io.c): the
 * same one request for the object, and the OSD runs no program. A program costs the OSD a
 * fresh Lua state and the program's load per request, which only pays where it saves requests.
 * Where the build precompiled the program (luac5.3), the request's script is only LOADER, and
 * the input starts with the bytecode (u32 length, bytes): the OSD loads it in about 1/15 of
 * the time of a compile (about 0.6 ms of OSD time less per request on the tile reader). An OSD
 * whose Lua refuses it answers -ENOEXEC; that request is sent again with the program's text,
 * and so is every later one of the handle.
 *
 * The client walks the access's regions by cursor (in C): once to learn how many bytes and
 * extents each object gets, once to place the compound extents and pack the program's write
 * payloads, and (reads that ran a program or reach past the end of file) once more to unpack
 * the program's replies and count the bytes before the end of file. It never sends a region
 * list for an object whose extents do not fit one compound request. The requests of a call go
 * out as one wave: the programs' are started (TESSI_RADOS_INFLIGHT at a time), then the compound
 * ones are sent and waited for, then the programs' are waited for (the rest started as slots
 * free up).
 */
#include "driver/rados/rados.h"

#include <stdlib.h>
#include <string.h>

/* The program (generated from dtio.lua at build time): its text, and its bytecode (none where
 * the build had no luac5.3). */
extern const char tessi_rados_dtio_lua[];
extern const size_t tessi_rados_dtio_lua_len;
extern const char tessi_rados_dtio_luac[];
extern const size_t tessi_rados_dtio_luac_len;

/* The script of a request carrying the bytecode: load it from the input's front and run the
 * main chunk with true, which returns the program's entry (s, where the request starts, out). */
static const char LOADER[] =
    "local O=objclass\n"
    "function dtio_loader(i,o)\n"
    "local s=i:str()\n"
    "local n=string.unpack('<I4',s)\n"
    "local f=load(string.sub(s,5,4+n),'=dtio','b')\n"
    "if not f then return -O.ENOEXEC end\n"
    "return f(true)(s,5+n,o)\n"
    "end\n"
    "O.register(dtio_loader)\n";

/* What one request sends: the script, its handler and (bytecode) the input's prefix. */
typedef struct program {
    const char *script, *handler, *bc;
    size_t scriptlen, bclen;
} program;

void tessi_rados_dtio_init(tessi_rados *r)
{
    r->dtio_bc = tessi_rados_dtio_luac_len ? tessi_rados_dtio_luac : NULL;
    r->dtio_bclen = tessi_rados_dtio_luac_len;
}

/* The program the handle sends now. */
static program program_of(tessi_rados *r)
{
    pthread_mutex_lock(&r->mu);
    program p = {.bc = r->dtio_bc, .bclen = r->dtio_bc ? r->dtio_bclen : 0};
    pthread_mutex_unlock(&r->mu);
    if (p.bc)
        p.script = LOADER, p.scriptlen = sizeof LOADER - 1, p.handler = "dtio_loader";
    else
        p.script = tessi_rados_dtio_lua, p.scriptlen = tessi_rados_dtio_lua_len,
        p.handler = "dtio_handler";
    return p;
}

/* An OSD refused the bytecode: from now on the handle sends the text. */
static program refused(tessi_rados *r)
{
    pthread_mutex_lock(&r->mu);
    r->dtio_bc = NULL;
    pthread_mutex_unlock(&r->mu);
    return program_of(r);
}
#define REQ_HEADER 72
/* Regions of one request the program accepts (dtio.lua MAX_REGIONS). */
#define MAX_OBJ_REGIONS (INT64_C(1) << 18)

enum { OP_READ = 1, OP_WRITE = 2 };

/* One object of the access: its request and reply. */
typedef struct obj {
    int64_t objno;
    int64_t bytes, extents;  /* data bytes, and runs contiguous in the object and the stream */
    int64_t obj_end, s_end;  /* where the last piece ended: object offset, stream position */
    int64_t last;            /* compound: index of its last extent in the extent list */
    bool compound;           /* moved by one compound request of its extents */
    int64_t filled;          /* program: bytes packed into / unpacked from the payload so far */
    char *req;               /* program: eval_bufferlist envelope, input: header, type, payload */
    size_t reqlen, data_at;  /* data_at: offset of the payload in req */
    size_t at;               /* where the request (header, type, payload) starts in req */
    bool bytecode;           /* req carries the program as bytecode */
    char *reply;             /* program reads: the gathered bytes */
    int rc;
} obj;

typedef struct objmap {
    obj *o;
    int64_t n, cap;
    int64_t *slot; /* open addressing on objno: index + 1, 0 empty */
    int64_t nslot;
} objmap;

static void put_le(char *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (char)((v >> (8 * i)) & 0xff);
}

static obj *objmap_get(objmap *m, int64_t objno)
{
    if (2 * (m->n + 1) > m->nslot) {
        int64_t ns = m->nslot ? 2 * m->nslot : 64;
        int64_t *slot = calloc((size_t)ns, sizeof *slot);
        obj *o = realloc(m->o, sizeof *o * (size_t)(ns / 2));
        if (!slot || !o) {
            free(slot);
            if (o)
                m->o = o;
            return NULL;
        }
        m->o = o;
        for (int64_t i = 0; i < m->n; i++) {
            uint64_t h = (uint64_t)m->o[i].objno * UINT64_C(0x9E3779B97F4A7C15);
            int64_t k = (int64_t)(h % (uint64_t)ns);
            while (slot[k])
                k = (k + 1) % ns;
            slot[k] = i + 1;
        }
        free(m->slot);
        m->slot = slot;
        m->nslot = ns;
    }
    uint64_t h = (uint64_t)objno * UINT64_C(0x9E3779B97F4A7C15);
    int64_t k = (int64_t)(h % (uint64_t)m->nslot);
    while (m->slot[k]) {
        obj *o = &m->o[m->slot[k] - 1];
        if (o->objno == objno)
            return o;
        k = (k + 1) % m->nslot;
    }
    m->slot[k] = ++m->n;
    m->o[m->n - 1] = (obj){.objno = objno, .obj_end = -1, .s_end = -1, .last = -1};
    return &m->o[m->n - 1];
}

static void objmap_free(objmap *m)
{
    for (int64_t i = 0; i < m->n; i++) {
        free(m->o[i].req);
        free(m->o[i].reply);
    }
    free(m->o);
    free(m->slot);
}

/*
 * Walk the file regions of stream bytes [start, start + bytes) of the view (disp, t), split at
 * stripe units: fn(arg, object, object offset, stream position, length, file offset) per
 * piece, in stream order. Stops at the first nonzero return.
 */
typedef int (*piece_fn)(void *arg, obj *o, int64_t objoff, int64_t spos, int64_t len,
                        int64_t foff);

static int walk(const tessi_rados *r, objmap *m, int64_t disp, const tess_type *t,
                int64_t start, int64_t bytes, piece_fn fn, void *arg)
{
    int64_t size = tess_type_size(t), extent = tess_type_extent(t);
    int64_t k0 = start / size, k1 = (start + bytes - 1) / size;
    tess_cursor *c;
    int rc = tess_cursor_create(t, k1 - k0 + 1, &c);
    if (rc)
        return -ENOMEM;
    rc = tess_cursor_seek(c, start - k0 * size) ? -EINVAL : 0;
    int64_t base = disp + k0 * extent, spos = start, end = start + bytes;
    tess_region reg[64];
    int64_t n;
    while (rc == 0 && spos < end) {
        if (tess_cursor_next(c, reg, 64, end - spos, &n) || n == 0) {
            rc = -EINVAL;
            break;
        }
        for (int64_t i = 0; i < n && rc == 0; i++) {
            int64_t off = base + reg[i].off, len = reg[i].len;
            while (len > 0 && rc == 0) {
                int64_t piece = tessi_rados_unit_left(r, off), objno, objoff;
                if (piece > len)
                    piece = len;
                tessi_rados_locate(r, off, &objno, &objoff);
                obj *o = objmap_get(m, objno);
                rc = o ? fn(arg, o, objoff, spos, piece, off) : -ENOMEM;
                off += piece, len -= piece, spos += piece;
            }
        }
    }
    tess_cursor_free(c);
    return rc;
}

/* pass 1: bytes and extents per object, and the file end of the access (*arg) */
static int count_piece(void *arg, obj *o, int64_t objoff, int64_t spos, int64_t len,
                       int64_t foff)
{
    o->bytes += len;
    o->extents += objoff != o->obj_end || spos != o->s_end;
    o->obj_end = objoff + len, o->s_end = spos + len;
    *(int64_t *)arg = foff + len;
    return 0;
}

/* pass 2: the compound extents and the program's write payloads; pass 3 (reads): unpack the
 * program's replies and count the bytes before the file size */
typedef struct {
    extv ext;       /* the compound requests' extents */
    char *packed;
    bool write;
    int64_t size;   /* reads: the file size */
    int64_t moved;  /* reads: stream bytes before the first byte at or past size */
    int64_t start;
    bool eof;
} copy_arg;

static int place_piece(void *arg, obj *o, int64_t objoff, int64_t spos, int64_t len,
                       int64_t foff)
{
    copy_arg *a = arg;
    char *p = a->packed + (spos - a->start);
    (void)foff;
    if (o->compound) {
        ext *e = o->last >= 0 ? &a->ext.e[o->last] : NULL;
        if (e && e->objoff + e->len == objoff && e->mem + e->len == p) {
            e->len += len;
            return 0;
        }
        o->last = a->ext.n;
        return tessi_rados_ext_push(&a->ext, o->objno, objoff, len, p);
    }
    if (a->write) {
        memcpy(o->req + o->data_at + o->filled, p, (size_t)len);
        o->filled += len;
    }
    return 0;
}

static int unpack_piece(void *arg, obj *o, int64_t objoff, int64_t spos, int64_t len,
                        int64_t foff)
{
    copy_arg *a = arg;
    (void)objoff;
    int64_t keep = a->eof || foff >= a->size ? 0 : tessi_min64(a->size - foff, len);
    if (!o->compound) {
        memcpy(a->packed + (spos - a->start), o->reply + o->filled, (size_t)keep);
        o->filled += len;
    }
    a->moved += keep;
    a->eof |= keep < len;
    return 0;
}

/* The eval_bufferlist envelope of a request of len bytes, up to the request: struct header
 * (v1, compat 1, length), the script, the handler name, the input's length and (bytecode) the
 * input's prefix. Returns its length. */
static size_t envelope(const program *g, char *p, size_t len)
{
    size_t script = g->scriptlen, handler = strlen(g->handler);
    size_t pre = g->bc ? 4 + g->bclen : 0, input = pre + len;
    if (p) {
        p[0] = 1, p[1] = 1;
        put_le(p + 2, 4 + script + 4 + handler + 4 + input, 4);
        put_le(p + 6, script, 4);
        memcpy(p + 10, g->script, script);
        put_le(p + 10 + script, handler, 4);
        memcpy(p + 14 + script, g->handler, handler);
        put_le(p + 14 + script + handler, input, 4);
        if (g->bc) {
            put_le(p + 18 + script + handler, g->bclen, 4);
            memcpy(p + 22 + script + handler, g->bc, g->bclen);
        }
    }
    return 18 + script + handler + pre;
}

/* Put o's request (o->req from o->at) into the envelope of program g. */
static int wrap(obj *o, const program *g)
{
    size_t len = o->reqlen - o->at, env = envelope(g, NULL, len);
    char *req = malloc(env + len);
    if (!req)
        return -ENOMEM;
    envelope(g, req, len);
    memcpy(req + env, o->req + o->at, len);
    free(o->req);
    o->data_at = o->data_at - o->at + env;
    o->req = req, o->reqlen = env + len, o->at = env, o->bytecode = g->bc != NULL;
    return 0;
}

/* Build one object's request: envelope, header, type, room for the payload (writes). */
static int build(const tessi_rados *r, const program *g, obj *o, int op, int64_t disp,
                 int64_t start, int64_t bytes, const void *enc, size_t enclen)
{
    size_t payload = op == OP_WRITE ? (size_t)o->bytes : 0;
    size_t input = REQ_HEADER + enclen + payload, env = envelope(g, NULL, input);
    o->req = malloc(env + input);
    if (!o->req)
        return -ENOMEM;
    char *p = o->req + envelope(g, o->req, input);
    o->at = env, o->bytecode = g->bc != NULL;
    memcpy(p, "TDIO", 4);
    p[4] = 1, p[5] = (char)op, p[6] = p[7] = 0;
    int64_t f[8] = {disp, start, bytes, r->unit, r->factor, r->objsize, o->objno,
                    (int64_t)enclen};
    for (int i = 0; i < 8; i++)
        put_le(p + 8 + 8 * i, (uint64_t)f[i], 8);
    memcpy(p + REQ_HEADER, enc, enclen);
    o->reqlen = env + input;
    o->data_at = env + REQ_HEADER + enclen;
    if (op == OP_READ && !(o->reply = malloc((size_t)(o->bytes ? o->bytes : 1))))
        return -ENOMEM;
    return 0;
}

/* The program's requests of a call in flight (TESSI_RADOS_INFLIGHT at a time, in object
 * order): wave_send starts as many as fit, wave_wait waits for them all, starting the rest as
 * slots free up. */
typedef struct wave {
    tessi_rados *r;
    objmap *m;
    bool write;
    rados_completion_t c[TESSI_RADOS_INFLIGHT];
    rados_write_op_t w[TESSI_RADOS_INFLIGHT];
    rados_read_op_t rd[TESSI_RADOS_INFLIGHT];
    int prval[TESSI_RADOS_INFLIGHT];
    size_t used[TESSI_RADOS_INFLIGHT];
    int64_t next, head, sent;
    int err;
} wave;

/* Start o's request (a program one) in slot s; 0 or why it was not sent. */
static int slot_start(wave *v, obj *o, int s)
{
    int rc;
    char oid[TESSI_RADOS_NAME_MAX + 24];
    tessi_rados_oid(v->r, o->objno, oid);
    v->w[s] = NULL;
    v->rd[s] = NULL;
    v->prval[s] = 0;
    v->used[s] = 0;
    if ((rc = rados_aio_create_completion2(NULL, NULL, &v->c[s])) == 0) {
        if (v->write) {
            v->w[s] = rados_create_write_op();
            rados_write_op_exec(v->w[s], "lua", "eval_bufferlist", o->req, o->reqlen,
                                &v->prval[s]);
            rc = rados_aio_write_op_operate(v->w[s], v->r->io, v->c[s], oid, NULL,
                                            LIBRADOS_OPERATION_FULL_TRY);
        } else {
            /* the reply lands in o->reply; used says how much (rados_aio_exec cannot say: its
             * result is 0 when the messenger read straight into the buffer) */
            v->rd[s] = rados_create_read_op();
            rados_read_op_exec_user_buf(v->rd[s], "lua", "eval_bufferlist", o->req, o->reqlen,
                                        o->reply, (size_t)o->bytes, &v->used[s], &v->prval[s]);
            rc = rados_aio_read_op_operate(v->rd[s], v->r->io, v->c[s], oid, 0);
        }
        if (rc) {
            rados_aio_release(v->c[s]);
            if (v->w[s])
                rados_release_write_op(v->w[s]);
            if (v->rd[s])
                rados_release_read_op(v->rd[s]);
        }
    }
    v->sent += rc == 0;
    return rc;
}

/* Wait for the request in slot s (of o): 0 or its error. */
static int slot_wait(wave *v, obj *o, int s)
{
    int rc = tessi_rados_wait(v->c[s]);
    if (v->w[s])
        rados_release_write_op(v->w[s]);
    if (v->rd[s])
        rados_release_read_op(v->rd[s]);
    if (rc == 0)
        rc = v->prval[s];
    if (rc >= 0 && !v->write && v->used[s] != (size_t)o->bytes)
        rc = -EIO; /* the program gathered another amount than this client expects */
    return rc > 0 ? 0 : rc;
}

/* Start object next's request in its slot. */
static void wave_start(wave *v)
{
    obj *o = &v->m->o[v->next];
    int rc = slot_start(v, o, (int)(v->next % TESSI_RADOS_INFLIGHT));
    if (rc) { /* not sent: nothing to wait for */
        o->rc = rc;
        v->err = v->err ? v->err : rc;
    }
}

/* Start requests while slots are free (after a failure none: each could wait a timeout). */
static void wave_send(wave *v)
{
    for (; !v->err && v->next < v->m->n && v->next - v->head < TESSI_RADOS_INFLIGHT; v->next++)
        if (!v->m->o[v->next].compound)
            wave_start(v);
}

/* Wait for every request started, starting the rest; the first error. */
static int wave_wait(wave *v)
{
    while (v->head < v->next) {
        int s = (int)(v->head % TESSI_RADOS_INFLIGHT);
        obj *o = &v->m->o[v->head++];
        if (!o->rc && !o->compound) {
            int rc = slot_wait(v, o, s);
            if (rc == -ENOEXEC && o->bytecode) { /* the OSD refused the bytecode: the text */
                program g = refused(v->r);
                if ((rc = wrap(o, &g)) == 0 && (rc = slot_start(v, o, s)) == 0)
                    rc = slot_wait(v, o, s);
            }
            o->rc = rc;
            v->err = v->err ? v->err : o->rc;
        }
        wave_send(v);
    }
    tessi_rados_count_programs(v->r, v->sent);
    v->sent = 0;
    return v->err;
}

/* The compound requests of the objects that have them (cp->ext): one per object. */
static int send_compound(tessi_rados *r, copy_arg *cp, bool write)
{
    oprec *ops = NULL;
    int64_t nops = 0;
    int rc = tessi_rados_ext_group(&cp->ext, 0, &ops, &nops);
    if (rc == 0)
        rc = tessi_rados_ext_run(r, write, &cp->ext, ops, nops, NULL);
    for (int64_t k = 0; rc == 0 && k < nops; k++)
        rc = ops[k].rc < 0 ? ops[k].rc : 0;
    free(ops);
    return rc;
}

int64_t tessi_rados_dtio(void *h, int op, int64_t disp, const tess_type *filetype,
                         int64_t start, int64_t bytes, void *packed)
{
    tessi_rados *r = h;
    bool write = op == TESSI_OP_WRITE;
    objmap m = {0};
    void *enc = NULL;
    size_t enclen = 0;
    copy_arg cp = {.packed = packed, .write = write, .start = start, .size = INT64_MAX};
    int64_t hi = 0, programs = 0;
    int rc;
    if (bytes == 0)
        return 0;
    /* pass 1: the objects; each takes one compound request when its extents fit one */
    if ((rc = walk(r, &m, disp, filetype, start, bytes, count_piece, &hi)))
        goto out;
    for (int64_t i = 0; i < m.n; i++) {
        obj *o = &m.o[i];
        o->compound = o->extents <= r->list_max;
        programs += !o->compound;
        if (!o->compound && o->extents > MAX_OBJ_REGIONS) {
            rc = -E2BIG; /* the caller splits the access */
            goto out;
        }
    }
    if (!write) {
        int64_t size;
        pthread_mutex_lock(&r->mu);
        size = r->size_known > r->size_pending ? r->size_known : r->size_pending;
        pthread_mutex_unlock(&r->mu);
        if (hi > size && (rc = tessi_rados_size(r, &size)))
            goto out;
        cp.size = size;
    }
    if (programs && (tess_type_encode(filetype, NULL, 0, &enclen) || !(enc = malloc(enclen)) ||
                     tess_type_encode(filetype, enc, enclen, &enclen))) {
        rc = -ENOMEM;
        goto out;
    }
    program g = program_of(r);
    for (int64_t i = 0; i < m.n; i++)
        if (!m.o[i].compound && (rc = build(r, &g, &m.o[i], write ? OP_WRITE : OP_READ, disp,
                                            start, bytes, enc, enclen)))
            goto out;
    /* pass 2; the requests, the programs' and the compound ones in one wave; (reads) pass 3 */
    if ((rc = walk(r, &m, disp, filetype, start, bytes, place_piece, &cp)))
        goto out;
    wave v = {.r = r, .m = &m, .write = write};
    wave_send(&v);
    if (cp.ext.n && !v.err)
        rc = send_compound(r, &cp, write);
    int prc = wave_wait(&v);
    if ((rc = rc ? rc : prc))
        goto out;
    if (write) {
        tessi_rados_extend(r, hi);
        goto out;
    }
    if (!programs && hi <= cp.size) { /* the compound reads placed every byte, none past EOF */
        cp.moved = bytes;
        goto out;
    }
    for (int64_t i = 0; i < m.n; i++)
        m.o[i].filled = 0;
    rc = walk(r, &m, disp, filetype, start, bytes, unpack_piece, &cp);
out:
    free(enc);
    free(cp.ext.e);
    objmap_free(&m);
    if (rc)
        return rc;
    return write ? bytes : cp.moved;
}

int tessi_rados_dtio_raw(tessi_rados *r, int64_t objno, const void *req, size_t len,
                         char *out, size_t outcap, size_t *outlen)
{
    program g = program_of(r);
    char oid[TESSI_RADOS_NAME_MAX + 24];
    tessi_rados_oid(r, objno, oid);
    int rc;
    for (;;) {
        size_t env = envelope(&g, NULL, len);
        char *buf = malloc(env + len);
        if (!buf)
            return -ENOMEM;
        envelope(&g, buf, len);
        memcpy(buf + env, req, len);
        rc = rados_exec(r->io, oid, "lua", "eval_bufferlist", buf, env + len, out, outcap);
        tessi_rados_count_programs(r, 1);
        free(buf);
        if (rc != -ENOEXEC || !g.bc)
            break;
        g = refused(r); /* the OSD refused the bytecode: the text */
    }
    if (rc >= 0) {
        *outlen = (size_t)rc;
        rc = 0;
    }
    return rc;
}
