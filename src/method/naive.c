/*
 * naive.c - POSIX I/O (paper 000 II-A): the memory-region and file-region streams are matched
 * piece by piece and every piece is one storage call. Moves exactly the desired bytes; the
 * number of calls is at least the number of file regions.
 */
#include "method/method.h"

int tessi_naive_move(tessi_access *a, bool write, int64_t *done)
{
    tess_region f, m;
    *done = 0;
    for (;;) {
        int rc = tessi_rsrc_peek(a->file, &f);
        if (rc || (rc = tessi_rsrc_peek(a->mem, &m)))
            return rc;
        if (f.len == 0)
            return 0;
        if (m.len == 0)
            return tessi_error(TESS_ERR_INTERNAL, "naive: memory stream ended before the file's");
        int64_t len = f.len < m.len ? f.len : m.len;
        char *p = a->buf + m.off;
        int64_t n = write ? tessi_drv_pwrite(a->st, p, len, f.off)
                          : tessi_drv_pread(a->st, p, len, f.off);
        if (n < 0)
            return tessi_drv_error(a->st, (int)n, write ? "pwrite" : "pread", f.off, len);
        *done += n;
        if (n < len) /* end of file: the prefix read so far is the result */
            return 0;
        tessi_rsrc_take(a->file, len);
        tessi_rsrc_take(a->mem, len);
    }
}

static int naive_read(tessi_access *a, int64_t *done) { return tessi_naive_move(a, false, done); }

/* One call per piece (per file region when memory is contiguous), every data byte once. */
static void naive_estimate(const tessi_est *e, tessi_cost *out)
{
    tessi_group g = {.kind = TESSI_GROUP_DIRECT, .count = e->pieces, .data = e->bytes};
    *out = (tessi_cost){.seconds = 0};
    if (e->bytes > 0)
        tessi_group_cost(e->m, e->write, &g, out);
}

static int naive_write(tessi_access *a, int64_t *done) { return tessi_naive_move(a, true, done); }

const struct tess_method tessi_method_naive = {
    .version = TESSI_METHOD_VERSION,
    .name = "naive",
    .read = naive_read,
    .write = naive_write,
    .estimate = naive_estimate,
};
