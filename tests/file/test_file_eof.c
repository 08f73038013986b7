/*
 * test_file_eof.c - reads past the end of file are short: the byte count says how much of the
 * stream exists in the file, the memory data bytes beyond it are zero-filled, the bytes between
 * memory regions are untouched. Checked for every method, contiguous and noncontiguous views and
 * memory, reads that start before, at and after the end of file.
 */
#include "test_file_common.h"

#define FILE_SIZE 1000
#define SENTINEL 0xEE

static const char *const methods[] = {"naive", "sieve", "list", "auto"};

static void contiguous_reads(const char *path, const char *method)
{
    tess_file *f;
    unsigned char buf[3000];
    int64_t n;
    const char *kv[] = {"tess_method", method, "ind_rd_buffer_size", "300", NULL};
    CHECK_OK(tf_open(path, TESS_RDONLY, &f, kv));
    /* crosses the end: 1000 - 900 = 100 bytes exist */
    memset(buf, SENTINEL, sizeof buf);
    CHECK_OK(tess_file_read_at(f, 900, buf, 250, TESS_BYTE, &n));
    CHECK(n == 100);
    for (int i = 0; i < 250; i++)
        CHECK(buf[i] == (i < 100 ? (unsigned char)(900 + i) : 0));
    CHECK(buf[250] == SENTINEL);
    /* starts at and after the end */
    for (int64_t off = FILE_SIZE; off <= FILE_SIZE + 5000; off += 5000) {
        memset(buf, SENTINEL, sizeof buf);
        CHECK_OK(tess_file_read_at(f, off, buf, 2000, TESS_BYTE, &n));
        CHECK(n == 0);
        for (int i = 0; i < 2000; i++)
            CHECK(buf[i] == 0);
        CHECK(buf[2000] == SENTINEL);
    }
    /* exactly up to the end: not short */
    CHECK_OK(tess_file_read_at(f, 0, buf, FILE_SIZE, TESS_BYTE, &n));
    CHECK(n == FILE_SIZE);
    CHECK_OK(tess_file_close(f));
}

/*
 * View: 4 bytes of every 10 from byte 3 (file bytes 3..6, 13..16, ...). Memory: blocks of 3
 * bytes every 5. A read of 400 stream bytes from stream offset 200 reaches file bytes
 * 503 .. 1496; the file ends at 1000.
 */
static void strided_reads(const char *path, const char *method)
{
    tess_file *f;
    tess_type *ft, *mt, *v;
    unsigned char buf[1000];
    int64_t n;
    const char *kv[] = {"tess_method", method, "ind_rd_buffer_size", "64",
                        "tess_list_max_pairs", "3", NULL};
    CHECK_OK(tess_type_vector(1, 4, 4, TESS_BYTE, &v));
    CHECK_OK(tess_type_resized(v, 0, 10, &ft));
    tess_type_free(v);
    CHECK_OK(tess_type_vector(1, 3, 3, TESS_BYTE, &v));
    CHECK_OK(tess_type_resized(v, 0, 5, &mt));
    tess_type_free(v);
    CHECK_OK(tf_open(path, TESS_RDONLY, &f, kv));
    CHECK_OK(tess_file_set_view(f, 3, TESS_BYTE, ft));
    memset(buf, SENTINEL, sizeof buf);
    CHECK_OK(tess_file_read_at(f, 200, buf, 400 / 3 + 1, mt, &n));
    int64_t total = (400 / 3 + 1) * 3, expect = 0;
    for (int64_t j = 0; j < total; j++) {
        int64_t k = 200 + j, fo = 3 + k / 4 * 10 + k % 4, mo = j / 3 * 5 + j % 3;
        expect += fo < FILE_SIZE;
        CHECK(buf[mo] == (fo < FILE_SIZE ? (unsigned char)fo : 0));
        if (j % 3 == 2)
            CHECK(buf[mo + 1] == SENTINEL && buf[mo + 2] == SENTINEL);
    }
    CHECK(n == expect && n > 0 && n < total);
    /* wholly past the end */
    memset(buf, SENTINEL, sizeof buf);
    CHECK_OK(tess_file_read_at(f, 100000, buf, 10, mt, &n));
    CHECK(n == 0);
    for (int j = 0; j < 30; j++)
        CHECK(buf[j / 3 * 5 + j % 3] == 0 && buf[j / 3 * 5 + 3] == SENTINEL);
    CHECK_OK(tess_file_close(f));
    tess_type_free(ft);
    tess_type_free(mt);
}

int main(void)
{
    char path[64];
    unsigned char data[FILE_SIZE];
    tf_path(path, sizeof path, "eof");
    for (int i = 0; i < FILE_SIZE; i++)
        data[i] = (unsigned char)i;
    tf_put(path, data, FILE_SIZE);
    for (int m = 0; m < 4; m++) {
        contiguous_reads(path, methods[m]);
        strided_reads(path, methods[m]);
    }
    /* the file was only read */
    unsigned char *now;
    CHECK(tf_get(path, &now) == FILE_SIZE && memcmp(now, data, FILE_SIZE) == 0);
    free(now);
    unlink(path);
    return 0;
}
