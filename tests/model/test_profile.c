/*
 * test_profile.c - profiles: documented defaults are flagged; save/load round trips exactly
 * (also under a decimal-comma locale); malformed files are rejected with a message naming the
 * file, never a crash; the lookup order hint > TESS_PROFILE > XDG_CONFIG_HOME > HOME.
 */
#include "check.h"
#include "model/model.h"

#include <locale.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[256];

static void path_in(char *out, size_t cap, const char *name)
{
    snprintf(out, cap, "%s/%s", dir, name);
}

static void write_text(const char *path, const char *text, size_t len)
{
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(text, 1, len, f) == len && fclose(f) == 0);
}

static bool same_model(const tessi_model *a, const tessi_model *b)
{
    for (int id = 0; id < TESSI_NPARAMS; id++)
        if (tessi_param_get(a, id) != tessi_param_get(b, id))
            return false;
    return a->locks == b->locks && a->batched == b->batched && a->n == b->n;
}

/* A profile whose values need all 17 digits. */
static tessi_profile odd_profile(tessi_uncached_mode mode)
{
    tessi_profile pf;
    tessi_profile_defaults(&pf);
    pf.defaults = false;
    pf.uncached = mode;
    for (int v = 0; v < 2; v++) {
        for (int id = 0; id < TESSI_NPARAMS; id++)
            tessi_param_set(&pf.model[v], id, (id + 1 + 10 * v) / 3.0 * 1e-7);
        pf.model[v].n = 3;
    }
    pf.model[TESSI_CACHED].locks = false;
    pf.model[TESSI_UNCACHED].batched = false;
    snprintf(pf.storage, sizeof pf.storage, "/scratch/a #b (lustre)");
    snprintf(pf.date, sizeof pf.date, "2025-01-31T12:00:00Z");
    snprintf(pf.machine, sizeof pf.machine, "node17 Linux x86_64, 64 CPUs");
    return pf;
}

static void test_defaults(void)
{
    tessi_profile pf;
    tessi_profile_defaults(&pf);
    CHECK(pf.defaults && pf.source == TESSI_PROFILE_NONE && pf.uncached == TESSI_UNCACHED_NONE);
    CHECK_OK(tessi_model_check(&pf.model[TESSI_CACHED]));
    tessi_model def;
    tessi_model_defaults(&def);
    CHECK(same_model(&pf.model[TESSI_CACHED], &def));
    /* the measured order model.h documents: a small read costs less than an overwrite of
     * dirty pages, which costs no more than a write onto clean ones */
    CHECK(def.dir[0].s < def.dir[1].s_dirty && def.dir[1].s_dirty <= def.dir[1].s);
    CHECK(pf.model[TESSI_CACHED].p == 1 && pf.model[TESSI_CACHED].list_max == TESSI_MODEL_LIST_MAX);
}

static void round_trip(tessi_uncached_mode mode)
{
    char path[512];
    path_in(path, sizeof path, "sub/dir/profile"); /* parents are created */
    tessi_profile pf = odd_profile(mode), back;
    CHECK_OK(tessi_profile_save(path, &pf));
    CHECK_OK(tessi_profile_load(path, &back));
    CHECK(!back.defaults && back.uncached == mode && strcmp(back.path, path) == 0);
    CHECK(same_model(&back.model[TESSI_CACHED], &pf.model[TESSI_CACHED]));
    if (mode != TESSI_UNCACHED_NONE)
        CHECK(same_model(&back.model[TESSI_UNCACHED], &pf.model[TESSI_UNCACHED]));
    CHECK(strcmp(back.storage, pf.storage) == 0 && strcmp(back.date, pf.date) == 0 &&
          strcmp(back.machine, pf.machine) == 0);
    CHECK(back.model[TESSI_CACHED].p == 1 &&
          back.model[TESSI_CACHED].list_max == TESSI_MODEL_LIST_MAX);
    /* no uncached keys are written without an uncached variant */
    FILE *f = fopen(path, "r");
    char line[2048];
    bool any = false;
    while (f && fgets(line, sizeof line, f))
        any |= strncmp(line, "uncached.", 9) == 0;
    CHECK(f && fclose(f) == 0);
    CHECK(any == (mode != TESSI_UNCACHED_NONE));
}

static void test_round_trip(void)
{
    round_trip(TESSI_UNCACHED_NONE);
    round_trip(TESSI_UNCACHED_DIRECT);
    round_trip(TESSI_UNCACHED_DROP);
    /* numbers stay in the C locale when the program uses a decimal comma */
    const char *locales[] = {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "fr_FR.utf8"};
    for (size_t i = 0; i < sizeof locales / sizeof locales[0]; i++)
        if (setlocale(LC_NUMERIC, locales[i])) {
            round_trip(TESSI_UNCACHED_DROP);
            setlocale(LC_NUMERIC, "C");
            break;
        }
    /* an invalid model is not saved */
    tessi_profile pf = odd_profile(TESSI_UNCACHED_NONE);
    pf.model[TESSI_CACHED].dir[0].tt = -1;
    char path[512];
    path_in(path, sizeof path, "never");
    CHECK_ERR(tessi_profile_save(path, &pf), TESS_ERR_ARG);
    CHECK(access(path, F_OK) != 0);
}

/* The text of a valid profile (uncached = none) without the lines starting with drop_key (NULL:
 * none) and with `extra` (NULL: nothing) appended. */
static void valid_text(char *out, size_t cap, const char *drop_key, const char *extra)
{
    char path[512], line[2048];
    path_in(path, sizeof path, "valid");
    tessi_profile pf = odd_profile(TESSI_UNCACHED_NONE);
    CHECK_OK(tessi_profile_save(path, &pf));
    FILE *f = fopen(path, "r");
    CHECK(f);
    out[0] = '\0';
    while (fgets(line, sizeof line, f))
        if (!drop_key || strncmp(line, drop_key, strlen(drop_key)) != 0)
            strncat(out, line, cap - strlen(out) - 1);
    fclose(f);
    if (extra)
        strncat(out, extra, cap - strlen(out) - 1);
}

static void reject(const char *text, size_t len, const char *what)
{
    char path[512];
    tessi_profile pf;
    memset(&pf, 0x5a, sizeof pf);
    path_in(path, sizeof path, "bad");
    write_text(path, text, len);
    int rc = tessi_profile_load(path, &pf);
    if (rc != TESS_ERR_ARG || !strstr(tess_last_error(), path)) {
        fprintf(stderr, "%s: load returned %d (%s)\n", what, rc, tess_last_error());
        exit(1);
    }
    CHECK(((unsigned char *)&pf)[0] == 0x5a); /* untouched */
}

static void reject_str(const char *text, const char *what) { reject(text, strlen(text), what); }

static void test_malformed(void)
{
    static char t[16384];
    char path[512];
    tessi_profile pf;
    valid_text(t, sizeof t, NULL, NULL);
    path_in(path, sizeof path, "ok");
    write_text(path, t, strlen(t));
    CHECK_OK(tessi_profile_load(path, &pf));

    reject_str("", "empty file");
    reject_str("# only a comment\n\n", "no header");
    reject_str("servers = 1\n", "header not first");
    reject_str("tessera-profile = 3\n", "future version");
    reject_str("tessera-profile = one\n", "bad version");
    reject("tessera-profile = 1\n\0garbage", 28, "NUL byte");
    reject_str("\x7f" "ELF\x02\x01\x01\n", "binary");
    valid_text(t, sizeof t, "cached.read.s ", NULL);
    reject_str(t, "missing key");
    valid_text(t, sizeof t, "cached.write.s_dirty", NULL);
    reject_str(t, "missing dirty key (version 2)");
    /* version 1 had no dirty figures: the clean ones stand in */
    valid_text(t, sizeof t, "cached.write.s_dirty", NULL);
    char *v1 = strstr(t, "tessera-profile = 2");
    CHECK(v1);
    v1[strlen("tessera-profile = ")] = '1';
    char *tt_dirty = strstr(t, "cached.write.tt_dirty");
    CHECK(tt_dirty);
    memset(tt_dirty, '#', 1); /* commented out */
    write_text(path, t, strlen(t));
    CHECK_OK(tessi_profile_load(path, &pf));
    CHECK(pf.model[TESSI_CACHED].dir[1].s_dirty == pf.model[TESSI_CACHED].dir[1].s &&
          pf.model[TESSI_CACHED].dir[1].tt_dirty == pf.model[TESSI_CACHED].dir[1].tt);
    valid_text(t, sizeof t, "servers", NULL);
    reject_str(t, "missing servers");
    valid_text(t, sizeof t, "uncached =", NULL);
    reject_str(t, "missing mode");
    valid_text(t, sizeof t, NULL, "cached.read.s = 1e-6\n");
    reject_str(t, "repeated key");
    valid_text(t, sizeof t, NULL, "cached.read.bogus = 1\n");
    reject_str(t, "unknown variant key");
    /* the thread-team keys are optional, checked, and given once */
    valid_text(t, sizeof t, NULL, "threads.s_min = 65536\nthreads.active = 3\n");
    write_text(path, t, strlen(t));
    CHECK_OK(tessi_profile_load(path, &pf));
    CHECK(pf.team_smin == 65536 && pf.team_active == 3);
    valid_text(t, sizeof t, NULL, "threads.s_min = 0\n");
    reject_str(t, "s_min 0");
    valid_text(t, sizeof t, NULL, "threads.active = 2\nthreads.active = 2\n");
    reject_str(t, "repeated threads key");
    valid_text(t, sizeof t, NULL, "bogus = 1\n");
    reject_str(t, "unknown key");
    valid_text(t, sizeof t, NULL, "Cached.read.s = 1\n");
    reject_str(t, "key with capitals");
    valid_text(t, sizeof t, NULL, "just words\n");
    reject_str(t, "no equals sign");
    valid_text(t, sizeof t, NULL, " = 3\n");
    reject_str(t, "empty key");
    valid_text(t, sizeof t, NULL, "uncached.read.s = 1e-6\n");
    reject_str(t, "uncached key with uncached = none");
    const char *bad_values[] = {"abc", "-1e-6", "nan", "inf", "1e999", "1e-6 junk", "0x", ""};
    for (size_t i = 0; i < sizeof bad_values / sizeof bad_values[0]; i++) {
        char extra[64];
        valid_text(t, sizeof t, "cached.read.tt", NULL);
        snprintf(extra, sizeof extra, "cached.read.tt = %s\n", bad_values[i]);
        strncat(t, extra, sizeof t - strlen(t) - 1);
        reject_str(t, bad_values[i]);
    }
    valid_text(t, sizeof t, "servers", "servers = 0\n");
    reject_str(t, "zero servers");
    valid_text(t, sizeof t, "cached.locks", "cached.locks = 2\n");
    reject_str(t, "flag 2");
    valid_text(t, sizeof t, "uncached =", "uncached = maybe\n");
    reject_str(t, "bad mode");
    valid_text(t, sizeof t, "uncached =", "uncached = drop\n");
    reject_str(t, "mode drop without uncached keys");
    /* a comment after a number is fine; a line or file too long is not */
    valid_text(t, sizeof t, "cached.read.tt", "cached.read.tt = 1e-10  # comment\r\n");
    write_text(path, t, strlen(t));
    CHECK_OK(tessi_profile_load(path, &pf));
    CHECK(pf.model[TESSI_CACHED].dir[0].tt == 1e-10);
    char *longline = malloc(3000);
    memset(longline, 'x', 2999);
    longline[2999] = '\0';
    memcpy(longline, "storage = ", 10);
    valid_text(t, sizeof t, "storage", longline);
    reject_str(t, "long line");
    free(longline);
    size_t big = 70 * 1024;
    char *huge = malloc(big);
    memset(huge, '#', big);
    memcpy(huge, "tessera-profile = 1\n", 20);
    for (size_t i = 100; i < big; i += 100)
        huge[i] = '\n';
    reject(huge, big, "file over 64 KiB");
    free(huge);
    path_in(path, sizeof path, "does-not-exist");
    CHECK_ERR(tessi_profile_load(path, &pf), TESS_ERR_NOENT);
    CHECK_ERR(tessi_profile_load(NULL, &pf), TESS_ERR_ARG);
}

static void test_locate(void)
{
    char path[4096], want[1024], xdg[512];
    tessi_profile_source src;
    unsetenv("TESS_PROFILE");
    unsetenv("XDG_CONFIG_HOME");
    setenv("HOME", "/home/someone", 1);
    CHECK_OK(tessi_profile_locate(NULL, "posix", path, sizeof path, &src));
    CHECK(src == TESSI_PROFILE_HOME && strcmp(path, "/home/someone/.config/tessera/profile") == 0);
    setenv("XDG_CONFIG_HOME", "relative/ignored", 1);
    CHECK_OK(tessi_profile_locate("", "posix", path, sizeof path, &src));
    CHECK(strcmp(path, "/home/someone/.config/tessera/profile") == 0);
    setenv("XDG_CONFIG_HOME", "/xdg", 1);
    CHECK_OK(tessi_profile_locate(NULL, "posix", path, sizeof path, &src));
    CHECK(src == TESSI_PROFILE_HOME && strcmp(path, "/xdg/tessera/profile") == 0);
    CHECK_OK(tessi_profile_locate(NULL, "mem", path, sizeof path, &src)); /* keyed by driver */
    CHECK(src == TESSI_PROFILE_HOME && strcmp(path, "/xdg/tessera/profile.mem") == 0);
    setenv("TESS_PROFILE", "/env/profile", 1);
    CHECK_OK(tessi_profile_locate(NULL, "posix", path, sizeof path, &src));
    CHECK(src == TESSI_PROFILE_ENV && strcmp(path, "/env/profile") == 0);
    CHECK_OK(tessi_profile_locate("/hint/profile", "posix", path, sizeof path, &src));
    CHECK(src == TESSI_PROFILE_HINT && strcmp(path, "/hint/profile") == 0);
    CHECK_ERR(tessi_profile_locate("/hint/profile", "posix", path, 5, &src), TESS_ERR_TRUNCATE);
    unsetenv("TESS_PROFILE");
    unsetenv("XDG_CONFIG_HOME");
    unsetenv("HOME");
    CHECK_ERR(tessi_profile_locate(NULL, "posix", path, sizeof path, &src), TESS_ERR_NOENT);

    /* resolve: nowhere to look, or nothing at the default location: defaults, flagged */
    tessi_profile pf;
    CHECK_OK(tessi_profile_resolve(NULL, "posix", &pf));
    CHECK(pf.defaults && pf.source == TESSI_PROFILE_NONE);
    path_in(xdg, sizeof xdg, "xdg");
    setenv("XDG_CONFIG_HOME", xdg, 1);
    CHECK_OK(tessi_profile_resolve(NULL, "posix", &pf));
    CHECK(pf.defaults);
    /* a profile at the default location is picked up */
    snprintf(want, sizeof want, "%s/tessera/profile", xdg);
    tessi_profile saved = odd_profile(TESSI_UNCACHED_DIRECT);
    CHECK_OK(tessi_profile_save(want, &saved));
    CHECK_OK(tessi_profile_resolve(NULL, "posix", &pf));
    CHECK(!pf.defaults && pf.source == TESSI_PROFILE_HOME && strcmp(pf.path, want) == 0);
    CHECK(same_model(&pf.model[TESSI_UNCACHED], &saved.model[TESSI_UNCACHED]));
    /* one named explicitly must exist */
    path_in(path, sizeof path, "missing");
    setenv("TESS_PROFILE", path, 1);
    CHECK_ERR(tessi_profile_resolve(NULL, "posix", &pf), TESS_ERR_NOENT);
    CHECK_ERR(tessi_profile_resolve(path, "posix", &pf), TESS_ERR_NOENT);
    unsetenv("TESS_PROFILE");
    CHECK_OK(tessi_profile_resolve(want, "posix", &pf));
    CHECK(pf.source == TESSI_PROFILE_HINT && strcmp(pf.driver, "posix") == 0);
    /* a profile prices only its driver's files: named by the hint, another driver's is an
     * error; at the default location, each driver has its own (none for mem here) */
    CHECK_ERR(tessi_profile_resolve(want, "mem", &pf), TESS_ERR_ARG);
    CHECK_OK(tessi_profile_resolve(NULL, "mem", &pf));
    CHECK(pf.defaults);
    /* a broken profile at the default location is an error, not silently the defaults */
    write_text(want, "tessera-profile = 1\nnonsense\n", 29);
    CHECK_ERR(tessi_profile_resolve(NULL, "posix", &pf), TESS_ERR_ARG);
    unsetenv("XDG_CONFIG_HOME");
}

static void cleanup(const char *d)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", d);
    CHECK(system(cmd) == 0);
}

int main(void)
{
    char cwd[200]; /* absolute: XDG_CONFIG_HOME must be */
    CHECK(getcwd(cwd, sizeof cwd));
    snprintf(dir, sizeof dir, "%s/profile-test-XXXXXX", cwd);
    CHECK(mkdtemp(dir));
    test_defaults();
    test_round_trip();
    test_malformed();
    test_locate();
    cleanup(dir);
    printf("test_profile: ok\n");
    return 0;
}
