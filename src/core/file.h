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
    tessi_memo memo;     /* what the methods remember between accesses (method.h) */
    struct tessi_coll *coll; /* the group of a file opened with a communicator (collective.c);
                                NULL for tess_file_open */
};

#endif
