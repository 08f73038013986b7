/*
 * open.c - MPI_File_open, close and delete, and the calls on a whole file: size, preallocate,
 * sync, amode, group, atomicity, info.
 *
 * Open is collective and never leaves ranks disagreeing: the arguments are checked on every
 * rank (MPI_ERR_AMODE, MPI_ERR_NOT_SAME for amodes that differ), the hints made (hints.c), then
 * tess_file_open_mpi opens the file (rank 0 creates it; every verdict agreed), then the shared
 * file pointer is made. Whatever fails, every rank gets an error and nothing stays open.
 * A file name may carry ROMIO's file-system prefix ("ufs:", "nfs:", ...): it is removed.
 */
#include "mpiio.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *strip_prefix(const char *name)
{
    static const char *const prefixes[] = {"ufs:", "nfs:", "testfs:", "xfs:", "lustre:",
                                           "gpfs:", "panfs:", "pvfs2:", "daos:", "ime:",
                                           "quobyte:", "bg:", "bglockless:"};
    for (size_t i = 0; name && i < sizeof prefixes / sizeof prefixes[0]; i++)
        if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0)
            return name + strlen(prefixes[i]);
    return name;
}

static int check_amode(int amode, const char *who)
{
    const int known = MPI_MODE_RDONLY | MPI_MODE_WRONLY | MPI_MODE_RDWR | MPI_MODE_CREATE |
                      MPI_MODE_EXCL | MPI_MODE_DELETE_ON_CLOSE | MPI_MODE_UNIQUE_OPEN |
                      MPI_MODE_SEQUENTIAL | MPI_MODE_APPEND;
    int modes = !!(amode & MPI_MODE_RDONLY) + !!(amode & MPI_MODE_WRONLY) +
                !!(amode & MPI_MODE_RDWR);
    const char *why = amode & ~known ? "unknown bits"
                      : modes != 1 ? "exactly one of MPI_MODE_RDONLY, MPI_MODE_WRONLY and "
                                     "MPI_MODE_RDWR is needed"
                      : (amode & MPI_MODE_RDONLY) && (amode & (MPI_MODE_CREATE | MPI_MODE_EXCL))
                          ? "MPI_MODE_CREATE and MPI_MODE_EXCL need write access"
                      : (amode & MPI_MODE_RDWR) && (amode & MPI_MODE_SEQUENTIAL)
                          ? "MPI_MODE_SEQUENTIAL does not go with MPI_MODE_RDWR"
                          : NULL;
    return why ? tessi_mio_error(MPI_ERR_AMODE, who, "amode 0x%x: %s", (unsigned)amode, why)
               : MPI_SUCCESS;
}

static int tess_flags(int amode)
{
    return (amode & MPI_MODE_RDONLY ? TESS_RDONLY : amode & MPI_MODE_WRONLY ? TESS_WRONLY
                                                                             : TESS_RDWR) |
           (amode & MPI_MODE_CREATE ? TESS_CREATE : 0) | (amode & MPI_MODE_EXCL ? TESS_EXCL : 0);
}

static void release(tessi_mio_file *mf)
{
    if (!mf)
        return;
    tessi_mio_view_release(mf);
    tess_info_free(mf->hints);
    free(mf->scratch);
    free(mf->path);
    if (mf->comm != MPI_COMM_NULL)
        MPI_Comm_free(&mf->comm);
    free(mf);
}

/* Everything after the arguments are agreed: hints, Tessera's open, the shared pointer. */
static int open_file(tessi_mio_file *mf, const char *path, MPI_Info info, const char *who)
{
    int code = tessi_mio_hints_make(mf->comm, info, &mf->hints, who);
    if (code == MPI_SUCCESS && !(mf->scratch = malloc(sizeof(int64_t) * 2 * (size_t)mf->size)))
        code = tessi_mio_error(MPI_ERR_NO_MEM, who, "out of memory");
    if ((code = tessi_mio_agree(mf->comm, code, who)))
        return code;
    int rc = tess_file_open_mpi(mf->comm, path, tess_flags(mf->amode), mf->hints, &mf->tf);
    if (rc) /* agreed by tess_file_open_mpi; the file named on every rank */
        return tessi_mio_error(tessi_mio_class(rc), who, "'%s': %s", path, tess_last_error());
    code = tessi_mio_shared_create(mf, who);
    int64_t size = 0;
    if (code == MPI_SUCCESS && (mf->amode & MPI_MODE_APPEND)) {
        /* both pointers start at the end of file (the default view counts bytes) */
        if ((rc = tess_file_get_size(mf->tf, &size)))
            code = tessi_mio_tess_error(rc, who);
        mf->fp = size;
        if (code == MPI_SUCCESS)
            code = tessi_mio_shared_store(mf, size, who);
    }
    tessi_mio_errhandler_inherit(mf);
    if (code == MPI_SUCCESS)
        code = tessi_mio_register(mf);
    if ((code = tessi_mio_agree(mf->comm, code, who))) {
        tessi_mio_unregister(mf);
        tessi_mio_shared_free(mf);
        tess_file_close(mf->tf); /* collective: every rank is here */
        mf->tf = NULL;
    }
    return code;
}

TESSI_MIO_API int PMPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info,
                                 MPI_File *fh)
{
    TESSI_MIO_FORWARD(MPI_File_open, comm, filename, amode, info, fh);
    static const char who[] = "MPI_File_open";
    int inter = 0, code = MPI_SUCCESS;
    if (comm == MPI_COMM_NULL || MPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter)
        return tessi_mio_raise(NULL, tessi_mio_error(MPI_ERR_COMM, who, "%s",
                                                     comm == MPI_COMM_NULL
                                                         ? "the communicator is MPI_COMM_NULL"
                                                         : "not an intracommunicator"));
    tessi_mio_file *mf = calloc(1, sizeof *mf);
    const char *path = strip_prefix(filename);
    if (!mf)
        code = tessi_mio_error(MPI_ERR_NO_MEM, who, "out of memory");
    else if (!filename || !fh)
        code = tessi_mio_error(MPI_ERR_ARG, who, "%s is NULL", filename ? "fh" : "filename");
    else if (!(mf->path = strdup(path)))
        code = tessi_mio_error(MPI_ERR_NO_MEM, who, "out of memory");
    else
        code = check_amode(amode, who);
    MPI_Comm dup = MPI_COMM_NULL;
    int err = MPI_Comm_dup(comm, &dup);
    if (err != MPI_SUCCESS) {
        release(mf);
        return tessi_mio_raise(NULL, code ? code : err);
    }
    if (mf) {
        mf->comm = dup;
        mf->amode = amode;
        MPI_Comm_rank(dup, &mf->rank);
        MPI_Comm_size(dup, &mf->size);
        mf->shared.win = MPI_WIN_NULL;
        tessi_mio_view_default(mf);
    }
    int64_t same[1] = {amode};
    code = tessi_mio_agree_same(dup, code, same, 1, "amodes", who);
    if (code == MPI_SUCCESS)
        code = open_file(mf, mf->path, info, who);
    if (code != MPI_SUCCESS) {
        if (!mf)
            MPI_Comm_free(&dup);
        release(mf);
        return tessi_mio_raise(NULL, code);
    }
    *fh = mf->handle;
    return MPI_SUCCESS;
}
TESSI_MIO_ALIAS(MPI_File_open);

/* One line for TESS_MPIIO_VERBOSE=1 at close (rank 0; sums over the ranks). */
static void verbose_line(tessi_mio_file *mf)
{
    const char *v = getenv("TESS_MPIIO_VERBOSE");
    if (!v || strcmp(v, "1") != 0)
        return;
    tess_stats st;
    if (tess_file_stats(mf->tf, &st))
        memset(&st, 0, sizeof st);
    int64_t sum[8 + TESS_METHOD_MAX + TESSI_MIO_N_KINDS], mx[2] = {st.max_access,
                                                                     (int64_t)(st.io_seconds *
                                                                               1e6)};
    int64_t mn = st.min_access ? st.min_access : INT64_MAX;
    int64_t mine[] = {st.desired_bytes, st.accessed_bytes, st.io_ops, st.resent_bytes,
                      st.regions, st.lock_ops, st.lock_fallbacks, st.auto_decisions};
    memcpy(sum, mine, sizeof mine);
    memcpy(sum + 8, st.method_accesses, sizeof(int64_t) * TESS_METHOD_MAX);
    memcpy(sum + 8 + TESS_METHOD_MAX, mf->calls, sizeof mf->calls);
    int n = (int)(sizeof sum / sizeof sum[0]);
    MPI_Allreduce(MPI_IN_PLACE, sum, n, MPI_INT64_T, MPI_SUM, mf->comm);
    MPI_Allreduce(MPI_IN_PLACE, mx, 2, MPI_INT64_T, MPI_MAX, mf->comm);
    MPI_Allreduce(MPI_IN_PLACE, &mn, 1, MPI_INT64_T, MPI_MIN, mf->comm);
    if (mf->rank != 0)
        return;
    char methods[256] = "";
    for (int m = 1; m < TESS_METHOD_MAX; m++)
        if (sum[8 + m]) {
            size_t used = strlen(methods);
            snprintf(methods + used, sizeof methods - used, "%s%s %lld", used ? ", " : "",
                     tess_method_name(m), (long long)sum[8 + m]);
        }
    const int64_t *c = sum + 8 + TESS_METHOD_MAX;
    fprintf(stderr,
            "tessera_mpiio: %s: %d ranks; calls indep %lld coll %lld shared %lld ordered %lld "
            "nonblocking %lld split %lld; methods: %s; desired %lld B, accessed %lld B, "
            "io_ops %lld, resent %lld B, regions %lld, lock_ops %lld, lock_fallbacks %lld, "
            "access %lld..%lld B, io %.6f s (slowest rank)\n",
            mf->path, mf->size, (long long)c[TESSI_MIO_N_INDEP], (long long)c[TESSI_MIO_N_COLL],
            (long long)c[TESSI_MIO_N_SHARED], (long long)c[TESSI_MIO_N_ORDERED],
            (long long)c[TESSI_MIO_N_NONBLOCKING], (long long)c[TESSI_MIO_N_SPLIT],
            methods[0] ? methods : "none (two-phase only, or no access)", (long long)sum[0],
            (long long)sum[1], (long long)sum[2], (long long)sum[3], (long long)sum[4],
            (long long)sum[5], (long long)sum[6], (long long)(mn == INT64_MAX ? 0 : mn),
            (long long)mx[0], (double)mx[1] / 1e6);
}

int tessi_mio_close(tessi_mio_file *mf, const char *who)
{
    verbose_line(mf);
    tessi_mio_unregister(mf);
    tessi_mio_shared_free(mf);
    int rc = tess_file_close(mf->tf); /* collective: one verdict */
    int code = rc ? tessi_mio_tess_error(rc, who) : MPI_SUCCESS;
    if (mf->amode & MPI_MODE_DELETE_ON_CLOSE) {
        /* every rank has closed (tess_file_close agreed); rank 0 removes the file */
        rc = mf->rank == 0 ? tess_file_delete(mf->path, mf->hints) : 0;
        code = tessi_mio_agree(mf->comm, code ? code : rc ? tessi_mio_tess_error(rc, who) : 0,
                               who);
    }
    release(mf);
    return code;
}

TESSI_MIO_API int PMPI_File_close(MPI_File *fh)
{
    TESSI_MIO_FORWARD(MPI_File_close, fh);
    static const char who[] = "MPI_File_close";
    tessi_mio_file *mf = fh ? tessi_mio_lookup(*fh) : NULL;
    if (!mf)
        return tessi_mio_raise(NULL, tessi_mio_error(MPI_ERR_FILE, who, "invalid file handle"));
    /* the handler outlives the file for this call's own error */
    tessi_mio_file keep = {.eh = mf->eh, .handle = mf->handle};
    int code = tessi_mio_close(mf, who);
    *fh = MPI_FILE_NULL;
    return tessi_mio_raise(code ? &keep : NULL, code);
}
TESSI_MIO_ALIAS(MPI_File_close);

TESSI_MIO_API int PMPI_File_delete(const char *filename, MPI_Info info)
{
    TESSI_MIO_FORWARD(MPI_File_delete, filename, info);
    static const char who[] = "MPI_File_delete";
    tess_info *ti = NULL;
    if (!filename)
        return tessi_mio_raise(NULL, tessi_mio_error(MPI_ERR_ARG, who, "filename is NULL"));
    int code = tessi_mio_hints_make(MPI_COMM_SELF, info, &ti, who);
    int rc = code ? 0 : tess_file_delete(strip_prefix(filename), ti);
    tess_info_free(ti);
    return tessi_mio_raise(NULL, rc ? tessi_mio_tess_error(rc, who) : code);
}
TESSI_MIO_ALIAS(MPI_File_delete);

/* ------------------------------------------------------------------ whole-file calls */

/* The file of fh for call `who`, or NULL after raising MPI_ERR_FILE into *code. */
static tessi_mio_file *file_of(MPI_File fh, const char *who, int *code)
{
    tessi_mio_file *mf = tessi_mio_lookup(fh);
    *code = mf ? MPI_SUCCESS
               : tessi_mio_raise(NULL, tessi_mio_error(MPI_ERR_FILE, who, "invalid file "
                                                       "handle"));
    return mf;
}

/* set_size and preallocate: collective, the same size everywhere, rank 0 acts. */
static int resize(MPI_File fh, MPI_Offset size, bool preallocate, const char *who)
{
    int code;
    tessi_mio_file *mf = file_of(fh, who, &code);
    if (!mf)
        return code;
    if (size < 0)
        code = tessi_mio_error(MPI_ERR_ARG, who, "size %lld < 0", (long long)size);
    else if (mf->amode & MPI_MODE_RDONLY)
        code = tessi_mio_error(MPI_ERR_READ_ONLY, who, "the file was opened MPI_MODE_RDONLY");
    else if (mf->amode & MPI_MODE_SEQUENTIAL)
        code = tessi_mio_error(MPI_ERR_UNSUPPORTED_OPERATION, who, "not with "
                               "MPI_MODE_SEQUENTIAL");
    int64_t same[1] = {size};
    code = tessi_mio_agree_same(mf->comm, code, same, 1, "sizes", who);
    if (code == MPI_SUCCESS) {
        int rc = mf->rank != 0 ? 0
                 : preallocate ? tess_file_preallocate(mf->tf, size)
                               : tess_file_set_size(mf->tf, size);
        code = tessi_mio_agree(mf->comm, rc ? tessi_mio_tess_error(rc, who) : 0, who);
    }
    return tessi_mio_raise(mf, code);
}

TESSI_MIO_API int PMPI_File_set_size(MPI_File fh, MPI_Offset size)
{
    TESSI_MIO_FORWARD(MPI_File_set_size, fh, size);
    return resize(fh, size, false, "MPI_File_set_size");
}
TESSI_MIO_ALIAS(MPI_File_set_size);

TESSI_MIO_API int PMPI_File_preallocate(MPI_File fh, MPI_Offset size)
{
    TESSI_MIO_FORWARD(MPI_File_preallocate, fh, size);
    return resize(fh, size, true, "MPI_File_preallocate");
}
TESSI_MIO_ALIAS(MPI_File_preallocate);

TESSI_MIO_API int PMPI_File_get_size(MPI_File fh, MPI_Offset *size)
{
    TESSI_MIO_FORWARD(MPI_File_get_size, fh, size);
    static const char who[] = "MPI_File_get_size";
    int code;
    int64_t s = 0;
    tessi_mio_file *mf = file_of(fh, who, &code);
    if (!mf)
        return code;
    int rc = size ? tess_file_get_size(mf->tf, &s) : 0;
    if (!size)
        code = tessi_mio_error(MPI_ERR_ARG, who, "size is NULL");
    else if (rc)
        code = tessi_mio_tess_error(rc, who);
    else
        *size = s;
    return tessi_mio_raise(mf, code);
}
TESSI_MIO_ALIAS(MPI_File_get_size);

TESSI_MIO_API int PMPI_File_sync(MPI_File fh)
{
    TESSI_MIO_FORWARD(MPI_File_sync, fh);
    static const char who[] = "MPI_File_sync";
    int code;
    tessi_mio_file *mf = file_of(fh, who, &code);
    if (!mf)
        return code;
    int rc = mf->amode & MPI_MODE_RDONLY ? 0 : tess_file_sync(mf->tf);
    if (mf->amode & MPI_MODE_RDONLY) /* as ROMIO */
        code = tessi_mio_error(MPI_ERR_READ_ONLY, who, "the file was opened MPI_MODE_RDONLY");
    else if (rc)
        code = tessi_mio_tess_error(rc, who);
    /* collective: after it, every rank's writes are on storage (sync-barrier-sync) */
    return tessi_mio_raise(mf, tessi_mio_agree(mf->comm, code, who));
}
TESSI_MIO_ALIAS(MPI_File_sync);

TESSI_MIO_API int PMPI_File_get_amode(MPI_File fh, int *amode)
{
    TESSI_MIO_FORWARD(MPI_File_get_amode, fh, amode);
    int code;
    tessi_mio_file *mf = file_of(fh, "MPI_File_get_amode", &code);
    if (mf && !amode)
        code = tessi_mio_raise(mf, tessi_mio_error(MPI_ERR_ARG, "MPI_File_get_amode", "amode "
                                                   "is NULL"));
    else if (mf)
        *amode = mf->amode;
    return code;
}
TESSI_MIO_ALIAS(MPI_File_get_amode);

TESSI_MIO_API int PMPI_File_get_group(MPI_File fh, MPI_Group *group)
{
    TESSI_MIO_FORWARD(MPI_File_get_group, fh, group);
    static const char who[] = "MPI_File_get_group";
    int code;
    tessi_mio_file *mf = file_of(fh, who, &code);
    if (!mf)
        return code;
    int rc = group ? MPI_Comm_group(mf->comm, group) : MPI_ERR_ARG;
    if (rc != MPI_SUCCESS)
        code = tessi_mio_error(MPI_ERR_ARG, who, group ? "MPI_Comm_group failed (MPI error %d)"
                                                       : "group is NULL", rc);
    return tessi_mio_raise(mf, code);
}
TESSI_MIO_ALIAS(MPI_File_get_group);

TESSI_MIO_API int PMPI_File_set_atomicity(MPI_File fh, int flag)
{
    TESSI_MIO_FORWARD(MPI_File_set_atomicity, fh, flag);
    static const char who[] = "MPI_File_set_atomicity";
    int code;
    tessi_mio_file *mf = file_of(fh, who, &code);
    if (!mf)
        return code;
    int64_t same[1] = {flag != 0};
    code = tessi_mio_agree_same(mf->comm, MPI_SUCCESS, same, 1, "flags", who);
    if (code == MPI_SUCCESS) { /* storage without locks refuses on every rank alike */
        int before = 0;
        tess_file_get_atomicity(mf->tf, &before);
        int rc = tess_file_set_atomicity(mf->tf, flag != 0);
        code = tessi_mio_agree(mf->comm, rc ? tessi_mio_tess_error(rc, who) : 0, who);
        if (code != MPI_SUCCESS && rc == 0) /* failed elsewhere: keep the ranks alike */
            tess_file_set_atomicity(mf->tf, before);
    }
    return tessi_mio_raise(mf, code);
}
TESSI_MIO_ALIAS(MPI_File_set_atomicity);

TESSI_MIO_API int PMPI_File_get_atomicity(MPI_File fh, int *flag)
{
    TESSI_MIO_FORWARD(MPI_File_get_atomicity, fh, flag);
    static const char who[] = "MPI_File_get_atomicity";
    int code, on = 0;
    tessi_mio_file *mf = file_of(fh, who, &code);
    if (!mf)
        return code;
    int rc = flag ? tess_file_get_atomicity(mf->tf, &on) : 0;
    if (!flag)
        code = tessi_mio_error(MPI_ERR_ARG, who, "flag is NULL");
    else if (rc)
        code = tessi_mio_tess_error(rc, who);
    else
        *flag = on;
    return tessi_mio_raise(mf, code);
}
TESSI_MIO_ALIAS(MPI_File_get_atomicity);

TESSI_MIO_API int PMPI_File_get_info(MPI_File fh, MPI_Info *info_used)
{
    TESSI_MIO_FORWARD(MPI_File_get_info, fh, info_used);
    static const char who[] = "MPI_File_get_info";
    int code;
    tessi_mio_file *mf = file_of(fh, who, &code);
    if (!mf)
        return code;
    code = info_used ? tessi_mio_hints_get(mf, info_used)
                     : tessi_mio_error(MPI_ERR_ARG, who, "info_used is NULL");
    return tessi_mio_raise(mf, code);
}
TESSI_MIO_ALIAS(MPI_File_get_info);

/*
 * Hints cannot change once Tessera has opened the file (they shape its methods and
 * aggregators); MPI lets an implementation ignore hints, so set_info only checks its argument
 * and agrees, as a collective call must.
 */
TESSI_MIO_API int PMPI_File_set_info(MPI_File fh, MPI_Info info)
{
    TESSI_MIO_FORWARD(MPI_File_set_info, fh, info);
    static const char who[] = "MPI_File_set_info";
    int code, nkeys = 0;
    tessi_mio_file *mf = file_of(fh, who, &code);
    if (!mf)
        return code;
    if (info != MPI_INFO_NULL && MPI_Info_get_nkeys(info, &nkeys) != MPI_SUCCESS)
        code = tessi_mio_error(MPI_ERR_INFO, who, "invalid info object");
    return tessi_mio_raise(mf, tessi_mio_agree(mf->comm, code, who));
}
TESSI_MIO_ALIAS(MPI_File_set_info);
