/*
 * test_mpiio_pointers.c - file pointers after every kind of call, against a model.
 *
 * The view: etype MPI_INT, filetype three ints of five (ints 0, 2 and 3) resized to a tile of
 * TILE bytes, so etype offsets and file bytes differ. The model knows where etype k of a view
 * lies (view_byte) and how far each call moves each pointer: a call with an explicit offset
 * moves none, an individual-pointer call moves the rank's own pointer by the etypes it moved
 * (a read cut short by the end of file: by what it read), a shared-pointer call moves the
 * shared pointer by the etypes requested (ordered calls: by everybody's), seek and seek_shared
 * as MPI_SEEK_SET / _CUR / _END say, set_view resets both, MPI_MODE_APPEND starts both at the
 * end of file. After every write the rank reads its ints back with POSIX at the model's bytes.
 *
 * usage: test_mpiio_pointers [rma]   (rma: the shared pointer in an MPI-3 RMA window, the form
 *                                     used across nodes, through the hint tess_shared_fp)
 */
#include "mio_test.h"

#define TILE 64 /* room for four ranks' lanes of 16 bytes */
static const int64_t in_tile[3] = {0, 8, 12}; /* bytes of the three ints in a tile */

static char path[256];
static int rank, size;
static int64_t disp;  /* this rank's view displacement */
static int seq;       /* values written so far (each int written is unique) */
static MPI_Info hints; /* of every open */

static int64_t view_byte(int64_t d, int64_t k) { return d + (k / 3) * TILE + in_tile[k % 3]; }

static MPI_Datatype filetype(void)
{
    int bl[2] = {1, 2}, dp[2] = {0, 2};
    MPI_Datatype t, r;
    MT_OK(MPI_Type_indexed(2, bl, dp, MPI_INT, &t));
    MT_OK(MPI_Type_create_resized(t, 0, TILE, &r));
    MT_OK(MPI_Type_commit(&r));
    MPI_Type_free(&t);
    return r;
}

static void set_view(MPI_File fh, int64_t d)
{
    MPI_Datatype ft = filetype();
    MT_OK(MPI_File_set_view(fh, d, MPI_INT, ft, "native", MPI_INFO_NULL));
    MPI_Type_free(&ft);
    disp = d;
}

static void expect_pos(MPI_File fh, int64_t ind, int64_t sh)
{
    MPI_Offset p;
    if (ind >= 0) {
        MT_OK(MPI_File_get_position(fh, &p));
        if (p != ind) {
            fprintf(stderr, "individual pointer %lld, expected %lld\n", (long long)p,
                    (long long)ind);
            MT_CHECK(p == ind);
        }
    }
    if (sh >= 0) {
        MT_OK(MPI_File_get_position_shared(fh, &p));
        if (p != sh) {
            fprintf(stderr, "shared pointer %lld, expected %lld\n", (long long)p, (long long)sh);
            MT_CHECK(p == sh);
        }
    }
}

/* n ints to write, numbered from seq, and a check that etypes [at, at + n) hold them */
static void fill(int *v, int n)
{
    for (int i = 0; i < n; i++)
        v[i] = rank * 100000 + seq + i;
}

static void check_written(const int *v, int64_t at, int n)
{
    int fd = open(path, O_RDONLY);
    MT_CHECK(fd >= 0);
    for (int i = 0; i < n; i++) {
        int x = -1;
        MT_CHECK(pread(fd, &x, sizeof x, view_byte(disp, at + i)) == sizeof x);
        MT_CHECK(x == v[i]);
    }
    close(fd);
    seq += n;
}

/* The etype offset of the end of file in the view: the first etype at or beyond it. */
static int64_t eof_etype(void)
{
    struct stat sb;
    MT_CHECK(stat(path, &sb) == 0);
    int64_t k = 0;
    while (view_byte(disp, k) < sb.st_size)
        k++;
    return k;
}

/*
 * The individual-pointer and explicit-offset calls, in order: call k moves n ints, at the
 * individual pointer (at < 0: the pointer then moves by n) or at etype `at` (it stays).
 */
static const struct {
    int n;
    int64_t at;
} calls[] = {{4, -1}, {3, 10}, {2, -1}, {3, -1}, {1, -1}, {2, -1}, {2, 20}, /* writes */
             {3, -1}, {2, -1}, {1, -1}, {2, -1}, {1, -1}, {5, 0}, {5, 3}};   /* reads */
#define NWRITES 7

static void call(int k, MPI_File fh, int *v, MPI_Status *st)
{
    MPI_Request rq = MPI_REQUEST_NULL;
    int n = calls[k].n;
    MPI_Offset at = calls[k].at;
    switch (k) {
    case 0: MT_OK(MPI_File_write(fh, v, n, MPI_INT, st)); break;
    case 1: MT_OK(MPI_File_write_at(fh, at, v, n, MPI_INT, st)); break;
    case 2: MT_OK(MPI_File_iwrite(fh, v, n, MPI_INT, &rq)); break;
    case 3: MT_OK(MPI_File_write_all(fh, v, n, MPI_INT, st)); break;
    case 4: MT_OK(MPI_File_iwrite_all(fh, v, n, MPI_INT, &rq)); break;
    case 5:
        MT_OK(MPI_File_write_all_begin(fh, v, n, MPI_INT));
        MT_OK(MPI_File_write_all_end(fh, v, st));
        break;
    case 6: MT_OK(MPI_File_iwrite_at_all(fh, at, v, n, MPI_INT, &rq)); break;
    case 7: MT_OK(MPI_File_read(fh, v, n, MPI_INT, st)); break;
    case 8: MT_OK(MPI_File_read_all(fh, v, n, MPI_INT, st)); break;
    case 9: MT_OK(MPI_File_iread(fh, v, n, MPI_INT, &rq)); break;
    case 10: MT_OK(MPI_File_iread_all(fh, v, n, MPI_INT, &rq)); break;
    case 11:
        MT_OK(MPI_File_read_all_begin(fh, v, n, MPI_INT));
        MT_OK(MPI_File_read_all_end(fh, v, st));
        break;
    case 12: MT_OK(MPI_File_read_at_all(fh, at, v, n, MPI_INT, st)); break;
    case 13: MT_OK(MPI_File_iread_at(fh, at, v, n, MPI_INT, &rq)); break;
    default: MT_CHECK(0);
    }
    if (rq != MPI_REQUEST_NULL)
        MT_OK(MPI_Wait(&rq, st));
    MT_CHECK(mt_status_bytes(st) == 4 * n);
}

/* Phase 1: individual pointers and explicit offsets, each rank in its own lanes. */
static void individual(MPI_File fh)
{
    int v[16];
    MPI_Status st;
    int64_t ind = 0;
    set_view(fh, 4 + rank * 16);
    snprintf(mt_where, sizeof mt_where, "individual pointer");
    expect_pos(fh, 0, 0);
    for (int k = 0; k < NWRITES; k++) {
        fill(v, calls[k].n);
        call(k, fh, v, &st);
        check_written(v, calls[k].at < 0 ? ind : calls[k].at, calls[k].n);
        ind += calls[k].at < 0 ? calls[k].n : 0;
        expect_pos(fh, ind, 0);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* seeks */
    MT_OK(MPI_File_seek(fh, 2, MPI_SEEK_SET));
    expect_pos(fh, ind = 2, 0);
    MT_OK(MPI_File_seek(fh, 5, MPI_SEEK_CUR));
    expect_pos(fh, ind = 7, 0);
    MT_OK(MPI_File_seek(fh, -3, MPI_SEEK_CUR));
    expect_pos(fh, ind = 4, 0);
    MT_ERR(MPI_File_seek(fh, -5, MPI_SEEK_CUR), MPI_ERR_ARG, "negative");
    expect_pos(fh, ind, 0);
    int64_t eof = eof_etype();
    MT_OK(MPI_File_seek(fh, 0, MPI_SEEK_END));
    expect_pos(fh, ind = eof, 0);
    MT_OK(MPI_File_seek(fh, -2, MPI_SEEK_END));
    expect_pos(fh, ind = eof - 2, 0);

    /* reads move the pointer by what they read; past the end of file, by less */
    MT_OK(MPI_File_seek(fh, 1, MPI_SEEK_SET));
    ind = 1;
    for (int k = NWRITES; k < (int)(sizeof calls / sizeof calls[0]); k++) {
        call(k, fh, v, &st);
        ind += calls[k].at < 0 ? calls[k].n : 0;
        expect_pos(fh, ind, 0);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    eof = eof_etype();
    MT_OK(MPI_File_seek(fh, eof - 1, MPI_SEEK_SET));
    MT_OK(MPI_File_read(fh, v, 4, MPI_INT, &st));
    MT_CHECK(mt_status_bytes(&st) == 4); /* the last int, then the end of file */
    expect_pos(fh, eof, 0);

    /* the byte offset of an etype */
    for (int64_t k = 0; k < 9; k++) {
        MPI_Offset b;
        MT_OK(MPI_File_get_byte_offset(fh, k, &b));
        MT_CHECK(b == view_byte(disp, k));
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Phase 2: the shared pointer (identical views). Independent calls go one rank at a time. */
static void shared(MPI_File fh)
{
    int v[16], r[16];
    MPI_Status st;
    MPI_Request rq;
    int64_t sh = 0;
    set_view(fh, 4);
    snprintf(mt_where, sizeof mt_where, "shared pointer");
    MT_OK(MPI_File_seek(fh, 3, MPI_SEEK_SET));
    expect_pos(fh, 3, 0);
    MPI_Barrier(MPI_COMM_WORLD);
    /* writes, then reads of the same slots in the same order (the pointer back at 0): each
       rank reads back what it wrote */
    int mine[2][4];
    for (int kind = 0; kind < 4; kind++) {
        if (kind == 2) {
            MT_OK(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
            expect_pos(fh, 3, sh = 0);
            MPI_Barrier(MPI_COMM_WORLD);
        }
        for (int q = 0; q < size; q++) {
            int n = 1 + (q + kind % 2) % 3;
            if (q == rank) {
                int64_t at = sh;
                fill(v, n);
                if (kind == 0)
                    MT_OK(MPI_File_write_shared(fh, v, n, MPI_INT, &st));
                else if (kind == 1)
                    MT_OK(MPI_File_iwrite_shared(fh, v, n, MPI_INT, &rq));
                else if (kind == 2)
                    MT_OK(MPI_File_read_shared(fh, r, n, MPI_INT, &st));
                else
                    MT_OK(MPI_File_iread_shared(fh, r, n, MPI_INT, &rq));
                if (kind & 1)
                    MT_OK(MPI_Wait(&rq, &st));
                MT_CHECK(mt_status_bytes(&st) == 4 * n);
                if (kind < 2) {
                    memcpy(mine[kind], v, sizeof(int) * (size_t)n);
                    check_written(v, at, n);
                } else {
                    MT_CHECK(memcmp(r, mine[kind - 2], sizeof(int) * (size_t)n) == 0);
                }
            }
            sh += n;
            MPI_Barrier(MPI_COMM_WORLD);
            expect_pos(fh, 3, sh); /* the individual pointer stays */
            MPI_Barrier(MPI_COMM_WORLD);
        }
    }
    int64_t before = 0; /* ordered: rank q after ranks 0 .. q - 1, n = q + 1 ints each */
    for (int q = 0; q < rank; q++)
        before += q + 1;
    int64_t total = (int64_t)size * (size + 1) / 2;
    fill(v, rank + 1);
    MT_OK(MPI_File_write_ordered(fh, v, rank + 1, MPI_INT, &st));
    check_written(v, sh + before, rank + 1);
    MPI_Barrier(MPI_COMM_WORLD);
    expect_pos(fh, 3, sh += total);
    MPI_Barrier(MPI_COMM_WORLD);
    fill(v, rank + 1);
    MT_OK(MPI_File_write_ordered_begin(fh, v, rank + 1, MPI_INT));
    MT_OK(MPI_File_write_ordered_end(fh, v, &st));
    check_written(v, sh + before, rank + 1);
    MPI_Barrier(MPI_COMM_WORLD);
    expect_pos(fh, 3, sh += total);
    MPI_Barrier(MPI_COMM_WORLD);
    MT_OK(MPI_File_seek_shared(fh, 2, MPI_SEEK_SET));
    expect_pos(fh, 3, sh = 2);
    MPI_Barrier(MPI_COMM_WORLD);
    MT_OK(MPI_File_read_ordered(fh, r, rank + 1, MPI_INT, &st));
    MPI_Barrier(MPI_COMM_WORLD);
    expect_pos(fh, 3, sh += total);
    MPI_Barrier(MPI_COMM_WORLD);
    MT_OK(MPI_File_read_ordered_begin(fh, r, rank + 1, MPI_INT));
    MT_OK(MPI_File_read_ordered_end(fh, r, &st));
    MPI_Barrier(MPI_COMM_WORLD);
    expect_pos(fh, 3, sh += total);
    MPI_Barrier(MPI_COMM_WORLD);
    MT_OK(MPI_File_seek_shared(fh, -1, MPI_SEEK_CUR));
    expect_pos(fh, 3, sh -= 1);
    MPI_Barrier(MPI_COMM_WORLD);
    int64_t eof = eof_etype();
    MPI_Barrier(MPI_COMM_WORLD);
    MT_OK(MPI_File_seek_shared(fh, 1, MPI_SEEK_END));
    expect_pos(fh, 3, sh = eof + 1);
    MPI_Barrier(MPI_COMM_WORLD);
    if (size > 1)
        MT_ERR(MPI_File_seek_shared(fh, rank, MPI_SEEK_SET), MPI_ERR_NOT_SAME, "different");
    /* a new view resets both pointers */
    set_view(fh, 8);
    expect_pos(fh, 0, 0);
}

/* MPI_MODE_APPEND and MPI_MODE_SEQUENTIAL */
static void modes(void)
{
    MPI_File fh;
    MPI_Status st;
    int v[4] = {1, 2, 3, 4};
    struct stat sb;
    MPI_Barrier(MPI_COMM_WORLD);
    MT_CHECK(stat(path, &sb) == 0);
    snprintf(mt_where, sizeof mt_where, "MPI_MODE_APPEND");
    MT_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_WRONLY | MPI_MODE_APPEND, hints,
                        &fh));
    disp = 0;
    expect_pos(fh, sb.st_size, sb.st_size);
    MT_OK(MPI_File_close(&fh));

    snprintf(mt_where, sizeof mt_where, "MPI_MODE_SEQUENTIAL");
    MT_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_WRONLY | MPI_MODE_SEQUENTIAL, hints,
                        &fh));
    MT_OK(MPI_File_write_ordered(fh, v, 1, MPI_INT, &st)); /* shared pointer: size * 4 bytes */
    MPI_Datatype ft = filetype();
    MT_ERR(MPI_File_set_view(fh, 0, MPI_INT, ft, "native", MPI_INFO_NULL), MPI_ERR_ARG,
           "MPI_DISPLACEMENT_CURRENT");
    MT_OK(MPI_File_set_view(fh, MPI_DISPLACEMENT_CURRENT, MPI_INT, ft, "native",
                            MPI_INFO_NULL));
    MPI_Offset d;
    MPI_Datatype e, f;
    char rep[MPI_MAX_DATAREP_STRING];
    MT_OK(MPI_File_get_view(fh, &d, &e, &f, rep));
    MT_CHECK(d == 4 * size);
    if (e != MPI_INT)
        MPI_Type_free(&e);
    MPI_Type_free(&f);
    MPI_Type_free(&ft);
    MT_ERR(MPI_File_write_at(fh, 0, v, 1, MPI_INT, &st), MPI_ERR_UNSUPPORTED_OPERATION,
           "SEQUENTIAL");
    MT_ERR(MPI_File_write(fh, v, 1, MPI_INT, &st), MPI_ERR_UNSUPPORTED_OPERATION, "SEQUENTIAL");
    MT_ERR(MPI_File_seek(fh, 0, MPI_SEEK_SET), MPI_ERR_UNSUPPORTED_OPERATION, "SEQUENTIAL");
    MT_OK(MPI_File_write_ordered(fh, v, 2, MPI_INT, &st));
    MT_OK(MPI_File_close(&fh));
}

int main(int argc, char **argv)
{
    MPI_File fh;
    mt_begin(&argc, &argv, &rank, &size, path, sizeof path, "pointers");
    bool rma = argc > 1 && strcmp(argv[1], "rma") == 0;
    MT_OK(MPI_Info_create(&hints));
    if (rma)
        MT_OK(MPI_Info_set(hints, "tess_shared_fp", "rma"));
    MT_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, hints, &fh));
    individual(fh);
    shared(fh);
    MT_OK(MPI_File_close(&fh));
    modes();
    MPI_Info_free(&hints);
    return mt_end(path, rma ? "file pointers (RMA window)" : "file pointers");
}
