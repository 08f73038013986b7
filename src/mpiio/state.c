/*
 * state.c - the library's global state: lazy initialization, the handle table, teardown at
 * MPI_Finalize, and the MPI library's own functions for calls made while MPI is not running.
 *
 * Nothing runs when the library is loaded (no constructor): LD_PRELOAD puts it into every
 * process, MPI or not. The first MPI_File_* call after MPI_Init initializes it; a call before
 * MPI_Init (or after MPI_Finalize) is forwarded to the MPI library's own function, so the
 * program gets MPI's answer.
 *
 * Handles. An MPI_File the program holds is not a pointer but a tagged integer: tag, the slot's
 * generation and the slot. Lookups go through the table only, so a stale handle (closed file)
 * or a foreign value is recognized as invalid instead of being dereferenced. The slot is the
 * Fortran handle (MPI_File_c2f); slot 0 is MPI_FILE_NULL.
 *
 * Teardown. An attribute on MPI_COMM_SELF, whose delete callback MPI_Finalize calls first
 * (while MPI still works), closes the files left open, oldest first (every rank closes its
 * files in the order it opened them, so collective closes pair up), then empties the caches.
 */
#include "mpiio.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#define HANDLE_TAG UINT64_C(0x7e55000000000000)
#define SLOT_BITS 24
#define SLOT_MAX ((UINT32_C(1) << SLOT_BITS) - 1)
#define GEN_MASK UINT64_C(0xffffff)

enum { STATE_OFF = 0, STATE_LIVE, STATE_DONE };

static atomic_int state;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* the handle table */
static tessi_mio_file **slots;
static uint32_t *gens;
static uint32_t nslots;
static uint64_t next_seq;

void *tessi_mio_next(const char *name) { return dlsym(RTLD_NEXT, name); }

/* MPI_Finalize: close what is left open, oldest first, then drop the caches. */
static int at_finalize(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    tessi_mio_file **open = NULL;
    (void)comm, (void)attr, (void)extra;
    int64_t n = tessi_mio_open_files(&open);
    for (int64_t i = 0; i < n; i++)
        tessi_mio_close(open[i], "MPI_Finalize");
    free(open);
    tessi_mio_types_fini();
    tessi_mio_errors_fini();
    MPI_Comm_free_keyval(&keyval);
    pthread_mutex_lock(&lock);
    free(slots);
    free(gens);
    slots = NULL;
    gens = NULL;
    nslots = 0;
    atomic_store(&state, STATE_DONE);
    pthread_mutex_unlock(&lock);
    return MPI_SUCCESS;
}

bool tessi_mio_live(void)
{
    int s = atomic_load_explicit(&state, memory_order_acquire);
    if (s != STATE_OFF)
        return s == STATE_LIVE;
    int inited = 0, finalized = 0;
    MPI_Initialized(&inited);
    MPI_Finalized(&finalized);
    if (!inited || finalized)
        return false;
    pthread_mutex_lock(&lock);
    if (atomic_load(&state) == STATE_OFF) {
        int key = MPI_KEYVAL_INVALID;
        tessi_mio_errors_init();
        /* without the attribute files left open would not be closed: MPI_Finalize would
           lose their data in caches; a failure here is not reportable and very unlikely */
        if (MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, at_finalize, &key, NULL) ==
            MPI_SUCCESS)
            MPI_Comm_set_attr(MPI_COMM_SELF, key, NULL);
        atomic_store_explicit(&state, STATE_LIVE, memory_order_release);
    }
    s = atomic_load(&state);
    pthread_mutex_unlock(&lock);
    return s == STATE_LIVE;
}

/* ------------------------------------------------------------------ the table */

static MPI_File encode(uint32_t slot, uint32_t gen)
{
    return (MPI_File)(uintptr_t)(HANDLE_TAG | ((uint64_t)gen & GEN_MASK) << SLOT_BITS | slot);
}

/* The slot a handle names, or 0. Caller holds the lock. */
static uint32_t decode(MPI_File fh)
{
    uint64_t v = (uint64_t)(uintptr_t)fh;
    uint32_t slot = (uint32_t)(v & SLOT_MAX);
    if ((v & ~((GEN_MASK << SLOT_BITS) | SLOT_MAX)) != HANDLE_TAG || slot == 0 ||
        slot >= nslots || !slots[slot] || slots[slot]->handle != fh)
        return 0;
    return slot;
}

tessi_mio_file *tessi_mio_lookup(MPI_File fh)
{
    if (fh == MPI_FILE_NULL)
        return NULL;
    pthread_mutex_lock(&lock);
    uint32_t slot = decode(fh);
    tessi_mio_file *mf = slot ? slots[slot] : NULL;
    pthread_mutex_unlock(&lock);
    return mf;
}

int tessi_mio_register(tessi_mio_file *mf)
{
    pthread_mutex_lock(&lock);
    uint32_t slot = 1;
    while (slot < nslots && slots[slot])
        slot++;
    if (slot >= nslots) {
        uint32_t cap = nslots ? 2 * nslots : 16;
        tessi_mio_file **s2 = cap <= SLOT_MAX + 1 ? realloc(slots, sizeof *s2 * cap) : NULL;
        if (s2)
            slots = s2;
        uint32_t *g2 = s2 ? realloc(gens, sizeof *g2 * cap) : NULL;
        if (!g2) {
            pthread_mutex_unlock(&lock);
            return tessi_mio_error(MPI_ERR_NO_MEM, "MPI_File_open", "out of memory (%u "
                                   "file handles)", cap);
        }
        gens = g2;
        for (uint32_t i = nslots; i < cap; i++) {
            slots[i] = NULL;
            gens[i] = 0;
        }
        nslots = cap;
    }
    mf->slot = slot;
    mf->seq = next_seq++;
    mf->handle = encode(slot, gens[slot]);
    slots[slot] = mf;
    pthread_mutex_unlock(&lock);
    return MPI_SUCCESS;
}

void tessi_mio_unregister(tessi_mio_file *mf)
{
    pthread_mutex_lock(&lock);
    if (mf->slot && mf->slot < nslots && slots[mf->slot] == mf) {
        slots[mf->slot] = NULL;
        gens[mf->slot]++;
    }
    pthread_mutex_unlock(&lock);
}

static int by_seq(const void *a, const void *b)
{
    uint64_t x = (*(tessi_mio_file *const *)a)->seq, y = (*(tessi_mio_file *const *)b)->seq;
    return x < y ? -1 : x > y;
}

int64_t tessi_mio_open_files(tessi_mio_file ***out)
{
    int64_t n = 0;
    pthread_mutex_lock(&lock);
    *out = malloc(sizeof **out * (nslots ? nslots : 1));
    for (uint32_t i = 1; *out && i < nslots; i++)
        if (slots[i])
            (*out)[n++] = slots[i];
    pthread_mutex_unlock(&lock);
    if (!*out)
        return -1;
    qsort(*out, (size_t)n, sizeof **out, by_seq);
    return n;
}

/* ------------------------------------------------------------------ Fortran handles */

TESSI_MIO_API MPI_Fint PMPI_File_c2f(MPI_File fh)
{
    pthread_mutex_lock(&lock);
    uint32_t slot = decode(fh);
    pthread_mutex_unlock(&lock);
    return (MPI_Fint)slot;
}
TESSI_MIO_ALIAS(MPI_File_c2f);

TESSI_MIO_API MPI_File PMPI_File_f2c(MPI_Fint f)
{
    MPI_File fh = MPI_FILE_NULL;
    pthread_mutex_lock(&lock);
    if (f > 0 && (uint32_t)f < nslots && slots[f])
        fh = slots[f]->handle;
    pthread_mutex_unlock(&lock);
    return fh;
}
TESSI_MIO_ALIAS(MPI_File_f2c);
