/*
 * describe.c - access descriptions (paper 000's future work: datatype I/O underneath two-phase).
 * A client sends each aggregator whose realm its access meets a header and either its encoded
 * filetype (tess_type_encode: O(type) bytes) or, where that is smaller, the (offset, length)
 * pairs of its file regions inside the realm.
 *
 * Wire format, one message per (client, aggregator): six int64 in native byte order (the group
 * shares one architecture) {kind 1 = type | 2 = pairs, disp, origin, start, end, n}, then n
 * encoded bytes or n pairs of int64 (offset, length). The client's data stream bytes
 * [start, end) are the part of its access in the realm; stream byte s is byte s - origin of the
 * described type tiled from disp (pairs: an hindexed type of absolute offsets, origin = start).
 * The aggregator decodes (validating everything: a malformed message is TESS_ERR_DECODE) and
 * from then on intersects by tessi_stream_at, never by offset list.
 */
#include "coll/tp.h"

#include <stdlib.h>
#include <string.h>

/* My stream range [rs, re) in each realm. */
int tessi_tp_my_ranges(tp *p)
{
    const tessi_coll_access *a = p->a;
    int64_t s = a->start, e = a->start + a->bytes;
    for (int b = 0; b < p->A; b++) {
        const realm *r = &p->rl[b];
        p->rs[b] = p->re[b] = s;
        if (a->bytes == 0 || r->s1 <= r->s0)
            continue;
        if (!r->contig) {
            p->re[b] = e;
            continue;
        }
        int rc = tessi_tp_view_pos(p, r->base + r->s0, s, e, &p->rs[b]);
        if (rc || (rc = tessi_tp_view_pos(p, r->base + r->s1, s, e, &p->re[b])))
            return rc;
    }
    return 0;
}

/* The size of my description for each aggregator (scounts, by rank): the encoded filetype, or
 * the pairs where they are fewer bytes (contiguous realms); and what a flattened exchange would
 * send: 16 bytes per file region, regions cut at realm ends. */
static int describe_sizes(tp *p, size_t enc_len, int64_t *scounts, int64_t *total,
                          int64_t *flat)
{
    const tessi_coll_access *a = p->a;
    const tessi_view *v = a->view;
    int64_t nreg;
    int rc = 0;
    for (int b = 0; rc == 0 && b < p->A; b++) {
        int64_t n = p->re[b] - p->rs[b], size = TP_HDR * 8 + (int64_t)enc_len;
        if (n <= 0)
            continue;
        if (p->rl[b].contig) {
            if ((rc = tessi_count_regions(v->filetype, v->disp, p->rs[b], n, INT64_MAX, &nreg)))
                break;
            *flat += 16 * nreg;
            if (16 * nreg < (int64_t)enc_len)
                size = TP_HDR * 8 + 16 * nreg;
        }
        scounts[p->c->aggs[b]] = size;
        *total += size;
    }
    if (rc == 0 && a->bytes > 0 && !p->rl[0].contig &&
        (rc = tessi_count_regions(v->filetype, v->disp, a->start, a->bytes, INT64_MAX, &nreg)) == 0)
        *flat += 16 * nreg;
    return rc;
}

/* Write the pairs of my file regions in realm b at out; *np receives their number. */
static int write_pairs(tp *p, int b, char *out, int64_t *np)
{
    const tessi_view *v = p->a->view;
    tessi_rsrc src;
    tess_region r;
    *np = 0;
    int rc = tessi_tp_tiled_open(&src, v->filetype, v->disp, p->rs[b], p->re[b] - p->rs[b], NULL);
    while (rc == 0 && (rc = tessi_rsrc_peek(&src, &r)) == 0 && r.len > 0) {
        memcpy(out + 16 * *np, &r.off, 8);
        memcpy(out + 16 * *np + 8, &r.len, 8);
        ++*np;
        tessi_rsrc_take(&src, r.len);
    }
    tessi_rsrc_close(&src);
    return rc;
}

/* Decode the description of rank r (len bytes at msg) into client c. */
static int decode_client(const char *msg, int64_t len, int r, client *c)
{
    int64_t hdr[TP_HDR], body = len - TP_HDR * 8;
    if (body < 0)
        return tessi_error(TESS_ERR_DECODE, "two-phase: short description from rank %d", r);
    memcpy(hdr, msg, sizeof hdr);
    *c = (client){.rank = r, .disp = hdr[1], .origin = hdr[2], .start = hdr[3], .end = hdr[4]};
    int rc;
    if (hdr[0] == DESC_TYPE && hdr[5] == body) {
        rc = tess_type_decode(msg + TP_HDR * 8, (size_t)body, &c->t);
    } else if (hdr[0] == DESC_PAIRS && hdr[5] >= 1 && hdr[5] <= body / 16 &&
               body == 16 * hdr[5]) {
        int64_t np = hdr[5], *arr = malloc(sizeof(int64_t) * (size_t)np * 2);
        if (!arr)
            return tessi_error(TESS_ERR_NOMEM, "two-phase: out of memory (%lld pairs)",
                               (long long)np);
        for (int64_t i = 0; i < np; i++) { /* arr: lengths, then offsets */
            memcpy(arr + np + i, msg + TP_HDR * 8 + 16 * i, 8);
            memcpy(arr + i, msg + TP_HDR * 8 + 16 * i + 8, 8);
        }
        rc = tess_type_hindexed(np, arr, arr + np, TESS_BYTE, &c->t);
        free(arr);
    } else {
        return tessi_error(TESS_ERR_DECODE, "two-phase: malformed description from rank %d", r);
    }
    if (rc == 0 && (c->t->size <= 0 || c->t->extent <= 0 || !c->t->monotonic ||
                    c->start > c->end || c->start < c->origin)) {
        tess_type_free(c->t);
        c->t = NULL;
        rc = tessi_error(TESS_ERR_DECODE, "two-phase: inconsistent description from rank %d", r);
    }
    return rc;
}

/* Build and exchange the descriptions; aggregators decode theirs into p->cl. A process that
 * fails here sends nothing (the setup agreement stops the call). Returns communication
 * failures. */
int tessi_tp_describe(tp *p)
{
    tessi_coll_access *a = p->a;
    const tessi_view *v = a->view;
    int64_t *scounts = p->c->tp->counts, *rcounts = scounts + p->P, total = 0, flat = 0;
    size_t enc_len = 0;
    char *sbuf = NULL, *enc = NULL, *at;
    void *rbuf = NULL;
    memset(scounts, 0, sizeof(int64_t) * (size_t)p->P);
    if (p->rc == 0 && a->bytes > 0) {
        tess_type_encode(v->filetype, NULL, 0, &enc_len);
        if (!(enc = malloc(enc_len)))
            note(p, tessi_error(TESS_ERR_NOMEM, "two-phase: out of memory (encoding)"));
        else
            note(p, tess_type_encode(v->filetype, enc, enc_len, &enc_len));
    }
    if (p->rc == 0)
        note(p, describe_sizes(p, enc_len, scounts, &total, &flat));
    if (p->rc == 0 && total > 0 && !(sbuf = malloc((size_t)total)))
        note(p, tessi_error(TESS_ERR_NOMEM, "two-phase: out of memory (descriptions)"));
    at = sbuf;
    for (int b = 0; p->rc == 0 && b < p->A; b++) {
        int64_t size = scounts[p->c->aggs[b]], np;
        if (size == 0)
            continue;
        int64_t hdr[TP_HDR] = {DESC_TYPE, v->disp, 0, p->rs[b], p->re[b], (int64_t)enc_len};
        if (size == TP_HDR * 8 + (int64_t)enc_len) {
            memcpy(at + TP_HDR * 8, enc, enc_len);
        } else {
            note(p, write_pairs(p, b, at + TP_HDR * 8, &np));
            hdr[0] = DESC_PAIRS;
            hdr[1] = 0;
            hdr[2] = p->rs[b];
            hdr[5] = np;
            if (p->rc == 0 && TP_HDR * 8 + 16 * np != size)
                note(p, tessi_error(TESS_ERR_INTERNAL, "two-phase: %lld pairs written, %lld "
                                    "counted", (long long)np,
                                    (long long)(size - TP_HDR * 8) / 16));
        }
        memcpy(at, hdr, sizeof hdr);
        at += size;
    }
    if (p->rc)
        memset(scounts, 0, sizeof(int64_t) * (size_t)p->P);
    else {
        tessi_storage_emit(a->st, (tessi_event){.kind = TESSI_EV_REQUEST, .len = total,
                                                .n = flat});
    }
    double t0 = tessi_now();
    int rc = p->cm->alltoallv(p->c->g.ctx, sbuf, scounts, &rbuf, rcounts);
    p->xsec += tessi_now() - t0;
    free(sbuf);
    free(enc);
    if (rc)
        return rc;
    int64_t nfrom = 0;
    for (int r = 0; r < p->P; r++)
        nfrom += rcounts[r] > 0;
    if (nfrom && p->rc == 0 && !(p->cl = calloc((size_t)nfrom, sizeof(client))))
        note(p, tessi_error(TESS_ERR_NOMEM, "two-phase: out of memory (clients)"));
    at = rbuf;
    for (int r = 0; p->rc == 0 && r < p->P; at += rcounts[r], r++)
        if (rcounts[r] > 0) {
            note(p, decode_client(at, rcounts[r], r, &p->cl[p->ncl]));
            p->ncl += p->cl[p->ncl].t != NULL;
        }
    free(rbuf);
    return 0;
}
