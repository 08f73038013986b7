/*
 * fault.c - fault injection at the driver wrappers, armed by tests or by the TESS_FAULT
 * environment variable (format in driver.h).
 */
#include "driver/driver.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static atomic_int fault_mask;       /* TESSI_OP_* classes armed; 0: disarmed */
static atomic_int_least64_t fault_after; /* matching calls still to let through */
static atomic_int_least64_t fault_times; /* failures still to inject; < 0: unlimited */
static atomic_int fault_err;        /* the negative errno injected */
static pthread_once_t env_once = PTHREAD_ONCE_INIT;

static void arm(int op_mask, int64_t after_calls, int64_t times, int neg_errno)
{
    atomic_store(&fault_mask, 0);
    atomic_store(&fault_after, after_calls);
    atomic_store(&fault_times, times);
    atomic_store(&fault_err, neg_errno);
    atomic_store(&fault_mask, op_mask);
}

static int op_from_name(const char *s, size_t n)
{
    static const struct {
        const char *name;
        int op;
    } ops[] = {{"read", TESSI_OP_READ}, {"write", TESSI_OP_WRITE}, {"lock", TESSI_OP_LOCK},
               {"sync", TESSI_OP_SYNC}, {"size", TESSI_OP_SIZE},   {"open", TESSI_OP_OPEN},
               {"delete", TESSI_OP_DELETE}, {"all", TESSI_OP_ALL}};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (strlen(ops[i].name) == n && strncmp(ops[i].name, s, n) == 0)
            return ops[i].op;
    return 0;
}

static int errno_from_name(const char *s)
{
    static const struct {
        const char *name;
        int err;
    } errs[] = {{"EIO", EIO},       {"ENOSPC", ENOSPC},         {"EDQUOT", EDQUOT},
                {"ENOLCK", ENOLCK}, {"EOPNOTSUPP", EOPNOTSUPP}, {"EACCES", EACCES},
                {"EINTR", EINTR},   {"EROFS", EROFS}};
    for (size_t i = 0; i < sizeof errs / sizeof errs[0]; i++)
        if (strcmp(errs[i].name, s) == 0)
            return errs[i].err;
    char *end;
    long v = strtol(s, &end, 10);
    return (*s && !*end && v > 0 && v < 4096) ? (int)v : 0;
}

/* Parse TESS_FAULT=<ops>:<after>:<errno>[:<times>]; anything malformed leaves faults off. */
static void fault_from_env(void)
{
    const char *v = getenv("TESS_FAULT");
    char text[128], *save = NULL;
    if (!v || strlen(v) >= sizeof text)
        return;
    strcpy(text, v);
    char *ops = strtok_r(text, ":", &save), *after = strtok_r(NULL, ":", &save);
    char *err = strtok_r(NULL, ":", &save), *times = strtok_r(NULL, ":", &save);
    if (!ops || !after || !err || strtok_r(NULL, ":", &save))
        return;
    int mask = 0;
    for (const char *p = ops; *p;) {
        size_t n = strcspn(p, "+");
        int op = op_from_name(p, n);
        if (!op)
            return;
        mask |= op;
        p += n + (p[n] == '+');
    }
    char *end;
    long long a = strtoll(after, &end, 10), t = -1;
    if (*end || a < 0)
        return;
    if (times && ((t = strtoll(times, &end, 10)), *end))
        return;
    int e = errno_from_name(err);
    if (e)
        arm(mask, a, t, -e);
}

void tessi_fault_inject(int op_mask, int64_t after_calls, int64_t times, int neg_errno)
{
    pthread_once(&env_once, fault_from_env);
    arm(op_mask, after_calls, times, neg_errno);
}

void tessi_fault_clear(void)
{
    pthread_once(&env_once, fault_from_env);
    atomic_store(&fault_mask, 0);
}

bool tessi_fault_armed(int op)
{
    pthread_once(&env_once, fault_from_env);
    return atomic_load_explicit(&fault_mask, memory_order_relaxed) & op;
}

int tessi_fault_check(int op)
{
    pthread_once(&env_once, fault_from_env);
    if (!(atomic_load_explicit(&fault_mask, memory_order_relaxed) & op))
        return 0;
    if (atomic_fetch_sub(&fault_after, 1) > 0)
        return 0;
    int64_t left = atomic_load(&fault_times);
    while (left > 0 && !atomic_compare_exchange_weak(&fault_times, &left, left - 1))
        ;
    if (left == 0) {
        atomic_store(&fault_mask, 0);
        return 0;
    }
    return atomic_load(&fault_err);
}
