/*
 * test_mpiio_access.c - every MPI-IO data-access routine on random views, against a
 * brute-force byte map.
 *
 * Each case draws, from a seed all ranks share, a random filetype (tests/randtype.c: nested
 * constructors, byte map from the constructor definitions, never from Tessera), an etype, a
 * memory type and count per rank, and a position: an explicit offset, a seek of the individual
 * pointer, or a seek of the shared pointer. Ranks' views interleave in lanes (disjoint writes)
 * except for the shared-pointer routines, whose views must be identical. Then one routine runs
 * (blocking, nonblocking + MPI_Wait, or split begin/end):
 *  - writes: the file is emptied first; afterwards rank 0 compares the whole file, read with
 *    POSIX, with the image every rank's access implies (holes are zeros);
 *  - reads: rank 0 writes a random image with POSIX first; every rank compares its buffer,
 *    guards included, with the image.
 * The status must report the bytes moved, and each file pointer the routine moves must have
 * moved by them (shared-pointer routines are serialized by rank, ordered ones are in rank
 * order by definition, so every position is known).
 *
 * usage: mpiexec -n P test_mpiio_access [cases per routine [seed]]
 */
#include "mio_test.h"
#include "randtype.h"

#define GUARD 16

enum { BLOCKING, NONBLOCKING, SPLIT };
enum { EXPLICIT, INDIVIDUAL, SHARED };

typedef struct {
    const char *name;
    int write, coll, pos, mode;
} routine;

static const routine routines[] = {
    {"MPI_File_read_at", 0, 0, EXPLICIT, BLOCKING},
    {"MPI_File_read_at_all", 0, 1, EXPLICIT, BLOCKING},
    {"MPI_File_write_at", 1, 0, EXPLICIT, BLOCKING},
    {"MPI_File_write_at_all", 1, 1, EXPLICIT, BLOCKING},
    {"MPI_File_read", 0, 0, INDIVIDUAL, BLOCKING},
    {"MPI_File_read_all", 0, 1, INDIVIDUAL, BLOCKING},
    {"MPI_File_write", 1, 0, INDIVIDUAL, BLOCKING},
    {"MPI_File_write_all", 1, 1, INDIVIDUAL, BLOCKING},
    {"MPI_File_read_shared", 0, 0, SHARED, BLOCKING},
    {"MPI_File_write_shared", 1, 0, SHARED, BLOCKING},
    {"MPI_File_read_ordered", 0, 1, SHARED, BLOCKING},
    {"MPI_File_write_ordered", 1, 1, SHARED, BLOCKING},
    {"MPI_File_iread_at", 0, 0, EXPLICIT, NONBLOCKING},
    {"MPI_File_iread_at_all", 0, 1, EXPLICIT, NONBLOCKING},
    {"MPI_File_iwrite_at", 1, 0, EXPLICIT, NONBLOCKING},
    {"MPI_File_iwrite_at_all", 1, 1, EXPLICIT, NONBLOCKING},
    {"MPI_File_iread", 0, 0, INDIVIDUAL, NONBLOCKING},
    {"MPI_File_iread_all", 0, 1, INDIVIDUAL, NONBLOCKING},
    {"MPI_File_iwrite", 1, 0, INDIVIDUAL, NONBLOCKING},
    {"MPI_File_iwrite_all", 1, 1, INDIVIDUAL, NONBLOCKING},
    {"MPI_File_iread_shared", 0, 0, SHARED, NONBLOCKING},
    {"MPI_File_iwrite_shared", 1, 0, SHARED, NONBLOCKING},
    {"MPI_File_read_at_all_begin", 0, 1, EXPLICIT, SPLIT},
    {"MPI_File_write_at_all_begin", 1, 1, EXPLICIT, SPLIT},
    {"MPI_File_read_all_begin", 0, 1, INDIVIDUAL, SPLIT},
    {"MPI_File_write_all_begin", 1, 1, INDIVIDUAL, SPLIT},
    {"MPI_File_read_ordered_begin", 0, 1, SHARED, SPLIT},
    {"MPI_File_write_ordered_begin", 1, 1, SHARED, SPLIT},
};
#define NROUTINES ((int)(sizeof routines / sizeof routines[0]))

/* Run routine k: the MPI call itself, then MPI_Wait or the split's end. */
static void run(int k, MPI_File fh, MPI_Offset off, void *buf, int count, MPI_Datatype dt,
                MPI_Status *st)
{
    MPI_Request rq;
    switch (k) {
    case 0: MT_OK(MPI_File_read_at(fh, off, buf, count, dt, st)); break;
    case 1: MT_OK(MPI_File_read_at_all(fh, off, buf, count, dt, st)); break;
    case 2: MT_OK(MPI_File_write_at(fh, off, buf, count, dt, st)); break;
    case 3: MT_OK(MPI_File_write_at_all(fh, off, buf, count, dt, st)); break;
    case 4: MT_OK(MPI_File_read(fh, buf, count, dt, st)); break;
    case 5: MT_OK(MPI_File_read_all(fh, buf, count, dt, st)); break;
    case 6: MT_OK(MPI_File_write(fh, buf, count, dt, st)); break;
    case 7: MT_OK(MPI_File_write_all(fh, buf, count, dt, st)); break;
    case 8: MT_OK(MPI_File_read_shared(fh, buf, count, dt, st)); break;
    case 9: MT_OK(MPI_File_write_shared(fh, buf, count, dt, st)); break;
    case 10: MT_OK(MPI_File_read_ordered(fh, buf, count, dt, st)); break;
    case 11: MT_OK(MPI_File_write_ordered(fh, buf, count, dt, st)); break;
    case 12: MT_OK(MPI_File_iread_at(fh, off, buf, count, dt, &rq)); break;
    case 13: MT_OK(MPI_File_iread_at_all(fh, off, buf, count, dt, &rq)); break;
    case 14: MT_OK(MPI_File_iwrite_at(fh, off, buf, count, dt, &rq)); break;
    case 15: MT_OK(MPI_File_iwrite_at_all(fh, off, buf, count, dt, &rq)); break;
    case 16: MT_OK(MPI_File_iread(fh, buf, count, dt, &rq)); break;
    case 17: MT_OK(MPI_File_iread_all(fh, buf, count, dt, &rq)); break;
    case 18: MT_OK(MPI_File_iwrite(fh, buf, count, dt, &rq)); break;
    case 19: MT_OK(MPI_File_iwrite_all(fh, buf, count, dt, &rq)); break;
    case 20: MT_OK(MPI_File_iread_shared(fh, buf, count, dt, &rq)); break;
    case 21: MT_OK(MPI_File_iwrite_shared(fh, buf, count, dt, &rq)); break;
    case 22:
        MT_OK(MPI_File_read_at_all_begin(fh, off, buf, count, dt));
        MT_OK(MPI_File_read_at_all_end(fh, buf, st));
        break;
    case 23:
        MT_OK(MPI_File_write_at_all_begin(fh, off, buf, count, dt));
        MT_OK(MPI_File_write_at_all_end(fh, buf, st));
        break;
    case 24:
        MT_OK(MPI_File_read_all_begin(fh, buf, count, dt));
        MT_OK(MPI_File_read_all_end(fh, buf, st));
        break;
    case 25:
        MT_OK(MPI_File_write_all_begin(fh, buf, count, dt));
        MT_OK(MPI_File_write_all_end(fh, buf, st));
        break;
    case 26:
        MT_OK(MPI_File_read_ordered_begin(fh, buf, count, dt));
        MT_OK(MPI_File_read_ordered_end(fh, buf, st));
        break;
    case 27:
        MT_OK(MPI_File_write_ordered_begin(fh, buf, count, dt));
        MT_OK(MPI_File_write_ordered_end(fh, buf, st));
        break;
    default: MT_CHECK(0);
    }
    if (routines[k].mode == NONBLOCKING)
        MT_OK(MPI_Wait(&rq, st));
}

/* One rank's access in a case: everything any rank can recompute from the seed. */
typedef struct {
    rt_type *mt;      /* memory type */
    int count;
    int64_t total;    /* data bytes */
    int64_t disp;     /* view displacement */
    int64_t pos;      /* position of the access, etypes */
} acc;

static rt_type *ft;   /* the case's filetype (shared by all ranks) */
static int64_t tile;  /* extent of the view's filetype (lanes: ranks * lane) */
static int64_t es;    /* etype size */

static rt_type *draw(rt_rng *r, unsigned flags)
{
    for (;;) {
        rt_type *t = rt_random_limits(r, 3, flags, 2048, 8192);
        if (!t) {
            snprintf(mt_where + strlen(mt_where), sizeof mt_where - strlen(mt_where), " (%s)",
                     rt_error());
            mt_fail(__FILE__, __LINE__, "rt_random failed");
        }
        if (!t->mpi_note)
            return t;
        rt_free(t); /* MPI's bounds disagree with the standard's here: not this test's topic */
    }
}

static int64_t file_byte(const acc *a, int64_t j)
{
    int64_t k = a->pos * es + j, fs = ft->nbytes;
    return a->disp + (k / fs) * tile + ft->offsets[k % fs];
}

static int64_t mem_byte(const acc *a, int64_t j)
{
    return (j / a->mt->nbytes) * a->mt->extent + a->mt->offsets[j % a->mt->nbytes];
}

static unsigned char pattern(uint64_t seed, int rank, int64_t j)
{
    return (unsigned char)rt_mix(seed ^ ((uint64_t)rank << 40) ^ (uint64_t)j);
}

static void one_case(const char *path, int k, uint64_t seed, int rank, int size)
{
    const routine *rt = &routines[k];
    rt_rng r;
    acc *a = calloc((size_t)size, sizeof *a);
    MT_CHECK(a);
    snprintf(mt_where, sizeof mt_where, "%s, seed %llu", rt->name, (unsigned long long)seed);
    rt_seed(&r, seed);
    ft = draw(&r, RT_MONOTONIC | RT_NONNEG | RT_NO_EMPTY);
    int64_t lane = ft->true_ub > ft->extent ? ft->true_ub : ft->extent;
    bool lanes = rt->pos != SHARED; /* shared-pointer routines need identical views */
    tile = lanes ? lane * size : lane;
    int64_t base = rt_int(&r, 0, 64);
    es = 1;
    for (int e = 8; e > 1; e /= 2)
        if (ft->nbytes % e == 0 && rt_chance(&r, 50)) {
            es = e;
            break;
        }
    int64_t start = rt_int(&r, 0, 3) * (ft->nbytes / es); /* shared pointer start */
    int64_t shared_at = start;
    for (int q = 0; q < size; q++) {
        rt_rng rq;
        rt_seed(&rq, rt_mix(seed ^ (uint64_t)(q + 1)));
        do { /* every data byte its own memory byte (the pattern is per data byte); whole etypes */
            rt_free(a[q].mt);
            a[q].mt = draw(&rq, RT_NO_EMPTY);
            a[q].count = (int)rt_int(&rq, 1, 3);
        } while ((a[q].count * a[q].mt->nbytes) % es || rt_overlaps(a[q].mt, a[q].count));
        a[q].total = a[q].count * a[q].mt->nbytes;
        a[q].disp = base + (lanes ? q * lane : 0);
        a[q].pos = rt_int(&rq, 0, 3 * ft->nbytes / es);
        if (rt->pos == SHARED) { /* serialized by rank (ordered: by definition) */
            a[q].pos = shared_at;
            shared_at += a[q].total / es;
        }
    }
    int64_t reach = 0;
    for (int q = 0; q < size; q++)
        for (int64_t j = 0; j < a[q].total; j++)
            if (file_byte(&a[q], j) + 1 > reach)
                reach = file_byte(&a[q], j) + 1;

    /* the view */
    MPI_File fh;
    MPI_Datatype etype, filetype;
    MT_OK(MPI_Type_contiguous((int)es, MPI_BYTE, &etype));
    MT_OK(MPI_Type_commit(&etype));
    MT_OK(MPI_Type_create_resized(ft->mpi, 0, tile, &filetype));
    MT_OK(MPI_Type_commit(&filetype));
    MT_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    MT_OK(MPI_File_set_view(fh, a[rank].disp, etype, filetype, "native", MPI_INFO_NULL));
    MPI_Type_free(&etype);
    MPI_Type_free(&filetype);
    if (rt->pos == INDIVIDUAL)
        MT_OK(MPI_File_seek(fh, a[rank].pos, MPI_SEEK_SET));
    if (rt->pos == SHARED)
        MT_OK(MPI_File_seek_shared(fh, start, MPI_SEEK_SET));

    /* the file before, the memory */
    unsigned char *image = malloc((size_t)reach + 64);
    MT_CHECK(image);
    for (int64_t x = 0; x < reach + 64; x++)
        image[x] = rt->write ? 0 : pattern(seed, -1, x);
    if (rank == 0) {
        int fd = open(path, O_WRONLY | O_TRUNC);
        MT_CHECK(fd >= 0 && (rt->write || pwrite(fd, image, (size_t)reach + 64, 0) == reach + 64));
        close(fd);
    }
    int64_t lo, hi;
    rt_span(a[rank].mt, a[rank].count, &lo, &hi);
    unsigned char *mem = malloc((size_t)(hi - lo) + 2 * GUARD), *origin = mem + GUARD - lo;
    MT_CHECK(mem);
    memset(mem, 0xEE, (size_t)(hi - lo) + 2 * GUARD);
    if (rt->write)
        for (int64_t j = 0; j < a[rank].total; j++)
            origin[mem_byte(&a[rank], j)] = pattern(seed, rank, j);
    MPI_Barrier(MPI_COMM_WORLD);

    /* the access */
    MPI_Status st;
    int64_t expect_ind = a[rank].pos + a[rank].total / es;
    if (rt->pos == SHARED && !rt->coll) /* one rank at a time: positions are known */
        for (int q = 0; q < size; q++) {
            if (q == rank)
                run(k, fh, 0, origin, a[rank].count, a[rank].mt->mpi, &st);
            MPI_Barrier(MPI_COMM_WORLD);
        }
    else
        run(k, fh, a[rank].pos, origin, a[rank].count, a[rank].mt->mpi, &st);
    MT_CHECK(mt_status_bytes(&st) == a[rank].total);
    MPI_Offset p;
    if (rt->pos == INDIVIDUAL) {
        MT_OK(MPI_File_get_position(fh, &p));
        MT_CHECK(p == expect_ind);
    }
    if (rt->pos == SHARED) {
        MPI_Barrier(MPI_COMM_WORLD);
        MT_OK(MPI_File_get_position_shared(fh, &p));
        MT_CHECK(p == shared_at);
    }
    MT_OK(MPI_File_close(&fh));

    /* the check */
    if (rt->write) {
        for (int q = 0; q < size; q++)
            for (int64_t j = 0; j < a[q].total; j++)
                image[file_byte(&a[q], j)] = pattern(seed, q, j);
        if (rank == 0) {
            int64_t len;
            unsigned char *got = mt_slurp(path, &len);
            MT_CHECK(len == reach);
            for (int64_t x = 0; x < reach; x++)
                if (got[x] != image[x]) {
                    snprintf(mt_where + strlen(mt_where), sizeof mt_where - strlen(mt_where),
                             ": file byte %lld is %d, expected %d", (long long)x, got[x],
                             image[x]);
                    mt_fail(__FILE__, __LINE__, "wrong file contents");
                }
            free(got);
        }
    } else {
        unsigned char *want = malloc((size_t)(hi - lo) + 2 * GUARD), *wo = want + GUARD - lo;
        MT_CHECK(want);
        memset(want, 0xEE, (size_t)(hi - lo) + 2 * GUARD);
        for (int64_t j = 0; j < a[rank].total; j++)
            wo[mem_byte(&a[rank], j)] = image[file_byte(&a[rank], j)];
        for (int64_t x = 0; x < hi - lo + 2 * GUARD; x++)
            if (mem[x] != want[x]) {
                snprintf(mt_where + strlen(mt_where), sizeof mt_where - strlen(mt_where),
                         ": memory byte %lld is %d, expected %d", (long long)(x - GUARD + lo),
                         mem[x], want[x]);
                mt_fail(__FILE__, __LINE__, "wrong memory contents");
            }
        free(want);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    free(mem);
    free(image);
    for (int q = 0; q < size; q++)
        rt_free(a[q].mt);
    free(a);
    rt_free(ft);
}

int main(int argc, char **argv)
{
    int rank, size, cases = argc > 1 ? atoi(argv[1]) : 3;
    uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 0) : 20260101;
    char path[256], what[64];
    mt_begin(&argc, &argv, &rank, &size, path, sizeof path, "access");
    for (int k = 0; k < NROUTINES; k++)
        for (int c = 0; c < cases; c++)
            one_case(path, k, rt_mix(seed + (uint64_t)(k * 1000 + c)), rank, size);
    snprintf(what, sizeof what, "%d routines x %d cases", NROUTINES, cases);
    return mt_end(path, what);
}
