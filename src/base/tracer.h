/*
 * tracer.h - the tracing hook. Everything worth counting or logging reports here as an event:
 * the driver wrappers (every storage call and lock), lock fallbacks, the methods' staging
 * buffers, `auto`'s decisions, and the collective exchanges. A tracer is one small table (an
 * event function, filled by field name, with a version); events go to the file's own tracer,
 * the counters of tess_stats (base/stats.c), and to one process-wide hook, a no-op until a
 * tracer is installed (a trace file or a report builds on it).
 */
#ifndef TESS_TRACER_H
#define TESS_TRACER_H

#include "base/base.h"

/** What happened. The fields of tessi_event each kind uses are listed with it. */
typedef enum {
    TESSI_EV_IO = 1,        /* one storage call: op (TESSI_OP_READ/WRITE), off, len (bytes asked),
                               moved (bytes moved, or a negative errno), seconds, n (accesses in
                               it: requests of a batch, 1 otherwise), min_len, max_len (of those
                               accesses) */
    TESSI_EV_LOCK,          /* a lock (flag: exclusive) or unlock (op 1) call: off, len */
    TESSI_EV_LOCK_FALLBACK, /* a caller goes on without a lock the storage refused: off, len */
    TESSI_EV_ACCESS,        /* an access of len data bytes begins */
    TESSI_EV_REGIONS,       /* n contiguous file regions were requested */
    TESSI_EV_METHOD,        /* method (TESS_METHOD_*) runs an access; flag: the cost model is
                               the documented defaults */
    TESSI_EV_DECISION,      /* `auto` chose method: flag: reused the previous estimate; est[0..
                               nest): the model's seconds per TESS_METHOD_* id; n: regions
                               looked at; scale: data of the access / data looked at */
    TESSI_EV_BUFFER,        /* a method holds a staging buffer of len bytes */
    TESSI_EV_EXCHANGE,      /* collective: seconds exchanging (waiting included); n: bytes of
                               this process's access moved to or from another process; len:
                               bytes packed into or unpacked from staging buffers */
    TESSI_EV_REQUEST,       /* collective: len bytes of access descriptions sent; n: what
                               (offset, length) pairs would have cost */
    TESSI_EV_SERVER,        /* a driver sent n requests to storage servers; flag: each ran a
                               program on its server (datatype I/O) */
    TESSI_EV_IO_CALLS       /* n consecutive storage calls of one access each, reported
                               together: op, off (the first call's), len and moved (sums over
                               the calls, moved counting only calls that moved bytes), seconds
                               (in all), min_len, max_len. Sent to a file's own tracer instead
                               of n TESSI_EV_IO events only while no hook is installed
                               (tessi_tracer_hooked): a hook sees every call. */
} tessi_event_kind;

typedef struct tessi_event {
    tessi_event_kind kind;
    int op;
    int method;
    bool flag;
    int64_t off, len, moved, n, min_len, max_len;
    double seconds, scale;
    const double *est;
    int nest;
} tessi_event;

/** Version of struct tessi_tracer. */
#define TESSI_TRACER_VERSION 1

/** A tracer: receives every event with its context. Must not fail, block or call back. */
struct tessi_tracer {
    int version;      /* TESSI_TRACER_VERSION */
    const char *name;
    void (*event)(void *ctx, const tessi_event *e);
};

/** Where one file's events go: its own tracer (the counters) with its context. */
typedef struct tessi_trace {
    const struct tessi_tracer *tracer;
    void *ctx;
} tessi_trace;

/** The counters of tess_stats as a tracer (ctx: the tess_stats they accumulate in). */
extern const struct tessi_tracer tessi_stats_tracer;

/**
 * Install the process-wide hook (NULL: none, the default). Every event of every file goes to it
 * after the file's own tracer. Install before files are opened; not thread-safe against
 * concurrent events.
 */
void tessi_tracer_install(const struct tessi_tracer *t, void *ctx);

/** Whether a process-wide hook is installed (events are then reported one by one). */
bool tessi_tracer_hooked(void);

/** Report an event to t's tracer and to the installed hook. */
void tessi_emit(const tessi_trace *t, const tessi_event *e);

/** Reset a tess_stats to "nothing yet" (min_access holds INT64_MAX until the first access). */
void tessi_stats_reset(tess_stats *s);

#endif
