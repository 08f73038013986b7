/*
 * test_rados_collective.c - concurrent collective writers on one RADOS file lose no update
 * (MPI, 2 to 4 ranks). The ranks form two groups (even and odd ranks), each with its own
 * communicator and its own collective opens of the same file; 8-byte piece k of a 48 KiB file
 * belongs to rank k % P. In each of ROUNDS rounds both groups rewrite all of their ranks'
 * pieces at the same time, each group through a method chosen per round:
 *   two-phase with spans (the aggregator writes [first, last) of its window, the other group's
 *   pieces included: on RADOS through the driver's atomic read-modify-write), two-phase over
 *   list or datatype I/O, or independent sieving or datatype writes.
 * After each round every byte must hold its owner's value of that round, read straight from
 * the objects (rt_image): an aggregator that wrote back a stale copy of the other group's
 * pieces would show there (it does when two-phase spans are written without the atomic
 * read-modify-write). Small stripes (512-byte units, 3 per row, 2 per object) and a 4 KiB
 * collective buffer make many windows, requests and objects.
 */
#include "rados/rados_common.h"

#include <mpi.h>
#include <tessera_mpi.h>

#define ROUNDS 10
#define PIECES 6144 /* 8-byte pieces: 48 KiB */

static const struct {
    const char *name, *method, *cb, *threshold;
} ways[] = {
    {"two-phase spans", "list", "enable", "1073741824"},
    {"two-phase list", "list", "enable", "0"},
    {"two-phase datatype", "datatype", "enable", "0"},
    {"independent sieve", "sieve", "disable", "0"},
    {"independent datatype", "datatype", "disable", "0"},
};
#define NWAYS ((int)(sizeof ways / sizeof ways[0]))

/* Rank 0, after a round: every byte holds its owner's value of that round. */
static void check_round(const char *path, int P, int round)
{
    static unsigned char img[PIECES * 8];
    rt_image(path, img, sizeof img);
    int bad = 0;
    for (int64_t x = 0; x < (int64_t)sizeof img; x++) {
        int owner = (int)((x / 8) % P);
        unsigned want = 1 + (unsigned)owner + (unsigned)P * (unsigned)round;
        if (img[x] != want && bad++ < 5)
            fprintf(stderr, "round %d, byte %lld: %u, expected %u (rank %d's value)\n", round,
                    (long long)x, img[x], want, owner);
    }
    CHECK(bad == 0);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, P;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    rt_conf();
    CHECK(P >= 2 && P <= 4 && PIECES % P == 0);
    MPI_Comm group;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &group);
    char path[256];
    rt_name(path, sizeof path, "collective");
    MPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD); /* rank 0's pid names it */
    if (rank == 0) {
        const char *kv[] = {"striping_unit", "512", "striping_factor", "3",
                            "tess_rados_object_size", "1024", NULL};
        tess_file *f;
        CHECK_OK(rt_open(path, TESS_RDWR | TESS_CREATE | TESS_EXCL, &f, kv));
        CHECK_OK(tess_file_close(f));
    }
    MPI_Barrier(MPI_COMM_WORLD);

    tess_type *ft;
    CHECK_OK(tess_type_vector(PIECES / P, 8, 8 * P, TESS_BYTE, &ft));
    static unsigned char buf[PIECES * 8];
    int64_t mine = PIECES / P * 8;
    for (int round = 0; round < ROUNDS; round++) {
        int w = (round * 3 + rank % 2 * 2) % NWAYS; /* the groups differ in most rounds */
        tess_info *info;
        CHECK_OK(tess_info_create(&info));
        CHECK_OK(tess_info_set(info, "tess_rados_conf", rt_conf()));
        CHECK_OK(tess_info_set(info, "tess_method", ways[w].method));
        CHECK_OK(tess_info_set(info, "romio_cb_write", ways[w].cb));
        CHECK_OK(tess_info_set(info, "tess_cb_sieve_threshold", ways[w].threshold));
        CHECK_OK(tess_info_set(info, "cb_buffer_size", "4096"));
        CHECK_OK(tess_info_set(info, "ind_wr_buffer_size", "100"));
        tess_file *f;
        CHECK_OK(tess_file_open_mpi(group, path, TESS_RDWR, info, &f));
        tess_info_free(info);
        CHECK_OK(tess_file_set_view(f, 8 * rank, TESS_BYTE, ft));
        memset(buf, 1 + rank + P * round, (size_t)mine);
        MPI_Barrier(MPI_COMM_WORLD); /* both groups write at once */
        int64_t moved;
        CHECK_OK(tess_file_write_at_all(f, 0, buf, mine, TESS_BYTE, &moved));
        CHECK(moved == mine);
        CHECK_OK(tess_file_close(f));
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0)
            check_round(path, P, round);
    }
    tess_type_free(ft);
    if (rank == 0) {
        CHECK_OK(rt_delete(path));
        printf("test_rados_collective: %d ranks in two groups x %d rounds, no lost update\n", P,
               ROUNDS);
    }
    MPI_Comm_free(&group);
    MPI_Finalize();
    return 0;
}
