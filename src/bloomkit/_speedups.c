/* bloomkit._speedups: the optional compiled boundary between Python objects and bloomkit's
 * hashes and bits (issue 14; DESIGN.md "Performance model").
 *
 * Objects in, hashes / bits out, and nothing else:
 *   - XXH64 and the canonical key encoding of bloomkit._engine.hashing (str, bytes, bool, int,
 *     float, tuple; every other type, ints beyond 64 bits and NaN go through the Python
 *     bloomkit._engine.hashing.encode_key, so their payloads and errors are the Python path's
 *     own);
 *   - SplitMix64 probes G_i = splitmix64(h1 + (i + 1) * GOLDEN) reduced exactly mod m;
 *   - FilterCore, the base class of BloomFilter, CountingBloomFilter and SplitBlockBloomFilter:
 *     add / `in` of one key on the storage bound once (a buffer view of the numpy array held
 *     by the object, re-bound when the storage is replaced); every few adds it calls the
 *     class's _design_check() (the overfill warning), and a query of a key type the filter
 *     never held calls its _foreign_key(key, tag) (the key-type warning);
 *   - hash_into: h1 of every key of a list / tuple into a uint64 buffer (no join);
 *   - ItemCore, the base class of ParallelBloomFilter: add / `in` of one item (p values) on
 *     the counters and verification table bound once (pbf_add_item / pbf_contains_item);
 *   - PointTest: the point query of one attribute of a RangeBloomFilter (point_in_words /
 *     key_in_words, with the scaling of a Decimal's float).
 * Single items only: bulk math over arrays stays in the numba kernels. The single-item
 * algorithms here are the numba kernels' second definition (one per language), kept because a
 * numba call with 10 array / scalar arguments costs 1-2 us here, more than the whole item.
 * Every function here holds the GIL (single keys and Python lists touch Python objects
 * throughout), which gives single-key adds the guarantee of the jit_mut kernels: concurrent
 * adds never lose a bit.
 * The algorithms are the numba kernels' (bloomkit._engine.kernels,
 * bloomkit.splitblock._kernels, multiattr._kernels, ranges._kernels), checked equal by
 * tests/test_speedups.py, tests/test_single_items.py, and XXH64 against the reference xxhash
 * package. Each section's header names its numba (or Python) twins ("Twins: module:function")
 * and the tests that keep the two equal ("Tests:"); each twin's docstring names its section
 * here (tests/test_twins.py checks both directions).
 * One file on purpose: C lives in one place only (the project brief), a single translation
 * unit keeps the shared inline helpers (xxh64, splitmix64, fastmod, key_hash) static and
 * inlined across FilterCore / ItemCore / PointTest, and the section headers give every C
 * path the locality a file beside its numba twin would.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <stdint.h>
#include <string.h>
#include <math.h>

#if PY_VERSION_HEX >= 0x030C0000 /* str objects are always "ready" */
#define BK_READY(s) 0
#define BK_IS_READY(s) 1
#else
#define BK_READY(s) PyUnicode_READY(s)
#define BK_IS_READY(s) PyUnicode_IS_READY(s)
#endif

/* ------------------------------------------------------------------------------------------ */
/* XXH64, SplitMix64, exact reduction                                                          */
/*                                                                                            */
/* Twins: bloomkit._engine.kernels:xxh64, :xxh64_u64, :fastmod;                               */
/* bloomkit._engine.jit:splitmix64. Tests:                                                    */
/* tests/test_speedups.py::test_xxh64_matches_the_reference_package,                          */
/* ::test_single_key_hash_and_encoding_match_python;                                          */
/* tests/test_hashing.py::test_fastmod_is_exact.                                              */

#define P1 0x9E3779B185EBCA87ULL
#define P2 0xC2B2AE3D27D4EB4FULL
#define P3 0x165667B19E3779F9ULL
#define P4 0x85EBCA77C2B2AE63ULL
#define P5 0x27D4EB2F165667C5ULL
#define GOLDEN 0x9E3779B97F4A7C15ULL

enum { TAG_STR = 1, TAG_BYTES = 2, TAG_BOOL = 3, TAG_INT = 4, TAG_BIGINT = 5, TAG_FLOAT = 6, TAG_TUPLE = 7 };

static inline uint64_t rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

static inline uint64_t rd64(const uint8_t *p) {
    uint64_t v;
    memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

static inline uint64_t rd32(const uint8_t *p) {
    uint32_t v;
    memcpy(&v, p, 4);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap32(v);
#endif
    return v;
}

static inline uint64_t xx_round(uint64_t acc, uint64_t lane) {
    acc += lane * P2;
    return rotl64(acc, 31) * P1;
}

static inline uint64_t xx_merge(uint64_t h, uint64_t v) {
    h ^= xx_round(0, v);
    return h * P1 + P4;
}

static inline uint64_t xx_avalanche(uint64_t h) {
    h ^= h >> 33;
    h *= P2;
    h ^= h >> 29;
    h *= P3;
    return h ^ (h >> 32);
}

static uint64_t xxh64(const uint8_t *p, size_t len, uint64_t seed) {
    const uint8_t *end = p + len;
    uint64_t h;
    if (len >= 32) {
        uint64_t v1 = seed + P1 + P2, v2 = seed + P2, v3 = seed, v4 = seed - P1;
        const uint8_t *limit = end - 32;
        do {
            v1 = xx_round(v1, rd64(p));
            v2 = xx_round(v2, rd64(p + 8));
            v3 = xx_round(v3, rd64(p + 16));
            v4 = xx_round(v4, rd64(p + 24));
            p += 32;
        } while (p <= limit);
        h = rotl64(v1, 1) + rotl64(v2, 7) + rotl64(v3, 12) + rotl64(v4, 18);
        h = xx_merge(h, v1);
        h = xx_merge(h, v2);
        h = xx_merge(h, v3);
        h = xx_merge(h, v4);
    } else {
        h = seed + P5;
    }
    h += (uint64_t)len;
    while (p + 8 <= end) {
        h ^= xx_round(0, rd64(p));
        h = rotl64(h, 27) * P1 + P4;
        p += 8;
    }
    if (p + 4 <= end) {
        h ^= rd32(p) * P1;
        h = rotl64(h, 23) * P2 + P3;
        p += 4;
    }
    while (p < end) {
        h ^= (uint64_t)(*p) * P5;
        h = rotl64(h, 11) * P1;
        p++;
    }
    return xx_avalanche(h);
}

/* XXH64 of the 8 little-endian bytes of v (the int64 / float fast path). */
static inline uint64_t xxh64_u64(uint64_t v, uint64_t seed) {
    uint64_t h = seed + P5 + 8;
    h ^= xx_round(0, v);
    h = rotl64(h, 27) * P1 + P4;
    return xx_avalanche(h);
}

static inline uint64_t splitmix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* x mod m exactly (bloomkit._engine.kernels.fastmod: Barrett reduction, M = (2^64 - 1) / m). */
static inline uint64_t fastmod(uint64_t x, uint64_t m, uint64_t M) {
#if defined(__SIZEOF_INT128__)
    uint64_t q = (uint64_t)(((unsigned __int128)x * M) >> 64);
    uint64_t r = x - q * m;
    return r >= m ? r - m : r;
#else
    (void)M;
    return x % m;
#endif
}

static inline uint64_t tag_seed(uint64_t seed, int tag) { return seed + (uint64_t)tag * GOLDEN; }

/* ------------------------------------------------------------------------------------------ */
/* canonical encoding                                                                          */
/*                                                                                            */
/* Twins (Python: the encoding has no numba form): bloomkit._engine.hashing:encode_key,       */
/* :hash64_tag (key_hash). Tests: tests/test_speedups.py::                                    */
/* test_single_key_hash_and_encoding_match_python,                                            */
/* ::test_key_errors_are_identical_on_both_paths, ::test_float_payload_reference.             */

static PyObject *py_encode_key = NULL; /* bloomkit._engine.hashing.encode_key (configure()) */

typedef struct {
    uint8_t *p;
    size_t len, cap;
    uint8_t local[256];
} Buf;

static void buf_init(Buf *b) { b->p = b->local; b->len = 0; b->cap = sizeof b->local; }
static void buf_free(Buf *b) { if (b->p != b->local) PyMem_Free(b->p); }

static int buf_reserve(Buf *b, size_t extra) {
    if (b->len + extra <= b->cap) return 0;
    size_t cap = b->cap * 2;
    while (cap < b->len + extra) cap *= 2;
    uint8_t *q = PyMem_Malloc(cap);
    if (q == NULL) { PyErr_NoMemory(); return -1; }
    memcpy(q, b->p, b->len);
    buf_free(b);
    b->p = q;
    b->cap = cap;
    return 0;
}

static int buf_put(Buf *b, const void *src, size_t n) {
    if (buf_reserve(b, n) < 0) return -1;
    memcpy(b->p + b->len, src, n);
    b->len += n;
    return 0;
}

static void put_le64(uint8_t *q, uint64_t v) {
    for (int i = 0; i < 8; i++) q[i] = (uint8_t)(v >> (8 * i));
}

/* UTF-8 of a str, lone surrogates encoded as their 3 bytes ("surrogatepass", as
 * bloomkit._engine.hashing.encode_key does). ASCII strs are read in place: *data points into the
 * str and nothing is written to b. */
static int str_utf8(PyObject *s, Buf *b, const uint8_t **data, size_t *len) {
    if (BK_READY(s) < 0) return -1;
    Py_ssize_t n = PyUnicode_GET_LENGTH(s);
    if (PyUnicode_IS_ASCII(s)) {
        *data = (const uint8_t *)PyUnicode_DATA(s);
        *len = (size_t)n;
        return 0;
    }
    int kind = PyUnicode_KIND(s);
    const void *src = PyUnicode_DATA(s);
    size_t start = b->len;
    if (buf_reserve(b, (size_t)n * 4) < 0) return -1;
    uint8_t *q = b->p + start;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, src, i);
        if (c < 0x80) {
            *q++ = (uint8_t)c;
        } else if (c < 0x800) {
            *q++ = (uint8_t)(0xC0 | (c >> 6));
            *q++ = (uint8_t)(0x80 | (c & 0x3F));
        } else if (c < 0x10000) {
            *q++ = (uint8_t)(0xE0 | (c >> 12));
            *q++ = (uint8_t)(0x80 | ((c >> 6) & 0x3F));
            *q++ = (uint8_t)(0x80 | (c & 0x3F));
        } else {
            *q++ = (uint8_t)(0xF0 | (c >> 18));
            *q++ = (uint8_t)(0x80 | ((c >> 12) & 0x3F));
            *q++ = (uint8_t)(0x80 | ((c >> 6) & 0x3F));
            *q++ = (uint8_t)(0x80 | (c & 0x3F));
        }
    }
    *data = b->p + start;
    *len = (size_t)(q - *data);
    b->len = start + *len;
    return 0;
}

/* (tag, payload) from the Python encode_key: every type, value and error this file does not
 * encode itself. The payload is appended to b. */
static int encode_python(PyObject *key, Buf *b) {
    if (py_encode_key == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "bloomkit._speedups is not configured");
        return -1;
    }
    PyObject *res = PyObject_CallOneArg(py_encode_key, key);
    if (res == NULL) return -1;
    int tag = -1;
    if (PyTuple_Check(res) && PyTuple_GET_SIZE(res) == 2 && PyBytes_Check(PyTuple_GET_ITEM(res, 1))) {
        long t = PyLong_AsLong(PyTuple_GET_ITEM(res, 0));
        PyObject *payload = PyTuple_GET_ITEM(res, 1);
        if (t >= TAG_STR && t <= TAG_TUPLE &&
            buf_put(b, PyBytes_AS_STRING(payload), (size_t)PyBytes_GET_SIZE(payload)) == 0)
            tag = (int)t;
        else if (!PyErr_Occurred())
            PyErr_SetString(PyExc_RuntimeError, "encode_key returned an unknown tag");
    } else {
        PyErr_SetString(PyExc_RuntimeError, "encode_key must return (tag, bytes)");
    }
    Py_DECREF(res);
    return tag;
}

/* Deepest nesting of tuples in a key: bloomkit._engine.hashing.MAX_KEY_DEPTH (its error, raised
 * here). */
#define MAX_KEY_DEPTH 64

static int too_deep(void) {
    PyObject *errors = PyImport_ImportModule("bloomkit.errors");
    if (errors == NULL) return -1;
    PyObject *cls = PyObject_GetAttrString(errors, "InvalidParameterError");
    Py_DECREF(errors);
    if (cls == NULL) return -1;
    PyErr_Format(cls, "The 'key' parameter must not nest tuples more than %d levels deep. Got a deeper tuple "
                 "instead.", MAX_KEY_DEPTH);
    Py_DECREF(cls);
    return -1;
}

static int encode_at(PyObject *key, Buf *b, int depth);

/* Append the canonical payload of key to b; returns its tag, or -1 with an exception set. */
static int encode(PyObject *key, Buf *b) { return encode_at(key, b, 0); }

static int encode_at(PyObject *key, Buf *b, int depth) {
    PyTypeObject *t = Py_TYPE(key);
    if (t == &PyUnicode_Type) {
        const uint8_t *d;
        size_t n;
        size_t before = b->len;
        if (str_utf8(key, b, &d, &n) < 0) return -1;
        if (b->len == before && buf_put(b, d, n) < 0) return -1; /* ASCII: read in place */
        return TAG_STR;
    }
    if (t == &PyBytes_Type) {
        if (buf_put(b, PyBytes_AS_STRING(key), (size_t)PyBytes_GET_SIZE(key)) < 0) return -1;
        return TAG_BYTES;
    }
    if (t == &PyBool_Type) {
        uint8_t v = key == Py_True;
        if (buf_put(b, &v, 1) < 0) return -1;
        return TAG_BOOL;
    }
    if (t == &PyLong_Type) {
        int overflow;
        long long v = PyLong_AsLongLongAndOverflow(key, &overflow);
        if (!overflow) {
            if (v == -1 && PyErr_Occurred()) return -1;
            uint8_t q[8];
            put_le64(q, (uint64_t)v);
            if (buf_put(b, q, 8) < 0) return -1;
            return TAG_INT;
        }
        return encode_python(key, b); /* beyond 64 bits: minimal two's complement in Python */
    }
    if (t == &PyFloat_Type) {
        double d = PyFloat_AS_DOUBLE(key);
        if (d != d) return encode_python(key, b); /* NaN: the Python path's error */
        if (d == 0.0) d = 0.0;                     /* -0.0 is 0.0 */
        uint64_t u;
        memcpy(&u, &d, 8);
        uint8_t q[8];
        put_le64(q, u);
        if (buf_put(b, q, 8) < 0) return -1;
        return TAG_FLOAT;
    }
    if (t == &PyTuple_Type) {
        Py_ssize_t n = PyTuple_GET_SIZE(key);
        if (depth >= MAX_KEY_DEPTH) return too_deep();
        if (Py_EnterRecursiveCall("") != 0) return -1;
        for (Py_ssize_t i = 0; i < n; i++) {
            size_t head = b->len;
            if (buf_reserve(b, 9) < 0) goto fail;
            b->len += 9;
            int tag = encode_at(PyTuple_GET_ITEM(key, i), b, depth + 1);
            if (tag < 0) goto fail;
            b->p[head] = (uint8_t)tag;
            put_le64(b->p + head + 1, (uint64_t)(b->len - head - 9));
        }
        Py_LeaveRecursiveCall();
        return TAG_TUPLE;
    fail:
        Py_LeaveRecursiveCall();
        return -1;
    }
    return encode_python(key, b);
}

/* h1 of one key with the structure's seed; returns the tag, or -1 with an exception set. */
static int key_hash(PyObject *key, uint64_t seed, uint64_t *h) {
    PyTypeObject *t = Py_TYPE(key);
    if (t == &PyUnicode_Type && BK_IS_READY(key) && PyUnicode_IS_ASCII(key)) {
        *h = xxh64((const uint8_t *)PyUnicode_DATA(key), (size_t)PyUnicode_GET_LENGTH(key),
                   tag_seed(seed, TAG_STR));
        return TAG_STR;
    }
    if (t == &PyLong_Type) {
        int overflow;
        long long v = PyLong_AsLongLongAndOverflow(key, &overflow);
        if (!overflow) {
            if (v == -1 && PyErr_Occurred()) return -1;
            *h = xxh64_u64((uint64_t)v, tag_seed(seed, TAG_INT));
            return TAG_INT;
        }
    } else if (t == &PyFloat_Type) {
        double d = PyFloat_AS_DOUBLE(key);
        if (d == d) {
            if (d == 0.0) d = 0.0;
            uint64_t u;
            memcpy(&u, &d, 8);
            *h = xxh64_u64(u, tag_seed(seed, TAG_FLOAT));
            return TAG_FLOAT;
        }
    } else if (t == &PyBytes_Type) {
        *h = xxh64((const uint8_t *)PyBytes_AS_STRING(key), (size_t)PyBytes_GET_SIZE(key),
                   tag_seed(seed, TAG_BYTES));
        return TAG_BYTES;
    }
    Buf b;
    buf_init(&b);
    int tag;
    if (t == &PyUnicode_Type) { /* non-ASCII: UTF-8 written to the scratch buffer */
        const uint8_t *d;
        size_t n;
        tag = str_utf8(key, &b, &d, &n) < 0 ? -1 : TAG_STR;
        if (tag > 0) *h = xxh64(d, n, tag_seed(seed, TAG_STR));
    } else {
        tag = encode(key, &b);
        if (tag > 0) *h = xxh64(b.p, b.len, tag_seed(seed, tag));
    }
    buf_free(&b);
    return tag;
}

/* A seed as the Python path takes it: any integer, reduced mod 2^64 (tag_seed masks it). */
static int parse_seed(PyObject *obj, uint64_t *seed) {
    if (PyLong_CheckExact(obj)) {
        *seed = (uint64_t)PyLong_AsUnsignedLongLongMask(obj);
        return PyErr_Occurred() ? -1 : 0;
    }
    PyObject *v = PyNumber_Index(obj);
    if (v == NULL) return -1;
    *seed = (uint64_t)PyLong_AsUnsignedLongLongMask(v);
    Py_DECREF(v);
    return PyErr_Occurred() ? -1 : 0;
}

/* ------------------------------------------------------------------------------------------ */
/* module functions                                                                            */
/*                                                                                            */
/* Twins: hash_into of bloomkit._engine.hashing:_hash_list (its numba batch kernels),         */
/* hash_each of bloomkit.multiattr.hashing:_hash_item_into (hash64 / hash64_tag / encode: the */
/* sections above). Tests: tests/test_speedups.py::test_list_hashing_matches_python,          */
/* ::test_list_errors_are_the_python_paths, ::test_tuple_and_iterator_batches;                */
/* tests/test_single_items.py::test_single_adds_equal_the_batch_path.                         */

static PyObject *m_configure(PyObject *self, PyObject *encode_key) {
    (void)self;
    if (!PyCallable_Check(encode_key)) {
        PyErr_SetString(PyExc_TypeError, "configure() needs bloomkit._engine.hashing.encode_key");
        return NULL;
    }
    Py_INCREF(encode_key);
    Py_XSETREF(py_encode_key, encode_key);
    Py_RETURN_NONE;
}

/* h1 of args = (key[, seed]) for hash64 / hash64_tag; returns the tag, -1 on error. */
static int hash_args(PyObject *const *args, Py_ssize_t nargs, const char *usage, uint64_t *h) {
    uint64_t seed = 0;
    if (nargs < 1 || nargs > 2) {
        PyErr_SetString(PyExc_TypeError, usage);
        return -1;
    }
    if (nargs == 2 && parse_seed(args[1], &seed) < 0) return -1;
    return key_hash(args[0], seed, h);
}

static PyObject *m_hash64_tag(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    uint64_t h;
    int tag = hash_args(args, nargs, "hash64_tag(key, seed=0)", &h);
    return tag < 0 ? NULL : Py_BuildValue("(Ki)", (unsigned long long)h, tag);
}

static PyObject *m_hash64(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    uint64_t h;
    return hash_args(args, nargs, "hash64(key, seed=0)", &h) < 0 ? NULL : PyLong_FromUnsignedLongLong(h);
}

static PyObject *m_encode(PyObject *self, PyObject *key) {
    (void)self;
    Buf b;
    buf_init(&b);
    int tag = encode(key, &b);
    PyObject *out = tag < 0 ? NULL : Py_BuildValue("(iy#)", tag, (const char *)b.p, (Py_ssize_t)b.len);
    buf_free(&b);
    return out;
}

#define PREFETCH_AHEAD 8

/* hash_into(keys, seed, out): h1 of every key of a list / tuple into the uint64 buffer out
 * (len(keys) items); returns the mask of the key tags (bit t for tag t). */
static PyObject *m_hash_into(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    uint64_t seed;
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "hash_into(keys, seed, out)");
        return NULL;
    }
    if (parse_seed(args[1], &seed) < 0) return NULL;
    PyObject *seq = PySequence_Fast(args[0], "hash_into needs a list or a tuple");
    if (seq == NULL) return NULL;
    Py_buffer view;
    if (PyObject_GetBuffer(args[2], &view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0) {
        Py_DECREF(seq);
        return NULL;
    }
    PyObject *result = NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (view.len != n * 8) {
        PyErr_Format(PyExc_ValueError, "hash_into: out holds %zd bytes, %zd keys need %zd", view.len, n, n * 8);
        goto done;
    }
    uint64_t *out = (uint64_t *)view.buf;
    uint64_t s_str = tag_seed(seed, TAG_STR), s_int = tag_seed(seed, TAG_INT);
    unsigned mask = 0;
    /* the list may change while a Python encode_key runs: index it afresh each time */
    for (Py_ssize_t i = 0; i < n && i < PySequence_Fast_GET_SIZE(seq); i++) {
        PyObject *key = PySequence_Fast_GET_ITEM(seq, i);
#if defined(__GNUC__)
        if (i + PREFETCH_AHEAD < n && i + PREFETCH_AHEAD < PySequence_Fast_GET_SIZE(seq)) {
            /* the keys are objects scattered over the heap: fetch a later key's header and
             * first characters while this one is hashed */
            const char *ahead = (const char *)PySequence_Fast_GET_ITEM(seq, i + PREFETCH_AHEAD);
            __builtin_prefetch(ahead);
            __builtin_prefetch(ahead + 64);
        }
#endif
        PyTypeObject *t = Py_TYPE(key);
        if (t == &PyUnicode_Type && BK_IS_READY(key) && PyUnicode_IS_ASCII(key)) {
            out[i] = xxh64((const uint8_t *)PyUnicode_DATA(key), (size_t)PyUnicode_GET_LENGTH(key), s_str);
            mask |= 1u << TAG_STR;
            continue;
        }
        if (t == &PyLong_Type) {
            int overflow;
            long long v = PyLong_AsLongLongAndOverflow(key, &overflow);
            if (!overflow && !(v == -1 && PyErr_Occurred())) {
                out[i] = xxh64_u64((uint64_t)v, s_int);
                mask |= 1u << TAG_INT;
                continue;
            }
            if (PyErr_Occurred()) goto done;
        }
        Py_INCREF(key);
        uint64_t h;
        int tag = key_hash(key, seed, &h);
        Py_DECREF(key);
        if (tag < 0) goto done;
        out[i] = h;
        mask |= 1u << tag;
    }
    if (PySequence_Fast_GET_SIZE(seq) != n) {
        PyErr_SetString(PyExc_RuntimeError, "the list of keys changed size while it was hashed");
        goto done;
    }
    result = PyLong_FromUnsignedLong(mask);
done:
    PyBuffer_Release(&view);
    Py_DECREF(seq);
    return result;
}

/* hash_each(values, seeds, out): h1 of values[i] with seeds[i] into out[i] (a uint64 buffer of
 * len(values) items); returns the list of the tag masks 1 << tag (the items of
 * ParallelBloomFilter: one seed per attribute). */
static PyObject *m_hash_each(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "hash_each(values, seeds, out)");
        return NULL;
    }
    PyObject *vals = PySequence_Fast(args[0], "hash_each needs a list or a tuple of values");
    if (vals == NULL) return NULL;
    PyObject *seeds = PySequence_Fast(args[1], "hash_each needs a list or a tuple of seeds");
    if (seeds == NULL) {
        Py_DECREF(vals);
        return NULL;
    }
    PyObject *masks = NULL;
    Py_buffer view;
    if (PyObject_GetBuffer(args[2], &view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0) goto out;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(vals);
    if (PySequence_Fast_GET_SIZE(seeds) != n || view.len != n * 8) {
        PyErr_SetString(PyExc_ValueError, "hash_each: values, seeds and out differ in length");
        goto release;
    }
    masks = PyList_New(n);
    if (masks == NULL) goto release;
    for (Py_ssize_t i = 0; i < n; i++) {
        uint64_t seed, h;
        if (parse_seed(PySequence_Fast_GET_ITEM(seeds, i), &seed) < 0) goto fail;
        PyObject *key = PySequence_Fast_GET_ITEM(vals, i);
        Py_INCREF(key);
        int tag = key_hash(key, seed, &h);
        Py_DECREF(key);
        if (tag < 0) goto fail;
        ((uint64_t *)view.buf)[i] = h;
        PyObject *bit = PyLong_FromUnsignedLongLong(1ULL << tag);
        if (bit == NULL) goto fail;
        PyList_SET_ITEM(masks, i, bit);
    }
    goto release;
fail:
    Py_CLEAR(masks);
release:
    PyBuffer_Release(&view);
out:
    Py_DECREF(vals);
    Py_DECREF(seeds);
    return masks;
}

/* ------------------------------------------------------------------------------------------ */
/* FilterCore: single-key add / `in` over storage bound once                                  */
/*                                                                                            */
/* Twins of core_insert / core_test: bloomkit._engine.probes:bits_add_one, :bits_test_one;    */
/* bloomkit._engine.counters:counters_inc_h1, :counters_test_h1;                              */
/* bloomkit.splitblock._kernels:native_add_one,                                               */
/* :native_test_one. Tests: tests/test_speedups.py::                                          */
/* test_single_keys_set_the_bits_of_the_python_path (C add / `in` vs numba vs add_many, every */
/* width), ::test_counters_saturate_alike,                                                    */
/* ::test_environment_switch_forces_numba_and_files_are_identical.                            */

/* KIND_BITS_DH / KIND_COUNTERS_DH: bits / counters probed by enhanced double hashing (hash id 5,
 * bloomkit._engine.probes): G_0 = h, G_{i+1} = G_i + y_i, y_0 = splitmix64(h + GOLDEN),
 * y_{i+1} = y_i + i + 1 (mod 2^64); KIND_ITEMS (5) is ItemCore's */
enum { KIND_UNBOUND = 0, KIND_PYTHON = 1, KIND_BITS = 2, KIND_COUNTERS = 3, KIND_SPLIT = 4, KIND_BITS_DH = 6,
       KIND_COUNTERS_DH = 7 };

typedef struct {
    PyObject_HEAD
    int kind;
    int k;          /* probes (bits, counters) */
    int width;      /* counter bits: 4, 8, 16, 32 */
    uint64_t m, M;  /* bits / counters / blocks, and the Barrett constant of m */
    uint64_t seed;  /* the structure's seed */
    uint64_t seen;  /* self._key_mask without bit 0 ("unknown"): the tags the filter holds */
    int64_t budget; /* adds left before the next self._design_check() (0: at the next add) */
    PyObject *store;          /* BitArray / CounterArray holding the array in a slot, or NULL */
    PyTypeObject *store_type; /* its type when store_off >= 0 */
    Py_ssize_t store_off;     /* offset of the array's slot in store, -1: look it up by name */
    PyObject *slot;           /* the slot's name */
    Py_buffer view;           /* the storage array (view.obj != NULL when bound) */
} Core;

/* the object held by the __slots__ member at offset off of obj */
#define SLOT_AT(obj, off) (*(PyObject **)((char *)(obj) + (off)))

static PyObject *s_key_mask, *s_rebind, *s_note_keys, *s_py_add, *s_py_contains, *s_overflowed;
static PyObject *s_design_check, *s_foreign_key;
static PyObject *storage_names; /* attribute names whose assignment unbinds the storage */

static void core_unbind(Core *c) {
    c->kind = KIND_UNBOUND;
    if (c->view.obj != NULL) PyBuffer_Release(&c->view);
    c->view.obj = NULL;
    Py_CLEAR(c->store);
    Py_CLEAR(c->slot);
    c->store_type = NULL;
    c->store_off = -1;
}

static int core_traverse(Core *c, visitproc visit, void *arg) {
    Py_VISIT(c->store);
    Py_VISIT(c->view.obj);
    return 0;
}

static int core_clear(Core *c) {
    core_unbind(c);
    return 0;
}

static void core_dealloc(Core *c) {
    PyObject_GC_UnTrack(c);
    core_unbind(c);
    Py_TYPE(c)->tp_free((PyObject *)c);
}

static PyObject *core_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    (void)args;
    (void)kwds;
    Core *c = (Core *)type->tp_alloc(type, 0);
    if (c != NULL) c->store_off = -1;
    return (PyObject *)c;
}

/* The storage is still the one bound: the store's slot still holds the bound array. */
static inline int core_ready(Core *c) {
    if (c->kind <= KIND_UNBOUND) return 0;
    if (c->store == NULL) return 1;
    if (c->store_off >= 0 && Py_TYPE(c->store) == c->store_type) return SLOT_AT(c->store, c->store_off) == c->view.obj;
    PyObject *cur = PyObject_GetAttr(c->store, c->slot);
    if (cur == NULL) {
        PyErr_Clear();
        return 0;
    }
    Py_DECREF(cur);
    return cur == c->view.obj;
}

/* Bind (or re-bind) through the class's Python _core_rebind(), which validates the storage
 * and calls _core_bind(); repeated while another thread replaced the storage meanwhile. */
static int core_ensure(Core *c) {
    while (!core_ready(c)) {
        PyObject *r = PyObject_CallMethodNoArgs((PyObject *)c, s_rebind);
        if (r == NULL) return -1;
        Py_DECREF(r);
        if (c->kind == KIND_UNBOUND) {
            PyErr_SetString(PyExc_RuntimeError, "_core_rebind() did not bind the storage");
            return -1;
        }
    }
    return 0;
}

/* The offset of a __slots__ member of type(obj) holding `value`, or -1. */
static Py_ssize_t member_offset(PyObject *obj, PyObject *name, PyObject *value) {
    PyObject *descr = PyObject_GetAttr((PyObject *)Py_TYPE(obj), name);
    if (descr == NULL) {
        PyErr_Clear();
        return -1;
    }
    Py_ssize_t off = -1;
    if (Py_IS_TYPE(descr, &PyMemberDescr_Type)) {
        PyMemberDef *d = ((PyMemberDescrObject *)descr)->d_member;
        if ((d->type == T_OBJECT_EX || d->type == T_OBJECT) && SLOT_AT(obj, d->offset) == value) off = d->offset;
    }
    Py_DECREF(descr);
    return off;
}

/* bytes per storage item of a counter width (4-bit counters: two per byte), 0: no such width */
static size_t counter_item_bytes(int width) {
    switch (width) {
    case 4: case 8: return 1;
    case 16: return 2;
    case 32: return 4;
    default: return 0;
    }
}

/* _core_bind(kind, store, array, m, k, seed, width, slot): kind 1 = the Python methods
 * (_py_add / _py_contains), 2 = bits, 3 = counters, 4 = split-block (native). array must be
 * a writeable C-contiguous buffer large enough for m; store (or None) holds it in the
 * attribute slot, which is checked on every call so a replaced array is re-bound. */
static PyObject *core_bind(Core *c, PyObject *const *args, Py_ssize_t nargs) {
    int kind, k, width;
    unsigned long long m, seed;
    if (nargs != 8) {
        PyErr_SetString(PyExc_TypeError, "_core_bind(kind, store, array, m, k, seed, width, slot)");
        return NULL;
    }
    kind = (int)PyLong_AsLong(args[0]);
    m = PyLong_AsUnsignedLongLong(args[3]);
    k = (int)PyLong_AsLong(args[4]);
    seed = PyLong_AsUnsignedLongLong(args[5]);
    width = (int)PyLong_AsLong(args[6]);
    if (PyErr_Occurred()) return NULL;
    core_unbind(c);
    if (kind == KIND_PYTHON) {
        c->kind = kind;
        Py_RETURN_NONE;
    }
    int counters = kind == KIND_COUNTERS || kind == KIND_COUNTERS_DH;
    if (((kind < KIND_BITS || kind > KIND_SPLIT) && kind != KIND_BITS_DH && kind != KIND_COUNTERS_DH) || m < 1 ||
        k < 1 || k > 1 << 20 || (counters && counter_item_bytes(width) == 0)) {
        PyErr_SetString(PyExc_ValueError, "_core_bind: bad kind, m, k or width");
        return NULL;
    }
    Py_buffer view;
    if (PyObject_GetBuffer(args[2], &view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) return NULL;
    size_t itemsize = counters ? counter_item_bytes(width) : 8;
    unsigned long long need;
    if (kind == KIND_BITS || kind == KIND_BITS_DH) need = ((m + 63) / 64) * 8;
    else if (kind == KIND_SPLIT) need = m * 64;
    else need = width == 4 ? (m + 1) / 2 : m * itemsize;
    if ((size_t)view.itemsize != itemsize || (unsigned long long)view.len < need || (kind == KIND_SPLIT && m > (1ULL << 57))) {
        PyErr_Format(PyExc_ValueError, "_core_bind: the storage holds %zd bytes of %zd-byte items; %llu bytes of %zu-byte items are needed",
                     view.len, view.itemsize, need, itemsize);
        PyBuffer_Release(&view);
        return NULL;
    }
    c->view = view;
    c->m = m;
    c->M = UINT64_MAX / m;
    c->k = k;
    c->seed = seed;
    c->width = width;
    if (args[1] != Py_None) {
        if (!PyUnicode_Check(args[7])) {
            PyErr_SetString(PyExc_TypeError, "_core_bind: slot must be a str");
            core_unbind(c);
            return NULL;
        }
        Py_INCREF(args[1]);
        c->store = args[1];
        Py_INCREF(args[7]);
        c->slot = args[7];
        PyObject *cur = PyObject_GetAttr(args[1], args[7]);
        if (cur == NULL) {
            core_unbind(c);
            return NULL;
        }
        Py_DECREF(cur);
        if (cur != view.obj) { /* else every call would find it replaced */
            PyErr_SetString(PyExc_ValueError, "_core_bind: the array must be the one the store holds in slot");
            core_unbind(c);
            return NULL;
        }
        c->store_off = member_offset(args[1], args[7], view.obj); /* a __slots__ member: read in place */
        if (c->store_off >= 0) c->store_type = Py_TYPE(args[1]);
    }
    c->kind = kind;
    Py_RETURN_NONE;
}

static PyObject *core_unbind_m(Core *c, PyObject *unused) {
    (void)unused;
    core_unbind(c);
    Py_RETURN_NONE;
}

static inline unsigned cget(const uint8_t *d, int width, uint64_t i) {
    switch (width) {
    case 4: return (d[i >> 1] >> (4 * (i & 1))) & 0xF;
    case 8: return d[i];
    case 16: return ((const uint16_t *)d)[i];
    default: return ((const uint32_t *)d)[i];
    }
}

static inline void cset(uint8_t *d, int width, uint64_t i, unsigned v) {
    switch (width) {
    case 4: {
        int sh = 4 * (int)(i & 1);
        d[i >> 1] = (uint8_t)((d[i >> 1] & ~(0xF << sh)) | ((v & 0xF) << sh));
        break;
    }
    case 8: d[i] = (uint8_t)v; break;
    case 16: ((uint16_t *)d)[i] = (uint16_t)v; break;
    default: ((uint32_t *)d)[i] = (uint32_t)v;
    }
}

/* Probe value i of key h (i = 0, 1, ... in order): the independent scheme's splitmix64(h + (i+1)
 * GOLDEN), or, with dh, double hashing's G_i, kept in *x and advanced by *y (which start at h and
 * splitmix64(h + GOLDEN)). */
static inline uint64_t core_probe(int dh, uint64_t h, int i, uint64_t *x, uint64_t *y) {
    if (!dh) return splitmix64(h + (uint64_t)(i + 1) * GOLDEN);
    uint64_t g = *x;
    *x += *y;
    *y += (uint64_t)(i + 1);
    return g;
}

/* Set the key's bits / counters; 1 if a counter saturated. No Python code runs in here. */
static int core_insert(Core *c, uint64_t h) {
    int over = 0, dh = c->kind == KIND_BITS_DH || c->kind == KIND_COUNTERS_DH;
    uint64_t x = h, y = dh ? splitmix64(h + GOLDEN) : 0;
    if (c->kind == KIND_BITS || c->kind == KIND_BITS_DH) {
        uint64_t *w = (uint64_t *)c->view.buf;
        for (int i = 0; i < c->k; i++) {
            uint64_t p = fastmod(core_probe(dh, h, i, &x, &y), c->m, c->M);
            w[p >> 6] |= 1ULL << (p & 63);
        }
    } else if (c->kind == KIND_COUNTERS || c->kind == KIND_COUNTERS_DH) {
        uint8_t *d = (uint8_t *)c->view.buf;
        unsigned maxval = c->width == 32 ? 0xFFFFFFFFu : (1u << c->width) - 1;
        for (int i = 0; i < c->k; i++) {
            uint64_t p = fastmod(core_probe(dh, h, i, &x, &y), c->m, c->M);
            unsigned v = cget(d, c->width, p);
            if (v >= maxval) over = 1;
            else cset(d, c->width, p, v + 1);
        }
    } else {
        uint64_t *w = (uint64_t *)c->view.buf + (fastmod(h, c->m, c->M) << 3);
        uint64_t g = splitmix64(h + GOLDEN);
        for (int i = 0; i < 8; i++) w[i] |= 1ULL << ((g >> (6 * i)) & 63);
    }
    return over;
}

static int core_test(Core *c, uint64_t h) {
    int dh = c->kind == KIND_BITS_DH || c->kind == KIND_COUNTERS_DH;
    uint64_t x = h, y = dh ? splitmix64(h + GOLDEN) : 0;
    if (c->kind == KIND_BITS || c->kind == KIND_BITS_DH) {
        const uint64_t *w = (const uint64_t *)c->view.buf;
        for (int i = 0; i < c->k; i++) {
            uint64_t p = fastmod(core_probe(dh, h, i, &x, &y), c->m, c->M);
            if (!((w[p >> 6] >> (p & 63)) & 1)) return 0;
        }
        return 1;
    }
    if (c->kind == KIND_COUNTERS || c->kind == KIND_COUNTERS_DH) {
        const uint8_t *d = (const uint8_t *)c->view.buf;
        for (int i = 0; i < c->k; i++) {
            uint64_t p = fastmod(core_probe(dh, h, i, &x, &y), c->m, c->M);
            if (cget(d, c->width, p) == 0) return 0;
        }
        return 1;
    }
    const uint64_t *w = (const uint64_t *)c->view.buf + (fastmod(h, c->m, c->M) << 3);
    uint64_t g = splitmix64(h + GOLDEN), acc = 1;
    for (int i = 0; i < 8; i++) acc &= w[i] >> ((g >> (6 * i)) & 63);
    return acc != 0;
}

/* Hash the key with the seed of the bound storage, the storage bound and still bound after
 * the hashing (which runs Python code for key types encoded in Python). Returns the tag, 0
 * when the class's Python methods take the key (KIND_PYTHON), -1 on error. */
static int core_prepare(Core *c, PyObject *key, uint64_t *h) {
    for (;;) {
        if (core_ensure(c) < 0) return -1;
        if (c->kind == KIND_PYTHON) return 0;
        uint64_t seed = c->seed;
        int kind = c->kind;
        int tag = key_hash(key, seed, h);
        if (tag < 0) return -1;
        /* the kind too: a batch writer binds KIND_PYTHON while its kernels run without the GIL */
        if (core_ready(c) && c->seed == seed && c->kind == kind) return tag;
    }
}

static PyObject *core_add(Core *c, PyObject *key) {
    uint64_t h;
    int tag = core_prepare(c, key, &h);
    if (tag < 0) return NULL;
    if (tag == 0) return PyObject_CallMethodOneArg((PyObject *)c, s_py_add, key);
    /* from core_prepare's last check to the end of core_insert no Python code runs: the GIL
     * is held throughout, as in the jit_mut kernels */
    if (core_insert(c, h) && PyObject_SetAttr(c->store, s_overflowed, Py_True) < 0) return NULL;
    if (!((c->seen >> tag) & 1)) {
        PyObject *bit = PyLong_FromUnsignedLongLong(1ULL << tag);
        if (bit == NULL) return NULL;
        PyObject *r = PyObject_CallMethodOneArg((PyObject *)c, s_note_keys, bit);
        Py_DECREF(bit);
        if (r == NULL) return NULL;
        Py_DECREF(r);
        c->seen |= 1ULL << tag;
    }
    /* every `budget` adds, the class's _design_check() looks at the fill (and warns once when
     * it is past the design); it returns the adds until the next look. The key is in. */
    if (--c->budget <= 0) {
        PyObject *r = PyObject_CallMethodNoArgs((PyObject *)c, s_design_check);
        if (r == NULL) {
            c->budget = 0; /* an error (the warning made one): again at the next add */
            return NULL;
        }
        long long next = PyLong_AsLongLong(r);
        Py_DECREF(r);
        if (next == -1 && PyErr_Occurred()) return NULL;
        c->budget = next < 1 ? 1 : next;
    }
    Py_RETURN_NONE;
}

static int core_contains(Core *c, PyObject *key) {
    uint64_t h;
    int tag = core_prepare(c, key, &h);
    if (tag < 0) return -1;
    if (tag > 0) {
        if (c->seen != 0 && !((c->seen >> tag) & 1)) { /* a key type the filter never held */
            PyObject *t = PyLong_FromLong(tag);
            if (t == NULL) return -1;
            PyObject *r = PyObject_CallMethodObjArgs((PyObject *)c, s_foreign_key, key, t, NULL);
            Py_DECREF(t);
            if (r == NULL) return -1;
            Py_DECREF(r);
        }
        return core_test(c, h);
    }
    PyObject *r = PyObject_CallMethodOneArg((PyObject *)c, s_py_contains, key);
    if (r == NULL) return -1;
    int v = PyObject_IsTrue(r);
    Py_DECREF(r);
    return v;
}

/* Assignments to _key_mask keep `seen` a subset of it; assignments to the storage
 * attributes (and the seed, k) unbind the storage, re-bound on the next call. */
static int core_setattro(PyObject *self, PyObject *name, PyObject *value) {
    if (PyObject_GenericSetAttr(self, name, value) < 0) return -1;
    Core *c = (Core *)self;
    if (name == s_key_mask || (PyUnicode_Check(name) && PyUnicode_Compare(name, s_key_mask) == 0)) {
        c->seen = (value != NULL && PyLong_Check(value)) ? PyLong_AsUnsignedLongLongMask(value) : 0;
        if (PyErr_Occurred()) PyErr_Clear();
        c->seen &= ~1ULL; /* bit 0 ("unknown") is not a tag */
        return 0;
    }
    int hit = PySet_Contains(storage_names, name);
    if (hit < 0) return -1;
    if (hit) core_unbind(c);
    return 0;
}

static PyObject *core_bound_kind(Core *c, void *closure) {
    (void)closure;
    return PyLong_FromLong(core_ready(c) ? c->kind : KIND_UNBOUND);
}

static PyMethodDef core_methods[] = {
    {"add", (PyCFunction)core_add, METH_O, "Insert one key. Complexity: O(k)."},
    {"_core_bind", (PyCFunction)(void (*)(void))core_bind, METH_FASTCALL,
     "_core_bind(kind, store, array, m, k, seed, width, slot): bind the storage (kept alive by the object)."},
    {"_core_unbind", (PyCFunction)core_unbind_m, METH_NOARGS, "Forget the bound storage."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef core_getset[] = {
    {"_core_kind", (getter)core_bound_kind, NULL, "The kind of storage bound now (0: none).", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PySequenceMethods core_as_sequence = {
    .sq_contains = (objobjproc)core_contains,
};

static PyTypeObject CoreType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "bloomkit._speedups.FilterCore",
    .tp_basicsize = sizeof(Core),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "Compiled single-key add / `in` of bloomkit's filters (a base class).",
    .tp_new = core_new,
    .tp_dealloc = (destructor)core_dealloc,
    .tp_traverse = (traverseproc)core_traverse,
    .tp_clear = (inquiry)core_clear,
    .tp_setattro = core_setattro,
    .tp_methods = core_methods,
    .tp_getset = core_getset,
    .tp_as_sequence = &core_as_sequence,
};

/* ------------------------------------------------------------------------------------------ */
/* ItemCore: ParallelBloomFilter's single-item add / `in` (document 004, Figs. 2 and 3)       */
/*                                                                                            */
/* The algorithm of bloomkit.multiattr._kernels.pbf_add_item / pbf_contains_item: the p values */
/* of an item hashed with their attribute seeds (h1_i), positions H_ij = G_j(h1_i) mod m,      */
/* counter (i, j, H_ij) at flat index (i q + j) m + H_ij, V_a = sum_i sum_j w_j H_ij, and the  */
/* verification table (open addressing, linear probing, slot splitmix64(V + GOLDEN) & mask,   */
/* a free slot holds all ones). An add runs under the filter's lock (its multi-step mutations */
/* hold it too); `in` reads without it, as the read-only kernel does.                         */
/* Twins: bloomkit.multiattr._kernels:pbf_add_item, :pbf_contains_item. Tests:                */
/* tests/test_single_items.py::test_single_adds_equal_the_batch_path,                         */
/* ::test_a_full_table_refuses_a_single_add_and_changes_nothing.                              */

#define ITEM_MAX_P 64
#define ITEM_MAX_Q 64

typedef struct {
    PyObject_HEAD
    int kind;                     /* KIND_UNBOUND, KIND_PYTHON or KIND_ITEMS */
    int p, q, width, key_bytes;
    unsigned maxval;
    uint64_t m, M;
    uint64_t generation;          /* incremented by every bind: hashes taken before are stale */
    int64_t max_items;            /* the table's limits (bloomkit.multiattr._kernels) */
    double max_load;
    uint64_t seeds[ITEM_MAX_P];
    int64_t weights[ITEM_MAX_Q];
    uint64_t seen[ITEM_MAX_P];    /* per attribute: key-type bits noted already */
    PyObject *counters, *table, *slots, *acquire, *release;
    Py_ssize_t data_off, slots_off, stats_off;
    PyTypeObject *counters_type, *table_type;
    Py_buffer data, keys, counts, stats;
} ItemCore;

enum { KIND_ITEMS = 5 };

static PyObject *s_py_add_item, *s_item_rebind, *s_acquire, *s_release, *s_data, *s_slots, *s_stats;
static PyObject *item_names; /* attribute names whose assignment unbinds an ItemCore */

static void release_view(Py_buffer *v) {
    if (v->obj != NULL) PyBuffer_Release(v);
    v->obj = NULL;
}

static void item_unbind(ItemCore *c) {
    c->kind = KIND_UNBOUND;
    release_view(&c->data);
    release_view(&c->keys);
    release_view(&c->counts);
    release_view(&c->stats);
    Py_CLEAR(c->counters);
    Py_CLEAR(c->table);
    Py_CLEAR(c->slots);
    Py_CLEAR(c->acquire);
    Py_CLEAR(c->release);
    memset(c->seen, 0, sizeof c->seen);
}

static int item_traverse(ItemCore *c, visitproc visit, void *arg) {
    Py_VISIT(c->counters);
    Py_VISIT(c->table);
    Py_VISIT(c->slots);
    Py_VISIT(c->acquire);
    Py_VISIT(c->release);
    Py_VISIT(c->data.obj);
    Py_VISIT(c->keys.obj);
    Py_VISIT(c->counts.obj);
    Py_VISIT(c->stats.obj);
    return 0;
}

static int item_clear(ItemCore *c) {
    item_unbind(c);
    return 0;
}

static void item_dealloc(ItemCore *c) {
    PyObject_GC_UnTrack(c);
    item_unbind(c);
    Py_TYPE(c)->tp_free((PyObject *)c);
}

/* Still the storage bound: the counter array's data, the table's slot pair and stats. */
static inline int item_ready(ItemCore *c) {
    if (c->kind != KIND_ITEMS) return c->kind == KIND_PYTHON;
    return Py_TYPE(c->counters) == c->counters_type && SLOT_AT(c->counters, c->data_off) == c->data.obj &&
           Py_TYPE(c->table) == c->table_type && SLOT_AT(c->table, c->slots_off) == c->slots &&
           SLOT_AT(c->table, c->stats_off) == c->stats.obj;
}

static int item_ensure(ItemCore *c) {
    while (!item_ready(c)) {
        PyObject *r = PyObject_CallMethodNoArgs((PyObject *)c, s_item_rebind);
        if (r == NULL) return -1;
        Py_DECREF(r);
        if (c->kind == KIND_UNBOUND) {
            PyErr_SetString(PyExc_RuntimeError, "_core_rebind() did not bind the storage");
            return -1;
        }
    }
    return 0;
}

static int get_view(PyObject *obj, Py_buffer *v, Py_ssize_t itemsize, Py_ssize_t min_len, const char *what) {
    if (PyObject_GetBuffer(obj, v, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) return -1;
    if (v->itemsize != itemsize || v->len < min_len * itemsize) {
        PyErr_Format(PyExc_ValueError, "_item_bind: %s holds %zd bytes of %zd-byte items; %zd items of %zd bytes are needed",
                     what, v->len, v->itemsize, min_len, itemsize);
        release_view(v);
        return -1;
    }
    return 0;
}

/* _item_bind(kind, counters, table, p, q, m, width, seeds, weights, lock, max_items, max_load):
 * kind 1 = the Python methods (_py_add / _py_contains), 5 = items. counters is the
 * CounterArray (its `data` member is bound), table the VerificationTable (its `_slots` pair
 * and `_stats` members); both are re-checked on every call, so replaced storage is re-bound. */
static PyObject *item_bind(ItemCore *c, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 12) {
        PyErr_SetString(PyExc_TypeError, "_item_bind(kind, counters, table, p, q, m, width, seeds, weights, lock, max_items, max_load)");
        return NULL;
    }
    int kind = (int)PyLong_AsLong(args[0]);
    if (kind == -1 && PyErr_Occurred()) return NULL;
    item_unbind(c);
    c->generation++;
    if (kind == KIND_PYTHON) {
        c->kind = kind;
        Py_RETURN_NONE;
    }
    int p = (int)PyLong_AsLong(args[3]), q = (int)PyLong_AsLong(args[4]), width = (int)PyLong_AsLong(args[6]);
    unsigned long long m = PyLong_AsUnsignedLongLong(args[5]);
    long long max_items = PyLong_AsLongLong(args[10]);
    double max_load = PyFloat_AsDouble(args[11]);
    if (PyErr_Occurred()) return NULL;
    if (kind != KIND_ITEMS || p < 1 || p > ITEM_MAX_P || q < 1 || q > ITEM_MAX_Q || m < 1 || m > (1ULL << 40) ||
        counter_item_bytes(width) == 0 || max_items < 1 || !(max_load > 0.0 && max_load < 1.0)) {
        PyErr_SetString(PyExc_ValueError, "_item_bind: bad kind, p, q, m, width or table limits");
        return NULL;
    }
    PyObject *seeds = PySequence_Fast(args[7], "_item_bind: seeds must be a sequence");
    if (seeds == NULL) return NULL;
    int ok = PySequence_Fast_GET_SIZE(seeds) == p;
    for (int i = 0; ok && i < p; i++) ok = parse_seed(PySequence_Fast_GET_ITEM(seeds, i), &c->seeds[i]) == 0;
    Py_DECREF(seeds);
    if (!ok) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "_item_bind: p seeds are needed");
        return NULL;
    }
    Py_buffer w;
    if (PyObject_GetBuffer(args[8], &w, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) return NULL;
    ok = w.itemsize == 8 && w.len == (Py_ssize_t)q * 8;
    if (ok) memcpy(c->weights, w.buf, (size_t)q * 8);
    PyBuffer_Release(&w);
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "_item_bind: q int64 weights are needed");
        return NULL;
    }
    PyObject *counters = args[1], *table = args[2];
    PyObject *data = PyObject_GetAttr(counters, s_data);
    PyObject *slots = PyObject_GetAttr(table, s_slots);
    PyObject *stats = PyObject_GetAttr(table, s_stats);
    unsigned long long total = (unsigned long long)p * (unsigned long long)q * m;
    Py_ssize_t itemsize = (Py_ssize_t)counter_item_bytes(width);
    Py_ssize_t need = (Py_ssize_t)(width == 4 ? (total + 1) / 2 : total);
    if (data == NULL || slots == NULL || stats == NULL) goto fail;
    if (!PyTuple_CheckExact(slots) || PyTuple_GET_SIZE(slots) != 2) {
        PyErr_SetString(PyExc_ValueError, "_item_bind: the table's slots must be a (keys, counts) pair");
        goto fail;
    }
    c->data_off = member_offset(counters, s_data, data);
    c->slots_off = member_offset(table, s_slots, slots);
    c->stats_off = member_offset(table, s_stats, stats);
    if (c->data_off < 0 || c->slots_off < 0 || c->stats_off < 0) {
        PyErr_SetString(PyExc_ValueError, "_item_bind: the storage must hold its arrays in __slots__ members");
        goto fail;
    }
    if (get_view(data, &c->data, itemsize, need, "the counters") < 0 ||
        PyObject_GetBuffer(PyTuple_GET_ITEM(slots, 0), &c->keys, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
        goto fail;
    Py_ssize_t cap = c->keys.len / (c->keys.itemsize > 0 ? c->keys.itemsize : 1);
    if ((c->keys.itemsize != 4 && c->keys.itemsize != 8) || cap < 1 || (cap & (cap - 1)) != 0) {
        PyErr_SetString(PyExc_ValueError, "_item_bind: the table's keys must be a power-of-two array of 4- or 8-byte items");
        goto fail;
    }
    if (get_view(PyTuple_GET_ITEM(slots, 1), &c->counts, 4, cap, "the table's counts") < 0 ||
        get_view(stats, &c->stats, 8, 3, "the table's stats") < 0)
        goto fail;
    c->acquire = PyObject_GetAttr(args[9], s_acquire);
    c->release = PyObject_GetAttr(args[9], s_release);
    if (c->acquire == NULL || c->release == NULL) goto fail;
    Py_DECREF(data);
    Py_DECREF(stats);
    c->slots = slots; /* the reference taken above */
    Py_INCREF(counters);
    c->counters = counters;
    Py_INCREF(table);
    c->table = table;
    c->counters_type = Py_TYPE(counters);
    c->table_type = Py_TYPE(table);
    c->p = p;
    c->q = q;
    c->m = m;
    c->M = UINT64_MAX / m;
    c->width = width;
    c->maxval = width == 32 ? 0xFFFFFFFFu : (1u << width) - 1;
    c->key_bytes = (int)c->keys.itemsize;
    c->max_items = max_items;
    c->max_load = max_load;
    c->kind = KIND_ITEMS;
    Py_RETURN_NONE;
fail:
    Py_XDECREF(data);
    Py_XDECREF(slots);
    Py_XDECREF(stats);
    item_unbind(c);
    return NULL;
}

static PyObject *item_unbind_m(ItemCore *c, PyObject *unused) {
    (void)unused;
    item_unbind(c);
    Py_RETURN_NONE;
}

static inline uint64_t table_key(const ItemCore *c, uint64_t s) {
    return c->key_bytes == 4 ? ((const uint32_t *)c->keys.buf)[s] : ((const uint64_t *)c->keys.buf)[s];
}

/* The slot holding v, or the free slot where v would go; -1 if neither exists. */
static int64_t table_find(const ItemCore *c, uint64_t v) {
    uint64_t cap = (uint64_t)(c->keys.len / c->key_bytes), mask = cap - 1;
    uint64_t empty = c->key_bytes == 4 ? 0xFFFFFFFFULL : UINT64_MAX;
    uint64_t s = splitmix64(v + GOLDEN) & mask;
    for (uint64_t n = 0; n < cap; n++) {
        uint64_t k = table_key(c, s);
        if (k == v || k == empty) return (int64_t)s;
        s = (s + 1) & mask;
    }
    return -1;
}

/* Fig. 2 for one item of p h1 values: -1 with nothing changed when the table is full or must
 * grow first, else 1 if a counter saturated, else 0. No Python code runs in here. */
static int item_insert(ItemCore *c, const uint64_t *h) {
    int64_t *stats = (int64_t *)c->stats.buf;
    uint64_t cap = (uint64_t)(c->keys.len / c->key_bytes);
    if (stats[2] >= c->max_items || (double)(stats[0] + 1) > c->max_load * (double)cap) return -1;
    uint8_t *d = (uint8_t *)c->data.buf;
    uint64_t v = 0;
    for (int i = 0; i < c->p; i++)
        for (int j = 0; j < c->q; j++) v += (uint64_t)c->weights[j] * fastmod(splitmix64(h[i] + (uint64_t)(j + 1) * GOLDEN), c->m, c->M);
    int64_t s = table_find(c, v);
    if (s < 0) return -1;
    int over = 0;
    for (int i = 0; i < c->p; i++) {
        for (int j = 0; j < c->q; j++) {
            uint64_t x = (uint64_t)(i * c->q + j) * c->m + fastmod(splitmix64(h[i] + (uint64_t)(j + 1) * GOLDEN), c->m, c->M);
            unsigned cv = cget(d, c->width, x);
            if (cv >= c->maxval) over = 1;
            else cset(d, c->width, x, cv + 1);
        }
    }
    int32_t *counts = (int32_t *)c->counts.buf;
    if (table_key(c, (uint64_t)s) != v) { /* a free slot */
        if (c->key_bytes == 4) ((uint32_t *)c->keys.buf)[s] = (uint32_t)v;
        else ((uint64_t *)c->keys.buf)[s] = v;
        stats[0] += 1;
    }
    if (counts[s] == 0) stats[1] += 1;
    counts[s] += 1;
    stats[2] += 1;
    return over;
}

/* Fig. 3: all p q counters non-zero, then V_a with a positive count in the table. */
static int item_test(const ItemCore *c, const uint64_t *h) {
    const uint8_t *d = (const uint8_t *)c->data.buf;
    uint64_t v = 0;
    for (int i = 0; i < c->p; i++) {
        for (int j = 0; j < c->q; j++) {
            uint64_t x = fastmod(splitmix64(h[i] + (uint64_t)(j + 1) * GOLDEN), c->m, c->M);
            if (cget(d, c->width, (uint64_t)(i * c->q + j) * c->m + x) == 0) return 0;
            v += (uint64_t)c->weights[j] * x;
        }
    }
    int64_t s = table_find(c, v);
    return s >= 0 && table_key(c, (uint64_t)s) == v && ((const int32_t *)c->counts.buf)[s] > 0;
}

/* The item's p h1 values with the storage bound (and still bound after the hashing, which runs
 * Python code for key types encoded in Python). Returns 1 when hashed, 0 when the Python
 * method takes the item (not a tuple of p values, or a KIND_PYTHON filter), -1 on error. */
static int item_prepare(ItemCore *c, PyObject *item, uint64_t *h, uint64_t *masks, uint64_t *gen_out) {
    for (;;) {
        if (item_ensure(c) < 0) return -1;
        if (c->kind == KIND_PYTHON || !PyTuple_CheckExact(item) || PyTuple_GET_SIZE(item) != c->p) return 0;
        uint64_t gen = c->generation;
        *gen_out = gen;
        for (int i = 0; i < c->p; i++) {
            int tag = key_hash(PyTuple_GET_ITEM(item, i), c->seeds[i], &h[i]);
            if (tag < 0) return -1;
            masks[i] = 1ULL << tag;
        }
        if (item_ready(c) && c->generation == gen) return 1;
    }
}

static int call_noargs(PyObject *fn) {
    PyObject *r = PyObject_CallNoArgs(fn);
    if (r == NULL) return -1;
    Py_DECREF(r);
    return 0;
}

/* Under the lock: the saturation flag and the key types of a new kind of value. */
static int item_note(ItemCore *c, int over, const uint64_t *masks) {
    if (over && PyObject_SetAttr(c->counters, s_overflowed, Py_True) < 0) return -1;
    int fresh = 0;
    for (int i = 0; i < c->p; i++) fresh |= (masks[i] & ~c->seen[i]) != 0;
    if (!fresh) return 0;
    PyObject *list = PyList_New(c->p);
    if (list == NULL) return -1;
    for (int i = 0; i < c->p; i++) {
        PyObject *b = PyLong_FromUnsignedLongLong(masks[i]);
        if (b == NULL) {
            Py_DECREF(list);
            return -1;
        }
        PyList_SET_ITEM(list, i, b);
    }
    PyObject *r = PyObject_CallMethodOneArg((PyObject *)c, s_note_keys, list);
    Py_DECREF(list);
    if (r == NULL) return -1;
    Py_DECREF(r);
    for (int i = 0; i < c->p; i++) c->seen[i] |= masks[i];
    return 0;
}

/* The exception raised under the lock, kept while the lock is released. */
typedef struct { PyObject *type, *value, *tb; } SavedError;

static void error_save(SavedError *e) {
#if PY_VERSION_HEX >= 0x030C0000
    e->type = e->tb = NULL;
    e->value = PyErr_GetRaisedException();
#else
    PyErr_Fetch(&e->type, &e->value, &e->tb);
#endif
}

static void error_restore(SavedError *e) {
#if PY_VERSION_HEX >= 0x030C0000
    PyErr_SetRaisedException(e->value);
#else
    PyErr_Restore(e->type, e->value, e->tb);
#endif
}

/* add: hash (no lock: the hashing may run Python code), then under the filter's lock check
 * that the storage hashed for is still bound and insert; the general Python path when the
 * item is not a plain tuple, or the table must grow first. */
static PyObject *item_add(ItemCore *c, PyObject *item) {
    uint64_t h[ITEM_MAX_P], masks[ITEM_MAX_P], gen;
    for (;;) {
        int hashed = item_prepare(c, item, h, masks, &gen);
        if (hashed < 0) return NULL;
        if (hashed == 0) return PyObject_CallMethodOneArg((PyObject *)c, s_py_add_item, item);
        /* owned references: a rebind while this thread waits for the lock replaces them */
        PyObject *acquire = c->acquire, *release = c->release;
        Py_INCREF(acquire);
        Py_INCREF(release);
        int state = call_noargs(acquire); /* 0: inserted, 1: hash again, 2: general path, -1: error */
        Py_DECREF(acquire);
        if (state < 0) {
            Py_DECREF(release);
            return NULL;
        }
        if (!item_ready(c) || c->generation != gen) {
            state = 1;
        } else {
            int over = item_insert(c, h);
            state = over < 0 ? 2 : item_note(c, over, masks);
        }
        SavedError err = {NULL, NULL, NULL};
        if (state < 0) error_save(&err);
        int rel = call_noargs(release);
        Py_DECREF(release);
        if (state < 0) {
            if (rel < 0) PyErr_Clear();
            error_restore(&err);
            return NULL;
        }
        if (rel < 0) return NULL;
        if (state == 0) Py_RETURN_NONE;
        if (state == 2) return PyObject_CallMethodOneArg((PyObject *)c, s_py_add_item, item);
    }
}

static int item_contains(ItemCore *c, PyObject *item) {
    uint64_t h[ITEM_MAX_P], masks[ITEM_MAX_P], gen;
    int hashed = item_prepare(c, item, h, masks, &gen);
    if (hashed < 0) return -1;
    if (hashed > 0) return item_test(c, h);
    PyObject *r = PyObject_CallMethodOneArg((PyObject *)c, s_py_contains, item);
    if (r == NULL) return -1;
    int v = PyObject_IsTrue(r);
    Py_DECREF(r);
    return v;
}

static int item_setattro(PyObject *self, PyObject *name, PyObject *value) {
    if (PyObject_GenericSetAttr(self, name, value) < 0) return -1;
    int hit = PySet_Contains(item_names, name);
    if (hit < 0) return -1;
    if (hit) item_unbind((ItemCore *)self);
    return 0;
}

static PyObject *item_bound_kind(ItemCore *c, void *closure) {
    (void)closure;
    return PyLong_FromLong(item_ready(c) ? c->kind : KIND_UNBOUND);
}

static PyMethodDef item_methods[] = {
    {"add", (PyCFunction)item_add, METH_O, "Add one item (Fig. 2). Complexity: O(p q)."},
    {"_item_bind", (PyCFunction)(void (*)(void))item_bind, METH_FASTCALL,
     "_item_bind(kind, counters, table, p, q, m, width, seeds, weights, lock, max_items, max_load): bind the storage."},
    {"_core_unbind", (PyCFunction)item_unbind_m, METH_NOARGS, "Forget the bound storage."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef item_getset[] = {
    {"_core_kind", (getter)item_bound_kind, NULL, "The kind of storage bound now (0: none).", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PySequenceMethods item_as_sequence = {
    .sq_contains = (objobjproc)item_contains,
};

static PyTypeObject ItemCoreType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "bloomkit._speedups.ItemCore",
    .tp_basicsize = sizeof(ItemCore),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "Compiled single-item add / `in` of ParallelBloomFilter (a base class).",
    .tp_new = PyType_GenericNew,
    .tp_dealloc = (destructor)item_dealloc,
    .tp_traverse = (traverseproc)item_traverse,
    .tp_clear = (inquiry)item_clear,
    .tp_setattro = item_setattro,
    .tp_methods = item_methods,
    .tp_getset = item_getset,
    .tp_as_sequence = &item_as_sequence,
};

/* ------------------------------------------------------------------------------------------ */
/* PointTest: RangeBloomFilter's point query of one attribute (document 000)                  */
/*                                                                                            */
/* The algorithm of bloomkit.ranges.points.PointProbe.test (and the kernels key_in_words /    */
/* point_in_words): a text's key "name:value" needs its first k probe bits; a number scaled   */
/* to a (scaled first value of its group g), the keys "name:" + decimal(first + t d) of groups */
/* g .. g + r need their first s probe bits (the last one its first k - r s). The plain cases */
/* only: anything else returns None, and the record path answers or refuses it.             */
/* Twins: bloomkit.ranges._kernels:key_in_words, :point_in_words; bloomkit.ranges.points:     */
/* PointProbe.test. Tests:                                                                    */
/* tests/test_single_items.py::test_point_query_equals_the_record_path,                       */
/* ::test_range_queries_equal_the_vectorised_paths,                                           */
/* ::test_range_queries_of_every_window_equal_the_vectorised_paths.                           */

#define POINT_MAX_SCALED (1LL << 52) /* bloomkit.ranges.schema.MAX_SCALED */
#define POINT_MAX_GROUPS (1LL << 20) /* wider ranges: the record path (bloomkit.ranges.points.MAX_GROUPS) */

typedef struct {
    PyObject_HEAD
    int text, decimal, k, s, last, nkeys;
    uint64_t m, M, seed;          /* seed: the str tag seed of the layout's seed */
    int64_t lo, hi, base, d, unit;
    double factor;                /* float(10 ** places) of a Decimal */
    Py_ssize_t plen;
    uint8_t prefix[1040];         /* "name:" in UTF-8 (names have at most 256 characters) */
    PyObject *int_types, *float_types; /* tuples of the other types taken as int / float (numpy scalars) */
} PointTest;

static PyObject *point_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    static char *kw[] = {"text", "decimal", "prefix", "seed", "m", "k", "d", "s", "last", "nkeys", "base", "lo",
                         "hi", "unit", "factor", "int_types", "float_types", NULL};
    PyObject *int_types = NULL, *float_types = NULL;
    int text, decimal, k, s, last, nkeys;
    const char *prefix;
    Py_ssize_t plen;
    unsigned long long seed, m;
    long long d, base, lo, hi, unit;
    double factor;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "ppy#KKiLiiiLLLLd|O!O!", kw, &text, &decimal, &prefix, &plen, &seed, &m,
                                     &k, &d, &s, &last, &nkeys, &base, &lo, &hi, &unit, &factor,
                                     &PyTuple_Type, &int_types, &PyTuple_Type, &float_types))
        return NULL;
    PyObject *kinds[2] = {int_types, float_types};
    for (int t = 0; t < 2; t++)
        for (Py_ssize_t i = 0; kinds[t] != NULL && i < PyTuple_GET_SIZE(kinds[t]); i++)
            if (!PyType_Check(PyTuple_GET_ITEM(kinds[t], i))) {
                PyErr_SetString(PyExc_TypeError, "PointTest: int_types and float_types must be tuples of types");
                return NULL;
            }
    const long long big = 1LL << 60;
    if (nkeys >= 1 && d > big / nkeys) d = -1; /* first + t d must fit in 64 bits */
    if (plen < 0 || plen > (Py_ssize_t)sizeof(((PointTest *)0)->prefix) || m < 1 || k < 1 || k > 1 << 20 ||
        s < 0 || s > 1 << 20 || last < 0 || last > 1 << 20 || nkeys < 1 || nkeys > 1 << 20 || d < 1 || d > big ||
        unit < 1 || unit > big || lo < -big || lo > big || hi < lo || hi > big || base < -big || base > big ||
        !(factor >= 1.0)) {
        PyErr_SetString(PyExc_ValueError, "PointTest: parameter out of range");
        return NULL;
    }
    PointTest *p = (PointTest *)type->tp_alloc(type, 0);
    if (p == NULL) return NULL;
    p->text = text;
    p->decimal = decimal;
    memcpy(p->prefix, prefix, (size_t)plen);
    p->plen = plen;
    p->seed = seed;
    p->m = m;
    p->M = UINT64_MAX / m;
    p->k = k;
    p->d = d;
    p->s = s;
    p->last = last;
    p->nkeys = nkeys;
    p->base = base;
    p->lo = lo;
    p->hi = hi;
    p->unit = unit;
    p->factor = factor;
    p->int_types = int_types != NULL ? int_types : PyTuple_New(0);
    p->float_types = float_types != NULL ? float_types : PyTuple_New(0);
    if (int_types != NULL) Py_INCREF(int_types);
    if (float_types != NULL) Py_INCREF(float_types);
    if (p->int_types == NULL || p->float_types == NULL) {
        Py_DECREF(p);
        return NULL;
    }
    return (PyObject *)p;
}

static void point_dealloc(PointTest *p) {
    Py_XDECREF(p->int_types);
    Py_XDECREF(p->float_types);
    Py_TYPE(p)->tp_free((PyObject *)p);
}

static int type_in(PyTypeObject *t, PyObject *types) {
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(types); i++)
        if ((PyObject *)t == PyTuple_GET_ITEM(types, i)) return 1;
    return 0;
}

static inline int probes_set(const uint64_t *w, uint64_t h, int count, uint64_t m, uint64_t M) {
    for (int i = 0; i < count; i++) {
        uint64_t x = fastmod(splitmix64(h + (uint64_t)(i + 1) * GOLDEN), m, M);
        if (!((w[x >> 6] >> (x & 63)) & 1)) return 0;
    }
    return 1;
}

/* The scaled value of a plain number (an int or a float, a numpy integer or float64 scalar,
 * which the record path answers alike), 1 when it is one (else 0: the record path takes it). */
static int point_scaled(const PointTest *p, PyObject *value, int64_t *a) {
    PyTypeObject *t = Py_TYPE(value);
    if (t == &PyLong_Type || type_in(t, p->int_types)) {
        int overflow;
        long long v = PyLong_AsLongLongAndOverflow(value, &overflow); /* numpy ints: through __index__ */
        if (overflow || (v == -1 && PyErr_Occurred())) {
            PyErr_Clear();
            return 0;
        }
        long long r;
        if (__builtin_mul_overflow(v, p->unit, &r)) return 0;
        *a = r;
        return 1;
    }
    if (!p->decimal || !(t == &PyFloat_Type || (PyFloat_Check(value) && type_in(t, p->float_types)))) return 0;
    /* bloomkit.ranges.schema.Decimal.scale_float, operation for operation */
    double y = PyFloat_AS_DOUBLE(value) * p->factor, ay = fabs(y);
    if (!(ay < (double)POINT_MAX_SCALED)) return 0;
    if (!(fabs(ay - floor(ay) - 0.5) > ay * 1e-15 + 1e-300)) return 0;
    *a = (int64_t)copysign(floor(ay + 0.5), y);
    return 1;
}

/* "prefix" + decimal(v) into buf; returns its length (buf holds plen + 21 bytes). */
static size_t point_key(const PointTest *p, int64_t v, uint8_t *buf) {
    size_t n = (size_t)p->plen;
    memcpy(buf, p->prefix, n);
    uint64_t u = (uint64_t)v;
    if (v < 0) {
        buf[n++] = '-';
        u = 0 - u;
    }
    char digits[20];
    int nd = 0;
    do {
        digits[nd++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    while (nd) buf[n++] = (uint8_t)digits[--nd];
    return n;
}

/* The words of a filter of m bits (a buffer view to release; flags: PyBUF_WRITABLE to write),
 * -1 with an exception set. */
static int point_words(const PointTest *p, PyObject *obj, Py_buffer *view, int flags) {
    if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS | flags) < 0) return -1;
    if ((uint64_t)view->len / 8 < (p->m + 63) / 64) {
        PyBuffer_Release(view);
        PyErr_SetString(PyExc_ValueError, "PointTest: the words array is smaller than m bits");
        return -1;
    }
    return 0;
}

/* g(a) = floor((a - base) / d): the group of a scaled value (Python's //). */
static inline int64_t point_group(const PointTest *p, int64_t a) {
    int64_t off = a - p->base, g = off / p->d;
    return off % p->d < 0 ? g - 1 : g;
}

/* h1 of the key of group g: "name:" + decimal(base + g d). */
static inline uint64_t group_hash(const PointTest *p, int64_t g) {
    uint8_t key[sizeof p->prefix + 21];
    size_t n = point_key(p, p->base + g * p->d, key);
    return xxh64(key, n, p->seed);
}

/* Every position the entry [a, b] sets (the record path's keys: groups g(a) .. g(b) + r, s
 * positions each, the last group the first k - r s) is set. */
static int cover_groups(const PointTest *p, const uint64_t *w, int64_t ga, int64_t gb) {
    int64_t end = gb + p->nkeys - 1;
    for (int64_t g = ga; g <= end; g++)
        if (!probes_set(w, group_hash(p, g), g < end ? p->s : p->last, p->m, p->M)) return 0;
    return 1;
}

/* The scaled interval of a plain (lo, hi) pair of a numeric attribute within the scope, lo <= hi:
 * 1 when it is one (else 0: the record path answers or refuses it). */
static int point_interval(const PointTest *p, PyObject *const *args, int64_t *a, int64_t *b) {
    return !p->text && point_scaled(p, args[1], a) && point_scaled(p, args[2], b) && *a <= *b && *a >= p->lo &&
           *b <= p->hi && point_group(p, *b) - point_group(p, *a) < POINT_MAX_GROUPS;
}

/* The UTF-8 of a plain text value (an exact str without lone surrogates, which the record path
 * refuses): 1, else 0 (the record path takes it). */
static int point_text(PyObject *value, const uint8_t **text, Py_ssize_t *tlen) {
    if (!PyUnicode_CheckExact(value) || BK_READY(value) < 0) return 0;
    int kind = PyUnicode_KIND(value);
    if (kind != PyUnicode_1BYTE_KIND) {
        const void *src = PyUnicode_DATA(value);
        for (Py_ssize_t i = 0, n = PyUnicode_GET_LENGTH(value); i < n; i++) {
            Py_UCS4 ch = PyUnicode_READ(kind, src, i);
            if (ch >= 0xD800 && ch <= 0xDFFF) return 0;
        }
    }
    *text = (const uint8_t *)PyUnicode_AsUTF8AndSize(value, tlen);
    if (*text == NULL) {
        PyErr_Clear();
        return 0;
    }
    return 1;
}

/* h1 of the text key "name:" + text; -1 with an exception set (no memory). */
static int text_hash(const PointTest *p, const uint8_t *text, Py_ssize_t tlen, uint64_t *h) {
    Buf b;
    buf_init(&b);
    if (buf_put(&b, p->prefix, (size_t)p->plen) < 0 || buf_put(&b, text, (size_t)tlen) < 0) {
        buf_free(&b);
        return -1;
    }
    *h = xxh64(b.p, b.len, p->seed);
    buf_free(&b);
    return 0;
}

static inline void probes_fill(uint64_t *w, uint64_t h, int count, uint64_t m, uint64_t M) {
    for (int i = 0; i < count; i++) {
        uint64_t x = fastmod(splitmix64(h + (uint64_t)(i + 1) * GOLDEN), m, M);
        w[x >> 6] |= 1ULL << (x & 63);
    }
}

/* test(words, value, where) -> True / False, or None for the record path (where is unused:
 * the record path raises its own errors for the values returned to it). */
static PyObject *point_test(PointTest *p, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "test(words, value, where)");
        return NULL;
    }
    PyObject *value = args[1];
    int64_t a = 0;
    const uint8_t *text = NULL;
    Py_ssize_t tlen = 0;
    if (p->text) {
        if (!point_text(value, &text, &tlen)) Py_RETURN_NONE;
    } else {
        if (!point_scaled(p, value, &a) || a < p->lo || a > p->hi) Py_RETURN_NONE;
    }
    Py_buffer view;
    if (point_words(p, args[0], &view, 0) < 0) return NULL;
    const uint64_t *w = (const uint64_t *)view.buf;
    int found;
    if (text != NULL) {
        uint64_t h;
        if (text_hash(p, text, tlen, &h) < 0) {
            PyBuffer_Release(&view);
            return NULL;
        }
        found = probes_set(w, h, p->k, p->m, p->M);
    } else {
        int64_t g = point_group(p, a);
        found = cover_groups(p, w, g, g);
    }
    PyBuffer_Release(&view);
    return PyBool_FromLong(found);
}

/* cover(words, lo, hi) -> might every value of [lo, hi] be in the set (BF(range) a subset of
 * BF), or None for the record path. */
static PyObject *point_cover(PointTest *p, PyObject *const *args, Py_ssize_t nargs) {
    int64_t a, b;
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "cover(words, lo, hi)");
        return NULL;
    }
    if (!point_interval(p, args, &a, &b)) Py_RETURN_NONE;
    Py_buffer view;
    if (point_words(p, args[0], &view, 0) < 0) return NULL;
    int found = cover_groups(p, (const uint64_t *)view.buf, point_group(p, a), point_group(p, b));
    PyBuffer_Release(&view);
    return PyBool_FromLong(found);
}

/* intersect(words, lo, hi) -> might some value of [lo, hi] be in the set, or None for the
 * record path. The value groups v = g(lo) .. g(hi): v is present iff groups v .. v + r - 1
 * have their s positions set and group v + r its first k - r s; one pass over the groups,
 * counting the run of full groups. */
static PyObject *point_intersect(PointTest *p, PyObject *const *args, Py_ssize_t nargs) {
    int64_t a, b;
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "intersect(words, lo, hi)");
        return NULL;
    }
    if (!point_interval(p, args, &a, &b)) Py_RETURN_NONE;
    Py_buffer view;
    if (point_words(p, args[0], &view, 0) < 0) return NULL;
    const uint64_t *w = (const uint64_t *)view.buf;
    int64_t ga = point_group(p, a), gb = point_group(p, b), r = p->nkeys - 1, run = 0;
    int found = 0;
    for (int64_t g = ga; g <= gb + r && !found; g++) {
        uint64_t h = group_hash(p, g);
        int full = g < gb + r ? probes_set(w, h, p->s, p->m, p->M) : 0;
        /* run = full groups among g - r .. g - 1 (consecutive, ending at g - 1) */
        if (g - r >= ga && run >= r) found = full || probes_set(w, h, p->last, p->m, p->M); /* last <= s */
        run = full ? run + 1 : 0;
    }
    PyBuffer_Release(&view);
    return PyBool_FromLong(found);
}

/* entry(value) -> the entry a record's value makes, or None for the record path: a text's str,
 * or (a, b), the scaled interval of a plain number or a plain [lo, hi] pair (tuple or list). */
static PyObject *point_entry(PointTest *p, PyObject *value) {
    if (p->text) {
        const uint8_t *text;
        Py_ssize_t tlen;
        if (!point_text(value, &text, &tlen)) Py_RETURN_NONE;
        Py_INCREF(value);
        return value;
    }
    PyObject *ends[3] = {NULL, value, value};
    if (PyTuple_CheckExact(value) || PyList_CheckExact(value)) {
        if (PySequence_Fast_GET_SIZE(value) != 2) Py_RETURN_NONE;
        ends[1] = PySequence_Fast_GET_ITEM(value, 0);
        ends[2] = PySequence_Fast_GET_ITEM(value, 1);
    }
    int64_t a, b;
    if (!point_interval(p, ends, &a, &b)) Py_RETURN_NONE;
    return Py_BuildValue("(LL)", (long long)a, (long long)b);
}

/* fill(words, entry): set the bits of an entry() (the record path's keys and positions); the GIL
 * is held throughout, as in the jit_mut kernels. */
static PyObject *point_fill(PointTest *p, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "fill(words, entry)");
        return NULL;
    }
    uint64_t h = 0;
    long long a = 0, b = 0;
    if (p->text) {
        const uint8_t *text;
        Py_ssize_t tlen;
        if (!point_text(args[1], &text, &tlen)) {
            PyErr_SetString(PyExc_ValueError, "PointTest.fill: not an entry of this text attribute");
            return NULL;
        }
        if (text_hash(p, text, tlen, &h) < 0) return NULL;
    } else if (!PyArg_ParseTuple(args[1], "LL", &a, &b)) {
        return NULL;
    } else if (a > b || a < p->lo || b > p->hi || point_group(p, b) - point_group(p, a) >= POINT_MAX_GROUPS) {
        PyErr_SetString(PyExc_ValueError, "PointTest.fill: not an entry of this attribute");
        return NULL;
    }
    Py_buffer view;
    if (point_words(p, args[0], &view, PyBUF_WRITABLE) < 0) return NULL;
    uint64_t *w = (uint64_t *)view.buf;
    if (p->text) {
        probes_fill(w, h, p->k, p->m, p->M);
    } else {
        int64_t ga = point_group(p, a), end = point_group(p, b) + p->nkeys - 1;
        for (int64_t g = ga; g <= end; g++) probes_fill(w, group_hash(p, g), g < end ? p->s : p->last, p->m, p->M);
    }
    PyBuffer_Release(&view);
    Py_RETURN_NONE;
}

static PyMethodDef point_methods[] = {
    {"test", (PyCFunction)(void (*)(void))point_test, METH_FASTCALL,
     "test(words, value, where) -> True / False, or None for a value the record path must take."},
    {"cover", (PyCFunction)(void (*)(void))point_cover, METH_FASTCALL,
     "cover(words, lo, hi) -> might every value of [lo, hi] be in the set; None: the record path."},
    {"intersect", (PyCFunction)(void (*)(void))point_intersect, METH_FASTCALL,
     "intersect(words, lo, hi) -> might some value of [lo, hi] be in the set; None: the record path."},
    {"entry", (PyCFunction)point_entry, METH_O,
     "entry(value) -> the entry of a plain record value (a str, or the scaled (a, b)); None: the record path."},
    {"fill", (PyCFunction)(void (*)(void))point_fill, METH_FASTCALL, "fill(words, entry): set the bits of an entry."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject PointTestType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "bloomkit._speedups.PointTest",
    .tp_basicsize = sizeof(PointTest),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "PointTest(text, decimal, prefix, seed, m, k, d, s, last, nkeys, base, lo, hi, unit, factor[, int_types, float_types]): "
              "the point query of one attribute of a RangeBloomFilter.",
    .tp_new = point_new,
    .tp_dealloc = (destructor)point_dealloc,
    .tp_methods = point_methods,
};

/* ------------------------------------------------------------------------------------------ */

static PyMethodDef module_methods[] = {
    {"configure", (PyCFunction)m_configure, METH_O, "configure(encode_key): the Python encoder of other key types."},
    {"hash64", (PyCFunction)(void (*)(void))m_hash64, METH_FASTCALL, "hash64(key, seed=0) -> h1 of one key."},
    {"hash64_tag", (PyCFunction)(void (*)(void))m_hash64_tag, METH_FASTCALL, "hash64_tag(key, seed=0) -> (h1, tag)."},
    {"encode", (PyCFunction)m_encode, METH_O, "encode(key) -> (tag, payload): the canonical encoding."},
    {"hash_each", (PyCFunction)(void (*)(void))m_hash_each, METH_FASTCALL,
     "hash_each(values, seeds, out) -> [1 << tag, ...]: h1 of values[i] with seeds[i] into out[i]."},
    {"hash_into", (PyCFunction)(void (*)(void))m_hash_into, METH_FASTCALL,
     "hash_into(keys, seed, out) -> tag mask: h1 of every key of a list / tuple into a uint64 buffer."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "bloomkit._speedups", "bloomkit's optional compiled boundary (see _speedups.c).", -1,
    module_methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__speedups(void) {
    s_key_mask = PyUnicode_InternFromString("_key_mask");
    s_rebind = PyUnicode_InternFromString("_core_rebind");
    s_note_keys = PyUnicode_InternFromString("_note_keys");
    s_py_add = PyUnicode_InternFromString("_py_add");
    s_py_contains = PyUnicode_InternFromString("_py_contains");
    s_overflowed = PyUnicode_InternFromString("overflowed");
    s_design_check = PyUnicode_InternFromString("_design_check");
    s_foreign_key = PyUnicode_InternFromString("_foreign_key");
    storage_names = PySet_New(NULL);
    if (!s_key_mask || !s_rebind || !s_note_keys || !s_py_add || !s_py_contains || !s_overflowed || !storage_names
        || !s_design_check || !s_foreign_key)
        return NULL;
    const char *names[] = {"_bits", "_counters", "_words", "_B64", "_num_hashes", "seed", "_width", "mode", NULL};
    for (int i = 0; names[i]; i++) {
        PyObject *s = PyUnicode_InternFromString(names[i]);
        if (s == NULL || PySet_Add(storage_names, s) < 0) return NULL;
        Py_DECREF(s);
    }
    s_py_add_item = PyUnicode_InternFromString("_py_add");
    s_item_rebind = PyUnicode_InternFromString("_core_rebind");
    s_acquire = PyUnicode_InternFromString("acquire");
    s_release = PyUnicode_InternFromString("release");
    s_data = PyUnicode_InternFromString("data");
    s_slots = PyUnicode_InternFromString("_slots");
    s_stats = PyUnicode_InternFromString("_stats");
    item_names = PySet_New(NULL);
    if (!s_py_add_item || !s_item_rebind || !s_acquire || !s_release || !s_data || !s_slots || !s_stats || !item_names)
        return NULL;
    const char *inames[] = {"_counters", "_table", "_key_masks", "_mutex", "_weights", "_seeds", "_one_item",
                            "num_attributes", "num_hashes", "num_counters", "counter_bits", "hash", "seed", NULL};
    for (int i = 0; inames[i]; i++) {
        PyObject *s = PyUnicode_InternFromString(inames[i]);
        if (s == NULL || PySet_Add(item_names, s) < 0) return NULL;
        Py_DECREF(s);
    }
    if (PyType_Ready(&CoreType) < 0 || PyType_Ready(&ItemCoreType) < 0 || PyType_Ready(&PointTestType) < 0) return NULL;
    PyObject *mod = PyModule_Create(&module_def);
    if (mod == NULL) return NULL;
    Py_INCREF(&CoreType);
    if (PyModule_AddObject(mod, "FilterCore", (PyObject *)&CoreType) < 0) {
        Py_DECREF(&CoreType);
        Py_DECREF(mod);
        return NULL;
    }
    Py_INCREF(&ItemCoreType);
    if (PyModule_AddObject(mod, "ItemCore", (PyObject *)&ItemCoreType) < 0) {
        Py_DECREF(&ItemCoreType);
        Py_DECREF(mod);
        return NULL;
    }
    Py_INCREF(&PointTestType);
    if (PyModule_AddObject(mod, "PointTest", (PyObject *)&PointTestType) < 0) {
        Py_DECREF(&PointTestType);
        Py_DECREF(mod);
        return NULL;
    }
    if (PyModule_AddIntConstant(mod, "KIND_PYTHON", KIND_PYTHON) < 0 || PyModule_AddIntConstant(mod, "KIND_BITS", KIND_BITS) < 0 ||
        PyModule_AddIntConstant(mod, "KIND_COUNTERS", KIND_COUNTERS) < 0 || PyModule_AddIntConstant(mod, "KIND_SPLIT", KIND_SPLIT) < 0 ||
        PyModule_AddIntConstant(mod, "KIND_ITEMS", KIND_ITEMS) < 0 || PyModule_AddIntConstant(mod, "KIND_BITS_DH", KIND_BITS_DH) < 0 ||
        PyModule_AddIntConstant(mod, "KIND_COUNTERS_DH", KIND_COUNTERS_DH) < 0) {
        Py_DECREF(mod);
        return NULL;
    }
    return mod;
}
