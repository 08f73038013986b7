/*
 * comm_mpi.c - the group transport over MPI (a communicator duplicated at open, errors
 * returned rather than fatal). Uses only Tessera's public headers (tessera_group.h).
 *
 * Typed exchange: each peer's segments are walked by cursor (tess_seg_cursor) into one derived
 * datatype of absolute addresses (MPI_Type_create_struct over MPI_BOTTOM): contiguous pieces
 * become byte blocks (adjacent ones merged), strided runs of a vector become one hvector, so a
 * regular layout costs a few entries whatever its size and no user buffer is copied by Tessera.
 * Data moves by nonblocking point-to-point messages to the peers that have something (an
 * aggregator talks to its clients only), one message per peer and direction; MPI_Alltoallw would
 * touch every rank every round and takes int displacements.
 *
 * 64-bit: counts MPI takes as int are bounded here: blocks and messages of descriptions are cut
 * at TESSI_MPI_CHUNK bytes; a derived datatype's size may exceed 2 GiB (count 1).
 *
 * Memory exhaustion inside a collective step of this file (the receive buffer of alltoallv, the
 * request arrays) cannot be reported without leaving peers waiting: it returns TESS_ERR_NOMEM
 * like a communication failure, after which the group is unusable.
 */
#include "comm_mpi.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Largest block or message handed to MPI as an int count of bytes. */
#define TESSI_MPI_CHUNK (INT64_C(1) << 30)

/*
 * What a typed transfer costs beyond its bytes, measured with Open MPI 4.1 between 2 processes
 * of one node (1 MiB in pieces of 8 B to 4 KiB, built as below, sent, freed): a block of a
 * struct costs about 0.1 us (65 to 190 ns), an hvector entry about 1 us to create and commit
 * (1 to 2.3 us) plus 8 to 13 ns per block it holds. So runs become hvectors only from
 * TESSI_MPI_VECTOR_MIN blocks on, and a block is priced at TESSI_MPI_BLOCK_SECONDS: packing 1
 * MiB of 8-byte pieces and sending it contiguous took 1 ms against 13 ms as a datatype; the two
 * cross near 1 KiB pieces, where a copy of the bytes (0.1 ns per byte) costs what a block does.
 */
#define TESSI_MPI_BLOCK_SECONDS 1e-7
#define TESSI_MPI_VECTOR_MIN 16

enum { TAG_DESC = 0x7e55, TAG_DATA = 0x7e56 };

/*
 * Small reductions (an error agreement: 2 values) by one MPI_Allgather and a local reduction,
 * always: on one node it measured no slower than MPI_Allreduce and often much faster. Measured
 * here (2 cores, 2 int64 per rank, fastest of 9 loops): MPICH 4.0 at 2 processes 0.6-0.9 us
 * against 4-9 us; Open MPI 4.1 at 2 processes 0.37 against 0.41 us, at 4 (oversubscribed)
 * 40 against 42 us. A choice timed at open could pick the slower one under load, and cost every
 * open 17 collective steps. Only up to GATHER_REDUCE_MAX values in all (n times the group size:
 * the gathered values live on the stack), where the gathered bytes cost nothing next to the
 * latency; larger reductions (realm sampling) go to MPI_Allreduce.
 */
#define GATHER_REDUCE_MAX 512

typedef struct {
    MPI_Comm comm;
    int rank, size;
    int *node; /* node index of every rank */
} mctx;

int tessi_mpi_error(int code, const char *call)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(code, text, &len) != MPI_SUCCESS)
        snprintf(text, sizeof text, "MPI error %d", code);
    return tess_error_set(TESS_ERR_IO, "MPI: %s failed: %s", call, text);
}

static int m_rank(void *ctx) { return ((mctx *)ctx)->rank; }

static int m_size(void *ctx) { return ((mctx *)ctx)->size; }

static void m_nodes(void *ctx, int *node)
{
    mctx *m = ctx;
    memcpy(node, m->node, sizeof(int) * (size_t)m->size);
}

static int m_barrier(void *ctx)
{
    int rc = MPI_Barrier(((mctx *)ctx)->comm);
    return rc == MPI_SUCCESS ? 0 : tessi_mpi_error(rc, "MPI_Barrier");
}

/* vals[0..n) reduced over the group by one MPI_Allgather (n * size <= GATHER_REDUCE_MAX). */
static int gather_reduce(MPI_Comm comm, int size, int64_t *vals, int n, int op)
{
    int64_t all[GATHER_REDUCE_MAX];
    int rc = MPI_Allgather(vals, n, MPI_INT64_T, all, n, MPI_INT64_T, comm);
    if (rc != MPI_SUCCESS)
        return tessi_mpi_error(rc, "MPI_Allgather");
    for (int k = 0; k < n; k++) {
        int64_t v = all[k];
        for (int r = 1; r < size; r++) {
            int64_t x = all[(size_t)r * (size_t)n + (size_t)k];
            v = op == TESS_REDUCE_SUM ? v + x
                : op == TESS_REDUCE_MIN ? (x < v ? x : v) : (x > v ? x : v);
        }
        vals[k] = v;
    }
    return 0;
}

static int m_allreduce(void *ctx, int64_t *vals, int64_t n, int op)
{
    mctx *m = ctx;
    if (n < 0 || n > INT_MAX || op < 0 || op > TESS_REDUCE_MAX)
        return tess_error_set(TESS_ERR_ARG, "allreduce: %lld values, op %d", (long long)n, op);
    if (n * m->size <= GATHER_REDUCE_MAX)
        return gather_reduce(m->comm, m->size, vals, (int)n, op);
    MPI_Op mop = op == TESS_REDUCE_SUM ? MPI_SUM : op == TESS_REDUCE_MIN ? MPI_MIN : MPI_MAX;
    int rc = MPI_Allreduce(MPI_IN_PLACE, vals, (int)n, MPI_INT64_T, mop, m->comm);
    return rc == MPI_SUCCESS ? 0 : tessi_mpi_error(rc, "MPI_Allreduce");
}

static int m_allgather(void *ctx, const void *rec, int64_t len, void *all)
{
    if (len < 0 || len > INT_MAX)
        return tess_error_set(TESS_ERR_ARG, "allgather: record of %lld bytes", (long long)len);
    int rc = MPI_Allgather(rec, (int)len, MPI_BYTE, all, (int)len, MPI_BYTE,
                           ((mctx *)ctx)->comm);
    return rc == MPI_SUCCESS ? 0 : tessi_mpi_error(rc, "MPI_Allgather");
}

/* Pieces of at most TESSI_MPI_CHUNK bytes a message of n bytes is sent in. */
static int64_t pieces(int64_t n) { return (n + TESSI_MPI_CHUNK - 1) / TESSI_MPI_CHUNK; }

/* Post the pieces of n bytes at p to/from peer (recv or send); *k counts requests. */
static int post(mctx *m, char *p, int64_t n, int peer, bool recv, MPI_Request *req, int64_t *k)
{
    for (int64_t off = 0; off < n; off += TESSI_MPI_CHUNK) {
        int len = (int)(n - off < TESSI_MPI_CHUNK ? n - off : TESSI_MPI_CHUNK);
        int rc = recv ? MPI_Irecv(p + off, len, MPI_BYTE, peer, TAG_DESC, m->comm, &req[*k])
                      : MPI_Isend(p + off, len, MPI_BYTE, peer, TAG_DESC, m->comm, &req[*k]);
        if (rc != MPI_SUCCESS)
            return tessi_mpi_error(rc, recv ? "MPI_Irecv" : "MPI_Isend");
        ++*k;
    }
    return 0;
}

static int m_alltoallv(void *ctx, const void *send, const int64_t *scounts, void **recv,
                       int64_t *rcounts)
{
    mctx *m = ctx;
    int64_t total = 0, nreq = 0, k = 0, soff = 0, roff = 0;
    char *rbuf = NULL;
    MPI_Request *req = NULL;
    MPI_Status *st = NULL;
    *recv = NULL;
    int rc = MPI_Alltoall(scounts, 1, MPI_INT64_T, rcounts, 1, MPI_INT64_T, m->comm);
    if (rc != MPI_SUCCESS)
        return tessi_mpi_error(rc, "MPI_Alltoall");
    for (int r = 0; r < m->size; r++) {
        total += rcounts[r];
        nreq += pieces(rcounts[r]) + pieces(scounts[r]);
    }
    if ((total && !(rbuf = malloc((size_t)total))) ||
        (nreq && !(req = malloc(sizeof(MPI_Request) * (size_t)nreq))) ||
        (nreq && !(st = malloc(sizeof(MPI_Status) * (size_t)nreq)))) {
        rc = tess_error_set(TESS_ERR_NOMEM, "alltoallv: out of memory (%lld bytes)",
                            (long long)total);
        goto fail;
    }
    rc = 0;
    for (int r = 0; rc == 0 && r < m->size; r++) {
        rc = post(m, rbuf + roff, rcounts[r], r, true, req, &k);
        roff += rcounts[r];
    }
    for (int r = 0; rc == 0 && r < m->size; r++) {
        rc = post(m, (char *)send + soff, scounts[r], r, false, req, &k);
        soff += scounts[r];
    }
    int err = k > INT_MAX ? MPI_ERR_COUNT : MPI_Waitall((int)k, req, st);
    if (rc == 0 && err != MPI_SUCCESS)
        rc = tessi_mpi_error(err, "MPI_Waitall");
fail:
    free(req);
    free(st);
    if (rc)
        free(rbuf);
    else
        *recv = rbuf;
    return rc;
}

/* ------------------------------------------------------------------ typed exchange */

/* The entries of a struct datatype being built. */
typedef struct {
    int *bl;
    MPI_Aint *dis;
    MPI_Datatype *ty;
    int64_t n, cap;
    MPI_Datatype *vec; /* hvectors made for it (freed once the struct exists) */
    int64_t nvec, capvec;
} entries;

static int push(entries *e, int bl, MPI_Aint dis, MPI_Datatype ty)
{
    if (e->n == e->cap) {
        int64_t cap = e->cap ? 2 * e->cap : 64;
        int *bl2 = realloc(e->bl, sizeof(int) * (size_t)cap);
        if (bl2)
            e->bl = bl2;
        MPI_Aint *dis2 = bl2 ? realloc(e->dis, sizeof(MPI_Aint) * (size_t)cap) : NULL;
        if (dis2)
            e->dis = dis2;
        MPI_Datatype *ty2 = dis2 ? realloc(e->ty, sizeof(MPI_Datatype) * (size_t)cap) : NULL;
        if (!ty2)
            return tess_error_set(TESS_ERR_NOMEM, "exchange: out of memory (%lld datatype "
                                  "entries)", (long long)cap);
        e->ty = ty2;
        e->cap = cap;
    }
    e->bl[e->n] = bl;
    e->dis[e->n] = dis;
    e->ty[e->n++] = ty;
    return 0;
}

/* Contiguous bytes [addr, addr + len): merged into the previous block when they continue it. */
static int add_bytes(entries *e, MPI_Aint addr, int64_t len)
{
    while (len > 0) {
        int64_t k = e->n - 1;
        if (k >= 0 && e->ty[k] == MPI_BYTE && e->dis[k] + e->bl[k] == addr &&
            e->bl[k] < TESSI_MPI_CHUNK) {
            int64_t add = TESSI_MPI_CHUNK - e->bl[k] < len ? TESSI_MPI_CHUNK - e->bl[k] : len;
            e->bl[k] += (int)add;
            addr += add;
            len -= add;
            continue;
        }
        int64_t piece = len < TESSI_MPI_CHUNK ? len : TESSI_MPI_CHUNK;
        int rc = push(e, (int)piece, addr, MPI_BYTE);
        if (rc)
            return rc;
        addr += piece;
        len -= piece;
    }
    return 0;
}

/*
 * A run of n regions of len bytes, stride apart, from addr: one hvector when the regions go up
 * without overlapping and are enough to pay for a type of their own, else one block each.
 * (Open MPI 4.1 unpacks an hvector with a negative stride upwards when the receive is posted
 * before the message arrives; MPICH is right. Blocks at decreasing addresses in a struct are
 * handled correctly by both.)
 */
static int add_run(entries *e, MPI_Aint addr, const tess_run *r)
{
    if (r->n == 1 || r->stride == r->len)
        return add_bytes(e, addr, r->n * r->len);
    if (r->n < TESSI_MPI_VECTOR_MIN || r->stride < r->len || r->len > TESSI_MPI_CHUNK ||
        r->n > INT_MAX) {
        for (int64_t k = 0; k < r->n; k++) {
            int rc = add_bytes(e, addr + k * r->stride, r->len);
            if (rc)
                return rc;
        }
        return 0;
    }
    if (e->nvec == e->capvec) {
        int64_t cap = e->capvec ? 2 * e->capvec : 16;
        MPI_Datatype *v = realloc(e->vec, sizeof(MPI_Datatype) * (size_t)cap);
        if (!v)
            return tess_error_set(TESS_ERR_NOMEM, "exchange: out of memory (vectors)");
        e->vec = v;
        e->capvec = cap;
    }
    MPI_Datatype v;
    int rc = MPI_Type_create_hvector((int)r->n, (int)r->len, (MPI_Aint)r->stride, MPI_BYTE, &v);
    if (rc != MPI_SUCCESS)
        return tessi_mpi_error(rc, "MPI_Type_create_hvector");
    e->vec[e->nvec++] = v;
    return push(e, 1, addr, v);
}

/* The datatype (absolute addresses) of everything x describes. */
static int build_type(const tess_xfer *x, MPI_Datatype *out)
{
    entries e = {0};
    MPI_Aint base;
    tess_run runs[64];
    int rc = MPI_Get_address(x->buf, &base);
    rc = rc == MPI_SUCCESS ? 0 : tessi_mpi_error(rc, "MPI_Get_address");
    *out = MPI_DATATYPE_NULL;
    for (int64_t s = 0; rc == 0 && s < x->nseg; s++) {
        tess_cursor *c = NULL;
        int64_t disp, left = x->seg[s].bytes, n;
        if (left == 0 || (rc = tess_seg_cursor(&x->seg[s], &c, &disp)))
            continue;
        while (rc == 0 && left > 0) {
            if ((rc = tess_cursor_next_runs(c, runs, 64, left, &n)))
                break;
            if (n == 0)
                rc = tess_error_set(TESS_ERR_INTERNAL, "exchange: segment ran out of data");
            for (int64_t i = 0; rc == 0 && i < n; i++) {
                rc = add_run(&e, base + (MPI_Aint)(disp + runs[i].off), &runs[i]);
                left -= runs[i].n * runs[i].len;
            }
        }
        tess_cursor_free(c);
    }
    if (rc == 0 && e.n > INT_MAX)
        rc = tess_error_set(TESS_ERR_OVERFLOW, "exchange: %lld datatype entries exceed MPI's "
                            "int", (long long)e.n);
    if (rc == 0) {
        int err = MPI_Type_create_struct((int)e.n, e.bl, e.dis, e.ty, out);
        if (err == MPI_SUCCESS && (err = MPI_Type_commit(out)) != MPI_SUCCESS)
            MPI_Type_free(out);
        rc = err == MPI_SUCCESS ? 0 : tessi_mpi_error(err, "MPI_Type_create_struct");
    }
    MPI_Count size = 0;
    if (rc == 0 && MPI_Type_size_x(*out, &size) == MPI_SUCCESS && size != x->bytes) {
        MPI_Type_free(out);
        rc = tess_error_set(TESS_ERR_INTERNAL, "exchange: datatype of %lld bytes for %lld",
                            (long long)size, (long long)x->bytes);
    }
    for (int64_t i = 0; i < e.nvec; i++)
        MPI_Type_free(&e.vec[i]);
    free(e.vec);
    free(e.bl);
    free(e.dis);
    free(e.ty);
    return rc;
}

/* A prepared exchange: a datatype per peer and direction, receives first. */
typedef struct {
    int64_t n, nrecv;
    int *peer;
    MPI_Datatype *type;
    MPI_Request *req;
    MPI_Status *st;
} mexch;

static void m_xfree(void *ctx, void *px)
{
    mexch *x = px;
    (void)ctx;
    if (!x)
        return;
    for (int64_t i = 0; i < x->n; i++)
        if (x->type[i] != MPI_DATATYPE_NULL)
            MPI_Type_free(&x->type[i]);
    free(x->peer);
    free(x->type);
    free(x->req);
    free(x->st);
    free(x);
}

static int m_xprepare(void *ctx, const tess_xfer *send, const tess_xfer *recv, void **px)
{
    mctx *m = ctx;
    int64_t n = 0;
    int rc = 0;
    for (int r = 0; r < m->size; r++)
        n += (send[r].bytes > 0) + (recv[r].bytes > 0);
    mexch *x = calloc(1, sizeof *x);
    if (x) {
        x->peer = malloc(sizeof(int) * (size_t)(n + 1));
        x->type = malloc(sizeof(MPI_Datatype) * (size_t)(n + 1));
        x->req = malloc(sizeof(MPI_Request) * (size_t)(n + 1));
        x->st = malloc(sizeof(MPI_Status) * (size_t)(n + 1));
    }
    if (!x || !x->peer || !x->type || !x->req || !x->st) {
        m_xfree(ctx, x);
        return tess_error_set(TESS_ERR_NOMEM, "exchange: out of memory (%lld messages)",
                              (long long)n);
    }
    for (int dir = 0; rc == 0 && dir < 2; dir++) { /* receives, then sends */
        const tess_xfer *t = dir == 0 ? recv : send;
        for (int r = 0; rc == 0 && r < m->size; r++) {
            if (t[r].bytes == 0)
                continue;
            x->peer[x->n] = r;
            x->type[x->n] = MPI_DATATYPE_NULL;
            rc = r == m->rank ? tess_error_set(TESS_ERR_INTERNAL, "exchange: a transfer to self")
                              : build_type(&t[r], &x->type[x->n]);
            x->n++;
        }
        if (dir == 0)
            x->nrecv = x->n;
    }
    if (rc) {
        m_xfree(ctx, x);
        return rc;
    }
    *px = x;
    return 0;
}

static int m_xstart(void *ctx, void *px)
{
    mctx *m = ctx;
    mexch *x = px;
    for (int64_t i = 0; i < x->n; i++) {
        int rc = i < x->nrecv
                     ? MPI_Irecv(MPI_BOTTOM, 1, x->type[i], x->peer[i], TAG_DATA, m->comm,
                                 &x->req[i])
                     : MPI_Isend(MPI_BOTTOM, 1, x->type[i], x->peer[i], TAG_DATA, m->comm,
                                 &x->req[i]);
        if (rc != MPI_SUCCESS) {
            x->n = i; /* xwait waits for what was started */
            return tessi_mpi_error(rc, i < x->nrecv ? "MPI_Irecv" : "MPI_Isend");
        }
    }
    return 0;
}

static int m_xwait(void *ctx, void *px)
{
    mexch *x = px;
    (void)ctx;
    if (x->n > INT_MAX)
        return tess_error_set(TESS_ERR_OVERFLOW, "exchange: %lld messages", (long long)x->n);
    int rc = MPI_Waitall((int)x->n, x->req, x->st);
    return rc == MPI_SUCCESS ? 0 : tessi_mpi_error(rc, "MPI_Waitall");
}

static void m_free(void *ctx)
{
    mctx *m = ctx;
    int fin = 0;
    if (!m)
        return;
    MPI_Finalized(&fin);
    if (!fin) /* after MPI_Finalize nothing can be released (closing then is the caller's bug) */
        MPI_Comm_free(&m->comm);
    free(m->node);
    free(m);
}

const struct tess_group_ops tessi_mpi_group_ops = {
    .version = TESS_GROUP_OPS_VERSION,
    .name = "mpi",
    .rank = m_rank,
    .size = m_size,
    .nodes = m_nodes,
    .barrier = m_barrier,
    .allreduce = m_allreduce,
    .allgather = m_allgather,
    .alltoallv = m_alltoallv,
    .xprepare = m_xprepare,
    .xstart = m_xstart,
    .xwait = m_xwait,
    .xfree = m_xfree,
    .free = m_free,
    .xblock = TESSI_MPI_BLOCK_SECONDS,
};

int tessi_mpi_group_create(MPI_Comm comm, void **ctx)
{
    int rank = 0, size = 0, ok, all_ok = 0, leader, rc;
    MPI_Comm shm = MPI_COMM_NULL;
    mctx *m = NULL;
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if ((m = calloc(1, sizeof *m)))
        m->node = malloc(sizeof(int) * (size_t)size);
    ok = m && m->node;
    if ((rc = MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm)) != MPI_SUCCESS) {
        rc = tessi_mpi_error(rc, "MPI_Allreduce");
        goto fail;
    }
    if (!all_ok) {
        rc = tess_error_set(TESS_ERR_NOMEM, ok ? "tess_file_open_mpi: out of memory on another "
                                              "rank" : "tess_file_open_mpi: out of memory");
        goto fail;
    }
    /* the node of a rank: the lowest rank sharing memory with it, renumbered 0, 1, ... */
    leader = rank;
    if ((rc = MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shm)) ||
        (rc = MPI_Bcast(&leader, 1, MPI_INT, 0, shm)) ||
        (rc = MPI_Allgather(&leader, 1, MPI_INT, m->node, 1, MPI_INT, comm))) {
        rc = tessi_mpi_error(rc, "finding the nodes of the communicator");
        goto fail;
    }
    MPI_Comm_free(&shm);
    for (int r = 0, next = 0; r < size; r++) /* leaders come first among their node's ranks */
        m->node[r] = m->node[r] == r ? next++ : m->node[m->node[r]];
    m->comm = comm;
    m->rank = rank;
    m->size = size;
    *ctx = m;
    return 0;
fail:
    if (shm != MPI_COMM_NULL)
        MPI_Comm_free(&shm);
    MPI_Comm_free(&comm);
    if (m)
        free(m->node);
    free(m);
    return rc;
}
