/*
 * file.h - an open file: the storage handle (driver, handle, counters), the view, and the hints
 * parsed once at open. Internal; the public handle is opaque.
 */
#ifndef TESS_FILE_H
#define TESS_FILE_H

#include "method/method.h"

struct tess_file {
    int flags;           /* as given to tess_file_open (the caller's access mode) */
    tessi_storage st;    /* driver, its handle, and the stats of this file */
    tessi_hints hints;
    tessi_view view;
    bool sieve_writes;   /* sieving writes can happen here: every write takes a lock */
    bool readable;       /* the storage handle can read (a read-modify-write is possible) */
    bool atomic;         /* atomic mode: every access locks its extent (tess_file_set_atomicity) */
    int model_variant;   /* tess_model: TESSI_CACHED or TESSI_UNCACHED, as given */
    char profile[4096];  /* the profile file in use ("" for the documented defaults) */
    tessi_memo memo;     /* what the methods remember between accesses (method.h) */
    struct tessi_coll *coll; /* the group of a file opened with a communicator (collective.c);
                                NULL for tess_file_open */
};

/**
 * The local checks of an access (independent or collective): handles, counts, access mode,
 * int64 overflow of the memory reach, whole etypes. Sets *total to the data bytes.
 */
int tessi_file_check_access(const char *who, const tess_file *f, int64_t offset, const void *buf,
                            int64_t count, const tess_type *memtype, bool write, int64_t *total);

#endif
