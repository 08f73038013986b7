/*
 * test_mpiio_big.c - counts, offsets and file pointers beyond 2 GiB.
 *
 *  - a write and read of 2049 MiB in one call (count 2049 of a 1 MiB type: the bytes overflow
 *    an int), with the status telling the truth through MPI_Get_count and MPI_Get_elements_x;
 *    with an MPI 4 library also MPI_File_write_at_c / read_at_c and MPI_Get_count_c;
 *  - explicit offsets, individual and shared file pointers beyond 2^31 (and 2^32) in a sparse
 *    file, checked with POSIX reads.
 * One rank (the data is 2 GiB); the file is sparse and removed at the end.
 */
#include "mio_test.h"

#define MIB (1 << 20)
#define NMIB 2049

static uint64_t word(int64_t i, int salt) { return (uint64_t)i * 0x9E3779B97F4A7C15u + salt; }

/* One word per 4 KiB page (and the last) is marked and checked: a lost or misplaced piece of a
   transfer shows on its pages, and the test stays fast. */
#define STEP 512

static void fill(uint64_t *p, int64_t n, int salt)
{
    for (int64_t i = 0; i < n; i += STEP)
        p[i] = word(i, salt);
    p[n - 1] = word(n - 1, salt);
}

static void verify(const uint64_t *p, int64_t n, int salt)
{
    for (int64_t i = 0; i < n; i = i + STEP < n || i == n - 1 ? i + STEP : n - 1)
        if (p[i] != word(i, salt)) {
            snprintf(mt_where + strlen(mt_where), sizeof mt_where - strlen(mt_where),
                     ": word %lld differs", (long long)i);
            mt_fail(__FILE__, __LINE__, "wrong data");
        }
}

int main(int argc, char **argv)
{
    char path[256];
    MPI_File fh;
    MPI_Status st;
    MPI_Datatype mib;
    MPI_Offset pos;
    int rank, count;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    mt_path(path, sizeof path, "big");
    if (rank != 0) {
        MPI_Finalize();
        return 0;
    }
    MT_OK(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL,
                        &fh));
    mt_require_tessera(fh);
    const int64_t bytes = (int64_t)NMIB * MIB, words = bytes / 8;
    uint64_t *buf = malloc((size_t)bytes);
    MT_CHECK(buf);

    snprintf(mt_where, sizeof mt_where, "2049 MiB in one call");
    MT_OK(MPI_Type_contiguous(MIB, MPI_BYTE, &mib));
    MT_OK(MPI_Type_commit(&mib));
    fill(buf, words, 1);
    MT_OK(MPI_File_write_at(fh, 0, buf, NMIB, mib, &st));
    MT_OK(MPI_Get_count(&st, mib, &count));
    MT_CHECK(count == NMIB && mt_status_bytes(&st) == bytes);
    fill(buf, words, 9);
    MT_OK(MPI_File_read_at(fh, 0, buf, NMIB, mib, &st));
    MT_CHECK(mt_status_bytes(&st) == bytes);
    verify(buf, words, 1);
#if MPI_VERSION >= 4
    /* the large-count entry points (the same path below them: a count above INT_MAX would
       add another 2 GiB transfer for nothing) */
    snprintf(mt_where, sizeof mt_where, "large-count calls");
    MPI_Count c;
    fill(buf, 1024, 2);
    MT_OK(MPI_File_write_at_c(fh, 8, buf, (MPI_Count)1024, MPI_UINT64_T, &st));
    MT_OK(MPI_Get_count_c(&st, MPI_UINT64_T, &c));
    MT_CHECK(c == 1024);
    fill(buf, 1024, 9);
    MT_OK(MPI_File_read_at_c(fh, 8, buf, (MPI_Count)1024, MPI_UINT64_T, &st));
    MT_CHECK(mt_status_bytes(&st) == 8192);
    verify(buf, 1024, 2);
#endif
    MT_OK(MPI_File_set_size(fh, 0));
    free(buf);

    snprintf(mt_where, sizeof mt_where, "offsets beyond 2 GiB");
    const int64_t far = (INT64_C(5) << 30) + 3;
    uint64_t v[4], r[4];
    fill(v, 4, 3);
    MT_OK(MPI_File_write_at(fh, far, v, 4, MPI_UINT64_T, &st));
    MT_OK(MPI_File_get_size(fh, &pos));
    MT_CHECK(pos == far + 32);
    int fd = open(path, O_RDONLY);
    MT_CHECK(fd >= 0 && pread(fd, r, sizeof r, far) == sizeof r && memcmp(r, v, sizeof v) == 0);
    /* pointers: the view counts 8-byte etypes, so 2^31 etypes lie at 16 GiB */
    MT_OK(MPI_File_set_view(fh, 0, MPI_UINT64_T, MPI_UINT64_T, "native", MPI_INFO_NULL));
    const int64_t at = (INT64_C(1) << 31) + 7;
    MT_OK(MPI_File_seek(fh, at, MPI_SEEK_SET));
    MT_OK(MPI_File_write(fh, v, 2, MPI_UINT64_T, &st));
    MT_OK(MPI_File_get_position(fh, &pos));
    MT_CHECK(pos == at + 2);
    MT_CHECK(pread(fd, r, 16, at * 8) == 16 && memcmp(r, v, 16) == 0);
    MT_OK(MPI_File_seek_shared(fh, at + 10, MPI_SEEK_SET));
    MT_OK(MPI_File_write_shared(fh, v, 3, MPI_UINT64_T, &st));
    MT_OK(MPI_File_get_position_shared(fh, &pos));
    MT_CHECK(pos == at + 13);
    MT_CHECK(pread(fd, r, 24, (at + 10) * 8) == 24 && memcmp(r, v, 24) == 0);
    MT_OK(MPI_File_seek(fh, 0, MPI_SEEK_END));
    MT_OK(MPI_File_get_position(fh, &pos));
    MT_CHECK(pos == at + 13);
    close(fd);
    MPI_Type_free(&mib);
    MT_OK(MPI_File_close(&fh));
    unlink(path);
    printf("beyond 2 GiB: ok\n");
    MPI_Finalize();
    return 0;
}
