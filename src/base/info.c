/*
 * info.c - hint sets: string keys and values, copied in, bounded in size (keys up to
 * TESSI_INFO_MAX_KEY bytes, values up to TESSI_INFO_MAX_VALUE bytes, as tessera.h says).
 */
#include "base/base.h"

#include <stdlib.h>
#include <string.h>

#define TESSI_INFO_MAX_KEY 255
#define TESSI_INFO_MAX_VALUE 1023

typedef struct {
    char *key, *value;
} info_entry;

struct tess_info {
    info_entry *e;
    int64_t n, cap;
};

int tess_info_create(tess_info **out)
{
    if (!out)
        return tessi_error(TESS_ERR_ARG, "tess_info_create: out is NULL");
    tess_info *i = calloc(1, sizeof *i);
    if (!i)
        return tessi_error(TESS_ERR_NOMEM, "tess_info_create: out of memory");
    *out = i;
    return 0;
}

void tess_info_free(tess_info *i)
{
    if (!i)
        return;
    for (int64_t k = 0; k < i->n; k++) {
        free(i->e[k].key);
        free(i->e[k].value);
    }
    free(i->e);
    free(i);
}

static int64_t find(const tess_info *i, const char *key)
{
    for (int64_t k = 0; k < i->n; k++)
        if (strcmp(i->e[k].key, key) == 0)
            return k;
    return -1;
}

/* The checks tess_info_set and tess_info_get share: a non-empty key of bounded length. */
static int check_key(const char *who, const tess_info *i, const char *key)
{
    if (!i || !key)
        return tessi_error(TESS_ERR_ARG, "%s: %s is NULL", who, i ? "key" : "info");
    size_t n = strnlen(key, TESSI_INFO_MAX_KEY + 1);
    if (n == 0 || n > TESSI_INFO_MAX_KEY)
        return tessi_error(TESS_ERR_ARG, "%s: key is %s (1 to %d bytes allowed)", who,
                           n ? "too long" : "empty", TESSI_INFO_MAX_KEY);
    return 0;
}

int tess_info_set(tess_info *i, const char *key, const char *value)
{
    char *v = NULL, *k = NULL;
    int rc = check_key("tess_info_set", i, key);
    if (rc)
        goto fail;
    if (!value || strnlen(value, TESSI_INFO_MAX_VALUE + 1) > TESSI_INFO_MAX_VALUE) {
        rc = tessi_error(TESS_ERR_ARG, "tess_info_set: value of '%s' is %s (up to %d bytes)",
                         key, value ? "too long" : "NULL", TESSI_INFO_MAX_VALUE);
        goto fail;
    }
    int64_t at = find(i, key);
    v = strdup(value);
    k = at < 0 ? strdup(key) : NULL;
    if (!v || (at < 0 && !k)) {
        rc = tessi_error(TESS_ERR_NOMEM, "tess_info_set: out of memory");
        goto fail;
    }
    if (at >= 0) {
        free(i->e[at].value);
        i->e[at].value = v;
        return 0;
    }
    if (i->n == i->cap) {
        int64_t cap = i->cap ? 2 * i->cap : 8;
        info_entry *e = realloc(i->e, (size_t)cap * sizeof *e);
        if (!e) {
            rc = tessi_error(TESS_ERR_NOMEM, "tess_info_set: out of memory");
            goto fail;
        }
        i->e = e;
        i->cap = cap;
    }
    i->e[i->n++] = (info_entry){.key = k, .value = v};
    return 0;
fail:
    free(v);
    free(k);
    return rc;
}

int tess_info_get(const tess_info *i, const char *key, char *value, size_t cap, int *found)
{
    int rc = check_key("tess_info_get", i, key);
    if (rc)
        return rc;
    if (!found || (!value && cap > 0))
        return tessi_error(TESS_ERR_ARG, "tess_info_get: %s is NULL", found ? "value" : "found");
    int64_t at = find(i, key);
    *found = at >= 0;
    if (at < 0)
        return 0;
    size_t n = strlen(i->e[at].value);
    if (cap > 0) {
        size_t c = n < cap ? n : cap - 1;
        memcpy(value, i->e[at].value, c);
        value[c] = '\0';
    }
    if (n >= cap)
        return tessi_error(TESS_ERR_TRUNCATE, "tess_info_get: value of '%s' needs %zu bytes, "
                           "buffer has %zu", key, n + 1, cap);
    return 0;
}

int tess_info_get_nkeys(const tess_info *i, int64_t *n)
{
    if (!i || !n)
        return tessi_error(TESS_ERR_ARG, "tess_info_get_nkeys: %s is NULL", i ? "n" : "info");
    *n = i->n;
    return 0;
}

int tess_info_get_nthkey(const tess_info *i, int64_t k, char *key, size_t cap)
{
    if (!i || !key)
        return tessi_error(TESS_ERR_ARG, "tess_info_get_nthkey: %s is NULL", i ? "key" : "info");
    if (k < 0 || k >= i->n)
        return tessi_error(TESS_ERR_ARG, "tess_info_get_nthkey: key %lld of %lld", (long long)k,
                           (long long)i->n);
    size_t n = strlen(i->e[k].key);
    if (n >= cap)
        return tessi_error(TESS_ERR_TRUNCATE, "tess_info_get_nthkey: key %lld needs %zu bytes, "
                           "buffer has %zu", (long long)k, n + 1, cap);
    memcpy(key, i->e[k].key, n + 1);
    return 0;
}
