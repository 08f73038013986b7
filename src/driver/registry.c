/*
 * registry.c - storage drivers by name (hint "tess_driver", default "posix"). A new driver is
 * one file defining its table plus one line in `drivers` below.
 */
#include "driver/driver.h"

#include <string.h>

extern const struct tess_driver tess_posix_driver;
#ifdef TESS_HAVE_RADOS
extern const struct tess_driver tess_rados_driver;
#endif

static const struct tess_driver *const drivers[] = {
    &tess_posix_driver,
#ifdef TESS_HAVE_RADOS
    &tess_rados_driver,
#endif
};

const struct tess_driver *tessi_driver_find(const char *name)
{
    for (size_t i = 0; i < sizeof drivers / sizeof drivers[0]; i++)
        if (drivers[i]->version == TESSI_DRIVER_VERSION && strcmp(drivers[i]->name, name) == 0)
            return drivers[i];
    return NULL;
}

const struct tess_driver *tessi_driver_for_path(const char *path, const char *hinted)
{
    const char *colon = strchr(path, ':');
    const char *slash = strchr(path, '/');
    if (!hinted && colon && colon > path && (!slash || colon < slash) && colon - path < 32) {
        char prefix[32];
        memcpy(prefix, path, (size_t)(colon - path));
        prefix[colon - path] = 0;
        const struct tess_driver *d = tessi_driver_find(prefix);
        if (d)
            return d;
    }
    return tessi_driver_find(hinted ? hinted : "posix");
}
