/*
 * tessera_omp.h - parallel I/O for OpenMP programs: the interface of paper 001 (chapter 3,
 * Table 3.1) on Tessera's thread teams (tessera_team.h). Link with -ltessera_omp (and build
 * the program with -fopenmp, with the same OpenMP runtime the library was built with: GCC's
 * libgomp, or Clang's libomp).
 *
 * Every function is collective: all threads of the team that encounter it call it (from a
 * `#pragma omp parallel` region, directly or from functions it calls), and all get the same
 * result. Each returns 0 on success and -1 when it has encountered a problem (paper 001 3.2.6);
 * tess_last_error() (tessera.h) then says what, on every thread. A read that reaches the end of
 * file fills what exists, zeroes the rest of the thread's buffers and returns -1 on the threads
 * whose data was not all there, with "end of file: N of M bytes" in tess_last_error().
 *
 * Files: `int` handles, from omp_file_open_all; they are Tessera's, not POSIX descriptors (a
 * POSIX call on one fails with EBADF). flags are the POSIX open flags: O_RDONLY, O_WRONLY or
 * O_RDWR, with O_CREAT, O_EXCL, O_TRUNC, O_DIRECT (others: -1; O_DIRECT is the posix driver's
 * hint tess_posix_direct: buffers, offsets and lengths must then be aligned, 4 KiB is safe). A file may be opened outside a parallel
 * region (by the one thread there) and used inside one, by teams of any size. The hints of the
 * work manager come from the environment (TESS_OMP_SMIN, TESS_OMP_ACTIVE) or the profile of
 * `tessera calibrate` (see tessera_team.h); other Tessera hints cannot be given here.
 *
 * Arguments (paper 001 3.2.7): [private'] buffers differ between threads; the file handle and
 * the hint are the same on every thread (a thread passing another fd or hint makes the call
 * fail on every thread, without hanging); the _com_ calls take exactly the same arguments on
 * every thread and use the calling threads as the library's workers. Explicit offsets (_at_)
 * are file byte offsets; a write of bytes that two threads both cover leaves either thread's
 * bytes (undefined which), reads may overlap. The list calls take `size` pieces: an array of
 * struct iovec (buffer, length) and, for _at_, an array of `size` offsets.
 *
 * Order of the data of the implicit-offset calls (no _at_): from the file's pointer (0 after
 * open), the threads' data one after the other in the order of their thread ids in the team
 * (omp_get_thread_num), each thread's list in list order; the pointer moves past all of it. In
 * nested parallel regions all the threads of every inner team of the outermost team make one
 * call together, ordered by their ancestor thread ids outermost first (omp_get_ancestor_thread_num
 * at levels 1, 2, ...: the threads of outer thread 0's inner team first); inner teams may differ
 * in size.
 *
 * The hint says whether the threads' buffers are contiguous in memory and file (in the order
 * above): OMP_FILE_CONTIG (they are: one block, no scan; checked, -1 when they are not),
 * OMP_FILE_NONCONTIG (they are not: no merging is tried) or OMP_FILE_UNKNOWN (the library looks).
 * The paper names the last one NULL, which C reserves for the null pointer: it cannot be
 * redefined here, so it is OMP_FILE_UNKNOWN.
 */
#ifndef TESSERA_OMP_H
#define TESSERA_OMP_H

#include "tessera.h"

#include <sys/types.h>
#include <sys/uio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define OMP_FILE_UNKNOWN 0   /**< the paper's NULL hint: contiguity unknown */
#define OMP_FILE_CONTIG 1    /**< the threads' data is contiguous in memory and in the file */
#define OMP_FILE_NONCONTIG 2 /**< it is not */

/* --------------------------------------------------------------- file management */

/** Open filename with POSIX flags; *fd (shared) receives the handle on every thread. */
TESS_API int omp_file_open_all(int *fd, const char *filename, int flags);
/** Close fd (every thread of the team, or the one thread outside a parallel region). */
TESS_API int omp_file_close_all(int fd);

/* ------------------------------------------------- different arguments per thread */

TESS_API int omp_file_read_all(void *buffer, long length, int fd, int hint);
TESS_API int omp_file_read_at_all(void *buffer, long length, off_t offset, int fd, int hint);
TESS_API int omp_file_read_list_all(const struct iovec *buffer, int size, int fd, int hint);
TESS_API int omp_file_read_list_at_all(const struct iovec *buffer, off_t *offsets, int size,
                                       int fd, int hint);
TESS_API int omp_file_write_all(const void *buffer, long length, int fd, int hint);
TESS_API int omp_file_write_at_all(const void *buffer, long length, off_t offset, int fd,
                                   int hint);
TESS_API int omp_file_write_list_all(const struct iovec *buffer, int size, int fd, int hint);
TESS_API int omp_file_write_list_at_all(const struct iovec *buffer, off_t *offsets, int size,
                                        int fd, int hint);

/* ------------------------------------------------- common arguments on every thread */

TESS_API int omp_file_read_com_all(void *buffer, long length, int fd, int hint);
TESS_API int omp_file_read_com_at_all(void *buffer, long length, off_t offset, int fd, int hint);
TESS_API int omp_file_read_com_list_all(const struct iovec *buffer, int size, int fd, int hint);
TESS_API int omp_file_read_com_list_at_all(const struct iovec *buffer, off_t *offsets, int size,
                                           int fd, int hint);
TESS_API int omp_file_write_com_all(const void *buffer, long length, int fd, int hint);
TESS_API int omp_file_write_com_at_all(const void *buffer, long length, off_t offset, int fd,
                                       int hint);
TESS_API int omp_file_write_com_list_all(const struct iovec *buffer, int size, int fd, int hint);
TESS_API int omp_file_write_com_list_at_all(const struct iovec *buffer, off_t *offsets, int size,
                                            int fd, int hint);

#ifdef __cplusplus
}
#endif
#endif
