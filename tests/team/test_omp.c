/*
 * test_omp.c - paper 001's OpenMP interface (tessera_omp.h) inside `#pragma omp parallel`,
 * against byte maps built by loops of the test's own and files read back with POSIX calls:
 *  - every call of Table 3.1, reads and writes: _all, _at_all, _list_all, _list_at_all and the
 *    _com_ forms, at 1 to 4 threads, with every hint (CONTIG, NONCONTIG, UNKNOWN: the same
 *    bytes) and the file pointer moving across calls;
 *  - implicit-offset order in nested regions (ancestor thread ids outermost first): 2 x 2,
 *    inner teams of different sizes (1 and 3), and nesting inactive (inner teams of one);
 *  - a file opened outside the region and used inside, teams of two sizes on one file;
 *  - a small s_min, so that threads with large runs move them themselves next to threads whose
 *    pieces go through the work manager;
 *  - end of file (-1 on the threads whose data is not all there, zeros);
 *  - bad input: a thread passing another fd or hint (-1 on every thread, no hang), a call
 *    outside a parallel region, bad flags, an unknown fd.
 */
#include "check.h"
#include "tessera_omp.h"

#include <fcntl.h>
#include <omp.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { MAXT = 8, SEG = 5000 };

static char path[64];
static unsigned char *expect;
static int64_t fsize;

/* The file's contents (POSIX) against the byte map. */
static void check_file(const char *what)
{
    int fd = open(path, O_RDONLY);
    CHECK(fd >= 0);
    struct stat st;
    CHECK(fstat(fd, &st) == 0);
    unsigned char *data = malloc((size_t)st.st_size + 1);
    CHECK(data && pread(fd, data, (size_t)st.st_size, 0) == st.st_size);
    close(fd);
    if (st.st_size != fsize || memcmp(data, expect, (size_t)fsize) != 0) {
        fprintf(stderr, "%s: the file (%lld bytes) differs from the byte map (%lld bytes)\n",
                what, (long long)st.st_size, (long long)fsize);
        exit(1);
    }
    free(data);
}

static void put(int64_t off, const unsigned char *src, int64_t len)
{
    memcpy(expect + off, src, (size_t)len);
    if (len > 0 && off + len > fsize)
        fsize = off + len;
}

/* Thread t's data of length len(t) (different lengths, different bytes). */
static int64_t len_of(int t, int call) { return 1000 + 997 * t + 311 * call; }

static unsigned char data[MAXT][4][SEG * 2];

/* Filled once, before any parallel region: threads only read it. */
static void init_data(void)
{
    for (int t = 0; t < MAXT; t++)
        for (int call = 0; call < 4; call++)
            for (int64_t b = 0; b < SEG * 2; b++)
                data[t][call][b] = (unsigned char)(b * 7 + t * 31 + call * 101 + 1);
}

static unsigned char *data_of(int t, int call) { return data[t][call]; }

/* ------------------------------------------------------------------ flat teams */

/* Every call of Table 3.1 at nthreads threads with hint `hint`; the buffers are contiguous in
 * memory (one array, thread after thread) when contig. */
static void flat_calls(int nthreads, int hint)
{
    int fd = -1, errors = 0;
    unlink(path);
    memset(expect, 0, 1 << 22);
    fsize = 0;
    static unsigned char big[MAXT * SEG * 4];
    int64_t start[MAXT + 1] = {0};
    for (int t = 0; t < nthreads; t++) { /* the contiguous layout of the _all calls */
        memcpy(big + start[t], data_of(t, 0), (size_t)len_of(t, 0));
        start[t + 1] = start[t] + len_of(t, 0);
    }
    int64_t total = start[nthreads];
#pragma omp parallel num_threads(nthreads) reduction(+ : errors)
    {
        int t = omp_get_thread_num();
        errors += omp_file_open_all(&fd, path, O_RDWR | O_CREAT | O_TRUNC) != 0;
        /* 1. write_all twice: the pointer moves; 2. write_at_all; 3. list; 4. com */
        for (int rep = 0; rep < 2; rep++)
            errors += omp_file_write_all(big + start[t], (long)len_of(t, 0), fd, hint) != 0;
        off_t at = 2 * total + (nthreads - 1 - t) * SEG; /* reversed thread order */
        errors += omp_file_write_at_all(data_of(t, 1), (long)len_of(t, 1), at, fd,
                                        hint == OMP_FILE_CONTIG ? OMP_FILE_UNKNOWN : hint) != 0;
        unsigned char *d2 = data_of(t, 2);
        struct iovec iov[3] = {{d2, 100}, {d2 + 150, 400}, {d2 + 100, 50}};
        off_t offs[3] = {2 * total + MAXT * SEG + t * 1000, 2 * total + MAXT * SEG + t * 1000 + 600,
                         2 * total + MAXT * SEG + t * 1000 + 100};
        int lh = hint == OMP_FILE_CONTIG ? OMP_FILE_UNKNOWN : hint; /* lists are not contiguous */
        errors += omp_file_write_list_at_all(iov, offs, 3, fd, lh) != 0;
        errors += omp_file_write_list_all(iov, 3, fd, lh) != 0;
        unsigned char *d3 = data_of(0, 3);
        struct iovec civ[2] = {{d3, 700}, {d3 + 700, 900}};
        off_t coffs[2] = {2 * total + MAXT * SEG + MAXT * 1000, 2 * total + MAXT * SEG + MAXT * 1000 + 2000};
        errors += omp_file_write_com_all(d3, 1600, fd, hint) != 0;
        errors += omp_file_write_com_at_all(d3, 500, coffs[0] + 5000, fd, hint) != 0;
        errors += omp_file_write_com_list_all(civ, 2, fd, hint) != 0;
        errors += omp_file_write_com_list_at_all(civ, coffs, 2, fd, lh) != 0;
        errors += omp_file_close_all(fd) != 0;
    }
    CHECK(errors == 0);
    /* the byte map, in the order the calls were made */
    int64_t fp = 0;
    for (int rep = 0; rep < 2; rep++)
        for (int t = 0; t < nthreads; t++) {
            put(fp, data_of(t, 0), len_of(t, 0));
            fp += len_of(t, 0);
        }
    for (int t = 0; t < nthreads; t++)
        put(2 * total + (nthreads - 1 - t) * SEG, data_of(t, 1), len_of(t, 1));
    int64_t lbase = 2 * total + MAXT * SEG;
    for (int t = 0; t < nthreads; t++) {
        unsigned char *d2 = data_of(t, 2);
        put(lbase + t * 1000, d2, 100);
        put(lbase + t * 1000 + 600, d2 + 150, 400);
        put(lbase + t * 1000 + 100, d2 + 100, 50);
    }
    for (int t = 0; t < nthreads; t++) { /* list_all at the pointer, thread order */
        unsigned char *d2 = data_of(t, 2);
        put(fp, d2, 100);
        put(fp + 100, d2 + 150, 400);
        put(fp + 500, d2 + 100, 50);
        fp += 550;
    }
    unsigned char *d3 = data_of(0, 3);
    int64_t cbase = lbase + MAXT * 1000;
    put(fp, d3, 1600);
    fp += 1600;
    put(cbase + 5000, d3, 500);
    put(fp, d3, 1600);
    fp += 1600;
    put(cbase, d3, 700);
    put(cbase + 2000, d3 + 700, 900);
    char what[64];
    snprintf(what, sizeof what, "writes at %d threads, hint %d", nthreads, hint);
    check_file(what);

    /* reads of the same pieces, every thread into its own buffers */
    static unsigned char back[MAXT][SEG * 2];
    static unsigned char bigback[MAXT * SEG * 4];
    memset(back, 0, sizeof back);
    memset(bigback, 0, sizeof bigback);
#pragma omp parallel num_threads(nthreads) reduction(+ : errors)
    {
        int t = omp_get_thread_num();
        errors += omp_file_open_all(&fd, path, O_RDONLY) != 0;
        errors += omp_file_read_all(bigback + start[t], (long)len_of(t, 0), fd, hint) != 0;
        off_t at = 2 * total + (nthreads - 1 - t) * SEG;
        errors += omp_file_read_at_all(back[t], (long)len_of(t, 1), at, fd, OMP_FILE_UNKNOWN) != 0;
        struct iovec iov[3] = {{back[t] + SEG, 100}, {back[t] + SEG + 150, 400},
                               {back[t] + SEG + 100, 50}};
        off_t offs[3] = {lbase + t * 1000, lbase + t * 1000 + 600, lbase + t * 1000 + 100};
        errors += omp_file_read_list_at_all(iov, offs, 3, fd, OMP_FILE_NONCONTIG) != 0;
        errors += omp_file_close_all(fd) != 0;
    }
    CHECK(errors == 0);
    CHECK(memcmp(bigback, big, (size_t)total) == 0);
    for (int t = 0; t < nthreads; t++) { /* later calls overwrote some: the byte map says */
        CHECK(memcmp(back[t], expect + 2 * total + (nthreads - 1 - t) * SEG,
                     (size_t)len_of(t, 1)) == 0);
        CHECK(memcmp(back[t] + SEG, expect + lbase + t * 1000, 100) == 0);
        CHECK(memcmp(back[t] + SEG + 100, expect + lbase + t * 1000 + 100, 50) == 0);
        CHECK(memcmp(back[t] + SEG + 150, expect + lbase + t * 1000 + 600, 400) == 0);
    }
    /* common reads: every thread gets the same bytes in one shared buffer */
    static unsigned char cback[4000];
    memset(cback, 0, sizeof cback);
#pragma omp parallel num_threads(nthreads) reduction(+ : errors)
    {
        errors += omp_file_open_all(&fd, path, O_RDONLY) != 0;
        struct iovec civ[2] = {{cback, 700}, {cback + 700, 900}};
        off_t coffs[2] = {cbase, cbase + 2000};
        errors += omp_file_read_com_list_at_all(civ, coffs, 2, fd, OMP_FILE_UNKNOWN) != 0;
        errors += omp_file_read_com_at_all(cback + 2000, 500, cbase + 5000, fd, hint) != 0;
        errors += omp_file_close_all(fd) != 0;
    }
    CHECK(errors == 0);
    CHECK(memcmp(cback, d3, 1600) == 0 && memcmp(cback + 2000, d3, 500) == 0);
}

/* ------------------------------------------------------------------ nested teams */

/* outer threads x inner[outer id] threads each write their segment with write_all: the file is
 * the segments in the order of (outer id, inner id). */
static void nested_calls(int outer, const int *inner, int active_levels)
{
    int fd = -1, errors = 0;
    unlink(path);
    CHECK(omp_file_open_all(&fd, path, O_WRONLY | O_CREAT) == 0); /* outside the region */
    omp_set_max_active_levels(active_levels);
#pragma omp parallel num_threads(outer) reduction(+ : errors)
    {
        int o = omp_get_thread_num(), inner_errors = 0;
#pragma omp parallel num_threads(inner[o]) reduction(+ : inner_errors)
        {
            int i = omp_get_thread_num(), t = o * 4 + i;
            inner_errors += omp_file_write_all(data_of(t % MAXT, 0), 100 + t, fd,
                                               OMP_FILE_UNKNOWN) != 0;
        }
        errors += inner_errors;
    }
    omp_set_max_active_levels(1);
    CHECK(errors == 0);
    CHECK(omp_file_close_all(fd) == 0);
    memset(expect, 0, 1 << 16);
    fsize = 0;
    int64_t fp = 0;
    for (int o = 0; o < outer; o++) {
        int n = active_levels > 1 ? inner[o] : 1; /* inactive nesting: teams of one */
        for (int i = 0; i < n; i++) {
            int t = o * 4 + i;
            put(fp, data_of(t % MAXT, 0), 100 + t);
            fp += 100 + t;
        }
    }
    check_file("nested write_all");
}

/* ------------------------------------------------------------------ edges */

static void edges(void)
{
    int fd = -1, fd2 = -1, rc[MAXT], nthreads = 4;
    unlink(path);
    /* outside: open, then teams of two sizes on one file, closed outside */
    CHECK(omp_file_open_all(&fd, path, O_RDWR | O_CREAT | O_EXCL) == 0);
    CHECK(omp_file_open_all(&fd2, path, O_RDWR | O_CREAT | O_EXCL) == -1); /* exists */
    CHECK(strstr(tess_last_error(), "exist") != NULL);
    for (int n = 2; n <= 3; n++)
#pragma omp parallel num_threads(n)
        rc[omp_get_thread_num()] = omp_file_write_all(data_of(omp_get_thread_num(), 0), 10, fd,
                                                      OMP_FILE_UNKNOWN);
    for (int t = 0; t < 3; t++)
        CHECK(rc[t] == 0);
    /* end of file: 50 bytes exist; thread t reads 20 at t * 20 */
    unsigned char back[MAXT][20];
    memset(back, 0xEE, sizeof back);
#pragma omp parallel num_threads(4)
    {
        int t = omp_get_thread_num();
        rc[t] = omp_file_read_at_all(back[t], 20, t * 20, fd, OMP_FILE_UNKNOWN);
        if (rc[t])
            CHECK(strstr(tess_last_error(), "end of file") != NULL);
    }
    CHECK(rc[0] == 0 && rc[1] == 0 && rc[2] == -1 && rc[3] == -1);
    CHECK(memcmp(back[2], data_of(2, 0), 10) == 0); /* bytes 40..49: thread 2 of the 3-team */
    for (int b = 10; b < 20; b++)
        CHECK(back[2][b] == 0 && back[3][b - 10] == 0);
    /* bad input on one thread: another fd, another hint: -1 everywhere, nothing written */
    CHECK(omp_file_open_all(&fd2, "test_omp_other.dat", O_RDWR | O_CREAT) == 0);
    for (int kind = 0; kind < 2; kind++) {
#pragma omp parallel num_threads(nthreads)
        {
            int t = omp_get_thread_num();
            rc[t] = omp_file_write_all(data_of(t, 0), 10, kind == 0 && t == 2 ? fd2 : fd,
                                       kind == 1 && t == 1 ? OMP_FILE_NONCONTIG
                                                           : OMP_FILE_UNKNOWN);
            if (rc[t])
                CHECK(tess_last_error()[0] != '\0');
        }
        for (int t = 0; t < nthreads; t++)
            CHECK(rc[t] == -1);
    }
    struct stat st;
    CHECK(stat(path, &st) == 0 && st.st_size == 50);
    CHECK(stat("test_omp_other.dat", &st) == 0 && st.st_size == 0);
    /* after those, calls in which every thread passes the same file work again, on both files
     * (thread 2 missed a call on fd, and the others one on fd2) */
#pragma omp parallel num_threads(nthreads)
    {
        int t = omp_get_thread_num();
        rc[t] = omp_file_read_at_all(back[t], 10, t * 10, fd, OMP_FILE_UNKNOWN) ||
                omp_file_write_at_all(data_of(t, 0), 1, t, fd2, OMP_FILE_UNKNOWN);
    }
    for (int t = 0; t < nthreads; t++)
        CHECK(rc[t] == 0 && memcmp(back[t], data_of(t % 2, 0), 10) == 0); /* teams of 2, 3 */
    CHECK(stat("test_omp_other.dat", &st) == 0 && st.st_size == nthreads);
    /* an unknown fd on every thread */
#pragma omp parallel num_threads(2)
    rc[omp_get_thread_num()] = omp_file_write_all(back, 1, 12345, OMP_FILE_UNKNOWN);
    CHECK(rc[0] == -1 && rc[1] == -1);
    /* outside a parallel region; bad flags; a POSIX call on a handle */
    CHECK(omp_file_write_all(back, 1, fd, OMP_FILE_UNKNOWN) == -1);
    CHECK(strstr(tess_last_error(), "outside a parallel region") != NULL);
    CHECK(omp_file_open_all(&fd2, path, O_RDWR | O_APPEND) == -1);
    CHECK(write(fd, "x", 1) == -1);
    CHECK(omp_file_close_all(fd) == 0);
    CHECK(omp_file_close_all(fd) == -1);
    unlink("test_omp_other.dat");
}

int main(void)
{
    snprintf(path, sizeof path, "tess_omp_%ld.dat", (long)getpid());
    expect = malloc(1 << 22);
    CHECK(expect);
    init_data();
    for (int n = 1; n <= 4; n++)
        for (int hint = OMP_FILE_UNKNOWN; hint <= OMP_FILE_NONCONTIG; hint++)
            flat_calls(n, hint);
    /* s_min 2000: the threads' runs of 2000 bytes and more move themselves, the others go to
     * the work manager (one call, both ways) */
    CHECK(setenv("TESS_OMP_SMIN", "2000", 1) == 0);
    for (int n = 2; n <= 4; n += 2)
        flat_calls(n, OMP_FILE_UNKNOWN);
    nested_calls(2, (const int[]){2, 2}, 2);
    unsetenv("TESS_OMP_SMIN");
    nested_calls(2, (const int[]){2, 2}, 2);
    nested_calls(2, (const int[]){1, 3}, 2);
    nested_calls(3, (const int[]){2, 2, 2}, 1);
    edges();
    unlink(path);
    free(expect);
    printf("test_omp: every call of Table 3.1 at 1..4 threads, nested teams, edges: ok\n");
    return 0;
}
