/*
 * test_gate.c - the write gate (driver/gate.c): which handles of a file write unlocked and
 * which may read-modify-write, with handles of one process (open-file-description locks tell
 * them apart), forked processes and a killed one. Every file written is checked against a byte
 * map; the states are checked through the gate's own fields. No timing is asserted: where the
 * protocol depends on another handle noticing in time, the test asks again until it has.
 *
 *  1. alone: a handle writes unlocked and read-modify-writes (its window locked, nothing else);
 *  2. an idle handle writing unlocked: another's admission is refused, its sieving write falls
 *     back (no read-modify-write) and loses nothing;
 *  3. an active one: it notices the newcomer, locks its writes from then on; the newcomer
 *     read-modify-writes; when the newcomer closes, the other writes unlocked again;
 *  4. a killed process's announcement vanishes with it;
 *  5. a failing gate lock: plain writes lock, no read-modify-write.
 */
#include "test_file_common.h"

#include "core/file.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <signal.h>
#include <sys/wait.h>

#define LEN 4096
#define B 64 /* the sieving pattern: every other block of B bytes */

static char path[64];
static unsigned char image[LEN];

static tess_file *open_auto(void)
{
    tess_file *f;
    CHECK_OK(tess_file_open(path, TESS_RDWR, NULL, &f));
    return f;
}

/* A sieving write of the even blocks of [0, LEN) with method sieve (window LEN: one
 * read-modify-write), into the image too. */
static tess_stats sieving_write(unsigned char seed)
{
    tess_file *f;
    tess_type *v;
    tess_stats s;
    unsigned char buf[LEN / 2];
    int64_t n;
    const char *kv[] = {"tess_method", "sieve", NULL};
    CHECK_OK(tf_open(path, TESS_RDWR, &f, kv));
    CHECK_OK(tess_type_vector(LEN / (2 * B), B, 2 * B, TESS_BYTE, &v));
    CHECK_OK(tess_file_set_view(f, 0, TESS_BYTE, v));
    for (int i = 0; i < LEN / 2; i++) {
        buf[i] = (unsigned char)(seed + i);
        image[(i / B) * 2 * B + i % B] = buf[i];
    }
    CHECK_OK(tess_file_write_at(f, 0, buf, LEN / 2, TESS_BYTE, &n));
    CHECK(n == LEN / 2);
    CHECK_OK(tess_file_stats(f, &s));
    CHECK_OK(tess_file_close(f));
    tess_type_free(v);
    return s;
}

/* A contiguous write of [off, off + len) through f, into the image too. */
static void plain_write(tess_file *f, int64_t off, int64_t len, unsigned char seed)
{
    unsigned char buf[LEN];
    int64_t n;
    for (int64_t i = 0; i < len; i++)
        image[off + i] = buf[i] = (unsigned char)(seed * 3 + i);
    CHECK_OK(tess_file_write_at(f, off, buf, len, TESS_BYTE, &n));
    CHECK(n == len);
}

static void check_image(void)
{
    unsigned char *now;
    CHECK(tf_get(path, &now) == LEN);
    CHECK(memcmp(now, image, LEN) == 0);
    free(now);
}

static void fresh_file(void)
{
    for (int i = 0; i < LEN; i++)
        image[i] = (unsigned char)(i * 5);
    tf_put(path, image, LEN);
}

/* ------------------------------------------------------------------ 1 */

static void alone(void)
{
    fresh_file();
    tess_file *f = open_auto();
    tessi_gate *g = &f->st.gate;
    CHECK(g->kind == TESSI_GATE_LIVE && g->unlocked && !g->admitted);
    plain_write(f, 100, 1000, 1);
    tess_stats s;
    CHECK_OK(tess_file_stats(f, &s));
    CHECK(s.lock_ops == 0 && s.io_ops == 1); /* one pwrite */
    CHECK(tessi_gate_admit(&f->st) && g->admitted && g->unlocked); /* alone: both */
    CHECK_OK(tess_file_close(f));
    s = sieving_write(7);
    CHECK(s.lock_ops == 2 && s.lock_fallbacks == 0 && s.io_ops == 2); /* read, write back */
    check_image();
}

/* ------------------------------------------------------------------ 2, 3 */

typedef struct {
    tess_file *f;
    atomic_int stop;
    atomic_llong writes;
} writer;

/* Contiguous writes of the odd blocks (never the sieving writer's bytes) until told to stop. */
static void *keep_writing(void *arg)
{
    writer *w = arg;
    for (int64_t k = 0; !atomic_load(&w->stop); k++, atomic_fetch_add(&w->writes, 1))
        plain_write(w->f, B + (k % (LEN / (2 * B))) * 2 * B, B, (unsigned char)k);
    return NULL;
}

static void idle_and_active(void)
{
    fresh_file();
    tess_file *a = open_auto(), *b = open_auto();
    CHECK(a->st.gate.unlocked && b->st.gate.unlocked);
    /* a idles holding U: b's admission is refused, a is untouched */
    CHECK(!tessi_gate_admit(&b->st));
    CHECK(!b->st.gate.admitted && a->st.gate.unlocked);
    CHECK_OK(tess_file_close(b));
    tess_stats s = sieving_write(9); /* refused as well: written without read-modify-write */
    CHECK(s.lock_fallbacks == 1 && s.accessed_bytes == LEN / 2);
    check_image();

    /* a writes: b asks until a has noticed (each refusal waits TESSI_GATE_RETRY otherwise) */
    writer w = {.f = a};
    atomic_init(&w.stop, 0);
    atomic_init(&w.writes, 0);
    pthread_t th;
    CHECK(pthread_create(&th, NULL, keep_writing, &w) == 0);
    b = open_auto();
    while (!tessi_gate_admit(&b->st))
        b->st.gate.retry = 0;
    CHECK(b->st.gate.admitted);
    long long seen = atomic_load(&w.writes);
    while (atomic_load(&w.writes) < seen + 3) /* a's writes from now on are locked */
        sched_yield();
    atomic_store(&w.stop, 1);
    CHECK(pthread_join(th, NULL) == 0);
    CHECK(!a->st.gate.unlocked); /* b was admitted: a let go of U, and cannot take it back */
    tess_file_reset_stats(a);
    plain_write(a, B, B, 200);
    CHECK_OK(tess_file_stats(a, &s));
    CHECK(s.lock_ops == 2); /* a lock and an unlock around it */
    CHECK_OK(tess_file_close(b));
    /* b gone: at its next poll a writes unlocked again */
    while (!a->st.gate.unlocked) {
        a->st.gate.polled = -1;
        plain_write(a, 3 * B, B, 201);
    }
    tess_file_reset_stats(a);
    plain_write(a, B, B, 202);
    CHECK_OK(tess_file_stats(a, &s));
    CHECK(s.lock_ops == 0);
    CHECK_OK(tess_file_close(a));
    check_image();
}

/* ------------------------------------------------------------------ 4 */

static void killed(void)
{
    int ready[2];
    CHECK(pipe(ready) == 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) { /* open, announce U, then idle until killed */
        tess_file *f = open_auto();
        char c = f->st.gate.unlocked ? 'u' : 'x';
        if (write(ready[1], &c, 1) != 1)
            _exit(1);
        for (;;)
            pause();
    }
    char c = 0;
    CHECK(read(ready[0], &c, 1) == 1 && c == 'u');
    tess_file *b = open_auto();
    CHECK(!tessi_gate_admit(&b->st)); /* the idle child holds U */
    CHECK(kill(pid, SIGKILL) == 0);
    int status;
    CHECK(waitpid(pid, &status, 0) == pid && WIFSIGNALED(status));
    b->st.gate.retry = 0;
    CHECK(tessi_gate_admit(&b->st)); /* its lock went with it */
    CHECK_OK(tess_file_close(b));
    close(ready[0]);
    close(ready[1]);
}

/* ------------------------------------------------------------------ 5 */

static void failing(void)
{
    fresh_file();
    tess_file *f = open_auto();
    tessi_fault_inject(TESSI_OP_LOCK, 0, 1, -EIO); /* the next gate call fails */
    CHECK(!tessi_gate_admit(&f->st));
    CHECK(f->st.gate.kind == TESSI_GATE_BROKEN);
    CHECK(tessi_gate_locked_writes(&f->st) && !tessi_gate_admit(&f->st));
    tess_file_reset_stats(f);
    plain_write(f, 0, 100, 3);
    tess_stats s;
    CHECK_OK(tess_file_stats(f, &s));
    CHECK(s.lock_ops == 2);
    CHECK_OK(tess_file_close(f));
    tessi_fault_clear();
    check_image();
    /* read-only handles and memory storage: no gate, nothing to lock */
    CHECK_OK(tess_file_open(path, TESS_RDONLY, NULL, &f));
    CHECK(f->st.gate.kind == TESSI_GATE_NONE && !tessi_gate_locked_writes(&f->st));
    CHECK_OK(tess_file_close(f));
    CHECK_OK(tess_file_open("mem:gate", TESS_RDWR | TESS_CREATE, NULL, &f));
    CHECK(f->st.gate.kind == TESSI_GATE_NOLOCKS && !tessi_gate_admit(&f->st));
    CHECK_OK(tess_file_close(f));
}

int main(void)
{
    tf_path(path, sizeof path, "gate");
    alone();
    idle_and_active();
    killed();
    failing();
    unlink(path);
    printf("test_gate: ok\n");
    return 0;
}
