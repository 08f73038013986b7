/*
 * options.h - the one option parser of every `tessera bench` command.
 *
 * A command declares its options as a table (bench_opt: name, kind, where the value goes, range,
 * defaults, one line of help) and calls bench_parse. The parser applies the defaults, reads the
 * arguments (getopt_long), checks every value against its kind and range, applies the --quick
 * or --test defaults to what the user did not give, and prints the usage (generated from the
 * table: the defaults are shown from the same strings that set them). Defaults are option text,
 * parsed like the user's ("16m", "8,512,32k").
 *
 * Under MPI every rank parses the same arguments; only the rank that is not `quiet` prints.
 *
 * The parser, bench_fail and the --results lines (report.h) need no Tessera: tessera-formats, a
 * plain MPI program, uses them too.
 */
#ifndef TESS_BENCH_OPTIONS_H
#define TESS_BENCH_OPTIONS_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

/** Print a printf-style message prefixed with "tessera: " to stderr; returns -1. */
int bench_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/** bench_fail with a va_list. */
int bench_vfail(const char *fmt, va_list ap);

/** What an option's value is, and where it goes (bench_opt.dst). */
typedef enum bench_opt_kind {
    BENCH_OPT_FLAG,   /**< no argument: int, set to 1 */
    BENCH_OPT_UNSET,  /**< no argument: int, set to 0 (--no-mpi) */
    BENCH_OPT_QUICK,  /**< no argument: int, set to 1; selects the quick defaults */
    BENCH_OPT_TEST,   /**< no argument: int, set to 1; selects the test defaults */
    BENCH_OPT_SIZE,   /**< int64_t; a size with an optional k, m, g suffix, in [min, max] */
    BENCH_OPT_SIZES,  /**< int64_t[cap]: a comma-separated list of sizes; *n gets the count */
    BENCH_OPT_INTS,   /**< int[cap]: a comma-separated list of integers; *n gets the count */
    BENCH_OPT_MS,     /**< double: milliseconds >= min (min: whole ms), stored as seconds */
    BENCH_OPT_SECONDS, /**< double: a positive number of seconds */
    BENCH_OPT_TEXT,   /**< const char *: the argument itself */
    BENCH_OPT_CHOICE, /**< int: the index of the argument in `choices` */
    BENCH_OPT_SET,    /**< unsigned: bit mask of a comma-separated list of `choices` */
    BENCH_OPT_PAIRS,  /**< const char *[cap]: repeatable "key=value"; *n gets the count */
} bench_opt_kind;

/** A name of a choice or set option, and the bits it stands for (sets: groups such as "all"). */
typedef struct bench_choice {
    const char *name;
    unsigned bits;
} bench_choice;

typedef struct bench_opt {
    const char *name;     /**< long option without the dashes */
    bench_opt_kind kind;
    void *dst;
    const char *arg;      /**< the argument's name in the usage ("N", "LIST") */
    const char *help;     /**< what it does (the usage wraps it) */
    const char *def;      /**< default, as option text (NULL: dst keeps its value) */
    const char *quick;    /**< default with --quick (NULL: def) */
    const char *test;     /**< default with --test (NULL: quick) */
    int64_t min, max;     /**< range of sizes and integers (max 0: no limit) */
    int cap;              /**< capacity of list kinds */
    int *n;               /**< list kinds: the count */
    const bench_choice *choices; /**< CHOICE, SET: terminated by a NULL name */
    int *given;           /**< optional: set to 1 when the user gave the option */
    int required;         /**< the user must give it (no default makes sense) */
} bench_opt;

/** A command's options: its own, then (usage printed after them) a shared group. */
typedef struct bench_command {
    const char *name;    /**< "indep": messages say "tessera bench indep" */
    const char *program; /**< the command line when it is not "tessera bench <name>" (NULL) */
    const char *about;   /**< the usage lines after "usage: tessera bench NAME [options]" */
    bench_opt *opts;
    int nopts;
    bench_opt *shared;
    int nshared;
} bench_command;

/**
 * Parse argv (argv[0] is the command word) into the tables. Returns -1 when the command should
 * run, 0 when it printed its usage for --help (the command is done), 2 on bad usage (message
 * and usage on stderr unless quiet).
 */
int bench_parse(const bench_command *c, int argc, char **argv, int quiet);

/** Print the usage of c (generated from its tables). */
void bench_usage(const bench_command *c, FILE *f);

/** The default directory of benchmark files: $TMPDIR, else /tmp. */
const char *bench_default_dir(void);

/** Parse a size with an optional k/m/g suffix; quiet: no message. 0 or -1. */
int bench_parse_size(const char *opt, const char *s, int64_t *out, int quiet);

/* Options every single-process benchmark has (types, indep, pmd). */
#define BENCH_OPT_REPS(p, top, q)                                                               \
    {.name = "reps", .kind = BENCH_OPT_SIZE, .dst = (p), .arg = "N", .min = 1, .max = (top),    \
     .help = "repetitions, the median is printed", .def = "5", .quick = (q)}
#define BENCH_OPT_MIN_MS(p, d, q)                                                               \
    {.name = "min-ms", .kind = BENCH_OPT_MS, .dst = (p), .arg = "MS", .min = 0,                 \
     .help = "minimum milliseconds per repetition", .def = (d), .quick = (q)}
#define BENCH_OPT_DIR(p)                                                                        \
    {.name = "dir", .kind = BENCH_OPT_TEXT, .dst = (p), .arg = "DIR",                           \
     .help = "directory of the files; default $TMPDIR or /tmp"}
#define BENCH_OPT_PREFILL(p)                                                                    \
    {.name = "prefill-write", .kind = BENCH_OPT_SIZE, .dst = (p), .min = 1, .max = 1 << 30,      \
     .arg = "BYTES", .def = "1m",                                                               \
     .help = "size of the writes that prefill each file: 1m gives large folios where the "    \
             "kernel has them (as files written or read in large pieces have), 4k base pages, "  \
             "in which small writes cost several times less"}
#define BENCH_OPT_KEEP(p) {.name = "keep", .kind = BENCH_OPT_FLAG, .dst = (p), .help = "keep the files"}
#define BENCH_OPT_NO_MPI(p, what)                                                               \
    {.name = "no-mpi", .kind = BENCH_OPT_UNSET, .dst = (p), .help = (what)}
#define BENCH_OPT_CPU_TIME(p)                                                                   \
    {.name = "cpu-time", .kind = BENCH_OPT_FLAG, .dst = (p),                                    \
     .help = "time with the process CPU clock (user + system, all threads and io_uring "       \
             "workers) instead of the wall clock: steadier on a busy machine, blind to waits "  \
             "such as lock contention"}
#define BENCH_OPT_QUICKLY(p, what)                                                              \
    {.name = "quick", .kind = BENCH_OPT_QUICK, .dst = (p), .help = (what)}
#define BENCH_OPT_RESULTS(p)                                                                    \
    {.name = "results", .kind = BENCH_OPT_TEXT, .dst = (p), .arg = "FILE",                      \
     .help = "append one line per case, implementation and direction (seconds per op, bytes "  \
             "per op, check; report.h) to FILE, for `tessera demo` and `tessera bench mpiio`"}

/** The number of entries of a table. */
#define BENCH_NOPTS(t) ((int)(sizeof(t) / sizeof((t)[0])))

#endif
