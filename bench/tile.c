/*
 * tile.c - `tessera bench tile`: the tile reader of paper 000 section V-B (mpi-tile-io).
 *
 * A display wall of 3 x 2 tiles of 1024 x 768 pixels, 24-bit color, with 270 pixels of
 * horizontal and 128 of vertical overlap between neighbouring tiles: a frame is
 * (3*1024 - 2*270) x (2*768 - 128) = 2532 x 1408 pixels = 10.2 MiB, stored row by row; frames
 * follow each other in the file. Each tile is read (and, here, also written) by one process into
 * a contiguous buffer: the filetype is a subarray of the frame (768 rows of 3 KiB) over a
 * 3-byte pixel etype, as in mpi-tile-io; frame f is at offset f * (tile pixels) of the view.
 *
 * Processes: with 6 processes each takes one tile. With more, processes 6.. take part in
 * every collective call with no data. With fewer, the tiles are dealt out in rounds: in round
 * k process r takes tile r + k*P (no data when that is >= 6), so a process reads several tiles
 * per frame, one collective call (and one view) per round. The file view changes between
 * rounds, so one op = rounds x frames calls with a set_view per round (both libraries alike).
 * Overlapping tiles are written with the same bytes (the data is a function of the file
 * offset), so the written file is defined.
 */
#include "coll.h"

#include <string.h>

#include "cmds.h"

enum { TILES_X = 3, TILES_Y = 2 };

typedef struct tile_params {
    int64_t frames, tw, th, ox, oy, px;
} tile_params;

static int tile_check(const void *params, int quiet)
{
    const tile_params *t = params;
    if (t->ox < t->tw && t->oy < t->th)
        return 0;
    if (!quiet)
        fprintf(stderr, "tessera: bench tile: overlaps must be smaller than tiles\n");
    return -1;
}

static int tile_run(const coll_env *e, const coll_opts *o, void *params)
{
    const tile_params *t = params;
    int64_t frames = t->frames, tw = t->tw, th = t->th, ox = t->ox, oy = t->oy, px = t->px;
    int P = e->size, rank = e->rank;
    int ntiles = TILES_X * TILES_Y;
    int rounds = (ntiles + P - 1) / P;
    int64_t fw = TILES_X * tw - (TILES_X - 1) * ox, fh = TILES_Y * th - (TILES_Y - 1) * oy;
    int64_t tile_px = tw * th, frame_bytes = fw * fh * px;

    coll_pattern p;
    int built = coll_pattern_init(&p, rounds, 1, (int)(rounds * frames)) == 0;
    if (built) {
        p.table1 = 1;
        snprintf(p.tag, sizeof p.tag, "%lldx%lld frames=%lld", (long long)tw, (long long)th,
                 (long long)frames);
        char b[32];
        snprintf(p.title, sizeof p.title,
                 "tile reader, %d x %d tiles of %lld x %lld px x %lld B, overlap %lld/%lld px, "
                 "frame %lld x %lld = %s, %lld frame(s)",
                 TILES_X, TILES_Y, (long long)tw, (long long)th, (long long)px, (long long)ox,
                 (long long)oy, (long long)fw, (long long)fh,
                 bench_fmt_bytes(frame_bytes, b, sizeof b), (long long)frames);
        if (P < ntiles)
            coll_note(&p, "%d processes < 6 tiles: %d round(s) per frame, process r takes tile "
                          "r + k*%d in round k (none when >= 6); one view per round",
                      P, rounds, P);
        else if (P > ntiles)
            coll_note(&p, "%d processes > 6 tiles: processes 6..%d take part with no data", P,
                      P - 1);
        coll_note(&p, "memory contiguous (tile buffer %lld B); filetype subarray of the frame "
                      "over a %lld-byte pixel etype (mpi-tile-io)",
                  (long long)(tile_px * px), (long long)px);
        coll_type byte, pixel;
        coll_type_named(TESS_BYTE, MPI_BYTE, &byte);
        built = coll_type_contiguous(px, &byte, &pixel) == 0;
        if (built) {
            /* views: one per round; an idle round views the frame as bytes (no data) */
            for (int k = 0; built && k < rounds; k++) {
                int t = rank + k * P;
                coll_view *vw = &p.views[k];
                vw->disp = 0;
                if (coll_type_contiguous(1, &pixel, &vw->etype) != 0) {
                    built = 0;
                    break;
                }
                int64_t sizes[2] = {fh, fw}, sub[2] = {th, tw}, start[2] = {0, 0};
                if (t < ntiles) {
                    start[0] = (t / TILES_X) * (th - oy);
                    start[1] = (t % TILES_X) * (tw - ox);
                }
                if (coll_type_subarray(2, sizes, sub, start, 1, &pixel, &vw->filetype) != 0)
                    built = 0;
            }
            if (built && coll_type_contiguous(1, &pixel, &p.mems[0]) != 0)
                built = 0;
            coll_type_free(&pixel);
        }
        if (built) {
            /* calls: round-major (one set_view per round), frames within; own buffer each */
            int64_t slot = tile_px * px;
            int64_t nslots = 0;
            for (int k = 0; k < rounds; k++)
                for (int64_t f = 0; f < frames; f++) {
                    coll_call *c = &p.calls[k * frames + f];
                    int has = rank + k * P < ntiles;
                    c->view = k;
                    c->mem = 0;
                    c->offset = f * tile_px;
                    c->count = has ? tile_px : 0;
                    c->buf_off = has ? nslots * slot : 0;
                    nslots += has;
                }
            p.buf_bytes = nslots * slot;
        }
    }
    return coll_run(e, &p, o, built);
}

int tess_bench_tile(int argc, char **argv)
{
    static const coll_workload w = {
        .name = "tile",
        .about = "  The tile reader of paper 000 V-B, under mpirun (6 processes is the paper's):\n"
                 "  3 x 2 tiles of 1024 x 768 24-bit pixels with 270/128 pixel overlaps, 10.2 MiB\n"
                 "  frames; each process reads (and writes) its tile of every frame into a\n"
                 "  contiguous buffer. Fewer than 6 processes take several tiles in rounds (one view\n"
                 "  per round), more than 6 leave the extra ones without data.\n",
        .check = tile_check,
        .run = tile_run};
    tile_params t;
    bench_opt opts[] = {
        {.name = "frames", .kind = BENCH_OPT_SIZE, .dst = &t.frames, .min = 1, .arg = "N",
         .help = "frames per op", .def = "4", .quick = "1"},
        {.name = "tile-w", .kind = BENCH_OPT_SIZE, .dst = &t.tw, .min = 1, .arg = "N",
         .help = "tile width in pixels", .def = "1024"},
        {.name = "tile-h", .kind = BENCH_OPT_SIZE, .dst = &t.th, .min = 1, .arg = "N",
         .help = "tile height in pixels", .def = "768"},
        {.name = "overlap-x", .kind = BENCH_OPT_SIZE, .dst = &t.ox, .arg = "N",
         .help = "horizontal overlap of neighbouring tiles in pixels", .def = "270"},
        {.name = "overlap-y", .kind = BENCH_OPT_SIZE, .dst = &t.oy, .arg = "N",
         .help = "vertical overlap in pixels", .def = "128"},
        {.name = "pixel", .kind = BENCH_OPT_SIZE, .dst = &t.px, .min = 1, .arg = "N",
         .help = "bytes per pixel", .def = "3"},
    };
    return coll_main(&w, opts, BENCH_NOPTS(opts), &t, argc, argv);
}
