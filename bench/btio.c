/*
 * btio.c - `tessera bench btio`: the collective I/O pattern of NAS BTIO (full_mpiio.f).
 *
 * The solution u of an N^3 grid, 5 doubles per grid point, is written every few time steps.
 * BT's diagonal multi-partitioning: with P = q^2 processes each owns q cells; cell c of
 * process (i, j) = (node mod q, node div q) is at cell coordinates
 * ((i + c) mod q, (j - c) mod q, c), so every process has one cell in every z slab. Each
 * dimension is split into q parts (the first N mod q one point larger). As in BTIO:
 *  - element = MPI_Type_contiguous(5, MPI_DOUBLE);
 *  - memory: u(5, -2:IMAX+1, -2:JMAX+1, -2:KMAX+1, q) in Fortran order (2 ghost points on
 *    every side, IMAX = ceil(N/q)); cell c is a 4-D subarray of elements taking the cell's
 *    points from (2, 2, 2, c); the memory type is the struct of the q cells (displacements 0);
 *  - file: cell c is a 3-D subarray (Fortran order) of the N^3 elements at the cell's low
 *    corner; the filetype is the struct of the q cells; view etype = element;
 *  - time step s is written at offset s * N^3 elements (one collective call per step).
 * P that is not a square: the largest square q^2 <= P processes take part, the others make
 * every collective call with no data. Each step writes its own data (its own memory slot).
 */
#include "coll.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"

static void btio_usage(FILE *f)
{
    fputs("usage: tessera bench btio [options]     (under mpirun; P a square, else the largest\n"
          "                                        square of processes takes part)\n"
          "  NAS BTIO full_mpiio: diagonal multi-partitioning of an N^3 grid, 5 doubles per\n"
          "  point, ghost points in memory, struct-of-subarray types; one call per time step.\n"
          "  --n N               grid points per side (default 64 = class A; --quick 24 = W;\n"
          "                      class S 12, B 102)\n"
          "  --steps N           time steps written per op (default 5; --quick 2; BTIO: 40)\n",
          f);
    coll_usage_common(f);
}

/* The part of [0, n) that coordinate k of q owns (BT's cell sizes). */
static void split(int64_t n, int64_t q, int64_t k, int64_t *low, int64_t *size)
{
    int64_t ideal = n / q, excess = n % q;
    *size = ideal + (k < excess ? 1 : 0);
    *low = k * ideal + (k < excess ? k : excess);
}

int tess_bench_btio(int argc, char **argv)
{
    coll_env env;
    if (coll_env_begin(&env) != 0)
        return 1;
    int quiet = env.rank != 0;
    coll_opts o;
    coll_opts_default(&o, "btio");
    int64_t n = -1, steps = -1;
    enum { O_N = 1, O_STEPS };
    static const struct option lo[] = {{"n", required_argument, NULL, O_N},
                                       {"steps", required_argument, NULL, O_STEPS},
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
        } else if (ch == O_N || ch == O_STEPS) {
            if (coll_parse_size(ch == O_N ? "--n" : "--steps", optarg, 1,
                                ch == O_N ? &n : &steps, quiet) != 0)
                status = 2;
        } else {
            status = coll_opt_other(ch, btio_usage, quiet);
        }
    }
    status = coll_opts_rest("btio", argc, argv, status, quiet);
    if (status < 0 && steps > 100000) {
        if (!quiet)
            fprintf(stderr, "tessera: --steps: at most 100000\n");
        status = 2;
    }
    if (status >= 0) {
        coll_env_end(&env);
        return status;
    }
    if (n < 0)
        n = o.test ? 12 : o.quick ? 24 : 64;
    if (steps < 0)
        steps = o.test || o.quick ? 2 : 5;
    coll_opts_finish(&o);

    int P = env.size, rank = env.rank;
    int64_t q = 1;
    while ((q + 1) * (q + 1) <= P)
        q++;
    int active = rank < q * q;
    int64_t imax = coll_ceil_div(n, q), side = imax + 4;
    int64_t elems_per_slot = side * side * side * q;

    coll_pattern p;
    int built = coll_pattern_init(&p, 1, 1, (int)steps) == 0;
    coll_type dbl, elem;
    coll_type *cb = NULL, *cf = NULL;
    int ncb = 0, ncf = 0;
    coll_type_named(TESS_DOUBLE, MPI_DOUBLE, &dbl);
    if (built)
        built = coll_type_contiguous(5, &dbl, &elem) == 0;
    else
        memset(&elem, 0, sizeof elem);
    if (built) {
        char b[32];
        snprintf(p.tag, sizeof p.tag, "N=%lld steps=%lld", (long long)n, (long long)steps);
        snprintf(p.title, sizeof p.title,
                 "NAS BTIO (full_mpiio), %lld^3 grid x 5 doubles = %s per step, %lld step(s), "
                 "%lld x %lld processes with %lld cells each",
                 (long long)n, bench_fmt_bytes(n * n * n * 40, b, sizeof b), (long long)steps,
                 (long long)q, (long long)q, (long long)q);
        if (q * q < P)
            coll_note(&p, "%d processes is not a square: processes %lld..%d take part with no "
                          "data",
                      P, (long long)(q * q), P - 1);
        coll_note(&p, "memory: u(5, -2:%lld, -2:%lld, -2:%lld, %lld) per step (ghost points "
                      "skipped), struct of per-cell 4-D subarrays; file: struct of per-cell 3-D "
                      "subarrays, etype 5 doubles",
                  (long long)(imax + 1), (long long)(imax + 1), (long long)(imax + 1),
                  (long long)q);
        cb = calloc((size_t)q, sizeof *cb);
        cf = calloc((size_t)q, sizeof *cf);
        built = cb && cf;
    }
    int64_t node = active ? rank : 0;
    for (int64_t c = 0; built && c < q; c++) {
        int64_t cx = (node % q + c) % q, cy = ((node / q - c) % q + q) % q, cz = c;
        int64_t low[3], size[3];
        split(n, q, cx, &low[0], &size[0]);
        split(n, q, cy, &low[1], &size[1]);
        split(n, q, cz, &low[2], &size[2]);
        int64_t msz[4] = {side, side, side, q}, msub[4] = {size[0], size[1], size[2], 1},
                mst[4] = {2, 2, 2, c};
        int64_t fsz[3] = {n, n, n};
        if (coll_type_subarray(4, msz, msub, mst, 0, &elem, &cb[c]) != 0) {
            built = 0;
            break;
        }
        ncb++;
        if (coll_type_subarray(3, fsz, size, low, 0, &elem, &cf[c]) != 0) {
            built = 0;
            break;
        }
        ncf++;
    }
    if (built) {
        int64_t *bl = calloc((size_t)q, sizeof *bl), *dp = calloc((size_t)q, sizeof *dp);
        built = bl && dp;
        for (int64_t c = 0; built && c < q; c++)
            bl[c] = 1;
        built = built && coll_type_struct((int)q, bl, dp, cb, &p.mems[0]) == 0 &&
                coll_type_struct((int)q, bl, dp, cf, &p.views[0].filetype) == 0 &&
                coll_type_contiguous(1, &elem, &p.views[0].etype) == 0;
        free(bl);
        free(dp);
    }
    if (built) {
        int64_t slot = elems_per_slot * 40;
        for (int64_t s = 0; s < steps; s++)
            p.calls[s] = (coll_call){.view = 0, .mem = 0, .offset = s * n * n * n,
                                     .count = active ? 1 : 0, .buf_off = active ? s * slot : 0};
        p.buf_bytes = active ? steps * slot : 0;
    }
    for (int i = 0; i < ncb; i++)
        coll_type_free(&cb[i]);
    for (int i = 0; i < ncf; i++)
        coll_type_free(&cf[i]);
    free(cb);
    free(cf);
    coll_type_free(&elem);
    int rc = coll_run(&env, &p, &o, built);
    coll_pattern_free(&p);
    coll_env_end(&env);
    return rc;
}
