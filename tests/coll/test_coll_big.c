/*
 * test_coll_big.c - 64-bit sizes in collective I/O without allocating gigabytes: a sparse file
 * and a memory area reserved with mmap(MAP_NORESERVE), of which only the touched pages exist.
 *
 *  - rank 0's access spans 2.2 GiB of file (a filetype of two 16-byte blocks 2.2 GiB apart) and
 *    2.5 GiB of memory (a memory type of two 16-byte blocks 2.5 GiB apart): one process's access
 *    region above 2 GiB, exchanged through MPI with displacements above 2^31;
 *  - rank 1 writes 16 bytes at offset 3 GiB (an offset above 2^31 etypes);
 *  - then a view whose filetype's extent is 2.1 GiB: three tiles reach past 4 GiB;
 *  - everything is read back collectively and compared, the file checked with pread, and the
 *    aggregators' storage calls counted: windows start where data is, so the holes of gigabytes
 *    cost no rounds.
 *
 * usage: mpiexec -n 2 test_coll_big
 */
#include "coll_test.h"

#include <sys/mman.h>

#define GiB (INT64_C(1) << 30)

static unsigned char val(int64_t x) { return (unsigned char)(x % 251 + 1); }

/* The 16 bytes the file should hold at x. */
static void check_file(const char *path, int64_t x)
{
    unsigned char b[16];
    int fd = open(path, O_RDONLY);
    CT_CHECK(fd >= 0);
    CT_CHECK(pread(fd, b, 16, x) == 16);
    for (int i = 0; i < 16; i++)
        CT_EQ(b[i], val(x + i));
    CT_CHECK(close(fd) == 0);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me = ct_rank(), P = ct_size();
    char path[256];
    const char *kv[] = {"romio_cb_write", "enable", "romio_cb_read", "enable", "cb_nodes", "2",
                        "cb_buffer_size", "1048576", NULL};
    const int64_t far = 2 * GiB + 200000005, memfar = 5 * GiB / 2, at3 = 3 * GiB;
    ct_path(path, sizeof path, "big");
    unlink(path);
    MPI_Barrier(MPI_COMM_WORLD);
    size_t area = (size_t)(3 * GiB);
    unsigned char *mem = mmap(NULL, area, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    CT_CHECK(mem != MAP_FAILED);
    tess_file *f;
    tess_type *ft, *mt;
    tess_stats s;
    int64_t got;
    CT_OK(ct_open(MPI_COMM_WORLD, path, TESS_RDWR | TESS_CREATE, kv, &f));

    snprintf(ct_where, sizeof ct_where, "an access region of 2.2 GiB, memory of 2.5 GiB");
    int64_t fdis[2] = {0, far}, mdis[2] = {0, memfar}, lens[2] = {16, 16};
    CT_OK(tess_type_hindexed(2, lens, fdis, TESS_BYTE, &ft));
    CT_OK(tess_type_hindexed(2, lens, mdis, TESS_BYTE, &mt));
    for (int i = 0; i < 16; i++) { /* what rank 0 writes at file bytes 0.. and far.. */
        mem[i] = val(i);
        mem[memfar + i] = val(far + i);
    }
    if (me == 0)
        CT_OK(tess_file_set_view(f, 0, TESS_BYTE, ft));
    else
        CT_OK(tess_file_set_view(f, 0, TESS_BYTE, TESS_BYTE));
    if (me == 1)
        for (int i = 0; i < 16; i++)
            mem[i] = val(at3 + i);
    tess_file_reset_stats(f);
    CT_OK(tess_file_write_at_all(f, me == 0 ? 0 : at3, mem, me == 0 ? 1 : (me == 1 ? 16 : 0),
                                 me == 0 ? mt : TESS_BYTE, &got));
    CT_EQ(got, me == 0 ? 32 : me == 1 ? 16 : 0);
    CT_OK(tess_file_stats(f, &s));
    CT_CHECK(s.io_ops <= 4); /* no window is spent on the holes */
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) {
        CT_EQ(ct_get(path, NULL), at3 + 16);
        check_file(path, 0);
        check_file(path, far);
        check_file(path, at3);
    }
    memset(mem, 0, 16);
    memset(mem + memfar, 0, 16);
    CT_OK(tess_file_read_at_all(f, me == 0 ? 0 : at3, mem, me == 0 ? 1 : (me == 1 ? 16 : 0),
                                me == 0 ? mt : TESS_BYTE, &got));
    CT_EQ(got, me == 0 ? 32 : me == 1 ? 16 : 0);
    for (int i = 0; i < 16 && me <= 1; i++) {
        CT_EQ(mem[i], val((me == 0 ? 0 : at3) + i));
        if (me == 0)
            CT_EQ(mem[memfar + i], val(far + i));
    }
    tess_type_free(ft);
    tess_type_free(mt);

    snprintf(ct_where, sizeof ct_where, "a filetype of extent 2.1 GiB, tiles past 4 GiB");
    tess_type *blk;
    int64_t ext = 2 * GiB + 100 * 1000 * 1000;
    CT_OK(tess_type_contiguous(16, TESS_BYTE, &blk));
    CT_OK(tess_type_resized(blk, 0, ext, &ft));
    /* rank r's tiles start at byte 1000 + 16 r; each rank writes 3 tiles */
    CT_OK(tess_file_set_view(f, 1000 + 16 * me, TESS_BYTE, ft));
    for (int64_t k = 0; k < 3; k++)
        for (int i = 0; i < 16; i++)
            mem[16 * k + i] = val(1000 + 16 * me + k * ext + i);
    CT_OK(tess_file_write_at_all(f, 0, mem, 48, TESS_BYTE, &got));
    CT_EQ(got, 48);
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) {
        CT_EQ(ct_get(path, NULL), 1000 + 16 * P + 2 * ext);
        for (int r = 0; r < P; r++)
            for (int64_t k = 0; k < 3; k++)
                check_file(path, 1000 + 16 * r + k * ext);
    }
    memset(mem, 0, 48);
    CT_OK(tess_file_read_at_all(f, 0, mem, 48, TESS_BYTE, &got));
    CT_EQ(got, 48);
    for (int64_t k = 0; k < 3; k++)
        for (int i = 0; i < 16; i++)
            CT_EQ(mem[16 * k + i], val(1000 + 16 * me + k * ext + i));
    tess_type_free(blk);
    tess_type_free(ft);
    CT_OK(tess_file_close(f));
    munmap(mem, area);
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) {
        unlink(path);
        printf("test_coll_big: passed on %d ranks\n", P);
    }
    MPI_Finalize();
    return 0;
}
