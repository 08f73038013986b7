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

#include <stdlib.h>
#include <string.h>

#include "cmds.h"

typedef struct btio_params {
    int64_t n, steps;
} btio_params;

/* The part of [0, n) that coordinate k of q owns (BT's cell sizes). */
static void split(int64_t n, int64_t q, int64_t k, int64_t *low, int64_t *size)
{
    int64_t ideal = n / q, excess = n % q;
    *size = ideal + (k < excess ? 1 : 0);
    *low = k * ideal + (k < excess ? k : excess);
}

static int btio_run(const coll_env *e, const coll_opts *o, void *params)
{
    const btio_params *x = params;
    int64_t n = x->n, steps = x->steps;
    int P = e->size, rank = e->rank;
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
    return coll_run(e, &p, o, built);
}

int tess_bench_btio(int argc, char **argv)
{
    static const coll_workload w = {
        .name = "btio",
        .about = "  NAS BTIO full_mpiio, under mpirun (P a square, else the largest square of\n"
                 "  processes takes part): diagonal multi-partitioning of an N^3 grid, 5 doubles per\n"
                 "  point, ghost points in memory, struct-of-subarray types; one call per time step.\n",
        .check = NULL,
        .run = btio_run};
    btio_params x;
    bench_opt opts[] = {
        {.name = "n", .kind = BENCH_OPT_SIZE, .dst = &x.n, .min = 1, .arg = "N",
         .help = "grid points per side (class S 12, W 24, A 64, B 102)", .def = "64",
         .quick = "24", .test = "12"},
        {.name = "steps", .kind = BENCH_OPT_SIZE, .dst = &x.steps, .min = 1, .max = 100000,
         .arg = "N", .help = "time steps written per op (BTIO: 40)", .def = "5", .quick = "2"},
    };
    return coll_main(&w, opts, BENCH_NOPTS(opts), &x, argc, argv);
}
