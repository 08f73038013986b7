/*
 * test_file_badinput.c - bad input to files and views: every call returns the documented error
 * with a message, and changes nothing (the file's bytes, its size, the view and the counters
 * stay as they were).
 */
#include "test_file_common.h"

#define SIZE 4096

static char path[64];
static unsigned char ref[SIZE];

/* The file still holds exactly ref. */
static void check_unchanged(void)
{
    unsigned char *now;
    CHECK(tf_get(path, &now) == SIZE);
    CHECK(memcmp(now, ref, SIZE) == 0);
    free(now);
}

/* No counter moved since the last reset. */
static void check_no_io(tess_file *f)
{
    tess_stats s;
    CHECK_OK(tess_file_stats(f, &s));
    CHECK(s.desired_bytes == 0 && s.io_ops == 0 && s.accessed_bytes == 0 && s.lock_ops == 0);
}

static void bad_open(void)
{
    tess_file *f = NULL;
    char missing[80];
    snprintf(missing, sizeof missing, "%s.missing", path);
    CHECK_ERR(tess_file_open(NULL, TESS_RDONLY, NULL, &f), TESS_ERR_ARG);
    CHECK_ERR(tess_file_open(path, TESS_RDONLY, NULL, NULL), TESS_ERR_ARG);
    CHECK_ERR(tess_file_open(path, 0, NULL, &f), TESS_ERR_ARG);
    CHECK_ERR(tess_file_open(path, TESS_RDONLY | TESS_RDWR, NULL, &f), TESS_ERR_ARG);
    CHECK_ERR(tess_file_open(path, TESS_RDWR | 0x400, NULL, &f), TESS_ERR_ARG);
    CHECK_ERR(tess_file_open(path, TESS_RDONLY | TESS_CREATE, NULL, &f), TESS_ERR_ARG);
    CHECK_ERR(tess_file_open(missing, TESS_RDONLY, NULL, &f), TESS_ERR_NOENT);
    CHECK_ERR(tess_file_open(path, TESS_RDWR | TESS_CREATE | TESS_EXCL, NULL, &f),
              TESS_ERR_EXIST);
    CHECK(f == NULL);
    CHECK(access(missing, F_OK) != 0);
    CHECK_ERR(tess_file_close(NULL), TESS_ERR_ARG);
    check_unchanged();
}

/* The view in force puts stream byte k at file byte 100 + 2 k (checked by a write). */
static void check_view_kept(tess_file *f)
{
    unsigned char b[2] = {0xA1, 0xB2};
    int64_t n;
    CHECK_OK(tess_file_write_at(f, 3, b, 2, TESS_BYTE, &n));
    CHECK(n == 2);
    ref[100 + 2 * 3] = 0xA1;
    ref[100 + 2 * 4] = 0xB2;
    check_unchanged();
}

static void bad_views(tess_file *f)
{
    tess_type *every2, *dec, *ovl, *tiles, *six, *empty, *neg, *big;
    CHECK_OK(tess_type_vector(1, 1, 1, TESS_BYTE, &every2));
    tess_type *t;
    CHECK_OK(tess_type_resized(every2, 0, 2, &t));
    tess_type_free(every2);
    every2 = t;
    CHECK_OK(tess_file_set_view(f, 100, TESS_BYTE, every2));
    const int64_t bl2[] = {4, 4}, d_dec[] = {4, 0}, d_ovl[] = {0, 2}, d_neg[] = {-8};
    CHECK_OK(tess_type_indexed(2, bl2, d_dec, TESS_BYTE, &dec));
    CHECK_OK(tess_type_indexed(2, bl2, d_ovl, TESS_BYTE, &ovl));
    CHECK_OK(tess_type_contiguous(8, TESS_BYTE, &t));
    CHECK_OK(tess_type_resized(t, 0, 4, &tiles)); /* tiles every 4 bytes overlap */
    tess_type_free(t);
    CHECK_OK(tess_type_contiguous(6, TESS_BYTE, &six));
    CHECK_OK(tess_type_contiguous(0, TESS_BYTE, &empty));
    CHECK_OK(tess_type_hindexed(1, bl2, d_neg, TESS_BYTE, &neg));
    CHECK_OK(tess_type_contiguous(INT64_C(1) << 61, TESS_BYTE, &big));

    tess_file_reset_stats(f);
    CHECK_ERR(tess_file_set_view(NULL, 0, TESS_BYTE, TESS_BYTE), TESS_ERR_ARG);
    CHECK_ERR(tess_file_set_view(f, 0, NULL, TESS_BYTE), TESS_ERR_ARG);
    CHECK_ERR(tess_file_set_view(f, 0, TESS_BYTE, NULL), TESS_ERR_ARG);
    CHECK_ERR(tess_file_set_view(f, -1, TESS_BYTE, TESS_BYTE), TESS_ERR_ARG);
    CHECK_ERR(tess_file_set_view(f, 0, TESS_BYTE, dec), TESS_ERR_VIEW);
    CHECK_ERR(tess_file_set_view(f, 0, TESS_BYTE, ovl), TESS_ERR_VIEW);
    CHECK_ERR(tess_file_set_view(f, 0, TESS_BYTE, tiles), TESS_ERR_VIEW);
    CHECK_ERR(tess_file_set_view(f, 0, TESS_INT32, six), TESS_ERR_VIEW);
    CHECK_ERR(tess_file_set_view(f, 0, TESS_BYTE, empty), TESS_ERR_VIEW);
    CHECK_ERR(tess_file_set_view(f, 0, empty, TESS_BYTE), TESS_ERR_VIEW);
    CHECK_ERR(tess_file_set_view(f, 4, TESS_BYTE, neg), TESS_ERR_VIEW);
    CHECK_ERR(tess_file_set_view(f, INT64_MAX - 3, TESS_BYTE, six), TESS_ERR_OVERFLOW);
    CHECK_OK(tess_file_set_view(f, INT64_MAX - (INT64_C(1) << 61), TESS_BYTE, big));
    CHECK_OK(tess_file_set_view(f, 100, TESS_BYTE, every2));
    check_no_io(f);
    check_unchanged();
    check_view_kept(f);
    tess_type_free(dec);
    tess_type_free(ovl);
    tess_type_free(tiles);
    tess_type_free(six);
    tess_type_free(empty);
    tess_type_free(neg);
    tess_type_free(big);
    tess_type_free(every2);
}

/* Reads and writes with bad arguments, all on the RDWR handle f. */
static void bad_access(tess_file *f)
{
    unsigned char buf[64] = {0};
    int64_t n = -7;
    tess_type *huge, *far;
    CHECK_OK(tess_type_contiguous(INT64_C(1) << 40, TESS_BYTE, &huge));
    CHECK_OK(tess_type_resized(TESS_BYTE, 0, INT64_C(1) << 40, &far));
    tess_file_reset_stats(f);
    CHECK_ERR(tess_file_write_at(NULL, 0, buf, 1, TESS_BYTE, &n), TESS_ERR_ARG);
    CHECK_ERR(tess_file_read_at(NULL, 0, buf, 1, TESS_BYTE, &n), TESS_ERR_ARG);
    CHECK_ERR(tess_file_write_at(f, 0, buf, 1, NULL, &n), TESS_ERR_ARG);
    CHECK_ERR(tess_file_write_at(f, 0, NULL, 1, TESS_BYTE, &n), TESS_ERR_ARG);
    CHECK_ERR(tess_file_read_at(f, 0, NULL, 1, TESS_BYTE, &n), TESS_ERR_ARG);
    CHECK_ERR(tess_file_write_at(f, 0, buf, -1, TESS_BYTE, &n), TESS_ERR_ARG);
    CHECK_ERR(tess_file_read_at(f, -1, buf, 1, TESS_BYTE, &n), TESS_ERR_ARG);
    CHECK_ERR(tess_file_write_at(f, -5, buf, 1, TESS_BYTE, &n), TESS_ERR_ARG);
    /* count * size beyond int64 */
    CHECK_ERR(tess_file_write_at(f, 0, buf, INT64_C(1) << 30, huge, &n), TESS_ERR_OVERFLOW);
    /* the memory type's instances reach beyond int64 */
    CHECK_ERR(tess_file_write_at(f, 0, buf, INT64_C(1) << 24, far, &n), TESS_ERR_OVERFLOW);
    /* offset in etypes times the etype size beyond int64 */
    CHECK_OK(tess_file_set_view(f, 0, TESS_DOUBLE, TESS_DOUBLE));
    CHECK_ERR(tess_file_write_at(f, INT64_MAX / 4, buf, 8, TESS_BYTE, &n), TESS_ERR_OVERFLOW);
    CHECK_ERR(tess_file_read_at(f, INT64_MAX / 8, buf, 8, TESS_BYTE, &n), TESS_ERR_OVERFLOW);
    /* not a whole number of etypes */
    CHECK_ERR(tess_file_write_at(f, 0, buf, 3, TESS_BYTE, &n), TESS_ERR_ARG);
    /* a view whose tiles lie beyond int64 at this offset */
    CHECK_OK(tess_file_set_view(f, 0, TESS_BYTE, far));
    CHECK_ERR(tess_file_write_at(f, INT64_C(1) << 24, buf, 1, TESS_BYTE, &n), TESS_ERR_OVERFLOW);
    CHECK_ERR(tess_file_read_at(f, INT64_C(1) << 23, buf, 2, TESS_BYTE, &n), TESS_ERR_OVERFLOW);
    CHECK(n == -7);
    check_no_io(f);
    check_unchanged();
    CHECK_ERR(tess_file_set_size(f, -1), TESS_ERR_ARG);
    CHECK_ERR(tess_file_get_size(f, NULL), TESS_ERR_ARG);
    CHECK_ERR(tess_file_get_size(NULL, &n), TESS_ERR_ARG);
    CHECK_ERR(tess_file_sync(NULL), TESS_ERR_ARG);
    CHECK_ERR(tess_file_stats(f, NULL), TESS_ERR_ARG);
    check_unchanged();
    tess_type_free(huge);
    tess_type_free(far);
}

/* The access mode forbids the call. */
static void bad_mode(void)
{
    tess_file *ro, *wo;
    unsigned char buf[16] = {1, 2, 3};
    int64_t n = -7;
    CHECK_OK(tess_file_open(path, TESS_RDONLY, NULL, &ro));
    CHECK_OK(tess_file_open(path, TESS_WRONLY, NULL, &wo));
    CHECK_ERR(tess_file_write_at(ro, 0, buf, 16, TESS_BYTE, &n), TESS_ERR_ACCESS);
    CHECK_ERR(tess_file_set_size(ro, 10), TESS_ERR_ACCESS);
    CHECK_ERR(tess_file_read_at(wo, 0, buf, 16, TESS_BYTE, &n), TESS_ERR_ACCESS);
    CHECK(n == -7);
    check_no_io(ro);
    check_no_io(wo);
    check_unchanged();
    CHECK_OK(tess_file_read_at(ro, 0, buf, 16, TESS_BYTE, &n));
    CHECK(n == 16 && memcmp(buf, ref, 16) == 0);
    CHECK_OK(tess_file_close(ro));
    CHECK_OK(tess_file_close(wo));
}

int main(void)
{
    tess_file *f;
    tf_path(path, sizeof path, "badinput");
    for (int i = 0; i < SIZE; i++)
        ref[i] = (unsigned char)(i * 7 + 3);
    tf_put(path, ref, SIZE);
    bad_open();
    CHECK_OK(tess_file_open(path, TESS_RDWR, NULL, &f));
    bad_views(f);
    bad_access(f);
    CHECK_OK(tess_file_close(f));
    bad_mode();
    unlink(path);
    return 0;
}
