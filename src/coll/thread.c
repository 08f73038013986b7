/*
 * thread.c - the thread transport (thread.h).
 */
#include "coll/thread.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* What a member publishes for the collective in progress. */
typedef struct {
    const void *in;          /* allreduce: vals; allgather: rec; alltoallv: send */
    const int64_t *counts;   /* alltoallv: scounts */
    const void *x;           /* typed exchange: the prepared exchange */
} slot;

struct tessi_team {
    int size;
    atomic_int refs;         /* the creator and every context */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int arrived;             /* members at the barrier of this generation */
    uint64_t generation;
    slot *slots;             /* one per member */
};

typedef struct {
    tessi_team *t;
    int rank;
} member;

typedef struct {             /* a prepared exchange: the descriptions, used until xwait */
    const tess_xfer *send, *recv;
} exch;

static void team_unref(tessi_team *t)
{
    if (atomic_fetch_sub(&t->refs, 1) != 1)
        return;
    pthread_cond_destroy(&t->cv);
    pthread_mutex_destroy(&t->mu);
    free(t->slots);
    free(t);
}

int tessi_team_create(int size, tessi_team **out)
{
    if (size < 1 || !out)
        return tessi_error(TESS_ERR_ARG, "thread team: %s", size < 1 ? "size < 1" : "out is NULL");
    tessi_team *t = calloc(1, sizeof *t);
    if (t)
        t->slots = calloc((size_t)size, sizeof *t->slots);
    if (!t || !t->slots) {
        free(t);
        return tessi_error(TESS_ERR_NOMEM, "thread team: out of memory");
    }
    t->size = size;
    atomic_init(&t->refs, 1);
    pthread_mutex_init(&t->mu, NULL);
    pthread_cond_init(&t->cv, NULL);
    *out = t;
    return 0;
}

int tessi_team_ctx(tessi_team *t, int rank, void **ctx)
{
    if (!t || !ctx || rank < 0 || rank >= t->size)
        return tessi_error(TESS_ERR_ARG, "thread team: no member %d", rank);
    member *m = malloc(sizeof *m);
    if (!m)
        return tessi_error(TESS_ERR_NOMEM, "thread team: out of memory");
    atomic_fetch_add(&t->refs, 1);
    *m = (member){.t = t, .rank = rank};
    *ctx = m;
    return 0;
}

void tessi_team_release(tessi_team *t)
{
    if (t)
        team_unref(t);
}

static int t_rank(void *ctx) { return ((member *)ctx)->rank; }

static int t_size(void *ctx) { return ((member *)ctx)->t->size; }

static void t_nodes(void *ctx, int *node)
{
    memset(node, 0, sizeof(int) * (size_t)t_size(ctx));
}

static int t_barrier(void *ctx)
{
    tessi_team *t = ((member *)ctx)->t;
    pthread_mutex_lock(&t->mu);
    uint64_t gen = t->generation;
    if (++t->arrived == t->size) {
        t->arrived = 0;
        t->generation++;
        pthread_cond_broadcast(&t->cv);
    } else {
        while (gen == t->generation)
            pthread_cond_wait(&t->cv, &t->mu);
    }
    pthread_mutex_unlock(&t->mu);
    return 0;
}

/* Publish s as this member's slot, then wait for everybody's. */
static void publish(member *m, slot s)
{
    m->t->slots[m->rank] = s;
    t_barrier(m);
}

static int t_allreduce(void *ctx, int64_t *vals, int64_t n, int op)
{
    member *m = ctx;
    int64_t small[64], *acc = n <= 64 ? small : malloc(sizeof(int64_t) * (size_t)n);
    int rc = 0;
    publish(m, (slot){.in = vals});
    if (!acc) {
        rc = tessi_error(TESS_ERR_NOMEM, "thread allreduce: out of memory");
    } else {
        for (int64_t i = 0; i < n; i++) {
            int64_t v = ((const int64_t *)m->t->slots[0].in)[i];
            for (int r = 1; r < m->t->size; r++) {
                int64_t w = ((const int64_t *)m->t->slots[r].in)[i];
                v = op == TESS_REDUCE_SUM ? v + w
                    : op == TESS_REDUCE_MIN ? (w < v ? w : v) : (w > v ? w : v);
            }
            acc[i] = v;
        }
    }
    t_barrier(m); /* everybody has read every input: now the inputs may change */
    if (acc)
        memcpy(vals, acc, sizeof(int64_t) * (size_t)n);
    if (acc != small)
        free(acc);
    return rc;
}

static int t_allgather(void *ctx, const void *rec, int64_t len, void *all)
{
    member *m = ctx;
    publish(m, (slot){.in = rec});
    for (int r = 0; r < m->t->size; r++)
        memcpy((char *)all + (size_t)r * (size_t)len, m->t->slots[r].in, (size_t)len);
    return t_barrier(m);
}

static int t_alltoallv(void *ctx, const void *send, const int64_t *scounts, void **recv,
                       int64_t *rcounts)
{
    member *m = ctx;
    int64_t total = 0, at = 0;
    int rc = 0;
    publish(m, (slot){.in = send, .counts = scounts});
    for (int r = 0; r < m->t->size; r++)
        total += rcounts[r] = m->t->slots[r].counts[m->rank];
    char *buf = total ? malloc((size_t)total) : NULL;
    if (total && !buf)
        rc = tessi_error(TESS_ERR_NOMEM, "thread alltoallv: out of memory (%lld bytes)",
                         (long long)total);
    for (int r = 0; buf && r < m->t->size; r++) {
        const slot *s = &m->t->slots[r];
        int64_t off = 0;
        for (int q = 0; q < m->rank; q++) /* r's bytes for me follow its bytes for ranks < me */
            off += s->counts[q];
        if (rcounts[r]) /* a member sending nothing may pass NULL */
            memcpy(buf + at, (const char *)s->in + off, (size_t)rcounts[r]);
        at += rcounts[r];
    }
    t_barrier(m);
    *recv = buf;
    return rc;
}

static int t_xprepare(void *ctx, const tess_xfer *send, const tess_xfer *recv, void **x)
{
    member *m = ctx;
    if (send[m->rank].bytes || recv[m->rank].bytes)
        return tessi_error(TESS_ERR_INTERNAL, "thread exchange: a transfer to self");
    exch *e = malloc(sizeof *e);
    if (!e)
        return tessi_error(TESS_ERR_NOMEM, "thread exchange: out of memory");
    *e = (exch){.send = send, .recv = recv};
    *x = e;
    return 0;
}

static int t_xstart(void *ctx, void *x)
{
    publish(ctx, (slot){.x = x});
    return 0;
}

/* Pull what every peer sends me into my receiving segments, then wait for everybody. */
static int t_xwait(void *ctx, void *x)
{
    member *m = ctx;
    const exch *mine = x;
    int rc = 0;
    for (int r = 0; r < m->t->size; r++) {
        const exch *peer = m->t->slots[r].x;
        const tess_xfer *from = &peer->send[m->rank], *to = &mine->recv[r];
        if (from->bytes != to->bytes && rc == 0)
            rc = tessi_error(TESS_ERR_INTERNAL, "thread exchange: rank %d sends %lld bytes, "
                             "rank %d expects %lld", r, (long long)from->bytes, m->rank,
                             (long long)to->bytes);
        else if (to->bytes && rc == 0)
            rc = tessi_xfer_copy(from, to);
    }
    t_barrier(m);
    return rc;
}

static void t_xfree(void *ctx, void *x)
{
    (void)ctx;
    free(x);
}

static void t_free(void *ctx)
{
    member *m = ctx;
    if (!m)
        return;
    team_unref(m->t);
    free(m);
}

const struct tess_group_ops tessi_thread_ops = {
    .version = TESS_GROUP_OPS_VERSION,
    .name = "threads",
    .rank = t_rank,
    .size = t_size,
    .nodes = t_nodes,
    .barrier = t_barrier,
    .allreduce = t_allreduce,
    .allgather = t_allgather,
    .alltoallv = t_alltoallv,
    .xprepare = t_xprepare,
    .xstart = t_xstart,
    .xwait = t_xwait,
    .xfree = t_xfree,
    .free = t_free,
};
