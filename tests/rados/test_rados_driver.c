/*
 * test_rados_driver.c - the RADOS driver's contract, checked through the public API and the
 * oracle's own reading of the objects: naming and opening (missing file, exclusive create, bad
 * hints, a missing pool), contiguous and vectored transfers across stripe units, objects and
 * object sets, reads past the end of file, get_size / set_size (shrink and grow) / sync /
 * delete, the file size agreed by two handles extending the file, the layout kept by the head
 * object (a later open with other striping hints uses the stored one), and the stats
 * (server_requests; auth_insecure is 0 on this cephx cluster).
 */
#include "rados/rados_common.h"

static void fill(char *p, int64_t n, int seed)
{
    for (int64_t i = 0; i < n; i++)
        p[i] = (char)(i * 131 + seed * 17 + 1);
}

static void test_open_errors(void)
{
    char path[256];
    tess_file *f;
    rt_name(path, sizeof path, "missing");
    CHECK_ERR(rt_open(path, TESS_RDWR, &f, NULL), TESS_ERR_NOENT);
    CHECK_ERR(rt_open("rados:no_such_pool/x", TESS_RDWR | TESS_CREATE, &f, NULL), TESS_ERR_NOENT);
    CHECK_ERR(rt_open("rados:tessera", TESS_RDWR | TESS_CREATE, &f, NULL), TESS_ERR_ARG);
    const char *bad[] = {"striping_unit", "x12", NULL};
    rt_name(path, sizeof path, "badhint");
    CHECK_ERR(rt_open(path, TESS_RDWR | TESS_CREATE, &f, bad), TESS_ERR_ARG);
    const char *badobj[] = {"striping_unit", "4096", "tess_rados_object_size", "5000", NULL};
    CHECK_ERR(rt_open(path, TESS_RDWR | TESS_CREATE, &f, badobj), TESS_ERR_ARG);
    CHECK_ERR(rt_open(path, TESS_RDWR, &f, NULL), TESS_ERR_NOENT); /* nothing was created */
    rt_name(path, sizeof path, "excl");
    CHECK_OK(rt_open(path, TESS_RDWR | TESS_CREATE | TESS_EXCL, &f, NULL));
    CHECK_OK(tess_file_close(f));
    CHECK_ERR(rt_open(path, TESS_RDWR | TESS_CREATE | TESS_EXCL, &f, NULL), TESS_ERR_EXIST);
    /* reopening an existing file with TESS_CREATE (other layout hints too) keeps its layout,
     * size and bytes */
    char a[5000], b[5000];
    int64_t moved, size;
    fill(a, 5000, 3);
    CHECK_OK(rt_open(path, TESS_RDWR, &f, NULL));
    CHECK_OK(tess_file_write_at(f, 0, a, 5000, TESS_BYTE, &moved));
    CHECK_OK(tess_file_close(f));
    const char *other[] = {"striping_unit", "1024", "striping_factor", "2", NULL};
    CHECK_OK(rt_open(path, TESS_RDWR | TESS_CREATE, &f, other));
    CHECK_OK(tess_file_get_size(f, &size));
    CHECK(size == 5000);
    CHECK_OK(tess_file_read_at(f, 0, b, 5000, TESS_BYTE, &moved));
    CHECK(moved == 5000 && memcmp(a, b, 5000) == 0);
    CHECK_OK(tess_file_close(f));
    CHECK_OK(rt_delete(path));
    CHECK_ERR(rt_delete(path), TESS_ERR_NOENT);
}

static void test_transfers(void)
{
    char path[256];
    rt_name(path, sizeof path, "xfer");
    /* 1000-byte units, 3 per row, 2 units per object: an object set is 6000 bytes */
    const char *kv[] = {"striping_unit", "1000", "striping_factor", "3",
                        "tess_rados_object_size", "2000", "tess_list_max_pairs", "3",
                        "tess_method", "list", NULL};
    tess_file *f;
    CHECK_OK(rt_open(path, TESS_RDWR | TESS_CREATE, &f, kv));
    int64_t n = 20000, moved, size;
    char *a = malloc((size_t)n), *b = malloc((size_t)n);
    unsigned char *img = malloc((size_t)n);
    CHECK(a && b && img);
    fill(a, n, 1);
    CHECK_OK(tess_file_write_at(f, 123, a, n - 123, TESS_BYTE, &moved));
    CHECK(moved == n - 123);
    CHECK_OK(tess_file_sync(f));
    rt_image(path, img, n);
    CHECK(memcmp(img + 123, a, (size_t)(n - 123)) == 0);
    for (int i = 0; i < 123; i++)
        CHECK(img[i] == 0);
    /* read across every boundary, and past the end of file */
    memset(b, 0x55, (size_t)n);
    CHECK_OK(tess_file_read_at(f, 5000, b, n, TESS_BYTE, &moved));
    CHECK(moved == n - 5000);
    CHECK(memcmp(b, a + 5000 - 123, (size_t)(n - 5000)) == 0);
    for (int64_t i = n - 5000; i < n; i++)
        CHECK(b[i] == 0); /* the library zeroes what lies past the end of file */
    CHECK_OK(tess_file_get_size(f, &size));
    CHECK(size == n);
    /* a vectored write: memory noncontiguous (every other 10 bytes) */
    tess_type *mt;
    CHECK_OK(tess_type_vector(500, 10, 20, TESS_BYTE, &mt));
    fill(a, n, 2);
    CHECK_OK(tess_file_write_at(f, 2500, a, 1, mt, &moved));
    CHECK(moved == 5000);
    CHECK_OK(tess_file_sync(f));
    rt_image(path, img, n);
    for (int64_t i = 0; i < 5000; i++)
        CHECK(img[2500 + i] == (unsigned char)a[(i / 10) * 20 + i % 10]);
    tess_type_free(mt);
    /* shrink: the objects past the end go, the size is exact; grow: zeros */
    CHECK_OK(tess_file_set_size(f, 7777));
    CHECK_OK(tess_file_get_size(f, &size));
    CHECK(size == 7777);
    rt_image(path, img, n);
    for (int64_t i = 7777; i < n; i++)
        CHECK(img[i] == 0);
    CHECK_OK(tess_file_set_size(f, 15000));
    memset(b, 1, (size_t)n);
    CHECK_OK(tess_file_read_at(f, 7000, b, 8000, TESS_BYTE, &moved));
    CHECK(moved == 8000);
    CHECK(memcmp(b, img + 7000, 777) == 0);
    for (int64_t i = 777; i < 8000; i++)
        CHECK(b[i] == 0);
    tess_stats st;
    CHECK_OK(tess_file_stats(f, &st));
    CHECK(st.server_requests > 0 && st.auth_insecure == 0);
    CHECK_OK(tess_file_close(f));
    /* the layout comes from the head object, not from the hints of a later open */
    const char *other[] = {"striping_unit", "64", "striping_factor", "1", NULL};
    CHECK_OK(rt_open(path, TESS_RDONLY, &f, other));
    memset(b, 0, (size_t)n);
    CHECK_OK(tess_file_read_at(f, 0, b, 7777, TESS_BYTE, &moved));
    CHECK(moved == 7777 && memcmp(b, img, 7777) == 0);
    CHECK_OK(tess_file_close(f));
    CHECK_OK(rt_delete(path));
    free(a);
    free(b);
    free(img);
}

/* Two handles extend the file; after both sync, both see the larger end (a server-side max). */
static void test_size_agreement(void)
{
    char path[256];
    rt_name(path, sizeof path, "size");
    tess_file *f, *g;
    char buf[100] = {1};
    int64_t moved, sf, sg;
    CHECK_OK(rt_open(path, TESS_RDWR | TESS_CREATE, &f, NULL));
    CHECK_OK(rt_open(path, TESS_RDWR, &g, NULL));
    CHECK_OK(tess_file_write_at(g, 900000, buf, 100, TESS_BYTE, &moved));
    CHECK_OK(tess_file_write_at(f, 5000, buf, 100, TESS_BYTE, &moved));
    CHECK_OK(tess_file_sync(g));
    CHECK_OK(tess_file_sync(f)); /* publishing the smaller end must not lower the size */
    CHECK_OK(tess_file_get_size(f, &sf));
    CHECK_OK(tess_file_get_size(g, &sg));
    CHECK(sf == 900100 && sg == 900100);
    CHECK_OK(tess_file_close(f));
    CHECK_OK(tess_file_close(g));
    CHECK_OK(rt_delete(path));
}

int main(void)
{
    rt_conf();
    test_open_errors();
    test_transfers();
    test_size_agreement();
    printf("test_rados_driver: passed\n");
    return 0;
}
