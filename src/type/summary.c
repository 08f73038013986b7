/*
 * summary.c - walks that summarize a type without following its data: tess_type_footprint and
 * tess_type_describe, and the node map they (and the codec and the normalizer) use to reach
 * each distinct node once.
 *
 * A type is a DAG: a child may be shared by many blocks and many parents (a darray's dimensions
 * share their element; a decoded type shares every subtree its encoding refers back to). A
 * naive tree walk then costs the size of the unfolded tree, exponential in the depth for
 * hostile types; these walks cost time linear in the number of distinct nodes.
 */
#include "type/type.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/* ------------------------------------------------------------- node map */

static size_t slot(const tessi_nodemap *m, const void *key)
{
    size_t h = (size_t)(((uintptr_t)key >> 4) * UINT64_C(0x9E3779B97F4A7C15));
    size_t i = h & (m->cap - 1);
    while (m->keys[i] && m->keys[i] != key)
        i = (i + 1) & (m->cap - 1);
    return i;
}

int64_t tessi_nodemap_get(const tessi_nodemap *m, const void *key)
{
    if (!m->cap)
        return -1;
    size_t i = slot(m, key);
    return m->keys[i] ? m->vals[i] : -1;
}

int tessi_nodemap_put(tessi_nodemap *m, const void *key, int64_t val)
{
    if (2 * (m->used + 1) > m->cap) {
        tessi_nodemap bigger = {.cap = m->cap ? 2 * m->cap : 64};
        bigger.keys = calloc(bigger.cap, sizeof *bigger.keys);
        bigger.vals = calloc(bigger.cap, sizeof *bigger.vals);
        if (!bigger.keys || !bigger.vals) {
            free(bigger.keys);
            free(bigger.vals);
            return tessi_error(TESS_ERR_NOMEM, "datatype walk: out of memory");
        }
        for (size_t i = 0; i < m->cap; i++) {
            if (m->keys[i]) {
                size_t j = slot(&bigger, m->keys[i]);
                bigger.keys[j] = m->keys[i];
                bigger.vals[j] = m->vals[i];
            }
        }
        bigger.used = m->used;
        tessi_nodemap_free(m);
        *m = bigger;
    }
    size_t i = slot(m, key);
    if (!m->keys[i]) {
        m->keys[i] = key;
        m->used++;
    }
    m->vals[i] = val;
    return 0;
}

void tessi_nodemap_free(tessi_nodemap *m)
{
    free(m->keys);
    free(m->vals);
    *m = (tessi_nodemap){0};
}

/* ------------------------------------------------------------ footprint */

/* Add the bytes of t and of its distinct descendants not seen yet. */
static int footprint_add(const tess_type *t, tessi_nodemap *seen, int64_t *sum)
{
    if (t->predefined || tessi_nodemap_get(seen, t) >= 0)
        return 0;
    int rc = tessi_nodemap_put(seen, t, 0);
    if (rc)
        return rc;
    *sum += tessi_node_bytes(t);
    int64_t nb = t->kind == TESSI_STRUCT ? t->count : 1;
    for (int64_t b = 0; b < nb; b++) {
        rc = footprint_add(tessi_block_child(t, b), seen, sum);
        if (rc)
            return rc;
    }
    return 0;
}

int64_t tess_type_footprint(const tess_type *t)
{
    if (!t || t->predefined)
        return 0;
    tessi_nodemap seen = {0};
    int64_t sum = 0;
    int rc = footprint_add(t, &seen, &sum);
    tessi_nodemap_free(&seen);
    return rc ? rc : sum;
}

/* ------------------------------------------------------------- describe */

/* Print at most this many array entries and struct members per node. */
#define DESCRIBE_MAX_ENTRIES 8

/*
 * The text: bytes go to buf while they fit (then it stops writing and notes the truncation);
 * len counts every byte, so one pass also measures what a full text needs.
 */
typedef struct {
    char *buf;
    size_t cap, len;
    bool truncated;
    tessi_nodemap uses;  /* composite node -> occurrences in the printed tree */
    tessi_nodemap label; /* shared node printed already -> its label */
    int64_t labels;
} text;

static void put(text *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(text *x, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t room = x->len < x->cap ? x->cap - x->len : 0;
    int n = vsnprintf(room ? x->buf + x->len : NULL, room, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= room)
        x->truncated = true;
    x->len += n > 0 ? (size_t)n : 0;
}

/* Members of t that describe prints (struct members beyond the limit are elided). */
static int64_t printed_children(const tess_type *t)
{
    if (t->kind != TESSI_STRUCT)
        return 1;
    return t->count < DESCRIBE_MAX_ENTRIES ? t->count : DESCRIBE_MAX_ENTRIES;
}

/* Count the occurrences of each composite node in the printed tree; a node's subtree is
 * entered the first time only, since later occurrences print as a reference. */
static int count_uses(text *x, const tess_type *t)
{
    if (t->kind == TESSI_BUILTIN)
        return 0;
    int64_t n = tessi_nodemap_get(&x->uses, t);
    int rc = tessi_nodemap_put(&x->uses, t, n < 0 ? 1 : n + 1);
    if (rc || n >= 0)
        return rc;
    for (int64_t b = 0; b < printed_children(t); b++)
        if ((rc = count_uses(x, tessi_block_child(t, b))))
            return rc;
    return 0;
}

static int describe_node(text *x, const tess_type *t, int indent)
{
    static const char *kinds[] = {"builtin", "contig", "vector", "blockindexed", "indexed", "struct"};
    put(x, "%*s", indent * 2, "");
    if (t->kind == TESSI_BUILTIN) {
        put(x, "%s\n", t->name);
        return 0;
    }
    int64_t label = tessi_nodemap_get(&x->label, t);
    if (label >= 0) {
        put(x, "#%lld (shown above)\n", (long long)label);
        return 0;
    }
    if (tessi_nodemap_get(&x->uses, t) > 1) {
        label = ++x->labels;
        int rc = tessi_nodemap_put(&x->label, t, label);
        if (rc)
            return rc;
        put(x, "#%lld: ", (long long)label);
    }
    put(x, "%s(count=%lld", kinds[t->kind], (long long)t->count);
    if (t->kind == TESSI_VECTOR || t->kind == TESSI_BLOCKINDEXED)
        put(x, " blocklen=%lld", (long long)t->blocklen);
    if (t->kind == TESSI_VECTOR)
        put(x, " stride=%lld", (long long)t->stride);
    if (t->disp0)
        put(x, " disp0=%lld", (long long)t->disp0);
    if (t->kind >= TESSI_BLOCKINDEXED) {
        put(x, " blocks=[");
        for (int64_t b = 0; b < t->count && b < DESCRIBE_MAX_ENTRIES; b++)
            put(x, "%s%lld@%lld", b ? " " : "", (long long)tessi_block_len(t, b),
                (long long)t->displs[b]);
        put(x, "%s]", t->count > DESCRIBE_MAX_ENTRIES ? " ..." : "");
    }
    put(x, ") size=%lld lb=%lld extent=%lld regions=%lld\n", (long long)t->size, (long long)t->lb,
        (long long)t->extent, (long long)t->num_regions);
    for (int64_t b = 0; b < printed_children(t); b++) {
        int rc = describe_node(x, tessi_block_child(t, b), indent + 1);
        if (rc)
            return rc;
    }
    if (t->kind == TESSI_STRUCT && t->count > DESCRIBE_MAX_ENTRIES)
        put(x, "%*s...\n", (indent + 1) * 2, "");
    return 0;
}

int tess_type_describe(const tess_type *t, char *buf, size_t cap)
{
    if (!t || !buf || cap == 0)
        return tessi_error(TESS_ERR_ARG, "tess_type_describe: NULL type or empty buffer");
    text x = {.buf = buf, .cap = cap};
    buf[0] = '\0';
    int rc = count_uses(&x, t);
    if (!rc)
        rc = describe_node(&x, t, 0);
    tessi_nodemap_free(&x.uses);
    tessi_nodemap_free(&x.label);
    if (!rc && x.truncated)
        rc = tessi_error(TESS_ERR_TRUNCATE, "tess_type_describe: %zu bytes needed, %zu given",
                         x.len + 1, cap);
    return rc;
}
