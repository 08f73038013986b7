/*
 * test_file_common.h - helpers shared by the test_file_* programs: scratch files handled with
 * plain POSIX calls (the independent side of every comparison) and opening with hints.
 */
#ifndef TEST_FILE_COMMON_H
#define TEST_FILE_COMMON_H

#include "check.h"

#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* A scratch file name unique to this process, in the working directory. */
static inline void tf_path(char *buf, size_t cap, const char *tag)
{
    snprintf(buf, cap, "tess_%s_%ld.dat", tag, (long)getpid());
}

/* Replace the file's contents with len bytes of data (POSIX, not Tessera). */
static inline void tf_put(const char *path, const void *data, int64_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK(fd >= 0);
    CHECK(len == 0 || pwrite(fd, data, (size_t)len, 0) == (ssize_t)len);
    CHECK(close(fd) == 0);
}

/* The file's size, and its contents into a malloc'ed buffer (*data, may be NULL to skip). */
static inline int64_t tf_get(const char *path, unsigned char **data)
{
    int fd = open(path, O_RDONLY);
    CHECK(fd >= 0);
    struct stat st;
    CHECK(fstat(fd, &st) == 0);
    int64_t len = (int64_t)st.st_size;
    if (data) {
        *data = malloc((size_t)len + 1);
        CHECK(*data);
        CHECK(len == 0 || pread(fd, *data, (size_t)len, 0) == (ssize_t)len);
    }
    CHECK(close(fd) == 0);
    return len;
}

/* Open path with hints given as a NULL-terminated list of key, value pairs. */
static inline int tf_open(const char *path, int flags, tess_file **f, const char *const *kv)
{
    tess_info *info;
    CHECK_OK(tess_info_create(&info));
    for (int i = 0; kv && kv[i]; i += 2)
        CHECK_OK(tess_info_set(info, kv[i], kv[i + 1]));
    int rc = tess_file_open(path, flags, info, f);
    tess_info_free(info);
    return rc;
}

/* Run writer(w, round) for w in [0, n) (n <= 8) in forked processes released together through a
 * pipe (each waits for its end to close, so they start at once), and check that every one
 * exited 0. */
static inline void tf_race(int n, int round, int (*writer)(int w, int round))
{
    int go[2];
    pid_t pids[8];
    CHECK(n <= 8 && pipe(go) == 0);
    for (int w = 0; w < n; w++) {
        pids[w] = fork();
        CHECK(pids[w] >= 0);
        if (pids[w] == 0) {
            char c;
            close(go[1]);
            CHECK(read(go[0], &c, 1) == 0); /* wait until the parent opens the gate */
            _exit(writer(w, round));
        }
    }
    close(go[0]);
    close(go[1]);
    for (int w = 0; w < n; w++) {
        int status;
        CHECK(waitpid(pids[w], &status, 0) == pids[w]);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
}

#endif
