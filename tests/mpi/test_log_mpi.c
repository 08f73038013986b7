/*
 * test_log_mpi.c - the log container (driver log) under MPI: one container opened collectively,
 * each process writing its own log, independent and collective access against a byte map every
 * process keeps:
 *  - independent rounds: random overlapping writes (in one round the processes write disjoint
 *    ranges, across rounds anything), sync-barrier-sync, then every process reads everything;
 *  - both processes at once through interleaved views of 100-byte blocks (with tess_method =
 *    sieve every write reads and rewrites windows holding the other's blocks: only the locks
 *    keep them from undoing each other);
 *  - write_at_all through interleaved views (two-phase: the aggregators' logs) over what is
 *    there, read back with read_at_all through the other process's view;
 *  - set_size; at the end one writer per process in the container, and the counters count.
 * Two passes: tess_log_refresh = read with tess_method = sieve, then refresh = sync with the
 * automatic method.
 */
#include "coll_test.h"
#include "driver/driver.h"
#include "driver/log.h"
#include "log_test.h"

enum { SPACE = 1 << 16, CAP = SPACE + 8192, ROUNDS = 6, CHUNKS = 7, BLOCK = 100, NBLOCKS = 150 };

extern const struct tess_driver tess_log_driver;

static unsigned char map[CAP], buf[CAP], back[CAP];
static int64_t map_size;

static void map_write(int op, int64_t off, int64_t len)
{
    for (int64_t k = 0; k < len; k++)
        map[off + k] = lt_content(op, off + k);
    map_size = off + len > map_size ? off + len : map_size;
}

/* Every process reads the whole file independently (default view) and gets the byte map. */
static void check_all(tess_file *f)
{
    int64_t n, size;
    CT_OK(tess_file_set_view(f, 0, TESS_BYTE, TESS_BYTE));
    CT_OK(tess_file_get_size(f, &size));
    CT_EQ(size, map_size);
    memset(back, 0xEE, sizeof back);
    CT_OK(tess_file_read_at(f, 0, back, CAP, TESS_BYTE, &n));
    CT_EQ(n, map_size);
    CT_CHECK(memcmp(back, map, (size_t)map_size) == 0);
}

/* MPI's rule for another process's writes to become visible. */
static void sync_barrier_sync(tess_file *f)
{
    CT_OK(tess_file_sync(f));
    MPI_Barrier(MPI_COMM_WORLD);
    CT_OK(tess_file_sync(f));
}

static void independent_rounds(tess_file *f, int rank, int np)
{
    for (int r = 0; r < ROUNDS; r++) {
        unsigned s = 31u * (unsigned)r + 7u;
        int64_t cut = 0, next;
        snprintf(ct_where, sizeof ct_where, "independent round %d", r);
        for (int c = 0; c < CHUNKS; c++, cut = next) {
            next = c == CHUNKS - 1 ? SPACE : cut + lt_rnd(&s) % ((SPACE - cut) / 3 + 1);
            int owner = (int)(lt_rnd(&s) % (unsigned)(np + 1));
            for (int k = (int)(lt_rnd(&s) % 3); owner < np && k >= 0 && next > cut; k--) {
                int op = r * 100 + c * 4 + k;
                int64_t a = cut + lt_rnd(&s) % (next - cut), len = 1 + lt_rnd(&s) % (next - a), n;
                if (owner == rank) {
                    for (int64_t i = 0; i < len; i++)
                        buf[i] = lt_content(op, a + i);
                    CT_OK(tess_file_write_at(f, a, buf, len, TESS_BYTE, &n));
                    CT_EQ(n, len);
                }
                map_write(op, a, len);
            }
        }
        sync_barrier_sync(f);
        check_all(f);
        MPI_Barrier(MPI_COMM_WORLD); /* reads done before the next round writes */
    }
}

/* The view of process q's 100-byte blocks: every np-th block from block q. */
static void set_interleaved(tess_file *f, int q, tess_type *blocks)
{
    CT_OK(tess_file_set_view(f, (int64_t)q * BLOCK, TESS_BYTE, blocks));
}

/* Where byte k of process q's data lands through its interleaved view at offset 0. */
static int64_t interleaved_pos(int q, int np, int64_t k)
{
    return (k / BLOCK * np + q) * BLOCK + k % BLOCK;
}

static void interleaved(tess_file *f, int rank, int np, tess_type *blocks, bool collective,
                        int op0)
{
    int64_t len = (int64_t)NBLOCKS * BLOCK, n;
    snprintf(ct_where, sizeof ct_where, "%s interleaved writes", collective ? "collective" :
             "independent");
    for (int q = 0; q < np; q++)
        for (int64_t k = 0; k < len; k++) {
            int64_t pos = interleaved_pos(q, np, k);
            if (q == rank)
                buf[k] = lt_content(op0 + q, pos);
            map[pos] = lt_content(op0 + q, pos);
            map_size = pos + 1 > map_size ? pos + 1 : map_size;
        }
    set_interleaved(f, rank, blocks);
    if (collective)
        CT_OK(tess_file_write_at_all(f, 0, buf, len, TESS_BYTE, &n));
    else
        CT_OK(tess_file_write_at(f, 0, buf, len, TESS_BYTE, &n));
    CT_EQ(n, len);
    sync_barrier_sync(f);
    /* read back through the next process's view, collectively */
    int q = (rank + 1) % np;
    set_interleaved(f, q, blocks);
    memset(back, 0xEE, (size_t)len);
    CT_OK(tess_file_read_at_all(f, 0, back, len, TESS_BYTE, &n));
    CT_EQ(n, len);
    for (int64_t k = 0; k < len; k++)
        CT_CHECK(back[k] == map[interleaved_pos(q, np, k)]);
    check_all(f);
    MPI_Barrier(MPI_COMM_WORLD);
}

static void pass(const char *refresh, const char *method)
{
    int rank = ct_rank(), np = ct_size();
    char path[96], prefixed[128];
    tess_file *f;
    tess_type *block, *blocks;
    tess_stats st;
    ct_path(path, sizeof path, refresh);
    snprintf(prefixed, sizeof prefixed, "log:%s", path);
    memset(map, 0, sizeof map);
    map_size = 0;
    const char *kv[] = {"tess_log_refresh", refresh, "tess_method", method, NULL};
    CT_OK(ct_open(MPI_COMM_WORLD, prefixed, TESS_RDWR | TESS_CREATE, kv, &f));
    CT_OK(tess_type_contiguous(BLOCK, TESS_BYTE, &block));
    CT_OK(tess_type_resized(block, 0, (int64_t)BLOCK * np, &blocks));

    independent_rounds(f, rank, np);
    interleaved(f, rank, np, blocks, false, 5000);
    interleaved(f, rank, np, blocks, true, 6000);

    snprintf(ct_where, sizeof ct_where, "set_size");
    CT_OK(tess_file_set_size(f, SPACE / 3));
    memset(map + SPACE / 3, 0, (size_t)(map_size - SPACE / 3));
    map_size = SPACE / 3;
    sync_barrier_sync(f);
    check_all(f);

    CT_OK(tess_file_stats(f, &st));
    CT_CHECK(st.io_ops > 0 && st.accessed_bytes > 0 && st.desired_bytes > 0);
    CT_OK(tess_file_close(f));
    tess_type_free(block);
    tess_type_free(blocks);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) { /* one log per process: the processes are the writers */
        tessi_storage s;
        const tessi_log_map *m;
        tessi_log_writer_info *w;
        int32_t nw;
        CT_CHECK(tessi_drv_open(&s, &tess_log_driver, path, TESS_RDONLY, NULL) == 0);
        CT_CHECK(tessi_log_snapshot(s.h, &m, &w, &nw) == 0);
        CT_EQ(nw, np);
        for (int i = 0; i < nw; i++)
            CT_CHECK(w[i].header_ok && w[i].entries > 0);
        free(w);
        CT_CHECK(tessi_drv_close(&s) == 0);
        CT_OK(tess_file_delete(prefixed, NULL));
        CT_CHECK(access(path, F_OK) != 0);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    pass("read", "sieve");
    pass("sync", "auto");
    if (ct_rank() == 0)
        printf("log container under MPI at %d processes: independent, interleaved and "
               "collective access hold\n", ct_size());
    MPI_Finalize();
    return 0;
}
