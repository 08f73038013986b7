/*
 * logdir.c - the directory of a `log` container (format: log.h): the path, creating it whole,
 * recognizing it, removing it. Only files with the container's names are ever removed.
 */
#include "driver/log.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int tessi_log_check(int dirfd)
{
    char text[sizeof TESSI_LOG_FORMAT];
    int fd = openat(dirfd, "format", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? -EISDIR : -errno;
    ssize_t n;
    while ((n = read(fd, text, sizeof text)) < 0 && errno == EINTR)
        ;
    close(fd);
    return n == (ssize_t)strlen(TESSI_LOG_FORMAT) && memcmp(text, TESSI_LOG_FORMAT, (size_t)n) == 0
               ? 0 : -EINVAL;
}

/* Is name one of the files of a container? */
static bool container_name(const char *name)
{
    const char *digits = strncmp(name, "index.", 6) == 0 ? name + 6
                         : strncmp(name, "data.", 5) == 0 ? name + 5 : NULL;
    if (digits)
        return *digits && strspn(digits, "0123456789") == strlen(digits);
    return strcmp(name, "format") == 0 || strcmp(name, "lock") == 0 ||
           strcmp(name, "writers") == 0;
}

/* Remove the container files in dir (format first, so that nobody opens it half removed). */
static int remove_files(int dfd, DIR *d)
{
    int rc = unlinkat(dfd, "format", 0) && errno != ENOENT ? -errno : 0;
    struct dirent *de;
    rewinddir(d);
    while (rc == 0 && (de = readdir(d)))
        if (container_name(de->d_name) && unlinkat(dfd, de->d_name, 0) && errno != ENOENT)
            rc = -errno;
    return rc;
}

static int make_file(const char *dir, const char *name, const char *text)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666), rc = 0;
    if (fd < 0)
        return -errno;
    size_t len = strlen(text);
    if (len && write(fd, text, len) != (ssize_t)len)
        rc = -EIO;
    return close(fd) && rc == 0 ? -errno : rc;
}

int tessi_log_create(const char *dir, bool excl, bool *created)
{
    static atomic_uint seq;
    struct stat st;
    if (stat(dir, &st) == 0)
        return excl ? -EEXIST : 0;
    if (errno != ENOENT)
        return -errno;
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s.tmp%ld.%u", dir, (long)getpid(), atomic_fetch_add(&seq, 1));
    if (mkdir(tmp, 0777))
        return -errno;
    int rc = make_file(tmp, "format", TESSI_LOG_FORMAT);
    if (rc == 0)
        rc = make_file(tmp, "lock", "");
    if (rc == 0)
        rc = make_file(tmp, "writers", "");
    if (rc == 0 && rename(tmp, dir) == 0) {
        *created = true;
        return 0;
    }
    if (rc == 0)
        rc = -errno;
    DIR *d = opendir(tmp);
    if (d) {
        remove_files(dirfd(d), d);
        closedir(d);
    }
    rmdir(tmp);
    if (rc == -EEXIST || rc == -ENOTEMPTY) /* another process made it meanwhile */
        return excl ? -EEXIST : 0;
    return rc;
}

int tessi_log_path(const char *path, char **dir)
{
    size_t len = strlen(path);
    while (len > 1 && path[len - 1] == '/')
        len--;
    if (len == 0)
        return -ENOENT;
    if (len + 32 >= PATH_MAX)
        return -ENAMETOOLONG;
    *dir = strndup(path, len);
    return *dir ? 0 : -ENOMEM;
}

int tessi_log_remove(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -errno;
    bool ours = false, foreign = false;
    struct dirent *de;
    while ((de = readdir(d)))
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
            *(container_name(de->d_name) ? &ours : &foreign) = true;
    int rc = tessi_log_check(dirfd(d));
    if (rc == -EISDIR && ours && !foreign) /* the remains of a removal that stopped midway */
        rc = 0;
    if (rc == 0)
        rc = remove_files(dirfd(d), d);
    closedir(d);
    return rc == 0 && rmdir(dir) ? -errno : rc;
}
