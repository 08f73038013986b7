/*
 * hpio.c - `tessera bench hpio`: the collective HPIO patterns of paper 002 section 6.2 and the
 * PFR (persistent file realm) pattern of section 6.4.
 *
 * HPIO: every process accesses `count` regions of `size` bytes. In memory they are contiguous
 * (c) or separated by `spacing` bytes (nc: an hvector memory type). In the file they are
 * contiguous per process (c: process p's regions back to back from p*count*size) or
 * interleaved between the processes with `spacing` bytes after each region (nc: region i of
 * process p at (i*P + p)*(size + spacing)). The nc filetype is either a vector enumerating the
 * whole access (--ftype vector, the default) or one region resized to the extent P*(size +
 * spacing) and tiled by the view (--ftype tiled: paper 002's succinct description). Patterns
 * c-c, nc-c, c-nc, nc-nc (memory-file), one collective call per op, one table per pattern and
 * region size.
 *
 * PFR: `points` data points of `elems` elements of `elem` bytes, each point's `steps` time steps
 * stored together: record (point d, step t) at (d*steps + t) * elems*elem. Points are dealt out
 * in blocks; one op writes (reads) every time step, one collective call per step, each with its
 * own view (displacement moved by one record), so the aggregate access region moves along the
 * file from call to call: the case for persistent file realms. Paper defaults: 32-byte elements,
 * 100 per point, 2048 points, 32 steps (6.5 MB per call); half the processes aggregate
 * (cb_nodes = P/2 unless --cb-nodes is given, for both libraries).
 */
#include "coll.h"

#include <string.h>

#include "cmds.h"

enum { MAX_SIZES = 16 };
static const char *const pattern_names[5] = {"c-c", "nc-c", "c-nc", "nc-nc", "pfr"};

/* One HPIO pattern (mem_nc, file_nc) at one region size. */
static int build_hpio(coll_pattern *p, int P, int rank, int mem_nc, int file_nc, int64_t size,
                      int64_t count, int64_t spacing, int tiled)
{
    if (coll_pattern_init(p, 1, 1, 1) != 0)
        return 0;
    int64_t stride = size + spacing;
    char b[32];
    snprintf(p->tag, sizeof p->tag, "%s size=%lld", pattern_names[mem_nc + 2 * file_nc],
             (long long)size);
    snprintf(p->title, sizeof p->title,
             "HPIO %s (memory-file): %lld regions x %s per process, spacing %lld, %s filetype",
             pattern_names[mem_nc + 2 * file_nc], (long long)count,
             bench_fmt_bytes(size, b, sizeof b), (long long)spacing,
             !file_nc ? "contiguous" : tiled ? "tiled (resized region)" : "vector");
    coll_type byte;
    coll_type_named(TESS_BYTE, MPI_BYTE, &byte);
    coll_view *v = &p->views[0];
    /* named MPI_BYTE wherever a named type is what an application would pass */
    coll_type_named(TESS_BYTE, MPI_BYTE, &v->etype);
    if (!file_nc) {
        v->disp = (int64_t)rank * count * size;
        coll_type_named(TESS_BYTE, MPI_BYTE, &v->filetype);
    } else {
        v->disp = (int64_t)rank * stride;
        if (tiled) {
            coll_type region;
            if (coll_type_contiguous(size, &byte, &region) != 0)
                return 0;
            int ok = coll_type_resized(&region, 0, (int64_t)P * stride, &v->filetype) == 0;
            coll_type_free(&region);
            if (!ok)
                return 0;
        } else if (coll_type_hvector(count, size, (int64_t)P * stride, &byte, &v->filetype) != 0) {
            return 0;
        }
    }
    if (mem_nc) {
        if (coll_type_hvector(count, size, stride, &byte, &p->mems[0]) != 0)
            return 0;
        p->calls[0] = (coll_call){.view = 0, .mem = 0, .offset = 0, .count = 1};
        p->buf_bytes = (count - 1) * stride + size;
    } else {
        coll_type_named(TESS_BYTE, MPI_BYTE, &p->mems[0]);
        p->calls[0] = (coll_call){.view = 0, .mem = 0, .offset = 0, .count = count * size};
        p->buf_bytes = count * size;
    }
    return 1;
}

static int build_pfr(coll_pattern *p, int P, int rank, int64_t elem, int64_t elems,
                     int64_t points, int64_t steps, int64_t cb_nodes)
{
    memset(p, 0, sizeof *p);
    if (steps > 100000 || coll_pattern_init(p, (int)steps, 1, (int)steps) != 0)
        return 0;
    int64_t rec = elem * elems;
    int64_t d0 = points * rank / P, d1 = points * (rank + 1) / P, np = d1 - d0;
    char b1[32], b2[32];
    snprintf(p->tag, sizeof p->tag, "pfr %lldx%lldB x %lld pts x %lld steps", (long long)elems,
             (long long)elem, (long long)points, (long long)steps);
    snprintf(p->title, sizeof p->title,
             "PFR: %lld points of %lld x %lld-byte elements, %lld time steps stored per point;"
             " %s per call, file %s",
             (long long)points, (long long)elems, (long long)elem, (long long)steps,
             bench_fmt_bytes(points * rec, b1, sizeof b1),
             bench_fmt_bytes(points * steps * rec, b2, sizeof b2));
    coll_note(p, "one op = %lld collective calls (one per time step, each its own view: "
                 "displacement + step * %lld B); points dealt out in blocks",
              (long long)steps, (long long)rec);
    coll_note(p, "cb_nodes = %lld (half the processes, as in the paper) for Tessera and MPI-IO",
              (long long)cb_nodes);
    coll_type byte;
    coll_type_named(TESS_BYTE, MPI_BYTE, &byte);
    coll_type_named(TESS_BYTE, MPI_BYTE, &p->mems[0]);
    for (int64_t t = 0; t < steps; t++) {
        coll_view *v = &p->views[t];
        v->disp = (d0 * steps + t) * rec;
        coll_type_named(TESS_BYTE, MPI_BYTE, &v->etype);
        if (np > 0 && coll_type_hvector(np, rec, steps * rec, &byte, &v->filetype) != 0)
            return 0;
        if (np == 0)
            coll_type_named(TESS_BYTE, MPI_BYTE, &v->filetype);
        p->calls[t] = (coll_call){.view = (int)t, .mem = 0, .offset = 0, .count = np * rec,
                                  .buf_off = t * np * rec};
    }
    p->buf_bytes = steps * np * rec;
    return 1;
}

typedef struct hpio_params {
    int64_t sizes[MAX_SIZES];
    int nsizes, tiled;
    unsigned patterns; /* bit i: pattern_names[i] */
    int64_t count, spacing, elem, elems, points, steps;
} hpio_params;

static int hpio_run(const coll_env *e, const coll_opts *o, void *params)
{
    const hpio_params *x = params;
    int failures = 0;
    for (int pat = 0; pat < 4; pat++)
        for (int si = 0; (x->patterns & (1u << pat)) && si < x->nsizes; si++) {
            coll_pattern p;
            int built = build_hpio(&p, e->size, e->rank, pat & 1, pat >> 1, x->sizes[si],
                                   x->count, x->spacing, x->tiled);
            failures += coll_run(e, &p, o, built) != 0;
        }
    if (x->patterns & (1u << 4)) {
        coll_opts po = *o;
        if (!po.cb_nodes)
            po.cb_nodes = e->size / 2 > 0 ? e->size / 2 : 1;
        coll_pattern p;
        int built = build_pfr(&p, e->size, e->rank, x->elem, x->elems, x->points, x->steps,
                              po.cb_nodes);
        failures += coll_run(e, &p, &po, built) != 0;
    }
    return failures;
}

int tess_bench_hpio(int argc, char **argv)
{
    static const coll_workload w = {
        .name = "hpio",
        .about = "  Collective HPIO (paper 002 6.2), under mpirun: `count` regions of `size` bytes per\n"
                 "  process, memory and file contiguous (c) or with `spacing`-byte holes (nc), the\n"
                 "  file interleaved between processes; and the PFR pattern (paper 002 6.4).\n",
        .run = hpio_run};
    static const bench_choice patterns[] = {{"c-c", 1}, {"nc-c", 2}, {"c-nc", 4}, {"nc-nc", 8},
                                            {"pfr", 16}, {NULL, 0}};
    static const bench_choice ftypes[] = {{"vector", 0}, {"tiled", 1}, {NULL, 0}};
    hpio_params x;
    bench_opt opts[] = {
        {.name = "patterns", .kind = BENCH_OPT_SET, .dst = &x.patterns, .arg = "LIST",
         .choices = patterns, .help = "memory-file layouts and PFR",
         .def = "c-c,nc-c,c-nc,nc-nc,pfr"},
        {.name = "sizes", .kind = BENCH_OPT_SIZES, .dst = x.sizes, .cap = MAX_SIZES,
         .n = &x.nsizes, .min = 1, .arg = "LIST", .help = "region sizes", .def = "64,1k,8k",
         .quick = "256", .test = "40"},
        {.name = "count", .kind = BENCH_OPT_SIZE, .dst = &x.count, .min = 1, .arg = "N",
         .help = "regions per process", .def = "4096", .quick = "256", .test = "64"},
        {.name = "spacing", .kind = BENCH_OPT_SIZE, .dst = &x.spacing, .arg = "N",
         .help = "bytes between regions", .def = "128"},
        {.name = "ftype", .kind = BENCH_OPT_CHOICE, .dst = &x.tiled, .arg = "T",
         .choices = ftypes, .help = "the nc filetype", .def = "vector"},
        {.name = "pfr-elem", .kind = BENCH_OPT_SIZE, .dst = &x.elem, .min = 1, .arg = "N",
         .help = "PFR element bytes", .def = "32", .test = "8"},
        {.name = "pfr-elems", .kind = BENCH_OPT_SIZE, .dst = &x.elems, .min = 1, .arg = "N",
         .help = "elements per data point", .def = "100", .test = "5"},
        {.name = "pfr-points", .kind = BENCH_OPT_SIZE, .dst = &x.points, .min = 1, .arg = "N",
         .help = "data points", .def = "2048", .quick = "256", .test = "24"},
        {.name = "pfr-steps", .kind = BENCH_OPT_SIZE, .dst = &x.steps, .min = 1, .arg = "N",
         .help = "time steps = calls per op", .def = "32", .quick = "8", .test = "3"},
    };
    return coll_main(&w, opts, BENCH_NOPTS(opts), &x, argc, argv);
}
