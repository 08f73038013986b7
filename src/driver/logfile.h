/*
 * logfile.h - an open handle of the `log` driver (log.c) and its writers, and the functions
 * of logwriter.c that keep them: the writers of the container and their logs, the merged index
 * brought up to date, a writer per thread. Private to src/driver/log*.c.
 */
#ifndef TESS_DRIVER_LOGFILE_H
#define TESS_DRIVER_LOGFILE_H

#include "driver/driver.h"
#include "driver/log.h"

#include <pthread.h>
#include <stdatomic.h>
#include <sys/types.h>

/* The container's files are reached through the posix driver's table. */
extern const struct tess_driver tess_posix_driver;
#define PX (&tess_posix_driver)

typedef struct tessi_log_writer {
    int32_t id;
    bool own;                  /* this handle writes it (thread, pid) */
    bool header_ok, damaged;   /* header read and valid; header invalid (no entries taken) */
    pthread_t thread;
    pid_t pid;
    int hold;                  /* own: the descriptor whose lock says the log is in use, or -1 */
    void *index, *data;        /* posix handles; another writer's data is opened when needed */
    _Atomic int64_t index_end; /* own: bytes of the index written, whole entries */
    int64_t data_end;          /* own: bytes of the data log in use (its thread only) */
    int64_t consumed;          /* bytes of the index merged into the map */
    int64_t seen_size;         /* another's: the index size at the last look */
    int64_t data_size;         /* another's: the data log size at the last look */
    int64_t entries;           /* entries merged */
    tessi_log_header header;
} tessi_log_writer;

typedef struct tessi_log_file {
    char *dir;
    int dirfd;
    int writers_fd;            /* the container's writers file: grows by one record per writer */
    int64_t writers_seen;      /* its size when the writers were last probed */
    bool rd, wr;
    bool refresh_on_sync;      /* tess_log_refresh = sync */
    uint64_t serial;           /* unique per open handle (the writer cache's key) */
    void *lock;                /* posix handle of the lock file (NULL: none) */
    unsigned lock_caps;
    pthread_rwlock_t rw;       /* the writers table and the map */
    tessi_log_writer **w;            /* by writer number; NULL: not seen yet */
    int32_t nw, capw;
    int32_t known;             /* writers [0, known) are all in w */
    tessi_log_map map;
    atomic_bool stale;         /* look at the other writers before the next read */
    atomic_bool dir_dirty;     /* files were created since the last sync */
    atomic_bool parent_dirty;  /* the container was created since the last sync */
} tessi_log_file;

/** Open the file `name` of the container with the posix driver. */
int tessi_log_child_open(const tessi_log_file *h, const char *name, int flags, void **ph);
/** Bring the map up to date: this handle's writers, the others too when `others`. Caller
 *  holds h->rw exclusively. */
int tessi_log_refresh(tessi_log_file *h, bool others);
/** Take h->rw with the map up to date (as tess_log_refresh says): 0 holding it (shared, or
 *  exclusive when it had to bring the map up to date), or an error without it. */
int tessi_log_lock_fresh(tessi_log_file *h);
/** Push this process's clock past the latest entry of every other writer. Caller holds h->rw
 *  exclusively. */
int tessi_log_observe_tails(tessi_log_file *h);
/** The writer of the calling thread on h (taken over or made at its first write). */
int tessi_log_own_writer(tessi_log_file *h, tessi_log_writer **out);
/** Append entry e (stamped now) to w's index, after its data. */
int tessi_log_append(tessi_log_writer *w, tessi_log_entry *e);

#endif
