/*
 * file.c - files: open/close, views, independent reads and writes, size, sync and the I/O
 * counters. Every call validates all of its input before any storage call, so a rejected call
 * changes nothing (no byte written, no counter moved).
 *
 * Hints (tess_info keys, parsed once at open; unknown keys are ignored, bad values rejected):
 *   tess_method          naive | sieve | list | pmd | auto                (default auto)
 *   romio_ds_read        enable | disable | automatic: sieving of reads    (default automatic)
 *   romio_ds_write       enable | disable | automatic: sieving of writes   (default automatic)
 *   ind_rd_buffer_size   sieve read window, bytes, 1 .. 2^40               (default 4 MiB)
 *   ind_wr_buffer_size   sieve write window, bytes, 1 .. 2^40              (default 512 KiB)
 *   tess_list_max_pairs  file regions per list call, 1 .. TESSI_IOV_MAX    (default 64)
 *   tess_driver          storage driver name                               (default posix)
 *   tess_profile         cost-model profile file (default $TESS_PROFILE, else
 *                        $XDG_CONFIG_HOME/tessera/profile or ~/.config/tessera/profile, else
 *                        the documented defaults; a named profile must exist and load)
 *   tess_model           cached | uncached: the profile's page-cache or device variant
 *                        (default cached; uncached falls back to cached where the profile
 *                        has no uncached variant)
 *   tess_debug_decisions file that `auto` appends one line per decision to (with the
 *                        estimates); checked writable at open                 (default none)
 * An explicit tess_method is used as is; romio_ds_* steer the auto rule (method/registry.c).
 * The cost model of the file (pmd, auto) is the profile's variant with p = 1, list_max =
 * tess_list_max_pairs, list batching only where the driver batches (tess_posix_uring not
 * disabled) and sieving read-modify-writes only where this handle can read.
 *
 * Locking (the lost-update bug of ROMIO/OMPIO): when sieving writes can happen on a file
 * (tess_method sieve or pmd, or auto with romio_ds_write not disable), the sieving methods lock
 * every range they write (sieve its windows, pmd its groups: method/pmd.c), and every other
 * write takes a write lock on its file extent, so a contiguous writer never lands between
 * another process's read and write-back. Where the storage has no locks, writes go on unlocked
 * and sieving writes are done naively.
 *
 * Atomic mode (tess_file_set_atomicity): every access holds a lock on its whole file extent,
 * shared for reads and exclusive for writes, while its method runs; the locks the method would
 * take on parts of the extent are then skipped (tessi_storage.extent_locked). A lock the
 * storage refuses is an error in this mode.
 */
#include "core/file.h"

#include "core/collective.h"

#include "type/type.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HINT_MAX_BUFFER (INT64_C(1) << 40)
#define HINT_VALUE_CAP 1024

/* ------------------------------------------------------------------ hints */

/* Look a hint up (no info: not found). Values are at most 1023 bytes, so they always fit. */
static int hint_get(const tess_info *info, const char *key, char *val, int *found)
{
    *found = 0;
    return info ? tess_info_get(info, key, val, HINT_VALUE_CAP, found) : 0;
}

/* A positive decimal integer hint in [1, max]. */
static int hint_size(const tess_info *info, const char *key, int64_t max, int64_t *out)
{
    char val[HINT_VALUE_CAP], *end;
    int found, rc = hint_get(info, key, val, &found);
    if (rc || !found)
        return rc;
    errno = 0;
    long long v = strtoll(val, &end, 10);
    if (val[0] < '0' || val[0] > '9' || *end || errno || v < 1 || v > max)
        return tessi_error(TESS_ERR_ARG, "tess_file_open: hint %s = '%s' is not an integer in "
                           "[1, %lld]", key, val, (long long)max);
    *out = v;
    return 0;
}

/* A hint taking one of n names; *out receives the index of the name given. */
static int hint_choice(const tess_info *info, const char *key, const char *const *names, int n,
                       int *out)
{
    char val[HINT_VALUE_CAP];
    int found, rc = hint_get(info, key, val, &found);
    if (rc || !found)
        return rc;
    char list[128] = "";
    for (int i = 0; i < n; i++) {
        if (strcmp(val, names[i]) == 0) {
            *out = i;
            return 0;
        }
        size_t used = strlen(list);
        snprintf(list + used, sizeof list - used, "%s%s", i ? "|" : "", names[i]);
    }
    return tessi_error(TESS_ERR_ARG, "tess_file_open: hint %s = '%s' is not one of %s", key, val,
                       list);
}

/* The file's cost model (see the top of this file) and the decision log hint. */
static int parse_model(const tess_info *info, tess_file *f, const struct tess_driver *drv)
{
    tessi_hints *h = &f->hints;
    static const char *const variant_names[] = {"cached", "uncached"};
    char val[HINT_VALUE_CAP], why[256];
    int found, variant = TESSI_CACHED, rc;
    tessi_profile pf;
    if ((rc = hint_choice(info, "tess_model", variant_names, 2, &variant)) ||
        (rc = hint_get(info, "tess_profile", val, &found)))
        return rc;
    if ((rc = tessi_profile_resolve(found ? val : NULL, &pf))) {
        snprintf(why, sizeof why, "%s", tess_last_error());
        return tessi_error(rc, "tess_file_open: cost-model profile: %s", why);
    }
    f->model_variant = variant;
    snprintf(f->profile, sizeof f->profile, "%s", pf.path);
    if (variant == TESSI_UNCACHED && pf.uncached == TESSI_UNCACHED_NONE)
        variant = TESSI_CACHED;
    h->model = pf.model[variant];
    h->model_defaults = pf.defaults;
    h->model.p = 1;
    h->model.list_max = h->list_max_pairs;
    if ((rc = hint_get(info, "tess_posix_uring", val, &found)))
        return rc;
    if (!drv->submit || (found && strcmp(val, "disable") == 0))
        h->model.batched = false;
    if ((rc = hint_get(info, "tess_debug_decisions", val, &found)) || !found)
        return rc;
    int fd = val[0] ? open(val, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644) : -1;
    int err = val[0] ? errno : EINVAL;
    if (fd < 0)
        return tessi_error(tessi_errno_code(-err), "tess_file_open: hint tess_debug_decisions = "
                           "'%s': cannot append to it: %s", val,
                           val[0] ? strerror(err) : "empty path");
    close(fd);
    snprintf(h->decisions, sizeof h->decisions, "%s", val);
    return 0;
}

static int parse_hints(const tess_info *info, tess_file *f, const struct tess_driver **drv)
{
    tessi_hints *h = &f->hints;
    static const char *const ds_names[] = {"automatic", "enable", "disable"};
    static const char *const method_names[] = {"auto", "naive", "sieve", "list", "pmd"};
    char name[HINT_VALUE_CAP];
    int found, method = 0, rc;
    *h = (tessi_hints){.method = NULL, .ds_read = TESSI_DS_AUTOMATIC,
                       .ds_write = TESSI_DS_AUTOMATIC, .rd_buffer = 4 << 20,
                       .wr_buffer = 512 << 10, .list_max_pairs = 64};
    if ((rc = hint_choice(info, "tess_method", method_names, 5, &method)) ||
        (rc = hint_choice(info, "romio_ds_read", ds_names, 3, &h->ds_read)) ||
        (rc = hint_choice(info, "romio_ds_write", ds_names, 3, &h->ds_write)) ||
        (rc = hint_size(info, "ind_rd_buffer_size", HINT_MAX_BUFFER, &h->rd_buffer)) ||
        (rc = hint_size(info, "ind_wr_buffer_size", HINT_MAX_BUFFER, &h->wr_buffer)) ||
        (rc = hint_size(info, "tess_list_max_pairs", TESSI_IOV_MAX, &h->list_max_pairs)) ||
        (rc = hint_get(info, "tess_driver", name, &found)))
        return rc;
    h->method = method ? tessi_method_find(method_names[method]) : NULL;
    *drv = tessi_driver_find(found ? name : "posix");
    if (!*drv)
        return tessi_error(TESS_ERR_ARG, "tess_file_open: hint tess_driver = '%s' names no "
                           "driver", name);
    return parse_model(info, f, *drv);
}

/* ------------------------------------------------------------------ open, close */

static int check_flags(int flags)
{
    int mode = flags & (TESS_RDONLY | TESS_WRONLY | TESS_RDWR);
    if (flags & ~(TESS_RDONLY | TESS_WRONLY | TESS_RDWR | TESS_CREATE | TESS_EXCL))
        return tessi_error(TESS_ERR_ARG, "tess_file_open: unknown flag bits 0x%x", flags);
    if (mode != TESS_RDONLY && mode != TESS_WRONLY && mode != TESS_RDWR)
        return tessi_error(TESS_ERR_ARG, "tess_file_open: flags need exactly one of "
                           "TESS_RDONLY, TESS_WRONLY, TESS_RDWR");
    if (mode == TESS_RDONLY && (flags & (TESS_CREATE | TESS_EXCL)))
        return tessi_error(TESS_ERR_ARG, "tess_file_open: TESS_CREATE/TESS_EXCL with "
                           "TESS_RDONLY");
    return 0;
}

/* Open the storage. A write-only file that may sieve is opened read-write so that sieving can
 * read-modify-write; if that is not permitted it stays write-only and sieving writes go naive. */
static int open_storage(tess_file *f, const struct tess_driver *drv, const char *path,
                        const tess_info *info)
{
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
                           "driver%s: %s", path, drv->name,
                           rc == -EINVAL ? " (or one of its hints is invalid)" : "",
                           strerror_r(-rc, text, sizeof text));
    return 0;
}

static void stats_reset(tess_stats *s)
{
    *s = (tess_stats){.min_access = INT64_MAX};
}

int tess_file_open(const char *path, int flags, const tess_info *info, tess_file **out)
{
    const struct tess_driver *drv;
    tess_file *f = NULL;
    int rc;
    if (!path || !out) {
        rc = tessi_error(TESS_ERR_ARG, "tess_file_open: %s is NULL", path ? "out" : "path");
        goto fail;
    }
    if ((rc = check_flags(flags)))
        goto fail;
    if (!(f = calloc(1, sizeof *f))) {
        rc = tessi_error(TESS_ERR_NOMEM, "tess_file_open: out of memory");
        goto fail;
    }
    f->flags = flags;
    tessi_view_init(&f->view);
    stats_reset(&f->st.stats);
    if ((rc = parse_hints(info, f, &drv)))
        goto fail;
    f->sieve_writes = !(flags & TESS_RDONLY) &&
                      (tessi_method_sieves(f->hints.method) ||
                       (!f->hints.method && f->hints.ds_write != TESSI_DS_DISABLE));
    if ((rc = open_storage(f, drv, path, info)))
        goto fail;
    if (!f->readable) /* no read-modify-write here: the model must not plan one */
        f->hints.model.locks = false;
    *out = f;
    return 0;
fail:
    free(f);
    return rc;
}

int tess_file_close(tess_file *f)
{
    if (!f)
        return tessi_error(TESS_ERR_ARG, "tess_file_close: f is NULL");
    int err = tessi_drv_close(&f->st);
    int rc = err ? tessi_drv_error(&f->st, err, "close", 0, 0) : 0;
    if (f->coll) /* collective: every rank gets the same verdict */
        rc = tessi_coll_close(f, rc);
    tessi_view_release(&f->view);
    tessi_memo_release(&f->memo);
    free(f);
    return rc;
}

int tess_file_set_view(tess_file *f, int64_t disp, tess_type *etype, tess_type *filetype)
{
    if (!f)
        return tessi_error(TESS_ERR_ARG, "tess_file_set_view: f is NULL");
    if (f->coll)
        return tessi_coll_set_view(f, disp, etype, filetype);
    return tessi_view_set(&f->view, disp, etype, filetype);
}

/* ------------------------------------------------------------------ access */

/* Everything a read or write checks before it touches storage; *total gets its data bytes. */
int tessi_file_check_access(const char *who, const tess_file *f, int64_t offset, const void *buf,
                            int64_t count, const tess_type *memtype, bool write, int64_t *total)
{
    int64_t reach;
    if (!f || !memtype)
        return tessi_error(TESS_ERR_ARG, "%s: %s is NULL", who, f ? "memtype" : "f");
    if (count < 0 || offset < 0)
        return tessi_error(TESS_ERR_ARG, "%s: %s %lld < 0", who, count < 0 ? "count" : "offset",
                           (long long)(count < 0 ? count : offset));
    if (f->flags & (write ? TESS_RDONLY : TESS_WRONLY))
        return tessi_error(TESS_ERR_ACCESS, "%s: the file was opened %s", who,
                           write ? "read-only" : "write-only");
    if (!tessi_mul(count, memtype->size, total) ||
        (count > 0 && (!tessi_mul(count - 1, memtype->extent, &reach) ||
                       !tessi_add(reach, memtype->true_ub, &reach))))
        return tessi_error(TESS_ERR_OVERFLOW, "%s: %lld instances of the memory type overflow "
                           "int64", who, (long long)count);
    if (!buf && *total > 0)
        return tessi_error(TESS_ERR_ARG, "%s: buf is NULL", who);
    if (*total % f->view.esize)
        return tessi_error(TESS_ERR_ARG, "%s: %lld bytes is not a whole number of %lld-byte "
                           "etypes", who, (long long)*total, (long long)f->view.esize);
    return 0;
}

/* Zero the memory data bytes [from, bytes) of the access (the part a read found no file for). */
static int zero_tail(tessi_rsrc *mem, char *buf, int64_t from)
{
    tess_region m;
    int rc = tessi_rsrc_seek(mem, from);
    while (rc == 0 && (rc = tessi_rsrc_peek(mem, &m)) == 0 && m.len > 0) {
        memset(buf + m.off, 0, (size_t)m.len);
        tessi_rsrc_take(mem, m.len);
    }
    return rc;
}

/* The extent lock of an access: in atomic mode always (shared for reads), else for a write
 * that does not sieve on a file where sieving writes can happen (see the top of this file).
 * *locked says whether it is held; a storage without locks is an error only in atomic mode. */
static int lock_extent(tess_file *f, bool write, bool sieves, int64_t lo, int64_t len,
                       bool *locked)
{
    *locked = false;
    if (len <= 0 || !(f->atomic || (write && f->sieve_writes && !sieves)))
        return 0;
    int err = tessi_drv_lock(&f->st, lo, len, write);
    if (err && (f->atomic || !tessi_lock_unsupported(err)))
        return tessi_lock_unsupported(err)
                   ? tessi_error(TESS_ERR_UNSUPPORTED, "%s lock of %lld bytes at offset %lld "
                                 "refused in atomic mode: %s", f->st.drv->name, (long long)len,
                                 (long long)lo, strerror(-err))
                   : tessi_drv_error(&f->st, err, "lock", lo, len);
    *locked = err == 0;
    f->st.extent_locked = *locked && f->atomic;
    return 0;
}

/* Pick the method (the hint's, or auto's by the model) and run it under the extent lock the
 * access needs (lock_extent). */
static int run_method(tess_file *f, tessi_access *a, bool write, int64_t *done)
{
    const struct tess_method *m;
    int64_t lo = a->file->lo, len = a->file->hi - a->file->lo;
    bool locked = false;
    a->memo = &f->memo;
    int rc = tessi_method_choose(a, write, &m);
    if (rc)
        goto fail;
    if (write && m == &tessi_method_sieve && !f->readable)
        m = &tessi_method_naive;
    tessi_method_note(&f->st.stats, m);
    f->st.stats.model_defaults = f->hints.model_defaults;
    if ((rc = lock_extent(f, write, tessi_method_sieves(m), lo, len, &locked)))
        goto fail;
    rc = write ? m->write(a, done) : m->read(a, done);
fail:
    f->st.extent_locked = false;
    if (locked) {
        int err = tessi_drv_unlock(&f->st, lo, len);
        if (err && rc == 0)
            rc = tessi_drv_error(&f->st, err, "unlock", lo, len);
    }
    return rc;
}

static int file_access(const char *who, tess_file *f, int64_t offset, void *buf, int64_t count,
                       tess_type *memtype, int64_t *bytes, bool write)
{
    tessi_rsrc file = {.cur = NULL}, mem = {.cur = NULL};
    int64_t total = 0, done = 0;
    int rc = tessi_file_check_access(who, f, offset, buf, count, memtype, write, &total);
    if (rc || (rc = tessi_view_regions(&file, &f->view, offset, total, &f->st.stats.regions)) ||
        (rc = tessi_rsrc_open(&mem, memtype, count, 0, 0, total, NULL)))
        goto fail;
    tessi_access a = {.st = &f->st, .hints = &f->hints, .view = &f->view, .file = &file,
                      .mem = &mem, .buf = buf, .memtype = memtype, .count = count,
                      .bytes = total};
    f->st.stats.desired_bytes += total;
    rc = run_method(f, &a, write, &done);
    if (rc == 0 && !write && done < total)
        rc = zero_tail(&mem, buf, done);
    if (bytes)
        *bytes = done;
fail:
    tessi_rsrc_close(&file);
    tessi_rsrc_close(&mem);
    return rc;
}

int tess_file_read_at(tess_file *f, int64_t offset, void *buf, int64_t count, tess_type *memtype,
                      int64_t *bytes)
{
    return file_access("tess_file_read_at", f, offset, buf, count, memtype, bytes, false);
}

int tess_file_write_at(tess_file *f, int64_t offset, const void *buf, int64_t count,
                       tess_type *memtype, int64_t *bytes)
{
    /* writes only read from buf: the cast lets reads and writes share one access path */
    return file_access("tess_file_write_at", f, offset, (void *)buf, count, memtype, bytes, true);
}

/* ------------------------------------------------------------------ size, sync, stats */

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

int tess_file_set_size(tess_file *f, int64_t size)
{
    if (!f)
        return tessi_error(TESS_ERR_ARG, "tess_file_set_size: f is NULL");
    if (size < 0)
        return tessi_error(TESS_ERR_ARG, "tess_file_set_size: size %lld < 0", (long long)size);
    if (f->flags & TESS_RDONLY)
        return tessi_error(TESS_ERR_ACCESS, "tess_file_set_size: the file was opened read-only");
    int err = tessi_drv_set_size(&f->st, size);
    return err ? tessi_drv_error(&f->st, err, "set_size", 0, 0) : 0;
}

int tess_file_preallocate(tess_file *f, int64_t size)
{
    if (!f)
        return tessi_error(TESS_ERR_ARG, "tess_file_preallocate: f is NULL");
    if (size < 0)
        return tessi_error(TESS_ERR_ARG, "tess_file_preallocate: size %lld < 0",
                           (long long)size);
    if (f->flags & TESS_RDONLY)
        return tessi_error(TESS_ERR_ACCESS, "tess_file_preallocate: the file was opened "
                           "read-only");
    int err = tessi_drv_preallocate(&f->st, size);
    return err ? tessi_drv_error(&f->st, err, "preallocate", 0, size) : 0;
}

int tess_file_delete(const char *path, const tess_info *info)
{
    const struct tess_driver *drv;
    tess_file probe = {.flags = TESS_RDONLY};
    char text[128];
    if (!path)
        return tessi_error(TESS_ERR_ARG, "tess_file_delete: path is NULL");
    int rc = parse_hints(info, &probe, &drv);
    if (rc)
        return rc;
    int err = tessi_drv_remove(drv, path, info);
    if (err)
        return tessi_error(tessi_errno_code(err), "tess_file_delete: cannot delete '%s' with "
                           "the %s driver%s: %s", path, drv->name,
                           err == -EINVAL ? " (or one of its hints is invalid)" : "",
                           strerror_r(-err, text, sizeof text));
    return 0;
}

int tess_file_set_atomicity(tess_file *f, int on)
{
    if (!f)
        return tessi_error(TESS_ERR_ARG, "tess_file_set_atomicity: f is NULL");
    if (on && !f->atomic) { /* can this storage lock? (a lock this handle may take) */
        bool exclusive = !(f->flags & TESS_RDONLY);
        int err = tessi_drv_lock(&f->st, 0, 1, exclusive);
        if (err == 0)
            err = tessi_drv_unlock(&f->st, 0, 1);
        if (tessi_lock_unsupported(err))
            return tessi_error(TESS_ERR_UNSUPPORTED, "tess_file_set_atomicity: the %s storage "
                               "has no byte-range locks here, so accesses cannot be made "
                               "atomic", f->st.drv->name);
        if (err)
            return tessi_drv_error(&f->st, err, "lock", 0, 1);
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

/* The independent hints in use on f (tess_file_get_info), into out. */
static int independent_info(const tess_file *f, tess_info *out)
{
    static const char *const ds_names[] = {"automatic", "enable", "disable"};
    const tessi_hints *h = &f->hints;
    char text[24];
    int rc;
    if ((rc = tess_info_set(out, "tess_driver", f->st.drv->name)) ||
        (rc = tess_info_set(out, "tess_method", h->method ? h->method->name : "auto")) ||
        (rc = tess_info_set(out, "romio_ds_read", ds_names[h->ds_read])) ||
        (rc = tess_info_set(out, "romio_ds_write", ds_names[h->ds_write])) ||
        (rc = tess_info_set(out, "tess_model", f->model_variant ? "uncached" : "cached")))
        return rc;
    const struct {
        const char *key;
        int64_t v;
    } ints[] = {{"ind_rd_buffer_size", h->rd_buffer},
                {"ind_wr_buffer_size", h->wr_buffer},
                {"tess_list_max_pairs", h->list_max_pairs}};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        snprintf(text, sizeof text, "%lld", (long long)ints[i].v);
        if ((rc = tess_info_set(out, ints[i].key, text)))
            return rc;
    }
    /* a path too long for a hint value was found by the default lookup: "" finds it again */
    if ((rc = tess_info_set(out, "tess_profile", strlen(f->profile) < 1024 ? f->profile : "")))
        return rc;
    if (h->decisions[0] && (rc = tess_info_set(out, "tess_debug_decisions", h->decisions)))
        return rc;
    int err = f->st.drv->get_info ? f->st.drv->get_info(f->st.h, out) : 0;
    return err ? tessi_drv_error(&f->st, err, "get_info", 0, 0) : 0;
}

int tess_file_get_info(const tess_file *f, tess_info **out)
{
    tess_info *info = NULL;
    if (!f || !out)
        return tessi_error(TESS_ERR_ARG, "tess_file_get_info: %s is NULL", f ? "out" : "f");
    int rc = tess_info_create(&info);
    if (rc == 0 && (rc = independent_info(f, info)) == 0)
        rc = tessi_coll_get_info(f, info);
    if (rc) {
        tess_info_free(info);
        return rc;
    }
    *out = info;
    return 0;
}

int tess_file_stats(const tess_file *f, tess_stats *out)
{
    if (!f || !out)
        return tessi_error(TESS_ERR_ARG, "tess_file_stats: %s is NULL", f ? "out" : "f");
    *out = f->st.stats;
    if (out->min_access == INT64_MAX)
        out->min_access = 0;
    return 0;
}

void tess_file_reset_stats(tess_file *f)
{
    if (f)
        stats_reset(&f->st.stats);
}
