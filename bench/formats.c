/*
 * formats.c - `tessera-formats`: HDF5 and PnetCDF over MPI-IO, as their users write them. A plain
 * MPI program (no Tessera header): run as it is it uses the MPI library's own MPI-IO; preloaded
 * with or linked to libtessera_mpiio it runs on Tessera (issue 9).
 *
 *   tessera-formats --format h5|nc --test --file FILE [--n N]
 *     writes datasets (variables) collectively and independently, closes, opens again and reads
 *     them back collectively and independently in other decompositions; every value read is
 *     checked against the formula that wrote it. Exit status 0 when every rank verified. The
 *     files are deterministic (HDF5 object times off), so the test suite compares them byte for
 *     byte with the file the same program writes on the MPI library's own MPI-IO.
 *   tessera-formats --format h5|nc --file FILE [--n N] [--reps R] [--results F]
 *     coll_perf's 3-D block (an N^3 int array, block-distributed over an MPI_Dims_create grid)
 *     as one HDF5 dataset (H5Dwrite/H5Dread, H5FD_MPIO_COLLECTIVE) or one PnetCDF variable
 *     (ncmpi_put_vara_int_all / ncmpi_get_vara_int_all): one untimed write, R timed writes, a
 *     verified read, R timed reads; rank 0 prints MB/s per direction (the median of the max
 *     over ranks of each op; page cache: nothing synced) and with --results F appends them to F
 *     (bench/report.h). `tessera bench mpiio` runs it.
 * Options are parsed by the benchmarks' parser (bench/options.c), which needs no Tessera.
 *
 * HDF5: libhdf5 of the same MPI (Debian's libhdf5-openmpi-dev / libhdf5-mpich-dev); PnetCDF:
 * libpnetcdf (Debian builds it for Open MPI only). Each part is compiled when its library is
 * found (TESS_HAVE_HDF5, TESS_HAVE_PNETCDF).
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef TESS_HAVE_HDF5
#include <hdf5.h>
#endif
#ifdef TESS_HAVE_PNETCDF
#include <pnetcdf.h>
#endif

#include "options.h"
#include "report.h"

static int g_rank, g_size;
static const bench_report *g_report; /* rank 0 of a timed run: where --results go */

static int fail(const char *what)
{
    fprintf(stderr, "tessera-formats: [rank %d] %s failed\n", g_rank, what);
    return 1;
}

/* ------------------------------------------------------------ the data */

/* Value d of element (i, j, k) of an n^3 array (the same formula in every dataset). */
static int ival(int d, int64_t n, int64_t i, int64_t j, int64_t k)
{
    return (int)(d * 1000003 + (i * n + j) * n + k);
}

static double dval(int64_t n, int64_t i, int64_t j) { return (double)(i * n + j) + 0.25; }

/* This rank's block of an n^3 array over a 3-D process grid (MPI_Dims_create, C order):
   start[3], count[3] (count 0 when the grid leaves the rank without data). */
static void my_block(int64_t n, int64_t start[3], int64_t count[3])
{
    int dims[3] = {0, 0, 0};
    MPI_Dims_create(g_size, 3, dims);
    int coord[3] = {g_rank / (dims[1] * dims[2]), (g_rank / dims[2]) % dims[1], g_rank % dims[2]};
    for (int d = 0; d < 3; d++) {
        int64_t blk = (n + dims[d] - 1) / dims[d];
        start[d] = coord[d] * blk < n ? coord[d] * blk : n;
        count[d] = n - start[d] < blk ? n - start[d] : blk;
    }
}

static void fill_block(int *buf, int d, int64_t n, const int64_t s[3], const int64_t c[3])
{
    int64_t x = 0;
    for (int64_t i = 0; i < c[0]; i++)
        for (int64_t j = 0; j < c[1]; j++)
            for (int64_t k = 0; k < c[2]; k++)
                buf[x++] = ival(d, n, s[0] + i, s[1] + j, s[2] + k);
}

/* Number of elements of buf that differ from the block's values. */
static int64_t check_block(const int *buf, int d, int64_t n, const int64_t s[3], const int64_t c[3])
{
    int64_t x = 0, bad = 0;
    for (int64_t i = 0; i < c[0]; i++)
        for (int64_t j = 0; j < c[1]; j++)
            for (int64_t k = 0; k < c[2]; k++)
                bad += buf[x++] != ival(d, n, s[0] + i, s[1] + j, s[2] + k);
    return bad;
}

/* Rows written by this rank in the independent 2-D part: r, r + P, r + 2P, ... */
static int64_t my_rows(int64_t n) { return g_rank < n ? (n - g_rank + g_size - 1) / g_size : 0; }

static void fill_rows(double *buf, int64_t n)
{
    for (int64_t r = 0; r < my_rows(n); r++)
        for (int64_t j = 0; j < n; j++)
            buf[r * n + j] = dval(n, g_rank + r * g_size, j);
}

/* The band of rows this rank reads back collectively: [lo, hi). */
static void my_band(int64_t n, int64_t *lo, int64_t *hi)
{
    *lo = n * g_rank / g_size;
    *hi = n * (g_rank + 1) / g_size;
}

static int64_t check_band(const double *buf, int64_t n, int64_t lo, int64_t hi)
{
    int64_t bad = 0;
    for (int64_t i = lo; i < hi; i++)
        for (int64_t j = 0; j < n; j++)
            bad += buf[(i - lo) * n + j] != dval(n, i, j);
    return bad;
}

/* All ranks: 1 when ok on every rank. */
static int all_ok(int ok)
{
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all;
}

/* All ranks: the end of a test: 0 when every rank is ok and read no wrong value. */
static int verdict(const char *what, int ok, int64_t bad)
{
    if (bad)
        fprintf(stderr, "tessera-formats: [rank %d] %s: %lld values read back wrong\n", g_rank,
                what, (long long)bad);
    return all_ok(ok && !bad) ? 0 : fail(what);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Time one collective operation: barrier, op, barrier; the max over ranks. */
typedef int (*op_fn)(void *ctx);

static int timed(op_fn op, void *ctx, double *sec)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    int err = op(ctx);
    MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime() - t0;
    MPI_Allreduce(&t, sec, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return all_ok(err == 0) ? 0 : -1;
}

/*
 * reps timed runs of op; rank 0 prints the median, and with --results appends its line: case
 * "N=<n>", implementation "mpi" (whichever MPI-IO the program runs on), check "ok" (a failed
 * check ends the program first).
 */
static int bench_op(const char *fmt, const char *dir, op_fn op, void *ctx, int reps, int64_t n)
{
    double *t = malloc(sizeof *t * (size_t)reps);
    int64_t bytes = n * n * n * 4;
    if (!all_ok(t != NULL))
        return fail("malloc");
    for (int r = 0; r < reps; r++)
        if (timed(op, ctx, &t[r]) != 0) {
            free(t);
            return 1;
        }
    qsort(t, (size_t)reps, sizeof *t, cmp_double);
    double med = reps % 2 ? t[reps / 2] : (t[reps / 2 - 1] + t[reps / 2]) / 2;
    free(t);
    if (g_rank == 0) {
        char tag[32];
        printf("%s %s: N=%lld, %d processes: %.1f MB/s (median of %d, page cache)\n", fmt, dir,
               (long long)n, g_size, (double)bytes / med / 1e6, reps);
        snprintf(tag, sizeof tag, "N=%lld", (long long)n);
        bench_result(g_report, tag, "mpi", 1, strcmp(dir, "write") == 0, med, (double)bytes,
                     "ok");
    }
    return 0;
}

/*
 * The bench sequence of one format over this rank's block of an n^3 array (buf): one untimed
 * write, reps timed writes, one read checked against the values, reps timed reads.
 */
static int bench_block(const char *fmt, op_fn wr, op_fn rd, void *ctx, int *buf, int64_t n,
                       int reps)
{
    int64_t s[3], c[3];
    my_block(n, s, c);
    fill_block(buf, 0, n, s, c);
    if (!all_ok(wr(ctx) == 0))
        return fail("the untimed write");
    int rc = bench_op(fmt, "write", wr, ctx, reps, n);
    if (!rc) {
        memset(buf, 0, sizeof(int) * (size_t)(c[0] * c[1] * c[2]));
        rc = all_ok(rd(ctx) == 0 && check_block(buf, 0, n, s, c) == 0) ? 0
                                                                        : fail("read and check");
    }
    return rc ? rc : bench_op(fmt, "read", rd, ctx, reps, n);
}

/* ================================================================= HDF5 */
#ifdef TESS_HAVE_HDF5

/* A dataset of rank nd with a hyperslab selection of the file space. */
static hid_t h5_space(int nd, const int64_t *dims)
{
    hsize_t d[3];
    for (int i = 0; i < nd; i++)
        d[i] = (hsize_t)dims[i];
    return H5Screate_simple(nd, d, NULL);
}

static hid_t h5_select(hid_t space, int nd, const int64_t *start, const int64_t *stride,
                       const int64_t *count, const int64_t *block)
{
    hsize_t s[3], st[3], c[3], b[3];
    int empty = 0;
    for (int i = 0; i < nd; i++) {
        s[i] = (hsize_t)start[i];
        st[i] = (hsize_t)(stride ? stride[i] : 1);
        c[i] = (hsize_t)count[i];
        b[i] = (hsize_t)(block ? block[i] : 1);
        empty |= count[i] == 0;
    }
    if (empty)
        return H5Sselect_none(space);
    return H5Sselect_hyperslab(space, H5S_SELECT_SET, s, st, c, b);
}

static hid_t h5_dxpl(int collective)
{
    hid_t p = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_dxpl_mpio(p, collective ? H5FD_MPIO_COLLECTIVE : H5FD_MPIO_INDEPENDENT);
    return p;
}

static hid_t h5_open(const char *path, int create)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
    H5Pset_all_coll_metadata_ops(fapl, 1);
    H5Pset_coll_metadata_write(fapl, 1);
    hid_t f;
    if (create) {
        hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
        H5Pset_obj_track_times(fcpl, 0); /* the root group: no times, a deterministic file */
        f = H5Fcreate(path, H5F_ACC_TRUNC, fcpl, fapl);
        H5Pclose(fcpl);
    } else {
        f = H5Fopen(path, H5F_ACC_RDONLY, fapl);
    }
    H5Pclose(fapl);
    return f;
}

static hid_t h5_dataset(hid_t f, const char *name, hid_t type, int nd, const int64_t *dims,
                        const int64_t *chunk)
{
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE), space = h5_space(nd, dims);
    H5Pset_obj_track_times(dcpl, 0);
    if (chunk) {
        hsize_t c[3];
        for (int i = 0; i < nd; i++)
            c[i] = (hsize_t)chunk[i];
        H5Pset_chunk(dcpl, nd, c);
    }
    hid_t d = H5Dcreate2(f, name, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    H5Sclose(space);
    H5Pclose(dcpl);
    return d;
}

/* Write (or read) this rank's 3-D block of dataset d: memory contiguous. */
static int h5_block_io(hid_t d, int64_t n, int *buf, int collective, int write)
{
    int64_t s[3], c[3], dims[3] = {n, n, n};
    my_block(n, s, c);
    hid_t fs = h5_space(3, dims), ms = h5_space(3, c);
    if (c[0] * c[1] * c[2] == 0)
        H5Sselect_none(ms);
    h5_select(fs, 3, s, NULL, c, NULL);
    hid_t x = h5_dxpl(collective);
    herr_t rc = write ? H5Dwrite(d, H5T_NATIVE_INT, ms, fs, x, buf)
                      : H5Dread(d, H5T_NATIVE_INT, ms, fs, x, buf);
    H5Pclose(x);
    H5Sclose(ms);
    H5Sclose(fs);
    return rc < 0 ? -1 : 0;
}

static int h5_test(const char *path, int64_t n)
{
    int64_t s[3], c[3], dims3[3] = {n, n, n}, dims2[2] = {n, n}, chunk[3];
    my_block(n, s, c);
    int64_t nb = c[0] * c[1] * c[2], rows = my_rows(n), lo, hi;
    my_band(n, &lo, &hi);
    for (int i = 0; i < 3; i++)
        chunk[i] = n > 1 ? n / 2 : 1;
    int *blk = calloc((size_t)(nb ? nb : 1), sizeof *blk);
    int *all = calloc((size_t)(n * n * n), sizeof *all);
    double *rw = calloc((size_t)(rows ? rows * n : 1), sizeof *rw);
    double *band = calloc((size_t)((hi - lo) * n + 1), sizeof *band);
    if (!all_ok(blk && all && rw && band))
        return fail("calloc");
    int ok = 1;

    /* write: "block" collectively, "rows" independently (strided rows), "chunked" collectively */
    hid_t f = h5_open(path, 1);
    hid_t db = h5_dataset(f, "block", H5T_NATIVE_INT, 3, dims3, NULL);
    hid_t dr = h5_dataset(f, "rows", H5T_NATIVE_DOUBLE, 2, dims2, NULL);
    hid_t dc = h5_dataset(f, "chunked", H5T_NATIVE_INT, 3, dims3, chunk);
    if (f < 0 || db < 0 || dr < 0 || dc < 0)
        return fail("H5Fcreate/H5Dcreate2");
    hid_t as = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(db, "n", H5T_NATIVE_INT, as, H5P_DEFAULT, H5P_DEFAULT);
    int nn = (int)n;
    ok &= a >= 0 && H5Awrite(a, H5T_NATIVE_INT, &nn) >= 0;
    H5Aclose(a);
    H5Sclose(as);
    fill_block(blk, 0, n, s, c);
    ok &= h5_block_io(db, n, blk, 1, 1) == 0;
    fill_block(blk, 2, n, s, c);
    ok &= h5_block_io(dc, n, blk, 1, 1) == 0;
    {
        int64_t start[2] = {g_rank, 0}, stride[2] = {g_size, 1}, count[2] = {rows, 1},
                block[2] = {1, n}, mdims[2] = {rows, n};
        hid_t fs = h5_space(2, dims2), ms = h5_space(2, mdims);
        if (!rows)
            H5Sselect_none(ms);
        h5_select(fs, 2, start, stride, count, block);
        fill_rows(rw, n);
        hid_t x = h5_dxpl(0);
        ok &= H5Dwrite(dr, H5T_NATIVE_DOUBLE, ms, fs, x, rw) >= 0;
        H5Pclose(x);
        H5Sclose(ms);
        H5Sclose(fs);
    }
    H5Dclose(db);
    H5Dclose(dr);
    H5Dclose(dc);
    ok &= H5Fclose(f) >= 0;
    if (!all_ok(ok))
        return fail("HDF5 write");

    /* read: "block" independently, "rows" collectively in bands, "chunked" whole, collectively */
    f = h5_open(path, 0);
    db = H5Dopen2(f, "block", H5P_DEFAULT);
    dr = H5Dopen2(f, "rows", H5P_DEFAULT);
    dc = H5Dopen2(f, "chunked", H5P_DEFAULT);
    if (f < 0 || db < 0 || dr < 0 || dc < 0)
        return fail("H5Fopen/H5Dopen2");
    int64_t bad = 0;
    memset(blk, 0, sizeof *blk * (size_t)(nb ? nb : 1));
    ok &= h5_block_io(db, n, blk, 0, 0) == 0;
    bad += check_block(blk, 0, n, s, c);
    a = H5Aopen(db, "n", H5P_DEFAULT);
    nn = -1;
    ok &= a >= 0 && H5Aread(a, H5T_NATIVE_INT, &nn) >= 0 && nn == (int)n;
    H5Aclose(a);
    {
        int64_t start[2] = {lo, 0}, count[2] = {hi - lo, n};
        hid_t fs = h5_space(2, dims2), ms = h5_space(2, count);
        if (hi == lo)
            H5Sselect_none(ms);
        h5_select(fs, 2, start, NULL, count, NULL);
        hid_t x = h5_dxpl(1);
        ok &= H5Dread(dr, H5T_NATIVE_DOUBLE, ms, fs, x, band) >= 0;
        H5Pclose(x);
        H5Sclose(ms);
        H5Sclose(fs);
        bad += check_band(band, n, lo, hi);
    }
    {
        hid_t x = h5_dxpl(1);
        ok &= H5Dread(dc, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, x, all) >= 0;
        H5Pclose(x);
        int64_t z[3] = {0, 0, 0};
        bad += check_block(all, 2, n, z, dims3);
    }
    H5Dclose(db);
    H5Dclose(dr);
    H5Dclose(dc);
    ok &= H5Fclose(f) >= 0;
    free(blk);
    free(all);
    free(rw);
    free(band);
    return verdict("HDF5 read and check", ok, bad);
}

typedef struct h5_ctx {
    hid_t d;
    int64_t n;
    int *buf;
} h5_ctx;

static int h5_write_op(void *p)
{
    h5_ctx *x = p;
    return h5_block_io(x->d, x->n, x->buf, 1, 1);
}

static int h5_read_op(void *p)
{
    h5_ctx *x = p;
    return h5_block_io(x->d, x->n, x->buf, 1, 0);
}

static int h5_bench(const char *path, int64_t n, int reps)
{
    int64_t s[3], c[3], dims[3] = {n, n, n};
    my_block(n, s, c);
    int64_t nb = c[0] * c[1] * c[2];
    h5_ctx x = {.n = n, .buf = malloc(sizeof(int) * (size_t)(nb ? nb : 1))};
    if (!all_ok(x.buf != NULL))
        return fail("malloc");
    hid_t f = h5_open(path, 1);
    x.d = h5_dataset(f, "block", H5T_NATIVE_INT, 3, dims, NULL);
    if (!all_ok(f >= 0 && x.d >= 0))
        return fail("H5Fcreate/H5Dcreate2");
    int rc = bench_block("hdf5", h5_write_op, h5_read_op, &x, x.buf, n, reps);
    H5Dclose(x.d);
    H5Fclose(f);
    free(x.buf);
    return rc;
}
#endif /* TESS_HAVE_HDF5 */

/* ============================================================== PnetCDF */
#ifdef TESS_HAVE_PNETCDF

static int nc_ok(int err, const char *what)
{
    if (err == NC_NOERR)
        return 1;
    fprintf(stderr, "tessera-formats: [rank %d] %s: %s\n", g_rank, what, ncmpi_strerror(err));
    return 0;
}

static int nc_test(const char *path, int64_t n)
{
    int64_t s[3], c[3], lo, hi, rows = my_rows(n);
    my_block(n, s, c);
    my_band(n, &lo, &hi);
    int64_t nb = c[0] * c[1] * c[2], nrec = 2 * (int64_t)g_size;
    int *blk = calloc((size_t)(nb ? nb : 1), sizeof *blk);
    double *rw = calloc((size_t)(rows ? rows * n : 1), sizeof *rw);
    double *band = calloc((size_t)((hi - lo) * n + 1), sizeof *band);
    float *rec = calloc((size_t)(nrec * n), sizeof *rec);
    if (!all_ok(blk && rw && band && rec))
        return fail("calloc");
    int ok = 1, ncid, dz, dy, dx, dt, vb, vr, vt;
    MPI_Offset st[3], ct[3], sd[3];
    for (int i = 0; i < 3; i++) {
        st[i] = (MPI_Offset)s[i];
        ct[i] = (MPI_Offset)c[i];
    }

    /* write: "block" collectively, "rows" independently (strided), "rec" by two nonblocking
       requests per rank completed together (one collective access) */
    ok &= nc_ok(ncmpi_create(MPI_COMM_WORLD, path, NC_CLOBBER | NC_64BIT_DATA, MPI_INFO_NULL,
                             &ncid), "ncmpi_create");
    if (!all_ok(ok))
        return 1;
    ok &= nc_ok(ncmpi_def_dim(ncid, "z", n, &dz), "def_dim");
    ok &= nc_ok(ncmpi_def_dim(ncid, "y", n, &dy), "def_dim");
    ok &= nc_ok(ncmpi_def_dim(ncid, "x", n, &dx), "def_dim");
    ok &= nc_ok(ncmpi_def_dim(ncid, "t", NC_UNLIMITED, &dt), "def_dim");
    int d3[3] = {dz, dy, dx}, d2[2] = {dy, dx}, dr2[2] = {dt, dx};
    ok &= nc_ok(ncmpi_def_var(ncid, "block", NC_INT, 3, d3, &vb), "def_var");
    ok &= nc_ok(ncmpi_def_var(ncid, "rows", NC_DOUBLE, 2, d2, &vr), "def_var");
    ok &= nc_ok(ncmpi_def_var(ncid, "rec", NC_FLOAT, 2, dr2, &vt), "def_var");
    int nn = (int)n;
    ok &= nc_ok(ncmpi_put_att_int(ncid, vb, "n", NC_INT, 1, &nn), "put_att");
    ok &= nc_ok(ncmpi_enddef(ncid), "enddef");
    fill_block(blk, 0, n, s, c);
    ok &= nc_ok(ncmpi_put_vara_int_all(ncid, vb, st, ct, blk), "put_vara_int_all");
    ok &= nc_ok(ncmpi_begin_indep_data(ncid), "begin_indep_data");
    if (rows) {
        MPI_Offset rs[2] = {g_rank, 0}, rc[2] = {rows, n}, rstr[2] = {g_size, 1};
        fill_rows(rw, n);
        ok &= nc_ok(ncmpi_put_vars_double(ncid, vr, rs, rc, rstr, rw), "put_vars_double");
    }
    ok &= nc_ok(ncmpi_end_indep_data(ncid), "end_indep_data");
    int req[2], sts[2];
    for (int k = 0; k < 2; k++) {
        int64_t t = g_rank + (int64_t)k * g_size;
        for (int64_t j = 0; j < n; j++)
            rec[k * n + j] = (float)(t * n + j) + 0.5f;
        MPI_Offset rs[2] = {t, 0}, rc[2] = {1, n};
        ok &= nc_ok(ncmpi_iput_vara_float(ncid, vt, rs, rc, rec + k * n, &req[k]),
                    "iput_vara_float");
    }
    ok &= nc_ok(ncmpi_wait_all(ncid, 2, req, sts), "wait_all");
    ok &= nc_ok(ncmpi_close(ncid), "ncmpi_close");
    if (!all_ok(ok))
        return fail("PnetCDF write");

    /* read: "block" independently, "rows" collectively in bands, "rec" whole, collectively */
    ok &= nc_ok(ncmpi_open(MPI_COMM_WORLD, path, NC_NOWRITE, MPI_INFO_NULL, &ncid), "ncmpi_open");
    if (!all_ok(ok))
        return 1;
    ok &= nc_ok(ncmpi_inq_varid(ncid, "block", &vb), "inq_varid");
    ok &= nc_ok(ncmpi_inq_varid(ncid, "rows", &vr), "inq_varid");
    ok &= nc_ok(ncmpi_inq_varid(ncid, "rec", &vt), "inq_varid");
    ok &= nc_ok(ncmpi_inq_dimid(ncid, "t", &dt), "inq_dimid");
    MPI_Offset len = 0;
    ok &= nc_ok(ncmpi_inq_dimlen(ncid, dt, &len), "inq_dimlen") && len == nrec;
    nn = -1;
    ok &= nc_ok(ncmpi_get_att_int(ncid, vb, "n", &nn), "get_att") && nn == (int)n;
    int64_t bad = 0;
    memset(blk, 0, sizeof *blk * (size_t)(nb ? nb : 1));
    ok &= nc_ok(ncmpi_begin_indep_data(ncid), "begin_indep_data");
    if (nb)
        ok &= nc_ok(ncmpi_get_vara_int(ncid, vb, st, ct, blk), "get_vara_int");
    ok &= nc_ok(ncmpi_end_indep_data(ncid), "end_indep_data");
    bad += check_block(blk, 0, n, s, c);
    sd[0] = lo;
    sd[1] = 0;
    MPI_Offset cd[2] = {hi - lo, n};
    ok &= nc_ok(ncmpi_get_vara_double_all(ncid, vr, sd, cd, band), "get_vara_double_all");
    bad += check_band(band, n, lo, hi);
    MPI_Offset rs[2] = {0, 0}, rc[2] = {nrec, n};
    memset(rec, 0, sizeof *rec * (size_t)(nrec * n));
    ok &= nc_ok(ncmpi_get_vara_float_all(ncid, vt, rs, rc, rec), "get_vara_float_all");
    for (int64_t t = 0; t < nrec; t++)
        for (int64_t j = 0; j < n; j++)
            bad += rec[t * n + j] != (float)(t * n + j) + 0.5f;
    ok &= nc_ok(ncmpi_close(ncid), "ncmpi_close");
    free(blk);
    free(rw);
    free(band);
    free(rec);
    return verdict("PnetCDF read and check", ok, bad);
}

typedef struct nc_ctx {
    int ncid, var;
    MPI_Offset st[3], ct[3];
    int *buf;
} nc_ctx;

static int nc_write_op(void *p)
{
    nc_ctx *x = p;
    return nc_ok(ncmpi_put_vara_int_all(x->ncid, x->var, x->st, x->ct, x->buf),
                 "put_vara_int_all") ? 0 : -1;
}

static int nc_read_op(void *p)
{
    nc_ctx *x = p;
    return nc_ok(ncmpi_get_vara_int_all(x->ncid, x->var, x->st, x->ct, x->buf),
                 "get_vara_int_all") ? 0 : -1;
}

static int nc_bench(const char *path, int64_t n, int reps)
{
    int64_t s[3], c[3];
    my_block(n, s, c);
    int64_t nb = c[0] * c[1] * c[2];
    nc_ctx x = {.buf = malloc(sizeof(int) * (size_t)(nb ? nb : 1))};
    for (int i = 0; i < 3; i++) {
        x.st[i] = (MPI_Offset)s[i];
        x.ct[i] = (MPI_Offset)c[i];
    }
    int ok = x.buf != NULL, d[3];
    ok &= nc_ok(ncmpi_create(MPI_COMM_WORLD, path, NC_CLOBBER | NC_64BIT_DATA, MPI_INFO_NULL,
                             &x.ncid), "ncmpi_create");
    if (!all_ok(ok))
        return 1;
    ok &= nc_ok(ncmpi_def_dim(x.ncid, "z", n, &d[0]), "def_dim");
    ok &= nc_ok(ncmpi_def_dim(x.ncid, "y", n, &d[1]), "def_dim");
    ok &= nc_ok(ncmpi_def_dim(x.ncid, "x", n, &d[2]), "def_dim");
    ok &= nc_ok(ncmpi_def_var(x.ncid, "block", NC_INT, 3, d, &x.var), "def_var");
    ok &= nc_ok(ncmpi_enddef(x.ncid), "enddef");
    if (!all_ok(ok))
        return 1;
    int rc = bench_block("pnetcdf", nc_write_op, nc_read_op, &x, x.buf, n, reps);
    ncmpi_close(x.ncid);
    free(x.buf);
    return rc;
}
#endif /* TESS_HAVE_PNETCDF */

/* ================================================================= main */

enum { FMT_H5, FMT_NC };

/* The formats compiled in. */
static const bench_choice formats[] = {
#ifdef TESS_HAVE_HDF5
    {"h5", FMT_H5},
#endif
#ifdef TESS_HAVE_PNETCDF
    {"nc", FMT_NC},
#endif
    {NULL, 0}};

static const char *const format_names[] = {"hdf5", "pnetcdf"};

static int run(int format, int test, const char *path, int64_t n, int reps)
{
#ifdef TESS_HAVE_HDF5
    if (format == FMT_H5)
        return test ? h5_test(path, n) : h5_bench(path, n, reps);
#endif
#ifdef TESS_HAVE_PNETCDF
    if (format == FMT_NC)
        return test ? nc_test(path, n) : nc_bench(path, n, reps);
#endif
    (void)format, (void)test, (void)path, (void)n, (void)reps;
    return 2; /* not compiled in: the parser refused it already */
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    int format = -1, test = 0;
    int64_t n = 0, reps = 0;
    const char *path = NULL, *results = NULL;
    bench_opt opts[] = {
        {.name = "format", .kind = BENCH_OPT_CHOICE, .dst = &format, .arg = "F",
         .choices = formats, .required = 1,
         .help = "HDF5 or PnetCDF, as built here"},
        {.name = "file", .kind = BENCH_OPT_TEXT, .dst = &path, .arg = "FILE", .required = 1,
         .help = "the file to write and read"},
        {.name = "test", .kind = BENCH_OPT_TEST, .dst = &test,
         .help = "write datasets (variables) collectively and independently, read them back in "
                 "other decompositions, check every value; without it: coll_perf's 3-D block as "
                 "one dataset (variable), timed collective writes and reads"},
        {.name = "n", .kind = BENCH_OPT_SIZE, .dst = &n, .min = 1, .max = 2048, .arg = "N",
         .help = "array side", .def = "128", .test = "16"},
        BENCH_OPT_REPS(&reps, 1000, NULL),
        BENCH_OPT_RESULTS(&results),
    };
    const bench_command cmd = {
        .name = "formats", .program = "tessera-formats", .opts = opts,
        .nopts = BENCH_NOPTS(opts),
        .about = "  Under mpirun: HDF5 and PnetCDF through MPI-IO, a plain MPI program (preload or "
                 "link\n  libtessera_mpiio to run it on Tessera).\n"};
    int rc = bench_parse(&cmd, argc, argv, g_rank != 0);
    if (rc < 0) {
        bench_report rep;
        int opened = g_rank == 0 && !test &&
                     bench_report_begin(&rep, format_names[format], results) == 0;
        if (opened)
            g_report = &rep;
        rc = all_ok(g_rank != 0 || test || opened) ? run(format, test, path, n, (int)reps) : 1;
        if (opened)
            bench_report_end(&rep);
        g_report = NULL;
        if (rc == 0 && test && g_rank == 0)
            printf("%s test: N=%lld, %d processes: every value read back verified\n",
                   format_names[format], (long long)n, g_size);
    }
    MPI_Finalize();
    return rc;
}
