/*
 * log.h - the log-structured container of driver `log` (paper 001 section 3.3.5, PLFS style):
 * its format on storage and the merged index, shared by the driver (log.c), the index code
 * (logindex.c) and the `tessera log` tools.
 *
 * A container is a directory:
 *   format      the text TESSI_LOG_FORMAT: marks the directory as a container (made whole in a
 *               temporary directory and renamed into place, so a container is never half made)
 *   lock        empty; fcntl byte-range locks on it are the locks of the logical file
 *   writers     a 4-byte record (its number) appended by every writer when it is made: readers
 *               look for new writers only when its size changed
 *   index.<n>   writer n's index: a TESSI_LOG_HEADER-byte header, then TESSI_LOG_ENTRY-byte
 *               entries, appended
 *   data.<n>    writer n's data log: the bytes of its writes, appended
 * A writer is one thread of one process writing through one handle. It holds its log for as long
 * as it lives: an open-file-description fcntl lock on the first byte of index.<n>, released when
 * its handle closes or its process dies. A new writer first takes over a log nobody holds (the
 * entries up to the first invalid one stay, the rest is cut, the header names the new owner);
 * else it claims the lowest free n at or above the numbers its handle knows by creating
 * index.<n> exclusively. Numbers are dense from 0, so a reader finds every log by probing upward
 * until a number is missing; reopening a container adds no logs.
 *
 * An entry says: writer n wrote `length` bytes at logical offset `logical`; they are at
 * `physical` in data.<n> (TESSI_LOG_DATA); or it set the size to `logical` (TESSI_LOG_TRUNCATE,
 * set_size) or grew it to at least `logical` (TESSI_LOG_EXTEND, preallocate). `stamp` orders
 * entries: nanoseconds of the real-time clock, strictly increasing in a process and pushed past
 * every stamp the process has read from other writers (so writes ordered by MPI's
 * sync-barrier-sync or by locks are ordered here on any clocks); ties between writers go to the
 * higher writer number. The later entry wins every byte both cover.
 *
 * Crash safety: a writer appends its data, then the entry (one pwrite each). An entry is valid
 * when its magic, writer number and checksum are right, its stamp is before the year 2262 and
 * its bytes lie inside its data log; a reader stops at a writer's first invalid or partial
 * entry (the torn tail of a killed writer), so nothing is ever read that a complete write did
 * not put there. sync makes data, entries and
 * new files durable (fsync of the logs, then of the directory).
 *
 * Integers are little-endian on storage. Header: "TESSLOG1", writer u32, pid u32, thread id
 * i64, creation stamp i64, host name (28 bytes, NUL-padded), checksum u32. Entry: magic u32,
 * kind u8, 3 zero bytes, writer u32, checksum u32, logical i64, physical i64, length i64,
 * stamp i64. Checksums are FNV-1a over the other bytes.
 */
#ifndef TESS_DRIVER_LOG_H
#define TESS_DRIVER_LOG_H

#include "base/base.h"

#define TESSI_LOG_FORMAT "tessera log container 1\n"
#define TESSI_LOG_HEADER 64
#define TESSI_LOG_ENTRY 48
#define TESSI_LOG_HOST 28

/** Entry kinds. */
enum { TESSI_LOG_DATA = 1, TESSI_LOG_TRUNCATE = 2, TESSI_LOG_EXTEND = 3 };

/** An index entry (see above). */
typedef struct tessi_log_entry {
    int kind;
    int32_t writer;
    int64_t logical, physical, length, stamp;
} tessi_log_entry;

/** An index file's header. */
typedef struct tessi_log_header {
    int32_t writer;
    uint32_t pid;
    int64_t tid, stamp;
    char host[TESSI_LOG_HOST + 1];
} tessi_log_header;

void tessi_log_entry_encode(const tessi_log_entry *e, unsigned char b[TESSI_LOG_ENTRY]);
/** Decode and check an entry of writer's index: false when it is not a valid entry. */
bool tessi_log_entry_decode(const unsigned char b[TESSI_LOG_ENTRY], int32_t writer,
                            tessi_log_entry *e);
void tessi_log_header_encode(const tessi_log_header *h, unsigned char b[TESSI_LOG_HEADER]);
bool tessi_log_header_decode(const unsigned char b[TESSI_LOG_HEADER], int32_t writer,
                             tessi_log_header *h);

/**
 * One extent of the merged index: logical bytes [start, start + len) are the bytes at phys in
 * data.<writer> (zero: they read as zeros, cut off by a set_size) as the entry of (stamp,
 * writer) wrote them.
 */
typedef struct tessi_log_extent {
    int64_t start, len, phys, stamp;
    int32_t writer;
    int32_t zero;
} tessi_log_extent;

static inline int64_t tessi_log_end(const tessi_log_extent *e) { return e->start + e->len; }

/**
 * The merged index: for every byte the latest entry that covers it, as sorted, disjoint extents
 * (40 bytes each; at most 2k - 1 for k entries, one per entry when writes do not overlap; bytes
 * overwritten since leave no trace), plus the size. Entries are added in any order (a late entry
 * with an old stamp loses where it should): they collect in a batch that is merged when it
 * reaches max(65536, extents) entries or at tessi_log_map_flush, in O(b log b + extents) for b
 * entries, so building the map of N entries costs O(N log N) and at most about three times the
 * map's memory.
 */
typedef struct tessi_log_map {
    tessi_log_extent *ext;
    int64_t n;
    int64_t size;                 /* the logical size (valid after a flush) */
    tessi_log_extent *batch;      /* added, not merged yet */
    int64_t nbatch, capbatch;
    bool cut;                     /* a set_size was seen: the latest one is cut_* */
    int64_t cut_stamp, cut_size;
    int32_t cut_writer;
    tessi_log_extent *grow;       /* preallocations later than the latest set_size: (start =
                                   * the size, stamp, writer) */
    int64_t ngrow, capgrow;
    int64_t entries[4];           /* entries merged, by kind */
} tessi_log_map;

/** Add a valid entry (decoded by tessi_log_entry_decode). -ENOMEM leaves the map usable. */
int tessi_log_map_add(tessi_log_map *m, const tessi_log_entry *e);
/** Merge the batch and compute the size. */
int tessi_log_map_flush(tessi_log_map *m);
/** The first extent that ends after off (m->n if none). */
int64_t tessi_log_map_find(const tessi_log_map *m, int64_t off);
void tessi_log_map_free(tessi_log_map *m);

/* The container's directory (logdir.c). */

/** The container directory path names: a malloc'ed copy without trailing slashes, or
 *  -ENOENT (empty), -ENAMETOOLONG (no room for the names of its files). */
int tessi_log_path(const char *path, char **dir);
/** Create the container dir unless something is there (then -EEXIST with excl, else 0: the
 *  open checks what it is). It is made in a temporary directory beside it and renamed into
 *  place, so nobody sees it half made; *created says whether this call made it. */
int tessi_log_create(const char *dir, bool excl, bool *created);
/** Is the directory open at dirfd a container? 0; -EISDIR: a plain directory (no format
 *  file); -EINVAL: its format file holds something else. */
int tessi_log_check(int dirfd);
/** Remove the container dir: its files, then the directory. A directory that is neither a
 *  container nor the remains of one (only container files, the format file gone) is left
 *  alone: -EISDIR. */
int tessi_log_remove(const char *dir);

/** What `tessera log stat` tells about one writer. */
typedef struct tessi_log_writer_info {
    int32_t id;
    bool header_ok;          /* the header was read and is valid */
    tessi_log_header header;
    int64_t entries;         /* valid entries */
    int64_t index_bytes;     /* size of index.<id> */
    int64_t valid_bytes;     /* header and valid entries: the rest is a torn or damaged tail */
    int64_t data_bytes;      /* size of data.<id> */
} tessi_log_writer_info;

/**
 * For the tools: bring the merged index of an open `log` handle h up to date and return it
 * (valid until the next call on h) with a malloc'ed array of its writers (*nw of them).
 */
int tessi_log_snapshot(void *h, const tessi_log_map **map, tessi_log_writer_info **w,
                       int32_t *nw);

#endif
