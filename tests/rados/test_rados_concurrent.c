/*
 * test_rados_concurrent.c - concurrent writers on one RADOS file lose no update. Four processes
 * own interleaved 8-byte pieces of a 48 KiB file (piece k belongs to process k % 4) and
 * rewrite all of theirs in each of 12 rounds, each round through a random method: naive, list
 * (compound writes), sieve (read-modify-write windows of 100 bytes that span the other
 * processes' pieces: guarded by object versions, retried on conflict) or datatype (the OSD
 * splices in place, atomically per object). Afterwards every byte must hold its owner's last
 * round's value: a read-modify-write that wrote back a stale copy of a neighbour's piece would
 * show there. The striping is small (512-byte units, 3 per row, 2 per object) so windows and
 * requests cross units and objects.
 */
#include "rados/rados_common.h"

#include <sys/wait.h>

#define NPROC 4
#define ROUNDS 12
#define PIECES 6144 /* 8-byte pieces: 48 KiB */

static int creator(const char *path)
{
    const char *kv[] = {"striping_unit", "512", "striping_factor", "3",
                        "tess_rados_object_size", "1024", NULL};
    tess_file *f;
    CHECK_OK(rt_open(path, TESS_RDWR | TESS_CREATE | TESS_EXCL, &f, kv));
    CHECK_OK(tess_file_close(f));
    return 0;
}

static int writer(const char *path, int p)
{
    static const char *const methods[] = {"naive", "list", "sieve", "datatype"};
    tess_type *ft;
    CHECK_OK(tess_type_vector(PIECES / NPROC, 8, 8 * NPROC, TESS_BYTE, &ft));
    static unsigned char buf[PIECES / NPROC * 8];
    unsigned seed = 12345u + (unsigned)p;
    for (int round = 0; round < ROUNDS; round++) {
        seed = seed * 1103515245u + 12345u;
        const char *m = methods[(seed >> 16) % 4];
        const char *kv[] = {"tess_method", m, "ind_wr_buffer_size", "100",
                            "ind_rd_buffer_size", "100", "tess_list_max_pairs", "16", NULL};
        tess_file *f;
        CHECK_OK(rt_open(path, TESS_RDWR, &f, kv));
        CHECK_OK(tess_file_set_view(f, 8 * p, TESS_BYTE, ft));
        memset(buf, 1 + p + NPROC * round, sizeof buf);
        int64_t moved;
        CHECK_OK(tess_file_write_at(f, 0, buf, sizeof buf, TESS_BYTE, &moved));
        CHECK(moved == (int64_t)sizeof buf);
        CHECK_OK(tess_file_close(f));
    }
    tess_type_free(ft);
    return 0;
}

int main(void)
{
    rt_conf();
    char path[256];
    rt_name(path, sizeof path, "concurrent");
    /* librados keeps threads: a process that forks must not have used it (a lock held by one
     * of its threads would stay held in the child). A first child creates the file. */
    int st;
    pid_t kids[NPROC];
    kids[0] = fork();
    CHECK(kids[0] >= 0);
    if (kids[0] == 0)
        _exit(creator(path));
    CHECK(waitpid(kids[0], &st, 0) == kids[0] && WIFEXITED(st) && WEXITSTATUS(st) == 0);
    for (int p = 0; p < NPROC; p++) {
        fflush(stdout);
        kids[p] = fork();
        CHECK(kids[p] >= 0);
        if (kids[p] == 0)
            _exit(writer(path, p));
    }
    for (int p = 0; p < NPROC; p++) {
        CHECK(waitpid(kids[p], &st, 0) == kids[p]);
        CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    static unsigned char img[PIECES * 8];
    rt_image(path, img, sizeof img);
    int bad = 0;
    for (int64_t x = 0; x < (int64_t)sizeof img; x++) {
        int owner = (int)((x / 8) % NPROC);
        unsigned want = 1 + (unsigned)owner + NPROC * (ROUNDS - 1);
        if (img[x] != want && bad++ < 5)
            fprintf(stderr, "byte %lld: %u, expected %u (process %d's last round)\n",
                    (long long)x, img[x], want, owner);
    }
    CHECK(bad == 0);
    CHECK_OK(rt_delete(path));
    printf("test_rados_concurrent: %d processes x %d rounds, no lost update\n", NPROC, ROUNDS);
    return 0;
}
