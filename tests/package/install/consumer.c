/*
 * consumer.c - a small program built against an installed Tessera (tests/package/install/run.sh): a file
 * view of every other int32, written and read back through it, checked against the expected
 * file bytes computed here. Exit 0 on success.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <tessera.h>

enum { N = 64 };

int main(int argc, char **argv)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/consumer-%ld.dat", argc > 1 ? argv[1] : ".", (long)getpid());
    int32_t out[N], in[N], file[2 * N];
    for (int i = 0; i < N; i++)
        out[i] = 1000 + i;
    tess_type *every_other = NULL;
    tess_file *f = NULL;
    int64_t bytes = 0;
    int rc = tess_type_vector(N, 1, 2, TESS_INT32, &every_other);
    if (!rc)
        rc = tess_file_open(path, TESS_RDWR | TESS_CREATE, NULL, &f);
    if (!rc)
        rc = tess_file_set_view(f, 0, TESS_INT32, every_other);
    if (!rc)
        rc = tess_file_write_at(f, 0, out, N, TESS_INT32, &bytes);
    if (!rc)
        rc = tess_file_read_at(f, 0, in, N, TESS_INT32, &bytes);
    int crc = f ? tess_file_close(f) : 0;
    tess_type_free(every_other);
    if (rc || crc) {
        fprintf(stderr, "consumer: %s (%s)\n", tess_strerror(rc ? rc : crc), tess_last_error());
        return 1;
    }
    /* the file holds the data in every other int32 (the last hole is past the end) */
    FILE *fp = fopen(path, "rb");
    size_t got = fp ? fread(file, 1, sizeof file, fp) : 0;
    if (fp)
        fclose(fp);
    unlink(path);
    int ok = got == (2 * N - 1) * sizeof(int32_t) && memcmp(in, out, sizeof out) == 0;
    for (int i = 0; ok && i < N; i++)
        ok = file[2 * i] == out[i];
    printf("consumer: tessera %d.%d %s\n", TESSERA_VERSION_MAJOR, TESSERA_VERSION_MINOR,
           ok ? "ok" : "WRONG BYTES");
    return ok ? 0 : 1;
}
