/*
 * coll_test.h - helpers of the collective I/O tests (tests/coll/test_coll_*.c): checks that abort
 * the whole job (a failed rank that merely exits would leave the others waiting), opening with
 * hints, scratch files through plain POSIX (the independent side of every comparison).
 */
#ifndef TESS_COLL_TEST_H
#define TESS_COLL_TEST_H

#include "tessera_mpi.h"

#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char ct_where[512]; /* what the test is doing (printed with a failure) */

static inline void ct_fail(const char *file, int line, const char *msg)
{
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    fprintf(stderr, "[rank %d] %s:%d: FAILED: %s\n  while: %s\n", rank, file, line, msg,
            ct_where);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

#define CT_CHECK(cond)                                                                       \
    do {                                                                                     \
        if (!(cond))                                                                         \
            ct_fail(__FILE__, __LINE__, #cond);                                              \
    } while (0)

/* A Tessera call that must succeed. */
#define CT_OK(call)                                                                          \
    do {                                                                                     \
        int ct_rc_ = (call);                                                                 \
        if (ct_rc_ != 0) {                                                                   \
            char ct_m_[1024];                                                                \
            snprintf(ct_m_, sizeof ct_m_, "%s returned %d (%s): %s", #call, ct_rc_,          \
                     tess_strerror(ct_rc_), tess_last_error());                              \
            ct_fail(__FILE__, __LINE__, ct_m_);                                              \
        }                                                                                    \
    } while (0)

/* A Tessera call that must fail with code and leave a message. */
#define CT_ERR(call, code)                                                                   \
    do {                                                                                     \
        int ct_rc_ = (call);                                                                 \
        if (ct_rc_ != (code) || tess_last_error()[0] == '\0') {                              \
            char ct_m_[1024];                                                                \
            snprintf(ct_m_, sizeof ct_m_, "%s returned %d (%s), expected %d: %s", #call,     \
                     ct_rc_, tess_strerror(ct_rc_), (code), tess_last_error());              \
            ct_fail(__FILE__, __LINE__, ct_m_);                                              \
        }                                                                                    \
    } while (0)

#define CT_EQ(got, exp)                                                                      \
    do {                                                                                     \
        long long ct_g_ = (long long)(got), ct_e_ = (long long)(exp);                        \
        if (ct_g_ != ct_e_) {                                                                \
            char ct_m_[512];                                                                 \
            snprintf(ct_m_, sizeof ct_m_, "%s is %lld, expected %s = %lld", #got, ct_g_,     \
                     #exp, ct_e_);                                                           \
            ct_fail(__FILE__, __LINE__, ct_m_);                                              \
        }                                                                                    \
    } while (0)

static inline int ct_rank(void)
{
    int r;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

static inline int ct_size(void)
{
    int s;
    MPI_Comm_size(MPI_COMM_WORLD, &s);
    return s;
}

/* A scratch file name shared by the job (rank 0's pid, broadcast). */
static inline void ct_path(char *buf, size_t cap, const char *tag)
{
    long pid = (long)getpid();
    MPI_Bcast(&pid, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    snprintf(buf, cap, "tess_coll_%s_%ld.dat", tag, pid);
}

/* Open collectively with hints given as a NULL-terminated list of key, value pairs. */
static inline int ct_open(MPI_Comm comm, const char *path, int flags, const char *const *kv,
                          tess_file **f)
{
    tess_info *info;
    CT_OK(tess_info_create(&info));
    for (int i = 0; kv && kv[i]; i += 2)
        CT_OK(tess_info_set(info, kv[i], kv[i + 1]));
    int rc = tess_file_open_mpi(comm, path, flags, info, f);
    tess_info_free(info);
    return rc;
}

/* Replace the file's contents with len bytes (POSIX). */
static inline void ct_put(const char *path, const void *data, int64_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CT_CHECK(fd >= 0);
    CT_CHECK(len == 0 || pwrite(fd, data, (size_t)len, 0) == (ssize_t)len);
    CT_CHECK(close(fd) == 0);
}

/* The file's size, and its contents into a malloc'ed buffer (*data may be NULL to skip). */
static inline int64_t ct_get(const char *path, unsigned char **data)
{
    int fd = open(path, O_RDONLY);
    CT_CHECK(fd >= 0);
    struct stat st;
    CT_CHECK(fstat(fd, &st) == 0);
    int64_t len = (int64_t)st.st_size;
    if (data) {
        *data = malloc((size_t)len + 1);
        CT_CHECK(*data);
        CT_CHECK(len == 0 || pread(fd, *data, (size_t)len, 0) == (ssize_t)len);
    }
    CT_CHECK(close(fd) == 0);
    return len;
}

#endif
