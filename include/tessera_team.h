/*
 * tessera_team.h - thread-collective I/O (paper 001, chapter 3): the threads of a team call
 * together, each with its own pieces of memory; the library gathers every member's arguments,
 * merges the pieces that are adjacent in memory and in the file (the contiguity analyzer), and
 * splits the merged access into blocks of at least s_min bytes that the first active_threads
 * members of the team move (the work manager) while the others wait; a member whose pieces make
 * one run in the file of at least min(s_min, 16 KiB) moves it itself. No lock in user code and
 * no lock on the shared handle: the members meet only at the team's barrier.
 *
 * A team is `size` threads that call the team functions together, each with its member number
 * (rank, 0 <= rank < size). How the members wait for each other is the team's barrier: its own
 * (a brief spin, then a futex: plain pthreads) or the caller's (an OpenMP front end gives
 * `#pragma omp barrier`, see tessera_omp.h). A call meets the caller's barrier once, for the
 * arguments; once they agree (every member is in the call), the rest of the call meets at the
 * team's own barrier, which is cheaper. This header needs no OpenMP and no MPI.
 *
 * Files are tess_file handles (tessera.h): opened by the team (tess_team_open), or by one
 * thread with tess_file_open before the team uses them, or collectively over MPI with
 * tess_file_open_mpi (hybrid: the pieces of the team in each process join that process's part
 * of one MPI collective access, see tess_team_write). A file is used by one team at a time (as
 * an MPI communicator runs one collective at a time); its implicit-offset calls share one file
 * pointer, starting at 0.
 *
 * Parameters (per file, fixed at open): s_min, the smallest block one member moves (hint
 * tess_omp_smin, else $TESS_OMP_SMIN, else the profile `tessera calibrate` measured, else
 * 1 MiB), and active_threads, how many members move data (hint tess_omp_active, else
 * $TESS_OMP_ACTIVE, else the profile, else the number of CPUs online). tess_file_get_info
 * reports both. README.md describes the algorithm.
 *
 * Conventions of tessera.h: int64_t sizes, 0 or a negative TESS_ERR_* with a thread-local
 * message (tess_last_error()). Every team call is collective: it returns the same verdict on
 * every member (an error on one member, bad input included, is an error on all; nothing hangs
 * as long as every member calls), and bad input changes nothing.
 */
#ifndef TESSERA_TEAM_H
#define TESSERA_TEAM_H

#include "tessera.h"

#include <sys/uio.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Hints of a team access: are the members' pieces contiguous in memory and file? */
#define TESS_TEAM_UNKNOWN 0   /**< unknown: the analyzer scans and merges what is adjacent */
#define TESS_TEAM_CONTIG 1    /**< every piece follows the previous one (data order) in memory
                                   and in the file: one block, no scan (checked in one pass:
                                   TESS_ERR_ARG when it is not so) */
#define TESS_TEAM_NONCONTIG 2 /**< not contiguous: no merging is tried, pieces go as they are */

typedef struct tess_team tess_team;

/** A barrier the caller provides: returns when every member of the team has called it. */
typedef void (*tess_team_barrier_fn)(void *ctx);

/**
 * Create a team of size >= 1 members (by one thread; the members share the handle). barrier
 * NULL: the team's own barrier (spin briefly, then sleep on a futex), for threads of any kind;
 * otherwise barrier(ctx) is called by every member wherever the members must meet (ctx is the
 * same for every member; an OpenMP team passes a function running `#pragma omp barrier`).
 */
TESS_API int tess_team_create(int size, tess_team_barrier_fn barrier, void *ctx, tess_team **out);

/** Release a team no member is using (NULL: nothing). */
TESS_API void tess_team_free(tess_team *t);

/** The number of members. */
TESS_API int tess_team_size(const tess_team *t);

/** Wait until every member has called it (the team's barrier); TESS_ERR_ARG for a bad rank. */
TESS_API int tess_team_barrier(tess_team *t, int rank);

/**
 * Open a file collectively (every member, the same path, flags and hints; flags as for
 * tess_file_open): member 0 opens it, every member gets the same handle in *out (set only on
 * success). Paths or flags that differ between members are TESS_ERR_ARG on every member.
 */
TESS_API int tess_team_open(tess_team *t, int rank, const char *path, int flags,
                            const tess_info *info, tess_file **out);

/** Close a file collectively: every member passes the same handle; member 0 closes it. */
TESS_API int tess_team_close(tess_team *t, int rank, tess_file *f);

/**
 * What one member passes to a team access: n pieces of memory iov[0..n) (zero-length pieces
 * allowed; n 0: no data from this member).
 *  - offsets NULL (implicit offsets): the pieces of every member go to the file one after the
 *    other from the file's pointer, member 0's pieces first, each member's in list order; the
 *    pointer then moves past them all.
 *  - offsets given: offsets[i] is the file byte offset of piece i. Pieces of different members
 *    that overlap in the file: a write leaves either member's bytes there (undefined which); a
 *    read gives every member its bytes.
 *  - common != 0 (paper 001's _com_ calls): every member passes the same pieces (the same
 *    offsets, the same hint); the access is those pieces once, and the members are its
 *    workers. Members that disagree are TESS_ERR_ARG on every member.
 * hint is TESS_TEAM_UNKNOWN, _CONTIG or _NONCONTIG, the same on every member.
 */
typedef struct tess_team_args {
    const struct iovec *iov;
    const int64_t *offsets;
    int64_t n;
    int hint;
    int common;
} tess_team_args;

/**
 * Write the members' pieces to f (collective over the team: every member, the same file, each
 * with its own args). *bytes (may be NULL) receives the bytes of this member's pieces written.
 * Returns 0 or: TESS_ERR_ARG (rank outside the team, NULL team or file, a member passing a
 * different file, hint, kind of call (read/write, common) or common pieces, a bad hint, a NULL
 * piece of nonzero length, a negative offset or length, CONTIG when the pieces are not
 * contiguous), TESS_ERR_OVERFLOW, TESS_ERR_ACCESS (file opened read-only), or the storage's
 * error; a failure on one member is reported on every member ("failed on member N: ...").
 *
 * On a file opened over MPI (tess_file_open_mpi: hybrid), member 0 of the team of every
 * process takes its team's pieces into one tess_file_write_at_all: every process's team must
 * call, and implicit offsets order the data by process rank, then member. Member 0 makes the
 * MPI calls (MPI_THREAD_FUNNELED when member 0 is the main thread, else MPI_THREAD_SERIALIZED).
 */
TESS_API int tess_team_write(tess_team *t, int rank, tess_file *f, const tess_team_args *a,
                             int64_t *bytes);

/**
 * Read the members' pieces from f (as tess_team_write). A read past the end of file is short:
 * *bytes is the bytes of this member's pieces that exist in the file, and the rest of its
 * pieces is zeroed. A member may read its own pieces before the others arrive (page cache,
 * see README), so after a failed call its pieces hold undefined bytes.
 */
TESS_API int tess_team_read(tess_team *t, int rank, tess_file *f, const tess_team_args *a,
                            int64_t *bytes);

#ifdef __cplusplus
}
#endif
#endif
