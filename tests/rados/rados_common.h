/*
 * rados_common.h - helpers of the RADOS tests: the cluster the fixture started (its ceph.conf
 * is in $TESS_TEST_RADOS_CONF; without it the tests skip with 77), opening files with hints,
 * and the oracle's view of a file: its bytes read straight from the RADOS objects with librados
 * and placed by the layout's forward mapping (object set, row, position: never the driver's
 * own file-to-object function).
 */
#ifndef TESS_RADOS_COMMON_H
#define TESS_RADOS_COMMON_H

#include "check.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <rados/librados.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

/* The cluster's conf, or exit 77 (skip) when there is none. */
static inline const char *rt_conf(void)
{
    const char *c = getenv("TESS_TEST_RADOS_CONF");
    if (!c || access(c, R_OK) != 0) {
        fprintf(stderr, "no RADOS cluster (TESS_TEST_RADOS_CONF): skipped\n");
        exit(77);
    }
    return c;
}

/* A file name unique to this process: rados:tessera/<tag>.<pid>. */
static inline void rt_name(char *buf, size_t cap, const char *tag)
{
    snprintf(buf, cap, "rados:tessera/%s.%ld", tag, (long)getpid());
}

/* Open with hints (NULL-terminated key, value list) plus the cluster's conf. */
static inline int rt_open(const char *path, int flags, tess_file **f, const char *const *kv)
{
    tess_info *info;
    CHECK_OK(tess_info_create(&info));
    CHECK_OK(tess_info_set(info, "tess_rados_conf", rt_conf()));
    for (int i = 0; kv && kv[i]; i += 2)
        CHECK_OK(tess_info_set(info, kv[i], kv[i + 1]));
    int rc = tess_file_open(path, flags, info, f);
    tess_info_free(info);
    return rc;
}

/* Delete a file of the test cluster. */
static inline int rt_delete(const char *path)
{
    tess_info *info;
    CHECK_OK(tess_info_create(&info));
    CHECK_OK(tess_info_set(info, "tess_rados_conf", rt_conf()));
    int rc = tess_file_delete(path, info);
    tess_info_free(info);
    return rc;
}

/* A librados connection to the test cluster (the oracle's own). */
static inline rados_ioctx_t rt_ioctx(void)
{
    static rados_t c;
    static rados_ioctx_t io;
    if (!io) {
        CHECK(rados_create(&c, NULL) == 0);
        CHECK(rados_conf_read_file(c, rt_conf()) == 0);
        CHECK(rados_connect(c) == 0);
        CHECK(rados_ioctx_create(c, "tessera", &io) == 0);
    }
    return io;
}

/*
 * The first len bytes of file `path` (rados:tessera/NAME) as its objects hold them: for each
 * object set, row and position, the unit at file offset ((set * rows + row) * factor + pos) *
 * unit is object (set * factor + pos)'s bytes [row * unit, (row + 1) * unit). Missing objects
 * and bytes past an object's end are zeros.
 */
static inline void rt_image(const char *path, unsigned char *img, int64_t len)
{
    const char *name = strchr(path, '/') + 1;
    char layout[96] = "";
    int n = rados_getxattr(rt_ioctx(), name, "tessera.layout", layout, sizeof layout - 1);
    CHECK(n > 0);
    layout[n] = 0;
    long long unit, factor, objsize;
    CHECK(sscanf(layout, "1 %lld %lld %lld", &unit, &factor, &objsize) == 3);
    long long rows = objsize / unit;
    memset(img, 0, (size_t)len);
    char *obj = malloc((size_t)objsize);
    CHECK(obj);
    for (long long set = 0; set * rows * factor * unit < len; set++) {
        for (long long pos = 0; pos < factor; pos++) {
            char oid[512];
            snprintf(oid, sizeof oid, "%s.%lld", name, set * factor + pos);
            int got = rados_read(rt_ioctx(), oid, obj, (size_t)objsize, 0);
            if (got == -ENOENT)
                continue;
            CHECK(got >= 0);
            for (long long row = 0; row < rows; row++) {
                long long foff = ((set * rows + row) * factor + pos) * unit;
                for (long long k = 0; k < unit && foff + k < len; k++)
                    img[foff + k] = row * unit + k < got ? (unsigned char)obj[row * unit + k] : 0;
            }
        }
    }
    free(obj);
}

#endif
