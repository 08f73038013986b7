/*
 * profile.c - the measured parameters of a storage, as a small text file.
 *
 * Format (version 2), one `key = value` per line; blank lines and lines starting with '#' are
 * ignored, and a number or word may be followed by a '#' comment:
 *
 *     tessera-profile = 2                      must be the first key
 *     driver = posix                           optional (default posix): the driver measured
 *     storage = /scratch (ext4)                optional, free text to the end of the line
 *     date = 2025-01-31T12:00:00Z              optional
 *     machine = node17 Linux 6.1 x86_64, 64 CPUs   optional
 *     servers = 1                              n, storage servers (integer >= 1)
 *     uncached = odirect                       none | odirect | drop
 *     cached.read.s = 3.2e-07                  every TESSI_MODEL_PARAMS key, seconds or s/B
 *                                              (the datatype-I/O ones may be left out: they
 *                                              keep their defaults)
 *     ...
 *     cached.locks = 1                         0 | 1: the storage grants byte-range locks
 *     cached.batched = 1                       0 | 1: list batches run as one call
 *     uncached.read.s = ...                    the same keys, present iff uncached != none
 *     threads.s_min = 1048576                  optional: thread teams' s_min, bytes (>= 1)
 *     threads.active = 2                       optional: thread teams' active threads (>= 1)
 *
 * Version 1 is read too: it had no write.s_dirty and write.tt_dirty, which then take the clean
 * figures write.s and write.tt (an overwrite priced as new data, as version 1 did).
 *
 * Numbers are read and written in the C locale whatever the program's locale is. A profile is
 * never trusted: anything else (unknown or repeated key, missing key, bad number, NUL byte,
 * overlong line or file) is rejected with the file name and line in the message.
 */
#include "model/model.h"

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PROFILE_VERSION 2
#define PROFILE_MAX_BYTES (64 * 1024)
#define PROFILE_MAX_LINE 1023

/* Per-variant keys beyond the real-valued parameters. */
enum { KEY_LOCKS = TESSI_NPARAMS, KEY_BATCHED, NVARKEYS };

static const char *const variant_name[2] = {"cached", "uncached"};
static const char *const mode_name[] = {"none", "odirect", "drop"};

void tessi_profile_defaults(tessi_profile *pf)
{
    memset(pf, 0, sizeof *pf);
    tessi_model_defaults(&pf->model[TESSI_CACHED]);
    tessi_model_defaults(&pf->model[TESSI_UNCACHED]);
    pf->uncached = TESSI_UNCACHED_NONE;
    pf->source = TESSI_PROFILE_NONE;
    pf->defaults = true;
    snprintf(pf->driver, sizeof pf->driver, "posix");
}

/* ------------------------------------------------------------------- locating */

static int join_path(char *out, size_t cap, const char *a, const char *b)
{
    int n = snprintf(out, cap, "%s%s", a, b);
    if (n < 0 || (size_t)n >= cap)
        return tessi_error(TESS_ERR_TRUNCATE, "profile: path %s%s longer than %zu bytes", a, b,
                           cap - 1);
    return 0;
}

int tessi_profile_locate(const char *hint, const char *driver, char *path, size_t cap,
                         tessi_profile_source *source)
{
    char name[96];
    if (!path || !source || cap == 0)
        return tessi_error(TESS_ERR_ARG, "tessi_profile_locate: NULL path or source");
    const char *env = getenv("TESS_PROFILE"), *xdg = getenv("XDG_CONFIG_HOME");
    const char *home = getenv("HOME");
    if (hint && hint[0]) {
        *source = TESSI_PROFILE_HINT;
        return join_path(path, cap, hint, "");
    }
    if (env && env[0]) {
        *source = TESSI_PROFILE_ENV;
        return join_path(path, cap, env, "");
    }
    *source = TESSI_PROFILE_HOME;
    /* one profile per driver: "profile" for posix, "profile.<driver>" for the others */
    snprintf(name, sizeof name, "/tessera/profile%s%.64s", strcmp(driver, "posix") ? "." : "",
             strcmp(driver, "posix") ? driver : "");
    if (xdg && xdg[0] == '/') /* the XDG spec ignores relative values */
        return join_path(path, cap, xdg, name);
    if (home && home[0]) {
        char sub[128];
        snprintf(sub, sizeof sub, "/.config%s", name);
        return join_path(path, cap, home, sub);
    }
    *source = TESSI_PROFILE_NONE;
    return tessi_error(TESS_ERR_NOENT, "profile: no hint tess_profile, TESS_PROFILE, "
                                       "XDG_CONFIG_HOME or HOME to locate a profile");
}

/* -------------------------------------------------------------------- parsing */

typedef struct {
    const char *path;
    int line;
} where;

static int bad(const where *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad(const where *w, const char *fmt, ...)
{
    char msg[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return tessi_error(TESS_ERR_ARG, "profile %s:%d: %s", w->path, w->line, msg);
}

static const char *skip_blank(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    return s;
}

/* The rest of a value after a number or word: nothing, or a comment. */
static bool rest_ok(const char *s)
{
    s = skip_blank(s);
    return *s == '\0' || *s == '#';
}

static int parse_real(const where *w, const char *key, const char *v, double *out)
{
    char *end;
    errno = 0;
    double d = strtod(v, &end);
    if (end == v || !rest_ok(end))
        return bad(w, "%s: '%s' is not a number", key, v);
    if (!isfinite(d) || d < 0 || errno == ERANGE)
        return bad(w, "%s = %s: need a finite number >= 0", key, v);
    *out = d;
    return 0;
}

static int parse_int(const where *w, const char *key, const char *v, int64_t lo, int64_t hi,
                     int64_t *out)
{
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (end == v || !rest_ok(end))
        return bad(w, "%s: '%s' is not an integer", key, v);
    if (errno == ERANGE || x < lo || x > hi)
        return bad(w, "%s = %s: need an integer in [%lld, %lld]", key, v, (long long)lo,
                   (long long)hi);
    *out = x;
    return 0;
}

/* Free text to the end of the line, trailing blanks dropped. */
static int parse_text(const where *w, const char *key, const char *v, char *out, size_t cap)
{
    size_t n = strlen(v);
    while (n > 0 && (v[n - 1] == ' ' || v[n - 1] == '\t'))
        n--;
    if (n >= cap)
        return bad(w, "%s: longer than %zu bytes", key, cap - 1);
    memcpy(out, v, n);
    out[n] = '\0';
    return 0;
}

/* Everything a parse collects before it is checked as a whole. */
typedef struct {
    tessi_profile pf;
    int64_t version;
    bool header, servers_seen, mode_seen, text_seen[4], team_seen[2];
    bool seen[2][NVARKEYS];
    int first_uncached_line; /* line of the first uncached.* key (0: none) */
} parse_state;

static int parse_variant_key(parse_state *ps, const where *w, int var, const char *sub,
                             const char *key, const char *v)
{
    int id = -1;
    for (int k = 0; k < TESSI_NPARAMS && id < 0; k++)
        if (strcmp(sub, tessi_param_key(k)) == 0)
            id = k;
    if (id < 0)
        id = strcmp(sub, "locks") == 0 ? KEY_LOCKS : strcmp(sub, "batched") == 0 ? KEY_BATCHED : -1;
    if (id < 0)
        return bad(w, "unknown key '%s'", key);
    if (ps->seen[var][id])
        return bad(w, "key '%s' given twice", key);
    ps->seen[var][id] = true;
    if (var == TESSI_UNCACHED && !ps->first_uncached_line)
        ps->first_uncached_line = w->line;
    tessi_model *m = &ps->pf.model[var];
    int64_t flag = 0;
    int rc;
    if (id < TESSI_NPARAMS) {
        double d = 0;
        if ((rc = parse_real(w, key, v, &d)))
            return rc;
        tessi_param_set(m, id, d);
        return 0;
    }
    if ((rc = parse_int(w, key, v, 0, 1, &flag)))
        return rc;
    if (id == KEY_LOCKS)
        m->locks = flag;
    else
        m->batched = flag;
    return 0;
}

static int parse_line(parse_state *ps, const where *w, char *line)
{
    char *s = (char *)skip_blank(line);
    if (*s == '\0' || *s == '#')
        return 0;
    char *eq = strchr(s, '=');
    if (!eq)
        return bad(w, "expected 'key = value'");
    char *kend = eq;
    while (kend > s && (kend[-1] == ' ' || kend[-1] == '\t'))
        kend--;
    *kend = '\0';
    const char *key = s, *v = skip_blank(eq + 1);
    if (*key == '\0')
        return bad(w, "empty key");
    for (const char *c = key; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '.' || *c == '_' ||
              *c == '-'))
            return bad(w, "key '%s' has a character other than a-z 0-9 . _ -", key);
    if (!ps->header) {
        int64_t version = 0;
        if (strcmp(key, "tessera-profile") != 0)
            return bad(w, "not a Tessera profile (the first key must be 'tessera-profile')");
        int rc = parse_int(w, key, v, 0, INT64_MAX, &version);
        if (rc)
            return rc;
        if (version != 1 && version != PROFILE_VERSION)
            return bad(w, "profile version %lld, this library reads versions 1 to %d",
                       (long long)version, PROFILE_VERSION);
        ps->version = version;
        ps->header = true;
        return 0;
    }
    static const char *const text_keys[4] = {"storage", "date", "machine", "driver"};
    char *text_out[4] = {ps->pf.storage, ps->pf.date, ps->pf.machine, ps->pf.driver};
    size_t text_cap[4] = {sizeof ps->pf.storage, sizeof ps->pf.date, sizeof ps->pf.machine,
                          sizeof ps->pf.driver};
    for (int t = 0; t < 4; t++) {
        if (strcmp(key, text_keys[t]) != 0)
            continue;
        if (ps->text_seen[t])
            return bad(w, "key '%s' given twice", key);
        ps->text_seen[t] = true;
        return parse_text(w, key, v, text_out[t], text_cap[t]);
    }
    if (strcmp(key, "servers") == 0) {
        int64_t n = 1;
        if (ps->servers_seen)
            return bad(w, "key 'servers' given twice");
        ps->servers_seen = true;
        int rc = parse_int(w, key, v, 1, 1 << 30, &n);
        if (rc == 0)
            ps->pf.model[0].n = ps->pf.model[1].n = n;
        return rc;
    }
    static const char *const team_keys[2] = {"threads.s_min", "threads.active"};
    int64_t *team_out[2] = {&ps->pf.team_smin, &ps->pf.team_active};
    for (int t = 0; t < 2; t++) {
        if (strcmp(key, team_keys[t]) != 0)
            continue;
        if (ps->team_seen[t])
            return bad(w, "key '%s' given twice", key);
        ps->team_seen[t] = true;
        return parse_int(w, key, v, 1, t ? 4096 : INT64_C(1) << 40, team_out[t]);
    }
    if (strcmp(key, "uncached") == 0) {
        if (ps->mode_seen)
            return bad(w, "key 'uncached' given twice");
        ps->mode_seen = true;
        size_t len = strcspn(v, " \t#");
        for (int k = 0; k < 3; k++)
            if (strlen(mode_name[k]) == len && strncmp(v, mode_name[k], len) == 0 &&
                rest_ok(v + len)) {
                ps->pf.uncached = (tessi_uncached_mode)k;
                return 0;
            }
        return bad(w, "uncached = '%s': expected none, odirect or drop", v);
    }
    for (int var = 0; var < 2; var++) {
        size_t plen = strlen(variant_name[var]);
        if (strncmp(key, variant_name[var], plen) == 0 && key[plen] == '.')
            return parse_variant_key(ps, w, var, key + plen + 1, key, v);
    }
    return bad(w, "unknown key '%s'", key);
}

/* The whole file is read: check what must be there. */
static int parse_check(parse_state *ps, const where *w)
{
    if (!ps->header)
        return bad(w, "not a Tessera profile (no 'tessera-profile' line)");
    if (!ps->servers_seen)
        return bad(w, "key 'servers' missing");
    if (!ps->mode_seen)
        return bad(w, "key 'uncached' missing");
    bool want[2] = {true, ps->pf.uncached != TESSI_UNCACHED_NONE};
    if (!want[1] && ps->first_uncached_line) {
        where at = {w->path, ps->first_uncached_line};
        return bad(&at, "uncached.* keys given but 'uncached = none'");
    }
    for (int var = 0; var < 2; var++)
        for (int id = 0; want[var] && id < NVARKEYS; id++) {
            bool v1_dirty = id == TESSI_PARAM_WRITE_S_DIRTY || id == TESSI_PARAM_WRITE_TT_DIRTY;
            if (ps->version == 1 && v1_dirty && !ps->seen[var][id]) {
                tessi_model_dir *d = &ps->pf.model[var].dir[1];
                d->s_dirty = d->s;
                d->tt_dirty = d->tt;
                continue;
            }
            if (!ps->seen[var][id] && (id < TESSI_PARAM_FIRST_OPTIONAL || id >= TESSI_NPARAMS))
                return bad(w, "key '%s.%s' missing", variant_name[var],
                           id < TESSI_NPARAMS ? tessi_param_key(id)
                           : id == KEY_LOCKS  ? "locks"
                                              : "batched");
        }
    return 0;
}

static int read_file(const char *path, char **text, size_t *len)
{
    char *buf = NULL;
    int rc = 0;
    FILE *f = fopen(path, "rb");
    if (!f) {
        int err = errno;
        return tessi_error(err == ENOENT ? TESS_ERR_NOENT : tessi_errno_code(-err),
                           "profile %s: %s", path, strerror(err));
    }
    buf = malloc(PROFILE_MAX_BYTES + 1);
    if (!buf) {
        rc = tessi_error(TESS_ERR_NOMEM, "profile %s: out of memory", path);
        goto fail;
    }
    size_t n = fread(buf, 1, PROFILE_MAX_BYTES + 1, f);
    if (ferror(f)) {
        rc = tessi_error(TESS_ERR_IO, "profile %s: read error", path);
        goto fail;
    }
    if (n > PROFILE_MAX_BYTES) {
        rc = tessi_error(TESS_ERR_ARG, "profile %s: larger than %d bytes", path,
                         PROFILE_MAX_BYTES);
        goto fail;
    }
    buf[n] = '\0';
    *text = buf;
    *len = n;
    buf = NULL;
fail:
    free(buf);
    fclose(f);
    return rc;
}

int tessi_profile_load(const char *path, tessi_profile *out)
{
    char *text = NULL;
    size_t len = 0;
    parse_state *ps = NULL;
    locale_t c_locale = (locale_t)0, old = (locale_t)0;
    if (!path || !out)
        return tessi_error(TESS_ERR_ARG, "tessi_profile_load: NULL path or profile");
    int rc = read_file(path, &text, &len);
    if (rc)
        return rc;
    where w = {path, 0};
    if (memchr(text, '\0', len)) {
        rc = tessi_error(TESS_ERR_ARG, "profile %s: contains a NUL byte (not a text file)", path);
        goto fail;
    }
    ps = calloc(1, sizeof *ps);
    c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    if (!ps || !c_locale) {
        rc = tessi_error(TESS_ERR_NOMEM, "profile %s: out of memory", path);
        goto fail;
    }
    old = uselocale(c_locale);
    tessi_profile_defaults(&ps->pf);
    ps->pf.defaults = false;
    for (char *line = text; rc == 0 && line < text + len;) {
        char *nl = strchr(line, '\n'), *next = nl ? nl + 1 : text + len;
        size_t n = (size_t)((nl ? nl : text + len) - line);
        w.line++;
        if (n > 0 && line[n - 1] == '\r')
            n--;
        if (n > PROFILE_MAX_LINE) {
            rc = bad(&w, "line longer than %d bytes", PROFILE_MAX_LINE);
            break;
        }
        line[n] = '\0';
        rc = parse_line(ps, &w, line);
        line = next;
    }
    uselocale(old);
    if (rc == 0)
        rc = parse_check(ps, &w);
    if (rc == 0 && join_path(ps->pf.path, sizeof ps->pf.path, path, "") != 0)
        rc = TESS_ERR_TRUNCATE;
    if (rc == 0)
        *out = ps->pf;
fail:
    if (c_locale)
        freelocale(c_locale);
    free(ps);
    free(text);
    return rc;
}

int tessi_profile_resolve(const char *hint, const char *driver, tessi_profile *out)
{
    char path[4096];
    tessi_profile_source src;
    if (!out || !driver)
        return tessi_error(TESS_ERR_ARG, "tessi_profile_resolve: NULL profile or driver");
    int rc = tessi_profile_locate(hint, driver, path, sizeof path, &src);
    if (rc == TESS_ERR_NOENT) { /* nowhere to look: defaults */
        tessi_profile_defaults(out);
        return 0;
    }
    if (rc == 0)
        rc = tessi_profile_load(path, out);
    if (rc == TESS_ERR_NOENT && src == TESSI_PROFILE_HOME) {
        tessi_profile_defaults(out);
        return 0;
    }
    if (rc == 0 && strcmp(out->driver, driver) != 0) {
        if (src == TESSI_PROFILE_HINT)
            return tessi_error(TESS_ERR_ARG, "profile %s measured the %s driver, not %s", path,
                               out->driver, driver);
        tessi_profile_defaults(out); /* $TESS_PROFILE is another driver's: not this one's */
        return 0;
    }
    if (rc == 0)
        out->source = src;
    return rc;
}

/* -------------------------------------------------------------------- writing */

/* The shortest %g form that reads back as exactly v (C locale in force). */
static void put_real(FILE *f, double v)
{
    char s[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(s, sizeof s, "%.*g", prec, v);
        if (strtod(s, NULL) == v)
            break;
    }
    fputs(s, f);
}

/* Free text on one line: control characters become '?'. */
static void put_text(FILE *f, const char *key, const char *v)
{
    fprintf(f, "%s = ", key);
    for (const unsigned char *c = (const unsigned char *)v; *c; c++)
        fputc(*c < 0x20 || *c == 0x7f ? '?' : *c, f);
    fputc('\n', f);
}

static void put_variant(FILE *f, int var, const tessi_model *m)
{
    fprintf(f, "\n# %s\n", var == TESSI_CACHED ? "served from the page cache"
                                               : "served from the device (page cache bypassed)");
    for (int id = 0; id < TESSI_NPARAMS; id++) {
        double v = tessi_param_get(m, id);
        fprintf(f, "%s.%s = ", variant_name[var], tessi_param_key(id));
        put_real(f, v);
        if (v == 0)
            fprintf(f, "   # %s", tessi_param_doc(id));
        else if (strcmp(tessi_param_unit(id), "s/B") == 0)
            fprintf(f, "   # %.3g GB/s, %s", 1e-9 / v, tessi_param_doc(id));
        else
            fprintf(f, "   # %.3g us, %s", v * 1e6, tessi_param_doc(id));
        fputc('\n', f);
    }
    fprintf(f, "%s.locks = %d   # byte-range locks granted\n", variant_name[var], m->locks);
    fprintf(f, "%s.batched = %d   # list batches run as one call\n", variant_name[var],
            m->batched);
}

/* mkdir -p of path's parent directories. */
static int make_parents(const char *path)
{
    char dir[4096];
    int rc = join_path(dir, sizeof dir, path, "");
    if (rc)
        return rc;
    for (char *p = dir + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(dir, 0755) != 0 && errno != EEXIST)
            return tessi_error(tessi_errno_code(-errno), "profile: cannot create %s: %s", dir,
                               strerror(errno));
        *p = '/';
    }
    return 0;
}

int tessi_profile_save(const char *path, const tessi_profile *pf)
{
    char tmp[4200];
    FILE *f = NULL;
    locale_t c_locale = (locale_t)0, old = (locale_t)0;
    bool tmp_exists = false;
    if (!path || !pf || !path[0])
        return tessi_error(TESS_ERR_ARG, "tessi_profile_save: NULL or empty path, or NULL profile");
    int rc = tessi_model_check(&pf->model[TESSI_CACHED]);
    if (rc == 0 && pf->uncached != TESSI_UNCACHED_NONE)
        rc = tessi_model_check(&pf->model[TESSI_UNCACHED]);
    if (rc == 0 && (pf->uncached < TESSI_UNCACHED_NONE || pf->uncached > TESSI_UNCACHED_DROP))
        rc = tessi_error(TESS_ERR_ARG, "tessi_profile_save: bad uncached mode %d", pf->uncached);
    if (rc == 0)
        rc = make_parents(path);
    if (rc)
        return rc;
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    if (!c_locale) {
        rc = tessi_error(TESS_ERR_NOMEM, "profile: out of memory");
        goto fail;
    }
    f = fopen(tmp, "w");
    if (!f) {
        rc = tessi_error(tessi_errno_code(-errno), "profile: cannot create %s: %s", tmp,
                         strerror(errno));
        goto fail;
    }
    tmp_exists = true;
    old = uselocale(c_locale);
    fprintf(f, "# Tessera cost-model profile (written by `tessera calibrate`; see README).\n"
               "# Every key is required except storage, date and machine.\n"
               "tessera-profile = %d\n", PROFILE_VERSION);
    put_text(f, "driver", pf->driver[0] ? pf->driver : "posix");
    put_text(f, "storage", pf->storage);
    put_text(f, "date", pf->date);
    put_text(f, "machine", pf->machine);
    fprintf(f, "servers = %lld\nuncached = %s\n", (long long)pf->model[TESSI_CACHED].n,
            mode_name[pf->uncached]);
    put_variant(f, TESSI_CACHED, &pf->model[TESSI_CACHED]);
    if (pf->uncached != TESSI_UNCACHED_NONE)
        put_variant(f, TESSI_UNCACHED, &pf->model[TESSI_UNCACHED]);
    if (pf->team_smin > 0 && pf->team_active > 0)
        fprintf(f, "\n# thread teams (measured in the page cache)\n"
                   "threads.s_min = %lld   # smallest block at full one-thread bandwidth, bytes\n"
                   "threads.active = %lld   # fewest threads reaching the best bandwidth\n",
                (long long)pf->team_smin, (long long)pf->team_active);
    uselocale(old);
    int werr = ferror(f) ? EIO : 0;
    if (fflush(f) != 0 || fsync(fileno(f)) != 0)
        werr = errno;
    if (fclose(f) != 0 && !werr)
        werr = errno;
    f = NULL;
    if (werr) {
        rc = tessi_error(tessi_errno_code(-werr), "profile: cannot write %s: %s", tmp,
                         strerror(werr));
        goto fail;
    }
    if (rename(tmp, path) != 0) {
        rc = tessi_error(tessi_errno_code(-errno), "profile: cannot rename %s to %s: %s", tmp,
                         path, strerror(errno));
        goto fail;
    }
    tmp_exists = false;
fail:
    if (f)
        fclose(f);
    if (tmp_exists)
        unlink(tmp);
    if (c_locale)
        freelocale(c_locale);
    return rc;
}
