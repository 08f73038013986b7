/*
 * pack.c - tess_pack and tess_unpack: the type's plan (plan.h) when it has one, the cursor's
 * runs otherwise.
 *
 * With a plan, a byte range of the stream is a partial pattern instance, whole instances, and a
 * partial instance: the whole ones go through row kernels (a row = the instances of the
 * innermost level), the partial ones through the same per-move copies from the move the range
 * starts in. Copies of a length known for a whole row (a vector's blocks, a nested vector's
 * equal moves, a blockindexed leaf) run in loops specialized for that size; mixed lengths (a
 * struct's members, indexed blocks) use copy_small, a few branch-predicted fixed-size moves. A
 * stream that is one contiguous region is a single memcpy.
 */
#include "type/plan.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

typedef tessi_i128 i128; /* base.h; a short name for this file */

#define INLINE static inline __attribute__((always_inline))

/* Bytes [0, n) from s to d as two moves of sizeof(T), the second ending at n (they overlap
 * when n < 2 * sizeof(T)); both are loaded before either is stored. */
#define COPY_PAIR(T)                                                                           \
    do {                                                                                       \
        T a_, b_;                                                                              \
        memcpy(&a_, s, sizeof a_);                                                             \
        memcpy(&b_, s + n - sizeof b_, sizeof b_);                                             \
        memcpy(d, &a_, sizeof a_);                                                             \
        memcpy(d + n - sizeof b_, &b_, sizeof b_);                                             \
    } while (0)

typedef struct {
    char b[16];
} chunk16;

/* Exactly n > 0 bytes from s to d: two overlapping fixed-size moves up to 32 bytes. */
INLINE void copy_small(char *d, const char *s, int64_t n)
{
    if (n >= 8 && n <= 16)
        COPY_PAIR(uint64_t);
    else if (n >= 4 && n < 8)
        COPY_PAIR(uint32_t);
    else if (n >= 2 && n < 4)
        COPY_PAIR(uint16_t);
    else if (n == 1)
        *d = *s;
    else if (n > 16 && n <= 32)
        COPY_PAIR(chunk16);
    else
        memcpy(d, s, (size_t)n);
}

/* Move n bytes between the typed address t and the packed address p in the given direction. */
#define MOVE(to_packed, t, p, n) ((to_packed) ? copy_small((p), (t), (n)) : copy_small((t), (p), (n)))
#define MOVE_FIXED(to_packed, t, p, SZ)                                                        \
    ((to_packed) ? (void)memcpy((p), (t), SZ) : (void)memcpy((t), (p), SZ))

/* The sizes with their own loops (element and small-block sizes). */
#define FIXED_SIZES(X) X(1) X(2) X(4) X(8) X(12) X(16) X(24) X(32) X(64)

/*
 * The loops below index from the row's first instance rather than stepping a pointer past the
 * last one (a stride may be far larger than the buffer), in wrapping arithmetic like the
 * cursor's: offsets of resized types' instances may lie outside int64 while every data byte's
 * offset, the only one turned into an address, is exact.
 */
INLINE char *addr(char *t, int64_t j, int64_t stride, int64_t off)
{
    return t + (int64_t)((uint64_t)j * (uint64_t)stride + (uint64_t)off);
}

/*
 * Bytes of typed buffer a row of mixed moves handles at a time, so that they stay in L1 from
 * one move's pass to the next: less for an unpack into a destination that fits the caches,
 * whose passes write partial cache lines (on the development machine, a Zen 1, 4 KiB packs and
 * 1 KiB such unpacks fastest). big: an unpack into a destination larger than the caches
 * (streams()), where each line's first write misses: there a page at a time unpacked a
 * struct 1.13x faster than 1 KiB (1.0x -> 1.1x the hand loop at 16 MiB), while 1 KiB stayed
 * 1.06x faster at 1 MiB.
 */
#define COLUMN_BYTES(to_packed, big) ((to_packed) || (big) ? 4 << 10 : 1 << 10)

/*
 * k copies of len bytes (h * 16 < len <= h * 16 + 16, h a constant once inlined), from t,
 * tstride apart, to p, pstride apart (or back): h fixed 16-byte moves, then the tail, chosen
 * once for the loop: after a head (h > 0), one move of the narrowest width (4, 8 or 16) that
 * covers it, ending at len and so overlapping the head; without one, two overlapping moves of
 * the one width that fits it. (Two overlapping 16-byte moves for the whole of a 17..31-byte
 * copy, one instruction fewer, ran a struct's column at three quarters of this speed on the
 * development machine; the single tail move instead of a pair unpacked the benchmark's struct
 * 1.03x faster, T/hand 0.925x -> 0.95x, in ABBA runs.)
 */
INLINE void head_tail(bool to_packed, char *t, int64_t tstride, char *p, int64_t pstride,
                      int64_t k, int64_t len, const int h)
{
#define TAILS(T, PAIR)                                                                         \
    do {                                                                                       \
        for (int64_t j = 0; j < k; j++) {                                                      \
            char *tj_ = addr(t, j, tstride, 0), *pj_ = p + j * pstride;                        \
            char *d = to_packed ? pj_ : tj_;                                                   \
            const char *s = to_packed ? tj_ : pj_;                                             \
            int64_t n = len;                                                                   \
            if (PAIR) {                                                                        \
                if (sizeof(T) == 1)                                                            \
                    *d = *s;                                                                   \
                else                                                                           \
                    COPY_PAIR(T);                                                              \
                continue;                                                                      \
            }                                                                                  \
            for (int i = 0; i < h; i++)                                                        \
                memcpy(d + 16 * i, s + 16 * i, 16);                                            \
            T v_;                                                                              \
            memcpy(&v_, s + n - sizeof v_, sizeof v_);                                         \
            memcpy(d + n - sizeof v_, &v_, sizeof v_);                                         \
        }                                                                                      \
        return;                                                                                \
    } while (0)
    int64_t tail = len - 16 * h;
    if (h > 0) {
        if (tail <= 4)
            TAILS(uint32_t, false);
        if (tail <= 8)
            TAILS(uint64_t, false);
        TAILS(chunk16, false);
    }
    if (len == 1)
        TAILS(char, true);
    if (len < 4)
        TAILS(uint16_t, true);
    if (len < 8)
        TAILS(uint32_t, true);
    TAILS(uint64_t, true);
#undef TAILS
}

/*
 * k copies of len bytes: from t, tstride apart, to p, pstride apart (or back). With
 * pstride == len it is a run (a strided row packed back to back); with pstride the bytes of an
 * instance it is one move of a row of instances (a column).
 */
INLINE void column(bool to_packed, char *t, int64_t tstride, char *p, int64_t pstride, int64_t k,
                   int64_t len)
{
    switch (len) {
#define CASE(SZ)                                                                               \
    case SZ:                                                                                   \
        _Pragma("GCC unroll 4") for (int64_t j = 0; j < k; j++)                                \
            MOVE_FIXED(to_packed, addr(t, j, tstride, 0), p + j * pstride, SZ);                \
        return;
        FIXED_SIZES(CASE)
#undef CASE
    default:
        break;
    }
    /* other sizes up to 64 bytes: fixed moves chosen once for the loop */
    switch (len <= 64 ? (len - 1) / 16 : -1) {
    case 0: head_tail(to_packed, t, tstride, p, pstride, k, len, 0); return;
    case 1: head_tail(to_packed, t, tstride, p, pstride, k, len, 1); return;
    case 2: head_tail(to_packed, t, tstride, p, pstride, k, len, 2); return;
    case 3: head_tail(to_packed, t, tstride, p, pstride, k, len, 3); return;
    default: break;
    }
    for (int64_t j = 0; j < k; j++)
        MOVE(to_packed, addr(t, j, tstride, 0), p + j * pstride, len);
}

/* k instances, stride apart from t, of nm moves (offsets from the instance), packed at p. */
INLINE void moves_row(bool to_packed, char *t, int64_t stride, int64_t k, const tessi_move *mv,
                      int64_t nm, int64_t len, char *p, const bool big)
{
    /* equal lengths: a row of instances, in the order of a hand-written loop. (Columns, as
     * below, unpack a little faster in L1 but stride through memory out of order, which the
     * hardware prefetchers follow worse: out of cache, where large unpacks run, they were
     * slower than this row.) */
    switch (len) {
#define CASE(SZ)                                                                               \
    case SZ:                                                                                   \
        for (int64_t j = 0; j < k; j++)                                                        \
            for (int64_t m = 0; m < nm; m++, p += SZ)                                          \
                MOVE_FIXED(to_packed, addr(t, j, stride, mv[m].off), p, SZ);                     \
        return;
        FIXED_SIZES(CASE)
#undef CASE
    default:
        break;
    }
    /* mixed lengths (a struct's members): the row in chunks small enough for L1, each chunk
     * move by move, so that every copy loop has one size: the size tests leave the loops.
     * Chunks end where the typed address crosses a multiple of their size, so that no chunk
     * straddles a page: passes that each crossed a page ran a struct's pack at 0.8-0.9x the
     * speed of this on the development machine. */
    const int64_t cb = COLUMN_BYTES(to_packed, big);
    int64_t bytes = 0, chunk = cb / (stride > 0 ? stride : -stride + 1);
    chunk = chunk < 16 ? 16 : chunk;
    for (int64_t m = 0; m < nm; m++)
        bytes += mv[m].len;
    for (int64_t j0 = 0, kk; j0 < k; j0 += kk) {
        kk = chunk;
        if (stride > 0 && stride <= cb / 16) {
            uintptr_t a = (uintptr_t)addr(t, j0, stride, mv[0].off);
            kk = (int64_t)(((a | (uintptr_t)(cb - 1)) + 1 - a + (uintptr_t)stride - 1) /
                           (uintptr_t)stride);
        }
        kk = k - j0 < kk ? k - j0 : kk;
        int64_t at = 0;
        char *tj = addr(t, j0, stride, 0), *pj = p + j0 * bytes;
        for (int64_t m = 0; m < nm; m++) {
            column(to_packed, tj + mv[m].off, stride, pj + at, bytes, kk, mv[m].len);
            at += mv[m].len;
        }
    }
    return;
}

/*
 * Exactly n >= 16 bytes from s to d as 16-byte moves, the last one ending at n (overlapping the
 * one before unless n is a multiple of 16): one store per 16 bytes. (A fixed number of moves
 * at min(16 i, n - 16), as many as the longest block needs, has no branch on n but stores the
 * last 16 bytes again up to 7 times: on the development machine's successor, a Zen 3, the
 * benchmark's random blocks of 8..128 bytes then unpacked at 0.93x the hand loop's speed
 * rather than 1.01x, packed at 0.97x rather than 1.00x, in ABBA runs.)
 */
INLINE void copy_by16(char *d, const char *s, int64_t n)
{
    for (int64_t o = 0; o < n - 16; o += 16)
        memcpy(d + o, s + o, 16);
    memcpy(d + n - 16, s + n - 16, 16);
}

/* Blocks [b, e) of an indexed leaf whose blocks are at most 128 bytes long, the instance origin
 * at t, packed at p. */
INLINE void blocks_short(bool to_packed, const tess_type *leaf, char *t, int64_t b, int64_t e,
                         char *p)
{
    const int64_t *displs = leaf->displs, *prefix = leaf->prefix;
    for (int64_t k = b; k < e; k++) {
        int64_t len = prefix[k + 1] - prefix[k];
        char *at = addr(t, 1, displs[k], 0);
        if (len >= 16)
            copy_by16(to_packed ? p : at, to_packed ? at : p, len);
        else
            MOVE(to_packed, at, p, len);
        p += len;
    }
}

/* Blocks [b, e) of the leaf (predefined elements) of a BLOCKS plan, the instance origin at t,
 * packed at p. */
INLINE void blocks_span(bool to_packed, const tessi_plan *pl, char *t, int64_t b, int64_t e,
                        char *p)
{
    const tess_type *leaf = pl->leaf;
    const int64_t *displs = leaf->displs;
    if (leaf->kind == TESSI_BLOCKINDEXED) {
        int64_t len = pl->len;
        switch (len) {
#define CASE(SZ)                                                                               \
    case SZ:                                                                                   \
        for (int64_t k = b; k < e; k++, p += SZ)                                               \
            MOVE_FIXED(to_packed, addr(t, 1, displs[k], 0), p, SZ);                             \
        return;
            FIXED_SIZES(CASE)
#undef CASE
        default:
            for (int64_t k = b; k < e; k++, p += len)
                MOVE(to_packed, addr(t, 1, displs[k], 0), p, len);
        }
        return;
    }
    /* indexed blocks up to 128 bytes: inline 16-byte moves; longer ones: memcpy */
    if (pl->len <= 128) {
        blocks_short(to_packed, leaf, t, b, e, p);
        return;
    }
    const int64_t *prefix = leaf->prefix;
    for (int64_t k = b; k < e; k++) {
        int64_t len = prefix[k + 1] - prefix[k];
        MOVE(to_packed, addr(t, 1, displs[k], 0), p, len);
        p += len;
    }
}

static void stream_stores(char *d, const char *s, int64_t n);

/*
 * Unpacking a RUNS plan (a vector's blocks, a subarray's rows) whose regions are at least this
 * long into a destination of streams() size stores the regions around the caches too: a region
 * is then whole cache lines but for its ends, and the destination is not read in first.
 */
#define STREAM_RUN_MIN 256

/* Whole pattern instances: k of them, stride apart, the first at t (shift included). big: an
 * unpack into a destination of streams() size (plan_unpack). */
INLINE void plan_row(bool to_packed, const tessi_plan *pl, char *t, int64_t stride, int64_t k,
                     char *p, const bool big)
{
    switch (pl->kind) {
    case TESSI_PLAN_RUNS:
        if (big && pl->len >= STREAM_RUN_MIN)
            for (int64_t j = 0; j < k; j++)
                stream_stores(addr(t, j, stride, 0), p + j * pl->len, pl->len);
        else
            column(to_packed, t, stride, p, pl->len, k, pl->len);
        break;
    case TESSI_PLAN_MOVES:
        moves_row(to_packed, t, stride, k, tessi_plan_moves(pl), pl->nmoves, pl->len, p, big);
        break;
    default:
        for (int64_t j = 0; j < k; j++)
            blocks_span(to_packed, pl, addr(t, j, stride, 0), 0, pl->leaf->count,
                        p + j * pl->bytes);
        break;
    }
}

/* Bytes [r, r + n) of the pattern instance at t, packed at p (0 <= r, r + n <= bytes). */
INLINE void plan_part(bool to_packed, const tessi_plan *pl, char *t, int64_t r, int64_t n,
                      char *p)
{
    if (pl->kind == TESSI_PLAN_RUNS) {
        MOVE(to_packed, addr(t, 1, r, 0), p, n);
        return;
    }
    const tess_type *leaf = pl->kind == TESSI_PLAN_BLOCKS ? pl->leaf : NULL;
    const tessi_move *mv = tessi_plan_moves(pl);
    int64_t b = 0, e, at; /* move b starts at stream byte `at` of the instance */
    if (!leaf) {
        for (at = 0; at + mv[b].len <= r; b++)
            at += mv[b].len;
    } else if (leaf->kind == TESSI_BLOCKINDEXED) {
        b = r / pl->len;
        at = b * pl->len;
    } else { /* last block whose prefix <= r */
        int64_t hi = leaf->count - 1;
        while (b < hi) {
            int64_t mid = b + (hi - b + 1) / 2;
            if (leaf->prefix[mid] <= r)
                b = mid;
            else
                hi = mid - 1;
        }
        at = leaf->prefix[b];
    }
    while (n > 0) {
        int64_t off, len;
        if (!leaf) {
            off = mv[b].off;
            len = mv[b].len;
        } else {
            off = leaf->displs[b];
            len = tessi_block_len(leaf, b) * leaf->child->size;
        }
        int64_t skip = r > at ? r - at : 0, take = len - skip < n ? len - skip : n;
        if (skip == 0 && take == len && pl->kind == TESSI_PLAN_BLOCKS) {
            /* whole blocks up to the one the range ends in: the row loop */
            e = b + 1;
            int64_t whole = len;
            while (e < leaf->count && whole + tessi_block_len(leaf, e) * leaf->child->size <= n)
                whole += tessi_block_len(leaf, e++) * leaf->child->size;
            blocks_span(to_packed, pl, t, b, e, p);
            take = whole;
            b = e - 1;
        } else {
            MOVE(to_packed, addr(t, 1, off, skip), p, take);
        }
        p += take;
        n -= take;
        at += skip + take;
        b++;
    }
}

/*
 * Move `want` stream bytes from data byte `off` of count instances of t with its plan.
 * The instances add the outermost level (count, extent), fused with the plan's outermost level
 * when they continue it.
 */
INLINE void plan_transfer(bool to_packed, char *typed, int64_t count, const tess_type *t,
                          int64_t off, char *packed, int64_t want, const bool big)
{
    const tessi_plan *pl = t->plan;
    tessi_level lv[TESSI_PLAN_MAX_LEVELS + 2];
    int64_t idx[TESSI_PLAN_MAX_LEVELS + 2];
    int nl = pl->nlevels;
    memcpy(lv, pl->levels, sizeof(tessi_level) * (size_t)nl);
    if (count > 1) {
        if (nl && (i128)lv[nl - 1].n * lv[nl - 1].stride == t->extent)
            lv[nl - 1].n *= count; /* <= the stream's instances of the pattern */
        else
            lv[nl++] = (tessi_level){count, t->extent};
    }
    if (nl == 0)
        lv[nl++] = (tessi_level){1, 0};
    int64_t q = off / pl->bytes, r = off % pl->bytes, done = 0;
    uint64_t base = (uint64_t)pl->shift; /* wraps like the cursor: exact at data bytes */
    for (int l = 0; l < nl; l++) {
        idx[l] = q % lv[l].n;
        q /= lv[l].n;
        base += (uint64_t)idx[l] * (uint64_t)lv[l].stride;
    }
    int64_t k = 0; /* instances to step over before the next copy */
    for (;;) {
        idx[0] += k;
        base += (uint64_t)k * (uint64_t)lv[0].stride;
        for (int l = 0; l + 1 < nl && idx[l] == lv[l].n; l++) {
            base -= (uint64_t)lv[l].n * (uint64_t)lv[l].stride;
            idx[l] = 0;
            idx[l + 1]++;
            base += (uint64_t)lv[l + 1].stride;
        }
        char *at = typed + (int64_t)base;
        if (r > 0 || want - done < pl->bytes) {
            int64_t n = pl->bytes - r < want - done ? pl->bytes - r : want - done;
            plan_part(to_packed, pl, at, r, n, packed + done);
            done += n;
            r = 0;
            k = 1;
        } else {
            k = lv[0].n - idx[0];
            if (k > (want - done) / pl->bytes)
                k = (want - done) / pl->bytes;
            plan_row(to_packed, pl, at, lv[0].stride, k, packed + done, big);
            done += k * pl->bytes;
        }
        if (done == want)
            return;
    }
}

/* Runs fetched from the cursor per batch (types without a plan). */
#define PACK_BATCH 64

/* The cursor path: runs from the cursor, each a strided row of equal regions. */
static int cursor_transfer(char *typed, int64_t count, const tess_type *t, int64_t off,
                           char *packed, int64_t want, bool to_packed)
{
    tess_cursor c;
    tessi_run runs[PACK_BATCH];
    int rc = tessi_cursor_init(&c, t, count);
    if (!rc)
        rc = tess_cursor_seek(&c, off);
    if (rc)
        return rc;
    int64_t done = 0, n;
    do {
        tessi_cursor_runs(&c, runs, PACK_BATCH, want - done, &n);
        for (int64_t k = 0; k < n; k++) {
            const tessi_run *r = &runs[k];
            if (to_packed)
                column(true, typed + r->off, r->stride, packed + done, r->len, r->n, r->len);
            else
                column(false, typed + r->off, r->stride, packed + done, r->len, r->n, r->len);
            done += r->len * r->n;
        }
    } while (n > 0 && done < want);
    return 0;
}

/*
 * Streaming stores. A copy that writes a destination larger than the last-level cache in order
 * evicts itself anyway; storing around the caches skips reading the destination in first (the
 * read for ownership), and made a 16 MiB copy 1.4x faster than memcpy on the development
 * machine. (glibc streams only above 3/4 of the cache size the CPU reports: 64 MiB there, a VM
 * whose L3, as the kernel lists it, is 8 MiB.) The threshold is the largest cache the kernel
 * lists for CPU 0, else the L3 size sysconf reports, read once; 0 means not read yet.
 */
static _Atomic int64_t stream_min;

void tessi_pack_stream_at(int64_t bytes) { stream_min = bytes; }

#ifdef __SSE2__
static int64_t cache_bytes(void)
{
    int64_t best = 0;
    for (int i = 0; i < 8; i++) {
        char path[80];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        FILE *f = fopen(path, "re");
        if (!f)
            break;
        long long v = 0;
        char unit = 0;
        if (fscanf(f, "%lld%c", &v, &unit) >= 1) {
            v *= unit == 'K' ? 1 << 10 : unit == 'M' ? 1 << 20 : 1;
            best = v > best ? v : best;
        }
        fclose(f);
    }
    if (best == 0)
        best = sysconf(_SC_LEVEL3_CACHE_SIZE);
    return best > 0 ? best : INT64_MAX;
}
#endif

/* Whether a dense destination of n bytes is written with streaming stores. */
static bool streams(int64_t n)
{
#ifdef __SSE2__
    int64_t min = stream_min;
    if (min == 0)
        stream_min = min = cache_bytes();
    return n >= min;
#else
    (void)n;
    return false;
#endif
}

/* memcpy(d, s, n) with streaming stores to d, not yet ordered: stream_fence() orders them. */
static void stream_stores(char *d, const char *s, int64_t n)
{
#ifdef __SSE2__
    int64_t head = (int64_t)(-(uintptr_t)d & 15);
    head = head < n ? head : n;
    memcpy(d, s, (size_t)head);
    d += head, s += head, n -= head;
    int64_t body = n & ~(int64_t)63;
    for (int64_t i = 0; i < body; i += 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)(s + i)),
                b = _mm_loadu_si128((const __m128i *)(s + i + 16)),
                c = _mm_loadu_si128((const __m128i *)(s + i + 32)),
                e = _mm_loadu_si128((const __m128i *)(s + i + 48));
        _mm_stream_si128((__m128i *)(d + i), a);
        _mm_stream_si128((__m128i *)(d + i + 16), b);
        _mm_stream_si128((__m128i *)(d + i + 32), c);
        _mm_stream_si128((__m128i *)(d + i + 48), e);
    }
    d += body, s += body, n -= body;
#endif
    memcpy(d, s, (size_t)n);
}

/* Streaming stores are weakly ordered: complete them before returning to the caller. */
static void stream_fence(void)
{
#ifdef __SSE2__
    _mm_sfence();
#endif
}

/* memcpy(d, s, n) with streaming stores to d (see streams()). */
static void stream_copy(char *d, const char *s, int64_t n)
{
    stream_stores(d, s, n);
    stream_fence();
}

static void plan_pack(char *typed, int64_t count, const tess_type *t, int64_t off, char *packed,
                      int64_t want)
{
    plan_transfer(true, typed, count, t, off, packed, want, false);
}

/* Unpacking into a destination of streams() size: long runs stream (STREAM_RUN_MIN), a struct's
 * moves take larger chunks (COLUMN_BYTES). */
static void plan_unpack(char *typed, int64_t count, const tess_type *t, int64_t off,
                        char *packed, int64_t want)
{
    if (streams(want)) {
        plan_transfer(false, typed, count, t, off, packed, want, true);
        stream_fence();
    } else {
        plan_transfer(false, typed, count, t, off, packed, want, false);
    }
}

/* Move up to max_bytes stream bytes from data_offset between `typed` and `packed`. */
static int transfer(const char *who, char *typed, int64_t count, const tess_type *t,
                    int64_t data_offset, char *packed, int64_t max_bytes, int64_t *moved,
                    bool to_packed)
{
    if (!t || !moved)
        return tessi_error(TESS_ERR_ARG, "%s: NULL type or byte count", who);
    if (count < 0 || max_bytes < 0 || data_offset < 0)
        return tessi_error(TESS_ERR_ARG, "%s: negative count, byte count or offset", who);
    i128 total = (i128)count * t->size;
    if (total > INT64_MAX)
        return tessi_error(TESS_ERR_OVERFLOW, "%s: %lld instances overflow", who, (long long)count);
    if (data_offset > total)
        return tessi_error(TESS_ERR_ARG, "%s: offset %lld past the stream's %lld bytes", who,
                           (long long)data_offset, (long long)total);
    int64_t want = (int64_t)total - data_offset < max_bytes ? (int64_t)total - data_offset : max_bytes;
    if (want > 0 && (!typed || !packed))
        return tessi_error(TESS_ERR_ARG, "%s: NULL buffer", who);
    *moved = 0;
    if (want == 0)
        return 0;
    if (t->dense || (count == 1 && t->num_regions == 1)) {
        char *at = typed + t->first_off + data_offset;
        if (streams(want))
            stream_copy(to_packed ? packed : at, to_packed ? at : packed, want);
        else
            memcpy(to_packed ? packed : at, to_packed ? at : packed, (size_t)want);
    } else if (t->plan && to_packed) {
        plan_pack(typed, count, t, data_offset, packed, want);
    } else if (t->plan) {
        plan_unpack(typed, count, t, data_offset, packed, want);
    } else {
        int rc = cursor_transfer(typed, count, t, data_offset, packed, want, to_packed);
        if (rc)
            return rc;
    }
    *moved = want;
    return 0;
}

int tess_pack(const void *in, int64_t count, const tess_type *t, int64_t data_offset, void *out,
              int64_t max_bytes, int64_t *packed)
{
    return transfer("tess_pack", (char *)in, count, t, data_offset, out, max_bytes, packed, true);
}

int tess_unpack(const void *in, int64_t bytes, void *out, int64_t count, const tess_type *t,
                int64_t data_offset, int64_t *unpacked)
{
    return transfer("tess_unpack", out, count, t, data_offset, (char *)in, bytes, unpacked, false);
}
