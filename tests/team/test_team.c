/*
 * test_team.c - thread-collective I/O over plain pthreads (tessera_team.h), against a byte map
 * built from the members' arguments by a loop of its own and the file read back with POSIX
 * calls:
 *  - implicit offsets (member order, list order, the file pointer across calls), explicit
 *    offsets (a random permutation of blocks with holes), common pieces; one or many pieces a
 *    member; every hint (CONTIG where the pieces are contiguous: the same bytes as UNKNOWN and
 *    NONCONTIG); s_min and active threads from hints, so that blocks are split, cut through
 *    pieces and moved as scattered parts through a view;
 *  - mixed sizes: members with one large run in the file (they move it themselves, outside the
 *    plan) next to members with small scattered pieces (the work manager's);
 *  - reads of the same shapes, and past the end of file (zeros, bytes);
 *  - sequences of reads that every member moves before the opening meeting, at places known or
 *    guessed (right, wrong, across the end of file);
 *  - a storage error on one member moving its own run: the error on every member;
 *  - tess_team_open / tess_team_close, and a file opened before the team by one thread;
 *  - the same cases through the log driver (a container: one data log per worker);
 *  - s_min and active threads: hint over $TESS_OMP_SMIN / $TESS_OMP_ACTIVE, a bad value refused;
 *  - bad input on one member (another file, another hint, a NULL piece, CONTIG that is not so):
 *    the error on every member, no hang, the file unchanged; a call outside a team.
 *
 * usage: test_team [rounds] [seed]
 */
#include "test_file_common.h"
#include "tessera_team.h"

#include <pthread.h>

enum { MAXP = 4, BLOCK = 3000, MAXPIECES = 40 };

static char path[64];
static unsigned seed = 20251124;
static int P;             /* members in the current team */
static tess_team *team;

/* ------------------------------------------------------------------ running members */

typedef void (*member_fn)(int rank);
static member_fn current;

static void *member_main(void *arg)
{
    current((int)(intptr_t)arg);
    return NULL;
}

/* Run fn on P threads (the members) and wait for all of them. */
static void run(member_fn fn)
{
    pthread_t th[MAXP];
    current = fn;
    for (int r = 0; r < P; r++)
        CHECK(pthread_create(&th[r], NULL, member_main, (void *)(intptr_t)r) == 0);
    for (int r = 0; r < P; r++)
        CHECK(pthread_join(th[r], NULL) == 0);
}

static unsigned next_rand(void)
{
    seed = seed * 1103515245u + 12345u;
    return (seed >> 8) & 0xffffff;
}

/* ------------------------------------------------------------------ one case */

/* A case: every member's pieces (lengths, memory places, file offsets) and how it is called. */
typedef struct {
    int n[MAXP];
    int64_t len[MAXP][MAXPIECES], off[MAXP][MAXPIECES], mem[MAXP][MAXPIECES];
    bool explicit_off, common, contig;
    int hint;
    const char *smin, *active;
} shape;

static shape sh;
static unsigned char *memory[MAXP]; /* each member's buffer */
static unsigned char *expect;       /* the byte map of the file */
static int64_t fsize;
static tess_file *file;
static int64_t got_bytes[MAXP];
static int call_rc[MAXP];

static void make_shape(int k)
{
    memset(&sh, 0, sizeof sh);
    sh.explicit_off = k % 3 == 1;
    sh.common = k % 5 == 4;
    sh.contig = k % 4 == 0 && !sh.explicit_off; /* contiguous memory: every hint applies */
    sh.hint = sh.contig ? (int)(next_rand() % 3) : next_rand() % 2 ? TESS_TEAM_UNKNOWN
                                                                    : TESS_TEAM_NONCONTIG;
    static const char *const smins[] = {"1", "4096", "10000", "1048576"};
    static const char *const actives[] = {"1", "2", "3", "4"};
    sh.smin = smins[next_rand() % 4];
    sh.active = actives[next_rand() % 4];
    /* blocks of the file dealt to (member, piece) in a random order, some left as holes */
    int64_t order[MAXP * MAXPIECES];
    int slots = 0;
    for (int r = 0; r < (sh.common ? 1 : P); r++) {
        sh.n[r] = 1 + (int)(next_rand() % (k % 2 ? MAXPIECES : 3));
        slots += sh.n[r];
    }
    for (int i = 0; i < slots; i++)
        order[i] = i;
    for (int i = slots - 1; i > 0; i--) { /* shuffle */
        int j = (int)(next_rand() % (unsigned)(i + 1));
        int64_t x = order[i];
        order[i] = order[j];
        order[j] = x;
    }
    int64_t m = 0; /* contiguous shapes: one buffer, every member's pieces after the last's */
    for (int r = 0, s = 0; r < (sh.common ? 1 : P); r++) {
        if (!sh.contig)
            m = 0;
        for (int i = 0; i < sh.n[r]; i++, s++) {
            sh.len[r][i] = next_rand() % 7 == 0 ? 0 : 1 + (int64_t)(next_rand() % BLOCK);
            sh.mem[r][i] = m + (sh.contig ? 0 : (int64_t)(next_rand() % 3));
            m = sh.mem[r][i] + sh.len[r][i];
            sh.off[r][i] = order[s] * (BLOCK + 64) + (int64_t)(next_rand() % 64);
        }
    }
    if (sh.common)
        for (int r = 1; r < P; r++) {
            sh.n[r] = sh.n[0];
            memcpy(sh.len[r], sh.len[0], sizeof sh.len[0]);
            memcpy(sh.off[r], sh.off[0], sizeof sh.off[0]);
            memcpy(sh.mem[r], sh.mem[0], sizeof sh.mem[0]);
        }
}

/* The buffer member r's piece offsets are relative to (one for all in common and contiguous
 * shapes). */
static unsigned char *base_of(unsigned char **bufs, int r)
{
    return bufs[sh.common || sh.contig ? 0 : r];
}

/* The byte map: what the file holds after the write at file pointer fp (a loop of its own). */
static int64_t apply_map(int64_t fp)
{
    int64_t end = fp;
    for (int r = 0; r < (sh.common ? 1 : P); r++)
        for (int i = 0; i < sh.n[r]; i++) {
            int64_t off = sh.explicit_off ? sh.off[r][i] : end;
            for (int64_t b = 0; b < sh.len[r][i]; b++)
                expect[off + b] = base_of(memory, r)[sh.mem[r][i] + b];
            if (sh.len[r][i] > 0 && off + sh.len[r][i] > fsize) /* empty pieces write nothing */
                fsize = off + sh.len[r][i];
            if (!sh.explicit_off)
                end += sh.len[r][i];
        }
    return end;
}

static tess_team_args args_of(int r, struct iovec *iov, int64_t *offs, unsigned char *base)
{
    for (int i = 0; i < sh.n[r]; i++) {
        iov[i] = (struct iovec){.iov_base = base + sh.mem[r][i], .iov_len = (size_t)sh.len[r][i]};
        offs[i] = sh.off[r][i];
    }
    return (tess_team_args){.iov = iov, .offsets = sh.explicit_off ? offs : NULL, .n = sh.n[r],
                            .hint = sh.hint, .common = sh.common};
}

static int64_t member_total(int r)
{
    int64_t t = 0;
    for (int i = 0; i < sh.n[r]; i++)
        t += sh.len[r][i];
    return t;
}

static void write_member(int r)
{
    struct iovec iov[MAXPIECES];
    int64_t offs[MAXPIECES];
    tess_team_args a = args_of(r, iov, offs, base_of(memory, r));
    call_rc[r] = tess_team_write(team, r, file, &a, &got_bytes[r]);
    if (call_rc[r])
        fprintf(stderr, "member %d: %s\n", r, tess_last_error());
}

static unsigned char *readback[MAXP];

static void read_member(int r)
{
    struct iovec iov[MAXPIECES];
    int64_t offs[MAXPIECES];
    tess_team_args a = args_of(r, iov, offs, base_of(readback, r));
    call_rc[r] = tess_team_read(team, r, file, &a, &got_bytes[r]);
}

static char log_path[80]; /* "log:<container>": the cases again through the log driver */
static bool use_log;

static tess_file *open_hints(int flags)
{
    const char *kv[] = {"tess_omp_smin", sh.smin, "tess_omp_active", sh.active, NULL};
    tess_file *f;
    CHECK_OK(tf_open(use_log ? log_path : path, flags, &f, kv));
    return f;
}

/* The file's size and contents: POSIX, or the log container's logical file read by a handle of
 * its own. */
static int64_t file_contents(unsigned char **data)
{
    if (!use_log)
        return tf_get(path, data);
    tess_file *f;
    int64_t size, got;
    CHECK_OK(tess_file_open(log_path, TESS_RDONLY, NULL, &f));
    CHECK_OK(tess_file_get_size(f, &size));
    *data = malloc((size_t)size + 1);
    CHECK(*data);
    CHECK_OK(tess_file_read_at(f, 0, *data, size, TESS_BYTE, &got));
    CHECK(got == size);
    CHECK_OK(tess_file_close(f));
    return size;
}

/* An empty file to start a case with. */
static void empty_file(void)
{
    if (!use_log) {
        tf_put(path, "", 0);
        return;
    }
    int rc = tess_file_delete(log_path, NULL);
    CHECK(rc == 0 || rc == TESS_ERR_NOENT);
}

/* A case of mixed sizes: even members pass 20000 bytes in three pieces one after the other in
 * the file (not in memory, one of them empty): one run of at least 16 KiB, which such a member
 * moves itself; odd members pass six pieces of 500 bytes apart in the file (explicit offsets)
 * that go through the work manager. s_min 1 MiB. */
static void make_mixed(int k)
{
    static const int64_t big[3] = {7000, 0, 13000};
    memset(&sh, 0, sizeof sh);
    sh.explicit_off = k % 2 == 1;
    sh.hint = k % 4 < 2 ? TESS_TEAM_UNKNOWN : TESS_TEAM_NONCONTIG;
    sh.smin = "1048576";
    sh.active = k % 3 ? "1" : "2";
    for (int r = 0; r < P; r++) {
        int64_t at = (P - 1 - r) * 24000; /* members in reverse order in the file */
        sh.n[r] = r % 2 ? 6 : 3;
        for (int i = 0, m = 0; i < sh.n[r]; i++) {
            sh.len[r][i] = r % 2 ? 500 : big[i];
            sh.mem[r][i] = m;
            sh.off[r][i] = at;
            m += (int)sh.len[r][i] + 100;
            at += sh.len[r][i] + (r % 2 ? 1000 : 0);
        }
    }
}

/* One case (shape k of make): two writes at the file pointer (or two explicit), the file
 * against the byte map, then the reads of the same pieces against the memory. */
static void run_case(int k, void (*make)(int))
{
    make(k);
    int64_t cap = (int64_t)(MAXP * MAXPIECES + 2) * (BLOCK + 64) * 2;
    memset(expect, 0, (size_t)cap);
    fsize = 0;
    for (int r = 0; r < P; r++)
        for (int64_t b = 0; b < 4 * MAXPIECES * BLOCK; b++)
            memory[r][b] = (unsigned char)(b * 131 + b / 251 + k * 7 + r * 29);
    empty_file();
    file = open_hints(TESS_RDWR | (use_log ? TESS_CREATE : 0));
    int64_t fp = 0;
    for (int rep = 0; rep < 2; rep++) {
        run(write_member);
        for (int r = 0; r < P; r++) {
            CHECK(call_rc[r] == 0);
            CHECK(got_bytes[r] == member_total(sh.common ? 0 : r));
        }
        fp = apply_map(fp);
    }
    CHECK_OK(tess_file_close(file));
    unsigned char *data;
    if (file_contents(&data) != fsize) {
        fprintf(stderr, "case %d: P %d hint %d explicit %d common %d smin %s active %s: size "
                "%lld, expected %lld\n", k, P, sh.hint, sh.explicit_off, sh.common, sh.smin,
                sh.active, (long long)file_contents(&data), (long long)fsize);
        exit(1);
    }
    if (memcmp(data, expect, (size_t)fsize) != 0) {
        fprintf(stderr, "case %d: P %d hint %d explicit %d common %d smin %s active %s: the "
                "file differs from the byte map\n", k, P, sh.hint, sh.explicit_off, sh.common,
                sh.smin, sh.active);
        exit(1);
    }
    free(data);
    /* reads: the pieces of the first write (explicit: the same places; implicit: from 0) */
    file = open_hints(TESS_RDONLY);
    for (int r = 0; r < P; r++)
        memset(readback[r], 0xEE, 4 * MAXPIECES * BLOCK);
    run(read_member);
    for (int r = 0; r < P; r++) {
        CHECK(call_rc[r] == 0);
        CHECK(got_bytes[r] == member_total(sh.common ? 0 : r));
    }
    fp = 0;
    for (int r = 0; r < (sh.common ? 1 : P); r++)
        for (int i = 0; i < sh.n[r]; i++) {
            int64_t off = sh.explicit_off ? sh.off[r][i] : fp;
            CHECK(memcmp(base_of(readback, r) + sh.mem[r][i], expect + off,
                         (size_t)sh.len[r][i]) == 0);
            fp += sh.len[r][i];
        }
    CHECK_OK(tess_file_close(file));
}

/* ------------------------------------------------------------------ O_DIRECT reads */

enum { DIRECT_RUN = 32768 }; /* a run of its own for every member (at least OWN_MIN) */
static unsigned char *direct_buf[MAXP]; /* page-aligned: O_DIRECT */

static void direct_member(int r)
{
    struct iovec iov = {.iov_base = direct_buf[r], .iov_len = DIRECT_RUN};
    int64_t off = (int64_t)r * DIRECT_RUN;
    tess_team_args a = {.iov = &iov, .n = 1, .offsets = &off};
    call_rc[r] = tess_team_read(team, r, file, &a, &got_bytes[r]);
}

/* An uncached (O_DIRECT) read below s_min is one vectored read by one member, even when every
 * member has a CPU and reads a run of its own (page-cache reads of own runs stay parallel
 * then): the device, not the CPUs, moves the data. Skipped where the file system refuses
 * O_DIRECT. */
static void check_direct_read(void)
{
    static const char *const kv[] = {"tess_posix_direct", "enable", NULL};
    for (int64_t i = 0; i < DIRECT_RUN * P; i++)
        expect[i] = (unsigned char)(i * 7 + i / 4093);
    tf_put(path, expect, DIRECT_RUN * P);
    if (tf_open(path, TESS_RDONLY, &file, kv) != 0) {
        printf("test_team: O_DIRECT refused here, its read case skipped\n");
        return;
    }
    for (int r = 0; r < P; r++) {
        CHECK(posix_memalign((void **)&direct_buf[r], 4096, DIRECT_RUN) == 0);
        memset(direct_buf[r], 0, DIRECT_RUN);
    }
    run(direct_member);
    tess_stats st;
    CHECK_OK(tess_file_stats_sized(file, &st, sizeof st));
    CHECK(st.io_ops == 1);
    for (int r = 0; r < P; r++) {
        CHECK(call_rc[r] == 0 && got_bytes[r] == DIRECT_RUN);
        CHECK(memcmp(direct_buf[r], expect + r * DIRECT_RUN, DIRECT_RUN) == 0);
        free(direct_buf[r]);
    }
    CHECK_OK(tess_file_close(file));
}

/* ------------------------------------------------------------------ one block */

static pthread_barrier_t caller_barrier;

static void caller_wait(void *ctx)
{
    pthread_barrier_wait(ctx);
}

/* Member r writes 20000 bytes of its own after the others' (implicit offsets), then reads them; the
 * last member, with late, arrives 30 ms after the others (longer than the opening meeting
 * waits on a team with a caller's barrier: the members meet at that barrier instead). */
static bool late;

static void block_member(int r)
{
    struct iovec iov = {.iov_base = memory[r], .iov_len = 20000};
    tess_team_args a = {.iov = &iov, .n = 1};
    if (late && r == P - 1)
        usleep(30000);
    call_rc[r] = tess_team_write(team, r, file, &a, &got_bytes[r]);
    int64_t off = r * 20000;
    iov.iov_base = readback[r];
    a.offsets = &off; /* the file pointer is past the data now */
    memset(readback[r], 0, 20000);
    if (call_rc[r] == 0)
        call_rc[r] = tess_team_read(team, r, file, &a, &got_bytes[r]);
}

/* A write of less than s_min bytes is one block of the work manager: one member moves it, in
 * one vectored storage call, though every member's pieces are large enough to move on their
 * own. The same data in the file and read back when a member comes late to a team with a
 * caller's barrier. */
static void check_one_block(void)
{
    tess_team *own = team;
    for (int r = 0; r < P; r++)
        memset(memory[r], 'a' + r, 20000);
    for (late = false;; late = true) {
        tess_stats st;
        tf_put(path, "", 0);
        CHECK_OK(tf_open(path, TESS_RDWR, &file, NULL));
        run(block_member);
        CHECK_OK(tess_file_stats_sized(file, &st, sizeof st));
        /* one vectored write; reads (explicit offsets, page cache): every member its own,
         * before the opening meeting */
        CHECK(late || st.io_ops == 1 + P);
        for (int r = 0; r < P; r++) {
            CHECK(call_rc[r] == 0 && got_bytes[r] == 20000);
            CHECK(memcmp(readback[r], memory[r], 20000) == 0);
        }
        CHECK_OK(tess_file_close(file));
        int64_t size = 0;
        CHECK_OK(tf_open(path, TESS_RDONLY, &file, NULL));
        CHECK_OK(tess_file_get_size(file, &size));
        CHECK(size == 20000 * P);
        CHECK_OK(tess_file_close(file));
        if (late || P == 1)
            break;
        CHECK(pthread_barrier_init(&caller_barrier, NULL, (unsigned)P) == 0);
        CHECK_OK(tess_team_create(P, caller_wait, &caller_barrier, &team));
    }
    if (team != own) {
        tess_team_free(team);
        pthread_barrier_destroy(&caller_barrier);
        team = own;
    }
    late = false;
}

/* ------------------------------------------------------------------ end of file */

static void eof_member(int r)
{
    /* member r reads 1000 bytes at r * 700: the file has 1500 */
    struct iovec iov = {.iov_base = readback[r], .iov_len = 1000};
    int64_t off = r * 700;
    memset(readback[r], 0xEE, 1000);
    tess_team_args a = {.iov = &iov, .offsets = &off, .n = 1};
    call_rc[r] = tess_team_read(team, r, file, &a, &got_bytes[r]);
    if (call_rc[r])
        fprintf(stderr, "member %d: %s\n", r, tess_last_error());
}

static void check_eof(void)
{
    unsigned char data[1500];
    for (int i = 0; i < 1500; i++)
        data[i] = (unsigned char)(i * 7 + 1);
    tf_put(path, data, 1500);
    CHECK_OK(tf_open(path, TESS_RDONLY, &file, (const char *const[]){"tess_omp_smin", "1",
                                                                      NULL}));
    run(eof_member);
    for (int r = 0; r < P; r++) {
        int64_t have = r * 700 >= 1500 ? 0 : 1500 - r * 700 < 1000 ? 1500 - r * 700 : 1000;
        CHECK(call_rc[r] == 0);
        CHECK(got_bytes[r] == have);
        CHECK(memcmp(readback[r], data + r * 700, (size_t)have) == 0);
        for (int64_t b = have; b < 1000; b++)
            CHECK(readback[r][b] == 0);
    }
    CHECK_OK(tess_file_close(file));
}

/* ------------------------------------------------------------------ reads before the meeting */

/* Page-cache reads whose place a member knows (explicit offsets) or guesses (implicit: its place
 * in its last call plus that call's bytes) are moved by every member before the opening meeting;
 * a wrong guess is read again. A sequence of one-piece reads against the byte map: equal lengths
 * (every guess right from the second call on: one storage call per member), an explicit-offset
 * call in between (the pointer stays), other lengths (the guesses wrong once, then right), then
 * a member without data (wrong once, then right), a call across the end of file and one past it
 * (zeros, the same end on every member). */
enum { SPEC_CALLS = 10 };
static int64_t spec_len[SPEC_CALLS][MAXP];
static int spec_call;

static int64_t spec_explicit_off(int r)
{
    return 5000 + (int64_t)(P - 1 - r) * 4000; /* members in reverse order, apart */
}

static void spec_member(int r)
{
    int64_t len = spec_len[spec_call][r], off = spec_explicit_off(r);
    struct iovec iov = {.iov_base = readback[r], .iov_len = (size_t)len};
    memset(readback[r], 0xEE, (size_t)len);
    tess_team_args a = {.iov = &iov, .n = 1, .hint = TESS_TEAM_UNKNOWN,
                        .offsets = spec_call == 3 ? &off : NULL};
    call_rc[r] = tess_team_read(team, r, file, &a, &got_bytes[r]);
    if (call_rc[r])
        fprintf(stderr, "member %d: %s\n", r, tess_last_error());
}

static void check_spec_reads(void)
{
    int64_t fp = 0, size = 0;
    for (int c = 0; c < SPEC_CALLS; c++)
        for (int r = 0; r < P; r++)
            spec_len[c][r] = c < 4 ? 3000 : c >= 6 && P > 1 && r == P / 2 ? 0
                                                                         : 1000 + 900 * (P - r);
    for (int c = 0; c < 8; c++) /* the end of file in the middle of call 8's data */
        for (int r = 0; r < P && c != 3; r++)
            size += spec_len[c][r];
    for (int r = 0; r < P; r++)
        size += spec_len[8][r] / 2;
    unsigned char *data = malloc((size_t)size + 1);
    CHECK(data);
    for (int64_t i = 0; i < size; i++)
        data[i] = (unsigned char)(i * 13 + i / 977 + 5);
    tf_put(path, data, size);
    /* s_min 1000: every member's piece large enough to be read on its own at any team size */
    CHECK_OK(tf_open(path, TESS_RDONLY, &file, (const char *const[]){"tess_omp_smin", "1000",
                                                                    NULL}));
    for (spec_call = 0; spec_call < SPEC_CALLS; spec_call++) {
        tess_stats before, after;
        CHECK_OK(tess_file_stats_sized(file, &before, sizeof before));
        run(spec_member);
        CHECK_OK(tess_file_stats_sized(file, &after, sizeof after));
        bool implicit = spec_call != 3;
        int64_t at = fp, movers = 0;
        for (int r = 0; r < P; r++) {
            movers += spec_len[spec_call][r] > 0;
            int64_t len = spec_len[spec_call][r], off = implicit ? at : spec_explicit_off(r);
            int64_t have = off >= size ? 0 : size - off < len ? size - off : len;
            CHECK(call_rc[r] == 0);
            CHECK(got_bytes[r] == have);
            CHECK(memcmp(readback[r], data + off, (size_t)have) == 0);
            for (int64_t b = have; b < len; b++)
                CHECK(readback[r][b] == 0);
            at += len;
        }
        if (implicit)
            fp = at;
        if (spec_call == 2 || spec_call == 5 || spec_call == 7) /* every guess right: */
            CHECK(after.io_ops - before.io_ops == movers); /* one read per member with data */
    }
    CHECK_OK(tess_file_close(file));
    free(data);
}

/* ------------------------------------------------------------------ a storage error */

static int fail_rank;

static bool told[MAXP]; /* member r's message points to another member's failure */

/* Every member writes 20000 bytes of its own; fail_rank's go to 2^60, beyond what the file
 * system takes. */
static void far_member(int r)
{
    struct iovec iov = {.iov_base = memory[r], .iov_len = 20000};
    int64_t off = r == fail_rank ? (int64_t)1 << 60 : r * 20000;
    tess_team_args a = {.iov = &iov, .offsets = &off, .n = 1};
    call_rc[r] = tess_team_write(team, r, file, &a, &got_bytes[r]);
    told[r] = call_rc[r] && strstr(tess_last_error(), "failed on member");
}

/* A storage error: the same error on every member, and every member but the one that met it
 * told which did. s_min 1: each member moves its own pieces (fail_rank meets it); the default
 * s_min (1 MiB): the call is one block, which the last member to arrive moves. */
static void check_storage_error(void)
{
    for (int own = 0; own < 2; own++) {
        tf_put(path, "", 0);
        CHECK_OK(tf_open(path, TESS_RDWR, &file, own ? (const char *const[]){"tess_omp_smin",
                                                                             "1", NULL}
                                                     : NULL));
        fail_rank = (int)(next_rand() % (unsigned)P);
        run(far_member);
        int untold = 0;
        for (int r = 0; r < P; r++) {
            CHECK(call_rc[r] < 0 && call_rc[r] == call_rc[0] && got_bytes[r] == 0);
            untold += !told[r];
            CHECK(!own || told[r] == (r != fail_rank));
        }
        CHECK(untold == 1);
        CHECK_OK(tess_file_close(file));
    }
}

/* ------------------------------------------------------------------ team open, bad input */

static tess_file *team_file[MAXP], *other;
static int bad_kind, bad_rank;

static void open_member(int r)
{
    call_rc[r] = tess_team_open(team, r, path, TESS_RDWR | TESS_CREATE, NULL, &team_file[r]);
}

static void close_member(int r)
{
    call_rc[r] = tess_team_close(team, r, team_file[0]);
}

/* Every member writes 100 bytes at the pointer; bad_rank misbehaves as bad_kind says. */
static void bad_member(int r)
{
    unsigned char buf[100];
    memset(buf, 'a' + r, sizeof buf);
    struct iovec iov[2] = {{.iov_base = buf, .iov_len = 50}, {.iov_base = buf + 60, .iov_len = 50}};
    tess_team_args a = {.iov = iov, .n = 2, .hint = TESS_TEAM_UNKNOWN};
    tess_file *f = team_file[0];
    if (r == bad_rank) {
        if (bad_kind == 0)
            f = other;
        else if (bad_kind == 1)
            a.hint = TESS_TEAM_NONCONTIG;
        else if (bad_kind == 2)
            iov[1].iov_base = NULL;
        else if (bad_kind == 3)
            a.hint = 7;
        else
            a.common = 1;
    }
    if (bad_kind == 4 + 1) /* CONTIG on every member, but the pieces have a gap */
        a.hint = TESS_TEAM_CONTIG;
    if (bad_kind == 2 && r == bad_rank) /* last to arrive, as a rule: it decides the call */
        usleep(2000);
    call_rc[r] = tess_team_write(team, r, f, &a, NULL);
    CHECK(call_rc[r] == 0 || tess_last_error()[0]);
    /* its own message for the member whose pieces are bad, a pointer to it for the others */
    CHECK(bad_kind != 2 || (r == bad_rank) == !strstr(tess_last_error(), "failed on member"));
}

static void check_open_and_bad_input(void)
{
    unlink(path);
    run(open_member);
    for (int r = 0; r < P; r++) {
        CHECK(call_rc[r] == 0);
        CHECK(team_file[r] == team_file[0]);
    }
    char opath[80];
    tf_path(opath, sizeof opath, "team_other");
    CHECK_OK(tf_open(opath, TESS_RDWR | TESS_CREATE, &other, NULL));
    for (bad_kind = 0; bad_kind < 6; bad_kind++) {
        if (P == 1 && bad_kind < 5 && bad_kind != 2 && bad_kind != 3)
            continue; /* nobody to differ from */
        bad_rank = (int)(next_rand() % (unsigned)P);
        run(bad_member);
        for (int r = 0; r < P; r++)
            CHECK(call_rc[r] == TESS_ERR_ARG);
        CHECK(tf_get(path, NULL) == 0); /* nothing written */
    }
    CHECK_OK(tess_file_close(other));
    unlink(opath);
    run(close_member);
    for (int r = 0; r < P; r++)
        CHECK(call_rc[r] == 0);
    /* outside a team */
    struct iovec iov = {.iov_base = path, .iov_len = 1};
    tess_team_args a = {.iov = &iov, .n = 1};
    CHECK_ERR(tess_team_write(NULL, 0, NULL, &a, NULL), TESS_ERR_ARG);
    CHECK_ERR(tess_team_write(team, P, NULL, &a, NULL), TESS_ERR_ARG);
    CHECK_ERR(tess_team_create(0, NULL, NULL, &team), TESS_ERR_ARG);
}

/* s_min and active threads: hint > environment > profile > default, shown by get_info. */
static void check_parameters(void)
{
    tess_file *f;
    tess_info *info;
    char v[64];
    int found;
    tf_put(path, "", 0);
    CHECK(setenv("TESS_OMP_SMIN", "12345", 1) == 0 && setenv("TESS_OMP_ACTIVE", "3", 1) == 0);
    CHECK_OK(tf_open(path, TESS_RDWR, &f, (const char *const[]){"tess_omp_active", "2", NULL}));
    CHECK_OK(tess_file_get_info(f, &info));
    CHECK_OK(tess_info_get(info, "tess_omp_smin", v, sizeof v, &found));
    CHECK(found && strcmp(v, "12345") == 0);
    CHECK_OK(tess_info_get(info, "tess_omp_active", v, sizeof v, &found));
    CHECK(found && strcmp(v, "2") == 0);
    tess_info_free(info);
    CHECK_OK(tess_file_close(f));
    CHECK(setenv("TESS_OMP_SMIN", "12k", 1) == 0);
    CHECK_ERR(tf_open(path, TESS_RDWR, &f, NULL), TESS_ERR_ARG);
    CHECK(strstr(tess_last_error(), "TESS_OMP_SMIN"));
    CHECK_ERR(tf_open(path, TESS_RDWR, &f, (const char *const[]){"tess_omp_smin", "0", NULL}),
              TESS_ERR_ARG);
    unsetenv("TESS_OMP_SMIN");
    unsetenv("TESS_OMP_ACTIVE");
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 40;
    if (argc > 2)
        seed = (unsigned)strtoul(argv[2], NULL, 10);
    tf_path(path, sizeof path, "team");
    snprintf(log_path, sizeof log_path, "log:%s.log", path);
    int64_t cap = (int64_t)(MAXP * MAXPIECES + 2) * (BLOCK + 64) * 2;
    expect = malloc((size_t)cap);
    CHECK(expect);
    for (int r = 0; r < MAXP; r++) {
        memory[r] = malloc(4 * MAXPIECES * BLOCK);
        readback[r] = malloc(4 * MAXPIECES * BLOCK);
        CHECK(memory[r] && readback[r]);
    }
    check_parameters();
    for (P = 1; P <= MAXP; P++) {
        CHECK_OK(tess_team_create(P, NULL, NULL, &team));
        for (int k = 0; k < rounds; k++)
            run_case(k, make_shape);
        for (int k = 0; k < 4; k++)
            run_case(k, make_mixed);
        check_eof();
        check_spec_reads();
        check_one_block();
        check_direct_read();
        check_storage_error();
        check_open_and_bad_input();
        use_log = P > 1; /* the log driver: one data log per worker's handle */
        for (int k = 0; use_log && k < rounds / 4; k++)
            run_case(k, make_shape);
        use_log = false;
        tess_team_free(team);
    }
    unlink(path);
    tess_file_delete(log_path, NULL);
    for (int r = 0; r < MAXP; r++) {
        free(memory[r]);
        free(readback[r]);
    }
    free(expect);
    printf("test_team: %d rounds at 1..%d members: ok\n", rounds, MAXP);
    return 0;
}
