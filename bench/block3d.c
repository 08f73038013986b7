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

#include <getopt.h>
#include <string.h>

#include "cmds.h"

static void block3d_usage(FILE *f)
{
    fputs("usage: tessera bench block3d [options]     (under mpirun)\n"
          "  ROMIO coll_perf: each process one block of an N^3 int array (block distribution\n"
          "  over an MPI_Dims_create grid), contiguous in memory, one collective call.\n"
          "  --n N               array side (default 128; --quick 64; the paper used 600)\n"
          "  --type T            darray (default, as coll_perf) or subarray\n",
          f);
    coll_usage_common(f);
}

int tess_bench_block3d(int argc, char **argv)
{
    coll_env env;
    if (coll_env_begin(&env) != 0)
        return 1;
    int quiet = env.rank != 0;
    coll_opts o;
    coll_opts_default(&o, "block3d");
    int64_t n = -1;
    int use_subarray = 0;
    enum { O_N = 1, O_TYPE };
    static const struct option lo[] = {{"n", required_argument, NULL, O_N},
                                       {"type", required_argument, NULL, O_TYPE},
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
        } else if (ch == O_N) {
            if (coll_parse_size("--n", optarg, 1, &n, quiet) != 0)
                status = 2;
        } else if (ch == O_TYPE) {
            if (strcmp(optarg, "darray") == 0) {
                use_subarray = 0;
            } else if (strcmp(optarg, "subarray") == 0) {
                use_subarray = 1;
            } else {
                if (!quiet)
                    fprintf(stderr, "tessera: --type: darray or subarray\n");
                status = 2;
            }
        } else {
            status = coll_opt_other(ch, block3d_usage, quiet);
        }
    }
    status = coll_opts_rest("block3d", argc, argv, status, quiet);
    if (status >= 0) {
        coll_env_end(&env);
        return status;
    }
    if (n < 0)
        n = o.test ? 24 : o.quick ? 64 : 128;
    coll_opts_finish(&o);

    int P = env.size, rank = env.rank;
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
    int rc = coll_run(&env, &p, &o, built);
    coll_pattern_free(&p);
    coll_env_end(&env);
    return rc;
}
