/*
 * registry.c - storage drivers by name (hint "tess_driver", default "posix", or a path prefix
 * "<name>:"). A new driver is one file defining its table plus one line in `drivers` below.
 */
#include "driver/driver.h"

#include <string.h>

extern const struct tess_driver tess_posix_driver, tess_mem_driver, tess_log_driver;

static const struct tess_driver *const drivers[] = {
    &tess_posix_driver,
    &tess_mem_driver,
    &tess_log_driver,
};
#define NDRIVERS (int)(sizeof drivers / sizeof drivers[0])

const struct tess_driver *tessi_driver_find(const char *name)
{
    for (int i = 0; i < NDRIVERS; i++)
        if (drivers[i]->version == TESSI_DRIVER_VERSION && strcmp(drivers[i]->name, name) == 0)
            return drivers[i];
    return NULL;
}

const struct tess_driver *tessi_driver_at(int i)
{
    return i >= 0 && i < NDRIVERS && drivers[i]->version == TESSI_DRIVER_VERSION ? drivers[i]
                                                                               : NULL;
}

const struct tess_driver *tessi_driver_of_path(const char *path, const char **rest)
{
    const char *colon = strchr(path, ':');
    *rest = path;
    for (int i = 0; colon && i < NDRIVERS; i++)
        if (strlen(drivers[i]->name) == (size_t)(colon - path) &&
            strncmp(drivers[i]->name, path, (size_t)(colon - path)) == 0) {
            *rest = colon + 1;
            return tessi_driver_at(i);
        }
    return NULL;
}
