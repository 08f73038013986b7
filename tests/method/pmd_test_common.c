/*
 * pmd_test_common.c - helpers shared by test_pmd_method and test_pmd_auto (see
 * pmd_test_common.h).
 */
#include "pmd_test_common.h"

#include "driver/driver.h"

char pt_path[64], pt_prof[64];

void pt_init(const char *tag)
{
    tf_path(pt_path, sizeof pt_path, tag);
    snprintf(pt_prof, sizeof pt_prof, "tess_%s_profile_%ld", tag, (long)getpid());
}

void pt_finish(void)
{
    unlink(pt_path);
    unlink(pt_prof);
}

/* ------------------------------------------------------------------ models */

/* lo * 10^k * (1 + j/8), k in [0, decades], j in [0, 7]. */
static double rnd_scale(rt_rng *r, double lo, int decades)
{
    double v = lo;
    for (int64_t k = rt_int(r, 0, decades); k > 0; k--)
        v *= 10;
    return v * (1.0 + (double)rt_int(r, 0, 7) / 8.0);
}

tessi_model pt_random_model(rt_rng *r, bool locks)
{
    tessi_model m;
    tessi_model_defaults(&m);
    for (int w = 0; w < 2; w++) {
        m.dir[w].s = rnd_scale(r, 1e-7, 4);
        m.dir[w].tt = rnd_scale(r, 1e-11, 3);
        m.dir[w].cud = rt_chance(r, 50) ? 0 : rnd_scale(r, 1e-11, 2);
        m.dir[w].te = rt_chance(r, 70) ? 0 : rnd_scale(r, 1e-7, 2);
        m.dir[w].lq_dep = rt_chance(r, 70) ? 0 : rnd_scale(r, 1e-7, 2);
        m.dir[w].list_call = rnd_scale(r, 1e-7, 3);
        m.dir[w].list_pair = rnd_scale(r, 1e-8, 3);
    }
    m.mc = rnd_scale(r, 1e-12, 3);
    m.lock = rnd_scale(r, 1e-7, 3);
    m.locks = locks;
    m.batched = rt_chance(r, 60);
    m.n = rt_int(r, 1, 4);
    return m;
}

void pt_save_profile(const tessi_model *m)
{
    tessi_profile pf;
    tessi_profile_defaults(&pf);
    pf.defaults = false;
    pf.model[TESSI_CACHED] = *m;
    CHECK_OK(tessi_profile_save(pt_prof, &pf));
}

void pt_unit_profile(void)
{
    tessi_model m = {.locks = true, .batched = false, .n = 1, .p = 1, .list_max = 64,
                     .lock = 0.5};
    for (int w = 0; w < 2; w++) {
        m.dir[w].s = 1.0;
        m.dir[w].tt = 1.0 / 1024;
    }
    pt_save_profile(&m);
}

tessi_model pt_file_model(const tessi_model *saved, int64_t list_max, bool uring)
{
    tessi_model m = *saved;
    m.p = 1;
    m.list_max = list_max;
    if (!tessi_driver_find("posix")->submit || !uring)
        m.batched = false;
    return m;
}

int pt_open(const pt_hints *h, int flags, tess_file **f)
{
    const char *kv[32];
    int k = 0;
    kv[k++] = "tess_profile", kv[k++] = pt_prof;
    if (h->method)
        kv[k++] = "tess_method", kv[k++] = h->method;
    if (h->rd[0])
        kv[k++] = "ind_rd_buffer_size", kv[k++] = h->rd;
    if (h->wr[0])
        kv[k++] = "ind_wr_buffer_size", kv[k++] = h->wr;
    if (h->pairs[0])
        kv[k++] = "tess_list_max_pairs", kv[k++] = h->pairs;
    if (h->uring)
        kv[k++] = "tess_posix_uring", kv[k++] = h->uring;
    if (h->ds_read)
        kv[k++] = "romio_ds_read", kv[k++] = h->ds_read;
    if (h->ds_write)
        kv[k++] = "romio_ds_write", kv[k++] = h->ds_write;
    kv[k] = NULL;
    return tf_open(pt_path, flags, f, kv);
}

pt_hints pt_random_hints(rt_rng *r, const char *method)
{
    static const char *const bufs[] = {"1", "7", "64", "300", "4096", "1048576"};
    static const char *const pairs[] = {"1", "2", "5", "64", "1024"};
    pt_hints h = {.method = method, .uring = rt_chance(r, 50) ? "enable" : "disable"};
    snprintf(h.rd, sizeof h.rd, "%s", bufs[rt_int(r, 0, 5)]);
    snprintf(h.wr, sizeof h.wr, "%s", bufs[rt_int(r, 0, 5)]);
    snprintf(h.pairs, sizeof h.pairs, "%s", pairs[rt_int(r, 0, 4)]);
    return h;
}

/* ------------------------------------------------------------------ estimates */

tessi_group *pt_estimate(const tessi_model *m, bool write, int64_t buf,
                         const tess_region *reg, int64_t n, method_costs *e, int64_t *ngroups)
{
    tessi_planner pl;
    tessi_group *g = malloc(sizeof *g * (size_t)(n + TESSI_PLAN_EMIT_MAX));
    int64_t used, made;
    CHECK(g);
    estimate_all(m, write, buf, reg, n, 0, e);
    CHECK_OK(tessi_plan_init(&pl, m, write, buf));
    *ngroups = 0;
    for (int64_t i = 0; i < n; i++) {
        CHECK_OK(tessi_plan_push(&pl, &reg[i], 1, g + *ngroups, TESSI_PLAN_EMIT_MAX, &used,
                                 &made));
        *ngroups += made;
    }
    CHECK_OK(tessi_plan_flush(&pl, g + *ngroups, TESSI_PLAN_EMIT_MAX, &made));
    *ngroups += made;
    return g;
}

int pt_expected_choice(const method_costs *e, int ds)
{
    const struct {
        int id;
        double sec;
        bool ok;
    } c[] = {{TESS_METHOD_NAIVE, e->naive.seconds, ds != 1},
             {TESS_METHOD_LIST, e->list.seconds, ds != 1},
             {TESS_METHOD_SIEVE, e->sieve.seconds, ds != 2},
             {TESS_METHOD_PMD, e->pmd.seconds, ds != 2}};
    int best = -1;
    for (int i = 0; i < 4; i++)
        if (c[i].ok && (best < 0 || c[i].sec < c[best].sec))
            best = i;
    return c[best].id;
}
