/*
 * errors.c - error codes and error handlers.
 *
 * Codes. Every failure returns a code of the right MPI class whose MPI_Error_string says what
 * failed ("MPI_File_open: cannot open '/x': No such file or directory"). Codes are made with
 * MPI_Add_error_code under the class and given their text with MPI_Add_error_string; since MPI
 * cannot free codes, each class has a ring of RING codes reused in turn (a code's text is
 * replaced after RING later errors of its class, as MPICH's own message ring does).
 * MPICH 4.0 gives a code made by MPI_Add_error_code under a predefined class the right class
 * but never shows its text (it reads the code as one of its own): a probe at initialization
 * finds this out, and such an MPI library's codes are then made by MPIR_Err_create_code, the
 * exported function ROMIO uses inside MPICH, with the class's generic message. If neither
 * works the bare class is returned.
 *
 * Handlers. The file error handler defaults to MPI_ERRORS_RETURN; MPI_File_set_errhandler on
 * MPI_FILE_NULL changes the default that later opens inherit. MPI_File_create_errhandler makes
 * a real MPI_Errhandler (through MPI_Comm_create_errhandler) and records the user's function
 * for it here: the handler is called by this library with the file handle, never by MPI. The
 * library keeps a reference to every handler it made until MPI_Finalize (taken with
 * MPI_Comm_get_errhandler on a communicator of its own), so MPI never reuses such a handle
 * while it is in the table, and a file keeps its handler after the program freed its handle.
 * MPI_File_get_errhandler returns a new reference, as the standard requires. Fortran error
 * handler functions are not supported: they would be called with C arguments.
 */
#include "mpiio.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RING 16
#define NCLASS 128

enum { MODE_CLASS = 0, MODE_POOL, MODE_MPICH };

typedef int (*mpich_create_fn)(int, int, const char[], int, int, const char[], const char[],
                               ...);

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int mode;
static mpich_create_fn mpich_create;
static int pool[NCLASS][RING];
static int pooled[NCLASS];
static unsigned turn[NCLASS];

/* the user's file error handlers, and the default one (MPI_FILE_NULL's) */
typedef struct {
    MPI_Errhandler eh;
    MPI_File_errhandler_function *fn;
} user_handler;

static user_handler *users;
static int nusers, capusers;
static MPI_Errhandler default_eh = MPI_ERRORS_RETURN;
/* a communicator of our own (made on first use) through which references are taken: split,
   not dup, of MPI_COMM_SELF, so the program's attributes on MPI_COMM_SELF are not copied */
static MPI_Comm pin = MPI_COMM_NULL;


/* MPICH's generic message of each class the library raises (MODE_MPICH). */
static const char *generic_key(int cls)
{
    const struct {
        int cls;
        const char *key;
    } keys[] = {
        {MPI_ERR_ARG, "**arg"}, {MPI_ERR_COUNT, "**count"}, {MPI_ERR_TYPE, "**dtype"},
        {MPI_ERR_COMM, "**comm"}, {MPI_ERR_FILE, "**file"}, {MPI_ERR_AMODE, "**fileamode"},
        {MPI_ERR_NOT_SAME, "**notsame"}, {MPI_ERR_NO_SUCH_FILE, "**filenoexist"},
        {MPI_ERR_FILE_EXISTS, "**fileexist"}, {MPI_ERR_ACCESS, "**fileaccess"},
        {MPI_ERR_NO_SPACE, "**filenospace"}, {MPI_ERR_QUOTA, "**filequota"},
        {MPI_ERR_READ_ONLY, "**filerdonly"}, {MPI_ERR_IO, "**io"},
        {MPI_ERR_NO_MEM, "**nomem"}, {MPI_ERR_INTERN, "**intern"},
        {MPI_ERR_UNSUPPORTED_DATAREP, "**unsupporteddatarep"},
        {MPI_ERR_UNSUPPORTED_OPERATION, "**fileopunsupported"},
        {MPI_ERR_CONVERSION, "**conversion"}, {MPI_ERR_DUP_DATAREP, "**datarepused"},
        {MPI_ERR_TRUNCATE, "**truncate"}, {MPI_ERR_REQUEST, "**request"},
        {MPI_ERR_INFO_VALUE, "**infoval"}, {MPI_ERR_INFO_KEY, "**infokey"},
    };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (keys[i].cls == cls)
            return keys[i].key;
    return "**other";
}

void tessi_mio_errors_init(void)
{
    char text[MPI_MAX_ERROR_STRING];
    int code, cls = -1, len = 0;
    mode = MODE_CLASS;
    if (MPI_Add_error_code(MPI_ERR_OTHER, &code) == MPI_SUCCESS &&
        MPI_Add_error_string(code, "tessera probe") == MPI_SUCCESS &&
        MPI_Error_string(code, text, &len) == MPI_SUCCESS &&
        MPI_Error_class(code, &cls) == MPI_SUCCESS && strcmp(text, "tessera probe") == 0 &&
        cls == MPI_ERR_OTHER) {
        mode = MODE_POOL;
        pool[MPI_ERR_OTHER][0] = code;
        pooled[MPI_ERR_OTHER] = 1;
    } else if ((mpich_create = (mpich_create_fn)dlsym(RTLD_DEFAULT, "MPIR_Err_create_code"))) {
        mode = MODE_MPICH;
    }
}

void tessi_mio_errors_fini(void)
{
    memset(pooled, 0, sizeof pooled);
    memset(turn, 0, sizeof turn);
    for (int i = 0; i < nusers; i++) /* the references taken at creation */
        MPI_Errhandler_free(&users[i].eh);
    if (pin != MPI_COMM_NULL)
        MPI_Comm_free(&pin);
    default_eh = MPI_ERRORS_RETURN;
    free(users);
    users = NULL;
    nusers = capusers = 0;
}

int tessi_mio_error(int cls, const char *who, const char *fmt, ...)
{
    char text[MPI_MAX_ERROR_STRING];
    /* MPICH's error stack names the function itself ("MPI_File_open(0): ...") */
    int n = mode == MODE_MPICH ? 0 : snprintf(text, sizeof text, "%s: ", who);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text + n, sizeof text - (size_t)n, fmt, ap);
    va_end(ap);
    if (cls <= MPI_SUCCESS || cls >= NCLASS)
        cls = MPI_ERR_OTHER;
    if (mode == MODE_MPICH)
        return mpich_create(MPI_SUCCESS, 0, who, 0, cls, generic_key(cls), "%s", text);
    if (mode != MODE_POOL)
        return cls;
    pthread_mutex_lock(&lock);
    int code = cls;
    if (pooled[cls] < RING && MPI_Add_error_code(cls, &pool[cls][pooled[cls]]) == MPI_SUCCESS)
        code = pool[cls][pooled[cls]++];
    else if (pooled[cls] > 0)
        code = pool[cls][turn[cls]++ % (unsigned)pooled[cls]];
    if (code != cls)
        MPI_Add_error_string(code, text);
    pthread_mutex_unlock(&lock);
    return code;
}

int tessi_mio_class(int rc)
{
    switch (rc) {
    case TESS_OK: return MPI_SUCCESS;
    case TESS_ERR_NOMEM: return MPI_ERR_NO_MEM;
    case TESS_ERR_IO: return MPI_ERR_IO;
    case TESS_ERR_NOSPACE: return MPI_ERR_NO_SPACE;
    case TESS_ERR_QUOTA: return MPI_ERR_QUOTA;
    case TESS_ERR_READONLY: return MPI_ERR_READ_ONLY;
    case TESS_ERR_NOENT: return MPI_ERR_NO_SUCH_FILE;
    case TESS_ERR_EXIST: return MPI_ERR_FILE_EXISTS;
    case TESS_ERR_ACCESS: return MPI_ERR_ACCESS;
    case TESS_ERR_UNSUPPORTED: return MPI_ERR_UNSUPPORTED_OPERATION;
    case TESS_ERR_TRUNCATE: return MPI_ERR_TRUNCATE;
    case TESS_ERR_DECODE:
    case TESS_ERR_INTERNAL: return MPI_ERR_INTERN;
    default: return MPI_ERR_ARG; /* ARG, OVERFLOW, VIEW */
    }
}

int tessi_mio_tess_error(int rc, const char *who)
{
    return tessi_mio_error(tessi_mio_class(rc), who, "%s", tess_last_error());
}

#define MAX_SAME 4

int tessi_mio_agree_same(MPI_Comm comm, int code, const int64_t *same, int n, const char *what,
                         const char *who)
{
    int rank = 0, cls = MPI_SUCCESS;
    int64_t v[1 + 2 * MAX_SAME];
    MPI_Comm_rank(comm, &rank);
    if (code != MPI_SUCCESS)
        MPI_Error_class(code, &cls);
    /* one MAX reduction: the lowest failing rank (INT32_MAX - rank above its class), and each
       value as v and -v, so that max(v) == -max(-v) iff every rank gave the same v */
    v[0] = code ? (int64_t)(INT32_MAX - rank) << 32 | (uint32_t)cls : -1;
    for (int i = 0; i < n && i < MAX_SAME; i++) {
        v[1 + 2 * i] = same[i];
        v[2 + 2 * i] = -same[i];
    }
    int err = MPI_Allreduce(MPI_IN_PLACE, v, 1 + 2 * n, MPI_INT64_T, MPI_MAX, comm);
    if (code != MPI_SUCCESS)
        return code;
    if (err != MPI_SUCCESS)
        return tessi_mio_error(MPI_ERR_OTHER, who, "the agreement between the processes "
                               "failed (MPI error %d)", err);
    if (v[0] >= 0) {
        char name[MPI_MAX_ERROR_STRING];
        int len = 0;
        cls = (int)(v[0] & 0xffffffff);
        MPI_Error_string(cls, name, &len);
        return tessi_mio_error(cls, who, "failed on rank %d: %s", INT32_MAX - (int)(v[0] >> 32),
                               name);
    }
    for (int i = 0; i < n && i < MAX_SAME; i++)
        if (v[1 + 2 * i] != -v[2 + 2 * i])
            return tessi_mio_error(MPI_ERR_NOT_SAME, who, "the processes give different %s",
                                   what);
    return MPI_SUCCESS;
}

int tessi_mio_agree(MPI_Comm comm, int code, const char *who)
{
    return tessi_mio_agree_same(comm, code, NULL, 0, NULL, who);
}

/* ------------------------------------------------------------------ handlers */

static bool predefined(MPI_Errhandler eh)
{
#ifdef MPI_ERRORS_ABORT
    if (eh == MPI_ERRORS_ABORT)
        return true;
#endif
    return eh == MPI_ERRORS_RETURN || eh == MPI_ERRORS_ARE_FATAL;
}

/* The user's function of eh, or NULL. Caller holds the lock. */
static MPI_File_errhandler_function *user_fn(MPI_Errhandler eh)
{
    for (int i = 0; i < nusers; i++)
        if (users[i].eh == eh)
            return users[i].fn;
    return NULL;
}

/* A new reference to eh in *out (MPI_Comm_get_errhandler increments the count). */
static int new_ref(MPI_Errhandler eh, MPI_Errhandler *out, const char *who)
{
    int rc = MPI_SUCCESS;
    if (pin == MPI_COMM_NULL)
        rc = MPI_Comm_split(MPI_COMM_SELF, 0, 0, &pin);
    if (rc == MPI_SUCCESS && (rc = MPI_Comm_set_errhandler(pin, eh)) == MPI_SUCCESS &&
        (rc = MPI_Comm_get_errhandler(pin, out)) == MPI_SUCCESS)
        rc = MPI_Comm_set_errhandler(pin, MPI_ERRORS_RETURN);
    return rc == MPI_SUCCESS ? MPI_SUCCESS
                             : tessi_mio_error(MPI_ERR_INTERN, who, "cannot take a reference "
                                               "to the error handler (MPI error %d)", rc);
}

void tessi_mio_errhandler_inherit(tessi_mio_file *mf)
{
    pthread_mutex_lock(&lock);
    mf->eh = default_eh;
    pthread_mutex_unlock(&lock);
}

int tessi_mio_raise(tessi_mio_file *mf, int code)
{
    if (code == MPI_SUCCESS)
        return code;
    pthread_mutex_lock(&lock);
    MPI_Errhandler eh = mf ? mf->eh : default_eh;
    MPI_File_errhandler_function *fn = user_fn(eh);
    pthread_mutex_unlock(&lock);
    if (eh == MPI_ERRORS_RETURN)
        return code;
    if (fn) {
        MPI_File fh = mf ? mf->handle : MPI_FILE_NULL;
        fn(&fh, &code);
        return code;
    }
    /* MPI_ERRORS_ARE_FATAL and MPI_ERRORS_ABORT: what failed, then the end */
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(code, text, &len) != MPI_SUCCESS)
        snprintf(text, sizeof text, "MPI error %d", code);
    fprintf(stderr, "libtessera_mpiio: fatal error (file error handler): %s\n", text);
    MPI_Abort(MPI_COMM_WORLD, code);
    return code;
}

static void never_called(MPI_Comm *comm, int *code, ...)
{
    /* the handler's communicators never see an error: the library calls the user's function */
    (void)comm, (void)code;
}

TESSI_MIO_API int PMPI_File_create_errhandler(MPI_File_errhandler_function *fn,
                                              MPI_Errhandler *eh)
{
    TESSI_MIO_FORWARD(MPI_File_create_errhandler, fn, eh);
    static const char who[] = "MPI_File_create_errhandler";
    if (!fn || !eh)
        return tessi_mio_raise(NULL, tessi_mio_error(MPI_ERR_ARG, who, "%s is NULL",
                                                     fn ? "errhandler" : "function"));
    MPI_Errhandler made, kept;
    int rc = MPI_Comm_create_errhandler(never_called, &made);
    if (rc != MPI_SUCCESS)
        return tessi_mio_raise(NULL, rc);
    pthread_mutex_lock(&lock);
    if (nusers == capusers) {
        int cap = capusers ? 2 * capusers : 8;
        user_handler *u = realloc(users, sizeof *u * (size_t)cap);
        if (u) {
            users = u;
            capusers = cap;
        }
    }
    rc = nusers < capusers ? new_ref(made, &kept, who)
                           : tessi_mio_error(MPI_ERR_NO_MEM, who, "out of memory");
    if (rc == MPI_SUCCESS)
        users[nusers++] = (user_handler){kept, fn};
    pthread_mutex_unlock(&lock);
    if (rc != MPI_SUCCESS) {
        MPI_Errhandler_free(&made);
        return tessi_mio_raise(NULL, rc);
    }
    *eh = made;
    return MPI_SUCCESS;
}
TESSI_MIO_ALIAS(MPI_File_create_errhandler);

TESSI_MIO_API int PMPI_File_set_errhandler(MPI_File fh, MPI_Errhandler eh)
{
    TESSI_MIO_FORWARD(MPI_File_set_errhandler, fh, eh);
    static const char who[] = "MPI_File_set_errhandler";
    tessi_mio_file *mf = tessi_mio_lookup(fh);
    if (!mf && fh != MPI_FILE_NULL)
        return tessi_mio_raise(NULL, tessi_mio_error(MPI_ERR_FILE, who, "invalid file handle"));
    pthread_mutex_lock(&lock);
    bool known = predefined(eh) || user_fn(eh);
    pthread_mutex_unlock(&lock);
    if (!known)
        return tessi_mio_raise(mf, tessi_mio_error(MPI_ERR_ARG, who, "not a file error "
                                                   "handler (make one with "
                                                   "MPI_File_create_errhandler)"));
    pthread_mutex_lock(&lock);
    if (mf)
        mf->eh = eh;
    else
        default_eh = eh;
    pthread_mutex_unlock(&lock);
    return MPI_SUCCESS;
}
TESSI_MIO_ALIAS(MPI_File_set_errhandler);

TESSI_MIO_API int PMPI_File_get_errhandler(MPI_File fh, MPI_Errhandler *eh)
{
    TESSI_MIO_FORWARD(MPI_File_get_errhandler, fh, eh);
    static const char who[] = "MPI_File_get_errhandler";
    tessi_mio_file *mf = tessi_mio_lookup(fh);
    if (!mf && fh != MPI_FILE_NULL)
        return tessi_mio_raise(NULL, tessi_mio_error(MPI_ERR_FILE, who, "invalid file handle"));
    if (!eh)
        return tessi_mio_raise(mf, tessi_mio_error(MPI_ERR_ARG, who, "errhandler is NULL"));
    pthread_mutex_lock(&lock);
    MPI_Errhandler cur = mf ? mf->eh : default_eh;
    int rc = new_ref(cur, eh, who);
    pthread_mutex_unlock(&lock);
    return tessi_mio_raise(mf, rc);
}
TESSI_MIO_ALIAS(MPI_File_get_errhandler);

TESSI_MIO_API int PMPI_File_call_errhandler(MPI_File fh, int errorcode)
{
    TESSI_MIO_FORWARD(MPI_File_call_errhandler, fh, errorcode);
    tessi_mio_file *mf = tessi_mio_lookup(fh);
    if (!mf && fh != MPI_FILE_NULL)
        return tessi_mio_raise(NULL, tessi_mio_error(MPI_ERR_FILE, "MPI_File_call_errhandler",
                                                     "invalid file handle"));
    tessi_mio_raise(mf, errorcode);
    return MPI_SUCCESS;
}
TESSI_MIO_ALIAS(MPI_File_call_errhandler);
