/*
 * test_rados_hostile.c - requests sent straight to the OSDs' datatype program (dtio.lua through
 * cls_lua), bypassing the client library: malformed headers, truncated or nested-too-deep types,
 * counts far beyond the bytes sent, references to nodes not yet decoded, filetypes that are not
 * monotonic, offsets beyond 2^62, too many regions or bytes, bad striping geometry, write data
 * that does not match the access. Each must be refused with its errno (EINVAL, E2BIG, EDOM,
 * ERANGE) quickly, and the OSDs must stay up: a normal datatype access works afterwards.
 *
 * Then the decoder is fuzzed through the class with the corpus of tess_type_decode's fuzzer
 * (test_decode_fuzz --corpus, argument 1) and mutations of it: the OSD must answer every input,
 * refuse exactly what tess_type_decode refuses (it may also refuse, with E2BIG or ERANGE, what
 * exceeds its own work bounds) and decode the rest to the same size, bounds and extent.
 *
 * The program goes as bytecode where the build made it (dtio.c): describe must say it ran from
 * bytecode. An OSD that refuses the bytecode (here: bytecode of another Lua version) must get
 * the program's text instead, for a raw request and in the middle of a datatype write and read,
 * which must still move the right bytes, and the handle keeps sending the text.
 *
 * Usage: test_rados_hostile TEST_DECODE_FUZZ [mutations [seed]]
 */
#include "rados/rados_common.h"

#include "driver/rados/rados.h"
#include "type/type.h"

#include <dirent.h>
#include <time.h>

static tessi_rados *drv_handle(const char *path)
{
    tess_info *info;
    void *h;
    CHECK_OK(tess_info_create(&info));
    CHECK_OK(tess_info_set(info, "tess_rados_conf", rt_conf()));
    CHECK_OK(tess_info_set(info, "striping_unit", "4096"));
    CHECK_OK(tess_info_set(info, "striping_factor", "2"));
    const struct tess_driver *d = tessi_driver_find("rados");
    CHECK(d && d->open(path, TESS_RDWR | TESS_CREATE, info, &h) == 0);
    tess_info_free(info);
    return h;
}

typedef struct {
    unsigned char b[1 << 16];
    size_t n;
} buf;

static void put(buf *b, const void *p, size_t n)
{
    CHECK(b->n + n <= sizeof b->b);
    memcpy(b->b + b->n, p, n);
    b->n += n;
}
static void put_i64(buf *b, int64_t v)
{
    unsigned char x[8];
    for (int i = 0; i < 8; i++)
        x[i] = (unsigned char)((uint64_t)v >> (8 * i));
    put(b, x, 8);
}
static void put_u8(buf *b, unsigned v)
{
    unsigned char x = (unsigned char)v;
    put(b, &x, 1);
}

/* A request: header (op, disp, start, bytes, unit, factor, objsize, objno), then type bytes. */
static void request(buf *b, int op, int64_t disp, int64_t start, int64_t bytes, int64_t unit,
                    int64_t factor, int64_t objsize, const buf *type)
{
    b->n = 0;
    put(b, "TDIO", 4);
    put_u8(b, 1), put_u8(b, (unsigned)op), put_u8(b, 0), put_u8(b, 0);
    int64_t f[8] = {disp, start, bytes, unit, factor, objsize, 0, (int64_t)type->n};
    for (int i = 0; i < 8; i++)
        put_i64(b, f[i]);
    put(b, type->b, type->n);
}

static void type_header(buf *t)
{
    t->n = 0;
    put(t, "TSTY\x02\x00\x00\x00", 8);
}

/* A node header: tag, alignment 1, lb, extent, count, disp0. */
static void node(buf *t, int tag, int64_t lb, int64_t extent, int64_t count, int64_t disp0)
{
    put_u8(t, (unsigned)tag), put_u8(t, 1);
    put_i64(t, lb), put_i64(t, extent), put_i64(t, count), put_i64(t, disp0);
}

static char out[1 << 20];

static int send_req(tessi_rados *r, const buf *req, double *seconds)
{
    size_t outlen;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = tessi_rados_dtio_raw(r, 0, req->b, req->n, out, sizeof out, &outlen);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (seconds)
        *seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    return rc;
}

static void expect(tessi_rados *r, const char *what, const buf *req, int err)
{
    double s;
    int rc = send_req(r, req, &s);
    if (rc != -err) {
        fprintf(stderr, "%s: the OSD answered %d, expected %d\n", what, rc, -err);
        exit(1);
    }
    if (s > 2.0) {
        fprintf(stderr, "%s: refused only after %.2f s\n", what, s);
        exit(1);
    }
}

static void hostile(tessi_rados *r)
{
    buf t, q;
    /* a good type: vector of 100 int32 blocks at stride 8 bytes */
    type_header(&t);
    node(&t, 2, 0, 800, 100, 0);
    put_i64(&t, 1), put_i64(&t, 8);
    put_u8(&t, 0), put_u8(&t, 4);
    request(&q, 1, 0, 0, 400, 4096, 2, 65536, &t);
    CHECK(send_req(r, &q, NULL) == 0);

    buf empty = {.n = 0};
    expect(r, "empty input", &empty, EINVAL);
    q.b[0] = 'X';
    expect(r, "bad magic", &q, EINVAL);
    request(&q, 9, 0, 0, 400, 4096, 2, 65536, &t);
    expect(r, "unknown operation", &q, EINVAL);
    request(&q, 1, 0, 0, 400, 4096, 2, 65536, &t);
    q.n -= 3;
    expect(r, "truncated type", &q, EINVAL);
    /* the type length field says more than was sent */
    request(&q, 1, 0, 0, 400, 4096, 2, 65536, &t);
    q.b[8 + 7 * 8] = 0x7f;
    expect(r, "type length beyond the input", &q, EINVAL);
    /* 65 nested contigs (tess_type_decode allows 64) */
    type_header(&t);
    for (int i = 0; i < 65; i++)
        node(&t, 1, 0, 4, 1, 0);
    put_u8(&t, 0), put_u8(&t, 4);
    request(&q, 1, 0, 0, 4, 4096, 2, 65536, &t);
    expect(r, "65 levels", &q, EINVAL);
    /* an indexed node claiming 2^40 blocks */
    type_header(&t);
    node(&t, 4, 0, 8, INT64_C(1) << 40, 0);
    put_i64(&t, 1), put_i64(&t, 0);
    put_u8(&t, 0), put_u8(&t, 0);
    request(&q, 1, 0, 0, 1, 4096, 2, 65536, &t);
    expect(r, "2^40 blocks in 18 bytes", &q, EINVAL);
    /* an alignment that is not a power of 2 */
    type_header(&t);
    node(&t, 1, 0, 4, 1, 0);
    t.b[9] = 3;
    put_u8(&t, 0), put_u8(&t, 4);
    request(&q, 1, 0, 0, 4, 4096, 2, 65536, &t);
    expect(r, "alignment 3", &q, EINVAL);
    /* a reference to a node not yet decoded */
    type_header(&t);
    put_u8(&t, 6), put_i64(&t, 0);
    request(&q, 1, 0, 0, 1, 4096, 2, 65536, &t);
    expect(r, "forward reference", &q, EINVAL);
    /* a vector going backwards: no legal view */
    type_header(&t);
    node(&t, 2, -800, 800, 100, 0);
    put_i64(&t, 1), put_i64(&t, -8);
    put_u8(&t, 0), put_u8(&t, 4);
    request(&q, 1, 800, 0, 400, 4096, 2, 65536, &t);
    expect(r, "decreasing filetype", &q, EDOM);
    /* 2^60 one-byte blocks every other byte: bytes over the limit, then regions */
    type_header(&t);
    node(&t, 2, 0, INT64_C(1) << 61, INT64_C(1) << 60, 0);
    put_i64(&t, 1), put_i64(&t, 2);
    put_u8(&t, 0), put_u8(&t, 0);
    request(&q, 1, 0, 0, INT64_C(1) << 40, 4096, 2, 65536, &t);
    expect(r, "2^40 bytes", &q, E2BIG);
    request(&q, 1, 0, 0, INT64_C(100) << 20, 1 << 20, 1, INT64_C(1) << 30, &t);
    expect(r, "50 million regions in one object", &q, E2BIG);
    /* an offset beyond 2^62 */
    request(&q, 1, INT64_C(1) << 62, 0, 400, 4096, 2, 65536, &t);
    expect(r, "displacement 2^62", &q, ERANGE);
    type_header(&t);
    node(&t, 2, 0, 800, 100, 0);
    put_i64(&t, 1), put_i64(&t, 8);
    put_u8(&t, 0), put_u8(&t, 4);
    request(&q, 1, 0, INT64_MAX - 10, 400, 4096, 2, 65536, &t);
    expect(r, "stream offset overflow", &q, ERANGE);
    /* bad geometry */
    request(&q, 1, 0, 0, 400, 0, 2, 65536, &t);
    expect(r, "stripe unit 0", &q, EINVAL);
    request(&q, 1, 0, 0, 400, 4096, 2, 4096 + 1, &t);
    expect(r, "object size not a multiple of the unit", &q, EINVAL);
    request(&q, 1, 0, 0, 400, 1, 2, INT64_C(1) << 20, &t);
    expect(r, "a million stripe units per object", &q, E2BIG);
    /* a write whose data does not match the access (400 bytes expected, 3 sent) */
    request(&q, 2, 0, 0, 400, 4096, 2, 65536, &t);
    put(&q, "abc", 3);
    expect(r, "write data of the wrong length", &q, EINVAL);
}

/* ------------------------------------------------------------------ fuzzing */

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return rng;
}

/* One input through both decoders. Returns 1 if the OSD refused it. */
static int fuzz_one(tessi_rados *r, const unsigned char *in, size_t n)
{
    buf t = {.n = 0}, q;
    put(&t, in, n);
    request(&q, 3, 0, 0, 0, 4096, 2, 65536, &t);
    size_t outlen = 0;
    int rc = tessi_rados_dtio_raw(r, 0, q.b, q.n, out, sizeof out - 1, &outlen);
    tess_type *ct = NULL;
    int crc = tess_type_decode(in, n, &ct);
    if (rc == -EIO || (rc < 0 && rc != -EINVAL && rc != -E2BIG && rc != -ERANGE)) {
        fprintf(stderr, "fuzz: the OSD answered %d to a %zu-byte type\n", rc, n);
        exit(1);
    }
    if (rc == 0) {
        long long sz, lb, ext, tlb, tub;
        int mono, depth;
        out[outlen] = 0;
        CHECK(sscanf(out, "%lld %lld %lld %lld %lld %d %d", &sz, &lb, &ext, &tlb, &tub, &mono,
                     &depth) == 7);
        if (crc == 0 && (sz != ct->size || ext != ct->extent || lb != ct->lb ||
                         (sz > 0 && (tlb != ct->true_lb || tub != ct->true_ub)))) {
            fprintf(stderr, "fuzz: OSD size %lld lb %lld extent %lld bounds [%lld, %lld), "
                    "tess_type_decode %lld %lld %lld [%lld, %lld)\n", sz, lb, ext, tlb, tub,
                    (long long)ct->size, (long long)ct->lb, (long long)ct->extent,
                    (long long)ct->true_lb, (long long)ct->true_ub);
            exit(1);
        }
        if (crc != 0) {
            fprintf(stderr, "fuzz: accepted by the OSD, refused by tess_type_decode: %s\n",
                    tess_last_error());
            exit(1);
        }
    } else if (crc == 0 && rc != -E2BIG && rc != -ERANGE) {
        fprintf(stderr, "fuzz: the OSD refused (%d) a type tess_type_decode accepts (saved in "
                "rados_fuzz_failure.bin)\n", rc);
        FILE *f = fopen("rados_fuzz_failure.bin", "wb");
        if (f) {
            fwrite(in, 1, n, f);
            fclose(f);
        }
        exit(1);
    }
    tess_type_free(ct);
    return rc != 0;
}

static void fuzz(tessi_rados *r, const char *fuzzer, int mutations)
{
    char dir[] = "/tmp/tess_rados_corpus_XXXXXX", cmd[2048];
    CHECK(mkdtemp(dir));
    snprintf(cmd, sizeof cmd, "'%s' --corpus %s > /dev/null", fuzzer, dir);
    CHECK(system(cmd) == 0);
    unsigned char *seeds[256];
    size_t lens[256];
    int nseeds = 0, refused = 0, total = 0;
    DIR *d = opendir(dir);
    CHECK(d);
    struct dirent *e;
    while ((e = readdir(d)) && nseeds < 256) {
        if (e->d_name[0] == '.')
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "rb");
        CHECK(f);
        seeds[nseeds] = malloc(65536);
        lens[nseeds] = fread(seeds[nseeds], 1, 60000, f);
        fclose(f);
        remove(path);
        nseeds++;
    }
    closedir(d);
    rmdir(dir);
    CHECK(nseeds > 0);
    for (int i = 0; i < nseeds; i++, total++)
        refused += fuzz_one(r, seeds[i], lens[i]);
    unsigned char m[65536];
    for (int k = 0; k < mutations; k++, total++) {
        int s = (int)(next() % (uint64_t)nseeds);
        size_t n = lens[s];
        memcpy(m, seeds[s], n);
        int edits = 1 + (int)(next() % 4);
        for (int j = 0; j < edits && n > 0; j++) {
            size_t at = (size_t)(next() % n);
            switch (next() % 5) {
            case 0: m[at] ^= (unsigned char)(1u << (next() % 8)); break;
            case 1: m[at] = (unsigned char)next(); break;
            case 2: n = at + 1; break; /* truncate */
            case 3: { /* an interesting 64-bit value */
                static const int64_t v[] = {0, -1, 1, INT64_MAX, INT64_MIN, INT64_C(1) << 40,
                                            INT64_C(1) << 62, 4096, -4096};
                int64_t x = v[next() % 9];
                for (int b = 0; b < 8 && at + (size_t)b < n; b++)
                    m[at + (size_t)b] = (unsigned char)((uint64_t)x >> (8 * b));
                break;
            }
            default: /* splice another seed's tail */ {
                int o = (int)(next() % (uint64_t)nseeds);
                size_t from = lens[o] ? (size_t)(next() % lens[o]) : 0;
                size_t take = lens[o] - from;
                if (at + take > sizeof m)
                    take = sizeof m - at;
                memcpy(m + at, seeds[o] + from, take);
                n = at + take;
            }
            }
        }
        refused += fuzz_one(r, m, n);
    }
    for (int i = 0; i < nseeds; i++)
        free(seeds[i]);
    printf("fuzz: %d inputs (%d seeds of tess_type_decode's corpus, %d mutations): %d refused "
           "by the OSD and by tess_type_decode, the others decoded alike\n", total, nseeds,
           mutations, refused);
}

extern const char tessi_rados_dtio_luac[];
extern const size_t tessi_rados_dtio_luac_len;

/* Whether the program ran from bytecode, by a describe request (the reply's 8th field). */
static int precompiled(tessi_rados *r)
{
    buf t, q;
    type_header(&t);
    put_u8(&t, 0), put_u8(&t, 1); /* a predefined byte */
    request(&q, 3, 0, 0, 0, 4096, 2, 65536, &t);
    size_t outlen = 0;
    CHECK_OK(tessi_rados_dtio_raw(r, 0, q.b, q.n, out, sizeof out - 1, &outlen));
    out[outlen] = 0;
    long long v[7];
    int bc = -1;
    CHECK(sscanf(out, "%lld %lld %lld %lld %lld %lld %lld %d", &v[0], &v[1], &v[2], &v[3],
                 &v[4], &v[5], &v[6], &bc) == 8 && v[0] == 1 && v[2] == 1);
    return bc;
}

/* The handle sends the bytecode the build made; an OSD refusing it gets the text. */
static void program_modes(const char *path)
{
    tessi_rados *r = drv_handle(path);
    bool have = tessi_rados_dtio_luac_len > 0;
    CHECK(precompiled(r) == have);
    printf("program: %s\n", have ? "sent as bytecode, the OSD ran it" : "no bytecode built");
    if (!have) {
        tessi_driver_find("rados")->close(r);
        return;
    }
    /* bytecode of "Lua 5.2": the OSD's Lua 5.3 refuses it, the text goes instead */
    static char other[1 << 16];
    CHECK(tessi_rados_dtio_luac_len <= sizeof other && tessi_rados_dtio_luac[4] == 0x53);
    memcpy(other, tessi_rados_dtio_luac, tessi_rados_dtio_luac_len);
    other[4] = 0x52;
    r->dtio_bc = other;
    CHECK(precompiled(r) == 0 && r->dtio_bc == NULL);
    /* the same in a datatype write and read: many extents per object, so programs run */
    tess_type *ft;
    CHECK_OK(tess_type_vector(4000, 4, 16, TESS_BYTE, &ft));
    static char w[16000], rd[16000];
    for (int i = 0; i < 16000; i++)
        w[i] = (char)(i * 7 + 3);
    for (int op = TESSI_OP_WRITE; op >= TESSI_OP_READ; op--) {
        r->dtio_bc = other; /* (NULL again only where an OSD refused it) */
        CHECK(tessi_rados_dtio(r, op, 0, ft, 0, 16000, op == TESSI_OP_WRITE ? w : rd) == 16000);
        CHECK(r->dtio_bc == NULL);
    }
    CHECK(memcmp(w, rd, 16000) == 0);
    tess_type_free(ft);
    tessi_driver_find("rados")->close(r);
    printf("program: bytecode refused by the OSD: the text went instead, bytes correct\n");
}

int main(int argc, char **argv)
{
    rt_conf();
    CHECK(argc >= 2);
    char path[256];
    rt_name(path, sizeof path, "hostile");
    tessi_rados *r = drv_handle(path);
    hostile(r);
    if (argc > 3)
        rng = strtoull(argv[3], NULL, 10) | 1;
    fuzz(r, argv[1], argc > 2 ? atoi(argv[2]) : 1500);
    program_modes(path);
    /* the OSDs are up: a normal datatype write and read over several objects */
    tess_file *f;
    const char *kv[] = {"tess_method", "datatype", "striping_unit", "4096", NULL};
    CHECK_OK(rt_open(path, TESS_RDWR, &f, kv));
    tess_type *ft;
    CHECK_OK(tess_type_vector(4000, 4, 16, TESS_BYTE, &ft));
    CHECK_OK(tess_file_set_view(f, 0, TESS_BYTE, ft));
    static char w[16000], rd[16000];
    for (int i = 0; i < 16000; i++)
        w[i] = (char)i;
    int64_t moved;
    CHECK_OK(tess_file_write_at(f, 0, w, 16000, TESS_BYTE, &moved));
    CHECK_OK(tess_file_read_at(f, 0, rd, 16000, TESS_BYTE, &moved));
    CHECK(moved == 16000 && memcmp(w, rd, 16000) == 0);
    CHECK_OK(tess_file_close(f));
    tess_type_free(ft);
    const struct tess_driver *d = tessi_driver_find("rados");
    d->close(r);
    CHECK_OK(rt_delete(path));
    printf("test_rados_hostile: passed\n");
    return 0;
}
