/*
 * file.c - files: hints, open/close, views, size, sync, preallocation, deletion, atomic mode,
 * tess_file_get_info and the counters. The accesses are in access.c; a file opened over a
 * group reaches the group only through the table its front end installed (file.h).
 *
 * Hints: the declarative table of base/hints.c (README.md lists them), validated identically
 * on every open path by tessi_file_hints: the file and the collective hints alike (a collective
 * hint given to an independent open is still checked, so a bad value never passes silently),
 * the driver's own hints with the driver's table, and the named driver, method, profile and
 * decision log. Unknown keys are ignored. An explicit tess_method is used as is; romio_ds_*
 * steer the auto rule (method/registry.c). The cost model of the file (pmd, auto) is the
 * profile's variant with p = 1, list_max = tess_list_max_pairs, list batching only where the
 * driver's handle batches (TESSI_CAP_BATCHED) and sieving read-modify-writes only where this
 * handle can read and the storage has locks.
 */
#include "core/file.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------------ hints */

/* The decision log must be appendable: an existing file is opened (not created), a new one
 * needs a writable directory. Nothing is created here. */
static int check_log(const char *who, const char *path)
{
    char dir[1100];
    int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd >= 0) {
        close(fd);
        return 0;
    }
    int err = errno;
    if (err == ENOENT) {
        const char *slash = strrchr(path, '/');
        snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) + 1 : 1,
                 slash ? path : ".");
        if (access(dir, W_OK | X_OK) == 0)
            return 0;
        err = errno;
    }
    return tessi_error(tessi_errno_code(-err), "%s: hint tess_debug_decisions = '%s': cannot "
                       "append to it: %s", who, path, strerror(err));
}

/* The method hint: "auto" (NULL) or a registered method. */
static int find_method(const char *who, const char *name, const struct tess_method **m)
{
    *m = strcmp(name, "auto") == 0 ? NULL : tessi_method_find(name);
    if (*m || strcmp(name, "auto") == 0)
        return 0;
    char list[256] = "auto";
    for (int i = 0; tessi_method_at(i); i++) {
        size_t used = strlen(list);
        snprintf(list + used, sizeof list - used, "|%s", tessi_method_at(i)->name);
    }
    return tessi_error(TESS_ERR_ARG, "%s: hint tess_method = '%s' is not one of %s", who, name,
                       list);
}

/* The driver: a "<driver>:" prefix of the path or hint tess_driver (they must agree). */
static int find_driver(const char *who, const char *path, const tessi_hint_val *v,
                       const struct tess_driver **drv, const char **rest)
{
    const struct tess_driver *by_path = tessi_driver_of_path(path, rest);
    *drv = by_path && !v->given ? by_path : tessi_driver_find(v->s);
    if (!*drv)
        return tessi_error(TESS_ERR_ARG, "%s: hint tess_driver = '%s' names no driver", who, v->s);
    if (by_path && by_path != *drv)
        return tessi_error(TESS_ERR_ARG, "%s: path '%s' names the %s driver, hint tess_driver "
                           "the %s driver", who, path, by_path->name, (*drv)->name);
    return 0;
}

/* The cost model of the file from the profile of its driver (tess_profile, tess_model). */
static int file_model(const char *who, tess_file *f)
{
    tessi_hints *h = &f->hints;
    tessi_hint_val *pv = &f->hv[TESSI_H_PROFILE];
    tessi_profile *pf = malloc(sizeof *pf);
    char why[256];
    if (!pf)
        return tessi_error(TESS_ERR_NOMEM, "%s: out of memory", who);
    int rc = tessi_profile_resolve(pv->s, f->st.drv->name, pf);
    if (rc) {
        snprintf(why, sizeof why, "%s", tess_last_error());
        free(pf);
        return tessi_error(rc, "%s: cost-model profile: %s", who, why);
    }
    int variant = (int)f->hv[TESSI_H_MODEL].i;
    if (variant == TESSI_UNCACHED && pf->uncached == TESSI_UNCACHED_NONE)
        variant = TESSI_CACHED;
    h->model = pf->model[variant];
    h->model_defaults = pf->defaults;
    h->model.p = 1;
    h->model.list_max = h->list_max_pairs;
    free(pv->s); /* the profile in use: reported by tess_file_get_info (none: defaults) */
    pv->s = pf->defaults ? NULL : strdup(pf->path);
    free(pf);
    return 0;
}

int tessi_file_hints(const char *who, const char *path, int flags, const tess_info *info,
                     tess_file *f, const char **path_out)
{
    const struct tess_driver *drv = NULL;
    tessi_hint_val *hv = f->hv;
    int rc = tessi_hints_parse(tessi_hints_table, TESSI_NHINTS, info, who, hv);
    if (rc)
        return rc;
    f->dhv = NULL;
    tessi_hints *h = &f->hints;
    *h = (tessi_hints){.ds_read = (int)hv[TESSI_H_DS_READ].i,
                       .ds_write = (int)hv[TESSI_H_DS_WRITE].i,
                       .rd_buffer = hv[TESSI_H_RD_BUFFER].i, .wr_buffer = hv[TESSI_H_WR_BUFFER].i,
                       .list_max_pairs = hv[TESSI_H_LIST_MAX_PAIRS].i};
    if (hv[TESSI_H_DECISIONS].s)
        snprintf(h->decisions, sizeof h->decisions, "%s", hv[TESSI_H_DECISIONS].s);
    if ((rc = find_method(who, hv[TESSI_H_METHOD].s, &h->method)) ||
        (rc = find_driver(who, path, &hv[TESSI_H_DRIVER], &drv, path_out)))
        goto fail;
    f->st.drv = drv;
    free(hv[TESSI_H_DRIVER].s); /* the driver in use, also when the path named it */
    if (!(hv[TESSI_H_DRIVER].s = strdup(drv->name)) ||
        (drv->nhints && !(f->dhv = calloc((size_t)drv->nhints, sizeof *f->dhv)))) {
        rc = tessi_error(TESS_ERR_NOMEM, "%s: out of memory", who);
        goto fail;
    }
    if ((drv->nhints && (rc = tessi_hints_parse(drv->hints, drv->nhints, info, who, f->dhv))) ||
        (rc = file_model(who, f)) ||
        (h->decisions[0] && (rc = check_log(who, h->decisions))))
        goto fail;
    f->sieve_writes = !(flags & TESS_RDONLY) && ((h->method && h->method->sieves) ||
                                                  (!h->method && h->ds_write != TESSI_DS_DISABLE));
    /* the collective defaults that follow other hints, resolved (tess_file_get_info) */
    tessi_hint_val *su = &hv[TESSI_H_STRIPING_UNIT], *rs = &hv[TESSI_H_REALM_SIZE];
    if (!su->given && hv[TESSI_H_REALMS].i == TESSI_REALM_ALIGNED)
        su->i = INT64_C(1) << 20;
    if (!rs->given)
        rs->i = su->given ? su->i : INT64_C(1) << 20;
    return 0;
fail:
    tessi_file_hints_release(f);
    return rc;
}

void tessi_file_hints_release(tess_file *f)
{
    tessi_hints_release(f->hv, TESSI_NHINTS);
    if (f->dhv)
        tessi_hints_release(f->dhv, f->st.drv->nhints);
    free(f->dhv);
    f->dhv = NULL;
}

/* ------------------------------------------------------------------ open, close */

int tessi_file_check_flags(const char *who, int flags)
{
    int mode = flags & (TESS_RDONLY | TESS_WRONLY | TESS_RDWR);
    if (flags & ~(TESS_RDONLY | TESS_WRONLY | TESS_RDWR | TESS_CREATE | TESS_EXCL))
        return tessi_error(TESS_ERR_ARG, "%s: unknown flag bits 0x%x", who, flags);
    if (mode != TESS_RDONLY && mode != TESS_WRONLY && mode != TESS_RDWR)
        return tessi_error(TESS_ERR_ARG, "%s: flags need exactly one of TESS_RDONLY, "
                           "TESS_WRONLY, TESS_RDWR", who);
    if (mode == TESS_RDONLY && (flags & (TESS_CREATE | TESS_EXCL)))
        return tessi_error(TESS_ERR_ARG, "%s: TESS_CREATE/TESS_EXCL with TESS_RDONLY", who);
    return 0;
}

/* Open the storage. A write-only file that may sieve is opened read-write so that sieving can
 * read-modify-write; if that is not permitted it stays write-only and sieving writes go naive. */
static int open_storage(tess_file *f, const char *path, const tess_info *info)
{
    const struct tess_driver *drv = f->st.drv;
    char text[128];
    bool upgrade = (f->flags & TESS_WRONLY) && f->sieve_writes;
    int rc = -EACCES;
    if (upgrade)
        rc = tessi_drv_open(&f->st, drv, path, (f->flags & ~TESS_WRONLY) | TESS_RDWR, info);
    f->readable = !(f->flags & TESS_WRONLY) || (upgrade && rc == 0);
    if (rc == -EACCES)
        rc = tessi_drv_open(&f->st, drv, path, f->flags, info);
    if (rc)
        return tessi_error(tessi_errno_code(rc), "tess_file_open: cannot open '%s' with the %s "
                           "driver: %s", path, drv->name, strerror_r(-rc, text, sizeof text));
    return 0;
}

int tessi_file_open_checked(const char *path, int flags, const tess_info *info, tess_file *f,
                            tess_file **out)
{
    f->flags = flags;
    tessi_view_init(&f->view);
    int rc = open_storage(f, path, info);
    if (rc) {
        tessi_file_hints_release(f);
        free(f);
        return rc;
    }
    tessi_hints *h = &f->hints;
    if (!(f->st.caps & TESSI_CAP_BATCHED))
        h->model.batched = false;
    if (!f->readable || !(f->st.caps & TESSI_CAP_LOCKS)) /* no read-modify-write: not planned */
        h->model.locks = false;
    if (!f->hv[TESSI_H_CB_NODES].given) /* a group of one (a group's front end sets its own) */
        f->hv[TESSI_H_CB_NODES].i = 1;
    *out = f;
    return 0;
}

int tess_file_open(const char *path, int flags, const tess_info *info, tess_file **out)
{
    const char *who = "tess_file_open", *rest;
    if (!path || !out)
        return tessi_error(TESS_ERR_ARG, "%s: %s is NULL", who, path ? "out" : "path");
    int rc = tessi_file_check_flags(who, flags);
    tess_file *f = rc ? NULL : calloc(1, sizeof *f);
    if (rc || !f)
        return rc ? rc : tessi_error(TESS_ERR_NOMEM, "%s: out of memory", who);
    if ((rc = tessi_file_hints(who, path, flags, info, f, &rest))) {
        free(f);
        return rc;
    }
    return tessi_file_open_checked(rest, flags, info, f, out);
}

int tess_file_close(tess_file *f)
{
    if (!f)
        return tessi_error(TESS_ERR_ARG, "tess_file_close: f is NULL");
    int err = tessi_drv_close(&f->st);
    int rc = err ? tessi_drv_error(&f->st, err, "close", 0, 0) : 0;
    if (f->group) /* collective: every process gets the same verdict */
        rc = f->group->close(f, rc);
    tessi_view_release(&f->view);
    tessi_memo_release(&f->memo);
    tessi_file_hints_release(f);
    free(f);
    return rc;
}

int tess_file_delete(const char *path, const tess_info *info)
{
    const char *who = "tess_file_delete", *rest;
    char text[128];
    tess_file *probe = path ? calloc(1, sizeof *probe) : NULL;
    if (!probe)
        return path ? tessi_error(TESS_ERR_NOMEM, "%s: out of memory", who)
                    : tessi_error(TESS_ERR_ARG, "%s: path is NULL", who);
    int rc = tessi_file_hints(who, path, TESS_RDWR, info, probe, &rest);
    if (rc == 0) {
        const struct tess_driver *drv = probe->st.drv;
        int err = tessi_drv_remove(drv, rest, info);
        if (err)
            rc = tessi_error(tessi_errno_code(err), "%s: cannot delete '%s' with the %s "
                             "driver: %s", who, path, drv->name,
                             strerror_r(-err, text, sizeof text));
        tessi_file_hints_release(probe);
    }
    free(probe);
    return rc;
}

int tess_file_set_view(tess_file *f, int64_t disp, tess_type *etype, tess_type *filetype)
{
    if (!f)
        return tessi_error(TESS_ERR_ARG, "tess_file_set_view: f is NULL");
    if (f->group)
        return f->group->set_view(f, disp, etype, filetype);
    return tessi_view_set(&f->view, disp, etype, filetype);
}

int tess_file_set_realms(tess_file *f, int64_t disp, tess_type *realm, int64_t shift)
{
    if (!f)
        return tessi_error(TESS_ERR_ARG, "tess_file_set_realms: f is NULL");
    /* without a group there are no aggregators: nothing to set */
    return f->group ? f->group->set_realms(f, disp, realm, shift) : 0;
}

/* ------------------------------------------------------------------ size, sync, atomicity */

int tess_file_sync(tess_file *f)
{
    if (!f)
        return tessi_error(TESS_ERR_ARG, "tess_file_sync: f is NULL");
    int err = tessi_drv_sync(&f->st);
    return err ? tessi_drv_error(&f->st, err, "sync", 0, 0) : 0;
}

int tess_file_get_size(tess_file *f, int64_t *size)
{
    if (!f || !size)
        return tessi_error(TESS_ERR_ARG, "tess_file_get_size: %s is NULL", f ? "size" : "f");
    int err = tessi_drv_get_size(&f->st, size);
    return err ? tessi_drv_error(&f->st, err, "get_size", 0, 0) : 0;
}

/* The checks of set_size and preallocate: a handle, size >= 0, a writable file. */
static int check_resize(const char *who, const tess_file *f, int64_t size)
{
    if (!f)
        return tessi_error(TESS_ERR_ARG, "%s: f is NULL", who);
    if (size < 0)
        return tessi_error(TESS_ERR_ARG, "%s: size %lld < 0", who, (long long)size);
    if (f->flags & TESS_RDONLY)
        return tessi_error(TESS_ERR_ACCESS, "%s: the file was opened read-only", who);
    return 0;
}

int tess_file_set_size(tess_file *f, int64_t size)
{
    int rc = check_resize("tess_file_set_size", f, size);
    int err = rc ? 0 : tessi_drv_set_size(&f->st, size);
    return err ? tessi_drv_error(&f->st, err, "set_size", 0, 0) : rc;
}

int tess_file_preallocate(tess_file *f, int64_t size)
{
    int rc = check_resize("tess_file_preallocate", f, size);
    int err = rc ? 0 : tessi_drv_preallocate(&f->st, size);
    return err ? tessi_drv_error(&f->st, err, "preallocate", 0, size) : rc;
}

int tess_file_set_atomicity(tess_file *f, int on)
{
    if (!f)
        return tessi_error(TESS_ERR_ARG, "tess_file_set_atomicity: f is NULL");
    if (on && !f->atomic) { /* can this storage lock? (a lock this handle may take) */
        tessi_lock lk = {.held = false};
        char why[400];
        int rc = (f->st.caps & TESSI_CAP_LOCKS)
                     ? tessi_lock_range(&f->st, &lk, 0, 1, !(f->flags & TESS_RDONLY), true)
                     : tessi_error(TESS_ERR_UNSUPPORTED, "the %s storage has no byte-range "
                                   "locks", f->st.drv->name);
        if ((rc = tessi_unlock_range(&f->st, &lk, rc))) {
            snprintf(why, sizeof why, "%s", tess_last_error());
            return tessi_error(rc, "tess_file_set_atomicity: accesses cannot be made atomic "
                               "here: %s", why);
        }
    }
    f->atomic = on != 0;
    return 0;
}

int tess_file_get_atomicity(const tess_file *f, int *on)
{
    if (!f || !on)
        return tessi_error(TESS_ERR_ARG, "tess_file_get_atomicity: %s is NULL", f ? "on" : "f");
    *on = f->atomic;
    return 0;
}

/* ------------------------------------------------------------------ info, stats */

int tess_file_get_info(const tess_file *f, tess_info **out)
{
    tess_info *info = NULL;
    if (!f || !out)
        return tessi_error(TESS_ERR_ARG, "tess_file_get_info: %s is NULL", f ? "out" : "f");
    int rc = tess_info_create(&info);
    if (rc == 0)
        rc = tessi_hints_to_info(tessi_hints_table, TESSI_NHINTS, f->hv, info);
    if (rc == 0 && f->dhv)
        rc = tessi_hints_to_info(f->st.drv->hints, f->st.drv->nhints, f->dhv, info);
    if (rc) {
        tess_info_free(info);
        return rc;
    }
    *out = info;
    return 0;
}

int tess_file_stats_sized(const tess_file *f, tess_stats *out, size_t size)
{
    if (!f || !out)
        return tessi_error(TESS_ERR_ARG, "tess_file_stats: %s is NULL", f ? "out" : "f");
    tess_stats s = f->st.stats;
    if (s.min_access == INT64_MAX)
        s.min_access = 0;
    memcpy(out, &s, size < sizeof s ? size : sizeof s);
    if (size > sizeof s) /* a newer caller's fields this library does not have */
        memset((char *)out + sizeof s, 0, size - sizeof s);
    return 0;
}

void tess_file_reset_stats(tess_file *f)
{
    if (f)
        tessi_stats_reset(&f->st.stats);
}
