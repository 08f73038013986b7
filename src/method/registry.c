/*
 * registry.c - independent methods by name (hint tess_method) and the `auto` rule. A new method
 * is one file defining its table plus one line in `methods` below.
 */
#include "method/method.h"

#include "type/type.h"

#include <string.h>

static const struct tess_method *const methods[] = {
    &tessi_method_naive,
    &tessi_method_sieve,
    &tessi_method_list,
};

const struct tess_method *tessi_method_find(const char *name)
{
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++)
        if (methods[i]->version == TESSI_METHOD_VERSION && strcmp(methods[i]->name, name) == 0)
            return methods[i];
    return NULL;
}

/* Average file region below which per-call cost dominates and sieving pays (auto rule 4). */
#define TESSI_AUTO_SMALL_REGION (64 * 1024)

/* The memory side is one contiguous run of bytes. */
static bool mem_contiguous(const tessi_access *a)
{
    const tess_type *t = a->memtype;
    return t->num_regions <= 1 && (a->count <= 1 || t->size == t->extent);
}

/*
 * The auto rule (a later cost model replaces it), per access and direction:
 *  1. the file side is one contiguous run: naive if memory is contiguous too (one call),
 *     else list (one vectored call gathers up to TESSI_IOV_MAX memory pieces, no copy);
 *  2. romio_ds_<dir> = disable: list;  3. romio_ds_<dir> = enable: sieve;
 *  4. automatic (default): sieve when the access is dense (data >= 1/2 of its file extent)
 *     and the view's file regions are small (filetype bytes per region < 64 KiB), else list.
 */
const struct tess_method *tessi_method_choose(const tessi_access *a, bool write)
{
    const tessi_hints *h = a->hints;
    if (h->method)
        return h->method;
    int64_t span = a->file->hi - a->file->lo;
    if (span == a->bytes)
        return mem_contiguous(a) ? &tessi_method_naive : &tessi_method_list;
    int ds = write ? h->ds_write : h->ds_read;
    if (ds != TESSI_DS_AUTOMATIC)
        return ds == TESSI_DS_ENABLE ? &tessi_method_sieve : &tessi_method_list;
    const tess_type *ft = a->view->filetype;
    bool dense = a->bytes >= span / 2;
    bool small = ft->size / ft->num_regions < TESSI_AUTO_SMALL_REGION;
    return dense && small ? &tessi_method_sieve : &tessi_method_list;
}
