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

#include <getopt.h>
#include <string.h>

#include "cmds.h"

static void flash_usage(FILE *f)
{
    fputs("usage: tessera bench flash [options]     (under mpirun)\n"
          "  FLASH I/O checkpoint (paper 000 V-D): per process `blocks` blocks of nxb^3 cells\n"
          "  with `guard` guard cells, `nvar` doubles per cell interleaved in memory; the file\n"
          "  by variable, then global block. One collective call per op.\n"
          "  --blocks N          blocks per process (default 80; --quick 8)\n"
          "  --nxb N             interior cells per side (default 8)\n"
          "  --guard N           guard cells per side (default 4)\n"
          "  --nvar N            variables (default 24)\n",
          f);
    coll_usage_common(f);
}

int tess_bench_flash(int argc, char **argv)
{
    coll_env env;
    if (coll_env_begin(&env) != 0)
        return 1;
    int quiet = env.rank != 0;
    coll_opts o;
    coll_opts_default(&o, "flash");
    int64_t blocks = -1, nxb = 8, guard = 4, nvar = 24;
    enum { O_BLOCKS = 1, O_NXB, O_GUARD, O_NVAR };
    static const struct option lo[] = {
        {"blocks", required_argument, NULL, O_BLOCKS}, {"nxb", required_argument, NULL, O_NXB},
        {"guard", required_argument, NULL, O_GUARD},   {"nvar", required_argument, NULL, O_NVAR},
        {"help", no_argument, NULL, 'h'},              COLL_LONGOPTS,
        {NULL, 0, NULL, 0}};
    optind = 0;
    opterr = !quiet;
    int ch, status = -1;
    while (status < 0 && (ch = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        int k = coll_opt(&o, ch, optarg, quiet);
        if (k == 1)
            continue;
        int64_t *dst = ch == O_BLOCKS ? &blocks : ch == O_NXB ? &nxb : ch == O_GUARD ? &guard
                     : ch == O_NVAR ? &nvar : NULL;
        if (k < 0) {
            status = 2;
        } else if (dst) {
            if (coll_parse_size(lo[ch - 1].name, optarg, ch == O_GUARD ? 0 : 1, dst, quiet) != 0)
                status = 2;
        } else {
            status = coll_opt_other(ch, flash_usage, quiet);
        }
    }
    status = coll_opts_rest("flash", argc, argv, status, quiet);
    if (status >= 0) {
        coll_env_end(&env);
        return status;
    }
    if (blocks < 0)
        blocks = o.test ? 2 : o.quick ? 8 : 80;
    coll_opts_finish(&o);

    int P = env.size, rank = env.rank;
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
    int rc = coll_run(&env, &p, &o, built);
    coll_pattern_free(&p);
    coll_env_end(&env);
    return rc;
}
