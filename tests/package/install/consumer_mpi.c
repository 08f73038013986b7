/*
 * consumer_mpi.c - a small MPI program built against an installed Tessera (tests/package/install/run.sh):
 * every rank writes its block of int32 collectively through a view imported from an MPI vector
 * type (tess_type_from_mpi), reads it back, and rank 0 checks the file against the expected
 * bytes computed here. Exit 0 on success on every rank.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <tessera_mpi.h>

enum { N = 32 };

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char path[4096];
    long pid0 = (long)getpid(); /* rank 0's names the file */
    MPI_Bcast(&pid0, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    snprintf(path, sizeof path, "%s/consumer-mpi-%ld.dat", argc > 1 ? argv[1] : ".", pid0);

    /* rank r owns int32 r, r + size, r + 2*size, ... of the file */
    MPI_Datatype strided;
    MPI_Type_vector(N, 1, size, MPI_INT32_T, &strided);
    MPI_Type_commit(&strided);
    int32_t out[N], in[N];
    for (int i = 0; i < N; i++)
        out[i] = rank * 1000 + i;
    tess_type *filetype = NULL;
    tess_file *f = NULL;
    int64_t bytes = 0;
    int rc = tess_type_from_mpi(strided, &filetype);
    if (!rc)
        rc = tess_file_open_mpi(MPI_COMM_WORLD, path, TESS_RDWR | TESS_CREATE, NULL, &f);
    if (!rc)
        rc = tess_file_set_view(f, rank * (int64_t)sizeof(int32_t), TESS_INT32, filetype);
    if (!rc)
        rc = tess_file_write_at_all(f, 0, out, N, TESS_INT32, &bytes);
    if (!rc)
        rc = tess_file_read_at_all(f, 0, in, N, TESS_INT32, &bytes);
    int crc = f ? tess_file_close(f) : 0;
    tess_type_free(filetype);
    MPI_Type_free(&strided);
    int ok = !rc && !crc && memcmp(in, out, sizeof out) == 0;
    if (rc || crc)
        fprintf(stderr, "consumer_mpi: rank %d: %s (%s)\n", rank, tess_strerror(rc ? rc : crc),
                tess_last_error());
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (rank == 0) {
        FILE *fp = fopen(path, "rb");
        for (int i = 0; ok && i < N * size; i++) {
            int32_t v = 0;
            ok = fp && fread(&v, sizeof v, 1, fp) == 1 && v == (i % size) * 1000 + i / size;
        }
        if (fp)
            fclose(fp);
        remove(path);
        printf("consumer_mpi: %d processes %s\n", size, ok ? "ok" : "WRONG BYTES");
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return ok ? 0 : 1;
}
