/*
 * coll_verify.c - what the collective runner checks against (see coll_impl.h): the content of
 * every correctly written file (a function of the file offset only), the walk of a call's
 * pieces through its view and memory type, the analysis of the access, the prepared buffers,
 * and the checks of every read buffer and every file.
 */
#include "coll_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ============================================================== content */

/* The byte at file offset x of every correctly written file: a hash of x (splitmix64). */
static uint64_t mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Fill dst[0, len) with the content of file bytes [x, x + len). */
static void fill_content(unsigned char *dst, int64_t x, int64_t len)
{
    int64_t i = 0;
    while (i < len) {
        uint64_t h = mix64((uint64_t)((x + i) >> 3));
        int b = (int)((x + i) & 7);
        for (; b < 8 && i < len; b++, i++)
            dst[i] = (unsigned char)(h >> (8 * b));
    }
}

/* Bit maps (coverage of the file, data bytes of the memory buffer). */
static void bits_set(unsigned char *map, int64_t off, int64_t len)
{
    int64_t end = off + len;
    while (off < end && (off & 7)) {
        map[off >> 3] |= (unsigned char)(1u << (off & 7));
        off++;
    }
    if (end - off >= 8) {
        memset(map + (off >> 3), 0xFF, (size_t)((end - off) >> 3));
        off += (end - off) & ~(int64_t)7;
    }
    while (off < end) {
        map[off >> 3] |= (unsigned char)(1u << (off & 7));
        off++;
    }
}

static int bit_get(const unsigned char *map, int64_t i) { return (map[i >> 3] >> (i & 7)) & 1; }

/* ============================================================ the walker */

typedef int (*piece_fn)(void *ctx, int64_t foff, int64_t moff, int64_t len);

enum { WALK_BATCH = 512 };

/*
 * Call fn for every piece of call c in stream order: file bytes [foff, foff + len) (absolute,
 * through the view) hold memory bytes [moff, moff + len) (offsets in the rank's buffer).
 */
/* The next batch of a cursor's regions (at most max bytes, -1: any); *i restarts at 0. */
static int refill(tess_cursor *c, tess_region *r, int64_t max, int64_t *n, int64_t *i,
                  const char *what)
{
    int trc = tess_cursor_next(c, r, WALK_BATCH, max, n);
    if (trc)
        return coll_tfail(trc, "walk: tess_cursor_next");
    *i = 0;
    return *n == 0 ? coll_fail("walk: the %s ended before the access", what) : 0;
}

static int walk_call(const coll_pattern *p, const coll_call *c, piece_fn fn, void *ctx)
{
    const coll_view *v = &p->views[c->view];
    const tess_type *mt = p->mems[c->mem].t;
    int64_t msize = tess_type_size(mt), esize = tess_type_size(v->etype.t);
    int64_t fsize = tess_type_size(v->filetype.t), nbytes, start, ninst;
    if (c->count == 0 || msize == 0)
        return 0;
    if (fsize <= 0 || esize <= 0)
        return coll_fail("walk: empty filetype or etype");
    if (__builtin_mul_overflow(c->count, msize, &nbytes) ||
        __builtin_mul_overflow(c->offset, esize, &start) ||
        __builtin_add_overflow(start, nbytes, &ninst))
        return coll_fail("walk: access size overflows");
    ninst = ninst / fsize + 2;
    tess_cursor *fc = NULL, *mc = NULL;
    tess_region *fr = malloc(sizeof *fr * WALK_BATCH), *mr = malloc(sizeof *mr * WALK_BATCH);
    int rc = -1;
    if (!fr || !mr) {
        coll_fail("walk: out of memory");
        goto out;
    }
    int trc = tess_cursor_create(v->filetype.t, ninst, &fc);
    if (trc || (trc = tess_cursor_seek(fc, start)) ||
        (trc = tess_cursor_create(mt, c->count, &mc))) {
        coll_tfail(trc, "walk: tess_cursor_create/seek");
        goto out;
    }
    int64_t nf = 0, nm = 0, fi = 0, mi = 0, left = nbytes;
    while (left > 0) {
        if ((fi == nf && refill(fc, fr, left, &nf, &fi, "view") != 0) ||
            (mi == nm && refill(mc, mr, -1, &nm, &mi, "memory type") != 0))
            goto out;
        int64_t len = fr[fi].len < mr[mi].len ? fr[fi].len : mr[mi].len;
        if (len > left)
            len = left;
        if (fn(ctx, v->disp + fr[fi].off, c->buf_off + mr[mi].off, len) != 0)
            goto out;
        fr[fi].off += len;
        fr[fi].len -= len;
        mr[mi].off += len;
        mr[mi].len -= len;
        if (fr[fi].len == 0)
            fi++;
        if (mr[mi].len == 0)
            mi++;
        left -= len;
    }
    rc = 0;
out:
    tess_cursor_free(fc);
    tess_cursor_free(mc);
    free(fr);
    free(mr);
    return rc;
}

/* --------------------------------------------------- the access, analyzed */


static int analyze_piece(void *ctx, int64_t foff, int64_t moff, int64_t len)
{
    call_info *ci = ctx;
    if (foff < 0 || moff < 0)
        return coll_fail("access: negative file or memory offset (%lld, %lld)", (long long)foff,
                    (long long)moff);
    int file_cont = ci->n > 0 && foff == ci->last_fend;
    int mem_cont = ci->n > 0 && moff == ci->last_mend;
    if (!file_cont) {
        if (ci->n > 0) {
            if (ci->cur_fr < ci->min_fr)
                ci->min_fr = ci->cur_fr;
            if (ci->cur_fr > ci->max_fr)
                ci->max_fr = ci->cur_fr;
        }
        ci->frc++;
        ci->cur_fr = 0;
    }
    if (!(file_cont && mem_cont))
        ci->pieces++;
    ci->cur_fr += len;
    if (foff < ci->first)
        ci->first = foff;
    if (foff + len > ci->end)
        ci->end = foff + len;
    ci->last_fend = foff + len;
    ci->last_mend = moff + len;
    ci->n += len;
    return 0;
}

typedef struct fill_ctx {
    unsigned char *wbuf, *mmask, *cov;
    int64_t buf_bytes;
} fill_ctx;

static int fill_piece(void *ctx, int64_t foff, int64_t moff, int64_t len)
{
    fill_ctx *f = ctx;
    if (moff < 0 || moff + len > f->buf_bytes)
        return coll_fail("pattern: memory piece [%lld, %lld) outside the %lld-byte buffer",
                    (long long)moff, (long long)(moff + len), (long long)f->buf_bytes);
    fill_content(f->wbuf + moff, foff, len);
    bits_set(f->mmask, moff, len);
    bits_set(f->cov, foff, len);
    return 0;
}


/* ------------------------------------------------------------- checking */

/* Every rank: the read buffer against what was written (data) and READ_FILL (holes). Returns
   the first bad offset or -1. */
static int64_t check_read_local(const shared *s)
{
    const unsigned char *w = s->wbuf, *r = s->rbuf, *m = s->mmask;
    int64_t n = s->p->buf_bytes;
    for (int64_t g = 0; g < n; g += 8) {
        int64_t len = n - g < 8 ? n - g : 8;
        unsigned char mb = m[g >> 3];
        if (len == 8 && mb == 0xFF && memcmp(w + g, r + g, 8) == 0)
            continue;
        if (len == 8 && mb == 0) {
            int ok = 1;
            for (int k = 0; k < 8; k++)
                ok &= r[g + k] == READ_FILL;
            if (ok)
                continue;
        }
        for (int64_t i = g; i < g + len; i++) {
            unsigned char want = bit_get(m, i) ? w[i] : READ_FILL;
            if (r[i] != want)
                return i;
        }
    }
    return -1;
}

/* All ranks: text "ok" or "BAD r<rank>@<offset>" (identical on every rank); 1 if ok. */
int coll_check_read(const shared *s, char *text, size_t cap)
{
    int64_t bad = check_read_local(s);
    int64_t in[2] = {bad >= 0 ? s->env->rank : INT64_MAX, 0}, out[2];
    if (MPI_Allreduce(in, out, 1, MPI_INT64_T, MPI_MIN, MPI_COMM_WORLD) != MPI_SUCCESS) {
        snprintf(text, cap, "ERR");
        return 0;
    }
    if (out[0] == INT64_MAX) {
        snprintf(text, cap, "ok");
        return 1;
    }
    int64_t where = s->env->rank == out[0] ? bad : 0, w = 0;
    if (MPI_Allreduce(&where, &w, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS)
        w = -1;
    snprintf(text, cap, "BAD r%lld@%lld", (long long)out[0], (long long)w);
    return 0;
}

enum { CHECK_CHUNK = 4 << 20 };

/* Rank 0: the file against the expected image and (when there is one) the reference file. */
int coll_check_file(shared *s, const char *path, char *text, size_t cap)
{
    int fd = open(path, O_RDONLY), rfd = -1, rc = 0;
    unsigned char *got = malloc(CHECK_CHUNK), *exp = malloc(CHECK_CHUNK),
                  *ref = malloc(CHECK_CHUNK);
    struct stat st;
    int use_ref = s->have_ref && strcmp(path, s->ref_path) != 0;
    if (fd < 0 || !got || !exp || !ref || fstat(fd, &st) != 0) {
        snprintf(text, cap, "ERR(open)");
        rc = -1;
        goto out;
    }
    if ((int64_t)st.st_size != s->file_size) {
        snprintf(text, cap, "BAD len %lld", (long long)st.st_size);
        goto out;
    }
    if (use_ref && (rfd = open(s->ref_path, O_RDONLY)) < 0) {
        snprintf(text, cap, "ERR(ref)");
        rc = -1;
        goto out;
    }
    int ref_diff = 0;
    int64_t ref_at = -1;
    for (int64_t off = 0; off < s->file_size; off += CHECK_CHUNK) {
        int64_t len = s->file_size - off < CHECK_CHUNK ? s->file_size - off : CHECK_CHUNK;
        if (bench_read_full(fd, got, len, off) != 0) {
            snprintf(text, cap, "ERR(read)");
            rc = -1;
            goto out;
        }
        fill_content(exp, off, len);
        for (int64_t i = 0; i < len; i++)
            if (!bit_get(s->cov, off + i))
                exp[i] = HOLE_BYTE;
        if (memcmp(got, exp, (size_t)len) != 0) {
            int64_t i = 0;
            while (got[i] == exp[i])
                i++;
            snprintf(text, cap, "BAD@%lld", (long long)(off + i));
            goto out;
        }
        if (use_ref && !ref_diff) {
            if (bench_read_full(rfd, ref, len, off) != 0) {
                snprintf(text, cap, "ERR(ref)");
                rc = -1;
                goto out;
            }
            if (memcmp(got, ref, (size_t)len) != 0) {
                int64_t i = 0;
                while (got[i] == ref[i])
                    i++;
                ref_diff = 1;
                ref_at = off + i;
            }
        }
    }
    if (ref_diff)
        snprintf(text, cap, "REF-DIFF@%lld", (long long)ref_at);
    else
        snprintf(text, cap, "ok");
out:
    if (fd >= 0)
        close(fd);
    if (rfd >= 0)
        close(rfd);
    free(got);
    free(exp);
    free(ref);
    return rc;
}

/* Rank 0 creates the file filled with HOLE_BYTE to the file size; every rank learns the result. */
int coll_prefill(shared *s, const char *path)
{
    int ok = 1;
    if (s->env->rank == 0) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0) {
            coll_fail("create %s: %s", path, strerror(errno));
            ok = 0;
        } else {
            unsigned char *chunk = malloc(CHECK_CHUNK);
            if (!chunk)
                ok = 0;
            else
                memset(chunk, HOLE_BYTE, CHECK_CHUNK);
            for (int64_t off = 0; ok && off < s->file_size;) {
                int64_t n = s->file_size - off < CHECK_CHUNK ? s->file_size - off : CHECK_CHUNK;
                ssize_t k = pwrite(fd, chunk, (size_t)n, (off_t)off);
                if (k < 0 && errno == EINTR)
                    continue;
                if (k <= 0) {
                    coll_fail("write %s: %s", path, k < 0 ? strerror(errno) : "short write");
                    ok = 0;
                    break;
                }
                off += k;
            }
            free(chunk);
            if (close(fd) != 0)
                ok = 0;
        }
    }
    if (MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
        return coll_fail("MPI_Bcast failed");
    return ok ? 0 : -1;
}


int coll_prepare(shared *s, call_info *ci)
{
    const coll_pattern *p = s->p;
    /* analyze every call; check the memory fits the buffer */
    int ok = 1;
    int64_t fend = 0;
    for (int c = 0; ok && c < p->ncalls; c++) {
        const coll_call *k = &p->calls[c];
        if (k->view < 0 || k->view >= p->nviews || k->mem < 0 || k->mem >= p->nmems ||
            k->count < 0 || k->count > INT_MAX) {
            ok = 0;
            coll_fail("call %d: bad view, memory type or count", c);
            break;
        }
        ci[c] = (call_info){.first = INT64_MAX, .min_fr = INT64_MAX};
        if (walk_call(p, k, analyze_piece, &ci[c]) != 0) {
            ok = 0;
            break;
        }
        if (ci[c].n) {
            if (ci[c].cur_fr < ci[c].min_fr)
                ci[c].min_fr = ci[c].cur_fr;
            if (ci[c].cur_fr > ci[c].max_fr)
                ci[c].max_fr = ci[c].cur_fr;
            if (ci[c].end > fend)
                fend = ci[c].end;
        }
    }
    s->file_size = coll_over_ranks(ok ? fend : 0, MPI_MAX);
    if (!coll_agree(ok))
        return -1;
    /* buffers, the written data, the memory mask, and the file coverage (OR over ranks) */
    int64_t covb = (s->file_size + 7) / 8;
    s->wbuf = bench_alloc(p->buf_bytes, WRITE_HOLE);
    s->rbuf = bench_alloc(p->buf_bytes, READ_FILL);
    s->mmask = bench_alloc((p->buf_bytes + 7) / 8, 0);
    s->cov = bench_alloc(covb, 0);
    ok = s->wbuf && s->rbuf && s->mmask && s->cov;
    if (!ok)
        coll_fail("out of memory for %lld-byte buffers", (long long)p->buf_bytes);
    fill_ctx fc = {s->wbuf, s->mmask, s->cov, p->buf_bytes};
    for (int c = 0; ok && c < p->ncalls; c++)
        if (walk_call(p, &p->calls[c], fill_piece, &fc) != 0)
            ok = 0;
    if (!coll_agree(ok))
        return -1;
    for (int64_t off = 0; off < covb; off += INT64_C(1) << 28) {
        int n = (int)(covb - off < (INT64_C(1) << 28) ? covb - off : (INT64_C(1) << 28));
        int rc = s->env->rank == 0 ? MPI_Reduce(MPI_IN_PLACE, s->cov + off, n, MPI_UNSIGNED_CHAR,
                                                MPI_BOR, 0, MPI_COMM_WORLD)
                                   : MPI_Reduce(s->cov + off, NULL, n, MPI_UNSIGNED_CHAR,
                                                MPI_BOR, 0, MPI_COMM_WORLD);
        if (rc != MPI_SUCCESS) {
            ok = coll_mfail(rc, "MPI_Reduce (coverage)") == 0;
            break;
        }
    }
    return coll_agree(ok) ? 0 : -1;
}
