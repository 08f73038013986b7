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

#include <getopt.h>
#include <string.h>

#include "cmds.h"

enum { MAX_SIZES = 16 };
static const char *const pattern_names[5] = {"c-c", "nc-c", "c-nc", "nc-nc", "pfr"};

static void hpio_usage(FILE *f)
{
    fputs("usage: tessera bench hpio [options]     (under mpirun)\n"
          "  Collective HPIO (paper 002 6.2): `count` regions of `size` bytes per process,\n"
          "  memory and file contiguous (c) or with `spacing`-byte holes (nc), the file\n"
          "  interleaved between processes; and the PFR pattern (paper 002 6.4).\n"
          "  --patterns LIST     of c-c,nc-c,c-nc,nc-nc,pfr (default all)\n"
          "  --sizes LIST        region sizes (default 64,1k,8k; --quick 256)\n"
          "  --count N           regions per process (default 4096; --quick 256)\n"
          "  --spacing N         bytes between regions (default 128)\n"
          "  --ftype T           vector (default) or tiled: the nc filetype\n"
          "  --pfr-elem N        PFR element bytes (default 32)\n"
          "  --pfr-elems N       elements per data point (default 100)\n"
          "  --pfr-points N      data points (default 2048; --quick 256)\n"
          "  --pfr-steps N       time steps = calls per op (default 32; --quick 8)\n",
          f);
    coll_usage_common(f);
}

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

int tess_bench_hpio(int argc, char **argv)
{
    coll_env env;
    if (coll_env_begin(&env) != 0)
        return 1;
    int quiet = env.rank != 0;
    coll_opts o;
    coll_opts_default(&o, "hpio");
    int64_t sizes[MAX_SIZES] = {64, 1024, 8192};
    int nsizes = 3, set_sizes = 0, tiled = 0, patterns[5] = {1, 1, 1, 1, 1};
    int64_t count = -1, spacing = 128, elem = 32, elems = 100, points = -1, steps = -1;
    enum { O_PAT = 1, O_SIZES, O_COUNT, O_SPACING, O_FTYPE, O_ELEM, O_ELEMS, O_POINTS, O_STEPS };
    static const struct option lo[] = {
        {"patterns", required_argument, NULL, O_PAT},
        {"sizes", required_argument, NULL, O_SIZES},
        {"count", required_argument, NULL, O_COUNT},
        {"spacing", required_argument, NULL, O_SPACING},
        {"ftype", required_argument, NULL, O_FTYPE},
        {"pfr-elem", required_argument, NULL, O_ELEM},
        {"pfr-elems", required_argument, NULL, O_ELEMS},
        {"pfr-points", required_argument, NULL, O_POINTS},
        {"pfr-steps", required_argument, NULL, O_STEPS},
        {"help", no_argument, NULL, 'h'},
        COLL_LONGOPTS,
        {NULL, 0, NULL, 0}};
    optind = 0;
    opterr = !quiet;
    int ch, status = -1;
    while (status < 0 && (ch = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        int k = coll_opt(&o, ch, optarg, quiet);
        if (k == 1)
            continue;
        if (k < 0) {
            status = 2;
            continue;
        }
        switch (ch) {
        case O_PAT: {
            char tmp[128];
            snprintf(tmp, sizeof tmp, "%s", optarg);
            memset(patterns, 0, sizeof patterns);
            char *save = NULL;
            for (char *tok = strtok_r(tmp, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
                int f = -1;
                for (int i = 0; i < 5; i++)
                    if (strcmp(tok, pattern_names[i]) == 0)
                        f = i;
                if (f < 0) {
                    if (!quiet)
                        fprintf(stderr, "tessera: --patterns: unknown '%s' (c-c, nc-c, c-nc,"
                                        " nc-nc, pfr)\n", tok);
                    status = 2;
                    break;
                }
                patterns[f] = 1;
            }
            break;
        }
        case O_SIZES:
            if (quiet) {
                /* parse silently: rank 0 reports */
                char tmp[256];
                snprintf(tmp, sizeof tmp, "%s", optarg);
                nsizes = 0;
                char *save = NULL;
                for (char *tok = strtok_r(tmp, ",", &save); tok && nsizes < MAX_SIZES;
                     tok = strtok_r(NULL, ",", &save))
                    if (coll_parse_size("--sizes", tok, 1, &sizes[nsizes++], 1) != 0)
                        status = 2;
            } else if (bench_parse_size_list("--sizes", optarg, sizes, MAX_SIZES, &nsizes) != 0) {
                status = 2;
            }
            for (int i = 0; status < 0 && i < nsizes; i++)
                if (sizes[i] < 1)
                    status = 2;
            set_sizes = 1;
            break;
        case O_COUNT:
            if (coll_parse_size("--count", optarg, 1, &count, quiet) != 0)
                status = 2;
            break;
        case O_SPACING:
            if (coll_parse_size("--spacing", optarg, 0, &spacing, quiet) != 0)
                status = 2;
            break;
        case O_FTYPE:
            if (strcmp(optarg, "vector") == 0 || strcmp(optarg, "tiled") == 0) {
                tiled = strcmp(optarg, "tiled") == 0;
            } else {
                if (!quiet)
                    fprintf(stderr, "tessera: --ftype: vector or tiled\n");
                status = 2;
            }
            break;
        case O_ELEM:
            if (coll_parse_size("--pfr-elem", optarg, 1, &elem, quiet) != 0)
                status = 2;
            break;
        case O_ELEMS:
            if (coll_parse_size("--pfr-elems", optarg, 1, &elems, quiet) != 0)
                status = 2;
            break;
        case O_POINTS:
            if (coll_parse_size("--pfr-points", optarg, 1, &points, quiet) != 0)
                status = 2;
            break;
        case O_STEPS:
            if (coll_parse_size("--pfr-steps", optarg, 1, &steps, quiet) != 0)
                status = 2;
            break;
        default:
            status = coll_opt_other(ch, hpio_usage, quiet);
        }
    }
    status = coll_opts_rest("hpio", argc, argv, status, quiet);
    if (status >= 0) {
        coll_env_end(&env);
        return status;
    }
    if (o.quick || o.test) {
        if (!set_sizes) {
            sizes[0] = o.test ? 40 : 256;
            nsizes = 1;
        }
        if (count < 0)
            count = o.test ? 64 : 256;
        if (points < 0)
            points = o.test ? 24 : 256;
        if (steps < 0)
            steps = o.test ? 3 : 8;
        if (o.test) {
            elems = 5;
            elem = 8;
        }
    }
    coll_opts_finish(&o);
    if (count < 0)
        count = 4096;
    if (points < 0)
        points = 2048;
    if (steps < 0)
        steps = 32;

    int failures = 0;
    for (int pat = 0; pat < 4; pat++) {
        if (!patterns[pat])
            continue;
        for (int si = 0; si < nsizes; si++) {
            coll_pattern p;
            int built = build_hpio(&p, env.size, env.rank, pat & 1, pat >> 1, sizes[si], count,
                                   spacing, tiled);
            failures += coll_run(&env, &p, &o, built) != 0;
            coll_pattern_free(&p);
        }
    }
    if (patterns[4]) {
        coll_opts po = o;
        if (!po.cb_nodes)
            po.cb_nodes = env.size / 2 > 0 ? env.size / 2 : 1;
        coll_pattern p;
        int built = build_pfr(&p, env.size, env.rank, elem, elems, points, steps, po.cb_nodes);
        failures += coll_run(&env, &p, &po, built) != 0;
        coll_pattern_free(&p);
    }
    coll_env_end(&env);
    return failures ? 1 : 0;
}
