/*
 * tessera_mpi.h - the MPI-facing part of the Tessera C API.
 *
 * Include this header (instead of, or besides, tessera.h) to use Tessera with MPI. It exists
 * only in builds where an MPI library was found; the library is then linked with that MPI, and
 * a program must be compiled against the same MPI (its mpi.h).
 *
 * The conventions of tessera.h apply: int64_t sizes, 0 or a negative TESS_ERR_* return with a
 * detail message in tess_last_error(), no printing, aborting or exiting.
 */
#ifndef TESSERA_MPI_H
#define TESSERA_MPI_H

#include <mpi.h>

#include "tessera.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Import an MPI datatype: build the Tessera type with the same typemap, size, lower bound and
 * extent as dt. The new type is stored in *out (set only on success; release it with
 * tess_type_free). dt is not changed and need not be committed; it may be freed afterwards.
 *
 * Derived types are decoded with MPI_Type_get_envelope / MPI_Type_get_contents (their
 * large-count "_c" forms when the MPI library implements MPI 4), so every way of constructing
 * them is understood: dup, contiguous, vector, hvector, indexed, hindexed, indexed_block,
 * hindexed_block, struct, subarray, darray, resized, including the large-count constructors
 * and, where the MPI library still has them, the removed MPI-1 hvector/hindexed/struct forms.
 *
 * Named (predefined) types become the Tessera predefined type of the same kind and size
 * (MPI_INT -> TESS_INT32, MPI_DOUBLE -> TESS_DOUBLE, MPI_UNSIGNED_LONG -> TESS_UINT64,
 * MPI_CHAR -> TESS_CHAR, MPI_INTEGER -> TESS_INT32, MPI_REAL -> TESS_FLOAT, ...); complex
 * types become two real elements; other named types without holes (MPI_LONG_DOUBLE, MPI_C_BOOL,
 * MPI_PACKED, MPI_LOGICAL, MPI_2REAL, ...) become their size in bytes. The C pair types (MPI_FLOAT_INT, MPI_DOUBLE_INT, MPI_LONG_INT, MPI_SHORT_INT,
 * MPI_2INT, MPI_LONG_DOUBLE_INT) are built from their typemap: the C struct { value; int; },
 * as the MPI standard defines them, with MPI's extent.
 *
 * Bounds: Tessera's constructors add no alignment padding, MPI's struct constructor does; every
 * level of the result is given MPI's lb and extent for the corresponding MPI type (via
 * tess_type_resized where they differ), so replication (count > 1, vectors of structs, ...)
 * places data exactly where MPI places it.
 *
 * Returns 0, or:
 *  - TESS_ERR_ARG: out is NULL, dt is MPI_DATATYPE_NULL, MPI is not initialized (or is
 *    finalized), or an MPI call failed (its error text is in the message). An invalid handle
 *    first goes to the MPI error handler, which by default aborts the program.
 *  - TESS_ERR_UNSUPPORTED: a Fortran 90 parameterized type (MPI_Type_create_f90_real, _complex,
 *    _integer), a negative extent (MPI_Type_create_resized allows it, Tessera does not), a named
 *    type with holes other than the pair types, a combiner this code does not know (from a newer
 *    MPI), or MPI nesting deeper than 64 levels.
 *  - TESS_ERR_OVERFLOW, TESS_ERR_NOMEM, and the errors of the Tessera constructors (for example
 *    when the type is deeper than Tessera's nesting limit).
 *  - TESS_ERR_INTERNAL: MPI_Type_get_contents returned arguments that do not match the
 *    combiner's documented layout, or the imported type's size differs from MPI_Type_size_x.
 *
 * Calls MPI: from several threads at once only under MPI_THREAD_MULTIPLE. Memory and time are
 * proportional to the arguments of the MPI constructor calls (the type's description), not to
 * the number of regions; nesting is decoded recursively, at most 64 levels deep.
 */
TESS_API int tess_type_from_mpi(MPI_Datatype dt, tess_type **out);

/**
 * Open a file collectively over comm (every process of comm calls it, with the same path, flags
 * and collective hints). With TESS_CREATE, rank 0 creates the file (TESS_EXCL: fails if it
 * exists) before the others open it. The communicator is duplicated: comm may be freed after the
 * call. The result is the same on every process: a handle each, or an error everywhere (an error
 * on one process, a different path or flags on another, is an error on all). *out is set only on
 * success.
 *
 * On the handle, tess_file_set_view, tess_file_set_realms and tess_file_close are collective
 * over comm (close it before MPI_Finalize), tess_file_read_at_all and tess_file_write_at_all
 * are the collective accesses (tessera.h lists the collective hints), and every independent
 * call still works on its own. MPI must be initialized; calls on one handle from several threads
 * at once need MPI_THREAD_MULTIPLE and are otherwise not supported.
 *
 * Returns 0 or: TESS_ERR_ARG (comm is MPI_COMM_NULL, MPI not initialized, NULL path or out, bad
 * flags or hints, hints or path differing between processes), the errors of tess_file_open,
 * TESS_ERR_IO when an MPI call fails (its text in the message).
 */
TESS_API int tess_file_open_mpi(MPI_Comm comm, const char *path, int flags, const tess_info *info,
                                tess_file **out);

#ifdef __cplusplus
}
#endif
#endif
