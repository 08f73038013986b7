/*
 * type.c - the predefined types, the public constructors and the accessors.
 *
 * Each constructor validates its own arguments, turns them into a block list (count blocks of
 * blen instances of a child at byte displacements) and hands it to tessi_build (build.c).
 */
#include "type/type.h"

#include <stdlib.h>

/* A predefined type: its C type gives the size and the alignment a C compiler lays it out at. */
#define BUILTIN(var, nm, ctype)                                                                \
    static struct tess_type var = {.kind = TESSI_BUILTIN, .predefined = true, .name = nm,       \
                                   .size = sizeof(ctype), .lb = 0, .extent = sizeof(ctype),     \
                                   .true_lb = 0, .true_ub = sizeof(ctype), .num_regions = 1,    \
                                   .first_off = 0, .last_end = sizeof(ctype), .el = &var,       \
                                   .el_size = sizeof(ctype), .depth = 0, .monotonic = true,     \
                                   .dense = true, .align = _Alignof(ctype)}

BUILTIN(builtin_byte, "byte", unsigned char);
BUILTIN(builtin_char, "char", char);
BUILTIN(builtin_int8, "int8", int8_t);
BUILTIN(builtin_int16, "int16", int16_t);
BUILTIN(builtin_int32, "int32", int32_t);
BUILTIN(builtin_int64, "int64", int64_t);
BUILTIN(builtin_uint8, "uint8", uint8_t);
BUILTIN(builtin_uint16, "uint16", uint16_t);
BUILTIN(builtin_uint32, "uint32", uint32_t);
BUILTIN(builtin_uint64, "uint64", uint64_t);
BUILTIN(builtin_float, "float", float);
BUILTIN(builtin_double, "double", double);

tess_type *const TESS_BYTE = &builtin_byte, *const TESS_CHAR = &builtin_char,
                 *const TESS_INT8 = &builtin_int8, *const TESS_INT16 = &builtin_int16,
                 *const TESS_INT32 = &builtin_int32, *const TESS_INT64 = &builtin_int64,
                 *const TESS_UINT8 = &builtin_uint8, *const TESS_UINT16 = &builtin_uint16,
                 *const TESS_UINT32 = &builtin_uint32, *const TESS_UINT64 = &builtin_uint64,
                 *const TESS_FLOAT = &builtin_float, *const TESS_DOUBLE = &builtin_double;

/* ---------------------------------------------------------- constructors */

static int check_old(const char *who, const tess_type *old)
{
    return old ? 0 : tessi_error(TESS_ERR_ARG, "%s: old type is NULL", who);
}

int tess_type_contiguous(int64_t count, tess_type *old, tess_type **out)
{
    int rc = check_old("tess_type_contiguous", old);
    if (rc)
        return rc;
    if (count < 0)
        return tessi_error(TESS_ERR_ARG, "tess_type_contiguous: count %lld < 0", (long long)count);
    tessi_blocks in = {.count = count ? 1 : 0, .blen = count, .type = old};
    return tessi_build("tess_type_contiguous", &in, out);
}

int tess_type_hvector(int64_t count, int64_t blocklen, int64_t stride_bytes, tess_type *old,
                      tess_type **out)
{
    int rc = check_old("tess_type_hvector", old);
    if (rc)
        return rc;
    if (blocklen < 0)
        return tessi_error(TESS_ERR_ARG, "tess_type_hvector: blocklen %lld < 0", (long long)blocklen);
    tessi_blocks in = {.count = count, .blen = blocklen, .stride = stride_bytes, .type = old};
    return tessi_build("tess_type_hvector", &in, out);
}

int tess_type_vector(int64_t count, int64_t blocklen, int64_t stride, tess_type *old,
                     tess_type **out)
{
    int64_t bytes;
    int rc = check_old("tess_type_vector", old);
    if (rc)
        return rc;
    if (!tessi_mul(stride, old->extent, &bytes))
        return tessi_error(TESS_ERR_OVERFLOW, "tess_type_vector: stride %lld * extent %lld overflows",
                           (long long)stride, (long long)old->extent);
    tessi_blocks in = {.count = count, .blen = blocklen, .stride = bytes, .type = old};
    if (blocklen < 0)
        return tessi_error(TESS_ERR_ARG, "tess_type_vector: blocklen %lld < 0", (long long)blocklen);
    return tessi_build("tess_type_vector", &in, out);
}

/* Displacements in units of `unit` bytes, as a new byte array (NULL count 0 allowed). */
static int scale_displs(const char *who, int64_t count, const int64_t *displs, int64_t unit,
                        int64_t **bytes)
{
    *bytes = NULL;
    if (count < 0)
        return tessi_error(TESS_ERR_ARG, "%s: count %lld < 0", who, (long long)count);
    if (count > 0 && !displs)
        return tessi_error(TESS_ERR_ARG, "%s: displacements are NULL", who);
    *bytes = malloc(sizeof(int64_t) * (size_t)(count ? count : 1));
    if (!*bytes)
        return tessi_error(TESS_ERR_NOMEM, "%s: out of memory", who);
    for (int64_t k = 0; k < count; k++)
        if (!tessi_mul(displs[k], unit, &(*bytes)[k])) {
            free(*bytes);
            *bytes = NULL;
            return tessi_error(TESS_ERR_OVERFLOW, "%s: displacement %lld * extent %lld overflows",
                               who, (long long)displs[k], (long long)unit);
        }
    return 0;
}

static int indexed_bytes(const char *who, int64_t count, const int64_t *blocklens,
                         const int64_t *displs_bytes, tess_type *old, tess_type **out)
{
    int rc = check_old(who, old);
    if (rc)
        return rc;
    if (count < 0)
        return tessi_error(TESS_ERR_ARG, "%s: count %lld < 0", who, (long long)count);
    if (count > 0 && (!blocklens || !displs_bytes))
        return tessi_error(TESS_ERR_ARG, "%s: blocklens or displacements are NULL", who);
    tessi_blocks in = {.count = count, .blens = blocklens, .displs = displs_bytes, .type = old};
    return tessi_build(who, &in, out);
}

int tess_type_hindexed(int64_t count, const int64_t *blocklens, const int64_t *displs_bytes,
                       tess_type *old, tess_type **out)
{
    return indexed_bytes("tess_type_hindexed", count, blocklens, displs_bytes, old, out);
}

int tess_type_indexed(int64_t count, const int64_t *blocklens, const int64_t *displs,
                      tess_type *old, tess_type **out)
{
    int64_t *bytes;
    int rc = check_old("tess_type_indexed", old);
    if (rc)
        return rc;
    rc = scale_displs("tess_type_indexed", count, displs, old->extent, &bytes);
    if (rc)
        return rc;
    rc = indexed_bytes("tess_type_indexed", count, blocklens, bytes, old, out);
    free(bytes);
    return rc;
}

static int blockindexed_bytes(const char *who, int64_t count, int64_t blocklen,
                              const int64_t *displs_bytes, tess_type *old, tess_type **out)
{
    int rc = check_old(who, old);
    if (rc)
        return rc;
    if (count < 0 || blocklen < 0)
        return tessi_error(TESS_ERR_ARG, "%s: count %lld or blocklen %lld < 0", who,
                           (long long)count, (long long)blocklen);
    if (count > 0 && !displs_bytes)
        return tessi_error(TESS_ERR_ARG, "%s: displacements are NULL", who);
    tessi_blocks in = {.count = count, .blen = blocklen, .displs = displs_bytes, .type = old};
    return tessi_build(who, &in, out);
}

int tess_type_hblockindexed(int64_t count, int64_t blocklen, const int64_t *displs_bytes,
                            tess_type *old, tess_type **out)
{
    return blockindexed_bytes("tess_type_hblockindexed", count, blocklen, displs_bytes, old, out);
}

int tess_type_blockindexed(int64_t count, int64_t blocklen, const int64_t *displs, tess_type *old,
                           tess_type **out)
{
    int64_t *bytes;
    int rc = check_old("tess_type_blockindexed", old);
    if (rc)
        return rc;
    rc = scale_displs("tess_type_blockindexed", count, displs, old->extent, &bytes);
    if (rc)
        return rc;
    rc = blockindexed_bytes("tess_type_blockindexed", count, blocklen, bytes, old, out);
    free(bytes);
    return rc;
}

int tess_type_struct(int64_t count, const int64_t *blocklens, const int64_t *displs_bytes,
                     tess_type *const *types, tess_type **out)
{
    if (count < 0)
        return tessi_error(TESS_ERR_ARG, "tess_type_struct: count %lld < 0", (long long)count);
    if (count > 0 && (!blocklens || !displs_bytes || !types))
        return tessi_error(TESS_ERR_ARG, "tess_type_struct: blocklens, displacements or types NULL");
    tessi_blocks in = {.count = count, .blens = blocklens, .displs = displs_bytes, .types = types,
                       .pad = true};
    return tessi_build("tess_type_struct", &in, out);
}

int tess_type_resized(tess_type *old, int64_t lb, int64_t extent, tess_type **out)
{
    int rc = check_old("tess_type_resized", old);
    if (rc)
        return rc;
    if (!out)
        return tessi_error(TESS_ERR_ARG, "tess_type_resized: out is NULL");
    if (extent < 0)
        return tessi_error(TESS_ERR_ARG, "tess_type_resized: extent %lld < 0", (long long)extent);
    int64_t ub;
    if (!tessi_add(lb, extent, &ub))
        return tessi_error(TESS_ERR_OVERFLOW, "tess_type_resized: lb + extent overflows");
    return tessi_resize(old, lb, extent, out);
}

/* ------------------------------------------------------------- accessors */

int64_t tess_type_size(const tess_type *t) { return t ? t->size : 0; }
int64_t tess_type_extent(const tess_type *t) { return t ? t->extent : 0; }
int64_t tess_type_lb(const tess_type *t) { return t ? t->lb : 0; }
int64_t tess_type_true_lb(const tess_type *t) { return t ? t->true_lb : 0; }
int64_t tess_type_true_extent(const tess_type *t) { return t ? t->true_ub - t->true_lb : 0; }
int64_t tess_type_num_regions(const tess_type *t) { return t ? t->num_regions : 0; }
int tess_type_depth(const tess_type *t) { return t ? t->depth : 0; }
