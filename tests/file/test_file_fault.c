/*
 * test_file_fault.c - storage faults injected at the driver wrapper (driver.h) surface as the
 * right error with a message: ENOSPC midway through a write is TESS_ERR_NOSPACE, EIO midway
 * through a read is TESS_ERR_IO, for every method; a lock refusal makes sieving writes go
 * naive (counted, no error) and other writes go on unlocked; open, sync and size faults map
 * too; the handle works again once the fault is gone. The environment variable TESS_FAULT
 * arms the same faults in any program (checked by re-running this program with it set).
 */
#include "driver/driver.h"
#include "test_file_common.h"

#include <sys/wait.h>

#define N 4096 /* data bytes of the access: 512 regions of 8 bytes, every other 8 bytes */

static const char *const methods[] = {"naive", "sieve", "list", "auto"};
static char path[64];
static unsigned char data[N];

/* A call that must fail with code and a fresh message containing `text`. */
#define CHECK_FAULT(call, code, text)                                                       \
    do {                                                                                     \
        tessi_error(TESS_OK, "%s", "");                                                      \
        CHECK_ERR(call, code);                                                               \
        if (!strstr(tess_last_error(), text)) {                                              \
            fprintf(stderr, "%s:%d: message '%s' lacks '%s'\n", __FILE__, __LINE__,          \
                    tess_last_error(), text);                                                \
            exit(1);                                                                         \
        }                                                                                    \
    } while (0)

/* Open with method and small windows/batches, the strided view set. */
static tess_file *open_strided(const char *method, tess_type **ft)
{
    tess_file *f;
    tess_type *v;
    const char *kv[] = {"tess_method", method, "ind_rd_buffer_size", "256",
                        "ind_wr_buffer_size", "200", "tess_list_max_pairs", "4", NULL};
    CHECK_OK(tf_open(path, TESS_RDWR | TESS_CREATE, &f, kv));
    CHECK_OK(tess_type_vector(1, 8, 8, TESS_BYTE, &v));
    CHECK_OK(tess_type_resized(v, 0, 16, ft));
    tess_type_free(v);
    CHECK_OK(tess_file_set_view(f, 0, TESS_BYTE, *ft));
    return f;
}

/* The file holds data in the strided view over a zero background. */
static void check_strided_file(void)
{
    unsigned char *now;
    CHECK(tf_get(path, &now) == 2 * N - 8);
    for (int64_t k = 0; k < 2 * N - 8; k++)
        CHECK(now[k] == ((k / 8) % 2 ? 0 : data[k / 16 * 8 + k % 8]));
    free(now);
}

static void write_faults(const char *method)
{
    tess_type *ft;
    int64_t n = -1;
    tf_put(path, "", 0);
    tess_file *f = open_strided(method, &ft);
    tessi_fault_inject(TESSI_OP_WRITE, 2, -1, -ENOSPC);
    CHECK_FAULT(tess_file_write_at(f, 0, data, N, TESS_BYTE, &n), TESS_ERR_NOSPACE,
                strerror(ENOSPC));
    CHECK(n >= 0 && n < N);
    tessi_fault_clear();
    CHECK_OK(tess_file_write_at(f, 0, data, N, TESS_BYTE, &n));
    CHECK(n == N);
    check_strided_file();
    CHECK_OK(tess_file_close(f));
    tess_type_free(ft);
}

static void read_faults(const char *method)
{
    tess_type *ft;
    unsigned char back[N];
    int64_t n = -1;
    tess_file *f = open_strided(method, &ft);
    tessi_fault_inject(TESSI_OP_READ, 3, 1, -EIO);
    CHECK_FAULT(tess_file_read_at(f, 0, back, N, TESS_BYTE, &n), TESS_ERR_IO, strerror(EIO));
    /* times = 1: the next read works */
    CHECK_OK(tess_file_read_at(f, 0, back, N, TESS_BYTE, &n));
    CHECK(n == N && memcmp(back, data, N) == 0);
    tessi_fault_clear();
    CHECK_OK(tess_file_close(f));
    tess_type_free(ft);
}

/* Storage without locks: sieving writes go naive (counted), other writes go on unlocked. */
static void lock_faults(void)
{
    tess_type *ft;
    tess_stats s;
    int64_t n;
    tf_put(path, "", 0);
    tess_file *f = open_strided("sieve", &ft);
    tessi_fault_inject(TESSI_OP_LOCK, 0, -1, -ENOLCK);
    CHECK_OK(tess_file_write_at(f, 0, data, N, TESS_BYTE, &n));
    CHECK(n == N);
    CHECK_OK(tess_file_stats(f, &s));
    CHECK(s.lock_fallbacks == 1 && s.accessed_bytes == N);
    check_strided_file();
    CHECK_OK(tess_file_close(f));
    tess_type_free(ft);

    tess_file *g;
    CHECK_OK(tess_file_open(path, TESS_RDWR, NULL, &g)); /* auto: writes lock their extent */
    CHECK_OK(tess_file_write_at(g, 0, data, 16, TESS_BYTE, &n));
    CHECK(n == 16);
    tessi_fault_inject(TESSI_OP_LOCK, 0, -1, -EIO); /* a real lock failure is an error */
    CHECK_FAULT(tess_file_write_at(g, 0, data, 16, TESS_BYTE, &n), TESS_ERR_IO, "lock");
    tessi_fault_clear();
    CHECK_OK(tess_file_close(g));
}

static void other_faults(void)
{
    tess_file *f = NULL;
    int64_t size;
    tessi_fault_inject(TESSI_OP_OPEN, 0, 1, -EACCES);
    CHECK_FAULT(tess_file_open(path, TESS_RDWR, NULL, &f), TESS_ERR_ACCESS, "cannot open");
    CHECK(f == NULL);
    CHECK_OK(tess_file_open(path, TESS_RDWR, NULL, &f));
    tessi_fault_inject(TESSI_OP_SYNC, 0, 1, -EIO);
    CHECK_FAULT(tess_file_sync(f), TESS_ERR_IO, "sync");
    CHECK_OK(tess_file_sync(f));
    tessi_fault_inject(TESSI_OP_SIZE, 0, 2, -EIO);
    CHECK_FAULT(tess_file_get_size(f, &size), TESS_ERR_IO, "get_size");
    CHECK_FAULT(tess_file_set_size(f, 10), TESS_ERR_IO, "set_size");
    CHECK_OK(tess_file_get_size(f, &size));
    CHECK(size == 2 * N - 8);
    CHECK_OK(tess_file_close(f));
}

/* Child mode (argv: prog child <expect>): one write; exit 0 iff it returned <expect>. */
static int child(const char *expect)
{
    tess_file *f;
    int64_t n;
    CHECK_OK(tess_file_open(path, TESS_RDWR, NULL, &f));
    int rc = tess_file_write_at(f, 0, data, 64, TESS_BYTE, &n);
    int rc2 = tess_file_write_at(f, 0, data, 64, TESS_BYTE, &n);
    CHECK_OK(tess_file_close(f));
    return !(rc == atoi(expect) && rc2 == 0);
}

/* Re-run this program with TESS_FAULT=value; the child's first write must return expect. */
static void env_fault(const char *self, const char *value, int expect)
{
    char code[16];
    snprintf(code, sizeof code, "%d", expect);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        setenv("TESS_FAULT", value, 1);
        execl(self, self, "child", code, path, (char *)NULL);
        _exit(127);
    }
    int status;
    CHECK(waitpid(pid, &status, 0) == pid);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "TESS_FAULT=%s: child did not see error %d first\n", value, expect);
        exit(1);
    }
}

int main(int argc, char **argv)
{
    for (int i = 0; i < N; i++)
        data[i] = (unsigned char)(i * 13 + 1);
    if (argc == 4 && strcmp(argv[1], "child") == 0) {
        snprintf(path, sizeof path, "%s", argv[3]);
        return child(argv[2]);
    }
    tf_path(path, sizeof path, "fault");
    for (int m = 0; m < 4; m++) {
        write_faults(methods[m]);
        read_faults(methods[m]);
    }
    lock_faults();
    other_faults();
    env_fault(argv[0], "write:0:ENOSPC:1", TESS_ERR_NOSPACE);
    env_fault(argv[0], "read+write:0:5:1", TESS_ERR_IO);
    env_fault(argv[0], "bogus", 0);
    unlink(path);
    return 0;
}
