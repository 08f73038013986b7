/*
 * test_mpiio_atomic.c - atomic mode (MPI_File_set_atomicity) against concurrent writers and
 * readers.
 *
 * Every rank has the same noncontiguous view (BLOCKS blocks of BLOCK bytes, a gap between
 * them) and the hint tess_method = naive, so one access is BLOCKS separate storage calls and
 * accesses of two ranks interleave unless atomic mode keeps them apart. In rounds:
 *  - all ranks write the same region at once, each with its own byte value: afterwards the
 *    region must hold one writer's bytes only (checked with POSIX reads);
 *  - the same with MPI_File_write_at_all (collective calls in atomic mode);
 *  - rank 0 rewrites the region with alternating values while the others read it: every read
 *    must see one value throughout.
 * The same rounds without atomic mode are then run and their torn results counted and printed,
 * not checked: they show the rounds can tear, so that the atomic checks can fail.
 */
#include "mio_test.h"

#define BLOCKS 128
#define BLOCK 512
#define GAP 512
#define ROUNDS 24

static int rank, size;
static char path[256];

/* 1 if the view's data bytes in the file (read with POSIX) hold one value (*value). */
static int region_whole(unsigned char *value)
{
    int fd = open(path, O_RDONLY);
    unsigned char buf[BLOCK];
    int whole = 1;
    MT_CHECK(fd >= 0);
    for (int b = 0; b < BLOCKS; b++) {
        MT_CHECK(pread(fd, buf, BLOCK, (off_t)b * (BLOCK + GAP)) == BLOCK);
        if (b == 0)
            *value = buf[0];
        for (int i = 0; i < BLOCK; i++)
            whole &= buf[i] == *value;
    }
    close(fd);
    return whole;
}

/* The rounds; returns how many tore (checked to be none in atomic mode). */
static int rounds(MPI_File fh, int atomic)
{
    unsigned char *mem = malloc(BLOCKS * BLOCK), *got = malloc(BLOCKS * BLOCK);
    int torn = 0;
    MT_CHECK(mem && got);
    for (int round = 0; round < 3 * ROUNDS; round++) {
        int kind = round / ROUNDS, me = 1 + (round * size + rank) % 250, tore = 0;
        unsigned char v;
        MPI_Status st;
        memset(mem, me, BLOCKS * BLOCK);
        MPI_Barrier(MPI_COMM_WORLD);
        if (kind == 0) {
            MT_OK(MPI_File_write_at(fh, 0, mem, BLOCKS * BLOCK, MPI_BYTE, &st));
        } else if (kind == 1) {
            MT_OK(MPI_File_write_at_all(fh, 0, mem, BLOCKS * BLOCK, MPI_BYTE, &st));
        } else if (rank == 0) {
            for (int k = 0; k < 8; k++) {
                memset(mem, k % 2 ? 0xAA : 0x55, BLOCKS * BLOCK);
                MT_OK(MPI_File_write_at(fh, 0, mem, BLOCKS * BLOCK, MPI_BYTE, &st));
            }
        } else {
            for (int k = 0; k < 8; k++) {
                MT_OK(MPI_File_read_at(fh, 0, got, BLOCKS * BLOCK, MPI_BYTE, &st));
                MT_CHECK(mt_status_bytes(&st) == BLOCKS * BLOCK);
                int one = 1;
                for (int i = 1; i < BLOCKS * BLOCK; i++)
                    one &= got[i] == got[0];
                tore |= !one;
            }
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (kind < 2 && rank == 0 && !region_whole(&v))
            tore = 1;
        MT_CHECK(!atomic || !tore);
        MPI_Allreduce(MPI_IN_PLACE, &tore, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        torn += tore;
    }
    free(mem);
    free(got);
    return torn;
}

int main(int argc, char **argv)
{
    MPI_File fh;
    MPI_Info info;
    MPI_Datatype block, ft;
    int flag = -1;
    mt_begin(&argc, &argv, &rank, &size, path, sizeof path, "atomic");
    MT_OK(MPI_Info_create(&info));
    MT_OK(MPI_Info_set(info, "tess_method", "naive"));
    MT_OK(MPI_Info_set(info, "romio_cb_write", "disable"));
    MT_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, info, &fh));
    MPI_Info_free(&info);
    MT_OK(MPI_Type_contiguous(BLOCK, MPI_BYTE, &block));
    MT_OK(MPI_Type_create_resized(block, 0, BLOCK + GAP, &ft));
    MT_OK(MPI_Type_commit(&ft));
    MT_OK(MPI_File_set_view(fh, 0, MPI_BYTE, ft, "native", MPI_INFO_NULL));
    MPI_Type_free(&block);
    MPI_Type_free(&ft);

    snprintf(mt_where, sizeof mt_where, "atomic mode");
    MT_OK(MPI_File_get_atomicity(fh, &flag));
    MT_CHECK(flag == 0);
    if (size > 1)
        MT_ERR(MPI_File_set_atomicity(fh, rank == 0), MPI_ERR_NOT_SAME, "different");
    MT_OK(MPI_File_set_atomicity(fh, 1));
    MT_OK(MPI_File_get_atomicity(fh, &flag));
    MT_CHECK(flag == 1);
    rounds(fh, 1);

    snprintf(mt_where, sizeof mt_where, "nonatomic mode");
    MT_OK(MPI_File_set_atomicity(fh, 0));
    MT_OK(MPI_File_get_atomicity(fh, &flag));
    MT_CHECK(flag == 0);
    int torn = rounds(fh, 0);
    MT_OK(MPI_File_close(&fh));
    char what[96];
    snprintf(what, sizeof what, "atomic mode (without it %d of %d rounds tore)", torn,
             3 * ROUNDS);
    return mt_end(path, what);
}
