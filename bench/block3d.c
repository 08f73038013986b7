/*
 * block3d.c - `tessera bench block3d`: ROMIO's coll_perf (paper 000 section V-C).
 *
 * An N x N x N array of 4-byte ints, block-distributed over a 3-D process grid
 * (MPI_Dims_create); each process writes and reads its block, contiguous in memory, through a
 * file view whose filetype is MPI_Type_create_darray (BLOCK in every dimension, C order) over
 * an MPI_INT etype, as coll_perf does; --type subarray builds the same blocks with
 * MPI_Type_create_subarray instead. One collective call per op.
 */
#include "coll.h"

#include <string.h>

#include "cmds.h"

typedef struct block3d_params {
    int64_t n;
    int use_subarray;
} block3d_params;

static int block3d_run(const coll_env *e, const coll_opts *o, void *params)
{
    const block3d_params *x = params;
    int64_t n = x->n;
    int use_subarray = x->use_subarray;
    int P = e->size, rank = e->rank;
    int dims[3] = {0, 0, 0};
    coll_pattern p;
    int built = MPI_Dims_create(P, 3, dims) == MPI_SUCCESS &&
                coll_pattern_init(&p, 1, 1, 1) == 0;
    if (!built)
        memset(&p, 0, sizeof p);
    if (built) {
        p.table1 = 1;
        snprintf(p.tag, sizeof p.tag, "N=%lld %s", (long long)n,
                 use_subarray ? "subarray" : "darray");
        char b[32];
        snprintf(p.title, sizeof p.title,
                 "ROMIO coll_perf, %lld^3 ints (%s) on a %d x %d x %d process grid, %s filetype",
                 (long long)n, bench_fmt_bytes(n * n * n * 4, b, sizeof b), dims[0], dims[1],
                 dims[2], use_subarray ? "subarray" : "darray");
        coll_note(&p, "memory contiguous (MPI_INT x local block), view etype MPI_INT, one "
                      "collective call per op");
        int64_t gs[3] = {n, n, n}, sub[3], start[3];
        /* the block of this rank: darray's BLOCK rule, ceil(n / p) per process, grid in C order */
        int coord[3] = {rank / (dims[1] * dims[2]), (rank / dims[2]) % dims[1], rank % dims[2]};
        int64_t local = 1;
        for (int d = 0; d < 3; d++) {
            int64_t blk = coll_ceil_div(n, dims[d]);
            start[d] = coord[d] * blk;
            sub[d] = n - start[d] < blk ? n - start[d] : blk;
            if (sub[d] < 0)
                sub[d] = 0;
            local *= sub[d];
        }
        coll_type i32;
        coll_type_named(TESS_INT32, MPI_INT, &i32);
        coll_view *v = &p.views[0];
        /* named MPI_INT etype and memory type, as coll_perf */
        coll_type_named(TESS_INT32, MPI_INT, &v->etype);
        coll_type_named(TESS_INT32, MPI_INT, &p.mems[0]);
        if (built) {
            if (use_subarray && local > 0)
                built = coll_type_subarray(3, gs, sub, start, 1, &i32, &v->filetype) == 0;
            else if (use_subarray) /* an empty block: any view, no data */
                coll_type_named(TESS_INT32, MPI_INT, &v->filetype);
            else
                built = coll_type_darray_block(P, rank, 3, gs, dims, 1, &i32, &v->filetype) == 0;
        }
        if (built && tess_type_size(v->filetype.t) != local * 4) {
            fprintf(stderr, "tessera: block3d: rank %d: darray holds %lld bytes, expected %lld\n",
                    rank, (long long)tess_type_size(v->filetype.t), (long long)(local * 4));
            built = 0;
        }
        p.calls[0] = (coll_call){.view = 0, .mem = 0, .offset = 0, .count = local, .buf_off = 0};
        p.buf_bytes = local * 4;
    }
    return coll_run(e, &p, o, built);
}

int tess_bench_block3d(int argc, char **argv)
{
    static const coll_workload w = {
        .name = "block3d",
        .about = "  ROMIO coll_perf, under mpirun: each process one block of an N^3 int array (block\n"
                 "  distribution over an MPI_Dims_create grid), contiguous in memory, one collective\n"
                 "  call.\n",
        .check = NULL,
        .run = block3d_run};
    static const bench_choice types[] = {{"darray", 0}, {"subarray", 1}, {NULL, 0}};
    block3d_params x;
    bench_opt opts[] = {
        {.name = "n", .kind = BENCH_OPT_SIZE, .dst = &x.n, .min = 1, .arg = "N",
         .help = "array side (the paper used 600)", .def = "128", .quick = "64", .test = "24"},
        {.name = "type", .kind = BENCH_OPT_CHOICE, .dst = &x.use_subarray, .arg = "T",
         .choices = types, .help = "the filetype (darray as coll_perf)", .def = "darray"},
    };
    return coll_main(&w, opts, BENCH_NOPTS(opts), &x, argc, argv);
}
