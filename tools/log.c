/*
 * log.c - `tessera log flatten CONTAINER FILE` and `tessera log stat CONTAINER`: a container of
 * driver `log` (format: src/driver/log.h) turned into a plain file, and what it is made of.
 * CONTAINER is the directory, with or without the "log:" prefix.
 */
#include "cmds.h"
#include "driver/driver.h"
#include "driver/log.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern const struct tess_driver tess_log_driver;

/* Bytes flatten copies per call. */
#define COPY_CHUNK (INT64_C(4) << 20)

/* An open container: its handle, merged index and writers (see tessi_log_snapshot). */
typedef struct container {
    tessi_storage s;
    const tessi_log_map *m;
    tessi_log_writer_info *w;
    int32_t nw;
} container;

/* Open the container read-only and take its merged index; a message on failure. */
static int container_open(const char *cmd, const char *path, container *c)
{
    const char *dir;
    const struct tess_driver *named = tessi_driver_of_path(path, &dir);
    if (named && named != &tess_log_driver) {
        fprintf(stderr, "tessera log %s: '%s' names the %s driver\n", cmd, path, named->name);
        return -EINVAL;
    }
    int rc = tessi_drv_open(&c->s, &tess_log_driver, dir, TESS_RDONLY, NULL);
    if (rc == 0 && (rc = tessi_log_snapshot(c->s.h, &c->m, &c->w, &c->nw)))
        tessi_drv_close(&c->s);
    if (rc)
        fprintf(stderr, "tessera log %s: cannot read the container '%s': %s\n", cmd, path,
                strerror(-rc));
    return rc;
}

static void container_close(container *c)
{
    free(c->w);
    tessi_drv_close(&c->s);
}

static int usage(const char *cmd, const char *args, bool help)
{
    fprintf(help ? stdout : stderr, "usage: tessera log %s %s\n", cmd, args);
    return help ? 0 : 2;
}

static bool want_help(int argc, char **argv)
{
    return argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0);
}

/* Write all of buf at off. */
static int write_all(int fd, const char *buf, int64_t n, int64_t off)
{
    while (n > 0) {
        ssize_t put = pwrite(fd, buf, (size_t)n, (off_t)off);
        if (put < 0 && errno == EINTR)
            continue;
        if (put <= 0)
            return put < 0 ? -errno : -EIO;
        buf += put;
        off += put;
        n -= put;
    }
    return 0;
}

/* The runs of logical bytes that hold data, within the size: [from, to) pairs. */
static int64_t data_runs(const tessi_log_map *m, int64_t **runs)
{
    int64_t n = 0;
    *runs = malloc((size_t)(2 * m->n + 2) * sizeof **runs);
    for (int64_t k = 0; *runs && k < m->n && m->ext[k].start < m->size; k++) {
        if (m->ext[k].zero)
            continue;
        int64_t to = tessi_min64(tessi_log_end(&m->ext[k]), m->size);
        if (n > 0 && (*runs)[2 * n - 1] == m->ext[k].start) {
            (*runs)[2 * n - 1] = to;
        } else {
            (*runs)[2 * n] = m->ext[k].start;
            (*runs)[2 * n + 1] = to;
            n++;
        }
    }
    return *runs ? n : -1;
}

int tess_cmd_log_flatten(int argc, char **argv)
{
    const char *args = "CONTAINER FILE   (the logical file, holes left sparse)";
    if (want_help(argc, argv) || argc != 3)
        return usage("flatten", args, want_help(argc, argv));
    container c;
    if (container_open("flatten", argv[1], &c))
        return 1;
    int64_t *runs, size = c.m->size, nruns = data_runs(c.m, &runs), extents = c.m->n;
    int32_t nw = c.nw;
    char *buf = malloc((size_t)COPY_CHUNK);
    int out = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    int rc = nruns < 0 || !buf ? -ENOMEM : out < 0 ? -errno : 0;
    for (int64_t r = 0; rc == 0 && r < nruns; r++)
        for (int64_t at = runs[2 * r]; rc == 0 && at < runs[2 * r + 1]; at += COPY_CHUNK) {
            int64_t n = tessi_min64(COPY_CHUNK, runs[2 * r + 1] - at);
            int64_t got = tessi_drv_pread(&c.s, buf, n, at);
            rc = got == n ? write_all(out, buf, n, at) : got < 0 ? (int)got : -EIO;
        }
    if (rc == 0 && (ftruncate(out, (off_t)size) || fsync(out)))
        rc = -errno;
    if (out >= 0 && close(out) && rc == 0)
        rc = -errno;
    container_close(&c);
    free(runs);
    free(buf);
    if (rc) {
        fprintf(stderr, "tessera log flatten: %s into %s: %s\n", argv[1], argv[2], strerror(-rc));
        return 1;
    }
    printf("%s: %lld bytes from %d writers (%lld extents) into %s\n", argv[1], (long long)size,
           (int)nw, (long long)extents, argv[2]);
    return 0;
}

int tess_cmd_log_stat(int argc, char **argv)
{
    if (want_help(argc, argv) || argc != 2)
        return usage("stat", "CONTAINER", want_help(argc, argv));
    container c;
    if (container_open("stat", argv[1], &c))
        return 1;
    const tessi_log_map *m = c.m;
    const tessi_log_writer_info *w = c.w;
    int32_t nw = c.nw;
    /* what a sequential read of the whole file meets: runs (one storage call each) */
    int64_t live = 0, runs = 0, pieces = 0, data = 0, unread = 0;
    const tessi_log_extent *prev = NULL;
    for (int64_t k = 0; k < m->n && m->ext[k].start < m->size; k++) {
        const tessi_log_extent *e = &m->ext[k];
        if (e->zero)
            continue;
        live += tessi_min64(tessi_log_end(e), m->size) - e->start;
        pieces++;
        runs += !prev || prev->writer != e->writer || tessi_log_end(prev) != e->start ||
                prev->phys + prev->len != e->phys;
        prev = e;
    }
    for (int32_t i = 0; i < nw; i++) {
        data += w[i].data_bytes;
        unread += w[i].index_bytes - w[i].valid_bytes;
    }
    printf("container  %s\n", argv[1]);
    printf("writers    %d\n", (int)nw);
    printf("entries    %lld (writes %lld, set_size %lld, preallocate %lld)\n",
           (long long)(m->entries[TESSI_LOG_DATA] + m->entries[TESSI_LOG_TRUNCATE] +
                       m->entries[TESSI_LOG_EXTEND]),
           (long long)m->entries[TESSI_LOG_DATA], (long long)m->entries[TESSI_LOG_TRUNCATE],
           (long long)m->entries[TESSI_LOG_EXTEND]);
    printf("size       %lld bytes: %lld hold data, %lld read as zeros\n", (long long)m->size,
           (long long)live, (long long)(m->size - live));
    printf("extents    %lld hold data, %.0f bytes each on average (%lld in the merged index)\n",
           (long long)pieces, pieces ? (double)live / (double)pieces : 0.0, (long long)m->n);
    printf("runs       %lld: storage calls of a sequential read of the whole file\n",
           (long long)runs);
    printf("logs       %lld bytes of data, %.1f%% of them live (the rest overwritten or cut)\n",
           (long long)data, data ? 100.0 * (double)live / (double)data : 0.0);
    printf("unread     %lld bytes of index tails (torn or damaged)\n", (long long)unread);
    printf("\n%6s %8s %8s %-20s %10s %14s %12s %8s\n", "writer", "pid", "thread", "host",
           "entries", "data bytes", "index bytes", "unread");
    for (int32_t i = 0; i < nw; i++) {
        const tessi_log_header *h = &w[i].header;
        printf("%6d %8u %8lld %-20s %10lld %14lld %12lld %8lld%s\n", (int)w[i].id, h->pid,
               (long long)h->tid, w[i].header_ok ? h->host : "?", (long long)w[i].entries,
               (long long)w[i].data_bytes, (long long)w[i].index_bytes,
               (long long)(w[i].index_bytes - w[i].valid_bytes),
               w[i].header_ok || w[i].index_bytes < TESSI_LOG_HEADER ? "" : "  (bad header)");
    }
    container_close(&c);
    return 0;
}
