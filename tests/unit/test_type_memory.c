/*
 * test_type_memory.c - regular types cost O(depth) memory whatever their counts: the heap a
 * vector of 10^9 doubles and 3-D subarrays and darrays of a 10^4-cubed array hold while they
 * live (measured with mallinfo2, or the sanitizer's allocator under ASan) stays under 1 KiB,
 * tess_type_footprint agrees, and such types still pack from any byte.
 *
 * glibc keeps freed chunks in per-thread caches (tcache) that mallinfo2 counts as in use, and
 * its first malloc allocates the cache itself (656 bytes): so the program runs itself again
 * with the caches off (GLIBC_TUNABLES=glibc.malloc.tcache_count=0) and warms malloc before it
 * measures, which makes the figure the bytes the type holds, chunk headers included.
 */
#include "type_expect.h"

#include <malloc.h>
#include <unistd.h>

#ifdef __SANITIZE_ADDRESS__
/* the sanitizer runtime's allocator statistics (declared here: not every compiler installs
 * <sanitizer/allocator_interface.h>) */
size_t __sanitizer_get_current_allocated_bytes(void);
static int64_t heap_in_use(void) { return (int64_t)__sanitizer_get_current_allocated_bytes(); }
#else
static int64_t heap_in_use(void)
{
    struct mallinfo2 m = mallinfo2();
    return (int64_t)(m.uordblks + m.hblkhd);
}
#endif

/* Run again with glibc's thread cache off (see above), unless it is off already. */
static void without_tcache(char **argv)
{
#ifndef __SANITIZE_ADDRESS__
    const char *tun = getenv("GLIBC_TUNABLES");
    if (tun && strstr(tun, "glibc.malloc.tcache_count=0"))
        return;
    CHECK(setenv("GLIBC_TUNABLES", "glibc.malloc.tcache_count=0", 1) == 0);
    execv("/proc/self/exe", argv);
    perror("execv /proc/self/exe");
    exit(1);
#else
    (void)argv;
#endif
}

/* The heap t holds: built, measured and freed once more after a first build warmed malloc. */
static int64_t heap_of(const char *what, int (*make)(tess_type **))
{
    tess_type *t;
    CHECK_OK(make(&t));
    int64_t fp = tess_type_footprint(t);
    tess_type_free(t);
    int64_t before = heap_in_use();
    CHECK_OK(make(&t));
    int64_t held = heap_in_use() - before;
    CHECK(tess_type_footprint(t) == fp);
    tess_type_free(t);
    CHECK(heap_in_use() == before); /* nothing left behind */
    printf("  %-44s %4lld bytes of heap (tess_type_footprint %lld)\n", what, (long long)held,
           (long long)fp);
    CHECK(held > 0 && held < 1024);
    CHECK(fp <= held);
    return held;
}

static int make_vector(tess_type **t) { return tess_type_vector(1000000000, 1, 2, TESS_DOUBLE, t); }

static int make_subarray(tess_type **t)
{
    int64_t sizes[3] = {10000, 10000, 10000}, subs[3] = {5000, 5000, 5000}, st[3] = {100, 200, 300};
    return tess_type_subarray(3, sizes, subs, st, TESS_ORDER_C, TESS_DOUBLE, t);
}

static int make_darray(tess_type **t)
{
    int64_t g[3] = {10000, 10000, 10000};
    int dist[3] = {TESS_DISTRIBUTE_CYCLIC, TESS_DISTRIBUTE_CYCLIC, TESS_DISTRIBUTE_BLOCK};
    int darg[3] = {7, 3, TESS_DISTRIBUTE_DFLT_DARG}, ps[3] = {3, 1, 2};
    return tess_type_darray(6, 1, 3, g, dist, darg, ps, TESS_ORDER_FORTRAN, TESS_DOUBLE, t);
}

static void test_heap(void)
{
    void *volatile warm = malloc(64); /* malloc's own first allocation is not the type's */
    free(warm);
    heap_of("vector of 10^9 doubles", make_vector);
    heap_of("3-D subarray 5000^3 of a 10^4-cubed array", make_subarray);
    heap_of("3-D cyclic darray of a 10^4-cubed array", make_darray);
}

/* ----------------------------------------------------------- memory */

static void test_memory(void)
{
    tess_type *a, *b, *c;

    /* a vector of 10^9 blocks */
    CHECK_OK(tess_type_vector(1000000000, 1, 2, TESS_DOUBLE, &a));
    BOUNDS(a, 8000000000LL, 0, 15999999992LL, 0, 15999999992LL, 1000000000);
    CHECK(tess_type_footprint(a) > 0 && tess_type_footprint(a) < 1024);
    /* its last element packs from the right place (seek, not a walk) */
    {
        static const int64_t off = 15999999984LL; /* element 10^9 - 1 at 2 * 8 * (10^9 - 1) */
        double v = 42.5, got = 0;
        /* the origin lies 16 GB below v: only the element at `off` is ever touched */
        const char *origin = (const char *)((uintptr_t)&v - (uintptr_t)off);
        int64_t np;
        CHECK_OK(tess_pack(origin, 1, a, 8000000000LL - 8, &got, 8, &np));
        EQ(np, 8);
        CHECK(got == 42.5);
    }
    tess_type_free(a);

    /* a 3-D subarray of a 10^4 x 10^4 x 10^4 array of double */
    {
        int64_t sizes[] = {10000, 10000, 10000}, subs[] = {5000, 3000, 2000}, st[] = {1, 2, 3};
        CHECK_OK(tess_type_subarray(3, sizes, subs, st, TESS_ORDER_C, TESS_DOUBLE, &a));
        int64_t tlb = ((1LL * 10000 + 2) * 10000 + 3) * 8;
        int64_t last = ((5000LL * 10000 + 3001) * 10000 + 2003) * 8; /* end of the last row */
        BOUNDS(a, 30000000000LL * 8, 0, 8000000000000LL, tlb, last - tlb, 15000000);
        CHECK(tess_type_footprint(a) > 0 && tess_type_footprint(a) < 1024);
        tess_type_free(a);
        CHECK_OK(tess_type_subarray(3, sizes, subs, st, TESS_ORDER_FORTRAN, TESS_DOUBLE, &a));
        /* Fortran: dimension 0 is contiguous; rows of 5000 doubles, 3000 x 2000 of them */
        EQ(tess_type_num_regions(a), 6000000);
        EQ(tess_type_size(a), 30000000000LL * 8);
        CHECK(tess_type_footprint(a) > 0 && tess_type_footprint(a) < 1024);
        tess_type_free(a);
    }
    /* darrays of the same array: block x cyclic x none, and cyclic(7) with a partial tail */
    {
        int64_t g[] = {10000, 10000, 10000};
        int dist[] = {TESS_DISTRIBUTE_BLOCK, TESS_DISTRIBUTE_CYCLIC, TESS_DISTRIBUTE_NONE};
        int darg[] = {TESS_DISTRIBUTE_DFLT_DARG, TESS_DISTRIBUTE_DFLT_DARG,
                      TESS_DISTRIBUTE_DFLT_DARG};
        int ps[] = {2, 4, 1};
        CHECK_OK(tess_type_darray(8, 5, 3, g, dist, darg, ps, TESS_ORDER_C, TESS_DOUBLE, &a));
        EQ(tess_type_size(a), 5000LL * 2500 * 10000 * 8);
        EQ(tess_type_extent(a), 8000000000000LL);
        CHECK(tess_type_footprint(a) > 0 && tess_type_footprint(a) < 1024);
        tess_type_free(a);
        int cyc[] = {TESS_DISTRIBUTE_CYCLIC, TESS_DISTRIBUTE_CYCLIC, TESS_DISTRIBUTE_BLOCK};
        int darg2[] = {7, 3, TESS_DISTRIBUTE_DFLT_DARG}, ps2[] = {3, 1, 2};
        CHECK_OK(tess_type_darray(6, 1, 3, g, cyc, darg2, ps2, TESS_ORDER_FORTRAN, TESS_DOUBLE,
                                  &a));
        /* rank 1 = grid coordinates (0, 0, 1). dim 0: 1428 blocks of 7 and a last block of 4
         * (block 1428), dealt round-robin to 3: coordinate 0 gets blocks 0, 3, ..., 1428 = 476
         * full blocks and the partial one = 3336 elements; dim 1: psize 1 owns all 10^4;
         * dim 2: the second block of 5000 */
        EQ(tess_type_size(a), 3336LL * 10000 * 5000 * 8);
        EQ(tess_type_extent(a), 8000000000000LL);
        CHECK(tess_type_footprint(a) > 0 && tess_type_footprint(a) < 1024);
        tess_type_free(a);
    }

    /* tess_type_footprint covers the whole tree: a vector over an irregular indexed type costs
     * at least the indexed type, and a struct of two costs at least both */
    {
        enum { NB = 1000 };
        int64_t *bl = malloc(NB * sizeof *bl), *d = malloc(NB * sizeof *d);
        CHECK(bl && d);
        for (int i = 0; i < NB; i++) { /* irregular, never adjacent: nothing merges */
            bl[i] = 1 + i % 2;
            d[i] = 10 * i + (i * i) % 7;
        }
        CHECK_OK(tess_type_indexed(NB, bl, d, TESS_INT32, &a));
        for (int i = 0; i < NB; i++)
            d[i] += 1;
        CHECK_OK(tess_type_indexed(NB, bl, d, TESS_INT16, &b));
        int64_t fa = tess_type_footprint(a), fb = tess_type_footprint(b);
        CHECK(fa >= NB * 2 * (int64_t)sizeof(int64_t)); /* its block arrays are counted */
        CHECK(fb >= NB * 2 * (int64_t)sizeof(int64_t));
        CHECK_OK(tess_type_vector(10, 1, 2, a, &c));
        EQ(tess_type_depth(c), 2);
        CHECK(tess_type_footprint(c) > fa);
        tess_type_free(c);
        int64_t sbl[] = {1, 1}, sd[] = {0, 1 << 20};
        tess_type *ts[] = {a, b};
        CHECK_OK(tess_type_struct(2, sbl, sd, ts, &c));
        CHECK(tess_type_footprint(c) >= fa + fb);
        tess_type_free(c);
        tess_type_free(a);
        tess_type_free(b);
        free(bl);
        free(d);
    }
}

int main(int argc, char **argv)
{
    (void)argc;
    without_tcache(argv);
    test_heap();
    test_memory();
    printf("test_type_memory: %d checks passed\n", checks);
    return 0;
}
