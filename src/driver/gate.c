/*
 * gate.c - the write gate: no lost update between a read-modify-write and any other Tessera
 * writer, and no lock where no race is possible.
 *
 * A read-modify-write (a sieving write of a window with holes) writes back bytes its caller did
 * not mean to write; a plain write by another handle landing between its read and its write-back
 * is lost. The read-modify-write holds a write lock on its window; the question is whether the
 * plain writes of other handles must lock their extents too. They must only while some other
 * handle may read-modify-write, so every writing handle of a file announces what it does with
 * a shared byte-range lock on one of two bytes at the top of the offset space, where no data
 * lies:
 *
 *   U (INT64_MAX - 2): held by a handle whose plain writes go unlocked;
 *   R (INT64_MAX - 1): held by a handle that may read-modify-write.
 *
 * A handle takes U (and keeps it) only if no other handle holds R; it takes R (and may then
 * read-modify-write) only if no other handle holds U. Each takes its byte first and then asks
 * whether another handle holds the other one (the driver's test_lock: F_OFD_GETLK, which takes
 * nothing), so of two handles arriving at once at least one sees the other: a handle writing
 * unlocked and another read-modify-writing never coexist (the argument of Dekker's mutual
 * exclusion, with the file system's lock manager ordering the steps).
 *
 * Admission to R makes the handles that write unlocked switch to locked writes: they test R
 * when they write, at most every TESSI_GATE_POLL seconds, and let go of U when another handle
 * holds it. The newcomer waits up to TESSI_GATE_WAIT for them; a handle that holds U and does
 * not write keeps it, and then the newcomer is refused (it writes only its data, no
 * read-modify-write, and asks again after TESSI_GATE_RETRY). A handle admitted to R keeps it
 * while it read-modify-writes and lets go at the first poll after one that found it idle; a
 * handle writing locked tries for U again at each poll. A single handle on a file is both: it
 * writes unlocked and read-modify-writes under its window locks, at the cost of a few lock
 * calls at open and per poll. A collective write steps aside on every member first
 * (tessi_gate_step_aside): the members hand their data to aggregators and do not poll during
 * the call, so each lets go of U up front and writes (when it stores as an aggregator) locked
 * until its plain writes next ask; the aggregators' admissions then wait for no member.
 *
 * The locks are the file system's (open-file-description locks on POSIX): they hold across
 * processes and, where the file system's locks do, across nodes, and they vanish with a
 * crashed process's descriptors. A hung process that holds U only keeps others from sieving
 * writes. Gate locks go through fault injection but are not counted in tess_stats.lock_ops
 * (they are not taken per access). Where locks cannot be tried without waiting, the gate is
 * static (the rule before it: plain writes lock whenever sieving writes can happen on the
 * file); where the storage has no locks, nothing read-modify-writes; when a gate lock fails,
 * the handle writes locked and never read-modify-writes.
 */
#include "driver/driver.h"

#include <time.h>

#define GATE_U (INT64_MAX - 2)
#define GATE_R (INT64_MAX - 1)

/* Seconds between two tries of an admission. */
#define GATE_NAP 100e-6

enum { TAKE_SHARED, RELEASE };

/* Take byte b shared or let it go (fault injection applies; not a counted lock call). */
static int gate_call(tessi_storage *s, int64_t b, int how)
{
    int rc = tessi_fault_check(TESSI_OP_LOCK);
    if (rc)
        return rc;
    return how == TAKE_SHARED ? s->drv->lock(s->h, b, 1, false) : s->drv->unlock(s->h, b, 1);
}

/* Does another handle hold byte b? */
static int others_hold(tessi_storage *s, int64_t b, bool *held)
{
    int rc = tessi_fault_check(TESSI_OP_LOCK);
    if (rc == 0 && (rc = s->drv->test_lock(s->h, b, 1)) >= 0) {
        *held = rc == 1;
        rc = 0;
    }
    return rc;
}

/* A gate lock failed: let go of what is held and write locked from now on, never
 * read-modify-writing (or, where locks cannot be tried after all, fall back to the static
 * rule). */
static void gate_fail(tessi_storage *s, int rc)
{
    tessi_gate *g = &s->gate;
    if (g->unlocked)
        gate_call(s, GATE_U, RELEASE);
    if (g->admitted)
        gate_call(s, GATE_R, RELEASE);
    g->unlocked = g->admitted = false;
    g->kind = rc == -EOPNOTSUPP ? TESSI_GATE_STATIC : TESSI_GATE_BROKEN;
}

/* Take U if no other handle holds R. */
static void go_unlocked(tessi_storage *s)
{
    tessi_gate *g = &s->gate;
    bool held = false;
    int rc = gate_call(s, GATE_U, TAKE_SHARED);
    if (rc == 0)
        g->unlocked = true;
    if (rc == 0 && (rc = others_hold(s, GATE_R, &held)) == 0 && held) {
        rc = gate_call(s, GATE_U, RELEASE);
        g->unlocked = false;
    }
    if (rc)
        gate_fail(s, rc);
}

/* At most every TESSI_GATE_POLL: an idle admission ends, U is given up when another handle
 * holds R, and taken again when none does. */
static void poll_due(tessi_storage *s)
{
    tessi_gate *g = &s->gate;
    double now = tessi_now();
    bool held = false;
    int rc = 0;
    if (now - g->polled < TESSI_GATE_POLL)
        return;
    g->polled = now;
    if (g->admitted && !g->used) {
        rc = gate_call(s, GATE_R, RELEASE);
        g->admitted = false;
    }
    g->used = false;
    if (rc == 0 && g->unlocked && (rc = others_hold(s, GATE_R, &held)) == 0 &&
        held) {
        rc = gate_call(s, GATE_U, RELEASE);
        g->unlocked = false;
    } else if (rc == 0 && !g->unlocked && !g->aside) {
        go_unlocked(s);
        return;
    }
    if (rc)
        gate_fail(s, rc);
}

void tessi_gate_open(tessi_storage *s, bool writable, bool may_sieve)
{
    tessi_gate *g = &s->gate;
    *g = (tessi_gate){.kind = TESSI_GATE_NONE, .may_sieve = may_sieve};
    if (!writable)
        return;
    if (!(s->caps & TESSI_CAP_LOCKS) || !s->drv->lock) {
        g->kind = TESSI_GATE_NOLOCKS;
        return;
    }
    if (!s->drv->test_lock) {
        g->kind = TESSI_GATE_STATIC;
        return;
    }
    g->kind = TESSI_GATE_LIVE;
    g->polled = tessi_now();
    go_unlocked(s);
}

void tessi_gate_close(tessi_storage *s)
{
    tessi_gate *g = &s->gate;
    if (g->kind != TESSI_GATE_LIVE)
        return;
    if (g->unlocked)
        gate_call(s, GATE_U, RELEASE);
    if (g->admitted)
        gate_call(s, GATE_R, RELEASE);
    g->unlocked = g->admitted = false;
}

bool tessi_gate_locked_writes(tessi_storage *s)
{
    tessi_gate *g = &s->gate;
    switch (g->kind) {
    case TESSI_GATE_NONE:
    case TESSI_GATE_NOLOCKS: return false;
    case TESSI_GATE_STATIC: return g->may_sieve;
    case TESSI_GATE_LIVE:
        g->aside = false;
        poll_due(s);
        return g->kind != TESSI_GATE_LIVE || !g->unlocked;
    default: return true;
    }
}

bool tessi_gate_step_aside(tessi_storage *s)
{
    tessi_gate *g = &s->gate;
    if (g->kind != TESSI_GATE_LIVE)
        return tessi_gate_locked_writes(s);
    g->aside = true;
    if (g->unlocked) {
        int rc = gate_call(s, GATE_U, RELEASE);
        g->unlocked = false;
        if (rc)
            gate_fail(s, rc);
    }
    return true;
}

static void nap(void)
{
    struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)(GATE_NAP * 1e9)};
    nanosleep(&ts, NULL);
}

bool tessi_gate_admit(tessi_storage *s)
{
    tessi_gate *g = &s->gate;
    bool held = true;
    if (g->kind == TESSI_GATE_STATIC)
        return true;
    if (g->kind != TESSI_GATE_LIVE)
        return false;
    poll_due(s);
    if (g->kind == TESSI_GATE_LIVE && g->admitted) {
        g->used = true;
        return true;
    }
    double now = tessi_now(), deadline = now + TESSI_GATE_WAIT;
    if (g->kind != TESSI_GATE_LIVE || now < g->retry)
        return false;
    /* give up U first (two newcomers holding it would wait for each other), take R, and wait
     * for the other holders of U to notice */
    int rc = g->unlocked ? gate_call(s, GATE_U, RELEASE) : 0;
    g->unlocked = false;
    if (rc == 0 && (rc = gate_call(s, GATE_R, TAKE_SHARED)) == 0)
        g->admitted = true;
    while (rc == 0 && (rc = others_hold(s, GATE_U, &held)) == 0 && held &&
           tessi_now() < deadline)
        nap();
    if (rc) {
        gate_fail(s, rc);
        return false;
    }
    if (held) { /* refused: a handle writing unlocked did not notice in time */
        if ((rc = gate_call(s, GATE_R, RELEASE)))
            gate_fail(s, rc);
        g->admitted = false;
        g->retry = tessi_now() + TESSI_GATE_RETRY;
        return false;
    }
    g->used = true;
    if (!g->aside)
        go_unlocked(s); /* alone on the file: plain writes stay unlocked */
    return g->kind == TESSI_GATE_LIVE;
}
