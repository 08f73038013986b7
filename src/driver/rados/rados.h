/*
 * rados.h - internals of the Ceph RADOS driver (rados.c: connections, open, close, remove;
 * head.c: layout and size in the head object; io.c: byte I/O, list I/O and read-modify-write as
 * compound operations; dtio.c: datatype I/O). Not installed.
 *
 * Layout of a file `rados:POOL/NAME`: RAID-0 striping as CephFS does it. Stripe unit `unit`,
 * `factor` objects per stripe row, `objsize` bytes per object (a multiple of unit): file byte x
 * is in block b = x / unit, stripe row s = b / factor, object (s / rows) * factor + b % factor
 * where rows = objsize / unit, at object byte (s % rows) * unit + x % unit. Data objects are
 * NAME.<index> (decimal); the head object NAME holds the layout (xattr tessera.layout: "1 unit
 * factor objsize") and the file size (xattr tessera.size: 20 decimal digits, so that the OSD's
 * string comparison is numeric and raising it is one compare-and-set request).
 */
#ifndef TESS_DRIVER_RADOS_H
#define TESS_DRIVER_RADOS_H

#include "driver/driver.h"

#include <pthread.h>
#include <rados/librados.h>

/** Longest NAME (RADOS object names are bounded; the index suffix needs room). */
#define TESSI_RADOS_NAME_MAX 400
/** Requests in flight at once per call. */
#define TESSI_RADOS_INFLIGHT 64

typedef struct tessi_rados_conn tessi_rados_conn;

typedef struct tessi_rados {
    tessi_rados_conn *conn;      /* shared cluster handle (one per conf, user, timeout) */
    rados_ioctx_t io;
    char name[TESSI_RADOS_NAME_MAX + 1];
    int64_t unit, factor, objsize;
    int64_t list_max;            /* tess_list_max_pairs: extents per object per request */
    pthread_mutex_t mu;          /* guards size_known, size_pending, dtio_bc and dtio_bclen */
    int64_t size_known;          /* file size last read from or written to the head object */
    int64_t size_pending;        /* end of this handle's writes not yet published (0: none) */
    const tessi_trace *trace;    /* where the requests sent are reported (NULL: nowhere) */
    bool insecure;               /* the cluster does not authenticate (cephx off) */
    unsigned seed;               /* backoff after read-modify-write conflicts (rand_r) */
    /* the datatype-I/O program as bytecode (dtio.c), NULL once an OSD refused it or where the
     * build made none: the program's text is sent instead */
    const char *dtio_bc;
    size_t dtio_bclen;
} tessi_rados;

/** The object holding file byte x, and the byte of that object. */
static inline void tessi_rados_locate(const tessi_rados *r, int64_t x, int64_t *obj,
                                      int64_t *objoff)
{
    tessi_stripe_locate(r->unit, r->factor, r->objsize, x, obj, objoff);
}

/** Bytes from file byte x to the end of its stripe unit. */
static inline int64_t tessi_rados_unit_left(const tessi_rados *r, int64_t x)
{
    return r->unit - x % r->unit;
}

/** The name of data object idx of the file (buffer of TESSI_RADOS_NAME_MAX + 24 bytes). */
void tessi_rados_oid(const tessi_rados *r, int64_t idx, char *oid);

/** Report n requests sent to the OSDs (TESSI_EV_SERVER). */
void tessi_rados_count(tessi_rados *r, int64_t n);

/** Report n requests sent to the OSDs that each ran a program there (datatype I/O). */
void tessi_rados_count_programs(tessi_rados *r, int64_t n);

/** Note that the file now extends to at least end (published by tessi_rados_publish). */
void tessi_rados_extend(tessi_rados *r, int64_t end);

/** The file size as the head object has it, after publishing this handle's extension. */
int tessi_rados_size(tessi_rados *r, int64_t *size);

/** Wait for the completion c, then release it; returns its result. */
int tessi_rados_wait(rados_completion_t c);

/* ---- head.c: the head object */

/** Create the head object with its layout and size 0; -EEXIST (nothing changed) when it exists. */
int tessi_rados_head_create(tessi_rados *r);
/** Read the layout and the size from the head object (two requests). */
int tessi_rados_head_read(tessi_rados *r);
/** Publish this handle's extension of the file (if any) to the head object. */
int tessi_rados_publish(tessi_rados *r);
/** struct tess_driver.set_size. */
int tessi_rados_set_size(void *h, int64_t size);

/* ---- io.c: object extents and compound requests */

/* One object extent of a call: object obj, bytes [objoff, objoff + len) <-> mem. */
typedef struct ext {
    int64_t obj, objoff, len, seq;
    char *mem;
    size_t got;  /* reads: bytes the OSD returned */
    int prval;   /* reads: the extent's own result */
} ext;

typedef struct extv {
    ext *e;
    int64_t n, cap;
} extv;

/* One request: extents [first, first + n) of one object. */
typedef struct oprec {
    int64_t obj, first, n;
    uint64_t ver;  /* the object's version after the request */
    int rc;
} oprec;

/** Append an extent (object obj, bytes [objoff, objoff + len) <-> mem) to v. */
int tessi_rados_ext_push(extv *v, int64_t obj, int64_t objoff, int64_t len, char *mem);

/** Group the extents by object (stable) into requests of at most maxper extents each (maxper
 * <= 0: one request per object). *ops is malloc'ed. */
int tessi_rados_ext_group(extv *v, int64_t maxper, oprec **ops, int64_t *nops);

/** Run the requests: reads fill the extents' memory (an absent object or a short object reads
 * as zeros); writes store it, each request guarded by guard[k] when given (the object's version
 * from a read: assert_version, or exclusive create when it had none). Every request is sent
 * (TESSI_RADOS_INFLIGHT at a time); ops[k].rc gets each result. Returns the first error other
 * than a guard conflict (-ERANGE, -EOVERFLOW, -EEXIST), else 0. */
int tessi_rados_ext_run(tessi_rados *r, bool write, extv *v, oprec *ops, int64_t nops,
                        const oprec *guard);

/** The struct tess_driver entries of io.c. */
int64_t tessi_rados_pread(void *h, void *buf, int64_t len, int64_t off);
int64_t tessi_rados_pwrite(void *h, const void *buf, int64_t len, int64_t off);
int64_t tessi_rados_preadv(void *h, const struct iovec *iov, int64_t niov, int64_t off);
int64_t tessi_rados_pwritev(void *h, const struct iovec *iov, int64_t niov, int64_t off);
int tessi_rados_submit(void *h, int op, tessi_io_req *reqs, int64_t n);
int tessi_rados_rmw(void *h, char *stage, int64_t off, int64_t len, bool covered,
                    int (*fill)(void *arg, char *stage), void *arg);

/* ---- dtio.c */

/** Set a new handle to send the program as bytecode where the build made it (dtio.c). */
void tessi_rados_dtio_init(tessi_rados *r);

/** Datatype I/O (dtio.c), see struct tess_driver.dtio. */
int64_t tessi_rados_dtio(void *h, int op, int64_t disp, const tess_type *filetype,
                         int64_t start, int64_t bytes, void *packed);

/** Send one raw request to the Lua class on data object objno (tests: hostile requests). */
int tessi_rados_dtio_raw(tessi_rados *r, int64_t objno, const void *req, size_t len,
                         char *out, size_t outcap, size_t *outlen);

#endif
