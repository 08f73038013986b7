/*
 * registry.c - independent methods by name (hint tess_method) and `auto`, which picks one per
 * access by the cost model (model/model.h). A new method is one file defining its table plus
 * one line in `methods` below.
 *
 * The auto rule, per access and direction:
 *  1. Candidates: naive, list, sieve, pmd. romio_ds_<dir> = disable leaves naive and list (no
 *     data sieving of any kind); enable leaves sieve and pmd (always sieve; pmd is sieving
 *     directed by the model). Memory that is not one contiguous run rules naive out: it would
 *     pay one call per memory piece, which the model (pricing memory as contiguous) does not
 *     see, while list moves the same file regions with one vectored call each.
 *  2. Estimate: tessi_pattern over the access's file regions with the file's model and sieve
 *     buffer (ind_rd_buffer_size or ind_wr_buffer_size), streamed from the region source in
 *     chunks (O(1) memory, never flattened). An access of more than TESSI_AUTO_SAMPLE regions
 *     is estimated from its first TESSI_AUTO_SAMPLE regions, every figure but the peak buffer
 *     scaled by (data bytes of the access) / (data bytes of the sample): exact for a pattern
 *     that repeats within the sample (strided views), an extrapolation otherwise. Planning then
 *     costs O(TESSI_AUTO_SAMPLE) region steps at most, whatever the size of the access.
 *  3. Choose the candidate with the lowest estimated time; ties go to the simpler method, in
 *     the order naive, list, sieve, pmd.
 *  4. An access of the same shape as the one before (tessi_shape: same filetype, phase, size,
 *     direction; and memory contiguity) reuses its estimates and choice without planning, so
 *     a loop of identical accesses plans once.
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

/* The methods: table, id reported in tess_stats, and whether it sieves (method.h). */
static const struct {
    const struct tess_method *m;
    int id;
    bool sieves;
} methods[] = {
    {.m = &tessi_method_naive, .id = TESS_METHOD_NAIVE, .sieves = false},
    {.m = &tessi_method_sieve, .id = TESS_METHOD_SIEVE, .sieves = true},
    {.m = &tessi_method_list, .id = TESS_METHOD_LIST, .sieves = false},
    {.m = &tessi_method_pmd, .id = TESS_METHOD_PMD, .sieves = true},
};
#define NMETHODS (sizeof methods / sizeof methods[0])

const struct tess_method *tessi_method_find(const char *name)
{
    for (size_t i = 0; i < NMETHODS; i++)
        if (methods[i].m->version == TESSI_METHOD_VERSION && strcmp(methods[i].m->name, name) == 0)
            return methods[i].m;
    return NULL;
}

int tessi_method_id(const struct tess_method *m)
{
    for (size_t i = 0; i < NMETHODS; i++)
        if (methods[i].m == m)
            return methods[i].id;
    return TESS_METHOD_NONE;
}

bool tessi_method_sieves(const struct tess_method *m)
{
    for (size_t i = 0; i < NMETHODS; i++)
        if (methods[i].m == m)
            return methods[i].sieves;
    return false;
}

const char *tess_method_name(int id)
{
    if (id == TESS_METHOD_NONE)
        return "none";
    for (size_t i = 0; i < NMETHODS; i++)
        if (methods[i].id == id)
            return methods[i].m->name;
    return "unknown";
}

/* Regions an estimate looks at, at most (rule 2). Estimating costs some tens of nanoseconds
 * per region, about what sieving moves a small region for: the sample keeps a decision within
 * tens of microseconds, a small part of any access that large. */
#define TESSI_AUTO_SAMPLE 1024

/* Regions moved from the source to the pattern per step. */
#define AUTO_CHUNK 64

/* The memory side is one contiguous run of bytes. */
static bool mem_contiguous(const tessi_access *a)
{
    const tess_type *t = a->memtype;
    return t->num_regions <= 1 && (a->count <= 1 || t->size == t->extent);
}

void tessi_shape_of(const tessi_access *a, bool write, tessi_shape *out)
{
    const tess_type *ft = a->file->cur ? a->file->cur->type : a->view->filetype;
    *out = (tessi_shape){.write = write, .filetype = ft, .fsize = ft->size,
                         .fextent = ft->extent, .fregions = ft->num_regions,
                         .phase = a->file->start, .bytes = a->bytes};
}

void tessi_memo_release(tessi_memo *m)
{
    free(m->plan[0].groups);
    free(m->plan[1].groups);
    *m = (tessi_memo){.decision[0].valid = false};
}

static int64_t scale_count(int64_t v, double k)
{
    double s = (double)v * k + 0.5;
    return s >= 9.2e18 ? INT64_MAX : (int64_t)s;
}

static void scale_cost(tessi_cost *c, double k)
{
    c->seconds *= k;
    c->calls = scale_count(c->calls, k);
    c->bytes = scale_count(c->bytes, k);
    c->locks = scale_count(c->locks, k);
}

/*
 * The estimate of an access that is one file region of len bytes, len <= the sieve buffer (the
 * commonest access: contiguous), priced group by group as tessi_pattern prices it without a
 * pattern's set-up: naive, list and pmd make one call (pmd's plan is one DIRECT region), sieve
 * one window through the buffer (a write window locked, covered: not read first).
 */
static void estimate_one(const tessi_model *m, bool write, int64_t len, tessi_estimate *e)
{
    tessi_group direct = {.kind = TESSI_GROUP_DIRECT, .count = 1, .len = len, .data = len};
    tessi_group list = direct, window = direct;
    list.kind = TESSI_GROUP_LIST;
    window.kind = TESSI_GROUP_SIEVE;
    window.lock = write;
    *e = (tessi_estimate){.naive.calls = 0};
    tessi_group_cost(m, write, &direct, &e->naive);
    tessi_group_cost(m, write, &list, &e->list);
    tessi_group_cost(m, write, &direct, &e->pmd);
    if (write && !m->locks) /* sieve.c writes naively where there are no locks */
        e->sieve = e->naive;
    else
        tessi_group_cost(m, write, &window, &e->sieve);
    e->sieve.peak = len;
}

/* Estimate every method for the access (rule 2) into d. The file source is walked from its
 * start and repositioned there. */
static int estimate(tessi_access *a, bool write, tessi_auto *d)
{
    tessi_pattern pt;
    tess_region r[AUTO_CHUNK];
    tessi_rsrc *src = a->file;
    int64_t buf = write ? a->hints->wr_buffer : a->hints->rd_buffer, seen = 0;
    if (src->hi - src->lo == a->bytes && a->bytes > 0 && a->bytes <= buf) {
        estimate_one(&a->hints->model, write, a->bytes, &d->est);
        d->est_regions = 1;
        d->est_scale = 1.0;
        return 0;
    }
    int rc = tessi_pattern_init(&pt, &a->hints->model, write, buf);
    if (rc)
        return rc;
    if (a->bytes > 0) {
        int64_t n;
        do {
            for (n = 0; n < AUTO_CHUNK && seen + n < TESSI_AUTO_SAMPLE; n++) {
                if ((rc = tessi_rsrc_peek(src, &r[n])))
                    return rc;
                if (r[n].len == 0)
                    break;
                tessi_rsrc_take(src, r[n].len);
            }
            if (n > 0 && (rc = tessi_pattern_add(&pt, r, n)))
                return rc;
            seen += n;
        } while (n == AUTO_CHUNK);
        rc = tessi_rsrc_seek(src, 0);
    }
    if (rc)
        return rc;
    tessi_pattern_estimate(&pt, &d->est);
    d->est_regions = seen;
    d->est_scale = pt.data > 0 ? (double)a->bytes / (double)pt.data : 1.0;
    if (d->est_scale != 1.0) {
        scale_cost(&d->est.naive, d->est_scale);
        scale_cost(&d->est.list, d->est_scale);
        scale_cost(&d->est.sieve, d->est_scale);
        scale_cost(&d->est.pmd, d->est_scale);
    }
    return 0;
}

/* Rules 1 and 3: the cheapest candidate. */
static const struct tess_method *pick(const tessi_access *a, bool write, bool contig,
                                      const tessi_estimate *e)
{
    int ds = write ? a->hints->ds_write : a->hints->ds_read;
    const struct {
        const struct tess_method *m;
        double sec;
        bool ok;
    } c[] = {
        {&tessi_method_naive, e->naive.seconds, ds != TESSI_DS_ENABLE && contig},
        {&tessi_method_list, e->list.seconds, ds != TESSI_DS_ENABLE},
        {&tessi_method_sieve, e->sieve.seconds, ds != TESSI_DS_DISABLE},
        {&tessi_method_pmd, e->pmd.seconds, ds != TESSI_DS_DISABLE},
    };
    const struct tess_method *best = NULL;
    double best_sec = 0;
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
        if (c[i].ok && (!best || c[i].sec < best_sec)) {
            best = c[i].m;
            best_sec = c[i].sec;
        }
    return best;
}

/* Append one line describing the decision to the tess_debug_decisions file. The file was
 * checked at open; a write that fails later is dropped (a debug log never fails an access). */
static void log_decision(const tessi_access *a, bool wr, bool contig, bool reused,
                         const tessi_auto *d)
{
    char line[768];
    int ds = wr ? a->hints->ds_write : a->hints->ds_read;
    int n = snprintf(line, sizeof line,
                     "tessera auto: %s at=%lld bytes=%lld extent=%lld memory=%s "
                     "regions=%lld%s scale=%.6g model=%s ds=%s est_s naive=%.4g list=%.4g "
                     "sieve=%.4g pmd=%.4g -> %s%s\n",
                     wr ? "write" : "read", (long long)a->file->lo, (long long)a->bytes,
                     (long long)(a->file->hi - a->file->lo), contig ? "contig" : "noncontig",
                     (long long)d->est_regions, d->est_scale != 1.0 ? " (sample)" : "",
                     d->est_scale, a->hints->model_defaults ? "defaults" : "profile",
                     ds == TESSI_DS_ENABLE ? "enable" : ds == TESSI_DS_DISABLE ? "disable"
                                                                                : "automatic",
                     d->est.naive.seconds, d->est.list.seconds, d->est.sieve.seconds,
                     d->est.pmd.seconds, d->choice->name, reused ? " (reused)" : "");
    int fd = n > 0 ? open(a->hints->decisions, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644)
                   : -1;
    if (fd < 0)
        return;
    ssize_t put = write(fd, line, (size_t)(n < (int)sizeof line ? n : (int)sizeof line - 1));
    (void)put; /* a failed write is dropped, see above */
    close(fd);
}

/* Report auto's decision (stats: auto_decisions, est_seconds, ...). */
static void record(tessi_access *a, bool reused, const tessi_auto *d)
{
    double est[TESS_METHOD_COUNT] = {0};
    est[TESS_METHOD_NAIVE] = d->est.naive.seconds;
    est[TESS_METHOD_LIST] = d->est.list.seconds;
    est[TESS_METHOD_SIEVE] = d->est.sieve.seconds;
    est[TESS_METHOD_PMD] = d->est.pmd.seconds;
    tessi_storage_emit(a->st, (tessi_event){.kind = TESSI_EV_DECISION,
                                            .method = tessi_method_id(d->choice),
                                            .flag = reused, .est = est,
                                            .nest = TESS_METHOD_COUNT, .n = d->est_regions,
                                            .scale = d->est_scale});
}

int tessi_method_choose(tessi_access *a, bool write, const struct tess_method **m)
{
    if (a->hints->method) {
        *m = a->hints->method;
        return 0;
    }
    bool contig = mem_contiguous(a);
    tessi_auto fresh = {.valid = false}, *d = a->memo ? &a->memo->decision[write] : &fresh;
    tessi_shape shape;
    tessi_shape_of(a, write, &shape);
    bool reused = d->valid && d->mem_contig == contig && tessi_same_shape(&d->shape, &shape);
    if (!reused) {
        d->valid = false;
        int rc = estimate(a, write, d);
        if (rc)
            return rc;
        d->choice = pick(a, write, contig, &d->est);
        d->shape = shape;
        d->mem_contig = contig;
        d->valid = true;
    }
    record(a, reused, d);
    if (a->hints->decisions[0])
        log_decision(a, write, contig, reused, d);
    *m = d->choice;
    return 0;
}
