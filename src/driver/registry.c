/*
 * registry.c - storage drivers by name (hint "tess_driver", default "posix"). A new driver is
 * one file defining its table plus one line in `drivers` below.
 */
#include "driver/driver.h"

#include <string.h>

extern const struct tess_driver tess_posix_driver;

static const struct tess_driver *const drivers[] = {
    &tess_posix_driver,
};

const struct tess_driver *tessi_driver_find(const char *name)
{
    for (size_t i = 0; i < sizeof drivers / sizeof drivers[0]; i++)
        if (drivers[i]->version == TESSI_DRIVER_VERSION && strcmp(drivers[i]->name, name) == 0)
            return drivers[i];
    return NULL;
}
