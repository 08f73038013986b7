/*
 * test_mpiio_external32.c - the external32 data representation, byte for byte.
 *
 * For each datatype, data written through an "external32" view must be, in the file, what the
 * MPI library's MPI_Pack_external("external32", ...) makes of it (the oracle: big-endian IEEE
 * and two's complement, MPI 3.1 section 13.5.2), placed where the view says; read back through
 * the same view it must be the original data. Types whose external32 form is not their native
 * one byte-reversed (MPI_LONG is 4 bytes in external32, MPI_LONG_DOUBLE quad precision) and
 * types mixing element sizes get MPI_ERR_CONVERSION.
 */
#include "mio_test.h"

#define N 37

static int rank, size;
static char path[256];

/*
 * The oracle for struct {int; hole; float} resized to 16 bytes, by hand: MPICH 4.0's
 * MPI_Pack_external crashes on structs. Returns the packed size.
 */
static MPI_Aint pack_pair(const unsigned char *data, int count, unsigned char *out)
{
    for (int i = 0; i < count; i++)
        for (int k = 0; k < 4; k++) {
            out[8 * i + k] = data[16 * i + 3 - k];
            out[8 * i + 4 + k] = data[16 * i + 8 + 3 - k];
        }
    return 8 * (MPI_Aint)count;
}

/* Write count items of t through an external32 view (blocks of `block` bytes every `stride`;
   block == stride: contiguous), check the file against MPI_Pack_external (or `by_hand`), read
   it back. */
static void roundtrip(const char *name, MPI_Datatype t, int count, int block, int stride,
                      int collective, MPI_Aint (*by_hand)(const unsigned char *, int,
                                                          unsigned char *))
{
    MPI_File fh;
    MPI_Status st;
    MPI_Aint lb, extent, packed_size, pos = 0;
    MPI_Datatype ft = MPI_BYTE, blk;
    snprintf(mt_where, sizeof mt_where, "external32 %s, blocks %d/%d%s", name, block, stride,
             collective ? ", collective" : "");
    MT_OK(MPI_Type_get_extent(t, &lb, &extent));
    size_t span = (size_t)(extent * count);
    unsigned char *data = malloc(span), *back = malloc(span), *packed;
    MT_CHECK(data && back);
    for (size_t i = 0; i < span; i++)
        data[i] = (unsigned char)(i * 7 + 3 + rank);
    memcpy(back, data, span);
    if (by_hand) {
        packed = malloc(span);
        packed_size = by_hand(data, count, packed);
    } else {
        MT_OK(MPI_Pack_external_size("external32", count, t, &packed_size));
        packed = malloc((size_t)packed_size + 1);
        MT_OK(MPI_Pack_external("external32", data, count, t, packed, packed_size, &pos));
        MT_CHECK(pos == packed_size);
    }
    if (block != stride) {
        MT_OK(MPI_Type_contiguous(block, MPI_BYTE, &blk));
        MT_OK(MPI_Type_create_resized(blk, 0, stride, &ft));
        MT_OK(MPI_Type_commit(&ft));
        MPI_Type_free(&blk);
    }
    /* each rank its own part of the file: rank r from r * disp_step bytes */
    int64_t disp_step = ((packed_size + block - 1) / block) * stride + 64;
    if (rank == 0)
        mt_spit(path, NULL, 0);
    MPI_Barrier(MPI_COMM_WORLD);
    MT_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    MT_OK(MPI_File_set_view(fh, rank * disp_step, MPI_BYTE, ft, "external32", MPI_INFO_NULL));
    char rep[MPI_MAX_DATAREP_STRING];
    MPI_Offset d;
    MPI_Datatype e, f;
    MT_OK(MPI_File_get_view(fh, &d, &e, &f, rep));
    MT_CHECK(strcmp(rep, "external32") == 0 && d == rank * disp_step);
    if (f != MPI_BYTE)
        MPI_Type_free(&f);
    MPI_Aint fext;
    MT_OK(MPI_File_get_type_extent(fh, t, &fext));
    MT_CHECK(fext == extent);
    if (collective)
        MT_OK(MPI_File_write_at_all(fh, 0, data, count, t, &st));
    else
        MT_OK(MPI_File_write_at(fh, 0, data, count, t, &st));
    MT_CHECK(mt_status_bytes(&st) == packed_size);
    MT_OK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    int64_t len;
    unsigned char *file = mt_slurp(path, &len);
    for (MPI_Aint j = 0; j < packed_size; j++) {
        int64_t at = rank * disp_step + (j / block) * stride + j % block;
        MT_CHECK(at < len);
        if (file[at] != packed[j]) {
            snprintf(mt_where + strlen(mt_where), sizeof mt_where - strlen(mt_where),
                     ": packed byte %ld is %d in the file, MPI_Pack_external says %d", (long)j,
                     file[at], packed[j]);
            mt_fail(__FILE__, __LINE__, "external32 bytes differ");
        }
    }
    memset(data, 0xEE, span);
    if (collective)
        MT_OK(MPI_File_read_at_all(fh, 0, data, count, t, &st));
    else
        MT_OK(MPI_File_read_at(fh, 0, data, count, t, &st));
    MT_CHECK(mt_status_bytes(&st) == packed_size);
    /* the data bytes are back; compare through MPI_Pack of both buffers (holes aside) */
    int psize;
    MT_OK(MPI_Pack_size(count, t, MPI_COMM_SELF, &psize));
    unsigned char *p1 = malloc((size_t)psize), *p2 = malloc((size_t)psize);
    int q1 = 0, q2 = 0;
    MT_OK(MPI_Pack(data, count, t, p1, psize, &q1, MPI_COMM_SELF));
    MT_OK(MPI_Pack(back, count, t, p2, psize, &q2, MPI_COMM_SELF));
    MT_CHECK(q1 == q2 && memcmp(p1, p2, (size_t)q1) == 0);
    MT_OK(MPI_File_close(&fh));
    if (ft != MPI_BYTE)
        MPI_Type_free(&ft);
    free(p1);
    free(p2);
    free(file);
    free(packed);
    free(data);
    free(back);
    MPI_Barrier(MPI_COMM_WORLD);
}

static void refused(const char *name, MPI_Datatype t)
{
    MPI_File fh;
    MPI_Status st;
    char buf[256] = {0};
    snprintf(mt_where, sizeof mt_where, "external32 refuses %s", name);
    MT_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    MT_OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "external32", MPI_INFO_NULL));
    MT_ERR(MPI_File_write_at(fh, 0, buf, 2, t, &st), MPI_ERR_CONVERSION, "external32");
    MT_ERR(MPI_File_read_at(fh, 0, buf, 2, t, &st), MPI_ERR_CONVERSION, "external32");
    MT_OK(MPI_File_close(&fh));
}

int main(int argc, char **argv)
{
    mt_begin(&argc, &argv, &rank, &size, path, sizeof path, "external32");

    MPI_Datatype vec, pair, mixed, pair_r;
    MT_OK(MPI_Type_vector(3, 2, 5, MPI_FLOAT, &vec));
    MT_OK(MPI_Type_commit(&vec));
    int bl[2] = {1, 1};
    MPI_Aint dp[2] = {0, 8};
    MPI_Datatype ty[2] = {MPI_INT, MPI_FLOAT}, ty2[2] = {MPI_INT, MPI_DOUBLE};
    MT_OK(MPI_Type_create_struct(2, bl, dp, ty, &pair)); /* int, hole, float */
    MT_OK(MPI_Type_create_resized(pair, 0, 16, &pair_r));
    MT_OK(MPI_Type_commit(&pair_r));
    MT_OK(MPI_Type_create_struct(2, bl, dp, ty2, &mixed));
    MT_OK(MPI_Type_commit(&mixed));

    for (int coll = 0; coll < 2; coll++) {
        roundtrip("MPI_INT", MPI_INT, N, 8, 8, coll, NULL);
        roundtrip("MPI_DOUBLE", MPI_DOUBLE, N, 12, 20, coll, NULL);
        roundtrip("MPI_SHORT", MPI_SHORT, N, 6, 10, coll, NULL);
        roundtrip("MPI_LONG_LONG", MPI_LONG_LONG, N, 8, 8, coll, NULL);
        roundtrip("MPI_CHAR", MPI_CHAR, N, 5, 9, coll, NULL);
        roundtrip("MPI_C_DOUBLE_COMPLEX", MPI_C_DOUBLE_COMPLEX, N, 16, 16, coll, NULL);
        roundtrip("vector of MPI_FLOAT", vec, 5, 12, 16, coll, NULL);
        roundtrip("struct {int; float}", pair_r, N, 4, 12, coll, pack_pair);
    }
    refused("MPI_LONG", MPI_LONG);
    refused("MPI_LONG_DOUBLE", MPI_LONG_DOUBLE);
    refused("struct {int; double}", mixed);
    MPI_Type_free(&vec);
    MPI_Type_free(&pair);
    MPI_Type_free(&pair_r);
    MPI_Type_free(&mixed);
    return mt_end(path, "external32");
}
