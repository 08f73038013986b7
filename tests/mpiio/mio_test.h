/*
 * mio_test.h - helpers of the MPI-IO conformance tests (tests/mpiio/): plain MPI-IO programs,
 * run over libtessera_mpiio with LD_PRELOAD and linked with it. Checks abort the whole job (a
 * rank that merely exited would leave the others waiting); files are inspected with POSIX
 * calls, the independent side of every comparison.
 */
#ifndef TESS_MIO_TEST_H
#define TESS_MIO_TEST_H

#include <mpi.h>

#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char mt_where[512]; /* what the test is doing (printed with a failure) */

static inline void mt_fail(const char *file, int line, const char *msg)
{
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    fprintf(stderr, "[rank %d] %s:%d: FAILED: %s\n  while: %s\n", rank, file, line, msg,
            mt_where);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

#define MT_CHECK(cond)                                                                       \
    do {                                                                                     \
        if (!(cond))                                                                         \
            mt_fail(__FILE__, __LINE__, #cond);                                              \
    } while (0)

/* An MPI call that must succeed. */
#define MT_OK(call)                                                                          \
    do {                                                                                     \
        int mt_rc_ = (call);                                                                 \
        if (mt_rc_ != MPI_SUCCESS) {                                                         \
            char mt_s_[MPI_MAX_ERROR_STRING], mt_m_[8192];                                   \
            int mt_l_ = 0;                                                                   \
            MPI_Error_string(mt_rc_, mt_s_, &mt_l_);                                         \
            snprintf(mt_m_, sizeof mt_m_, "%s returned %d: %s", #call, mt_rc_, mt_s_);       \
            mt_fail(__FILE__, __LINE__, mt_m_);                                              \
        }                                                                                    \
    } while (0)

/* An MPI call that must fail with an error of class cls and a message naming `needle`. */
#define MT_ERR(call, cls, needle)                                                            \
    do {                                                                                     \
        int mt_rc_ = (call), mt_c_ = -1, mt_l_ = 0;                                          \
        char mt_s_[MPI_MAX_ERROR_STRING] = "", mt_m_[8192];                                  \
        if (mt_rc_ != MPI_SUCCESS) {                                                         \
            MPI_Error_class(mt_rc_, &mt_c_);                                                 \
            MPI_Error_string(mt_rc_, mt_s_, &mt_l_);                                         \
        }                                                                                    \
        if (mt_c_ != (cls) || !strstr(mt_s_, (needle))) {                                    \
            snprintf(mt_m_, sizeof mt_m_, "%s: class %d, expected %d (%s) with '%s'; "       \
                     "message: %s", #call, mt_c_, (cls), #cls, (needle), mt_s_);             \
            mt_fail(__FILE__, __LINE__, mt_m_);                                              \
        }                                                                                    \
    } while (0)

/* The program must run on libtessera_mpiio (not the MPI library's own MPI-IO): its hints
   include Tessera's. */
static inline void mt_require_tessera(MPI_File fh)
{
    MPI_Info info;
    char val[MPI_MAX_INFO_VAL];
    int flag = 0;
    MT_OK(MPI_File_get_info(fh, &info));
    MT_OK(MPI_Info_get(info, "tess_method", MPI_MAX_INFO_VAL - 1, val, &flag));
    MPI_Info_free(&info);
    if (!flag)
        mt_fail(__FILE__, __LINE__, "MPI_File_get_info has no tess_method: this is not "
                                    "libtessera_mpiio (run with LD_PRELOAD or link it first)");
}

/* A scratch file name per test and run (in the working directory), the same on every rank. */
static inline void mt_path(char *out, size_t cap, const char *tag)
{
    int pid = (int)getpid();
    MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
    snprintf(out, cap, "mio_%s_%d.dat", tag, pid);
}

/*
 * The start of every test: MPI_Init, the rank and size, a scratch file name (created), and the
 * check that this is libtessera_mpiio.
 */
static inline void mt_begin(int *argc, char ***argv, int *rank, int *size, char *path,
                            size_t cap, const char *tag)
{
    MPI_File fh;
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
    mt_path(path, cap, tag);
    MT_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL,
                        &fh));
    mt_require_tessera(fh);
    MT_OK(MPI_File_close(&fh));
}

/* The end: rank 0 removes the scratch file and says what passed; MPI_Finalize. */
static inline int mt_end(const char *path, const char *what)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        unlink(path);
        printf("%s on %d ranks: ok\n", what, size);
    }
    MPI_Finalize();
    return 0;
}

/* The whole file through POSIX (malloc'ed, *len bytes; NULL and 0 if missing). */
static inline unsigned char *mt_slurp(const char *path, int64_t *len)
{
    struct stat sb;
    int fd = open(path, O_RDONLY);
    *len = 0;
    if (fd < 0)
        return NULL;
    MT_CHECK(fstat(fd, &sb) == 0);
    unsigned char *p = malloc((size_t)sb.st_size + 1);
    MT_CHECK(p);
    MT_CHECK(pread(fd, p, (size_t)sb.st_size, 0) == sb.st_size);
    close(fd);
    *len = sb.st_size;
    return p;
}

/* Replace the file with n bytes through POSIX (rank 0 only; the caller synchronizes). */
static inline void mt_spit(const char *path, const unsigned char *p, int64_t n)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    MT_CHECK(fd >= 0);
    MT_CHECK(n == 0 || pwrite(fd, p, (size_t)n, 0) == n);
    close(fd);
}

/* The bytes a status reports. */
static inline int64_t mt_status_bytes(const MPI_Status *st)
{
    MPI_Count n = 0;
    MT_OK(MPI_Get_elements_x(st, MPI_BYTE, &n));
    return (int64_t)n;
}

#endif
