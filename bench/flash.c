/*
 * flash.c - `tessera bench flash`: the FLASH I/O checkpoint of paper 000 section V-D.
 *
 * Each process holds `blocks` (80) blocks of nxb^3 (8^3) cells surrounded by `guard` (4) guard
 * cells on every side, each cell `nvar` (24) doubles with the variables interleaved: in memory
 * (C order) unk[block][z][y][x][var] over the 16^3 cells with guards, the Fortran
 * unk(var, x, y, z, block) of FLASH. The checkpoint stores the file by variable, then by global
 * block (process r holds global blocks r*blocks ..), then the interior cells of the block, x
 * fastest: a file region is one variable of one block's interior (nxb^3 doubles = 4 KiB), and
 * each variable's blocks of one process are contiguous (320 KiB).
 *
 * Memory type: for variable 0 the interior of one block is a subarray of the 4-D block array
 * (16,16,16,24) taking (8,8,8,1) from (4,4,4,0), extent one whole block; `blocks` of them
 * contiguous; the 24 variables an hvector of stride 8 bytes over that (the stream order is the
 * file's: variable, block, z, y, x). Every memory region is one double: 983,040 of them per
 * process by default, the paper's POSIX I/O count. File type: a subarray of the (nvar,
 * total cells) array of doubles. One collective call per op.
 */
#include "coll.h"

#include <string.h>

#include "cmds.h"

typedef struct flash_params {
    int64_t blocks, nxb, guard, nvar;
} flash_params;

static int flash_run(const coll_env *e, const coll_opts *o, void *params)
{
    const flash_params *x = params;
    int64_t blocks = x->blocks, nxb = x->nxb, guard = x->guard, nvar = x->nvar;
    int P = e->size, rank = e->rank;
    int64_t side = nxb + 2 * guard, cells = nxb * nxb * nxb;
    int64_t block_bytes = side * side * side * nvar * 8;
    coll_pattern p;
    int built = coll_pattern_init(&p, 1, 1, 1) == 0;
    if (built) {
        p.table1 = 1;
        snprintf(p.tag, sizeof p.tag, "%lld blocks of %lld^3+%lldg x %lld vars", (long long)blocks,
                 (long long)nxb, (long long)guard, (long long)nvar);
        char b1[32], b2[32];
        snprintf(p.title, sizeof p.title,
                 "FLASH I/O checkpoint, %lld blocks/process of %lld^3 cells + %lld guard cells, "
                 "%lld doubles per cell: %s per process, memory %s per process",
                 (long long)blocks, (long long)nxb, (long long)guard, (long long)nvar,
                 bench_fmt_bytes(blocks * cells * nvar * 8, b1, sizeof b1),
                 bench_fmt_bytes(blocks * block_bytes, b2, sizeof b2));
        coll_note(&p, "memory: unk[block][z][y][x][var], guard cells skipped, variables "
                      "interleaved (every memory region one double)");
        coll_note(&p, "file: by variable, then global block (rank r: blocks r*%lld..), interior "
                      "cells x fastest; one collective call per op",
                  (long long)blocks);
        coll_type dbl, interior, blk, all;
        coll_type_named(TESS_DOUBLE, MPI_DOUBLE, &dbl);
        int64_t msz[4] = {side, side, side, nvar}, msub[4] = {nxb, nxb, nxb, 1},
                mst[4] = {guard, guard, guard, 0};
        built = coll_type_subarray(4, msz, msub, mst, 1, &dbl, &interior) == 0;
        if (built) {
            built = coll_type_contiguous(blocks, &interior, &blk) == 0;
            coll_type_free(&interior);
        }
        if (built) {
            built = coll_type_hvector(nvar, 1, 8, &blk, &all) == 0;
            coll_type_free(&blk);
        }
        if (built)
            p.mems[0] = all;
        coll_view *v = &p.views[0];
        int64_t fsz[2] = {nvar, (int64_t)P * blocks * cells}, fsub[2] = {nvar, blocks * cells},
                fst[2] = {0, (int64_t)rank * blocks * cells};
        if (built)
            coll_type_named(TESS_DOUBLE, MPI_DOUBLE, &v->etype);
        if (built)
            built = coll_type_subarray(2, fsz, fsub, fst, 1, &dbl, &v->filetype) == 0;
        p.calls[0] = (coll_call){.view = 0, .mem = 0, .offset = 0, .count = 1, .buf_off = 0};
        p.buf_bytes = blocks * block_bytes;
    }
    return coll_run(e, &p, o, built);
}

int tess_bench_flash(int argc, char **argv)
{
    static const coll_workload w = {
        .name = "flash",
        .about = "  FLASH I/O checkpoint (paper 000 V-D), under mpirun: per process `blocks` blocks of\n"
                 "  nxb^3 cells with `guard` guard cells, `nvar` doubles per cell interleaved in\n"
                 "  memory; the file by variable, then global block. One collective call per op.\n",
        .check = NULL,
        .run = flash_run};
    flash_params x;
    bench_opt opts[] = {
        {.name = "blocks", .kind = BENCH_OPT_SIZE, .dst = &x.blocks, .min = 1, .arg = "N",
         .help = "blocks per process", .def = "80", .quick = "8", .test = "2"},
        {.name = "nxb", .kind = BENCH_OPT_SIZE, .dst = &x.nxb, .min = 1, .arg = "N",
         .help = "interior cells per side", .def = "8"},
        {.name = "guard", .kind = BENCH_OPT_SIZE, .dst = &x.guard, .arg = "N",
         .help = "guard cells per side", .def = "4"},
        {.name = "nvar", .kind = BENCH_OPT_SIZE, .dst = &x.nvar, .min = 1, .arg = "N",
         .help = "variables", .def = "24"},
    };
    return coll_main(&w, opts, BENCH_NOPTS(opts), &x, argc, argv);
}
