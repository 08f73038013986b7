/*
 * test_drivers.c - the driver conformance test: every registered driver (driver/registry.c)
 * runs the same cases, through the driver wrappers and through tess_file_* with hint
 * tess_driver, each checked against a byte map of what the file must hold:
 *  - create, EXCL on an existing file, a missing file;
 *  - random writes and reads, plain and vectored, sparse (holes read as zeros), and short reads
 *    at the end of file;
 *  - set_size (truncate, extend), preallocate (grows, never shrinks, keeps the bytes);
 *  - locks or their absence, as the capabilities say: with locks, shared and exclusive locks
 *    and atomic mode; without, atomic mode refused and sieving writes going naive (counted);
 *  - injected faults (EIO on reads, ENOSPC on writes) reported, and the handle usable after;
 *  - delete: the file is gone.
 */
#include "core/file.h"
#include "test_file_common.h"

enum { SIZE = 1 << 16 };

static unsigned char map[SIZE];    /* what the file must hold */
static int64_t map_size;          /* its size */
static unsigned seed = 12345;

static unsigned next_rand(void)
{
    seed = seed * 1103515245u + 12345u;
    return (seed >> 8) & 0xffffff;
}

/* The file (through the driver) equals the byte map. */
static void check_map(tessi_storage *s)
{
    static unsigned char back[SIZE + 100];
    int64_t size = -1;
    CHECK(tessi_drv_get_size(s, &size) == 0 && size == map_size);
    memset(back, 0xEE, sizeof back);
    int64_t got = tessi_drv_pread(s, back, map_size + 100, 0);
    CHECK(got == map_size); /* short at the end of file */
    CHECK(memcmp(back, map, (size_t)map_size) == 0);
}

static void random_io(tessi_storage *s)
{
    static unsigned char buf[4096];
    for (int i = 0; i < 300; i++) {
        int64_t off = next_rand() % (SIZE - 4096), len = 1 + next_rand() % 4095;
        if (next_rand() % 2) { /* write: plain or as three iovecs */
            for (int64_t k = 0; k < len; k++)
                buf[k] = (unsigned char)next_rand();
            int64_t put;
            if (next_rand() % 2) {
                put = tessi_drv_pwrite(s, buf, len, off);
            } else {
                int64_t a = len / 3, b = len / 3;
                struct iovec v[3] = {{buf, (size_t)a}, {buf + a, (size_t)b},
                                     {buf + a + b, (size_t)(len - a - b)}};
                put = tessi_drv_pwritev(s, v, 3, off);
            }
            CHECK(put == len);
            memcpy(map + off, buf, (size_t)len);
            if (off + len > map_size) {
                map_size = off + len;
            }
        } else { /* read: vectored, possibly beyond the end of file */
            struct iovec v[2] = {{buf, (size_t)(len / 2)},
                                 {buf + len / 2, (size_t)(len - len / 2)}};
            int64_t got = tessi_drv_preadv(s, v, 2, off);
            int64_t want = off >= map_size ? 0 : off + len > map_size ? map_size - off : len;
            CHECK(got == want);
            CHECK(memcmp(buf, map + off, (size_t)want) == 0);
        }
    }
    check_map(s);
}

/* The raw driver cases on one handle of driver drv. */
static void raw_cases(const struct tess_driver *drv, const char *path)
{
    tessi_storage s, t;
    memset(map, 0, sizeof map);
    map_size = 0;
    CHECK(tessi_drv_open(&s, drv, path, TESS_RDWR, NULL) == -ENOENT);
    CHECK(tessi_drv_open(&s, drv, path, TESS_RDWR | TESS_CREATE | TESS_EXCL, NULL) == 0);
    CHECK(tessi_drv_open(&t, drv, path, TESS_RDWR | TESS_CREATE | TESS_EXCL, NULL) == -EEXIST);
    check_map(&s);

    /* sparse: a write far from the start leaves a hole of zeros */
    unsigned char x[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    CHECK(tessi_drv_pwrite(&s, x, 10, 5000) == 10);
    memcpy(map + 5000, x, 10);
    map_size = 5010;
    check_map(&s);
    random_io(&s);

    /* a second handle sees the same bytes */
    CHECK(tessi_drv_open(&t, drv, path, TESS_RDONLY, NULL) == 0);
    check_map(&t);
    CHECK(tessi_drv_close(&t) == 0);

    /* set_size and preallocate */
    CHECK(tessi_drv_set_size(&s, 3000) == 0);
    map_size = 3000;
    check_map(&s);
    CHECK(tessi_drv_set_size(&s, 4000) == 0);
    memset(map + 3000, 0, 1000);
    map_size = 4000;
    check_map(&s);
    CHECK(tessi_drv_preallocate(&s, 100) == 0); /* never shrinks */
    check_map(&s);
    CHECK(tessi_drv_preallocate(&s, 9000) == 0);
    memset(map + 4000, 0, 5000);
    map_size = 9000;
    check_map(&s);

    /* locks, as the capabilities say */
    if (s.caps & TESSI_CAP_LOCKS) {
        CHECK(tessi_drv_lock(&s, 0, 100, true) == 0 && tessi_drv_unlock(&s, 0, 100) == 0);
        if (s.caps & TESSI_CAP_SHARED_LOCKS)
            CHECK(tessi_drv_lock(&s, 0, 100, false) == 0 && tessi_drv_unlock(&s, 0, 100) == 0);
    } else {
        CHECK(tessi_lock_unsupported(tessi_drv_lock(&s, 0, 100, true)));
    }

    /* injected faults: the error, then the handle works again */
    unsigned char b[16];
    tessi_fault_inject(TESSI_OP_READ, 0, 1, -EIO);
    CHECK(tessi_drv_pread(&s, b, 16, 0) == -EIO);
    tessi_fault_inject(TESSI_OP_WRITE, 0, 1, -ENOSPC);
    CHECK(tessi_drv_pwrite(&s, b, 16, 0) == -ENOSPC);
    check_map(&s);
    CHECK(tessi_drv_sync(&s) == 0);
    CHECK(tessi_drv_close(&s) == 0);
}

/* The same driver through tess_file_*: hints, atomic mode or its refusal, sieving writes,
 * delete. */
static void file_cases(const struct tess_driver *drv, const char *path)
{
    tess_file *f;
    tess_stats st;
    tess_type *v, *ft;
    const char *kv[] = {"tess_driver", drv->name, "tess_method", "sieve", NULL};
    unsigned char data[400], back[400];
    int64_t n;
    for (int i = 0; i < 400; i++)
        data[i] = (unsigned char)(i * 13 + 1);
    CHECK_OK(tf_open(path, TESS_RDWR | TESS_CREATE, &f, kv));
    CHECK_OK(tess_type_vector(1, 4, 4, TESS_BYTE, &v));
    CHECK_OK(tess_type_resized(v, 0, 8, &ft));
    CHECK_OK(tess_file_set_view(f, 0, TESS_BYTE, ft));
    CHECK_OK(tess_file_write_at(f, 0, data, 400, TESS_BYTE, &n));
    CHECK(n == 400);
    CHECK_OK(tess_file_read_at(f, 0, back, 400, TESS_BYTE, &n));
    CHECK(n == 400 && memcmp(back, data, 400) == 0);
    CHECK_OK(tess_file_read_at(f, 390, back, 40, TESS_BYTE, &n)); /* short at the end */
    CHECK(n == 10 && memcmp(back, data + 390, 10) == 0 && back[10] == 0);
    CHECK_OK(tess_file_stats(f, &st));
    int atomic = tess_file_set_atomicity(f, 1);
    tessi_storage *s = &f->st; /* the handle's capabilities decide what must have happened */
    if (s->caps & TESSI_CAP_LOCKS) {
        CHECK(st.lock_fallbacks == 0 && st.lock_ops > 0 && atomic == 0);
    } else {
        CHECK(st.lock_fallbacks == 1 && atomic == TESS_ERR_UNSUPPORTED);
    }
    tess_info *info;
    char val[64];
    int found;
    CHECK_OK(tess_file_get_info(f, &info));
    CHECK_OK(tess_info_get(info, "tess_driver", val, sizeof val, &found));
    CHECK(found && strcmp(val, drv->name) == 0);
    tess_info_free(info);
    CHECK_OK(tess_file_close(f));
    tess_type_free(v);
    tess_type_free(ft);

    /* delete: through the hint and through a path prefix */
    tess_info *di;
    CHECK_OK(tess_info_create(&di));
    CHECK_OK(tess_info_set(di, "tess_driver", drv->name));
    tessi_fault_inject(TESSI_OP_DELETE, 0, 1, -EIO);
    CHECK_ERR(tess_file_delete(path, di), TESS_ERR_IO);
    CHECK_OK(tess_file_delete(path, di));
    CHECK_ERR(tess_file_delete(path, di), TESS_ERR_NOENT);
    CHECK_ERR(tess_file_open(path, TESS_RDWR, di, &f), TESS_ERR_NOENT);
    char prefixed[128];
    snprintf(prefixed, sizeof prefixed, "%s:%s", drv->name, path);
    CHECK_OK(tess_file_open(prefixed, TESS_RDWR | TESS_CREATE, NULL, &f));
    CHECK(f->st.drv == drv);
    CHECK_OK(tess_file_close(f));
    const char *other = strcmp(drv->name, "posix") ? "posix" : "mem";
    CHECK_OK(tess_info_set(di, "tess_driver", other)); /* the prefix and the hint disagree */
    CHECK_ERR(tess_file_delete(prefixed, di), TESS_ERR_ARG);
    CHECK_OK(tess_file_delete(prefixed, NULL));
    CHECK_ERR(tess_file_delete(prefixed, NULL), TESS_ERR_NOENT);
    tess_info_free(di);
}

int main(void)
{
    char path[64];
    int n = 0;
    tf_path(path, sizeof path, "drivers");
    for (int i = 0; tessi_driver_at(i); i++, n++) {
        const struct tess_driver *drv = tessi_driver_at(i);
        CHECK(drv->caps && drv->open && drv->close && drv->pread && drv->pwrite &&
              drv->preadv && drv->pwritev && drv->sync && drv->get_size && drv->set_size &&
              drv->remove && (!drv->lock == !drv->unlock));
        raw_cases(drv, path);
        CHECK(tessi_drv_remove(drv, path, NULL) == 0);
        file_cases(drv, path);
        printf("driver %s: conforms\n", drv->name);
    }
    CHECK(n >= 3 && tessi_driver_find("mem") && tessi_driver_find("posix") &&
          tessi_driver_find("log"));
    return 0;
}
