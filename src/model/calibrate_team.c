/*
 * calibrate_team.c - s_min and active threads of thread teams (paper 001 3.4.4), measured
 * through a storage driver (model.h: tessi_calibrate_team).
 *
 * The paper's brute force: one thread writes blocks of 8 KiB, 16 KiB, ... and s_min is where
 * its bandwidth stops growing; then 1, 2, ... threads write blocks of s_min at once and active
 * threads is the fewest reaching the best bandwidth. "Stops growing" is within 10% of the best
 * (repetitions on a shared machine differ by that much). Each figure is the median of three
 * samples after a warm-up pass; a sample writes a fixed volume, block after block, cycling
 * through a region of the file (page cache: the pages stay cached). Every thread has its own
 * handle and region, as the workers of a team access have.
 */
#include "model/model.h"

#include "driver/driver.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define REPS 3
#define MAX_THREADS 8
#define GOOD 0.9 /* within 10% of the best: the curve has stopped growing */

/* The start line: workers wait until go is 1 (run) or -1 (a thread could not be started). */
typedef struct start {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int go;
} start;

typedef struct worker {
    tessi_storage st;
    bool open;
    char *buf;
    int64_t block, region, base, volume;
    int rc;
    start *line;
    double seconds;
} worker;

/* Write volume bytes in blocks, cycling through [base, base + region). */
static int write_volume(worker *w)
{
    for (int64_t done = 0, at = 0; done < w->volume; done += w->block) {
        if (at + w->block > w->region)
            at = 0;
        int64_t n = tessi_drv_pwrite(&w->st, w->buf, w->block, w->base + at);
        if (n != w->block)
            return n < 0 ? (int)n : -EIO;
        at += w->block;
    }
    return 0;
}

static void *worker_main(void *p)
{
    worker *w = p;
    pthread_mutex_lock(&w->line->mu);
    while (w->line->go == 0)
        pthread_cond_wait(&w->line->cv, &w->line->mu);
    int go = w->line->go;
    pthread_mutex_unlock(&w->line->mu);
    double t0 = tessi_now();
    w->rc = go > 0 ? write_volume(w) : 0;
    w->seconds = tessi_now() - t0;
    return NULL;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Bandwidth (bytes/s) of n workers writing at once: the median of REPS samples, each all the
 * workers' bytes over the slowest worker's time. */
static int bandwidth(worker *w, int n, double *bw)
{
    double s[REPS];
    start line = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
    pthread_t th[MAX_THREADS];
    for (int rep = -1; rep < REPS; rep++) { /* rep -1: the warm-up */
        int started = 0;
        line.go = 0;
        for (int i = 0; i < n && started == i; i++) {
            w[i].line = &line;
            started += pthread_create(&th[i], NULL, worker_main, &w[i]) == 0;
        }
        pthread_mutex_lock(&line.mu);
        line.go = started == n ? 1 : -1;
        pthread_cond_broadcast(&line.cv);
        pthread_mutex_unlock(&line.mu);
        double slowest = 0, bytes = 0;
        int rc = 0;
        for (int i = 0; i < started; i++) {
            pthread_join(th[i], NULL);
            rc = rc ? rc : w[i].rc;
            slowest = w[i].seconds > slowest ? w[i].seconds : slowest;
            bytes += (double)w[i].volume;
        }
        if (started < n)
            return tessi_error(TESS_ERR_NOMEM, "calibrate: cannot start %d threads", n);
        if (rc)
            return tessi_error(tessi_errno_code(rc), "calibrate: threads writing: %s",
                               strerror(-rc));
        if (rep >= 0)
            s[rep] = bytes / (slowest > 1e-9 ? slowest : 1e-9);
    }
    qsort(s, REPS, sizeof *s, cmp_double);
    *bw = s[REPS / 2];
    return 0;
}

/* Where a curve stops growing: the first of its n points within GOOD of the best. */
static int knee(const double *bw, int n)
{
    double best = 0;
    for (int k = 0; k < n; k++)
        best = bw[k] > best ? bw[k] : best;
    for (int k = 0; k < n; k++)
        if (bw[k] >= GOOD * best)
            return k;
    return n - 1;
}

/* Workers 0 .. n-1 write blocks of `block`, `volume` bytes each (at least 4 blocks), cycling
 * through a region of their own. */
static void load(worker *w, int n, int64_t block, int64_t region, int64_t volume)
{
    for (int i = 0; i < n; i++) {
        w[i].block = block;
        w[i].region = region > block ? region : block;
        w[i].volume = (volume > 4 * block ? volume : 4 * block) / block * block;
    }
}

int tessi_calibrate_team(const char *driver, const char *dir, bool quick, tessi_profile *out,
                         tessi_team_curve *curve)
{
    const struct tess_driver *drv = driver ? tessi_driver_find(driver) : NULL;
    if (!drv || !dir || !out)
        return tessi_error(TESS_ERR_ARG, "tessi_calibrate_team: no driver '%s', or NULL "
                           "arguments", driver ? driver : "(null)");
    int64_t max_block = quick ? 4 << 20 : 64 << 20, region = quick ? 8 << 20 : 64 << 20;
    int64_t volume = quick ? 16 << 20 : 128 << 20;
    tessi_team_curve c = {0};
    worker *w = calloc(MAX_THREADS, sizeof *w);
    char path[4200];
    int rc = w ? 0 : tessi_error(TESS_ERR_NOMEM, "calibrate: out of memory");
    snprintf(path, sizeof path, "%s/.tessera-calibrate-team-%ld", dir, (long)getpid());
    for (int i = 0; rc == 0 && i < MAX_THREADS; i++) {
        int err = tessi_drv_open(&w[i].st, drv, path, TESS_RDWR | (i ? 0 : TESS_CREATE), NULL);
        if (err)
            rc = tessi_error(tessi_errno_code(err), "calibrate: cannot open %s with the %s "
                             "driver: %s", path, drv->name, strerror(-err));
        w[i].open = err == 0;
        w[i].buf = rc ? NULL : malloc((size_t)max_block);
        if (rc == 0 && !w[i].buf)
            rc = tessi_error(TESS_ERR_NOMEM, "calibrate: out of memory");
        if (rc == 0)
            memset(w[i].buf, 0x5a + i, (size_t)max_block); /* touched before any timing */
        w[i].base = (int64_t)i * (region > max_block ? region : max_block);
    }
    /* s_min: one thread, blocks of 8 KiB to max_block */
    for (int64_t b = 8 << 10; rc == 0 && b <= max_block && c.nsizes < 16; b *= 2) {
        load(w, 1, b, region, volume);
        rc = bandwidth(w, 1, &c.size_bw[c.nsizes]);
        c.size[c.nsizes++] = b;
    }
    int64_t smin = rc ? 0 : c.size[knee(c.size_bw, c.nsizes)];
    /* active threads: 1 .. MAX_THREADS threads writing blocks of s_min */
    for (int n = 1; rc == 0 && n <= MAX_THREADS; n++) {
        load(w, n, smin, region, volume);
        rc = bandwidth(w, n, &c.threads_bw[c.nthreads]);
        c.threads[c.nthreads++] = n;
    }
    int active = rc ? 0 : c.threads[knee(c.threads_bw, c.nthreads)];
    for (int i = 0; w && i < MAX_THREADS; i++) {
        if (w[i].open)
            tessi_drv_close(&w[i].st);
        free(w[i].buf);
    }
    if (w && w[0].open)
        tessi_drv_remove(drv, path, NULL);
    free(w);
    if (rc)
        return rc;
    out->team_smin = smin;
    out->team_active = active;
    if (curve)
        *curve = c;
    return 0;
}
