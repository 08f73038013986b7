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
 *  - the optional capabilities: a lock-free read-modify-write (sieving writes take no lock
 *    and keep the bytes between the regions), datatype I/O (the datatype method moves the
 *    same bytes as the map says);
 *  - delete: the file is gone.
 *
 * Usage: test_drivers [--needs FILE] [NAME=PLACE [KEY=VALUE...]]; --needs: skip (77) when FILE
 * (the cluster's conf) is not there. Without arguments every driver that keeps
 * files in the process or the current directory runs (posix, mem, log); a driver whose storage is
 * elsewhere (rados) runs when named with the place of its files (rados=POOL/), every open
 * getting the KEY=VALUE hints (tests/rados/tests.cmake runs it on the test cluster).
 */
#include "core/file.h"
#include "test_file_common.h"

enum { SIZE = 1 << 16 };

static unsigned char map[SIZE];    /* what the file must hold */
static int64_t map_size;          /* its size */
static unsigned seed = 12345;

static tess_info *hints; /* every open's hints (the command line's KEY=VALUE) */

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
    CHECK(tessi_drv_open(&s, drv, path, TESS_RDWR, hints) == -ENOENT);
    CHECK(tessi_drv_open(&s, drv, path, TESS_RDWR | TESS_CREATE | TESS_EXCL, hints) == 0);
    CHECK(tessi_drv_open(&t, drv, path, TESS_RDWR | TESS_CREATE | TESS_EXCL, hints) == -EEXIST);
    check_map(&s);

    /* sparse: a write far from the start leaves a hole of zeros */
    unsigned char x[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    CHECK(tessi_drv_pwrite(&s, x, 10, 5000) == 10);
    memcpy(map + 5000, x, 10);
    map_size = 5010;
    check_map(&s);
    random_io(&s);

    /* a second handle sees the same bytes */
    CHECK(tessi_drv_open(&t, drv, path, TESS_RDONLY, hints) == 0);
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

/* A copy of the command line's hints. */
static tess_info *hints_copy(void)
{
    tess_info *info;
    int64_t n;
    char key[256], val[1024];
    int found;
    CHECK_OK(tess_info_create(&info));
    CHECK_OK(tess_info_get_nkeys(hints, &n));
    for (int64_t k = 0; k < n; k++) {
        CHECK_OK(tess_info_get_nthkey(hints, k, key, sizeof key));
        CHECK_OK(tess_info_get(hints, key, val, sizeof val, &found));
        CHECK_OK(tess_info_set(info, key, val));
    }
    return info;
}

/* Open path through tess_file_open with the command line's hints and hint pairs kv. */
static int open_with(const char *path, int flags, tess_file **f, const char *const *kv)
{
    tess_info *info = hints_copy();
    for (int i = 0; kv && kv[i]; i += 2)
        CHECK_OK(tess_info_set(info, kv[i], kv[i + 1]));
    int rc = tess_file_open(path, flags, info, f);
    tess_info_free(info);
    return rc;
}

/* Delete path of driver drv (hint tess_driver and the command line's hints). */
static void delete_file(const struct tess_driver *drv, const char *path)
{
    tess_info *info = hints_copy();
    CHECK_OK(tess_info_set(info, "tess_driver", drv->name));
    CHECK_OK(tess_file_delete(path, info));
    tess_info_free(info);
}

/* Datatype I/O (TESSI_CAP_DATATYPE): the datatype method writes every other 4-byte block of a
 * new file and reads it back through the view; the holes stay zeros. */
static void datatype_case(const struct tess_driver *drv, const char *path, tess_type *ft)
{
    tess_file *f;
    tess_stats st;
    const char *kv[] = {"tess_driver", drv->name, "tess_method", "datatype", NULL};
    unsigned char data[600], back[1200];
    int64_t n;
    for (int i = 0; i < 600; i++)
        data[i] = (unsigned char)(i * 7 + 3);
    CHECK_OK(open_with(path, TESS_RDWR | TESS_CREATE, &f, kv));
    CHECK_OK(tess_file_set_view(f, 0, TESS_BYTE, ft));
    CHECK_OK(tess_file_write_at(f, 0, data, 600, TESS_BYTE, &n));
    CHECK(n == 600);
    memset(back, 0xEE, sizeof back);
    CHECK_OK(tess_file_read_at(f, 0, back, 600, TESS_BYTE, &n));
    CHECK(n == 600 && memcmp(back, data, 600) == 0);
    CHECK_OK(tess_file_stats(f, &st));
    CHECK(st.method_accesses[TESS_METHOD_DATATYPE] == 2 && st.lock_ops == 0);
    CHECK_OK(tess_file_set_view(f, 0, TESS_BYTE, TESS_BYTE));
    CHECK_OK(tess_file_read_at(f, 0, back, 1200, TESS_BYTE, &n));
    CHECK(n == 1196); /* the last block ends 4 bytes before 1200 */
    for (int i = 0; i < 1196; i++)
        CHECK(back[i] == (i % 8 < 4 ? data[i / 8 * 4 + i % 8] : 0));
    CHECK_OK(tess_file_close(f));
    delete_file(drv, path);
}

/* The same driver through tess_file_*: hints, atomic mode or its refusal, sieving writes,
 * delete. */
static void file_cases(const struct tess_driver *drv, const char *path)
{
    tess_file *f;
    tess_stats st;
    tess_type *v, *ft;
    const char *kv[] = {"tess_driver", drv->name, "tess_method", "sieve", NULL};
    unsigned char data[400], back[800];
    int64_t n;
    for (int i = 0; i < 400; i++)
        data[i] = (unsigned char)(i * 13 + 1);
    CHECK_OK(open_with(path, TESS_RDWR | TESS_CREATE, &f, kv));
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
    if (s->caps & TESSI_CAP_RMW) { /* sieving writes need no lock */
        CHECK(st.lock_fallbacks == 0 && st.lock_ops == 0 && st.accessed_bytes > st.desired_bytes);
        CHECK(atomic == ((s->caps & TESSI_CAP_LOCKS) ? 0 : TESS_ERR_UNSUPPORTED));
    } else if (s->caps & TESSI_CAP_LOCKS) {
        CHECK(st.lock_fallbacks == 0 && st.lock_ops > 0 && atomic == 0);
    } else {
        CHECK(st.lock_fallbacks == 1 && atomic == TESS_ERR_UNSUPPORTED);
    }
    CHECK(st.auth_insecure == ((s->caps & TESSI_CAP_INSECURE) != 0));
    /* the holes between the view's blocks stayed zeros */
    CHECK_OK(tess_file_set_view(f, 0, TESS_BYTE, TESS_BYTE));
    CHECK_OK(tess_file_read_at(f, 0, back, 800, TESS_BYTE, &n));
    CHECK(n == 796);
    for (int i = 0; i < 796; i++)
        CHECK(back[i] == (i % 8 < 4 ? data[i / 8 * 4 + i % 8] : 0));
    tess_info *info;
    char val[64];
    int found;
    CHECK_OK(tess_file_get_info(f, &info));
    CHECK_OK(tess_info_get(info, "tess_driver", val, sizeof val, &found));
    CHECK(found && strcmp(val, drv->name) == 0);
    tess_info_free(info);
    unsigned caps = s->caps; /* s lives in f */
    CHECK_OK(tess_file_close(f));
    delete_file(drv, path);
    if (caps & TESSI_CAP_DATATYPE)
        datatype_case(drv, path, ft);
    tess_type_free(v);
    tess_type_free(ft);

    /* delete: through the hint and through a path prefix */
    tess_info *di;
    const char *drv_kv[] = {"tess_driver", drv->name, NULL};
    CHECK_OK(open_with(path, TESS_RDWR | TESS_CREATE, &f, drv_kv));
    CHECK_OK(tess_file_close(f));
    di = hints_copy();
    CHECK_OK(tess_info_set(di, "tess_driver", drv->name));
    tessi_fault_inject(TESSI_OP_DELETE, 0, 1, -EIO);
    CHECK_ERR(tess_file_delete(path, di), TESS_ERR_IO);
    CHECK_OK(tess_file_delete(path, di));
    CHECK_ERR(tess_file_delete(path, di), TESS_ERR_NOENT);
    CHECK_ERR(tess_file_open(path, TESS_RDWR, di, &f), TESS_ERR_NOENT);
    char prefixed[128];
    snprintf(prefixed, sizeof prefixed, "%s:%s", drv->name, path);
    CHECK_OK(open_with(prefixed, TESS_RDWR | TESS_CREATE, &f, NULL));
    CHECK(f->st.drv == drv);
    CHECK_OK(tess_file_close(f));
    const char *other = strcmp(drv->name, "posix") ? "posix" : "mem";
    CHECK_OK(tess_info_set(di, "tess_driver", other)); /* the prefix and the hint disagree */
    CHECK_ERR(tess_file_delete(prefixed, di), TESS_ERR_ARG);
    CHECK_OK(tess_file_delete(prefixed, hints));
    CHECK_ERR(tess_file_delete(prefixed, hints), TESS_ERR_NOENT);
    tess_info_free(di);
}

static void conform(const struct tess_driver *drv, const char *path)
{
    CHECK(drv->caps && drv->open && drv->close && drv->pread && drv->pwrite && drv->preadv &&
          drv->pwritev && drv->sync && drv->get_size && drv->set_size && drv->remove &&
          (!drv->lock == !drv->unlock));
    raw_cases(drv, path);
    CHECK(tessi_drv_remove(drv, path, hints) == 0);
    file_cases(drv, path);
    printf("driver %s: conforms\n", drv->name);
}

int main(int argc, char **argv)
{
    char path[1100], name[64];
    int n = 0;
    tf_path(name, sizeof name, "drivers");
    if (argc > 2 && strcmp(argv[1], "--needs") == 0) {
        if (access(argv[2], R_OK) != 0) {
            printf("%s is not there (no cluster): skipped\n", argv[2]);
            return 77;
        }
        argc -= 2, argv += 2;
    }
    CHECK_OK(tess_info_create(&hints));
    for (int i = 2; i < argc; i++) {
        const char *eq = strchr(argv[i], '=');
        char key[256];
        CHECK(eq && eq - argv[i] < (int)sizeof key);
        snprintf(key, sizeof key, "%.*s", (int)(eq - argv[i]), argv[i]);
        CHECK_OK(tess_info_set(hints, key, eq + 1));
    }
    if (argc > 1) { /* one driver, at the place given */
        const char *eq = strchr(argv[1], '=');
        CHECK(eq);
        snprintf(path, sizeof path, "%s%s", eq + 1, name);
        const struct tess_driver *drv = NULL;
        for (int i = 0; tessi_driver_at(i); i++)
            if (strncmp(tessi_driver_at(i)->name, argv[1], (size_t)(eq - argv[1])) == 0 &&
                tessi_driver_at(i)->name[eq - argv[1]] == 0)
                drv = tessi_driver_at(i);
        CHECK(drv);
        conform(drv, path);
        tess_info_free(hints);
        return 0;
    }
    for (int i = 0; tessi_driver_at(i); i++) {
        const struct tess_driver *drv = tessi_driver_at(i);
        if (strcmp(drv->name, "rados") == 0) {
            printf("driver %s: its storage is elsewhere (run: test_drivers %s=PLACE)\n",
                   drv->name, drv->name);
            continue;
        }
        conform(drv, name);
        n++;
    }
    CHECK(n >= 3 && tessi_driver_find("mem") && tessi_driver_find("posix") &&
          tessi_driver_find("log"));
    tess_info_free(hints);
    return 0;
}
