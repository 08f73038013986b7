/*
 * team.c - teams (tess_team_create, tess_team_free), their barrier and verdicts, the team state
 * of a file (file pointer, helper handles) and the collective open and close (team.h).
 *
 * A team without a barrier of its caller's uses its own (tessi_team_sync: spin briefly, then
 * a futex), which also serves a call's later barriers once every member is known to be in it.
 * Helper handles: paper 001's initializer opens the file once per worker, so that every worker
 * moves its blocks through its own handle (its own storage handle, counters, view and method
 * memory): workers share nothing while they move data.
 */
#include "team/team.h"

#include "core/file.h"

#include <limits.h>
#include <linux/futex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Spins (pause instructions, 40-100 ns each here) of a member waiting at the team's own barrier
 * before it sleeps: a budget between these bounds, some 0.5 to 200 us */
#define SPIN_MIN 8
#define SPIN_MAX 2048

int tess_team_create(int size, tess_team_barrier_fn barrier, void *ctx, tess_team **out)
{
    if (size < 1 || !out)
        return tessi_error(TESS_ERR_ARG, "tess_team_create: %s",
                           size < 1 ? "size < 1" : "out is NULL");
    tess_team *t = calloc(1, sizeof *t);
    void *slots = NULL; /* cache-line aligned: members write their own slots at once */
    if (!t || posix_memalign(&slots, 64, sizeof *t->slots * (size_t)size) != 0) {
        free(t);
        return tessi_error(TESS_ERR_NOMEM, "tess_team_create: out of memory");
    }
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    *t = (tess_team){.size = size, .barrier = barrier, .ctx = ctx, .slots = slots};
    t->own.spin = size <= cpus;
    t->own.budget = t->meet.budget = SPIN_MIN;
    memset(t->slots, 0, sizeof *t->slots * (size_t)size);
    *out = t;
    return 0;
}

void tess_team_free(tess_team *t)
{
    if (!t)
        return;
    for (int r = 0; r < t->size; r++) {
        tessi_tplan_release(&t->slots[r].plan);
        tessi_tpart_release(&t->slots[r].part);
        tessi_tpart_release(&t->slots[r].own);
    }
    free(t->slots);
    free(t);
}

int tess_team_size(const tess_team *t)
{
    return t ? t->size : 0;
}

static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ volatile("yield");
#endif
}

/* Sleep while *word holds val (at most rel; NULL: no limit), and wake every sleeper on word. */
static void sleep_on(_Atomic unsigned *word, unsigned val, const struct timespec *rel)
{
    syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, val, rel, NULL, 0);
}

static void wake_all(_Atomic unsigned *word)
{
    syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

void tessi_team_sync(tess_team *t)
{
    tessi_tbar *b = &t->own;
    unsigned g = atomic_load_explicit(&b->gen, memory_order_acquire);
    if (atomic_fetch_add_explicit(&b->count, 1, memory_order_acq_rel) == (unsigned)t->size - 1) {
        atomic_store_explicit(&b->count, 0, memory_order_relaxed);
        atomic_store(&b->gen, g + 1); /* seq_cst with the load of sleepers: see below */
        if (atomic_load(&b->sleepers))
            wake_all(&b->gen);
        return;
    }
    /* adaptive: a spin that ended the wait doubles the next member's budget, one that did not
     * halves it (down to SPIN_MIN): on a busy machine members sleep almost at once */
    int budget = b->spin ? atomic_load_explicit(&b->budget, memory_order_relaxed) : 0;
    for (int i = 0; i < budget; i++) {
        if (atomic_load_explicit(&b->gen, memory_order_acquire) != g) {
            if (budget < SPIN_MAX)
                atomic_store_explicit(&b->budget, budget * 2, memory_order_relaxed);
            return;
        }
        cpu_relax();
    }
    if (budget > SPIN_MIN)
        atomic_store_explicit(&b->budget, budget / 2, memory_order_relaxed);
    /* sleepers before gen (seq_cst): the last member either sees this sleeper and wakes it, or
     * has changed gen before this load, and the futex does not sleep on a changed gen */
    atomic_fetch_add(&b->sleepers, 1);
    while (atomic_load(&b->gen) == g)
        sleep_on(&b->gen, g, NULL);
    atomic_fetch_sub(&b->sleepers, 1);
}

void tessi_team_barrier(tess_team *t, int rank)
{
    (void)rank;
    if (!t->barrier)
        tessi_team_sync(t);
    else if (t->size > 1) /* one member meets nobody (a runtime's barrier of one may still
                           * cost a system call: libgomp's passive one does) */
        t->barrier(t->ctx);
}

int tess_team_barrier(tess_team *t, int rank)
{
    if (!t || rank < 0 || rank >= t->size)
        return tessi_error(TESS_ERR_ARG, "tess_team_barrier: %s", t ? "rank outside the team"
                                                                   : "the team is NULL");
    tessi_team_barrier(t, rank);
    return 0;
}

void tessi_team_publish(tess_team *t, int rank, const tessi_slot *mine, bool meet)
{
    tessi_slot *s = &t->slots[rank];
    s->seq++;
    s->op = mine->op;
    s->rc = mine->rc;
    s->f = mine->f;
    s->a = mine->a;
    s->bytes = mine->bytes;
    s->path = mine->path;
    s->flags = mine->flags;
    if (!meet)
        tessi_team_barrier(t, rank);
}

/* ------------------------------------------------------------------ the opening meeting */

#define MEET_ABANDONED (UINT64_C(1) << 32)
#define MEET_ROUND (UINT64_C(1) << 33)
#define MEET_COUNT (MEET_ABANDONED - 1)
/* How long a member waits at the opening meeting of a team with a caller's barrier before it
 * abandons the round: members that took another team object never come (an error on every
 * member, after this wait); members that are merely late meet the others at the caller's
 * barrier instead (correct, one meeting dearer) */
#define MEET_PATIENCE_S 0.02
#define MEET_SHORT_S 50e-6

int tessi_team_meet(tess_team *t, bool *aborter)
{
    tessi_tmeet *m = &t->meet;
    *aborter = false;
    /* rel before counting in: it cannot change before this member is counted */
    unsigned g = atomic_load(&m->rel);
    uint64_t v = atomic_load(&m->state), next;
    do {
        if (v & MEET_ABANDONED)
            return TESSI_MEET_ABANDONED;
        next = (v & MEET_COUNT) + 1 == (uint64_t)t->size ? (v & ~MEET_COUNT) + MEET_ROUND
                                                           : v + 1;
    } while (!atomic_compare_exchange_weak(&m->state, &v, next));
    if ((next & MEET_COUNT) == 0)
        return TESSI_MEET_LAST;
    uint64_t round = v & ~(MEET_COUNT | MEET_ABANDONED);
    double start = tessi_now();
    /* spin first when every member has a CPU; the budget adapts (as the team barrier's) to
     * the waits this meeting has: a spin that ended the wait, or a sleep that was over within
     * MEET_SHORT_S (a longer spin would have caught it), doubles it, a longer sleep halves it */
    int budget = t->own.spin ? atomic_load_explicit(&m->budget, memory_order_relaxed) : 0;
    for (int i = 0; i < budget; i++) {
        if (atomic_load(&m->rel) != g) {
            if (budget < SPIN_MAX)
                atomic_store_explicit(&m->budget, budget * 2, memory_order_relaxed);
            return TESSI_MEET_RELEASED;
        }
        cpu_relax();
    }
    bool patient = !t->barrier; /* every member uses this object: wait as long as it takes */
    atomic_fetch_add(&m->sleepers, 1); /* before rel (seq_cst): see tessi_team_sync */
    int how = 0;
    while (!how) {
        if (atomic_load(&m->rel) != g) {
            how = TESSI_MEET_RELEASED;
            break;
        }
        v = atomic_load(&m->state);
        if ((v & ~(MEET_COUNT | MEET_ABANDONED)) != round) {
            patient = true; /* the round is complete: the last member releases it */
        } else if (v & MEET_ABANDONED) {
            how = TESSI_MEET_ABANDONED;
            break;
        }
        if (patient) {
            sleep_on(&m->rel, g, NULL);
            continue;
        }
        long ns = (long)((MEET_PATIENCE_S - (tessi_now() - start)) * 1e9);
        if (ns > 0) {
            sleep_on(&m->rel, g, &(struct timespec){.tv_sec = ns / 1000000000L,
                                                    .tv_nsec = ns % 1000000000L});
        } else if (atomic_compare_exchange_strong(&m->state, &v, v | MEET_ABANDONED)) {
            *aborter = true; /* wake the others: they see the state and leave too */
            wake_all(&m->rel);
            how = TESSI_MEET_ABANDONED;
        }
    }
    atomic_fetch_sub(&m->sleepers, 1);
    if (t->own.spin && how == TESSI_MEET_RELEASED) {
        bool quick = tessi_now() - start < MEET_SHORT_S;
        if (quick && budget < SPIN_MAX)
            atomic_store_explicit(&m->budget, budget * 2, memory_order_relaxed);
        else if (!quick && budget > SPIN_MIN)
            atomic_store_explicit(&m->budget, budget / 2, memory_order_relaxed);
    }
    return how;
}

void tessi_team_meet_release(tess_team *t)
{
    tessi_tmeet *m = &t->meet;
    atomic_fetch_add(&m->rel, 1); /* seq_cst with the load of sleepers: see tessi_team_sync */
    if (atomic_load(&m->sleepers))
        wake_all(&m->rel);
}

void tessi_team_meet_reset(tess_team *t)
{
    uint64_t v = atomic_load(&t->meet.state);
    atomic_store(&t->meet.state, (v & ~(MEET_COUNT | MEET_ABANDONED)) + MEET_ROUND);
}

int tessi_team_verdict(const tess_team *t, int rank, const char *who, bool results)
{
    const tessi_slot *s = t->slots;
    int mine = rank < 0 ? 0 : results ? s[rank].res_rc : s[rank].rc;
    if (mine)
        return mine; /* this member's own message stands */
    for (int r = 0; r < t->size && !results; r++)
        if (s[r].seq != s[rank < 0 ? 0 : rank].seq)
            return tessi_error(TESS_ERR_ARG, "%s: member %d is not in this call (it passed "
                               "another file, or its calls differ)", who, r);
    for (int r = 0; r < t->size; r++) {
        int rc = results ? s[r].res_rc : s[r].rc;
        if (rc)
            return tessi_error(rc, "%s: failed on member %d: %s%s%s", who, r, tess_strerror(rc),
                               results ? ": " : "", results ? s[r].why : "");
    }
    return 0;
}

void tessi_team_realign(tess_team *t, int rank)
{
    tessi_slot *s = t->slots;
    uint64_t top = 0;
    int writer = 0;
    for (int r = 0; r < t->size; r++)
        top = s[r].seq > top ? s[r].seq : top;
    while (s[writer].seq != top)
        writer++;
    tessi_team_barrier(t, rank); /* every member of this object has read the counts */
    for (int r = 0; rank == writer && r < t->size; r++)
        s[r].seq = top;
}

/* ------------------------------------------------------------------ file state */

static void team_file_free(void *p)
{
    tessi_team_file *tf = p;
    for (int j = 0; j < tf->nhelpers; j++)
        if (tf->helper[j])
            tess_file_close(tf->helper[j]);
    free(tf->helper);
    free(tf->viewed);
    free(tf);
}

static void team_file_stats(const void *p, tess_stats *acc)
{
    const tessi_team_file *tf = p;
    for (int j = 0; j < tf->nhelpers; j++) {
        tess_file *h = tf->helper[j];
        if (h && acc)
            tess_stats_combine(acc, &h->st.stats, sizeof *acc);
        else if (h)
            tessi_stats_reset(&h->st.stats);
    }
}

static const tessi_file_team team_file_ops = {.free = team_file_free, .stats = team_file_stats};

int tessi_team_file_get(tess_file *f, int nmembers, tessi_team_file **out)
{
    tessi_team_file *tf = f->team;
    bool made = !tf;
    if (made) {
        if (!(tf = calloc(1, sizeof *tf)))
            return tessi_error(TESS_ERR_NOMEM, "team access: out of memory");
        tf->s_min = f->hv[TESSI_H_OMP_SMIN].i;
        tf->active = (int)f->hv[TESSI_H_OMP_ACTIVE].i;
    }
    int want = nmembers; /* members moving their own pieces: every one may need a handle */
    if (want > tf->nhelpers) {
        tess_file **h = realloc(tf->helper, sizeof *h * (size_t)want);
        if (h)
            tf->helper = h;
        bool *v = h ? realloc(tf->viewed, sizeof *v * (size_t)want) : NULL;
        if (v)
            tf->viewed = v;
        if (!h || !v) {
            if (made)
                team_file_free(tf);
            return tessi_error(TESS_ERR_NOMEM, "team access: out of memory");
        }
        for (int j = tf->nhelpers; j < want; j++) {
            tf->helper[j] = NULL;
            tf->viewed[j] = false;
        }
        tf->nhelpers = want;
    }
    if (made) { /* complete before members read it without a meeting (tessi_team_file_peek) */
        f->team_ops = &team_file_ops;
        __atomic_store_n(&f->team, tf, __ATOMIC_RELEASE);
    }
    *out = tf;
    return 0;
}

tessi_team_file *tessi_team_file_peek(const tess_file *f)
{
    return __atomic_load_n(&f->team, __ATOMIC_ACQUIRE);
}

int tessi_team_helper(tess_file *f, tessi_team_file *tf, int j, tess_file **out)
{
    if (!tf->helper[j]) {
        tess_info *info = NULL;
        char why[300];
        int rc = tess_file_get_info(f, &info);
        if (rc == 0)
            rc = tess_file_open(f->path, f->flags & ~(TESS_CREATE | TESS_EXCL), info,
                                &tf->helper[j]);
        tess_info_free(info);
        if (rc) {
            snprintf(why, sizeof why, "%s", tess_last_error());
            return tessi_error(rc, "team access: cannot open the worker's handle: %s", why);
        }
    }
    *out = tf->helper[j];
    return 0;
}

/* ------------------------------------------------------------------ open, close */

/* Publish, meet, and agree: the local checks of every member, then that all passed the same
 * path and flags (open) or file (close). */
static int meet(tess_team *t, int rank, const char *who, tessi_slot *mine)
{
    tessi_slot *s = t->slots;
    tessi_team_publish(t, rank, mine, false);
    int rc = tessi_team_verdict(t, rank, who, false);
    for (int r = 1; rc == 0 && r < t->size; r++) {
        bool same = s[r].op == s[0].op && s[r].flags == s[0].flags && s[r].f == s[0].f;
        if (same && s[0].path)
            same = strcmp(s[r].path, s[0].path) == 0;
        if (!same)
            rc = tessi_error(TESS_ERR_ARG, "%s: member %d passes a different %s from member 0",
                             who, r, s[r].op != s[0].op ? "call"
                                     : s[r].f != s[0].f ? "file" : s[0].path ? "path or flags"
                                                                              : "flags");
    }
    if (rc)
        tessi_team_realign(t, rank);
    return rc;
}

/* The end of a collective open or close: member 0's result (and handle) to every member. */
static int finish(tess_team *t, int rank, const char *who, int rc, tess_file *f)
{
    tessi_slot *mine = &t->slots[rank];
    mine->res_rc = rc;
    mine->res_f = f;
    snprintf(mine->why, sizeof mine->why, "%s", rc ? tess_last_error() : "");
    tessi_team_barrier(t, rank);
    return tessi_team_verdict(t, rank, who, true);
}

static int check_member(const tess_team *t, int rank, const char *who)
{
    if (!t)
        return tessi_error(TESS_ERR_ARG, "%s: the team is NULL (a call outside a team)", who);
    if (rank < 0 || rank >= t->size)
        return tessi_error(TESS_ERR_ARG, "%s: member %d is not in the team of %d", who, rank,
                           t->size);
    return 0;
}

int tess_team_open(tess_team *t, int rank, const char *path, int flags, const tess_info *info,
                   tess_file **out)
{
    const char *who = "tess_team_open";
    int rc = check_member(t, rank, who);
    if (rc)
        return rc;
    if (!path || !out)
        rc = tessi_error(TESS_ERR_ARG, "%s: %s is NULL", who, path ? "out" : "path");
    tessi_slot mine = {.op = TESSI_TEAM_OPEN, .rc = rc, .path = path ? path : "", .flags = flags};
    tess_file *f = NULL;
    rc = meet(t, rank, who, &mine);
    int done = rc == 0 && rank == 0 ? tess_file_open(path, flags, info, &f) : 0;
    int verdict = finish(t, rank, who, done, f);
    if (rc == 0 && verdict == 0)
        *out = t->slots[0].res_f;
    return rc ? rc : verdict;
}

int tess_team_close(tess_team *t, int rank, tess_file *f)
{
    const char *who = "tess_team_close";
    int rc = check_member(t, rank, who);
    if (rc)
        return rc;
    if (!f)
        rc = tessi_error(TESS_ERR_ARG, "%s: f is NULL", who);
    tessi_slot mine = {.op = TESSI_TEAM_CLOSE, .rc = rc, .f = f};
    rc = meet(t, rank, who, &mine);
    int done = rc == 0 && rank == 0 ? tess_file_close(f) : 0;
    int verdict = finish(t, rank, who, done, NULL);
    return rc ? rc : verdict;
}
