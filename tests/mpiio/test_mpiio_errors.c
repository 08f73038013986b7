/*
 * test_mpiio_errors.c - error classes, error strings and error handlers.
 *
 * Every failure must come back with the MPI class the standard (or, where it leaves room,
 * ROMIO) gives it and a string saying what failed; a failure on one rank of a collective call
 * must come back on every rank, without a hang, and leave the file usable. Error handlers:
 * MPI_ERRORS_RETURN by default, the default changed through MPI_FILE_NULL, user handlers made
 * with MPI_File_create_errhandler called with the right handle and code, get_errhandler and
 * call_errhandler.
 *
 * usage: test_mpiio_errors                run the argument and handler checks
 *        test_mpiio_errors fault ERRNO    the storage fails with ERRNO (TESS_FAULT) on the last
 *                                         rank only: writes and opens get the errno's class
 */
#include "mio_test.h"

static int rank, size;
static char path[256];

/* ------------------------------------------------------------------ user handler */

static int handler_calls, handler_code;
static MPI_File handler_file;

static void on_error(MPI_File *fh, int *code, ...)
{
    handler_calls++;
    handler_code = *code;
    handler_file = *fh;
}

static void on_comm_error(MPI_Comm *comm, int *code, ...) { (void)comm, (void)code; }

static int rep_extent(MPI_Datatype dt, MPI_Aint *extent, void *extra)
{
    (void)extra;
    MPI_Aint lb;
    return MPI_Type_get_extent(dt, &lb, extent);
}

static int class_of(int code)
{
    int c = -1;
    MPI_Error_class(code, &c);
    return c;
}

static void handlers(void)
{
    MPI_Errhandler eh, got, comm_eh;
    MPI_File fh, stale;
    int v = 0;
    snprintf(mt_where, sizeof mt_where, "error handlers");
    MT_OK(MPI_File_get_errhandler(MPI_FILE_NULL, &got));
    MT_CHECK(got == MPI_ERRORS_RETURN);
    MT_OK(MPI_Errhandler_free(&got));

    MT_OK(MPI_File_create_errhandler(on_error, &eh));
    MT_OK(MPI_File_set_errhandler(MPI_FILE_NULL, eh));
    /* a failing open calls the default handler with MPI_FILE_NULL */
    int rc = MPI_File_open(MPI_COMM_WORLD, "mio_no_such_dir/x", MPI_MODE_RDONLY, MPI_INFO_NULL,
                           &fh);
    MT_CHECK(rc != MPI_SUCCESS && handler_calls == 1 && handler_code == rc);
    MT_CHECK(handler_file == MPI_FILE_NULL && class_of(rc) == MPI_ERR_NO_SUCH_FILE);
    /* a file inherits the default at open; the program may free its handle meanwhile */
    MT_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL,
                        &fh));
    MT_OK(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN));
    MT_OK(MPI_Errhandler_free(&eh));
    rc = MPI_File_write_at(fh, -1, &v, 1, MPI_INT, MPI_STATUS_IGNORE);
    MT_CHECK(handler_calls == 2 && handler_code == rc && handler_file == fh);
    MT_CHECK(class_of(rc) == MPI_ERR_ARG);
    MT_OK(MPI_File_get_errhandler(fh, &got));
    MT_OK(MPI_File_call_errhandler(fh, MPI_ERR_OTHER));
    MT_CHECK(handler_calls == 3 && handler_code == MPI_ERR_OTHER);
    /* back to returning codes, per file */
    MT_OK(MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN));
    MT_ERR(MPI_File_write_at(fh, -1, &v, 1, MPI_INT, MPI_STATUS_IGNORE), MPI_ERR_ARG, "< 0");
    MT_CHECK(handler_calls == 3);
    MT_OK(MPI_File_set_errhandler(fh, got)); /* the reference get_errhandler returned */
    MT_OK(MPI_Errhandler_free(&got));
    MT_CHECK(MPI_File_call_errhandler(fh, MPI_ERR_IO) == MPI_SUCCESS && handler_calls == 4);
    MT_OK(MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN));
    /* a communicator's handler is not a file's */
    MT_OK(MPI_Comm_create_errhandler(on_comm_error, &comm_eh));
    MT_ERR(MPI_File_set_errhandler(fh, comm_eh), MPI_ERR_ARG, "not a file error handler");
    MT_OK(MPI_Errhandler_free(&comm_eh));
    stale = fh;
    MT_OK(MPI_File_close(&fh));
    MT_CHECK(fh == MPI_FILE_NULL);
    /* a closed handle is invalid: the default handler (MPI_ERRORS_RETURN) sees it */
    MT_ERR(MPI_File_write_at(stale, 0, &v, 1, MPI_INT, MPI_STATUS_IGNORE), MPI_ERR_FILE,
           "invalid file handle");
    MT_CHECK(handler_calls == 4);
}

/* ------------------------------------------------------------------ classes */

static void classes(void)
{
    MPI_File fh, fh2;
    MPI_Status st;
    int v[8] = {0};
    snprintf(mt_where, sizeof mt_where, "open errors");
    MT_ERR(MPI_File_open(MPI_COMM_WORLD, "mio_no_such_dir/x", MPI_MODE_RDONLY, MPI_INFO_NULL,
                         &fh), MPI_ERR_NO_SUCH_FILE, "mio_no_such_dir/x");
    MT_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL,
                        &fh));
    mt_require_tessera(fh);
    MT_ERR(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_EXCL,
                         MPI_INFO_NULL, &fh2), MPI_ERR_FILE_EXISTS, path);
    MT_ERR(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY | MPI_MODE_RDWR, MPI_INFO_NULL,
                         &fh2), MPI_ERR_AMODE, "exactly one");
    MT_ERR(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY | MPI_MODE_CREATE, MPI_INFO_NULL,
                         &fh2), MPI_ERR_AMODE, "write access");
    MT_ERR(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_SEQUENTIAL,
                         MPI_INFO_NULL, &fh2), MPI_ERR_AMODE, "SEQUENTIAL");
    if (size > 1) /* one rank's bad amode, or amodes that differ: an error on every rank */
        MT_ERR(MPI_File_open(MPI_COMM_WORLD, path, rank ? MPI_MODE_RDONLY : MPI_MODE_RDWR,
                             MPI_INFO_NULL, &fh2), MPI_ERR_NOT_SAME, "amodes");
    MT_ERR(MPI_File_open(MPI_COMM_NULL, path, MPI_MODE_RDWR, MPI_INFO_NULL, &fh2),
           MPI_ERR_COMM, "MPI_COMM_NULL");

    snprintf(mt_where, sizeof mt_where, "access errors");
    MT_ERR(MPI_File_write_at(fh, 0, v, -1, MPI_INT, &st), MPI_ERR_COUNT, "count");
    MT_ERR(MPI_File_write_at(fh, 0, v, 1, MPI_DATATYPE_NULL, &st), MPI_ERR_TYPE,
           "MPI_DATATYPE_NULL");
    MT_ERR(MPI_File_read_at(fh, -4, v, 1, MPI_INT, &st), MPI_ERR_ARG, "offset");
    MPI_Datatype three;
    MT_OK(MPI_Type_contiguous(3, MPI_BYTE, &three));
    MT_OK(MPI_Type_commit(&three));
    MT_OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    MT_ERR(MPI_File_write(fh, v, 1, three, &st), MPI_ERR_IO, "whole number of etypes");
    MT_ERR(MPI_File_set_view(fh, 0, MPI_INT, three, "native", MPI_INFO_NULL), MPI_ERR_ARG,
           "multiple");
    MPI_Type_free(&three);
    MT_ERR(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "big-endian", MPI_INFO_NULL),
           MPI_ERR_UNSUPPORTED_DATAREP, "big-endian");
    MT_ERR(MPI_File_set_view(fh, -8, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL), MPI_ERR_ARG,
           "displacement");
    /* a representation of one's own: registered once, never usable in a view (as ROMIO) */
    MT_OK(MPI_Register_datarep("mio_rep", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL,
                               rep_extent, NULL));
    MT_ERR(MPI_Register_datarep("mio_rep", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL,
                                rep_extent, NULL),
           MPI_ERR_DUP_DATAREP, "mio_rep");
    MT_ERR(MPI_Register_datarep("external32", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL,
                                rep_extent, NULL),
           MPI_ERR_DUP_DATAREP, "external32");
    MT_ERR(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "mio_rep", MPI_INFO_NULL),
           MPI_ERR_UNSUPPORTED_DATAREP, "registered");
    MT_ERR(MPI_File_read_all_end(fh, v, &st), MPI_ERR_IO, "no split collective");
    MT_OK(MPI_File_read_all_begin(fh, v, 1, MPI_INT));
    MT_ERR(MPI_File_write_all_begin(fh, v, 1, MPI_INT), MPI_ERR_IO, "already active");
    MT_OK(MPI_File_read_all_end(fh, v, &st));
    if (size > 1)
        MT_ERR(MPI_File_set_size(fh, rank), MPI_ERR_NOT_SAME, "sizes");

    /* one rank fails a collective: every rank gets an error, nobody hangs, the file works */
    snprintf(mt_where, sizeof mt_where, "one rank fails");
    int bad = size - 1;
    int rc = MPI_File_write_at_all(fh, 0, v, rank == bad ? -1 : 2, MPI_INT, &st);
    MT_CHECK(rc != MPI_SUCCESS);
    MT_CHECK(class_of(rc) == (rank == bad ? MPI_ERR_COUNT : MPI_ERR_ARG));
    rc = MPI_File_read_ordered(fh, v, 1, rank == bad ? MPI_DATATYPE_NULL : MPI_INT, &st);
    MT_CHECK(class_of(rc) == MPI_ERR_TYPE);
    rc = MPI_File_set_view(fh, 0, MPI_INT, rank == bad ? MPI_DATATYPE_NULL : MPI_INT, "native",
                           MPI_INFO_NULL);
    MT_CHECK(class_of(rc) == MPI_ERR_ARG);
    MT_OK(MPI_File_write_at_all(fh, rank, v, 1, MPI_INT, &st));
    MT_CHECK(mt_status_bytes(&st) == 4);
    MT_OK(MPI_File_close(&fh));

    snprintf(mt_where, sizeof mt_where, "access mode errors");
    MT_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    MT_ERR(MPI_File_write_at(fh, 0, v, 1, MPI_INT, &st), MPI_ERR_READ_ONLY, "MPI_MODE_RDONLY");
    MT_ERR(MPI_File_set_size(fh, 0), MPI_ERR_READ_ONLY, "MPI_MODE_RDONLY");
    MT_OK(MPI_File_close(&fh));
    MT_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    MT_ERR(MPI_File_read_at(fh, 0, v, 1, MPI_INT, &st), MPI_ERR_ACCESS, "MPI_MODE_WRONLY");
    MT_OK(MPI_File_close(&fh));
}

/* ------------------------------------------------------------------ storage faults */

static void faults(const char *name)
{
    static const struct {
        const char *name;
        int cls;
    } map[] = {{"ENOSPC", MPI_ERR_NO_SPACE}, {"EDQUOT", MPI_ERR_QUOTA},
               {"EROFS", MPI_ERR_READ_ONLY}, {"EIO", MPI_ERR_IO}, {"EACCES", MPI_ERR_ACCESS}};
    int cls = -1, bad = size - 1, v[4] = {1, 2, 3, 4};
    MPI_File fh;
    MPI_Status st;
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strcmp(map[i].name, name) == 0)
            cls = map[i].cls;
    MT_CHECK(cls >= 0);
    snprintf(mt_where, sizeof mt_where, "storage fault %s on rank %d", name, bad);
    bool at_open = cls == MPI_ERR_ACCESS;
    char spec[64];
    snprintf(spec, sizeof spec, "%s:0:%s", at_open ? "open" : "write", name);
    if (rank == bad) /* before the first storage call of this process */
        setenv("TESS_FAULT", spec, 1);
    if (at_open) {
        int rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE,
                               MPI_INFO_NULL, &fh);
        MT_CHECK(class_of(rc) == cls);
        return;
    }
    MT_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL,
                        &fh));
    mt_require_tessera(fh);
    int rc = MPI_File_write_at_all(fh, 16 * rank, v, 4, MPI_INT, &st);
    MT_CHECK(class_of(rc) == cls);
    if (rank == bad)
        MT_ERR(MPI_File_write_at(fh, 0, v, 1, MPI_INT, &st), cls, "write");
    else
        MT_OK(MPI_File_write_at(fh, 0, v, 1, MPI_INT, &st));
    MT_OK(MPI_File_close(&fh));
}

int main(int argc, char **argv)
{
    char what[64];
    bool fault = argc > 2 && strcmp(argv[1], "fault") == 0;
    MPI_Init(&argc, &argv); /* not mt_begin: a fault must be armed before the first open */
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    mt_path(path, sizeof path, "errors");
    if (fault) {
        faults(argv[2]);
    } else {
        classes();
        handlers();
    }
    snprintf(what, sizeof what, "errors%s%s", fault ? " with the storage failing " : "",
             fault ? argv[2] : "");
    return mt_end(path, what);
}
