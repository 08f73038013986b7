/*
 * method.h - independent access methods: how the file regions and memory regions of one access
 * are turned into storage calls (paper 000 section II). Each method is one table filled by
 * field name; methods reach storage only through the tessi_drv_* wrappers of driver.h.
 *
 * Adding a method: one file defining `const struct tess_method tessi_method_<name>` plus one
 * line in registry.c.
 */
#ifndef TESS_METHOD_H
#define TESS_METHOD_H

#include "driver/driver.h"
#include "view/view.h"

/** Version of struct tess_method; the registry only hands out tables of this version. */
#define TESSI_METHOD_VERSION 1

/** romio_ds_read / romio_ds_write values. */
enum { TESSI_DS_AUTOMATIC = 0, TESSI_DS_ENABLE, TESSI_DS_DISABLE };

/** The method hints of a file, parsed once at open (defaults in file.c). */
typedef struct tessi_hints {
    const struct tess_method *method; /* tess_method; NULL means auto */
    int ds_read, ds_write;            /* romio_ds_read, romio_ds_write */
    int64_t rd_buffer;                /* ind_rd_buffer_size: sieve read window, bytes */
    int64_t wr_buffer;                /* ind_wr_buffer_size: sieve write window, bytes */
    int64_t list_max_pairs;           /* tess_list_max_pairs: file regions per list call */
} tessi_hints;

/**
 * One access as a method sees it. The file side is a region source positioned at the start of
 * the access (file offsets, increasing); the memory side a region source over count instances of
 * the memory type (offsets relative to buf), also at the start. Both carry `bytes` data bytes.
 * Methods consume both in step and never flatten either.
 */
typedef struct tessi_access {
    tessi_storage *st;        /* driver, handle, stats */
    const tessi_hints *hints;
    const tessi_view *view;
    tessi_rsrc *file;
    tessi_rsrc *mem;
    char *buf;                /* the caller's buffer: only read from by writes */
    const tess_type *memtype;
    int64_t count;
    int64_t bytes;
} tessi_access;

/**
 * A method. read/write move the access and store in *done the data bytes moved. A read moves
 * fewer than `bytes` only at end of file: *done is then the length of the stream prefix whose
 * file bytes exist (the caller zero-fills the rest). On failure they return a TESS_ERR_* code
 * with a message (and *done the bytes moved before it).
 */
struct tess_method {
    int version;      /* TESSI_METHOD_VERSION */
    const char *name; /* the value of hint tess_method that selects it */
    int (*read)(tessi_access *a, int64_t *done);
    int (*write)(tessi_access *a, int64_t *done);
};

extern const struct tess_method tessi_method_naive, tessi_method_sieve, tessi_method_list;

/** The method named name ("naive", "sieve", "list"), or NULL. */
const struct tess_method *tessi_method_find(const char *name);

/**
 * The method for one access: the hint's method if one is set, else the auto rule (see
 * registry.c). Never NULL.
 */
const struct tess_method *tessi_method_choose(const tessi_access *a, bool write);

/**
 * The naive loop from the sources' current positions to the end of the access: one storage call
 * per matched (file piece, memory piece), so one call per file region when memory is
 * contiguous. Sieve falls back to it when the storage refuses locks. *done gets the bytes moved
 * by this call.
 */
int tessi_naive_move(tessi_access *a, bool write, int64_t *done);

/** Record a staging buffer of len bytes held by a method (stats.peak_buffer_bytes). */
static inline void tessi_note_buffer(tessi_access *a, int64_t len)
{
    if (len > a->st->stats.peak_buffer_bytes)
        a->st->stats.peak_buffer_bytes = len;
}

#endif
