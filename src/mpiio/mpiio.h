/*
 * mpiio.h - libtessera_mpiio: MPI-IO (chapter 13 of MPI 3.1) over Tessera, for programs that
 * call MPI_File_* and were written for ROMIO or OMPIO. Internal to src/mpiio; the library's
 * interface is the MPI standard's, declared by the MPI library's own mpi.h.
 *
 * Pieces (one file each):
 *   state.c    lazy initialization, the handle table (MPI_File values, Fortran integers), the
 *              list of open files closed at MPI_Finalize, calls before MPI_Init forwarded
 *   errors.c   error codes (the right class, a string saying what failed) and error handlers
 *   hints.c    MPI_Info <-> Tessera hints, the hint files of ROMIO_HINTS and TESS_HINTS
 *   types.c    the cache of imported MPI datatypes; external32 conversion
 *   open.c     open, close, delete and the calls on the whole file (size, sync, atomicity...)
 *   view.c     views, data representations, type extents, byte offsets
 *   shared.c   the shared file pointer (a counter in shared memory or an RMA window)
 *   access.c   every data access: explicit offsets, individual and shared pointers
 *   api.c      the data-access entry points: blocking, nonblocking and split collective
 *
 * Every entry point is defined as PMPI_File_x with MPI_File_x a weak alias of it, so that a
 * profiling library's MPI_File_x (which calls PMPI_File_x) still sees every call. Entry points
 * return an MPI error code after handing it to the file's error handler.
 */
#ifndef TESSI_MPIIO_H
#define TESSI_MPIIO_H

#include "tessera_mpi.h"

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>

/** Exported: the MPI names only (the rest of the library is hidden, see exports.map). */
#define TESSI_MIO_API __attribute__((visibility("default")))
/** MPI_x as a weak alias of PMPI_x. */
#define TESSI_MIO_ALIAS(fn)                                                                    \
    extern __typeof__(P##fn) fn __attribute__((weak, alias("P" #fn), visibility("default")))

/** MPI 4 large-count ("_c") entry points exist in this MPI library's mpi.h. */
#if MPI_VERSION >= 4
#define TESSI_MIO_LARGE_COUNT 1
#else
#define TESSI_MIO_LARGE_COUNT 0
#endif

/*
 * Before MPI_Init and after MPI_Finalize the library is not live: the call goes to the MPI
 * library's own function of the same name, so the program gets MPI's answer (an error, or an
 * abort) exactly as without this library.
 */
#define TESSI_MIO_FORWARD(fn, ...)                                                             \
    do {                                                                                       \
        if (!tessi_mio_live()) {                                                               \
            __typeof__(P##fn) *next_ = (__typeof__(P##fn) *)tessi_mio_next("P" #fn);           \
            return next_ ? next_(__VA_ARGS__) : MPI_ERR_OTHER;                                 \
        }                                                                                      \
    } while (0)

/* ------------------------------------------------------------------ state.c */

/** Data representations of a view. */
enum { TESSI_MIO_NATIVE = 0, TESSI_MIO_INTERNAL, TESSI_MIO_EXTERNAL32 };

/** The shared file pointer (shared.c). */
typedef struct tessi_mio_shared {
    MPI_Win win;         /* holds the counter (rank 0's memory) */
    int64_t *counter;    /* in shared memory (every rank on one node): atomics; else NULL */
} tessi_mio_shared;

/** Kinds of call, counted for TESS_MPIIO_VERBOSE. */
enum { TESSI_MIO_N_INDEP = 0, TESSI_MIO_N_COLL, TESSI_MIO_N_SHARED, TESSI_MIO_N_ORDERED,
       TESSI_MIO_N_NONBLOCKING, TESSI_MIO_N_SPLIT, TESSI_MIO_N_KINDS };

/** An open file. */
typedef struct tessi_mio_file {
    uint32_t slot;            /* index in the handle table: the Fortran handle (>= 1) */
    uint64_t seq;             /* open order: files left open are closed in it at MPI_Finalize */
    MPI_File handle;          /* the value the program holds */
    tess_file *tf;
    MPI_Comm comm;            /* a duplicate of the open's communicator */
    int rank, size;
    int amode;
    char *path;               /* as opened, without a ROMIO file-system prefix */
    /* the view (view.c) */
    MPI_Offset disp;
    MPI_Datatype etype, filetype; /* our duplicates (predefined types: the handles) */
    tess_type *tetype, *tfiletype;
    int64_t esize, ftsize, ftextent;
    int datarep;
    char datarep_name[MPI_MAX_DATAREP_STRING];
    int64_t fp;               /* individual file pointer, in etypes */
    tessi_mio_shared shared;
    int64_t *scratch;         /* 2 * size entries: the ordered calls' exchange */
    MPI_Errhandler eh;        /* the file's error handler (errors.c keeps it alive) */
    /* split collective in progress (one per file) */
    bool split_active;
    int64_t split_bytes;
    int split_code;
    tess_info *hints;         /* the hints given at open (user, hint files), for get_info */
    int64_t calls[TESSI_MIO_N_KINDS];
} tessi_mio_file;

/** True when MPI is initialized and not finalized (initializes the library on first use). */
bool tessi_mio_live(void);
/** The MPI library's own definition of `name` (the next one after ours), or NULL. */
void *tessi_mio_next(const char *name);
/** Look a handle up: the file, or NULL (MPI_FILE_NULL, closed or foreign values). */
tessi_mio_file *tessi_mio_lookup(MPI_File fh);
/** Give mf a handle (slot, sequence number) and list it as open. */
int tessi_mio_register(tessi_mio_file *mf);
/** Remove mf from the table (its handle becomes invalid). */
void tessi_mio_unregister(tessi_mio_file *mf);
/**
 * The open files, oldest first (for MPI_Finalize): *out is a malloc'ed array (free it).
 * Returns the count (-1 if out of memory).
 */
int64_t tessi_mio_open_files(tessi_mio_file ***out);

/* ------------------------------------------------------------------ errors.c */

/**
 * A new MPI error code of class `cls` whose MPI_Error_string reads "<who>: <message>". Codes
 * are recycled per class after a while (MPI cannot free codes), like MPICH's message ring.
 */
int tessi_mio_error(int cls, const char *who, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/** The MPI error code for a failed Tessera call (class by rc, text from tess_last_error()). */
int tessi_mio_tess_error(int rc, const char *who);
/**
 * Hand code to the error handler of mf (NULL: that of MPI_FILE_NULL) and return code (which
 * may be MPI_SUCCESS: then nothing happens). A fatal handler aborts.
 */
int tessi_mio_raise(tessi_mio_file *mf, int code);
/** The MPI class of a Tessera error code. */
int tessi_mio_class(int tess_rc);
/** Give a file being opened the default handler (MPI_FILE_NULL's). */
void tessi_mio_errhandler_inherit(tessi_mio_file *mf);
/** Set up error codes (once, at initialization); release at MPI_Finalize. */
void tessi_mio_errors_init(void);
void tessi_mio_errors_fini(void);

/**
 * Agree on a verdict over comm (collective, one allreduce): code where this rank failed, else
 * the code of the lowest failed rank (its class, a text naming the rank), else MPI_ERR_NOT_SAME
 * when the n values `same` differ between the ranks ("<who>: the processes give different
 * <what>"), else MPI_SUCCESS.
 */
int tessi_mio_agree_same(MPI_Comm comm, int code, const int64_t *same, int n, const char *what,
                         const char *who);
/** tessi_mio_agree_same without values. */
int tessi_mio_agree(MPI_Comm comm, int code, const char *who);

/* ------------------------------------------------------------------ hints.c */

/**
 * The hints of an open: ROMIO_HINTS' file, overridden by TESS_HINTS' file, overridden by info
 * (collective over comm: rank 0 reads the files). ROMIO's hints are checked the way ROMIO does
 * (a value it would ignore is dropped), Tessera's are passed on for Tessera to check.
 */
int tessi_mio_hints_make(MPI_Comm comm, MPI_Info info, tess_info **out, const char *who);
/** Copy the hints in use of mf into a new MPI_Info (MPI_File_get_info). */
int tessi_mio_hints_get(tessi_mio_file *mf, MPI_Info *out);

/* ------------------------------------------------------------------ types.c */

/**
 * The Tessera type of an MPI datatype, from the cache (imported on first use; dropped when the
 * MPI type is freed). The reference is borrowed: valid while the MPI type exists. Returns an
 * MPI error code.
 */
int tessi_mio_type(MPI_Datatype dt, const char *who, tess_type **out);
/**
 * For external32: check that every element of dt has the same size natively and in external32
 * and one byte-swap unit; *unit receives it (1: nothing to swap). Returns an MPI error code
 * (MPI_ERR_CONVERSION when the type cannot be converted).
 */
int tessi_mio_external32_unit(MPI_Datatype dt, const char *who, int64_t *unit);
/** Reverse the byte order of each unit-byte element of n bytes at p (unit 1: nothing). */
void tessi_mio_byteswap(void *p, int64_t n, int64_t unit);
/** Empty the cache (at MPI_Finalize). */
void tessi_mio_types_fini(void);

/* ------------------------------------------------------------------ view.c */

/** Install the default view (disp 0, MPI_BYTE, native) on a newly opened file. */
void tessi_mio_view_default(tessi_mio_file *mf);
/** Release the view's types. */
void tessi_mio_view_release(tessi_mio_file *mf);
/** The etype offset of the end of file in the view of mf (MPI_SEEK_END); an MPI code. */
int tessi_mio_view_eof(tessi_mio_file *mf, const char *who, int64_t *offset);
/** The absolute byte of etype offset `offset` in the view (MPI_File_get_byte_offset). */
int tessi_mio_view_byte(tessi_mio_file *mf, int64_t offset, const char *who, int64_t *byte);

/* ------------------------------------------------------------------ shared.c */

/** Create the shared file pointer of mf at value 0 (collective). An MPI code. */
int tessi_mio_shared_create(tessi_mio_file *mf, const char *who);
void tessi_mio_shared_free(tessi_mio_file *mf);
/** Add n etypes to the shared pointer; *old receives its previous value (independent). */
int tessi_mio_shared_add(tessi_mio_file *mf, int64_t n, int64_t *old, const char *who);
/**
 * Set the shared pointer to v: rank 0 stores, the others do nothing. The caller places the call
 * between two collective steps, so that nobody uses the pointer meanwhile.
 */
int tessi_mio_shared_store(tessi_mio_file *mf, int64_t v, const char *who);

/* ------------------------------------------------------------------ access.c */

/** What a data access is: the bits of tessi_mio_access's kind. */
enum {
    TESSI_MIO_WRITE = 1 << 0,    /* write (else read) */
    TESSI_MIO_COLL = 1 << 1,     /* collective (_all, _ordered) */
    TESSI_MIO_AT = 1 << 2,       /* explicit offset (_at) */
    TESSI_MIO_SHARED = 1 << 3,   /* shared file pointer (_shared, _ordered) */
};

/**
 * Check and run one data access (no error handler called): the etypes at `offset` (explicit),
 * at the individual pointer, or at the shared pointer (an ordered access when collective).
 * pre is MPI_SUCCESS, or an error this rank already has (the access is then not made, but a
 * collective one still joins the other ranks). *bytes receives the bytes moved. Returns an MPI
 * error code; a collective access returns the same verdict on every rank.
 */
int tessi_mio_access(tessi_mio_file *mf, const char *who, int kind, MPI_Offset offset,
                     void *buf, MPI_Count count, MPI_Datatype dt, int pre, int64_t *bytes);
/** Fill status (may be MPI_STATUS_IGNORE) with `bytes` bytes moved. */
void tessi_mio_status(MPI_Status *status, int64_t bytes);

/* ------------------------------------------------------------------ open.c */

/** Close mf (collective over its group); frees mf. Returns an MPI error code. */
int tessi_mio_close(tessi_mio_file *mf, const char *who);

#endif
