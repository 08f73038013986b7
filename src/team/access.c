/*
 * access.c - tess_team_write and tess_team_read: one collective team access (the steps are at
 * the top of team.h). Each worker moves its part through its own helper handle with Tessera's
 * independent access: a part of few large runs run by run (one vectored call per run when its
 * memory is several iovecs), a part of many small scattered runs as one access through a view
 * of them, where the file's method (`auto`: list I/O, sieving, ...) does the rest. A call of
 * less than s_min bytes has one worker, the member that arrived last at the opening meeting:
 * the others sleep through the call instead of being woken twice (on 2 CPUs, every wake-up of
 * a sleeping member costs microseconds), and in the page cache one vectored write of the whole
 * call costs no more than the members' concurrent writes to the one file, which the kernel
 * serializes on the inode. Page-cache reads, which do scale with threads, are moved by every
 * member before the meeting where it knows or can guess its place (speculate).
 *
 * On a file opened over a group (MPI: tess_file_open_mpi), member 0 takes the pieces of the
 * whole team into one collective access of the group (hybrid), the other members wait.
 */
#include "team/team.h"

#include "core/file.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Pieces of one call at most for every member to plan alone (no barrier B2): above, member 0
 * plans once and the others wait for it. */
#define PLAN_ALONE 256
/* A part is "small and scattered" (one access through a view) from this many runs, when its
 * runs average less than SCATTER_BYTES. */
#define SCATTER_RUNS 4
#define SCATTER_BYTES (64 << 10)
/* In a call of at least s_min bytes (FULL: every member is awake anyway), a member moves its own
 * pieces, outside the plan, when they make one run in the file of at least min(s_min, OWN_MIN)
 * bytes: from 16 KiB on, its own pwrite/pread (~0.4 us in the page cache) costs less than
 * leaving it to one worker while the other members wait (16 KiB take ~1.6 us to copy), and
 * every member moves data at once, as separate files would. */
#define OWN_MIN (16 << 10)

/* ------------------------------------------------------------------ checks */

/* What one member can check alone; *bytes gets the data bytes of its pieces. */
static int local_checks(const char *who, const tess_file *f, const tess_team_args *a, bool write,
                        int64_t *bytes)
{
    *bytes = 0;
    if (!f || !a)
        return tessi_error(TESS_ERR_ARG, "%s: %s is NULL", who, f ? "args" : "f");
    if (a->n < 0 || (a->n > 0 && !a->iov))
        return tessi_error(TESS_ERR_ARG, "%s: %s", who, a->n < 0 ? "n < 0" : "iov is NULL");
    if (a->hint < TESS_TEAM_UNKNOWN || a->hint > TESS_TEAM_NONCONTIG)
        return tessi_error(TESS_ERR_ARG, "%s: hint %d is not TESS_TEAM_UNKNOWN, _CONTIG or "
                           "_NONCONTIG", who, a->hint);
    if (f->flags & (write ? TESS_RDONLY : TESS_WRONLY))
        return tessi_error(TESS_ERR_ACCESS, "%s: the file was opened %s", who,
                           write ? "read-only" : "write-only");
    for (int64_t i = 0; i < a->n; i++) {
        int64_t len = (int64_t)a->iov[i].iov_len, end;
        if (a->iov[i].iov_len > (size_t)INT64_MAX || !tessi_add(*bytes, len, bytes))
            return tessi_error(TESS_ERR_OVERFLOW, "%s: the pieces' lengths overflow int64", who);
        if (len > 0 && !a->iov[i].iov_base)
            return tessi_error(TESS_ERR_ARG, "%s: piece %lld has %lld bytes at NULL", who,
                               (long long)i, (long long)len);
        if (a->offsets && a->offsets[i] < 0)
            return tessi_error(TESS_ERR_ARG, "%s: offset %lld of piece %lld < 0", who,
                               (long long)a->offsets[i], (long long)i);
        if (a->offsets && !tessi_add(a->offsets[i], len, &end))
            return tessi_error(TESS_ERR_OVERFLOW, "%s: piece %lld ends beyond int64", who,
                               (long long)i);
    }
    return 0;
}

/* Do member r's arguments describe the same call as member 0's (and, common, the same pieces)? */
static const char *differs(const tessi_slot *s0, const tessi_slot *s)
{
    if (s->op != s0->op)
        return "call (read or write)";
    if (s->f != s0->f)
        return "file";
    if (s->a.hint != s0->a.hint)
        return "hint";
    if (!s->a.common != !s0->a.common || !s->a.offsets != !s0->a.offsets)
        return "kind of call (common arguments or not, explicit offsets or not)";
    if (!s0->a.common)
        return NULL;
    if (s->a.n != s0->a.n)
        return "number of common pieces";
    for (int64_t i = 0; i < s0->a.n; i++) {
        if (s->a.iov[i].iov_base != s0->a.iov[i].iov_base ||
            s->a.iov[i].iov_len != s0->a.iov[i].iov_len)
            return "common pieces";
        if (s0->a.offsets && s->a.offsets[i] != s0->a.offsets[i])
            return "common offsets";
    }
    return NULL;
}

/* The verdict on the arguments, the same on every member (after B1); rank -1: for a member
 * without a failure of its own. */
static int args_verdict(const tess_team *t, int rank, const char *who)
{
    int rc = tessi_team_verdict(t, rank, who, false);
    for (int r = 1; rc == 0 && r < t->size; r++) {
        const char *what = differs(&t->slots[0], &t->slots[r]);
        if (what)
            rc = tessi_error(TESS_ERR_ARG, "%s: member %d passes a different %s from member 0",
                             who, r, what);
    }
    return rc;
}

/* ------------------------------------------------------------------ plan */

/* May a member move its own pieces (a): not in common calls (one set of pieces for all), nor
 * with CONTIG (the team's data is one block: the work manager splits it; the hint is checked
 * there), nor on a file opened over a group (member 0 takes the team's pieces into the group's
 * access), and only when they make one run in the file (implicit offsets put them one after the
 * other; explicit ones must do so). */
static bool may_move_own(const tess_team_args *a, const tess_file *f)
{
    if (a->common || a->hint == TESS_TEAM_CONTIG || f->group)
        return false;
    int64_t end = -1;
    for (int64_t i = 0; a->offsets && i < a->n; i++) {
        int64_t len = (int64_t)a->iov[i].iov_len;
        if (len > 0 && end >= 0 && a->offsets[i] != end)
            return false;
        if (len > 0)
            end = a->offsets[i] + len;
    }
    return true;
}

/* Does member r move its own pieces (after B1, the same answer on every member)? */
static bool moves_own(const tess_team *t, const tessi_team_file *tf, int r)
{
    const tessi_slot *s = &t->slots[r];
    return s->bytes >= tessi_min64(tf->s_min, OWN_MIN) && may_move_own(&s->a, s->f);
}

/* The pieces of every member that does not move its own, in data order (member order, list
 * order; common: member 0's) with their file offsets (implicit: from base on), into p; then the
 * analyzer and the work manager. */
static int make_plan(const tess_team *t, int64_t base, const tessi_team_file *tf, tessi_tplan *p,
                     bool all)
{
    const tessi_slot *s = t->slots;
    tessi_tpiece buf[64];
    int64_t at = base, nb = 0;
    int rc = 0;
    p->npc = 0;
    for (int r = 0; rc == 0 && r < (s[0].a.common ? 1 : t->size); r++) {
        if (!all && moves_own(t, tf, r)) {
            at += s[r].bytes;
            continue;
        }
        for (int64_t i = 0; rc == 0 && i < s[r].a.n; i++) {
            int64_t len = (int64_t)s[r].a.iov[i].iov_len;
            buf[nb++] = (tessi_tpiece){.mem = s[r].a.iov[i].iov_base, .len = len,
                                      .off = s[r].a.offsets ? s[r].a.offsets[i] : at};
            at += len;
            if (nb == 64) {
                rc = tessi_tplan_add(p, buf, nb);
                nb = 0;
            }
        }
    }
    if (rc == 0)
        rc = tessi_tplan_add(p, buf, nb);
    if (rc == 0)
        rc = tessi_tplan_analyze(p, s[0].a.hint, !s[0].a.offsets);
    if (rc == 0)
        tessi_tplan_split(p, tf->s_min, tf->active, t->size);
    return rc;
}

/* ------------------------------------------------------------------ moving a part */

/* The file offset of stream byte k of runs[0..n) (the end of the last run when k is past it). */
static int64_t stream_offset(const tessi_trun *runs, int64_t n, int64_t k)
{
    for (int64_t r = 0; r < n; k -= runs[r++].len)
        if (k < runs[r].len)
            return runs[r].off + k;
    return n ? runs[n - 1].off + runs[n - 1].len : INT64_MAX;
}

/* A memory type over iovecs iov[0..n) relative to the lowest address (*base). */
static int iov_type(const struct iovec *iov, int64_t n, char **base, tess_type **out)
{
    char *lo = iov[0].iov_base;
    for (int64_t k = 1; k < n; k++)
        if ((char *)iov[k].iov_base < lo)
            lo = iov[k].iov_base;
    int64_t *lens = malloc(sizeof *lens * (size_t)n * 2);
    if (!lens)
        return tessi_error(TESS_ERR_NOMEM, "team access: out of memory");
    for (int64_t k = 0; k < n; k++) {
        lens[k] = (int64_t)iov[k].iov_len;
        lens[n + k] = (char *)iov[k].iov_base - lo;
    }
    int rc = tess_type_hindexed(n, lens, lens + n, TESS_BYTE, out);
    free(lens);
    *base = lo;
    return rc;
}

/* Tessera's independent access of count memtype at buf, offset off of h's view. */
static int rw(tess_file *h, bool write, int64_t off, char *buf, int64_t count, tess_type *mt,
              int64_t *done)
{
    return write ? tess_file_write_at(h, off, buf, count, mt, done)
                 : tess_file_read_at(h, off, buf, count, mt, done);
}

/* One run: one contiguous piece of memory, or a vectored access of its iovecs. */
static int move_run(tess_file *h, bool write, const tessi_trun *r, const struct iovec *iov,
                    int64_t *done)
{
    if (r->niov == 1)
        return rw(h, write, r->off, iov[0].iov_base, r->len, TESS_BYTE, done);
    char *base;
    tess_type *mt = NULL;
    int rc = iov_type(iov, r->niov, &base, &mt);
    if (rc == 0)
        rc = rw(h, write, r->off, base, 1, mt, done);
    tess_type_free(mt);
    return rc;
}

/* Small scattered runs: one access through a view of them (the file's method decides). */
static int move_scattered(tess_file *h, bool write, const tessi_tpart *pt, int64_t *done)
{
    int64_t n = pt->nruns, *v = malloc(sizeof *v * (size_t)n * 2);
    tess_type *ft = NULL, *mt = NULL;
    char *base;
    if (!v)
        return tessi_error(TESS_ERR_NOMEM, "team access: out of memory");
    for (int64_t r = 0; r < n; r++) {
        v[r] = pt->runs[r].len;
        v[n + r] = pt->runs[r].off - pt->runs[0].off;
    }
    int rc = tess_type_hindexed(n, v, v + n, TESS_BYTE, &ft);
    free(v);
    if (rc == 0)
        rc = iov_type(pt->iov, pt->niov, &base, &mt);
    if (rc == 0)
        rc = tess_file_set_view(h, pt->runs[0].off, TESS_BYTE, ft);
    if (rc == 0)
        rc = rw(h, write, 0, base, 1, mt, done);
    tess_type_free(ft);
    tess_type_free(mt);
    return rc;
}

/* Member j moves its part through its helper handle; *eof: reads, where data first ran out. */
static int move_part(tess_file *f, tessi_team_file *tf, int j, const tessi_tpart *pt, bool write,
                     int64_t *eof)
{
    tess_file *h;
    int64_t done = 0;
    *eof = INT64_MAX;
    if (pt->bytes == 0)
        return 0;
    int rc = tessi_team_helper(f, tf, j, &h);
    if (rc)
        return rc;
    bool disjoint = true; /* a view needs increasing, disjoint regions (overlaps: reads) */
    for (int64_t r = 1; r < pt->nruns && disjoint; r++)
        disjoint = pt->runs[r].off >= pt->runs[r - 1].off + pt->runs[r - 1].len;
    if (disjoint && pt->nruns >= SCATTER_RUNS && pt->bytes / pt->nruns < SCATTER_BYTES) {
        tf->viewed[j] = true;
        rc = move_scattered(h, write, pt, &done);
        if (rc == 0 && done < pt->bytes)
            *eof = stream_offset(pt->runs, pt->nruns, done);
        return rc;
    }
    if (tf->viewed[j] && (rc = tess_file_set_view(h, 0, TESS_BYTE, TESS_BYTE)))
        return rc;
    tf->viewed[j] = false;
    for (int64_t r = 0; rc == 0 && r < pt->nruns; r++) {
        const tessi_trun *run = &pt->runs[r];
        rc = move_run(h, write, run, pt->iov + run->iov0, &done);
        if (rc == 0 && done < run->len && *eof == INT64_MAX) /* later runs read zeros too */
            *eof = run->off + done;
    }
    return rc;
}

/* ------------------------------------------------------------------ hybrid */

/* Member 0 of a team on a file opened over a group: the team's pieces as this process's part of
 * one collective access (implicit offsets: after every lower process's data). Sets the call's
 * base offset and total (of every process) in member 0's slot. */
static int hybrid(const tess_team *t, tess_file *f, int rc, bool write, int64_t *eof)
{
    tessi_slot *s0 = &t->slots[0];
    tessi_tplan *p = &s0->plan;
    tessi_team_file *tf = f->team;
    int64_t mine = 0, before = 0, all = 0;
    for (int r = 0; r < (s0->a.common ? 1 : t->size); r++)
        mine += t->slots[r].bytes;
    /* every process's team calls this (bad arguments too): the verdict is agreed here */
    rc = tessi_file_group_offsets(f, rc, mine, &before, &all);
    *eof = INT64_MAX;
    if (rc)
        return rc;
    if (s0->a.offsets)
        before = all = 0;
    s0->res_base = (tf ? tf->fp : 0) + before;
    s0->res_total = all;
    rc = tf ? make_plan(t, s0->res_base, tf, p, false) : TESS_ERR_NOMEM;
    for (int64_t r = 1; rc == 0 && r < p->nruns; r++)
        if (p->runs[r].off < p->runs[r - 1].off + p->runs[r - 1].len)
            rc = tessi_error(TESS_ERR_ARG, "%s: pieces overlap in the file (not supported on a "
                             "file opened over a group)", write ? "tess_team_write"
                                                                : "tess_team_read");
    tess_type *ft = NULL, *mt = NULL;
    char *base = NULL;
    int64_t *v = NULL, n = rc ? 0 : p->nruns, done = 0;
    if (n > 0 && !(v = malloc(sizeof *v * (size_t)n * 2)))
        rc = tessi_error(TESS_ERR_NOMEM, "team access: out of memory");
    for (int64_t r = 0; rc == 0 && r < n; r++) {
        v[r] = p->runs[r].len;
        v[n + r] = p->runs[r].off - p->runs[0].off;
    }
    if (rc == 0 && n > 0)
        rc = tess_type_hindexed(n, v, v + n, TESS_BYTE, &ft);
    if (rc == 0 && n > 0)
        rc = iov_type(p->iov, p->niov, &base, &mt);
    free(v);
    /* collective even when this process failed: the group agrees on the verdict */
    rc = tessi_file_group_access(f, rc, n ? p->runs[0].off : 0, ft, base, rc || !n ? 0 : 1,
                                 mt ? mt : TESS_BYTE, &done, write);
    if (rc == 0 && done < p->total)
        *eof = stream_offset(p->runs, p->nruns, done);
    tess_type_free(ft);
    tess_type_free(mt);
    return rc;
}

/* ------------------------------------------------------------------ the call */

/* The bytes of member rank's pieces below eof (all of them when nothing ran out); base: where
 * the team's data starts (implicit offsets). */
static int64_t member_bytes(const tess_team *t, int rank, int64_t base, int64_t eof)
{
    const tessi_slot *s = t->slots;
    int64_t got = 0;
    if (eof == INT64_MAX)
        return s[rank].bytes;
    for (int r = 0; r < rank && !s[0].a.common; r++)
        base += s[r].bytes;
    for (int64_t i = 0; i < s[rank].a.n; i++) {
        int64_t len = (int64_t)s[rank].a.iov[i].iov_len;
        int64_t off = s[rank].a.offsets ? s[rank].a.offsets[i] : base;
        got += tessi_max64(0, tessi_min64(len, eof - off));
        base += len;
    }
    return got;
}

/* Plan (every member alone, or member 0 for everybody and a barrier B2) and move this member's
 * own pieces, when it moves them itself, and its part of the plan; the result goes to its
 * slot. */
static void plan_and_move(tess_team *t, int rank, tess_file *f, tessi_team_file *tf, bool write)
{
    tessi_slot *s = t->slots, *mine = &s[rank];
    int64_t npieces = 0, total = 0, own_at = tf->fp, eof = INT64_MAX;
    for (int r = 0; r < (s[0].a.common ? 1 : t->size); r++) {
        if (!moves_own(t, tf, r))
            npieces += s[r].a.n;
        if (r < rank)
            own_at += s[r].bytes;
        total += s[r].bytes;
    }
    if (!write && !s[0].a.offsets && !s[0].a.common) {
        mine->spec_next = own_at + total;
        mine->spec_f = f;
    }
    bool alone = npieces <= PLAN_ALONE;
    const tessi_tplan *p = alone ? &mine->plan : &s[0].plan;
    if (rank == 0) {
        s[0].res_base = tf->fp;
        s[0].res_total = total;
        s[0].plan_rc = make_plan(t, tf->fp, tf, &s[0].plan, false);
        mine->res_rc = s[0].plan_rc;
    } else if (alone) {
        mine->res_rc = make_plan(t, tf->fp, tf, &mine->plan, false);
    }
    if (!alone)
        tessi_team_sync(t); /* B2: member 0's plan is ready */
    if (mine->res_rc || (!alone && s[0].plan_rc)) /* a failed plan: its message stands */
        return;
    if (moves_own(t, tf, rank)) {
        mine->res_rc = tessi_tpart_own(&mine->own, &mine->a, own_at);
        if (mine->res_rc == 0)
            mine->res_rc = move_part(f, tf, rank, &mine->own, write, &eof);
    }
    if (mine->res_rc == 0 && (mine->res_rc = tessi_tplan_part(p, rank, &mine->part)) == 0)
        mine->res_rc = move_part(f, tf, rank, &mine->part, write, &mine->res_eof);
    mine->res_eof = tessi_min64(mine->res_eof, eof);
}

/* A read of a page-cache file (not over a group): move this member's own pieces before the
 * opening meeting, when they make one run in the file and its place is known (explicit
 * offsets) or guessed (implicit: where the member's last call on f would put them if the
 * team's calls keep their lengths, spec_next). When every member's place proves right, the
 * last member to arrive only agrees on the result (decide): the members read in parallel and
 * meet once, as separate files would need no meeting at all. A wrong guess costs the read,
 * which the call then does again. Not with O_DIRECT (one vectored read of adjacent runs beats
 * concurrent ones there, see decide), nor common or CONTIG calls (the team's data is one
 * block). Reading before the others arrive is what independent reads do: a collective call
 * does not order itself after other members' accesses made outside it. */
static void speculate(tess_team *t, int rank, tess_file *f, const tess_team_args *a,
                      int64_t bytes)
{
    tessi_slot *mine = &t->slots[rank];
    tessi_team_file *tf = tessi_team_file_peek(f);
    mine->spec = false;
    /* seen_f: this member has finished a call on f in this team, so f's state has its helper
     * handles' table for the team (member 0 grows it before the call's meeting, and a table
     * made for another file at the same address is published whole) */
    if (!tf || mine->seen_f != f || (f->st.caps & TESSI_CAP_DIRECT) ||
        (!a->offsets && mine->spec_f != f) || !may_move_own(a, f))
        return;
    /* with more members than CPUs, a small piece is cheaper in the last member's one vectored
     * read than in a storage call of its own (the threshold of moves_own) */
    if (bytes && !t->own.spin && bytes < tessi_min64(tf->s_min, OWN_MIN))
        return;
    mine->spec = true;
    mine->spec_eof = INT64_MAX;
    mine->spec_off = a->offsets ? 0 : mine->spec_next;
    mine->spec_rc = bytes ? tessi_tpart_own(&mine->own, a, mine->spec_off) : 0;
    if (bytes && mine->spec_rc == 0) {
        mine->spec_off = mine->own.runs[0].off;
        mine->spec_rc = move_part(f, tf, rank, &mine->own, false, &mine->spec_eof);
    }
}

/* Did every member read its pieces before the meeting, each at its place in the call
 * (implicit offsets: from base on)? *eof: then where data first ran out. */
static bool all_speculated(const tess_team *t, int64_t base, int64_t *eof)
{
    const tessi_slot *s = t->slots;
    *eof = INT64_MAX;
    for (int r = 0; r < t->size; base += s[r++].bytes) {
        if (s[r].bytes == 0)
            continue;
        if (!s[r].spec || s[r].spec_rc || (!s[r].a.offsets && s[r].spec_off != base))
            return false;
        *eof = tessi_min64(*eof, s[r].spec_eof);
    }
    return true;
}

/* The last member at the opening meeting, every other member waiting for it: the verdict on
 * the arguments, then either only the result (a read that every member moved before the
 * meeting, each at its right place: all_speculated), or the whole call (a call of less than
 * s_min bytes is one block of
 * the work manager: this member moves it through its own helper handle, with the analyzer's
 * vectored access, and every member's result goes to the call record) or, for larger calls,
 * reads of members' own runs while members have CPUs of their own, hybrid files and their
 * failures, the call record says that every member goes on (FULL). */
static void decide(tess_team *t, int rank, const char *who, bool write)
{
    tessi_slot *s = t->slots, *mine = &s[rank];
    char own[sizeof t->call_why];
    int own_rc = mine->rc;
    if (own_rc) /* its own message stands for itself (taken before the verdict sets another) */
        snprintf(own, sizeof own, "%s", tess_last_error());
    int rc = args_verdict(t, -1, who);
    tess_file *f = s[0].f;
    tessi_team_file *tf = rc ? NULL : f->team;
    int64_t total = 0, eof = INT64_MAX;
    for (int r = 0; r < (s[0].a.common ? 1 : t->size); r++)
        total += s[r].bytes;
    t->call_mode = TESSI_CALL_FULL;
    int64_t spec_eof;
    bool spec = rc == 0 && !write && !f->group && !s[0].a.common &&
                all_speculated(t, tf->fp, &spec_eof); /* moved already: agree only */
    bool one = rc || spec || total < tf->s_min; /* less than s_min: one block, one worker */
    /* page-cache reads (not serialized on the file, unlike writes) of members' own runs scale
     * with the members while each has a CPU (each copies), and then the meetings are cheap;
     * uncached reads (O_DIRECT) do not: the device moves the data, and one vectored read of the
     * adjacent runs, one request, beats the members' concurrent ones (probe, 2 and 4 threads,
     * 64 KiB each: 0.80-0.83x the time; par from 256 KiB) */
    bool parallel = rc == 0 && !write && t->own.spin && !(f->st.caps & TESSI_CAP_DIRECT);
    for (int r = 0; one && parallel && !spec && r < (s[0].a.common ? 1 : t->size); r++)
        one = !moves_own(t, tf, r);
    if ((f && f->group) || !one) {
        if (own_rc)
            tessi_error(own_rc, "%s", own);
        return;
    }
    t->call_mode = TESSI_CALL_DONE;
    snprintf(t->call_why, sizeof t->call_why, "%s", rc ? tess_last_error() : "");
    int64_t base = tf ? tf->fp : 0;
    if (spec)
        eof = spec_eof;
    if (rc == 0 && total > 0 && !spec) {
        rc = make_plan(t, base, tf, &mine->plan, true);
        if (rc == 0)
            rc = tessi_tplan_part(&mine->plan, 0, &mine->part);
        if (rc == 0)
            rc = move_part(f, tf, rank, &mine->part, write, &eof);
        if (rc) { /* its own message for itself, a pointer to it for the others */
            own_rc = rc;
            snprintf(own, sizeof own, "%s", tess_last_error());
            snprintf(t->call_why, sizeof t->call_why, "%s: failed on member %d: %s: %.200s", who,
                     rank, tess_strerror(rc), own);
        }
    }
    int64_t at = base;
    for (int r = 0; r < t->size; at += s[r++].bytes) {
        s[r].res_bytes = rc ? 0 : member_bytes(t, r, base, eof);
        if (!write && !s[0].a.offsets) { /* implicit reads: each member's next place */
            s[r].spec_next = at + total;
            s[r].spec_f = rc || s[0].a.common ? NULL : f;
        }
    }
    if (rc == 0 && !s[0].a.offsets)
        tf->fp += total;
    t->call_rc = rc;
    if (own_rc)
        tessi_error(own_rc, "%s", own);
}

static int team_access(const char *who, tess_team *t, int rank, tess_file *f,
                       const tess_team_args *a, int64_t *bytes, bool write)
{
    if (!t)
        return tessi_error(TESS_ERR_ARG, "%s: the team is NULL (a call outside a team)", who);
    if (rank < 0 || rank >= t->size)
        return tessi_error(TESS_ERR_ARG, "%s: member %d is not in the team of %d", who, rank,
                           t->size);
    tessi_slot *s = t->slots, *mine = &s[rank];
    int64_t total = 0, eof = INT64_MAX;
    tessi_team_file *tf = NULL;
    /* the base function: every member's arguments into its slot (argument fields only: a
     * slower member may still read the results of the previous call) */
    int rc = local_checks(who, f, a, write, &total);
    if (f && rank == 0) { /* the file's team state, made before anybody reads it */
        int made = tessi_team_file_get(f, t->size, &tf);
        rc = rc ? rc : made;
    }
    mine->spec = false;
    if (rc == 0 && !write)
        speculate(t, rank, f, a, total);
    else if (write && !(a && a->offsets) && mine->spec_f) /* it moves the file pointer */
        mine->spec_f = NULL;
    tessi_team_publish(t, rank, &(tessi_slot){.op = write ? TESSI_TEAM_WRITE : TESSI_TEAM_READ,
                                              .rc = rc, .f = f, .bytes = total,
                                              .a = a ? *a : (tess_team_args){.n = 0}}, true);
    /* B1: the opening meeting; its last member decides, and moves a small call itself */
    bool aborter;
    int how = tessi_team_meet(t, &aborter), own_rc = rc;
    if (how == TESSI_MEET_LAST) {
        decide(t, rank, who, write);
        tessi_team_meet_release(t);
    } else if (how == TESSI_MEET_ABANDONED) { /* every member meets at the caller's barrier */
        tessi_team_barrier(t, rank);
        if (aborter)
            tessi_team_meet_reset(t);
    }
    if (how != TESSI_MEET_ABANDONED && t->call_mode == TESSI_CALL_DONE) {
        /* the call record and this member's slot hold the results until every member has
         * arrived at the next call (only its last member writes them) */
        rc = t->call_rc;
        mine->seen_f = own_rc || rc ? NULL : f;
        if (bytes)
            *bytes = rc ? 0 : s[rank].res_bytes;
        if (rc && !own_rc && how != TESSI_MEET_LAST)
            tessi_error(rc, "%s", t->call_why);
        return own_rc ? own_rc : rc;
    }
    rc = args_verdict(t, rank, who);
    if (rc || (!write && !s[0].a.offsets)) /* implicit reads: plan_and_move guesses anew */
        mine->spec_f = NULL;
    bool agreed = rc == 0; /* the same on every member: all in this team object */
    tf = rc ? NULL : f->team;
    mine->res_rc = 0;
    mine->res_eof = INT64_MAX;
    /* hybrid (member 0's file is opened over a group): member 0 takes the team's data into the
     * group's collective access, which it joins even after a failure here (the other
     * processes' teams wait in it); the verdict is then the group's */
    bool group = s[0].f && s[0].f->group;
    if (group && rank == 0)
        rc = mine->res_rc = hybrid(t, s[0].f, rc, write, &mine->res_eof);
    else if (rc == 0 && !group)
        plan_and_move(t, rank, f, tf, write);
    if (mine->res_rc)
        snprintf(mine->why, sizeof mine->why, "%s", tess_last_error());
    if (agreed) { /* B3 */
        tessi_team_sync(t);
    } else {
        tessi_team_realign(t, rank);
        tessi_team_barrier(t, rank);
    }
    if (rc == 0 || group)
        rc = tessi_team_verdict(t, rank, who, true);
    for (int r = 0; rc == 0 && r < t->size; r++)
        eof = tessi_min64(eof, s[r].res_eof);
    if (bytes)
        *bytes = rc ? 0 : member_bytes(t, rank, s[0].res_base, eof);
    if (rc == 0 && rank == 0 && !s[0].a.offsets) /* the file pointer, after everybody read it */
        tf->fp += s[0].res_total;
    mine->seen_f = rc ? NULL : f;
    return rc;
}

int tess_team_write(tess_team *t, int rank, tess_file *f, const tess_team_args *a,
                    int64_t *bytes)
{
    return team_access("tess_team_write", t, rank, f, a, bytes, true);
}

int tess_team_read(tess_team *t, int rank, tess_file *f, const tess_team_args *a, int64_t *bytes)
{
    return team_access("tess_team_read", t, rank, f, a, bytes, false);
}
