/*
 * options.c - the one option parser of the `tessera bench` commands (see options.h).
 */
#include "options.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_OPTS = 64, LIST_TEXT = 512, USAGE_WIDTH = 94, USAGE_INDENT = 22 };

int bench_vfail(const char *fmt, va_list ap)
{
    fputs("tessera: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    return -1;
}

int bench_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    bench_vfail(fmt, ap);
    va_end(ap);
    return -1;
}

static int say(int quiet, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int say(int quiet, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (!quiet)
        bench_vfail(fmt, ap);
    va_end(ap);
    return -1;
}

const char *bench_default_dir(void)
{
    const char *tmp = getenv("TMPDIR");
    return tmp && *tmp ? tmp : "/tmp";
}

int bench_parse_size(const char *opt, const char *s, int64_t *out, int quiet)
{
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno != 0 || end == s || v < 0)
        return say(quiet, "%s: not a size: '%s'", opt, s);
    int shift = 0;
    if (*end == 'k' || *end == 'K')
        shift = 10, end++;
    else if (*end == 'm' || *end == 'M')
        shift = 20, end++;
    else if (*end == 'g' || *end == 'G')
        shift = 30, end++;
    if (*end != '\0')
        return say(quiet, "%s: not a size: '%s' (suffixes: k, m, g)", opt, s);
    if (v > (INT64_MAX >> shift))
        return say(quiet, "%s: size too large: '%s'", opt, s);
    *out = (int64_t)v << shift;
    return 0;
}

/* A size or integer within the option's range. */
static int ranged(const bench_opt *o, const char *opt, const char *s, int64_t *v, int quiet)
{
    if (bench_parse_size(opt, s, v, quiet) != 0)
        return -1;
    if (*v < o->min || (o->max > 0 && *v > o->max)) {
        if (o->max > 0)
            return say(quiet, "%s: %lld to %lld", opt, (long long)o->min, (long long)o->max);
        return say(quiet, "%s: at least %lld", opt, (long long)o->min);
    }
    return 0;
}

static int number(const char *opt, const char *s, double min, int strict, double *out, int quiet)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (errno != 0 || end == s || *end != '\0' || !(strict ? v > min : v >= min))
        return say(quiet, "%s: a number %s %g: '%s'", opt, strict ? ">" : ">=", min, s);
    *out = v;
    return 0;
}

static void list_choices(const bench_choice *c, FILE *f)
{
    for (int i = 0; c[i].name; i++)
        fprintf(f, "%s%s", i ? ", " : "", c[i].name);
}

static int choice(const bench_opt *o, const char *opt, const char *s, unsigned *bits, int quiet)
{
    for (int i = 0; o->choices[i].name; i++)
        if (strcmp(s, o->choices[i].name) == 0) {
            *bits = o->choices[i].bits;
            return 0;
        }
    if (!quiet) {
        fprintf(stderr, "tessera: %s: unknown '%s' (one of ", opt, s);
        list_choices(o->choices, stderr);
        fprintf(stderr, ")\n");
    }
    return -1;
}

/* Apply one value (the user's argument or a default) to the option. */
static int apply(const bench_opt *o, const char *s, int quiet)
{
    char opt[64], tmp[LIST_TEXT];
    snprintf(opt, sizeof opt, "--%s", o->name);
    int64_t v = 0;
    double d = 0;
    unsigned bits = 0;
    switch (o->kind) {
    case BENCH_OPT_FLAG:
    case BENCH_OPT_QUICK:
    case BENCH_OPT_TEST: *(int *)o->dst = 1; return 0;
    case BENCH_OPT_UNSET: *(int *)o->dst = 0; return 0;
    case BENCH_OPT_SIZE:
        if (ranged(o, opt, s, &v, quiet) != 0)
            return -1;
        *(int64_t *)o->dst = v;
        return 0;
    case BENCH_OPT_MS:
        if (number(opt, s, (double)o->min, 0, &d, quiet) != 0)
            return -1;
        *(double *)o->dst = d / 1000.0;
        return 0;
    case BENCH_OPT_SECONDS:
        if (number(opt, s, 0.0, 1, &d, quiet) != 0)
            return -1;
        *(double *)o->dst = d;
        return 0;
    case BENCH_OPT_TEXT: *(const char **)o->dst = s; return 0;
    case BENCH_OPT_CHOICE:
        if (choice(o, opt, s, &bits, quiet) != 0)
            return -1;
        *(int *)o->dst = (int)bits;
        return 0;
    case BENCH_OPT_PAIRS: {
        const char *eq = strchr(s, '=');
        if (!eq || eq == s || *o->n >= o->cap)
            return say(quiet, "%s: key=value (at most %d)", opt, o->cap);
        ((const char **)o->dst)[(*o->n)++] = s;
        return 0;
    }
    case BENCH_OPT_SIZES:
    case BENCH_OPT_INTS:
    case BENCH_OPT_SET: break;
    }
    /* the list kinds */
    if (strlen(s) >= sizeof tmp)
        return say(quiet, "%s: list too long", opt);
    strcpy(tmp, s);
    int k = 0;
    char *save = NULL;
    for (char *tok = strtok_r(tmp, ",", &save); tok; tok = strtok_r(NULL, ",", &save), k++) {
        if (o->kind == BENCH_OPT_SET) {
            unsigned b = 0;
            if (choice(o, opt, tok, &b, quiet) != 0)
                return -1;
            bits |= b;
            continue;
        }
        if (k >= o->cap)
            return say(quiet, "%s: at most %d values", opt, o->cap);
        if (ranged(o, opt, tok, &v, quiet) != 0)
            return -1;
        if (o->kind == BENCH_OPT_SIZES)
            ((int64_t *)o->dst)[k] = v;
        else
            ((int *)o->dst)[k] = (int)v;
    }
    if (k == 0)
        return say(quiet, "%s: empty list", opt);
    if (o->kind == BENCH_OPT_SET)
        *(unsigned *)o->dst = bits;
    else
        *o->n = k;
    return 0;
}

static int takes_arg(const bench_opt *o)
{
    return o->kind != BENCH_OPT_FLAG && o->kind != BENCH_OPT_UNSET &&
           o->kind != BENCH_OPT_QUICK && o->kind != BENCH_OPT_TEST;
}

/* The options of both tables as one array of pointers. */
static int gather(const bench_command *c, bench_opt **all)
{
    int n = 0;
    for (int i = 0; i < c->nopts && n < MAX_OPTS; i++)
        all[n++] = &c->opts[i];
    for (int i = 0; i < c->nshared && n < MAX_OPTS; i++)
        all[n++] = &c->shared[i];
    return n;
}

/* Print text wrapped at USAGE_WIDTH, continuation lines indented to USAGE_INDENT; col is the
   column the text starts at. */
static void wrap(FILE *f, const char *text, int col)
{
    const char *p = text;
    while (*p) {
        while (*p == ' ')
            p++;
        size_t w = strcspn(p, " ");
        if (!w)
            break;
        if (col > USAGE_INDENT && col + 1 + (int)w > USAGE_WIDTH) {
            fprintf(f, "\n%*s", USAGE_INDENT, "");
            col = USAGE_INDENT;
        } else if (col > USAGE_INDENT) {
            fputc(' ', f);
            col++;
        }
        fprintf(f, "%.*s", (int)w, p);
        col += (int)w;
        p += w;
    }
}

static void usage_line(FILE *f, const bench_opt *o)
{
    char head[64], text[1024];
    snprintf(head, sizeof head, "  --%s%s%s", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
    if ((int)strlen(head) < USAGE_INDENT)
        fprintf(f, "%-*s", USAGE_INDENT, head);
    else
        fprintf(f, "%s\n%*s", head, USAGE_INDENT, ""); /* a long head: text on the next line */
    size_t len = (size_t)snprintf(text, sizeof text, "%s", o->help ? o->help : "");
    if (o->choices && len < sizeof text) {
        len += (size_t)snprintf(text + len, sizeof text - len, " (%s",
                                o->kind == BENCH_OPT_SET ? "a list of" : "one of");
        for (int i = 0; o->choices[i].name && len < sizeof text; i++)
            len += (size_t)snprintf(text + len, sizeof text - len, "%s%s", i ? ", " : " ",
                                    o->choices[i].name);
        if (len < sizeof text)
            len += (size_t)snprintf(text + len, sizeof text - len, ")");
    }
    if (o->def && len < sizeof text)
        len += (size_t)snprintf(text + len, sizeof text - len, "; default %s%s%s%s%s", o->def,
                                o->quick ? ", --quick " : "", o->quick ? o->quick : "",
                                o->test ? ", --test " : "", o->test ? o->test : "");
    if (o->required && len < sizeof text)
        snprintf(text + len, sizeof text - len, " (required)");
    wrap(f, text, USAGE_INDENT);
    fputc('\n', f);
}

/* The command in messages: "bench <name>" (after "tessera: "), or its own program's name. */
static const char *program(const bench_command *c, char *buf, size_t cap)
{
    if (c->program)
        return c->program;
    snprintf(buf, cap, "bench %s", c->name);
    return buf;
}

void bench_usage(const bench_command *c, FILE *f)
{
    bench_opt *all[MAX_OPTS];
    char prog[96];
    int n = gather(c, all);
    fprintf(f, "usage: %s%s [options]\n%s", c->program ? "" : "tessera ",
            program(c, prog, sizeof prog), c->about);
    for (int i = 0; i < n; i++)
        usage_line(f, all[i]);
    fprintf(f, "%-*sthis text\n", USAGE_INDENT, "  -h, --help");
}

int bench_parse(const bench_command *c, int argc, char **argv, int quiet)
{
    bench_opt *all[MAX_OPTS];
    struct option lo[MAX_OPTS + 2];
    int n = gather(c, all), quick = 0, test = 0;
    for (int i = 0; i < n; i++) {
        if (all[i]->def && apply(all[i], all[i]->def, quiet) != 0)
            return 2; /* a bad default: the table is wrong */
        if (all[i]->given)
            *all[i]->given = 0;
        lo[i] = (struct option){all[i]->name, takes_arg(all[i]) ? required_argument : no_argument,
                                NULL, 1000 + i};
    }
    lo[n] = (struct option){"help", no_argument, NULL, 'h'};
    lo[n + 1] = (struct option){NULL, 0, NULL, 0};
    int given[MAX_OPTS] = {0};
    optind = 0; /* glibc: full re-initialization for this sub-argv */
    opterr = !quiet;
    int ch;
    while ((ch = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        if (ch == 'h') {
            if (!quiet)
                bench_usage(c, stdout);
            return 0;
        }
        if (ch < 1000 || ch >= 1000 + n) {
            if (!quiet)
                bench_usage(c, stderr);
            return 2;
        }
        bench_opt *o = all[ch - 1000];
        if (apply(o, optarg, quiet) != 0)
            return 2;
        given[ch - 1000] = 1;
        if (o->given)
            *o->given = 1;
        quick |= o->kind == BENCH_OPT_QUICK;
        test |= o->kind == BENCH_OPT_TEST;
    }
    char prog[96];
    if (optind < argc) {
        say(quiet, "%s: unexpected argument '%s'", program(c, prog, sizeof prog), argv[optind]);
        if (!quiet)
            bench_usage(c, stderr);
        return 2;
    }
    for (int i = 0; i < n; i++)
        if (all[i]->required && !given[i]) {
            say(quiet, "%s: --%s is required", program(c, prog, sizeof prog), all[i]->name);
            if (!quiet)
                bench_usage(c, stderr);
            return 2;
        }
    for (int i = 0; i < n; i++) {
        const bench_opt *o = all[i];
        const char *v = test && o->test ? o->test : (quick || test) ? o->quick : NULL;
        if (!given[i] && v && apply(o, v, quiet) != 0)
            return 2;
    }
    return -1;
}
