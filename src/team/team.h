/*
 * team.h - thread-collective I/O (tessera_team.h) inside the library: the team and its slots,
 * the per-file state (file pointer, helper handles), and paper 001's components as functions:
 * the base function gathers every member's arguments into its slot (one barrier), the
 * contiguity analyzer and the work manager turn them into a plan (plan.c), the members the plan
 * names move their blocks through their own helper handle (access.c), and a last barrier ends
 * the call. Members meet only at the team's barrier: no lock in user code, none on the handle.
 *
 * One call, every member (access.c):
 *   a page-cache read whose pieces make one run at a place it knows (explicit offsets) or
 *   guesses (its place in its last call plus that call's bytes): read it now (speculate);
 *   publish its arguments and local verdict in its slot; the opening meeting B1
 *   (tessi_team_meet): the last member to arrive agrees on the verdict from all slots; when
 *   every member has read its pieces at its right place, it only agrees on where data ended,
 *   writes every member's result, moves the file pointer and releases the others (one meeting,
 *   members reading in parallel); when the call is smaller than s_min (one block of the work
 *   manager) or failed, it moves
 *   the data itself, writes every member's result, moves the file pointer and releases the
 *   others: the call ends there (one meeting, and no member woken to move data). Else it
 *   releases them to go on (FULL), and every member:
 *   agrees on the verdict from all slots (every member computes the same);
 *   plan: every member alone when the pieces are few, else member 0 with a barrier B2 after
 *   (a member whose pieces make one large run in the file moves it itself: not in the plan);
 *   move its own run and its blocks of the plan, record the result in its slot; barrier B3;
 *   agree on the result from all slots; member 0 moves the file pointer.
 * When B1 was abandoned (a team with a caller's barrier whose members did not all come to this
 * team object in time) the members meet at the caller's barrier and go on as FULL. B2 and B3
 * are the team's own when the arguments agreed (every member is then known to be in this team
 * object), else B3 is the team's barrier, after one more (tessi_team_realign) that puts the
 * members' call counts back in step.
 * Slot fields written before B1 (arguments) and after it (results) are apart, so a member that
 * has left a call and starts its next one never overwrites what a slower member still reads;
 * the plan and the helpers are used only between B1 and the end of the call.
 */
#ifndef TESS_TEAM_H
#define TESS_TEAM_H

#include "tessera_team.h"

#include "base/base.h"

#include <stdatomic.h>

/* ------------------------------------------------------------------ plan (plan.c) */

/** A piece of the access in data order: memory, length, file offset. */
typedef struct tessi_tpiece {
    char *mem;
    int64_t len, off;
} tessi_tpiece;

/** A file-contiguous run: [off, off + len) from the iovecs [iov0, iov0 + niov) of the plan. */
typedef struct tessi_trun {
    int64_t off, len;
    int64_t iov0, niov;
} tessi_trun;

/**
 * A plan: the pieces, the runs the analyzer made of them (file order), and the work manager's
 * split: `workers` members, member j moves the bytes [j * share, (j + 1) * share) of the run
 * stream. Arrays grow and are kept between calls.
 */
typedef struct tessi_tplan {
    tessi_tpiece *pc;
    int64_t npc, cap_pc;
    struct iovec *iov;
    int64_t niov, cap_iov;
    tessi_trun *runs;
    int64_t nruns, cap_runs;
    int64_t total;   /* data bytes */
    int workers;
    int64_t share;
} tessi_tplan;

/** One member's part of a plan: runs cut to its share, with their own iovecs. */
typedef struct tessi_tpart {
    struct iovec *iov;
    int64_t niov, cap_iov;
    tessi_trun *runs;
    int64_t nruns, cap_runs;
    int64_t bytes;
} tessi_tpart;

/** Release the arrays of a plan / a part. */
void tessi_tplan_release(tessi_tplan *p);
void tessi_tpart_release(tessi_tpart *p);

/** Append n pieces (zero-length ones are skipped). TESS_ERR_NOMEM. */
int tessi_tplan_add(tessi_tplan *p, const tessi_tpiece *pc, int64_t n);

/**
 * The contiguity analyzer (after paper 001 3.3.2) over the pieces added: hint TESS_TEAM_CONTIG
 * checks in one pass that every piece follows the previous one in memory and in the file
 * (TESS_ERR_ARG naming the first that does not) and makes one run of one iovec; NONCONTIG makes
 * one run per piece; UNKNOWN merges pieces adjacent in the file into runs and, within a run,
 * pieces adjacent in memory into one iovec. Explicit offsets (sorted: false) are put in file
 * order first (stable). Deterministic: every member computing it gets the same plan.
 */
int tessi_tplan_analyze(tessi_tplan *p, int hint, bool sorted);

/**
 * The work manager: split the runs into `workers` shares of at least s_min bytes (rounded up to
 * 4 KiB) for the first min(active, team) members; at least one worker when there is data.
 */
void tessi_tplan_split(tessi_tplan *p, int64_t s_min, int active, int team);

/** Member j's part (empty when j >= workers). TESS_ERR_NOMEM. */
int tessi_tplan_part(const tessi_tplan *p, int j, tessi_tpart *out);

/**
 * A member's own pieces a (one run in the file: implicit offsets from at, else a's offsets
 * without gaps) as a part of one run, zero-length pieces left out. TESS_ERR_NOMEM.
 */
int tessi_tpart_own(tessi_tpart *out, const tess_team_args *a, int64_t at);

/* ------------------------------------------------------------------ team (team.c) */

/** What a member publishes for the call in progress (one per member, cache-line apart). */
typedef struct tessi_slot {
    /* arguments: written before B1 */
    uint64_t seq;           /* the member's collective calls on this team, this one included:
                               equal on every member of one call (a member that took another
                               team object for the call, e.g. with another file, differs) */
    int op;                 /* TESSI_TEAM_* */
    int rc;                 /* the member's local verdict */
    tess_file *f;
    tess_team_args a;
    int64_t bytes;          /* data bytes of its pieces */
    const char *path;       /* open */
    int flags;              /* open */
    bool spec;              /* a read whose pieces it moved before B1 (access.c), as one run
                               at spec_off: spec_rc its verdict, spec_eof where data ran out */
    int spec_rc;
    int64_t spec_off, spec_eof;
    /* results: written after B1 */
    int res_rc;
    int plan_rc;            /* member 0's planning, when it plans for everybody */
    int64_t res_base;       /* implicit offsets: where the team's data starts (member 0) */
    int64_t res_total;      /* data bytes of the call (member 0; hybrid: of every process) */
    tess_file *res_f;       /* open: the handle member 0 opened */
    int64_t res_eof;        /* reads: the lowest file offset found missing (INT64_MAX: none) */
    int64_t res_bytes;      /* its bytes moved, when the last member moved everything */
    char why[200];          /* the message of res_rc */
    tessi_tplan plan;        /* this member's own plan (when every member plans) */
    tessi_tpart part;        /* its share of the plan */
    tessi_tpart own;         /* its own pieces, when it moves them itself (access.c) */
    /* where its pieces start in its next implicit-offset read of spec_f, if the team's calls
     * keep their lengths: written by the member itself (FULL) or by the last member (DONE);
     * apart from the results, which the last member writes on every call */
    const tess_file *spec_f;
    int64_t spec_next;
    const tess_file *seen_f; /* the file of its last call that succeeded (the member's own) */
    char pad[64];
} tessi_slot;

enum { TESSI_TEAM_READ = 1, TESSI_TEAM_WRITE, TESSI_TEAM_OPEN, TESSI_TEAM_CLOSE };

/**
 * The team's own barrier: an arrival count and a generation. A member that is not the last
 * spins on the generation when the team has no more members than CPUs (members on CPUs of their
 * own arrive within microseconds: no system call), then sleeps on it (futex); the last wakes
 * sleepers only when there are any. The spin budget adapts: it doubles when spinning ended the
 * wait and halves when it did not, so that on a busy machine (a member's peers not running)
 * members go to sleep almost at once, as a passive OpenMP barrier does.
 */
typedef struct tessi_tbar {
    _Atomic unsigned count, gen, sleepers;
    _Atomic int budget; /* pauses before sleeping */
    bool spin;          /* no more members than CPUs */
} tessi_tbar;

/**
 * The meeting that opens a read or write (team.h, access.c): every member counts itself in and
 * the one that completes the count (the last to arrive) goes on at once, while the others wait
 * for it to release them; it decides the call and, when the call is small, moves its data, so
 * that a call costs one meeting. state: the round (bits 33 and up), abandoned (bit 32) and the
 * members counted in (bits 0-31). rel: the release generation (futex word). A team with a
 * caller's barrier may have members that took another team object for the call (another file,
 * omp.c): they never arrive here, so a member that has waited MEET_PATIENCE abandons the round
 * and every member, told by the state, meets at the caller's barrier instead.
 */
typedef struct tessi_tmeet {
    _Atomic uint64_t state;
    _Atomic unsigned rel, sleepers;
    _Atomic int budget; /* spins before sleeping (adaptive, as tessi_tbar's) */
} tessi_tmeet;

/** How a member left tessi_team_meet. */
enum {
    TESSI_MEET_LAST = 1,  /* it completed the count: decide, then tessi_team_meet_release */
    TESSI_MEET_RELEASED,  /* the last released it: the call record (t->call_*) is set */
    TESSI_MEET_ABANDONED, /* the round was abandoned: meet at the caller's barrier */
};

/** The call record the last member writes before it releases the others. */
enum { TESSI_CALL_DONE = 1, TESSI_CALL_FULL };

struct tess_team {
    int size;
    tess_team_barrier_fn barrier; /* NULL: own is the team's only barrier */
    void *ctx;
    tessi_tbar own;
    tessi_tmeet meet;
    int call_mode;       /* DONE: the last decided and moved everything; FULL: all go on */
    int call_rc;         /* DONE: the call's verdict for a member without a failure of its own */
    char call_why[300];  /* its message */
    tessi_slot *slots;
};

/**
 * Publish this member's arguments (*mine: op, rc, f, a, bytes, path, flags; its seq is counted
 * here) and wait for every member (B1), or (meet) only publish them for tessi_team_meet. The verdict of the arguments follows with
 * tessi_team_verdict, which also fails when the members' sequence numbers differ.
 */
void tessi_team_publish(tess_team *t, int rank, const tessi_slot *mine, bool meet);

/**
 * Wait for every member (the team's barrier: the caller's, else its own). This one works even
 * when a member took another team object for the call (it meets the others at the caller's
 * barrier all the same, and the verdict tells): B1, and every barrier of a call whose
 * arguments failed.
 */
void tessi_team_barrier(tess_team *t, int rank);

/**
 * Wait for every member at the team's own barrier (cheaper than an OpenMP runtime's passive
 * one): only once the verdict of B1 has shown that every member uses this team object.
 */
void tessi_team_sync(tess_team *t);

/**
 * Count this member in at the meeting that opens a read or write (tessi_tmeet), after its slot
 * is published (tessi_team_publish with meet: no barrier), and wait unless it is the last.
 * *aborter: this member abandoned the round; after the caller's barrier it calls
 * tessi_team_meet_reset (every member has then given up on the round).
 */
int tessi_team_meet(tess_team *t, bool *aborter);

/** The last member: the call record is written; let the others go. */
void tessi_team_meet_release(tess_team *t);

/** Open the next round after an abandoned one (its aborter, after the caller's barrier). */
void tessi_team_meet_reset(tess_team *t);

/**
 * The verdict of a call after B1 from every slot, the same on every member: this member's own
 * failure, else the first failed member's ("<who>: failed on member N: ..."), else 0. rank -1:
 * the verdict of a member without a failure of its own.
 */
int tessi_team_verdict(const tess_team *t, int rank, const char *who, bool results);

/**
 * After arguments that failed (on every member: the verdict), before the call's last barrier:
 * set every slot's call count to the highest, so that members that took another team object for
 * the call (and so missed it here) are in step again, and the next call in which every member
 * takes this object succeeds. One barrier (the team's), which every member of the call meets,
 * whatever object it took.
 */
void tessi_team_realign(tess_team *t, int rank);

/* ------------------------------------------------------------------ file state (team.c) */

/** The team state of a file: the shared file pointer and one helper handle per worker. */
typedef struct tessi_team_file {
    int64_t fp;            /* implicit-offset calls: the next byte */
    int64_t s_min;         /* from the file's hints (resolved at open) */
    int active;
    tess_file **helper;    /* helper[j]: member j's own handle on the file (NULL: not yet) */
    bool *viewed;          /* helper[j] has a view other than the default */
    int nhelpers;
} tessi_team_file;

/** The team state of f, made when missing (by member 0 before B1, alone). */
int tessi_team_file_get(tess_file *f, int nmembers, tessi_team_file **out);

/**
 * The team state of f as a member sees it before the opening meeting (NULL: not made yet);
 * complete when not NULL (tessi_team_file_get publishes it whole).
 */
tessi_team_file *tessi_team_file_peek(const tess_file *f);

/** Member j's helper handle, opened when missing (by member j: the open is its own). */
int tessi_team_helper(tess_file *f, tessi_team_file *tf, int j, tess_file **out);

#endif
