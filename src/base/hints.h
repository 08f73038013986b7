/*
 * hints.h - the declarative hint table: every hint Tessera understands, once (key, kind and
 * range, default, scope, one-line doc), and the one parser every open path validates through.
 * The file layer, the collective layer and tess_file_get_info read hints only through it;
 * a storage driver declares its own hints as a table of the same form (driver.h) and parses
 * them with the same function.
 *
 * Unknown keys are ignored (MPI's rule for hints). A known key with a bad value is an error
 * naming the key, the value and what it takes, before anything is opened or created.
 */
#ifndef TESS_HINTS_H
#define TESS_HINTS_H

#include "base/base.h"

/** How a hint's value is written and checked. */
typedef enum {
    TESSI_HINT_INT,    /* decimal integer in [min, max] (no sign, no blanks, no suffix) */
    TESSI_HINT_CHOICE, /* one of `choices`; the value is its index */
    TESSI_HINT_NAME,   /* a name the consuming layer looks up (a driver, a method) */
    TESSI_HINT_PATH    /* a file path, at least `min` bytes long (0: empty means the default) */
} tessi_hint_kind;

/** Which layer a hint steers. */
typedef enum {
    TESSI_SCOPE_FILE,   /* the file layer and the independent methods */
    TESSI_SCOPE_COLL,   /* collective I/O: must be equal on every process of a group */
    TESSI_SCOPE_DRIVER  /* one storage driver (declared in the driver's own table) */
} tessi_hint_scope;

/** One hint. */
typedef struct tessi_hint_def {
    const char *key;
    tessi_hint_kind kind;
    tessi_hint_scope scope;
    int64_t min, max;            /* INT: the range; PATH: min is the shortest length */
    const char *const *choices;  /* CHOICE: the names, NULL-terminated */
    int64_t def;                 /* INT, CHOICE: the default (INT 0 below min: none) */
    const char *def_text;        /* NAME, PATH: the default ("" none); others: how the default
                                    is documented where it is not a constant */
    const char *doc;             /* one line */
} tessi_hint_def;

/** A hint's value after parsing: the given one, else the default (given false). */
typedef struct tessi_hint_val {
    bool given;
    int64_t i;   /* INT, CHOICE */
    char *s;     /* NAME, PATH: malloc'ed copy (NULL: none) */
} tessi_hint_val;

/** The hints of the core (file and collective scope), by index into tessi_hints_table. */
enum {
    TESSI_H_METHOD = 0,
    TESSI_H_DS_READ,
    TESSI_H_DS_WRITE,
    TESSI_H_RD_BUFFER,
    TESSI_H_WR_BUFFER,
    TESSI_H_LIST_MAX_PAIRS,
    TESSI_H_DRIVER,
    TESSI_H_PROFILE,
    TESSI_H_MODEL,
    TESSI_H_DECISIONS,
    TESSI_H_CB_NODES,
    TESSI_H_CB_BUFFER,
    TESSI_H_CB_READ,
    TESSI_H_CB_WRITE,
    TESSI_H_REALMS,
    TESSI_H_STRIPING_UNIT,
    TESSI_H_REALM_SIZE,
    TESSI_H_CB_SIEVE,
    TESSI_H_CB_PIPELINE,
    TESSI_H_OMP_SMIN,
    TESSI_H_OMP_ACTIVE,
    TESSI_H_CB_PACK,
    TESSI_NHINTS
};

/** Values of romio_ds_read/write and romio_cb_read/write (their choices, in this order). */
enum { TESSI_DS_AUTOMATIC = 0, TESSI_DS_ENABLE, TESSI_DS_DISABLE };

/** Values of tess_realms (its choices, in this order), and the realms tess_file_set_realms
 *  installs. */
enum {
    TESSI_REALM_EVEN = 0,   /* aggregate access region split evenly (ROMIO's default) */
    TESSI_REALM_ALIGNED,    /* even, boundaries on multiples of striping_unit */
    TESSI_REALM_PERSISTENT, /* fixed at the first collective access, anchored at byte 0 */
    TESSI_REALM_BALANCED,   /* equal data volume per aggregator */
    TESSI_REALM_CYCLIC,     /* blocks of tess_realm_size dealt round-robin (a realm type) */
    TESSI_REALM_USER        /* the realm type given to tess_file_set_realms */
};

/** The core's hints (TESSI_NHINTS entries, in the order above). */
extern const tessi_hint_def tessi_hints_table[TESSI_NHINTS];

/** Names of the enable/disable/automatic hints, in the order of their TESSI_DS_* values. */
extern const char *const tessi_hint_tristate[];
/** Names of the enable/disable hints: "disable" is 0, "enable" 1. */
extern const char *const tessi_hint_onoff[];

/**
 * Parse the n hints of defs from info (NULL: all defaults) into vals[0..n). Every known key is
 * checked; on the first bad value returns TESS_ERR_ARG with "<who>: hint <key> = '<value>' ..."
 * and leaves vals empty (nothing to release). Release vals with tessi_hints_release.
 */
int tessi_hints_parse(const tessi_hint_def *defs, int n, const tess_info *info, const char *who,
                      tessi_hint_val *vals);

/** Free the strings of vals[0..n) (vals may be used again after another parse). */
void tessi_hints_release(tessi_hint_val *vals, int n);

/**
 * Add the value of every hint that has one to out, as its key expects it (tess_file_get_info):
 * INT in decimal (a value below min is "none" and left out), CHOICE by name, NAME and PATH
 * as is (none left out).
 */
int tessi_hints_to_info(const tessi_hint_def *defs, int n, const tessi_hint_val *vals,
                        tess_info *out);

#endif
