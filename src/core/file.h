/*
 * file.h - an open file: the storage handle (driver, handle, counters), the view, the hints
 * parsed once at open, and the group operations of a file opened over a group. Internal; the
 * public handle is opaque.
 *
 * The core never reaches a group itself: a front end that opens a file over a group
 * (tess_file_open_group, core/group.c) installs a table of group operations on it, and the
 * collective calls of file.c and access.c go through that table.
 */
#ifndef TESS_FILE_H
#define TESS_FILE_H

#include "base/hints.h"
#include "method/method.h"

/** The collective operations of a file opened over a group (NULL table: no group). */
typedef struct tessi_file_group {
    /* collective close: agree on rc (this process's close result), release the group's state;
     * returns the agreed verdict */
    int (*close)(tess_file *f, int rc);
    /* collective tess_file_set_view: the view is installed on every process or on none */
    int (*set_view)(tess_file *f, int64_t disp, tess_type *etype, tess_type *filetype);
    /* collective tess_file_set_realms */
    int (*set_realms)(tess_file *f, int64_t disp, tess_type *realm, int64_t shift);
    /* collective tess_file_read_at_all / write_at_all */
    int (*access_all)(const char *who, tess_file *f, int64_t offset, void *buf, int64_t count,
                      tess_type *memtype, int64_t *bytes, bool write);
} tessi_file_group;

/** The operations of the thread-team state of a file (src/team installs them with the state). */
typedef struct tessi_file_team {
    /* tess_file_close: release the state (its helper handles included) */
    void (*free)(void *team);
    /* tess_file_stats: merge the counters of the state's helper handles into *acc (acc NULL:
     * tess_file_reset_stats, reset them) */
    void (*stats)(const void *team, tess_stats *acc);
} tessi_file_team;

struct tess_file {
    int flags;           /* as given to tess_file_open (the caller's access mode) */
    char *path;          /* as given to the open (with its "<driver>:" prefix, if any) */
    tessi_storage st;    /* driver, its handle, and the stats of this file */
    tessi_hint_val hv[TESSI_NHINTS]; /* the core's hints in use (defaults resolved) */
    tessi_hint_val *dhv; /* the driver's own hints in use (st.drv->nhints entries) */
    tessi_hints hints;   /* the file-scope hints as the methods use them, and the model */
    tessi_view view;
    bool sieve_writes;   /* sieving writes can happen here (where the write gate is static,
                            driver/gate.c, plain writes then lock) */
    bool readable;       /* the storage handle can read (a read-modify-write is possible) */
    bool atomic;         /* atomic mode: every access locks its extent (tess_file_set_atomicity) */
    tessi_memo memo;     /* what the methods remember between accesses (method.h) */
    const tessi_file_group *group; /* installed by the front end of a group; NULL otherwise */
    void *coll;          /* the group's collective state (the front end's) */
    /* thread teams (src/team): their state of this file, made by the first team access, and
     * its operations (the core does not reach into src/team) */
    void *team;
    const tessi_file_team *team_ops;
};

/**
 * Validate every hint of info as every open path does (tess_file_open, tess_file_delete,
 * tess_file_open_group): the core's table (file and collective hints alike), the driver named
 * by hint tess_driver or by the path's "<driver>:" prefix (*path_out: the path without it), the
 * method named, the driver's own hints, the cost-model profile (one that is named must load)
 * and the decision log (it must be writable). Fills f->hv, f->dhv, f->hints, f->st.drv and
 * sieve_writes (from flags); nothing is opened or created. On failure f holds nothing to release.
 */
int tessi_file_hints(const char *who, const char *path, int flags, const tess_info *info,
                     tess_file *f, const char **path_out);

/** Release what tessi_file_hints filled. */
void tessi_file_hints_release(tess_file *f);

/**
 * Open a file as tess_file_open does, the hints already validated into *f (tessi_file_hints;
 * f is calloc'ed with its path set, taken over: freed on failure). On success *out is f.
 */
int tessi_file_open_checked(const char *path, int flags, const tess_info *info, tess_file *f,
                            tess_file **out);

/** Check the open flags (exactly one access mode; no CREATE/EXCL with RDONLY). */
int tessi_file_check_flags(const char *who, int flags);

/**
 * The local checks of an access (independent or collective): handles, counts, access mode,
 * int64 overflow of the memory reach, whole etypes. Sets *total to the data bytes.
 */
int tessi_file_check_access(const char *who, const tess_file *f, int64_t offset, const void *buf,
                            int64_t count, const tess_type *memtype, bool write, int64_t *total);

/** The independent access (tess_file_read_at / write_at; `who` names the caller). */
int tessi_file_access(const char *who, tess_file *f, int64_t offset, void *buf, int64_t count,
                      tess_type *memtype, int64_t *bytes, bool write);

/** tessi_file_access with the method hints h (f's own but for their model, e.g. one priced
 *  for several processes accessing the storage at once) in place of f->hints. */
int tessi_file_access_hinted(const char *who, tess_file *f, const tessi_hints *h, int64_t offset,
                             void *buf, int64_t count, tess_type *memtype, int64_t *bytes,
                             bool write);

/*
 * Thread teams on a file opened over a group (src/team, hybrid): both collective over the
 * group, rc being this process's failure so far (0: none; it is agreed, nothing hangs).
 * offsets: *before receives the sum of `mine` over the lower ranks, *total over all.
 * access: one collective access of this process's data through a view of its own for this call
 * only (disp, TESS_BYTE, filetype; filetype NULL: the default view), as tess_file_*_at_all at
 * offset 0.
 */
int tessi_file_group_offsets(tess_file *f, int rc, int64_t mine, int64_t *before, int64_t *total);
int tessi_file_group_access(tess_file *f, int rc, int64_t disp, tess_type *filetype, void *buf,
                            int64_t count, tess_type *memtype, int64_t *bytes, bool write);

#endif
