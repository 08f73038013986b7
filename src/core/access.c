/*
 * access.c - reads and writes: tess_file_read_at / write_at (independent) and the entry of
 * tess_file_read_at_all / write_at_all (through the file's group operations, file.h). Every
 * call validates all of its input before any storage call, so a rejected call changes nothing
 * (no byte written, no counter moved).
 *
 * Locking (the lost-update bug of ROMIO/OMPIO): a read-modify-write (a sieving write of a window
 * with holes) is done only when the write gate admits it (driver/gate.c), under a write lock on
 * its window; every other write takes a write lock on its extent when the gate says plain writes
 * must lock (another handle of the file may read-modify-write), so a contiguous writer never
 * lands between another process's read and write-back, and pays nothing when no one sieves.
 * Where the storage has no locks, writes go on unlocked and sieving writes are done without
 * read-modify-write.
 *
 * Atomic mode (tess_file_set_atomicity): every access holds a lock on its whole file extent,
 * shared for reads and exclusive for writes, while its method runs; the locks the method would
 * take on parts of the extent are then skipped (tessi_storage.extent_locked). A lock the
 * storage refuses is an error in this mode.
 */
#include "core/file.h"

#include "type/walk.h"

#include <stdlib.h>
#include <string.h>

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
    if (!tessi_mul(count, tess_type_size(memtype), total) ||
        (count > 0 && (!tessi_mul(count - 1, tess_type_extent(memtype), &reach) ||
                       !tessi_add(reach, tess_type_true_lb(memtype), &reach) ||
                       !tessi_add(reach, tess_type_true_extent(memtype), &reach))))
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

/* Pick the method (the hint's, or auto's by the model) and run it under the extent lock the
 * access needs: in atomic mode always (shared for reads), else for a write that does not sieve
 * on a file where sieving writes can happen (see the top of this file). */
static int run_method(tess_file *f, tessi_access *a, bool write, int64_t *done)
{
    const struct tess_method *m;
    tessi_lock lk = {.held = false};
    a->memo = &f->memo;
    a->dirty = write && a->bytes > 0 &&
               tessi_memo_dirty(&f->memo, a->file->lo, a->file->hi, tessi_now());
    int rc = tessi_method_choose(a, write, &m);
    if (rc)
        return rc;
    if (write && m == &tessi_method_sieve && !f->readable)
        m = &tessi_method_naive;
    tessi_method_note(&f->st, m, a->hints->model_defaults);
    if (f->atomic || (write && !m->sieves && tessi_gate_locked_writes(&f->st)))
        rc = tessi_lock_range(&f->st, &lk, a->file->lo, a->file->hi - a->file->lo, write,
                              f->atomic);
    f->st.extent_locked = lk.held && f->atomic;
    if (rc == 0)
        rc = write ? m->write(a, done) : m->read(a, done);
    f->st.extent_locked = false;
    return tessi_unlock_range(&f->st, &lk, rc);
}

/* The contiguous file regions of an access (stats.regions), counted by runs (a strided run of
 * many regions costs one step) once per shape of access and remembered: the methods that move
 * windows with the pack engine never visit regions one by one. */
static int count_regions(tess_file *f, const tessi_access *a, int64_t *n)
{
    tessi_shape shape;
    tessi_shape_of(a, false, &shape);
    if (f->memo.counted && tessi_same_shape(&f->memo.counted_shape, &shape)) {
        *n = f->memo.regions;
        return 0;
    }
    const tessi_rsrc *s = a->file;
    *n = a->bytes > 0;
    int rc = s->cur ? tessi_count_regions(s->type, s->base, s->start, a->bytes, INT64_MAX, n) : 0;
    f->memo.counted = rc == 0;
    f->memo.counted_shape = shape;
    f->memo.regions = *n;
    return rc;
}

int tessi_file_access(const char *who, tess_file *f, int64_t offset, void *buf, int64_t count,
                      tess_type *memtype, int64_t *bytes, bool write)
{
    return tessi_file_access_hinted(who, f, f ? &f->hints : NULL, offset, buf, count, memtype,
                                    bytes, write); /* f NULL: the check reports it */
}

int tessi_file_access_hinted(const char *who, tess_file *f, const tessi_hints *h, int64_t offset,
                             void *buf, int64_t count, tess_type *memtype, int64_t *bytes,
                             bool write)
{
    tessi_rsrc file, mem; /* not zeroed: their open fills them (a kilobyte each) */
    int64_t total = 0, done = 0, regions = 0;
    file.cur = mem.cur = NULL;
    int rc = tessi_file_check_access(who, f, offset, buf, count, memtype, write, &total);
    if (rc || (rc = tessi_view_regions(&file, &f->view, offset, total, NULL)) ||
        (rc = tessi_rsrc_open(&mem, memtype, count, 0, 0, total, NULL)))
        goto fail;
    tessi_access a = {.st = &f->st, .hints = h, .view = &f->view, .file = &file,
                      .mem = &mem, .buf = buf, .memtype = memtype, .count = count,
                      .bytes = total, .ftype = f->view.filetype, .fdisp = f->view.disp,
                      .fstart = offset * f->view.esize};
    if ((rc = count_regions(f, &a, &regions)))
        goto fail;
    tessi_storage_emit(&f->st, (tessi_event){.kind = TESSI_EV_ACCESS, .len = total});
    rc = run_method(f, &a, write, &done);
    if (rc == 0 && !write && done < total)
        rc = zero_tail(&mem, buf, done);
    if (bytes)
        *bytes = done;
    tessi_storage_emit(&f->st, (tessi_event){.kind = TESSI_EV_REGIONS, .n = regions});
fail:
    tessi_rsrc_close(&file);
    tessi_rsrc_close(&mem);
    return rc;
}

int tess_file_read_at(tess_file *f, int64_t offset, void *buf, int64_t count, tess_type *memtype,
                      int64_t *bytes)
{
    return tessi_file_access("tess_file_read_at", f, offset, buf, count, memtype, bytes, false);
}

int tess_file_write_at(tess_file *f, int64_t offset, const void *buf, int64_t count,
                       tess_type *memtype, int64_t *bytes)
{
    /* writes only read from buf: the cast lets reads and writes share one access path */
    return tessi_file_access("tess_file_write_at", f, offset, (void *)buf, count, memtype,
                             bytes, true);
}

/* The collective calls: through the group's operations; without a group, independent. */
static int access_all(const char *who, tess_file *f, int64_t offset, void *buf, int64_t count,
                      tess_type *memtype, int64_t *bytes, bool write)
{
    if (!f)
        return tessi_error(TESS_ERR_ARG, "%s: f is NULL", who);
    if (!f->group)
        return tessi_file_access(who, f, offset, buf, count, memtype, bytes, write);
    return f->group->access_all(who, f, offset, buf, count, memtype, bytes, write);
}

int tess_file_read_at_all(tess_file *f, int64_t offset, void *buf, int64_t count,
                          tess_type *memtype, int64_t *bytes)
{
    return access_all("tess_file_read_at_all", f, offset, buf, count, memtype, bytes, false);
}

int tess_file_write_at_all(tess_file *f, int64_t offset, const void *buf, int64_t count,
                           tess_type *memtype, int64_t *bytes)
{
    return access_all("tess_file_write_at_all", f, offset, (void *)buf, count, memtype, bytes,
                      true);
}
