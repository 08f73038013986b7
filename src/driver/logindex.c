/*
 * logindex.c - the index of the `log` container (format and merged index: log.h): entries and
 * headers to and from their bytes on storage, and the merged index built from entries in any
 * order.
 *
 * Building: a batch of entries becomes a map of its own by a sweep over their boundaries with a
 * heap of the entries covering the current point (the newest one wins each piece); two maps
 * merge in one linear pass, piece by piece, the newer extent winning where both cover. A
 * set_size is an entry of zeros from the new size to the end of the offsets, so it cuts off
 * every older byte beyond it and nothing newer.
 */
#include "driver/log.h"

#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define LOG_MAGIC UINT32_C(0x474f4c54) /* "TLOG" */
#define FNV_SEED UINT32_C(2166136261)
/* The latest stamp an entry may carry (year 2262, less a margin): a process's clock is pushed
 * past the stamps it reads and then counts up by one, which must never overflow. */
#define STAMP_MAX (INT64_MAX - (INT64_C(1) << 40))
/* Entries collected before a batch is merged (or the map's size, when larger). */
#define BATCH_MIN 65536

static uint32_t fnv1a(const unsigned char *p, size_t n, uint32_t h)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * UINT32_C(16777619);
    return h;
}

static void put32(unsigned char *p, uint32_t v)
{
    v = htole32(v);
    memcpy(p, &v, 4);
}

static void put64(unsigned char *p, int64_t v)
{
    uint64_t u = htole64((uint64_t)v);
    memcpy(p, &u, 8);
}

static uint32_t get32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return le32toh(v);
}

static int64_t get64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return (int64_t)le64toh(v);
}

/* Checksum of an entry: every byte but the checksum's own (bytes 12..15). */
static uint32_t entry_check(const unsigned char *b)
{
    return fnv1a(b + 16, TESSI_LOG_ENTRY - 16, fnv1a(b, 12, FNV_SEED));
}

void tessi_log_entry_encode(const tessi_log_entry *e, unsigned char b[TESSI_LOG_ENTRY])
{
    memset(b, 0, TESSI_LOG_ENTRY);
    put32(b, LOG_MAGIC);
    b[4] = (unsigned char)e->kind;
    put32(b + 8, (uint32_t)e->writer);
    put64(b + 16, e->logical);
    put64(b + 24, e->physical);
    put64(b + 32, e->length);
    put64(b + 40, e->stamp);
    put32(b + 12, entry_check(b));
}

bool tessi_log_entry_decode(const unsigned char b[TESSI_LOG_ENTRY], int32_t writer,
                            tessi_log_entry *e)
{
    int64_t end;
    if (get32(b) != LOG_MAGIC || b[5] || b[6] || b[7] || get32(b + 12) != entry_check(b))
        return false;
    *e = (tessi_log_entry){.kind = b[4], .writer = (int32_t)get32(b + 8),
                           .logical = get64(b + 16), .physical = get64(b + 24),
                           .length = get64(b + 32), .stamp = get64(b + 40)};
    if (e->writer != writer || e->logical < 0 || e->physical < 0 || e->length < 0 ||
        e->stamp < 0 || e->stamp > STAMP_MAX)
        return false;
    if (e->kind == TESSI_LOG_DATA)
        return e->length > 0 && tessi_add(e->logical, e->length, &end) &&
               tessi_add(e->physical, e->length, &end);
    return (e->kind == TESSI_LOG_TRUNCATE || e->kind == TESSI_LOG_EXTEND) && e->length == 0 &&
           e->physical == 0;
}

void tessi_log_header_encode(const tessi_log_header *h, unsigned char b[TESSI_LOG_HEADER])
{
    memset(b, 0, TESSI_LOG_HEADER);
    memcpy(b, "TESSLOG1", 8);
    put32(b + 8, (uint32_t)h->writer);
    put32(b + 12, h->pid);
    put64(b + 16, h->tid);
    put64(b + 24, h->stamp);
    memcpy(b + 32, h->host, strnlen(h->host, TESSI_LOG_HOST));
    put32(b + 60, fnv1a(b, 60, FNV_SEED));
}

bool tessi_log_header_decode(const unsigned char b[TESSI_LOG_HEADER], int32_t writer,
                             tessi_log_header *h)
{
    if (memcmp(b, "TESSLOG1", 8) != 0 || get32(b + 60) != fnv1a(b, 60, FNV_SEED))
        return false;
    *h = (tessi_log_header){.writer = (int32_t)get32(b + 8), .pid = get32(b + 12),
                            .tid = get64(b + 16), .stamp = get64(b + 24)};
    memcpy(h->host, b + 32, TESSI_LOG_HOST);
    h->host[TESSI_LOG_HOST] = '\0';
    return h->writer == writer;
}

/* ------------------------------------------------------------------ the merged index */

/* Does the entry (stamp, writer) of a come after that of b? */
static bool newer(int64_t stamp_a, int32_t writer_a, int64_t stamp_b, int32_t writer_b)
{
    return stamp_a != stamp_b ? stamp_a > stamp_b : writer_a > writer_b;
}

static bool ext_newer(const tessi_log_extent *a, const tessi_log_extent *b)
{
    return newer(a->stamp, a->writer, b->stamp, b->writer);
}

/* Append the piece [from, to) of extent e to out[0..*n), joined to the last extent when it
 * continues the same entry. */
static void emit(tessi_log_extent *out, int64_t *n, const tessi_log_extent *e, int64_t from,
                 int64_t to)
{
    int64_t phys = e->zero ? 0 : e->phys + (from - e->start);
    if (*n > 0) {
        tessi_log_extent *last = &out[*n - 1];
        if (last->stamp == e->stamp && last->writer == e->writer && last->zero == e->zero &&
            tessi_log_end(last) == from && (e->zero || last->phys + last->len == phys)) {
            last->len += to - from;
            return;
        }
    }
    out[(*n)++] = (tessi_log_extent){.start = from, .len = to - from, .phys = phys,
                                     .stamp = e->stamp, .writer = e->writer, .zero = e->zero};
}

static int by_start(const void *a, const void *b)
{
    int64_t x = ((const tessi_log_extent *)a)->start, y = ((const tessi_log_extent *)b)->start;
    return (x > y) - (x < y);
}

/* The max-heap of the sweep: indexes into in[], the newest entry on top. */
typedef struct heap {
    int64_t *at, n;
    const tessi_log_extent *in;
} heap;

static bool heap_above(const heap *h, int64_t i, int64_t j)
{
    return ext_newer(&h->in[h->at[i]], &h->in[h->at[j]]);
}

static void heap_swap(heap *h, int64_t i, int64_t j)
{
    int64_t t = h->at[i];
    h->at[i] = h->at[j];
    h->at[j] = t;
}

static void heap_push(heap *h, int64_t v)
{
    int64_t i = h->n++;
    h->at[i] = v;
    while (i > 0 && heap_above(h, i, (i - 1) / 2)) {
        heap_swap(h, i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
}

static void heap_pop(heap *h)
{
    h->at[0] = h->at[--h->n];
    for (int64_t i = 0;;) {
        int64_t best = i, l = 2 * i + 1, r = l + 1;
        if (l < h->n && heap_above(h, l, best))
            best = l;
        if (r < h->n && heap_above(h, r, best))
            best = r;
        if (best == i)
            return;
        heap_swap(h, i, best);
        i = best;
    }
}

/* The map of n overlapping extents (sorted by start here): out gets at most 2n - 1 extents. */
static int sweep(tessi_log_extent *in, int64_t n, tessi_log_extent **out, int64_t *nout)
{
    heap h = {.at = malloc((size_t)n * sizeof *h.at), .in = in};
    *out = malloc((size_t)(2 * n) * sizeof **out);
    *nout = 0;
    if (!h.at || !*out) {
        free(h.at);
        free(*out);
        return -ENOMEM;
    }
    qsort(in, (size_t)n, sizeof *in, by_start);
    int64_t i = 0, x = 0;
    while (i < n || h.n > 0) {
        if (h.n == 0)
            x = in[i].start;
        while (i < n && in[i].start <= x)
            heap_push(&h, i++);
        while (h.n > 0 && tessi_log_end(&in[h.at[0]]) <= x) /* ended: dropped when on top */
            heap_pop(&h);
        if (h.n == 0)
            continue;
        const tessi_log_extent *top = &in[h.at[0]];
        int64_t y = tessi_log_end(top);
        if (i < n && in[i].start < y)
            y = in[i].start;
        emit(*out, nout, top, x, y);
        x = y;
    }
    free(h.at);
    return 0;
}

/* Merge maps a and b into out (room for 2 (na + nb) extents): the newer extent wins where
 * both cover. */
static void merge(const tessi_log_extent *a, int64_t na, const tessi_log_extent *b, int64_t nb,
                  tessi_log_extent *out, int64_t *n)
{
    int64_t i = 0, j = 0, x = INT64_MIN;
    *n = 0;
    while (i < na || j < nb) {
        if (i < na && tessi_log_end(&a[i]) <= x) {
            i++;
            continue;
        }
        if (j < nb && tessi_log_end(&b[j]) <= x) {
            j++;
            continue;
        }
        const tessi_log_extent *p = i < na ? &a[i] : NULL, *q = j < nb ? &b[j] : NULL;
        int64_t ps = p ? tessi_max64(p->start, x) : INT64_MAX;
        int64_t qs = q ? tessi_max64(q->start, x) : INT64_MAX;
        int64_t y;
        if (ps < qs) {
            y = tessi_min64(tessi_log_end(p), qs);
            emit(out, n, p, ps, y);
        } else if (qs < ps) {
            y = tessi_min64(tessi_log_end(q), ps);
            emit(out, n, q, qs, y);
        } else {
            y = tessi_min64(tessi_log_end(p), tessi_log_end(q));
            emit(out, n, ext_newer(q, p) ? q : p, ps, y);
        }
        x = y;
    }
}

/* Append e to a growing array (*a, *n, *cap). */
static int push(tessi_log_extent **a, int64_t *n, int64_t *cap, tessi_log_extent e)
{
    if (*n == *cap) {
        int64_t c = *cap ? 2 * *cap : 256;
        tessi_log_extent *p = realloc(*a, (size_t)c * sizeof *p);
        if (!p)
            return -ENOMEM;
        *a = p;
        *cap = c;
    }
    (*a)[(*n)++] = e;
    return 0;
}

int tessi_log_map_add(tessi_log_map *m, const tessi_log_entry *e)
{
    tessi_log_extent x = {.start = e->logical, .len = e->length, .phys = e->physical,
                          .stamp = e->stamp, .writer = e->writer};
    int rc = 0;
    if (e->kind == TESSI_LOG_EXTEND) {
        if (!m->cut || newer(e->stamp, e->writer, m->cut_stamp, m->cut_writer))
            rc = push(&m->grow, &m->ngrow, &m->capgrow, x);
    } else if (e->kind == TESSI_LOG_TRUNCATE) {
        x.zero = 1;
        x.len = INT64_MAX - x.start;
        if (x.len > 0)
            rc = push(&m->batch, &m->nbatch, &m->capbatch, x);
        if (rc == 0 && (!m->cut || newer(e->stamp, e->writer, m->cut_stamp, m->cut_writer))) {
            m->cut = true;
            m->cut_stamp = e->stamp;
            m->cut_writer = e->writer;
            m->cut_size = e->logical;
        }
    } else {
        rc = push(&m->batch, &m->nbatch, &m->capbatch, x);
    }
    if (rc)
        return rc;
    m->entries[e->kind]++;
    if (m->nbatch >= tessi_max64(BATCH_MIN, m->n))
        (void)tessi_log_map_flush(m); /* a failed merge keeps the batch: the next flush says */
    return 0;
}

/* The size: the latest set_size, grown by every later preallocation and write. Extents older
 * than the latest set_size end at or below its size (its zeros cut them), so only the last
 * extent holding data can end beyond. */
static void compute_size(tessi_log_map *m)
{
    int64_t size = m->cut ? m->cut_size : 0, keep = 0;
    for (int64_t i = 0; i < m->ngrow; i++)
        if (!m->cut || newer(m->grow[i].stamp, m->grow[i].writer, m->cut_stamp, m->cut_writer)) {
            size = tessi_max64(size, m->grow[i].start);
            m->grow[keep++] = m->grow[i];
        }
    m->ngrow = keep;
    for (int64_t i = m->n - 1; i >= 0; i--)
        if (!m->ext[i].zero) {
            size = tessi_max64(size, tessi_log_end(&m->ext[i]));
            break;
        }
    m->size = size;
}

int tessi_log_map_flush(tessi_log_map *m)
{
    if (m->nbatch > 0) {
        tessi_log_extent *b, *out;
        int64_t nb, n;
        int rc = sweep(m->batch, m->nbatch, &b, &nb);
        if (rc)
            return rc;
        if (m->n == 0) {
            out = b;
            n = nb;
        } else {
            if (!(out = malloc((size_t)(2 * (m->n + nb)) * sizeof *out))) {
                free(b);
                return -ENOMEM;
            }
            merge(m->ext, m->n, b, nb, out, &n);
            free(b);
        }
        tessi_log_extent *fit = realloc(out, (size_t)tessi_max64(n, 1) * sizeof *out);
        free(m->ext);
        m->ext = fit ? fit : out;
        m->n = n;
        m->nbatch = 0;
    }
    compute_size(m);
    return 0;
}

int64_t tessi_log_map_find(const tessi_log_map *m, int64_t off)
{
    int64_t lo = 0, hi = m->n;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (tessi_log_end(&m->ext[mid]) <= off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

void tessi_log_map_free(tessi_log_map *m)
{
    free(m->ext);
    free(m->batch);
    free(m->grow);
    *m = (tessi_log_map){0};
}
