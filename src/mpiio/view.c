/*
 * view.c - file views (MPI_File_set_view, get_view), data representations, type extents and
 * byte offsets, MPI_Register_datarep.
 *
 * The view is Tessera's (tess_file_set_view, collective): the MPI etype and filetype are
 * imported through the type cache. MPI_File_get_view must return the types the program gave, as
 * new committed duplicates for derived ones, even if the program freed its handles: the file
 * keeps a duplicate of each and hands out duplicates of those.
 *
 * Data representations: "native", "internal" (the same bytes here) and "external32" (types.c),
 * in lower or upper case as ROMIO accepts them. MPI_Register_datarep records a name (a second
 * registration of it, or of a predefined one, is MPI_ERR_DUP_DATAREP); a view in a registered
 * representation gets MPI_ERR_UNSUPPORTED_DATAREP, as in ROMIO.
 */
#include "mpiio.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char (*registered)[MPI_MAX_DATAREP_STRING];
static int nregistered;

static const char *const builtin_reps[] = {"native", "internal", "external32"};

/* TESSI_MIO_NATIVE... for a predefined representation name, else -1. */
static int datarep_id(const char *name)
{
    static const char *const upper[] = {"NATIVE", "INTERNAL", "EXTERNAL32"};
    for (int i = 0; name && i < 3; i++)
        if (strcmp(name, builtin_reps[i]) == 0 || strcmp(name, upper[i]) == 0)
            return i;
    return -1;
}

static bool is_registered(const char *name)
{
    bool found = false;
    pthread_mutex_lock(&lock);
    for (int i = 0; !found && i < nregistered; i++)
        found = strcmp(registered[i], name) == 0;
    pthread_mutex_unlock(&lock);
    return found;
}

static bool named(MPI_Datatype dt)
{
    int ni, na, nd, combiner = MPI_COMBINER_NAMED;
    MPI_Type_get_envelope(dt, &ni, &na, &nd, &combiner);
    return combiner == MPI_COMBINER_NAMED;
}

/* A committed duplicate of dt (dt itself when predefined). */
static int dup_type(MPI_Datatype dt, MPI_Datatype *out)
{
    if (named(dt)) {
        *out = dt;
        return MPI_SUCCESS;
    }
    int rc = MPI_Type_dup(dt, out);
    if (rc == MPI_SUCCESS && (rc = MPI_Type_commit(out)) != MPI_SUCCESS)
        MPI_Type_free(out);
    return rc;
}

static void free_type(MPI_Datatype *dt)
{
    if (*dt != MPI_DATATYPE_NULL && !named(*dt))
        MPI_Type_free(dt);
    *dt = MPI_DATATYPE_NULL;
}

void tessi_mio_view_default(tessi_mio_file *mf)
{
    mf->disp = 0;
    mf->etype = mf->filetype = MPI_BYTE;
    mf->tetype = mf->tfiletype = TESS_BYTE;
    mf->esize = mf->ftsize = mf->ftextent = 1;
    mf->datarep = TESSI_MIO_NATIVE;
    strcpy(mf->datarep_name, "native");
}

void tessi_mio_view_release(tessi_mio_file *mf)
{
    free_type(&mf->etype);
    free_type(&mf->filetype);
    tess_type_free(mf->tetype);
    tess_type_free(mf->tfiletype);
    mf->tetype = mf->tfiletype = NULL;
}

int tessi_mio_view_byte(tessi_mio_file *mf, int64_t offset, const char *who, int64_t *byte)
{
    int64_t pos, tile, in, at;
    tess_cursor *c = NULL;
    tess_region r = {0, 0};
    int64_t n = 0;
    if (mf->ftsize <= 0)
        return tessi_mio_error(MPI_ERR_ARG, who, "the view's filetype has no data");
    if (__builtin_mul_overflow(offset, mf->esize, &pos))
        return tessi_mio_error(MPI_ERR_ARG, who, "offset %lld overflows", (long long)offset);
    tile = pos / mf->ftsize;
    in = pos % mf->ftsize;
    int rc = tess_cursor_create(mf->tfiletype, 1, &c);
    if (rc == 0 && (rc = tess_cursor_seek(c, in)) == 0)
        rc = tess_cursor_next(c, &r, 1, -1, &n);
    tess_cursor_free(c);
    if (rc)
        return tessi_mio_tess_error(rc, who);
    if (n != 1 || __builtin_mul_overflow(tile, mf->ftextent, &at) ||
        __builtin_add_overflow(at, r.off, &at) || __builtin_add_overflow(at, mf->disp, &at))
        return tessi_mio_error(MPI_ERR_ARG, who, "offset %lld is beyond the reach of the view",
                               (long long)offset);
    *byte = at;
    return MPI_SUCCESS;
}

int tessi_mio_view_eof(tessi_mio_file *mf, const char *who, int64_t *offset)
{
    int64_t size = 0, lo = 0, hi, byte = 0;
    int rc = tess_file_get_size(mf->tf, &size);
    if (rc)
        return tessi_mio_tess_error(rc, who);
    if (mf->ftsize <= 0 || mf->ftextent <= 0 || size <= mf->disp) {
        *offset = 0;
        return MPI_SUCCESS;
    }
    /* the first etype whose byte lies at or beyond the end (positions rise with the offset):
       tiles start at disp + k * extent and hold data at nonnegative displacements */
    hi = ((size - mf->disp) / mf->ftextent + 2) * (mf->ftsize / mf->esize);
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if ((rc = tessi_mio_view_byte(mf, mid, who, &byte)))
            return rc;
        if (byte >= size)
            hi = mid;
        else
            lo = mid + 1;
    }
    *offset = lo;
    return MPI_SUCCESS;
}

/* The local checks of set_view; on success *te, *tf hold the imported types (borrowed). */
static int view_checks(tessi_mio_file *mf, MPI_Offset disp, MPI_Datatype etype,
                       MPI_Datatype filetype, const char *datarep, tess_type **te,
                       tess_type **tf, int *rep)
{
    static const char who[] = "MPI_File_set_view";
    bool seq = mf->amode & MPI_MODE_SEQUENTIAL;
    int rc;
    if (disp < 0 && disp != MPI_DISPLACEMENT_CURRENT)
        return tessi_mio_error(MPI_ERR_ARG, who, "displacement %lld < 0", (long long)disp);
    if (seq != (disp == MPI_DISPLACEMENT_CURRENT))
        return tessi_mio_error(MPI_ERR_ARG, who, seq ? "a file opened with MPI_MODE_SEQUENTIAL "
                               "needs the displacement MPI_DISPLACEMENT_CURRENT"
                               : "MPI_DISPLACEMENT_CURRENT needs MPI_MODE_SEQUENTIAL");
    if (etype == MPI_DATATYPE_NULL || filetype == MPI_DATATYPE_NULL)
        return tessi_mio_error(MPI_ERR_ARG, who, "the %s is MPI_DATATYPE_NULL",
                               etype == MPI_DATATYPE_NULL ? "etype" : "filetype");
    if ((*rep = datarep_id(datarep)) < 0)
        return tessi_mio_error(MPI_ERR_UNSUPPORTED_DATAREP, who, "data representation '%s' "
                               "is not supported (%s)", datarep ? datarep : "(null)",
                               datarep && is_registered(datarep)
                                   ? "registered data representations are not, as in ROMIO"
                                   : "native, internal and external32 are");
    if ((rc = tessi_mio_type(etype, who, te)) || (rc = tessi_mio_type(filetype, who, tf)))
        return rc;
    int64_t es = tess_type_size(*te), fs = tess_type_size(*tf);
    if (es <= 0 || fs % es)
        return tessi_mio_error(MPI_ERR_ARG, who, "the filetype's size (%lld) is not a multiple "
                               "of the etype's (%lld)", (long long)fs, (long long)es);
    return MPI_SUCCESS;
}

TESSI_MIO_API int PMPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype,
                                     MPI_Datatype filetype, const char *datarep, MPI_Info info)
{
    TESSI_MIO_FORWARD(MPI_File_set_view, fh, disp, etype, filetype, datarep, info);
    static const char who[] = "MPI_File_set_view";
    tessi_mio_file *mf = tessi_mio_lookup(fh);
    tess_type *te = NULL, *tf = NULL;
    int rep = 0;
    (void)info; /* no hint of Tessera changes with the view */
    if (!mf)
        return tessi_mio_raise(NULL, tessi_mio_error(MPI_ERR_FILE, who, "invalid file handle"));
    MPI_Datatype de = MPI_DATATYPE_NULL, df = MPI_DATATYPE_NULL;
    int code = view_checks(mf, disp, etype, filetype, datarep, &te, &tf, &rep);
    if (code == MPI_SUCCESS) {
        int rc = dup_type(etype, &de);
        if (rc == MPI_SUCCESS)
            rc = dup_type(filetype, &df);
        if (rc != MPI_SUCCESS)
            code = tessi_mio_error(MPI_ERR_TYPE, who, "cannot duplicate the view's types (MPI "
                                   "error %d)", rc);
    }
    int64_t same[2] = {rep, code ? 0 : tess_type_size(te)};
    code = tessi_mio_agree_same(mf->comm, code, same, 2, "data representations or etype "
                                "sizes", who);
    if (code == MPI_SUCCESS && disp == MPI_DISPLACEMENT_CURRENT) {
        int64_t at = 0, byte = 0; /* every rank reads the shared pointer, then agrees */
        code = tessi_mio_shared_add(mf, 0, &at, who);
        if (code == MPI_SUCCESS)
            code = tessi_mio_view_byte(mf, at, who, &byte);
        disp = byte;
        code = tessi_mio_agree(mf->comm, code, who);
    }
    /* the view resets the shared pointer: everybody is in this call (the agreement above) and
       nobody leaves it before tess_file_set_view's own agreement (below) */
    if (code == MPI_SUCCESS)
        code = tessi_mio_shared_store(mf, 0, who);
    int rc = code == MPI_SUCCESS ? tess_file_set_view(mf->tf, disp, te, tf) : 0;
    if (rc)
        code = tessi_mio_tess_error(rc, who); /* collective: the same verdict everywhere */
    if (code != MPI_SUCCESS) {
        free_type(&de);
        free_type(&df);
        return tessi_mio_raise(mf, code);
    }
    tessi_mio_view_release(mf);
    mf->disp = disp;
    mf->etype = de;
    mf->filetype = df;
    mf->tetype = tess_type_ref(te);
    mf->tfiletype = tess_type_ref(tf);
    mf->esize = tess_type_size(te);
    mf->ftsize = tess_type_size(tf);
    mf->ftextent = tess_type_extent(tf);
    mf->datarep = rep;
    strcpy(mf->datarep_name, builtin_reps[rep]);
    mf->fp = 0;
    return MPI_SUCCESS;
}
TESSI_MIO_ALIAS(MPI_File_set_view);

TESSI_MIO_API int PMPI_File_get_view(MPI_File fh, MPI_Offset *disp, MPI_Datatype *etype,
                                     MPI_Datatype *filetype, char *datarep)
{
    TESSI_MIO_FORWARD(MPI_File_get_view, fh, disp, etype, filetype, datarep);
    static const char who[] = "MPI_File_get_view";
    tessi_mio_file *mf = tessi_mio_lookup(fh);
    if (!mf)
        return tessi_mio_raise(NULL, tessi_mio_error(MPI_ERR_FILE, who, "invalid file handle"));
    if (!disp || !etype || !filetype || !datarep)
        return tessi_mio_raise(mf, tessi_mio_error(MPI_ERR_ARG, who, "an output argument is "
                                                   "NULL"));
    MPI_Datatype e = MPI_DATATYPE_NULL, f = MPI_DATATYPE_NULL;
    int rc = dup_type(mf->etype, &e);
    if (rc == MPI_SUCCESS && (rc = dup_type(mf->filetype, &f)) != MPI_SUCCESS)
        free_type(&e);
    if (rc != MPI_SUCCESS)
        return tessi_mio_raise(mf, tessi_mio_error(MPI_ERR_TYPE, who, "cannot duplicate the "
                                                   "view's types (MPI error %d)", rc));
    *disp = mf->disp;
    *etype = e;
    *filetype = f;
    strcpy(datarep, mf->datarep_name);
    return MPI_SUCCESS;
}
TESSI_MIO_ALIAS(MPI_File_get_view);

/* The extent of dt in the file: the native one in every representation (as views use). */
static int type_extent(MPI_File fh, MPI_Datatype dt, int64_t *extent)
{
    static const char who[] = "MPI_File_get_type_extent";
    tessi_mio_file *mf = tessi_mio_lookup(fh);
    MPI_Aint lb, ext;
    if (!mf)
        return tessi_mio_raise(NULL, tessi_mio_error(MPI_ERR_FILE, who, "invalid file handle"));
    int rc = !extent ? tessi_mio_error(MPI_ERR_ARG, who, "extent is NULL")
             : dt == MPI_DATATYPE_NULL ? tessi_mio_error(MPI_ERR_TYPE, who, "the datatype is "
                                                         "MPI_DATATYPE_NULL")
             : MPI_Type_get_extent(dt, &lb, &ext) != MPI_SUCCESS
                 ? tessi_mio_error(MPI_ERR_TYPE, who, "invalid datatype")
                 : MPI_SUCCESS;
    if (rc == MPI_SUCCESS)
        *extent = ext;
    return tessi_mio_raise(mf, rc);
}

TESSI_MIO_API int PMPI_File_get_type_extent(MPI_File fh, MPI_Datatype datatype,
                                            MPI_Aint *extent)
{
    TESSI_MIO_FORWARD(MPI_File_get_type_extent, fh, datatype, extent);
    int64_t e = 0;
    int rc = type_extent(fh, datatype, extent ? &e : NULL);
    if (rc == MPI_SUCCESS)
        *extent = (MPI_Aint)e;
    return rc;
}
TESSI_MIO_ALIAS(MPI_File_get_type_extent);

#if TESSI_MIO_LARGE_COUNT
TESSI_MIO_API int PMPI_File_get_type_extent_c(MPI_File fh, MPI_Datatype datatype,
                                              MPI_Count *extent)
{
    TESSI_MIO_FORWARD(MPI_File_get_type_extent_c, fh, datatype, extent);
    int64_t e = 0;
    int rc = type_extent(fh, datatype, extent ? &e : NULL);
    if (rc == MPI_SUCCESS)
        *extent = (MPI_Count)e;
    return rc;
}
TESSI_MIO_ALIAS(MPI_File_get_type_extent_c);
#endif

TESSI_MIO_API int PMPI_File_get_byte_offset(MPI_File fh, MPI_Offset offset, MPI_Offset *disp)
{
    TESSI_MIO_FORWARD(MPI_File_get_byte_offset, fh, offset, disp);
    static const char who[] = "MPI_File_get_byte_offset";
    tessi_mio_file *mf = tessi_mio_lookup(fh);
    int64_t byte = 0;
    int rc;
    if (!mf)
        return tessi_mio_raise(NULL, tessi_mio_error(MPI_ERR_FILE, who, "invalid file handle"));
    if (mf->amode & MPI_MODE_SEQUENTIAL)
        rc = tessi_mio_error(MPI_ERR_UNSUPPORTED_OPERATION, who, "not with "
                             "MPI_MODE_SEQUENTIAL");
    else if (offset < 0 || !disp)
        rc = tessi_mio_error(MPI_ERR_ARG, who, disp ? "offset %lld < 0" : "disp is NULL",
                             (long long)offset);
    else if ((rc = tessi_mio_view_byte(mf, offset, who, &byte)) == MPI_SUCCESS)
        *disp = byte;
    return tessi_mio_raise(mf, rc);
}
TESSI_MIO_ALIAS(MPI_File_get_byte_offset);

/* Record a data representation name (the conversion functions are not used: see the top). */
static int register_datarep(const char *name, bool has_extent_fn)
{
    static const char who[] = "MPI_Register_datarep";
    int rc = MPI_SUCCESS;
    if (!name || !name[0] || strlen(name) >= MPI_MAX_DATAREP_STRING || !has_extent_fn)
        return tessi_mio_raise(NULL, tessi_mio_error(MPI_ERR_ARG, who, "%s",
                                                     has_extent_fn ? "bad name"
                                                                   : "no extent function"));
    if (datarep_id(name) >= 0 || is_registered(name))
        return tessi_mio_raise(NULL, tessi_mio_error(MPI_ERR_DUP_DATAREP, who, "'%s' is "
                                                     "already defined", name));
    pthread_mutex_lock(&lock);
    void *p = realloc(registered, sizeof *registered * (size_t)(nregistered + 1));
    if (p) {
        registered = p;
        strcpy(registered[nregistered++], name);
    } else {
        rc = tessi_mio_error(MPI_ERR_NO_MEM, who, "out of memory");
    }
    pthread_mutex_unlock(&lock);
    return tessi_mio_raise(NULL, rc);
}

TESSI_MIO_API int PMPI_Register_datarep(const char *datarep,
                                        MPI_Datarep_conversion_function *read_conversion_fn,
                                        MPI_Datarep_conversion_function *write_conversion_fn,
                                        MPI_Datarep_extent_function *dtype_file_extent_fn,
                                        void *extra_state)
{
    TESSI_MIO_FORWARD(MPI_Register_datarep, datarep, read_conversion_fn, write_conversion_fn,
                      dtype_file_extent_fn, extra_state);
    return register_datarep(datarep, dtype_file_extent_fn != NULL);
}
TESSI_MIO_ALIAS(MPI_Register_datarep);

#if TESSI_MIO_LARGE_COUNT
TESSI_MIO_API int PMPI_Register_datarep_c(const char *datarep,
                                          MPI_Datarep_conversion_function_c *read_conversion_fn,
                                          MPI_Datarep_conversion_function_c *write_conversion_fn,
                                          MPI_Datarep_extent_function *dtype_file_extent_fn,
                                          void *extra_state)
{
    TESSI_MIO_FORWARD(MPI_Register_datarep_c, datarep, read_conversion_fn, write_conversion_fn,
                      dtype_file_extent_fn, extra_state);
    return register_datarep(datarep, dtype_file_extent_fn != NULL);
}
TESSI_MIO_ALIAS(MPI_Register_datarep_c);
#endif
