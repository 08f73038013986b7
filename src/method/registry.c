/*
 * registry.c - independent methods by name (hint tess_method) and `auto`, which picks one per
 * access by asking every registered method for its estimate. A new method is one file defining
 * its table plus one line in `methods` below.
 *
 * The auto rule, per access and direction:
 *  1. Candidates: the registered methods romio_ds_<dir> allows (tessi_method_allowed):
 *     enable leaves the sieving ones, disable the others.
 *  2. Estimate: the access's file regions are read from the region source (never flattened),
 *     the first TESSI_AUTO_SAMPLE of them at most, and matched with the memory regions (the
 *     pieces a method without staging moves one by one); every method prices that sample
 *     (tessi_est with its regions). A sample shorter than the access is scaled to it by (data
 *     bytes of the access) / (data bytes of the sample), every figure but the peak buffer:
 *     exact for a pattern that repeats within the sample (strided views), an extrapolation
 *     otherwise. Planning costs O(TESSI_AUTO_SAMPLE) region steps at most per method.
 *  3. Choose the candidate with the lowest estimated time (tessi_method_cheapest).
 *  4. An access of the same shape as the one before (tessi_shape: same filetype, phase, size,
 *     direction; and the same memory type) reuses its estimates and choice without planning,
 *     so a loop of identical accesses plans once.
 * The choice and the estimates go to tess_stats (auto_decisions, est_seconds, ...) and, with
 * hint tess_debug_decisions, one line per decision to that file.
 */
#include "method/method.h"

#include "type/type.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The methods; a method's id in tess_stats is its place here plus one (the public
 * TESS_METHOD_* of the first five). */
static const struct tess_method *const methods[] = {
    &tessi_method_naive,
    &tessi_method_sieve,
    &tessi_method_list,
    &tessi_method_pmd,
    &tessi_method_datatype,
};
#define NMETHODS ((int)(sizeof methods / sizeof methods[0]))
_Static_assert(NMETHODS < TESS_METHOD_MAX, "tess_stats has room for TESS_METHOD_MAX - 1 methods");

const struct tess_method *tessi_method_at(int i)
{
    return i >= 0 && i < NMETHODS ? methods[i] : NULL;
}

const struct tess_method *tessi_method_find(const char *name)
{
    for (int i = 0; i < NMETHODS; i++)
        if (methods[i]->version == TESSI_METHOD_VERSION && strcmp(methods[i]->name, name) == 0)
            return methods[i];
    return NULL;
}

int tessi_method_id(const struct tess_method *m)
{
    for (int i = 0; i < NMETHODS; i++)
        if (methods[i] == m)
            return i + 1;
    return TESS_METHOD_NONE;
}

const char *tess_method_name(int id)
{
    if (id == TESS_METHOD_NONE)
        return "none";
    return id > 0 && id <= NMETHODS ? methods[id - 1]->name : "unknown";
}

bool tessi_method_allowed(const tessi_hints *h, bool write, const struct tess_method *m)
{
    if (!h)
        return true;
    if (h->method)
        return m == h->method;
    int ds = write ? h->ds_write : h->ds_read;
    return ds == TESSI_DS_AUTOMATIC || (ds == TESSI_DS_ENABLE) == m->sieves;
}

const struct tess_method *tessi_method_cheapest(const tessi_hints *h, const tessi_est *e,
                                                tessi_cost *cost)
{
    const struct tess_method *best = NULL;
    tessi_cost c, best_c = {.seconds = 0};
    for (int pass = 0; pass < 2; pass++) /* methods that do not sieve first: they win ties */
        for (int i = 0; i < NMETHODS; i++) {
            const struct tess_method *m = methods[i];
            if (m->sieves != (pass == 1) || !tessi_method_allowed(h, e->write, m))
                continue;
            m->estimate(e, &c);
            if (!best || c.seconds < best_c.seconds) {
                best = m;
                best_c = c;
            }
        }
    if (cost)
        *cost = best_c;
    return best;
}

/* Regions an estimate looks at, at most (rule 2). Estimating costs some tens of nanoseconds
 * per region and method, about what sieving moves a small region for: the sample keeps a
 * decision within tens of microseconds, a small part of any access that large. */
#define TESSI_AUTO_SAMPLE 1024

void tessi_shape_of(const tessi_access *a, bool write, tessi_shape *out)
{
    const tess_type *ft = a->file->bytes ? a->file->type : a->view->filetype;
    *out = (tessi_shape){.write = write, .dirty = a->dirty, .filetype = ft, .fsize = ft->size,
                         .fextent = ft->extent, .fregions = ft->num_regions,
                         .phase = a->file->start, .bytes = a->bytes,
                         .p = tessi_access_model(a)->p};
}

bool tessi_memo_dirty(tessi_memo *m, int64_t lo, int64_t hi, double now)
{
    bool dirty = false;
    for (int i = 0; i < TESSI_RECENT_WRITES && !dirty; i++) {
        const tessi_recent *r = &m->recent[i];
        dirty = r->hi > r->lo && r->lo <= lo && hi <= r->hi && now - r->at < TESSI_DIRTY_SECONDS;
    }
    m->recent[m->next_recent] = (tessi_recent){.lo = lo, .hi = hi, .at = now};
    m->next_recent = (m->next_recent + 1) % TESSI_RECENT_WRITES;
    return dirty;
}

void tessi_memo_release(tessi_memo *m)
{
    free(m->plan[0].groups);
    free(m->plan[1].groups);
    *m = (tessi_memo){.decision[0].valid = false};
}

/* The sample of rule 2: the access's first file regions (at most TESSI_AUTO_SAMPLE, into r)
 * and the pieces they make with the memory regions, in e; both sources are repositioned at
 * their start. */
static int sample(tessi_access *a, bool write, tess_region *r, tessi_est *e)
{
    tessi_rsrc *f = a->file, *mem = a->mem;
    tess_region m = {0};
    int64_t n = 0, data = 0, mend = 0, pieces = 0;
    int rc = 0;
    while (n < TESSI_AUTO_SAMPLE && (rc = tessi_rsrc_peek(f, &r[n])) == 0 && r[n].len > 0) {
        tessi_rsrc_take(f, r[n].len);
        data += r[n++].len;
    }
    /* pieces: the file regions cut at every end of a memory region inside them */
    for (int64_t i = 0, end = 0; rc == 0 && i < n; i++) {
        end += r[i].len;
        pieces++;
        while (rc == 0 && mend < end) {
            if ((rc = tessi_rsrc_peek(mem, &m)) || m.len == 0)
                break;
            int64_t take = m.len < end - mend ? m.len : end - mend;
            tessi_rsrc_take(mem, take);
            mend += take;
            pieces += take == m.len && mend < end;
        }
    }
    if (rc || (rc = tessi_rsrc_seek(f, 0)) || (rc = tessi_rsrc_seek(mem, 0)))
        return rc;
    *e = (tessi_est){.m = tessi_access_model(a), .write = write,
                     .buf = write ? a->hints->wr_buffer : a->hints->rd_buffer, .bytes = data,
                     .regions = n, .lo = n ? r[0].off : 0, .hi = n ? r[n - 1].off + r[n - 1].len : 0,
                     .pieces = pieces, .r = r, .nr = n};
    return 0;
}

/* Rules 2 and 3: every method's estimate of the access into d, and the choice. */
static int decide(tessi_access *a, bool write, tessi_auto *d)
{
    tessi_est e;
    tessi_cost c;
    tess_region *r = malloc(sizeof *r * TESSI_AUTO_SAMPLE);
    if (!r)
        return tessi_error(TESS_ERR_NOMEM, "auto: cannot allocate a sample of regions");
    int rc = sample(a, write, r, &e);
    if (rc == 0) {
        d->est_regions = e.nr;
        d->est_scale = e.bytes > 0 ? (double)a->bytes / (double)e.bytes : 1.0;
        for (int i = 0; i < NMETHODS; i++) {
            methods[i]->estimate(&e, &c);
            tessi_cost_scale(&c, d->est_scale);
            d->est[i + 1] = c.seconds;
        }
        d->choice = tessi_method_cheapest(a->hints, &e, NULL);
    }
    free(r);
    return rc;
}

/* Append one line describing the decision to the tess_debug_decisions file. The file was
 * checked at open; a write that fails later is dropped (a debug log never fails an access). */
static void log_decision(const tessi_access *a, bool wr, bool reused, const tessi_auto *d)
{
    char line[1024];
    int ds = wr ? a->hints->ds_write : a->hints->ds_read;
    int n = snprintf(line, sizeof line,
                     "tessera auto: %s at=%lld bytes=%lld extent=%lld memory=%s%s "
                     "regions=%lld%s scale=%.6g model=%s ds=%s est_s",
                     wr ? "write" : "read", (long long)a->file->lo, (long long)a->bytes,
                     (long long)(a->file->hi - a->file->lo),
                     tessi_mem_contiguous(a) ? "contig" : "noncontig",
                     !wr ? "" : a->dirty ? " pages=dirty" : " pages=clean",
                     (long long)d->est_regions, d->est_scale != 1.0 ? " (sample)" : "",
                     d->est_scale, a->hints->model_defaults ? "defaults" : "profile",
                     ds == TESSI_DS_ENABLE ? "enable" : ds == TESSI_DS_DISABLE ? "disable"
                                                                                : "automatic");
    for (int i = 0; i < NMETHODS && n > 0 && n < (int)sizeof line; i++)
        n += snprintf(line + n, sizeof line - (size_t)n, " %s=%.4g", methods[i]->name,
                      d->est[i + 1]);
    if (n > 0 && n < (int)sizeof line)
        n += snprintf(line + n, sizeof line - (size_t)n, " -> %s%s\n", d->choice->name,
                      reused ? " (reused)" : "");
    if (n > 0)
        tessi_log_decision(a->hints, line, n < (int)sizeof line ? n : (int)sizeof line - 1);
}

void tessi_log_decision(const tessi_hints *h, const char *line, int n)
{
    int fd = h->decisions[0] ? open(h->decisions, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644)
                             : -1;
    if (fd < 0)
        return;
    ssize_t put = write(fd, line, (size_t)n);
    (void)put; /* a failed write is dropped, see log_decision */
    close(fd);
}

/* Report auto's decision (stats: auto_decisions, est_seconds, ...). */
static void record(tessi_access *a, bool reused, const tessi_auto *d)
{
    tessi_storage_emit(a->st, (tessi_event){.kind = TESSI_EV_DECISION,
                                            .method = tessi_method_id(d->choice),
                                            .flag = reused, .est = d->est,
                                            .nest = NMETHODS + 1, .n = d->est_regions,
                                            .scale = d->est_scale});
}

int tessi_method_choose(tessi_access *a, bool write, const struct tess_method **m)
{
    if (a->hints->method) {
        *m = a->hints->method;
        return 0;
    }
    tessi_auto fresh = {.valid = false}, *d = a->memo ? &a->memo->decision[write] : &fresh;
    tessi_shape shape;
    tessi_shape_of(a, write, &shape);
    bool reused = d->valid && d->memtype == a->memtype && tessi_same_shape(&d->shape, &shape);
    if (!reused) {
        d->valid = false;
        int rc = decide(a, write, d);
        if (rc)
            return rc;
        d->shape = shape;
        d->memtype = a->memtype;
        d->valid = true;
    }
    record(a, reused, d);
    if (a->hints->decisions[0])
        log_decision(a, write, reused, d);
    *m = d->choice;
    return 0;
}
