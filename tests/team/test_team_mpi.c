/*
 * test_team_mpi.c - hybrid thread-collective I/O (tessera_team.h): a file opened over MPI
 * (tess_file_open_mpi) accessed by a team of threads in every process; the team's pieces join
 * that process's part of one MPI collective. Run at 2 ranks x 2 threads (member 0 is the main
 * thread: MPI_THREAD_FUNNELED). Against a byte map of the test's own, the file read with POSIX:
 *  - implicit offsets: the data of rank 0's members, then rank 1's, each member's list in order,
 *    and the file pointer after the call (a second call follows the first);
 *  - explicit offsets interleaved across ranks and threads (list pieces), with collective
 *    buffering forced on (two-phase) and off;
 *  - common pieces; reads of the same shapes; a read past the end of file;
 *  - bad input on one thread of one rank (another hint): the error on every thread of every
 *    rank, no hang, nothing written; the file still usable afterwards.
 */
#include "coll_test.h"
#include "tessera_team.h"

#include <pthread.h>

enum { T = 2, PIECE = 700, NPIECES = 5 };

static char path[256];
static tess_file *file;
static tess_team *team;
static int nranks, me;
static unsigned char data[T][NPIECES * PIECE], back[T][NPIECES * PIECE];
static int rc_of[T];
static int64_t bytes_of[T];
static int mode; /* what the members do: see member() */

/* Member m's call: mode 0 implicit write of its pieces (in reverse memory order), 1 explicit
 * write (interleaved: piece i of member m of rank r at ((i * nranks + r) * T + m) * PIECE),
 * 2 / 3 the reads of 0 / 1, 4 common write of rank-wide pieces at explicit offsets, 5 bad hint
 * on member 1 of the last rank, 6 read past the end. */
static void *member(void *arg)
{
    int m = (int)(intptr_t)arg;
    struct iovec iov[NPIECES];
    int64_t offs[NPIECES];
    unsigned char *mem = mode == 2 || mode == 3 || mode == 6 ? back[m] : data[m];
    for (int i = 0; i < NPIECES; i++) {
        iov[i] = (struct iovec){.iov_base = mem + (NPIECES - 1 - i) * PIECE, .iov_len = PIECE};
        offs[i] = ((int64_t)(i * nranks + me) * T + m) * PIECE;
    }
    tess_team_args a = {.iov = iov, .n = NPIECES, .offsets = mode % 2 ? offs : NULL};
    if (mode == 4) { /* every member passes rank-wide common pieces: data[0] at rank offsets */
        for (int i = 0; i < NPIECES; i++) {
            iov[i] = (struct iovec){.iov_base = data[0] + i * PIECE, .iov_len = PIECE};
            offs[i] = (int64_t)(i * nranks + me) * PIECE;
        }
        a = (tess_team_args){.iov = iov, .n = NPIECES, .offsets = offs, .common = 1};
    }
    if (mode == 5 && m == 1 && me == nranks - 1)
        a.hint = TESS_TEAM_NONCONTIG;
    if (mode == 6) {
        offs[0] = (int64_t)(me * T + m) * 100 + 350; /* the file holds 500 bytes */
        a = (tess_team_args){.iov = iov, .n = 1, .offsets = offs};
        iov[0].iov_len = 100;
    }
    rc_of[m] = mode == 2 || mode == 3 || mode == 6 ? tess_team_read(team, m, file, &a, &bytes_of[m])
                                                   : tess_team_write(team, m, file, &a,
                                                                     &bytes_of[m]);
    return NULL;
}

/* Every member's call, member 0 on this (the main) thread. */
static void run(int what)
{
    pthread_t th[T];
    mode = what;
    for (int m = 1; m < T; m++)
        CT_CHECK(pthread_create(&th[m], NULL, member, (void *)(intptr_t)m) == 0);
    member((void *)0);
    for (int m = 1; m < T; m++)
        CT_CHECK(pthread_join(th[m], NULL) == 0);
}

/* The file (POSIX, on rank 0) against the map. */
static void check_file(const unsigned char *map, int64_t size, const char *what)
{
    snprintf(ct_where, sizeof ct_where, "%s", what);
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) {
        unsigned char *got = malloc((size_t)size + 1);
        int fd = open(path, O_RDONLY);
        struct stat st;
        CT_CHECK(got && fd >= 0 && fstat(fd, &st) == 0);
        CT_EQ(st.st_size, size);
        CT_CHECK(pread(fd, got, (size_t)size, 0) == size);
        CT_CHECK(memcmp(got, map, (size_t)size) == 0);
        close(fd);
        free(got);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void all_ok(void)
{
    for (int m = 0; m < T; m++) {
        if (rc_of[m])
            fprintf(stderr, "[rank %d] member %d: %s\n", me, m, tess_last_error());
        CT_EQ(rc_of[m], 0);
    }
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    CT_CHECK(provided >= MPI_THREAD_FUNNELED);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    snprintf(path, sizeof path, "tess_team_mpi_%d.dat", nranks);
    for (int m = 0; m < T; m++)
        for (int b = 0; b < NPIECES * PIECE; b++)
            data[m][b] = (unsigned char)(b * 3 + m * 50 + me * 100 + 1);
    int64_t total = (int64_t)nranks * T * NPIECES * PIECE;
    unsigned char *map = calloc((size_t)(2 * total), 1), *all = malloc((size_t)total);
    CT_CHECK(map && all);
    CT_OK(tess_team_create(T, NULL, NULL, &team));
    for (int cb = 0; cb < 2; cb++) {
        tess_info *info;
        CT_OK(tess_info_create(&info));
        CT_OK(tess_info_set(info, "romio_cb_write", cb ? "enable" : "disable"));
        CT_OK(tess_info_set(info, "romio_cb_read", cb ? "enable" : "disable"));
        if (me == 0)
            unlink(path);
        MPI_Barrier(MPI_COMM_WORLD);
        CT_OK(tess_file_open_mpi(MPI_COMM_WORLD, path, TESS_RDWR | TESS_CREATE, info, &file));
        tess_info_free(info);
        /* every rank's data, gathered for the map: rank r, member m, memory order */
        MPI_Allgather(data, T * NPIECES * PIECE, MPI_BYTE, all, T * NPIECES * PIECE, MPI_BYTE,
                      MPI_COMM_WORLD);
        /* implicit, twice: rank 0's members, then rank 1's; each list in list order */
        run(0);
        all_ok();
        run(0);
        all_ok();
        int64_t at = 0;
        for (int rep = 0; rep < 2; rep++)
            for (int r = 0; r < nranks; r++)
                for (int m = 0; m < T; m++)
                    for (int i = 0; i < NPIECES; i++, at += PIECE)
                        memcpy(map + at, all + ((int64_t)r * T + m) * NPIECES * PIECE +
                                             (NPIECES - 1 - i) * PIECE, PIECE);
        check_file(map, 2 * total, "implicit writes");
        /* explicit, interleaved: over the first copy */
        run(1);
        all_ok();
        for (int r = 0; r < nranks; r++)
            for (int m = 0; m < T; m++)
                for (int i = 0; i < NPIECES; i++)
                    memcpy(map + ((int64_t)(i * nranks + r) * T + m) * PIECE,
                           all + ((int64_t)r * T + m) * NPIECES * PIECE +
                               (NPIECES - 1 - i) * PIECE, PIECE);
        check_file(map, 2 * total, "explicit writes");
        /* reads of the explicit pieces */
        run(3);
        all_ok();
        for (int m = 0; m < T; m++) {
            CT_EQ(bytes_of[m], NPIECES * PIECE);
            CT_CHECK(memcmp(back[m], data[m], NPIECES * PIECE) == 0);
        }
        /* common pieces per rank */
        run(4);
        all_ok();
        for (int r = 0; r < nranks; r++)
            for (int i = 0; i < NPIECES; i++)
                memcpy(map + (int64_t)(i * nranks + r) * PIECE,
                       all + (int64_t)r * T * NPIECES * PIECE + i * PIECE, PIECE);
        check_file(map, 2 * total, "common writes");
        /* bad input on one thread of one rank: every thread of every rank fails */
        run(5);
        for (int m = 0; m < T; m++)
            CT_EQ(rc_of[m], TESS_ERR_ARG);
        check_file(map, 2 * total, "after a refused write");
        CT_OK(tess_file_close(file));
    }
    /* end of file: 500 bytes; member m of rank r reads 100 at (r * T + m) * 100 + 350 */
    if (me == 0) {
        int fd = open(path, O_WRONLY | O_TRUNC);
        CT_CHECK(fd >= 0 && pwrite(fd, map, 500, 0) == 500 && close(fd) == 0);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    CT_OK(tess_file_open_mpi(MPI_COMM_WORLD, path, TESS_RDONLY, NULL, &file));
    run(6);
    all_ok();
    for (int m = 0; m < T; m++) {
        int64_t off = (int64_t)(me * T + m) * 100 + 350, have = off >= 500 ? 0 : 500 - off;
        have = have > 100 ? 100 : have;
        CT_EQ(bytes_of[m], have);
        CT_CHECK(memcmp(back[m] + (NPIECES - 1) * PIECE, map + off, (size_t)have) == 0);
    }
    CT_OK(tess_file_close(file));
    tess_team_free(team);
    free(map);
    free(all);
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) {
        unlink(path);
        printf("test_team_mpi: %d ranks x %d threads: ok\n", nranks, T);
    }
    MPI_Finalize();
    return 0;
}
