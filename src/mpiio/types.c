/*
 * types.c - MPI datatypes as Tessera types, and the external32 data representation.
 *
 * The cache. A call never re-imports a datatype: the Tessera type made by tess_type_from_mpi
 * is kept, keyed by the MPI handle. A derived type gets an attribute (a keyval of our own)
 * whose delete callback drops the entry when the program frees the type, before MPI can give
 * the handle to another type; MPI_Type_dup does not copy it (MPI_TYPE_NULL_COPY_FN). Named
 * types are never freed and stay until MPI_Finalize.
 *
 * external32 (big-endian, MPI 3.1 section 13.5.2). Data is converted element by element: for a
 * type whose elements all have the same size natively and in external32 and one size (int and
 * float, or double alone; complex numbers are two reals), the packed stream is an array of
 * such elements, and converting is reversing the bytes of each. The elements are found from
 * the MPI type's constructors (its named leaves). Types mixing element sizes (a struct of an
 * int and a double), and elements whose external32 form differs from the native one
 * (MPI_LONG and MPI_UNSIGNED_LONG are 4 bytes in external32, 8 here; MPI_WCHAR 2 bytes;
 * MPI_LONG_DOUBLE is IEEE quad) get MPI_ERR_CONVERSION, never wrong bytes. Views keep native
 * extents, as in ROMIO.
 */
#include "mpiio.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define NBUCKETS 1024
#define MAX_NESTING 64

typedef struct entry {
    uint64_t key;
    tess_type *type;
    int64_t unit; /* external32 swap unit: 0 not yet known, -1 cannot convert */
    struct entry *next;
} entry;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static entry *buckets[NBUCKETS];
static int keyval = MPI_KEYVAL_INVALID;

/* Handles are pointers (Open MPI) or integers (MPICH): the key is the handle's bytes. */
static uint64_t key_of(MPI_Datatype dt)
{
    uint64_t k = 0;
    memcpy(&k, &dt, sizeof dt < sizeof k ? sizeof dt : sizeof k);
    return k;
}

static entry **slot_of(uint64_t key)
{
    uint64_t h = key * UINT64_C(0x9e3779b97f4a7c15);
    return &buckets[h >> 54];
}

/* The entry of key, or NULL. Caller holds the lock. */
static entry *find(uint64_t key)
{
    for (entry *e = *slot_of(key); e; e = e->next)
        if (e->key == key)
            return e;
    return NULL;
}

/* Remove the entry of key and return it (NULL if absent). Caller holds the lock. */
static entry *unlink_entry(uint64_t key)
{
    for (entry **p = slot_of(key); *p; p = &(*p)->next)
        if ((*p)->key == key) {
            entry *e = *p;
            *p = e->next;
            return e;
        }
    return NULL;
}

/* The program freed a type we imported: drop it before its handle is reused. */
static int dropped(MPI_Datatype dt, int kv, void *attr, void *extra)
{
    (void)kv, (void)attr, (void)extra;
    pthread_mutex_lock(&lock);
    entry *e = unlink_entry(key_of(dt));
    pthread_mutex_unlock(&lock);
    if (e) {
        tess_type_free(e->type);
        free(e);
    }
    return MPI_SUCCESS;
}

/* The constructor of dt (MPI_COMBINER_*) and the sizes of its contents. */
static int envelope(MPI_Datatype dt, int *combiner, int64_t n[4])
{
#if TESSI_MIO_LARGE_COUNT
    MPI_Count ni, na, nc, nd;
    int rc = MPI_Type_get_envelope_c(dt, &ni, &na, &nc, &nd, combiner);
#else
    int ni, na, nd, nc = 0;
    int rc = MPI_Type_get_envelope(dt, &ni, &na, &nd, combiner);
#endif
    n[0] = ni, n[1] = na, n[2] = nc, n[3] = nd;
    return rc;
}

int tessi_mio_type(MPI_Datatype dt, const char *who, tess_type **out)
{
    int combiner, rc;
    int64_t n[4];
    tess_type *t;
    if (dt == MPI_DATATYPE_NULL)
        return tessi_mio_error(MPI_ERR_TYPE, who, "the datatype is MPI_DATATYPE_NULL");
    uint64_t key = key_of(dt);
    pthread_mutex_lock(&lock);
    entry *e = find(key);
    pthread_mutex_unlock(&lock);
    if (e) {
        *out = e->type;
        return MPI_SUCCESS;
    }
    if ((rc = envelope(dt, &combiner, n)) != MPI_SUCCESS)
        return tessi_mio_error(MPI_ERR_TYPE, who, "invalid datatype (MPI error %d)", rc);
    if ((rc = tess_type_from_mpi(dt, &t)))
        return tessi_mio_error(MPI_ERR_TYPE, who, "%s", tess_last_error());
    if (!(e = calloc(1, sizeof *e))) {
        tess_type_free(t);
        return tessi_mio_error(MPI_ERR_NO_MEM, who, "out of memory (datatype cache)");
    }
    if (combiner != MPI_COMBINER_NAMED) {
        if (keyval == MPI_KEYVAL_INVALID)
            MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, dropped, &keyval, NULL);
        /* without the attribute the entry could outlive the type: do not cache then */
        if (keyval == MPI_KEYVAL_INVALID || MPI_Type_set_attr(dt, keyval, NULL) != MPI_SUCCESS) {
            free(e);
            tess_type_free(t); /* the caller's borrow would dangle: report instead */
            return tessi_mio_error(MPI_ERR_INTERN, who, "cannot attach the cache attribute "
                                   "to the datatype");
        }
    }
    *e = (entry){.key = key, .type = t};
    pthread_mutex_lock(&lock);
    entry *other = find(key); /* another thread imported it meanwhile */
    if (!other) {
        entry **s = slot_of(key);
        e->next = *s;
        *s = e;
    }
    pthread_mutex_unlock(&lock);
    if (other) {
        tess_type_free(t);
        free(e);
        e = other;
    }
    *out = e->type;
    return MPI_SUCCESS;
}

void tessi_mio_types_fini(void)
{
    pthread_mutex_lock(&lock);
    for (int b = 0; b < NBUCKETS; b++)
        while (buckets[b]) {
            entry *e = buckets[b];
            buckets[b] = e->next;
            tess_type_free(e->type);
            free(e);
        }
    pthread_mutex_unlock(&lock);
    /* types still alive keep the attribute; its callback then finds no entry */
}

/* ------------------------------------------------------------------ external32 */

/*
 * A named type: its swap unit (its element size; a complex type's real size) if its external32
 * form is its native one byte-reversed, else -1.
 */
static int64_t named_unit(MPI_Datatype dt)
{
    const struct {
        MPI_Datatype dt;
        int64_t ext, unit; /* size in external32 (MPI 3.1 table 13.2) and swap unit */
    } table[] = {
        {MPI_PACKED, 1, 1}, {MPI_BYTE, 1, 1}, {MPI_CHAR, 1, 1}, {MPI_UNSIGNED_CHAR, 1, 1},
        {MPI_SIGNED_CHAR, 1, 1}, {MPI_C_BOOL, 1, 1}, {MPI_CHARACTER, 1, 1},
        {MPI_SHORT, 2, 2}, {MPI_UNSIGNED_SHORT, 2, 2}, {MPI_INT, 4, 4}, {MPI_UNSIGNED, 4, 4},
        {MPI_LONG, 4, 4}, {MPI_UNSIGNED_LONG, 4, 4}, {MPI_LONG_LONG_INT, 8, 8},
        {MPI_UNSIGNED_LONG_LONG, 8, 8}, {MPI_INT8_T, 1, 1}, {MPI_UINT8_T, 1, 1},
        {MPI_INT16_T, 2, 2}, {MPI_UINT16_T, 2, 2}, {MPI_INT32_T, 4, 4}, {MPI_UINT32_T, 4, 4},
        {MPI_INT64_T, 8, 8}, {MPI_UINT64_T, 8, 8}, {MPI_AINT, 8, 8}, {MPI_OFFSET, 8, 8},
        {MPI_COUNT, 8, 8}, {MPI_FLOAT, 4, 4}, {MPI_DOUBLE, 8, 8},
        {MPI_C_FLOAT_COMPLEX, 8, 4}, {MPI_C_DOUBLE_COMPLEX, 16, 8}, {MPI_INTEGER, 4, 4},
        {MPI_LOGICAL, 4, 4}, {MPI_REAL, 4, 4}, {MPI_DOUBLE_PRECISION, 8, 8},
        {MPI_COMPLEX, 8, 4}, {MPI_DOUBLE_COMPLEX, 16, 8}, {MPI_2INT, 8, 4},
        {MPI_FLOAT_INT, 8, 4},
    };
    int size = 0;
    if (MPI_Type_size(dt, &size) != MPI_SUCCESS)
        return -1;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (table[i].dt == dt)
            return table[i].ext == size ? table[i].unit : -1;
    return -1;
}

/* Fold the leaves of dt into *unit (0: none yet; -1: not convertible). */
static void leaves(MPI_Datatype dt, int level, int64_t *unit)
{
    int combiner;
    int64_t n[4];
    if (*unit < 0 || level > MAX_NESTING || envelope(dt, &combiner, n) != MPI_SUCCESS) {
        *unit = -1;
        return;
    }
    if (combiner == MPI_COMBINER_NAMED) {
        int64_t u = named_unit(dt);
        *unit = u < 0 || (*unit && *unit != u) ? -1 : u;
        return;
    }
    if (combiner == MPI_COMBINER_F90_REAL || combiner == MPI_COMBINER_F90_COMPLEX ||
        combiner == MPI_COMBINER_F90_INTEGER) {
        *unit = -1;
        return;
    }
    int *ints = malloc(sizeof(int) * (size_t)(n[0] + 1));
    MPI_Aint *addrs = malloc(sizeof(MPI_Aint) * (size_t)(n[1] + 1));
    MPI_Count *counts = malloc(sizeof(MPI_Count) * (size_t)(n[2] + 1));
    MPI_Datatype *types = malloc(sizeof(MPI_Datatype) * (size_t)(n[3] + 1));
    int rc = !ints || !addrs || !counts || !types;
#if TESSI_MIO_LARGE_COUNT
    if (!rc)
        rc = MPI_Type_get_contents_c(dt, n[0], n[1], n[2], n[3], ints, addrs, counts, types);
#else
    if (!rc)
        rc = MPI_Type_get_contents(dt, (int)n[0], (int)n[1], (int)n[3], ints, addrs, types);
#endif
    if (rc)
        *unit = -1;
    for (int64_t i = 0; !rc && i < n[3]; i++) {
        int c;
        int64_t m[4];
        leaves(types[i], level + 1, unit);
        if (envelope(types[i], &c, m) == MPI_SUCCESS && c != MPI_COMBINER_NAMED)
            MPI_Type_free(&types[i]);
    }
    free(ints);
    free(addrs);
    free(counts);
    free(types);
}

int tessi_mio_external32_unit(MPI_Datatype dt, const char *who, int64_t *unit)
{
    tess_type *t;
    int rc = tessi_mio_type(dt, who, &t); /* makes the entry */
    if (rc)
        return rc;
    uint64_t key = key_of(dt);
    pthread_mutex_lock(&lock);
    entry *e = find(key);
    int64_t u = e ? e->unit : 0;
    pthread_mutex_unlock(&lock);
    if (u == 0) {
        leaves(dt, 0, &u);
        if (u == 0) /* no data at all */
            u = 1;
        pthread_mutex_lock(&lock);
        if ((e = find(key)))
            e->unit = u;
        pthread_mutex_unlock(&lock);
    }
    if (u < 0)
        return tessi_mio_error(MPI_ERR_CONVERSION, who, "external32: the datatype mixes "
                               "elements of different sizes, or has elements whose external32 "
                               "size differs from the native one (long, wchar, long double): "
                               "not supported");
    *unit = u;
    return MPI_SUCCESS;
}

void tessi_mio_byteswap(void *p, int64_t n, int64_t unit)
{
    char *c = p;
    if (unit <= 1 || __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__)
        return;
    for (int64_t i = 0; i + unit <= n; i += unit)
        for (int64_t a = i, b = i + unit - 1; a < b; a++, b--) {
            char x = c[a];
            c[a] = c[b];
            c[b] = x;
        }
}
