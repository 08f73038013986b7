/*
 * test_bench_turns.c - the benchmarks' turns on one file (bench/common.c, bench_time_turns),
 * which keep `tessera bench sweep|pmd|indep` fair: each repetition of an alternative runs
 * between its begin and end with no other turn open, its first turn calibrates and every turn
 * makes an untimed call before the timed ones, the repetitions rotate (each starting one
 * alternative later), `last` marks an alternative's final turn, and a failing begin drops that
 * alternative alone (no end for it). bench_prefill and bench_prefill_from fill a file in place
 * (same inode, cut to size) with the byte or the source. bench_turn_file_ready prefills the file
 * before every write turn and before a read turn only where no read turn came just before (or
 * the file was written since).
 */
#include "bench.h"
#include "check.h"

#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { N = 3, REPS = 4, FAILS = 1 }; /* alternative FAILS fails its second begin */

static struct {
    int open;            /* the alternative whose turn is open, or -1 */
    int order[N * REPS]; /* alternatives in the order their turns began */
    int turns;
    int begins[N], ends[N], lasts[N];
    long calls[N], in_turn[N];
} st = {.open = -1};

static int call(void *ctx)
{
    int i = (int)(long)ctx;
    CHECK(st.open == i); /* no call outside the alternative's own turn */
    st.calls[i]++;
    st.in_turn[i]++;
    return 0;
}

static int begin(void *ctx, int i)
{
    (void)ctx;
    CHECK(st.open == -1);
    if (++st.begins[i] == 2 && i == FAILS)
        return -1;
    st.open = i;
    st.order[st.turns++] = i;
    st.in_turn[i] = 0;
    return 0;
}

static int end(void *ctx, int i, int last)
{
    (void)ctx;
    CHECK(st.open == i);
    CHECK(st.in_turn[i] >= 2); /* the untimed call and at least one timed */
    st.ends[i]++;
    st.lasts[i] += last;
    st.open = -1;
    return 0;
}

static void check_turns(void)
{
    bench_fn fn[N];
    void *ctx[N];
    double med[N];
    for (int i = 0; i < N; i++) {
        fn[i] = call;
        ctx[i] = (void *)(long)i;
    }
    bench_timing t = {.reps = REPS, .min_rep_sec = 1e-4};
    bench_turns turns = {.begin = begin, .end = end, .ctx = NULL};
    CHECK(bench_time_turns(N, fn, ctx, &t, &turns, med) == 1);
    CHECK(st.open == -1);
    /* repetition r starts with alternative r % N; FAILS drops out after its first turn */
    int k = 0;
    for (int r = 0; r < REPS; r++)
        for (int j = 0; j < N; j++) {
            int i = (j + r) % N;
            if (i == FAILS && r > 0)
                continue;
            CHECK(st.order[k] == i);
            k++;
        }
    CHECK(st.turns == k);
    for (int i = 0; i < N; i++) {
        CHECK(st.ends[i] == (i == FAILS ? 1 : REPS));
        CHECK(st.lasts[i] == (i == FAILS ? 0 : 1));
        CHECK(i == FAILS ? med[i] == 0.0 : med[i] > 0.0);
    }
}

static void check_prefill(void)
{
    char path[] = "test_bench_turns.dat";
    unsigned char src[5000], got[6000];
    for (int i = 0; i < (int)sizeof src; i++)
        src[i] = (unsigned char)(i * 7 + 3);
    CHECK(bench_prefill(path, 6000, 0x5A, 1024) == 0);
    struct stat a, b;
    CHECK(stat(path, &a) == 0 && a.st_size == 6000);
    FILE *f = fopen(path, "rb");
    CHECK(f && fread(got, 1, 6000, f) == 6000);
    fclose(f);
    for (int i = 0; i < 6000; i++)
        CHECK(got[i] == 0x5A);
    CHECK(bench_prefill_from(path, src, (int64_t)sizeof src, 1000) == 0);
    CHECK(stat(path, &b) == 0 && b.st_size == (off_t)sizeof src && b.st_ino == a.st_ino);
    f = fopen(path, "rb");
    CHECK(f && fread(got, 1, sizeof got, f) == sizeof src);
    fclose(f);
    CHECK(memcmp(got, src, sizeof src) == 0);
    unlink(path);
}

/* The file's content against the byte or the image. */
static int holds(const char *path, const unsigned char *image, int byte, size_t n)
{
    unsigned char got[6000];
    FILE *f = fopen(path, "rb");
    size_t k = f ? fread(got, 1, sizeof got, f) : 0;
    if (f)
        fclose(f);
    if (k != n)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (got[i] != (image ? image[i] : byte))
            return 0;
    return 1;
}

/* bench_turn_file_ready: a read turn after read turns finds the file as it is (no prefill);
 * the first read turn, one after a write turn and one after anything wrote the file get the
 * image again, every write turn the fill byte. */
static void check_turn_file(void)
{
    char path[] = "test_bench_turns_file.dat";
    unsigned char image[5000];
    for (int i = 0; i < (int)sizeof image; i++)
        image[i] = (unsigned char)(i * 13 + 5);
    bench_turn_file f = {.path = path, .dir = ".", .size = sizeof image, .piece = 1024,
                         .fill = 0x5A, .image = image};
    CHECK(bench_turn_file_ready(&f, 0) == 0 && f.prefills == 1); /* the first turn */
    CHECK(holds(path, image, 0, sizeof image) && f.settles == 1);
    CHECK(bench_turn_file_ready(&f, 0) == 0 && f.prefills == 1); /* read after read */
    CHECK(bench_turn_file_ready(&f, 0) == 0 && f.prefills == 1);
    CHECK(holds(path, image, 0, sizeof image) && f.settles == 1);
    /* every write turn is prefilled; only the first is written back (before its prefill) */
    CHECK(bench_turn_file_ready(&f, 1) == 0 && f.prefills == 2 && f.settles == 2);
    CHECK(holds(path, NULL, 0x5A, sizeof image));
    CHECK(bench_turn_file_ready(&f, 1) == 0 && f.prefills == 3 && f.settles == 2);
    CHECK(bench_turn_file_ready(&f, 1) == 0 && f.prefills == 4 && f.settles == 2);
    CHECK(bench_turn_file_ready(&f, 0) == 0 && f.prefills == 5); /* read after write */
    CHECK(holds(path, image, 0, sizeof image) && f.settles == 3);
    CHECK(bench_turn_file_ready(&f, 0) == 0 && f.prefills == 5 && f.settles == 3);
    FILE *w = fopen(path, "r+b"); /* written behind the turns' back: the same size and bytes */
    CHECK(w && fputc(image[0], w) == image[0]);
    fclose(w);
    CHECK(bench_turn_file_ready(&f, 0) == 0 && f.prefills == 6);
    w = fopen(path, "r+b"); /* a byte changed */
    CHECK(w && fputc(image[0] ^ 1, w) == (image[0] ^ 1));
    fclose(w);
    CHECK(bench_turn_file_ready(&f, 0) == 0 && f.prefills == 7);
    CHECK(holds(path, image, 0, sizeof image));
    unlink(path);
}

int main(void)
{
    check_turns();
    check_prefill();
    check_turn_file();
    printf("ok\n");
    return 0;
}
