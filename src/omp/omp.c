/*
 * omp.c - paper 001's OpenMP interface (tessera_omp.h) as a thin layer over thread teams
 * (tessera_team.h): it finds the team of a call, each thread's member number, and the file of an
 * int handle; tess_team_* does the rest. Uses only public headers.
 *
 * The team of a call:
 *  - flat (every enclosing team but the innermost has one thread): the innermost OpenMP team.
 *    Its members meet with the runtime's own barrier (`#pragma omp barrier`, orphaned: it binds
 *    to the caller's team); the team object is the file handle's for teams of that size (made
 *    once, by compare-and-swap: no extra meeting per call). Member number:
 *    omp_get_thread_num(). Open and close, which have no handle yet or end it, share a team
 *    object made in a `#pragma omp single copyprivate`.
 *  - nested (an enclosing team has several threads): the threads of all inner teams make one
 *    call. No OpenMP construct binds across teams, so they meet in a rendezvous (one mutex and
 *    condition variable): each brings its ancestor thread ids and team sizes (levels 1..D),
 *    the meeting is complete when those describe a whole tree (every thread of every team
 *    present, inner teams of any size), members are numbered in the order of their ancestor
 *    ids outermost first, and the team object uses the library's own barrier.
 * Outside any parallel region (omp_get_level() == 0) only open and close work, by the one
 * thread there; an access there is an error ("called outside a parallel region").
 */
#include "tessera_omp.h"

#include "tessera_group.h" /* tess_error_set */
#include "tessera_team.h"

#include <errno.h>
#include <fcntl.h>
#include <omp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(off_t) == sizeof(int64_t), "off_t must be 64 bits (offsets are passed as "
                                                 "int64_t arrays)");

/* Handles are FD_BASE + slot: far above any POSIX descriptor, so a POSIX call on one fails. */
#define FD_BASE (1 << 30)
#define MAX_FILES 1024
#define MAX_LEVELS 16
#define MAX_NESTED 1024 /* threads of one nested call */

/* ------------------------------------------------------------------ handles */

#define MAX_TEAM 1024 /* threads of one flat team */

typedef struct handle {
    tess_file *f;        /* NULL: a free slot */
    _Atomic(tess_team *) *flat; /* flat[n]: the team object of OpenMP teams of n threads */
    int closers;         /* members of the closing team done with the slot */
} handle;

static handle table[MAX_FILES];
static pthread_mutex_t table_mu = PTHREAD_MUTEX_INITIALIZER;

static handle *handle_of(int fd)
{
    if (fd < FD_BASE || fd >= FD_BASE + MAX_FILES)
        return NULL;
    handle *h = &table[fd - FD_BASE];
    return h->f ? h : NULL;
}

/* ------------------------------------------------------------------ flat teams */

static void omp_barrier(void *ctx)
{
    (void)ctx;
#pragma omp barrier
}

/* The team object of the thread's flat team of n threads for a call on fd: teams[n], made by
 * the first thread that needs it (the others of the team get the same one: compare-and-swap).
 * Every thread takes its own fd's team without meeting the others first: a thread passing
 * another fd takes another object, but meets the others at the same OpenMP barriers, and the
 * call's sequence numbers (tessera_team.h) make the call fail on every thread. Unknown fds use
 * the stray teams (and fail the same way). NULL: out of memory, or too many threads. */
static _Atomic(tess_team *) stray[MAX_TEAM + 1];

static tess_team *flat_team(int fd, int n)
{
    handle *h = handle_of(fd);
    _Atomic(tess_team *) *teams = h ? h->flat : stray;
    if (n > MAX_TEAM)
        return NULL;
    tess_team *t = atomic_load(&teams[n]), *none = NULL;
    if (!t && tess_team_create(n, omp_barrier, NULL, &t) == 0 &&
        !atomic_compare_exchange_strong(&teams[n], &none, t)) {
        tess_team_free(t); /* another thread of the team made it first */
        t = none;
    }
    return t;
}

static void free_teams(_Atomic(tess_team *) *teams)
{
    for (int n = 0; teams && n <= MAX_TEAM; n++)
        tess_team_free(atomic_load(&teams[n]));
    free(teams);
}

/* ------------------------------------------------------------------ nested teams */

typedef struct leaf {
    int depth;
    int id[MAX_LEVELS], size[MAX_LEVELS]; /* ancestor thread ids and team sizes, levels 1..D */
    int rank;                             /* its member number, set when the meeting is complete */
} leaf;

typedef struct meeting {
    leaf leaves[MAX_NESTED];
    int n, left;
    bool complete, overflow;
    tess_team *team;
} meeting;

static pthread_mutex_t meet_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t meet_cv = PTHREAD_COND_INITIALIZER;
static meeting *open_meeting;  /* the one still gathering (one nested call at a time) */
static tess_team *nested_team; /* the team object of the last nested call */

static int leaf_cmp(const void *a, const void *b)
{
    const leaf *x = *(leaf *const *)a, *y = *(leaf *const *)b;
    for (int l = 0; l < x->depth && l < y->depth; l++)
        if (x->id[l] != y->id[l])
            return x->id[l] - y->id[l];
    return x->depth - y->depth;
}

/* Are the sorted leaves s[lo, hi), all below the same ancestors at levels < lvl, the whole
 * subtree of their team at level lvl (0-based)? */
static bool whole(leaf *const *s, int lo, int hi, int lvl)
{
    if (hi - lo == 1 && s[lo]->depth == lvl)
        return true;
    for (int i = lo; i < hi; i++)
        if (s[i]->depth <= lvl)
            return false;
    int size = s[lo]->size[lvl], want = 0;
    for (int i = lo; i < hi;) {
        int j = i;
        while (j < hi && s[j]->id[lvl] == s[i]->id[lvl])
            j++;
        if (s[i]->id[lvl] != want++ || s[i]->size[lvl] != size || !whole(s, i, j, lvl + 1))
            return false;
        i = j;
    }
    return want == size;
}

/* Join the nested call's meeting; *t and *rank when it is complete (NULL team: out of memory,
 * or more threads than a meeting holds). */
static void nested_member(const leaf *me, tess_team **t, int *rank)
{
    pthread_mutex_lock(&meet_mu);
    meeting *m = open_meeting;
    if (!m && (m = calloc(1, sizeof *m)))
        open_meeting = m;
    if (!m) {
        pthread_mutex_unlock(&meet_mu);
        *t = NULL;
        return;
    }
    int at = m->n < MAX_NESTED ? m->n++ : -1;
    if (at >= 0)
        m->leaves[at] = *me;
    else
        m->overflow = true;
    leaf *sorted[MAX_NESTED];
    for (int i = 0; i < m->n; i++)
        sorted[i] = &m->leaves[i];
    qsort(sorted, (size_t)m->n, sizeof *sorted, leaf_cmp);
    if (whole(sorted, 0, m->n, 0)) {
        for (int i = 0; i < m->n; i++)
            sorted[i]->rank = i;
        if (!nested_team || tess_team_size(nested_team) != m->n) {
            tess_team_free(nested_team); /* its last call is over: every member is here */
            nested_team = NULL;
            tess_team_create(m->n, NULL, NULL, &nested_team);
        }
        m->team = m->overflow ? NULL : nested_team;
        m->complete = true;
        m->left = m->n;
        open_meeting = NULL;
        pthread_cond_broadcast(&meet_cv);
    }
    while (!m->complete)
        pthread_cond_wait(&meet_cv, &meet_mu);
    *t = m->team;
    *rank = at >= 0 ? m->leaves[at].rank : 0;
    if (--m->left == 0)
        free(m);
    pthread_mutex_unlock(&meet_mu);
}

/* ------------------------------------------------------------------ the call */

/* The team of the calling thread for a call on fd, and its member number. Outside a parallel
 * region: *t NULL and 0 returned (the caller decides). -1 with a message on failure. */
static int find_team(const char *who, int fd, tess_team **t, int *rank)
{
    int level = omp_get_level();
    *t = NULL;
    *rank = 0;
    if (level == 0)
        return 0;
    bool nested = false;
    for (int l = 1; l < level; l++)
        nested |= omp_get_team_size(l) > 1;
    if (!nested) {
        *t = flat_team(fd, omp_get_num_threads());
        *rank = omp_get_thread_num();
        if (!*t) /* nothing to meet the others with: they would wait forever */
            return tess_error_set(TESS_ERR_NOMEM, "%s: no team object (out of memory, or "
                                  "more than %d threads)", who, MAX_TEAM), -1;
        return 0;
    }
    leaf me = {.depth = level};
    if (level > MAX_LEVELS)
        return tess_error_set(TESS_ERR_UNSUPPORTED, "%s: more than %d nested levels", who,
                              MAX_LEVELS), -1;
    for (int l = 1; l <= level; l++) {
        me.id[l - 1] = omp_get_ancestor_thread_num(l);
        me.size[l - 1] = omp_get_team_size(l);
    }
    nested_member(&me, t, rank);
    if (!*t)
        return tess_error_set(TESS_ERR_NOMEM, "%s: no team for a nested call (out of memory, "
                              "or more than %d threads)", who, MAX_NESTED), -1;
    return 0;
}

/* One access: the team, then tess_team_read / _write. */
static int team_call(const char *who, int fd, bool write, const struct iovec *iov, int64_t n,
                  const int64_t *offsets, int hint, bool common)
{
    tess_team *t;
    int rank;
    if (find_team(who, fd, &t, &rank))
        return -1;
    if (!t)
        return tess_error_set(TESS_ERR_ARG, "%s: called outside a parallel region (a team "
                              "call needs a team)", who), -1;
    handle *h = handle_of(fd);
    tess_team_args a = {.iov = iov, .offsets = offsets, .n = n, .hint = hint, .common = common};
    int64_t bytes = 0, want = 0;
    int rc = write ? tess_team_write(t, rank, h ? h->f : NULL, &a, &bytes)
                   : tess_team_read(t, rank, h ? h->f : NULL, &a, &bytes);
    if (rc)
        return -1;
    for (int64_t i = 0; i < n; i++)
        want += (int64_t)iov[i].iov_len;
    if (bytes < want)
        return tess_error_set(TESS_ERR_IO, "%s: end of file: %lld of %lld bytes", who,
                              (long long)bytes, (long long)want), -1;
    return 0;
}

/* One piece (the non-list calls). */
static int access1(const char *who, int fd, bool write, const void *buffer, long length,
                   const off_t *offset, int hint, bool common)
{
    /* a negative length is n < 0 for the team's checks: an error on every thread */
    struct iovec iov = {.iov_base = (void *)buffer, .iov_len = length < 0 ? 0 : (size_t)length};
    return team_call(who, fd, write, &iov, length < 0 ? -1 : 1, (const int64_t *)offset, hint,
                     common);
}

/* ------------------------------------------------------------------ open, close */

/* Tessera's open flags of POSIX flags; O_TRUNC and O_DIRECT (the posix driver's hint
 * tess_posix_direct) apart. -1 for flags this interface does not take. */
static int tess_flags(int flags, bool *trunc, bool *direct)
{
    int mode = flags & O_ACCMODE, f = mode == O_RDONLY ? TESS_RDONLY
                                      : mode == O_WRONLY ? TESS_WRONLY
                                      : mode == O_RDWR   ? TESS_RDWR : -1;
    *trunc = flags & O_TRUNC;
    *direct = flags & O_DIRECT;
    if (f < 0 || (flags & ~(O_ACCMODE | O_CREAT | O_EXCL | O_TRUNC | O_DIRECT)))
        return -1;
    return f | (flags & O_CREAT ? TESS_CREATE : 0) | (flags & O_EXCL ? TESS_EXCL : 0);
}

/* A handle for f (truncated with O_TRUNC): *fd, or -1 with a message. */
static int register_file(tess_file *f, bool trunc, int *fd)
{
    int slot = -1, rc = trunc ? tess_file_set_size(f, 0) : 0;
    pthread_mutex_lock(&table_mu);
    for (int i = 0; i < MAX_FILES && slot < 0 && rc == 0; i++)
        if (!table[i].f)
            slot = i;
    _Atomic(tess_team *) *teams = slot >= 0 ? calloc(MAX_TEAM + 1, sizeof *teams) : NULL;
    if (teams)
        table[slot] = (handle){.f = f, .flat = teams};
    pthread_mutex_unlock(&table_mu);
    if (rc == 0 && !teams)
        rc = tess_error_set(TESS_ERR_NOMEM, "omp_file_open_all: %s", slot < 0 ? "too many "
                            "open files" : "out of memory");
    *fd = rc ? -1 : FD_BASE + slot;
    return rc;
}

/* A team for open and close (no handle yet, or the last call on it), released by its last
 * member. */
typedef struct {
    tess_team *t;
    atomic_int users;
} shared_team;

int omp_file_open_all(int *fd, const char *filename, int flags)
{
    const char *who = "omp_file_open_all";
    bool trunc, direct;
    int tflags = tess_flags(flags, &trunc, &direct), rank, level = omp_get_level(), rc;
    tess_file *f = NULL;
    tess_team *t = NULL;
    shared_team *st = NULL;
    tess_info *info = NULL; /* O_DIRECT: tess_posix_direct = enable (the posix driver's hint) */
    if (direct && (tess_info_create(&info) || tess_info_set(info, "tess_posix_direct", "enable")))
        return -1;
    bool nested = false;
    for (int l = 1; l < level; l++)
        nested |= omp_get_team_size(l) > 1;
    if (level > 0 && !nested) {
#pragma omp single copyprivate(st)
        {
            st = calloc(1, sizeof *st);
            if (st && tess_team_create(omp_get_num_threads(), omp_barrier, NULL, &st->t)) {
                free(st);
                st = NULL;
            }
            if (st)
                atomic_init(&st->users, omp_get_num_threads());
        }
        if (!st) {
            tess_info_free(info);
            return tess_error_set(TESS_ERR_NOMEM, "%s: out of memory", who), -1;
        }
        t = st->t;
        rank = omp_get_thread_num();
    } else if (level > 0 && find_team(who, -1, &t, &rank)) {
        tess_info_free(info);
        return -1;
    }
    rc = tflags < 0 ? tess_error_set(TESS_ERR_ARG, "%s: flags 0x%x: need O_RDONLY, O_WRONLY "
                                     "or O_RDWR with O_CREAT, O_EXCL, O_TRUNC, O_DIRECT only",
                                     who, flags)
                    : 0;
    if (!t) { /* outside a parallel region: the one thread there */
        if (rc == 0 && (rc = tess_file_open(filename, tflags, info, &f)) == 0)
            rc = register_file(f, trunc, fd);
        tess_info_free(info);
        return rc ? -1 : 0;
    }
    /* a bad flag still joins the collective open (which then fails everywhere); member 0 makes
     * the handle and writes the shared *fd, the others read it after the barrier */
    rc = tess_team_open(t, rank, filename, rc ? -1 : tflags, info, &f);
    tess_info_free(info);
    if (rc == 0 && rank == 0 && register_file(f, trunc, fd))
        tess_file_close(f);
    if (rc == 0)
        tess_team_barrier(t, rank);
    if (rc == 0 && *fd < 0)
        rc = rank == 0 ? -1 : tess_error_set(TESS_ERR_IO, "%s: failed on member 0 (O_TRUNC "
                                             "or the handle table)", who);
    if (st && atomic_fetch_sub(&st->users, 1) == 1) {
        tess_team_free(st->t);
        free(st);
    }
    return rc ? -1 : 0;
}

int omp_file_close_all(int fd)
{
    const char *who = "omp_file_close_all";
    tess_team *t;
    int rank;
    handle *h = handle_of(fd);
    if (omp_get_level() == 0) {
        if (!h)
            return tess_error_set(TESS_ERR_ARG, "%s: fd %d is not an open file handle", who, fd),
                   -1;
        pthread_mutex_lock(&table_mu);
        free_teams(h->flat);
        tess_file *f = h->f;
        *h = (handle){.f = NULL};
        pthread_mutex_unlock(&table_mu);
        return tess_file_close(f) ? -1 : 0;
    }
    if (find_team(who, fd, &t, &rank))
        return -1;
    int rc = tess_team_close(t, rank, h ? h->f : NULL);
    /* the file is closed unless the arguments were refused: the last member of the team to
     * come back frees the slot and its teams (nobody uses them any more) */
    if (h && rc != TESS_ERR_ARG) {
        pthread_mutex_lock(&table_mu);
        if (++h->closers == tess_team_size(t)) {
            free_teams(h->flat);
            *h = (handle){.f = NULL};
        }
        pthread_mutex_unlock(&table_mu);
    }
    return rc ? -1 : 0;
}

/* ------------------------------------------------------------------ the interface */

int omp_file_read_all(void *buffer, long length, int fd, int hint)
{
    return access1("omp_file_read_all", fd, false, buffer, length, NULL, hint, false);
}

int omp_file_read_at_all(void *buffer, long length, off_t offset, int fd, int hint)
{
    return access1("omp_file_read_at_all", fd, false, buffer, length, &offset, hint, false);
}

int omp_file_read_list_all(const struct iovec *buffer, int size, int fd, int hint)
{
    return team_call("omp_file_read_list_all", fd, false, buffer, size, NULL, hint, false);
}

int omp_file_read_list_at_all(const struct iovec *buffer, off_t *offsets, int size, int fd,
                              int hint)
{
    return team_call("omp_file_read_list_at_all", fd, false, buffer, size,
                     (const int64_t *)offsets, hint, false);
}

int omp_file_write_all(const void *buffer, long length, int fd, int hint)
{
    return access1("omp_file_write_all", fd, true, buffer, length, NULL, hint, false);
}

int omp_file_write_at_all(const void *buffer, long length, off_t offset, int fd, int hint)
{
    return access1("omp_file_write_at_all", fd, true, buffer, length, &offset, hint, false);
}

int omp_file_write_list_all(const struct iovec *buffer, int size, int fd, int hint)
{
    return team_call("omp_file_write_list_all", fd, true, buffer, size, NULL, hint, false);
}

int omp_file_write_list_at_all(const struct iovec *buffer, off_t *offsets, int size, int fd,
                               int hint)
{
    return team_call("omp_file_write_list_at_all", fd, true, buffer, size,
                     (const int64_t *)offsets, hint, false);
}

int omp_file_read_com_all(void *buffer, long length, int fd, int hint)
{
    return access1("omp_file_read_com_all", fd, false, buffer, length, NULL, hint, true);
}

int omp_file_read_com_at_all(void *buffer, long length, off_t offset, int fd, int hint)
{
    return access1("omp_file_read_com_at_all", fd, false, buffer, length, &offset, hint, true);
}

int omp_file_read_com_list_all(const struct iovec *buffer, int size, int fd, int hint)
{
    return team_call("omp_file_read_com_list_all", fd, false, buffer, size, NULL, hint, true);
}

int omp_file_read_com_list_at_all(const struct iovec *buffer, off_t *offsets, int size, int fd,
                                  int hint)
{
    return team_call("omp_file_read_com_list_at_all", fd, false, buffer, size,
                     (const int64_t *)offsets, hint, true);
}

int omp_file_write_com_all(const void *buffer, long length, int fd, int hint)
{
    return access1("omp_file_write_com_all", fd, true, buffer, length, NULL, hint, true);
}

int omp_file_write_com_at_all(const void *buffer, long length, off_t offset, int fd, int hint)
{
    return access1("omp_file_write_com_at_all", fd, true, buffer, length, &offset, hint, true);
}

int omp_file_write_com_list_all(const struct iovec *buffer, int size, int fd, int hint)
{
    return team_call("omp_file_write_com_list_all", fd, true, buffer, size, NULL, hint, true);
}

int omp_file_write_com_list_at_all(const struct iovec *buffer, off_t *offsets, int size, int fd,
                                   int hint)
{
    return team_call("omp_file_write_com_list_at_all", fd, true, buffer, size,
                     (const int64_t *)offsets, hint, true);
}
