/*
 * test_file_hints.c - hint sets (tess_info) and the hints tess_file_open understands: valid
 * values are parsed and take effect (seen through the I/O counters, which are counts of calls
 * and bytes, never times); invalid ones are refused at open with TESS_ERR_ARG and a message,
 * without creating the file; unknown keys are ignored.
 */
#include "test_file_common.h"
#include "base/base.h"

static char path[64];

static void info_api(void)
{
    tess_info *i;
    char v[8], longkey[300], longval[1100];
    int found = -1;
    CHECK_ERR(tess_info_create(NULL), TESS_ERR_ARG);
    CHECK_OK(tess_info_create(&i));
    CHECK_OK(tess_info_get(i, "tess_method", v, sizeof v, &found));
    CHECK(found == 0);
    CHECK_OK(tess_info_set(i, "tess_method", "list"));
    CHECK_OK(tess_info_set(i, "tess_method", "sieve")); /* replaces */
    CHECK_OK(tess_info_get(i, "tess_method", v, sizeof v, &found));
    CHECK(found == 1 && strcmp(v, "sieve") == 0);
    CHECK_OK(tess_info_set(i, "x", ""));
    CHECK_OK(tess_info_get(i, "x", v, sizeof v, &found));
    CHECK(found == 1 && v[0] == '\0');
    CHECK_OK(tess_info_set(i, "long", "0123456789"));
    CHECK_ERR(tess_info_get(i, "long", v, sizeof v, &found), TESS_ERR_TRUNCATE);
    CHECK(found == 1 && strcmp(v, "0123456") == 0);
    memset(longkey, 'k', sizeof longkey);
    longkey[256] = '\0';
    memset(longval, 'v', sizeof longval);
    longval[1024] = '\0';
    CHECK_ERR(tess_info_set(NULL, "a", "b"), TESS_ERR_ARG);
    CHECK_ERR(tess_info_set(i, NULL, "b"), TESS_ERR_ARG);
    CHECK_ERR(tess_info_set(i, "a", NULL), TESS_ERR_ARG);
    CHECK_ERR(tess_info_set(i, "", "b"), TESS_ERR_ARG);
    CHECK_ERR(tess_info_set(i, longkey, "b"), TESS_ERR_ARG);
    CHECK_ERR(tess_info_set(i, "a", longval), TESS_ERR_ARG);
    longkey[255] = '\0';
    longval[1023] = '\0';
    CHECK_OK(tess_info_set(i, longkey, longval)); /* exactly at the limits */
    CHECK_ERR(tess_info_get(i, "a", NULL, 4, &found), TESS_ERR_ARG);
    CHECK_ERR(tess_info_get(i, "a", v, sizeof v, NULL), TESS_ERR_ARG);
    CHECK_ERR(tess_info_get(NULL, "a", v, sizeof v, &found), TESS_ERR_ARG);
    CHECK_OK(tess_info_get(i, "a", v, sizeof v, &found)); /* the refused sets left nothing */
    CHECK(found == 0);
    tess_info_free(i);
    tess_info_free(NULL);
}

static void bad_hint(const char *key, const char *value)
{
    tess_file *f = NULL;
    const char *kv[] = {key, value, NULL};
    unlink(path);
    tessi_error(TESS_OK, "%s", "");
    CHECK_ERR(tf_open(path, TESS_RDWR | TESS_CREATE, &f, kv), TESS_ERR_ARG);
    if (!strstr(tess_last_error(), key)) {
        fprintf(stderr, "message for %s=%s does not name the hint: %s\n", key, value,
                tess_last_error());
        exit(1);
    }
    CHECK(f == NULL && access(path, F_OK) != 0);
}

static void invalid_hints(void)
{
    bad_hint("tess_method", "fast");
    bad_hint("tess_method", "");
    bad_hint("romio_ds_read", "yes");
    bad_hint("romio_ds_write", "Enable");
    bad_hint("ind_rd_buffer_size", "0");
    bad_hint("ind_rd_buffer_size", "-4096");
    bad_hint("ind_rd_buffer_size", "4k");
    bad_hint("ind_wr_buffer_size", "");
    bad_hint("ind_wr_buffer_size", " 12");
    bad_hint("ind_wr_buffer_size", "99999999999999999999999");
    bad_hint("ind_rd_buffer_size", "2199023255553"); /* 2^41 + 1 */
    bad_hint("tess_list_max_pairs", "0");
    bad_hint("tess_list_max_pairs", "1025");
    bad_hint("tess_driver", "nfs");
    /* issue 11: collective hints given to an independent open are validated all the same */
    bad_hint("cb_nodes", "0");
    bad_hint("cb_buffer_size", "4294967296");
    bad_hint("tess_realms", "square");
    bad_hint("tess_cb_sieve_threshold", "-3");
    bad_hint("striping_unit", "0");
    bad_hint("romio_cb_write", "sometimes");
    bad_hint("tess_cb_pipeline", "yes");
    bad_hint("tess_realm_size", "-1");
    /* a hint of the posix driver: refused with the driver's table, before the file is created */
    tess_file *f = NULL;
    const char *kv[] = {"tess_posix_uring", "sometimes", NULL};
    CHECK_ERR(tf_open(path, TESS_RDWR | TESS_CREATE, &f, kv), TESS_ERR_ARG);
    CHECK(f == NULL && access(path, F_OK) != 0 && strstr(tess_last_error(), "tess_posix_uring"));
}

/*
 * A read of 100 regions of 10 bytes, 30 bytes apart (file extent 2980 bytes), with the given
 * hints; returns the counters.
 */
static tess_stats strided_read(const char *const *kv)
{
    tess_file *f;
    tess_type *v, *ft;
    tess_stats s;
    unsigned char buf[1000];
    int64_t n;
    CHECK_OK(tf_open(path, TESS_RDWR, &f, kv));
    CHECK_OK(tess_type_vector(1, 10, 10, TESS_BYTE, &v));
    CHECK_OK(tess_type_resized(v, 0, 30, &ft));
    CHECK_OK(tess_file_set_view(f, 0, TESS_BYTE, ft));
    CHECK_OK(tess_file_read_at(f, 0, buf, 1000, TESS_BYTE, &n));
    CHECK(n == 1000);
    for (int j = 0; j < 1000; j++)
        CHECK(buf[j] == (unsigned char)(j / 10 * 30 + j % 10));
    CHECK_OK(tess_file_stats(f, &s));
    CHECK(s.desired_bytes == 1000 && s.regions == 100);
    CHECK_OK(tess_file_close(f));
    tess_type_free(v);
    tess_type_free(ft);
    return s;
}

static void valid_hints(void)
{
    unsigned char data[4000];
    for (int i = 0; i < 4000; i++)
        data[i] = (unsigned char)i;
    tf_put(path, data, sizeof data);
    const char *naive[] = {"tess_method", "naive", "unknown_key", "whatever", NULL};
    tess_stats s = strided_read(naive);
    CHECK(s.io_ops == 100 && s.accessed_bytes == 1000 && s.peak_buffer_bytes == 0);
    CHECK(s.min_access == 10 && s.max_access == 10);

    const char *sieve[] = {"tess_method", "sieve", "ind_rd_buffer_size", "1000", NULL};
    s = strided_read(sieve);
    /* windows start at data: [0, 1000), [1020, 2020), [2040, 2980) */
    CHECK(s.io_ops == 3 && s.peak_buffer_bytes == 1000 && s.accessed_bytes == 2940);
    CHECK(s.max_access == 1000 && s.min_access == 940);

    const char *list[] = {"tess_method", "list", "tess_list_max_pairs", "7", NULL};
    s = strided_read(list);
    CHECK(s.accessed_bytes == 1000 && s.peak_buffer_bytes == 0);
    CHECK(s.io_ops == 15 || s.io_ops == 100); /* batched, or one call per region */
    const char *list1[] = {"tess_method", "list", "tess_posix_uring", "disable", NULL};
    s = strided_read(list1);
    CHECK(s.accessed_bytes == 1000 && s.io_ops == 100); /* no batches: one preadv a region */

    /* auto: the cost model decides (test_pmd_method checks it picks the lowest estimate);
     * romio_ds_read=enable leaves only the sieving methods */
    const char *autom[] = {"tess_driver", "posix", NULL};
    s = strided_read(autom);
    CHECK(s.auto_decisions == 1 && s.last_method != TESS_METHOD_NONE);
    const char *ds_on[] = {"romio_ds_read", "enable", "ind_rd_buffer_size", "4000", NULL};
    s = strided_read(ds_on);
    CHECK(s.io_ops == 1 && s.accessed_bytes == 2980 && s.peak_buffer_bytes == 2980);
    const char *ds_off[] = {"tess_method", "auto", "romio_ds_read", "disable",
                            "romio_ds_write", "automatic", NULL};
    s = strided_read(ds_off);
    CHECK(s.accessed_bytes == 1000);
}

/* Write-side hints: ind_wr_buffer_size bounds sieving writes; romio_ds_write=disable in auto
 * mode means no sieving and no locks. */
static void write_hints(void)
{
    tess_file *f;
    tess_type *v, *ft;
    tess_stats s;
    unsigned char buf[600] = {0};
    int64_t n;
    CHECK_OK(tess_type_vector(1, 2, 2, TESS_BYTE, &v));
    CHECK_OK(tess_type_resized(v, 0, 3, &ft)); /* 2 of every 3 bytes: dense */
    const char *kv1[] = {"ind_wr_buffer_size", "100", NULL};
    CHECK_OK(tf_open(path, TESS_RDWR, &f, kv1));
    CHECK_OK(tess_file_set_view(f, 0, TESS_BYTE, ft));
    CHECK_OK(tess_file_write_at(f, 0, buf, 600, TESS_BYTE, &n));
    CHECK_OK(tess_file_stats(f, &s));
    CHECK(s.peak_buffer_bytes == 100 && s.lock_ops == 2 * 9 && s.max_access == 100);
    CHECK_OK(tess_file_close(f));
    const char *kv2[] = {"romio_ds_write", "disable", NULL};
    CHECK_OK(tf_open(path, TESS_RDWR, &f, kv2));
    CHECK_OK(tess_file_set_view(f, 0, TESS_BYTE, ft));
    CHECK_OK(tess_file_write_at(f, 0, buf, 600, TESS_BYTE, &n));
    CHECK_OK(tess_file_stats(f, &s));
    CHECK(s.lock_ops == 0 && s.accessed_bytes == 600 && s.peak_buffer_bytes == 0);
    CHECK_OK(tess_file_close(f));
    tess_type_free(v);
    tess_type_free(ft);
}

int main(void)
{
    tf_path(path, sizeof path, "hints");
    info_api();
    invalid_hints();
    valid_hints();
    write_hints();
    unlink(path);
    return 0;
}
