/*
 * test_type_shared.c - walks that summarize a type cost time linear in its distinct nodes, even
 * when subtrees are shared exponentially many times (issue 11).
 *
 * The type: a = vector(2,1,3,byte), b = vector(2,1,5,a); each level is a struct of m members
 * alternating b, a, b, a, ... at displacements 0..m-1, which becomes the next level's b while
 * the old b becomes a. Unfolded, level L has about m^L leaves; it has L + 2 distinct nodes. The
 * issue's type has 16 members and 12 levels; 30 levels of 16 members would hold more than 2^63
 * data bytes, so the 30-level type has 6 members (the most whose data fits), 6^30 leaves. The
 * checks are structural: footprint is the sum of the distinct nodes' bytes, the encoding and
 * the description grow by the same amount at every level, describe into a small buffer reports
 * the full text's size; the decoded type (the hostile path: a few KB of input) behaves the same.
 * The times are printed, never asserted.
 */
#include "check.h"
#include "type/type.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* levels[L] is the level-L type of m members (levels[0] = b), nlevels + 1 entries. */
static void build(int nlevels, int m, tess_type **levels)
{
    tess_type *a, *b;
    CHECK_OK(tess_type_vector(2, 1, 3, TESS_BYTE, &a));
    CHECK_OK(tess_type_vector(2, 1, 5, a, &b));
    levels[0] = tess_type_ref(b);
    for (int l = 1; l <= nlevels; l++) {
        int64_t blens[16], displs[16];
        tess_type *members[16], *s;
        for (int k = 0; k < m; k++) {
            blens[k] = 1;
            displs[k] = k;
            members[k] = k % 2 ? a : b;
        }
        CHECK_OK(tess_type_struct(m, blens, displs, members, &s));
        tess_type_free(a);
        a = b;
        b = s;
        levels[l] = tess_type_ref(s);
    }
    tess_type_free(a);
    tess_type_free(b);
}

/* Distinct composite nodes and their bytes, through the internals (a reference count). */
static void distinct(const tess_type *t, tessi_nodemap *seen, int64_t *nodes, int64_t *bytes)
{
    if (t->predefined || tessi_nodemap_get(seen, t) >= 0)
        return;
    CHECK_OK(tessi_nodemap_put(seen, t, 1));
    ++*nodes;
    *bytes += tessi_node_bytes(t);
    for (int64_t b = 0; b < tessi_num_blocks(t); b++)
        distinct(tessi_block_child(t, b), seen, nodes, bytes);
}

/* The full description (grown until it fits) and its length. */
static char *describe_all(const tess_type *t, size_t *len)
{
    for (size_t cap = 1024;; cap *= 2) {
        char *s = malloc(cap);
        CHECK(s);
        int rc = tess_type_describe(t, s, cap);
        if (rc == 0) {
            *len = strlen(s);
            return s;
        }
        CHECK(rc == TESS_ERR_TRUNCATE);
        free(s);
        CHECK(cap < ((size_t)1 << 24));
    }
}

static size_t encoded_len(const tess_type *t)
{
    size_t len;
    CHECK_OK(tess_type_encode(t, NULL, 0, &len));
    return len;
}

/* Footprint, describe and encode of t: structural checks, and the times printed. */
static void summarize(const char *what, int level, const tess_type *t, size_t *text_len,
                      size_t *enc_len)
{
    tessi_nodemap seen = {0};
    int64_t nodes = 0, bytes = 0;
    distinct(t, &seen, &nodes, &bytes);
    tessi_nodemap_free(&seen);
    CHECK(nodes == level + 2);

    double t0 = now();
    int64_t fp = tess_type_footprint(t);
    double t1 = now();
    CHECK(fp == bytes);

    char small[256];
    tessi_error(0, "%s", "");
    int rc = tess_type_describe(t, small, sizeof small);
    double t2 = now();
    size_t len;
    char *full = describe_all(t, &len);
    double t3 = now();
    CHECK(rc == TESS_ERR_TRUNCATE);
    CHECK(strlen(small) == sizeof small - 1 && strncmp(small, full, sizeof small - 1) == 0);
    /* the message says the size the full text needs */
    long long need = -1;
    CHECK(sscanf(strstr(tess_last_error(), ": ") + 2, "%lld bytes needed", &need) == 1);
    CHECK(need == (long long)len + 1);
    /* every shared struct is printed once and referred to afterwards */
    CHECK(strstr(full, "#1: ") != NULL && strstr(full, "#1 (shown above)") != NULL);

    size_t elen = encoded_len(t);
    unsigned char *buf = malloc(elen);
    CHECK(buf);
    double t4 = now();
    CHECK_OK(tess_type_encode(t, buf, elen, &elen));
    double t5 = now();
    tess_type *back;
    CHECK_OK(tess_type_decode(buf, elen, &back));
    double t6 = now();
    CHECK(tess_type_size(back) == tess_type_size(t) && tess_type_extent(back) == tess_type_extent(t));
    CHECK(tess_type_num_regions(back) == tess_type_num_regions(t));
    CHECK(tess_type_footprint(back) == fp);
    size_t blen;
    char *btext = describe_all(back, &blen);
    CHECK(blen == len && strcmp(btext, full) == 0);
    free(btext);
    tess_type_free(back);
    free(buf);
    free(full);
    printf("  %s level %2d: %lld distinct nodes, footprint %lld B in %.3f ms; describe: %zu B "
           "of text in %.3f ms (256-byte buffer: %.3f ms); encode %zu B in %.3f ms, decode "
           "%.3f ms\n",
           what, level, (long long)nodes, (long long)fp, (t1 - t0) * 1e3, len, (t3 - t2) * 1e3,
           (t2 - t1) * 1e3, elen, (t5 - t4) * 1e3, (t6 - t5) * 1e3);
    *text_len = len;
    *enc_len = elen;
}

/* Every level adds the same: one struct node, one line and its references. */
static void grows_linearly(int nlevels, tess_type **levels)
{
    size_t text[64], enc[64];
    for (int l = 1; l <= nlevels; l++) {
        tessi_nodemap seen = {0};
        int64_t nodes = 0, bytes = 0;
        distinct(levels[l], &seen, &nodes, &bytes);
        tessi_nodemap_free(&seen);
        CHECK(nodes == l + 2);
        CHECK(tess_type_footprint(levels[l]) == bytes);
        enc[l] = encoded_len(levels[l]);
        free(describe_all(levels[l], &text[l]));
        if (l >= 4) {
            CHECK(enc[l] - enc[l - 1] == enc[l - 1] - enc[l - 2]);
            /* the line of the new level differs only in its numbers' digits */
            CHECK(text[l] - text[l - 1] < 2 * (text[l - 1] - text[l - 2]));
        }
    }
}

static void check(int nlevels, int m)
{
    tess_type *levels[64];
    build(nlevels, m, levels);
    CHECK(tess_type_depth(levels[nlevels]) == nlevels + 2);
    grows_linearly(nlevels, levels);
    char what[32];
    snprintf(what, sizeof what, "%d members,", m);
    size_t tl, el;
    summarize(what, nlevels, levels[nlevels], &tl, &el);
    for (int l = 0; l <= nlevels; l++)
        tess_type_free(levels[l]);
}

int main(void)
{
    check(12, 16);
    check(30, 6);
    printf("test_type_shared: walks linear in distinct nodes at 12 and 30 levels\n");
    return 0;
}
