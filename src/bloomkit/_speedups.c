/* bloomkit._speedups: the optional compiled boundary between Python objects and bloomkit's
 * hashes and bits (issue 14; DESIGN.md "Performance model").
 *
 * Objects in, hashes / bits out, and nothing else:
 *   - XXH64 and the canonical key encoding of bloomkit._hashing (str, bytes, bool, int, float,
 *     tuple; every other type, ints beyond 64 bits and NaN go through the Python
 *     bloomkit._hashing.encode_key, so their payloads and errors are the Python path's own);
 *   - SplitMix64 probes G_i = splitmix64(h1 + (i + 1) * GOLDEN) reduced exactly mod m;
 *   - FilterCore, the base class of BloomFilter, CountingBloomFilter and SplitBlockBloomFilter:
 *     add / `in` of one key on the storage bound once (a buffer view of the numpy array held
 *     by the object, re-bound when the storage is replaced);
 *   - hash_into: h1 of every key of a list / tuple into a uint64 buffer (no join).
 * Bulk math over arrays stays in the numba kernels. Every function here holds the GIL (single
 * keys and Python lists touch Python objects throughout), which gives single-key adds the
 * guarantee of the jit_mut kernels: concurrent adds never lose a bit.
 * The algorithms are the numba kernels' (bloomkit._kernels, bloomkit._splitblock_kernels),
 * checked equal by tests/test_speedups.py, and XXH64 against the reference xxhash package.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <stdint.h>
#include <string.h>

#if PY_VERSION_HEX >= 0x030C0000 /* str objects are always "ready" */
#define BK_READY(s) 0
#define BK_IS_READY(s) 1
#else
#define BK_READY(s) PyUnicode_READY(s)
#define BK_IS_READY(s) PyUnicode_IS_READY(s)
#endif

/* ------------------------------------------------------------------------------------------ */
/* XXH64, SplitMix64, exact reduction                                                          */

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

/* x mod m exactly (bloomkit._kernels.fastmod: Barrett reduction with M = (2^64 - 1) / m). */
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

static PyObject *py_encode_key = NULL; /* bloomkit._hashing.encode_key (set by configure()) */

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
 * bloomkit._hashing.encode_key does). ASCII strs are read in place: *data points into the
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

/* Append the canonical payload of key to b; returns its tag, or -1 with an exception set. */
static int encode(PyObject *key, Buf *b) {
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
        if (Py_EnterRecursiveCall("") != 0) return -1;
        for (Py_ssize_t i = 0; i < n; i++) {
            size_t head = b->len;
            if (buf_reserve(b, 9) < 0) goto fail;
            b->len += 9;
            int tag = encode(PyTuple_GET_ITEM(key, i), b);
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

static PyObject *m_configure(PyObject *self, PyObject *encode_key) {
    (void)self;
    if (!PyCallable_Check(encode_key)) {
        PyErr_SetString(PyExc_TypeError, "configure() needs bloomkit._hashing.encode_key");
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

enum { KIND_UNBOUND = 0, KIND_PYTHON = 1, KIND_BITS = 2, KIND_COUNTERS = 3, KIND_SPLIT = 4 };

typedef struct {
    PyObject_HEAD
    int kind;
    int k;          /* probes (bits, counters) */
    int width;      /* counter bits: 4, 8, 16, 32 */
    uint64_t m, M;  /* bits / counters / blocks, and the Barrett constant of m */
    uint64_t seed;  /* the structure's seed */
    uint64_t seen;  /* a subset of self._key_mask: tags noted already */
    PyObject *store;          /* BitArray / CounterArray holding the array in a slot, or NULL */
    PyTypeObject *store_type; /* its type when store_off >= 0 */
    Py_ssize_t store_off;     /* offset of the array's slot in store, -1: look it up by name */
    PyObject *slot;           /* the slot's name */
    Py_buffer view;           /* the storage array (view.obj != NULL when bound) */
} Core;

static PyObject *s_key_mask, *s_rebind, *s_note_keys, *s_py_add, *s_py_contains, *s_overflowed;
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
    if (c->store_off >= 0 && Py_TYPE(c->store) == c->store_type)
        return *(PyObject **)((char *)c->store + c->store_off) == c->view.obj;
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
    if (kind < KIND_BITS || kind > KIND_SPLIT || m < 1 || k < 1 || k > 1 << 20 ||
        (kind == KIND_COUNTERS && counter_item_bytes(width) == 0)) {
        PyErr_SetString(PyExc_ValueError, "_core_bind: bad kind, m, k or width");
        return NULL;
    }
    Py_buffer view;
    if (PyObject_GetBuffer(args[2], &view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) return NULL;
    size_t itemsize = kind == KIND_COUNTERS ? counter_item_bytes(width) : 8;
    unsigned long long need;
    if (kind == KIND_BITS) need = ((m + 63) / 64) * 8;
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
        PyObject *descr = PyObject_GetAttr((PyObject *)Py_TYPE(args[1]), args[7]);
        if (descr == NULL) {
            PyErr_Clear();
        } else {
            if (Py_IS_TYPE(descr, &PyMemberDescr_Type)) { /* a __slots__ member: read it in place */
                PyMemberDef *d = ((PyMemberDescrObject *)descr)->d_member;
                if ((d->type == T_OBJECT_EX || d->type == T_OBJECT) &&
                    *(PyObject **)((char *)args[1] + d->offset) == view.obj) {
                    c->store_off = d->offset;
                    c->store_type = Py_TYPE(args[1]);
                }
            }
            Py_DECREF(descr);
        }
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

/* Set the key's bits / counters; 1 if a counter saturated. No Python code runs in here. */
static int core_insert(Core *c, uint64_t h) {
    int over = 0;
    if (c->kind == KIND_BITS) {
        uint64_t *w = (uint64_t *)c->view.buf;
        for (int i = 0; i < c->k; i++) {
            uint64_t x = fastmod(splitmix64(h + (uint64_t)(i + 1) * GOLDEN), c->m, c->M);
            w[x >> 6] |= 1ULL << (x & 63);
        }
    } else if (c->kind == KIND_COUNTERS) {
        uint8_t *d = (uint8_t *)c->view.buf;
        unsigned maxval = c->width == 32 ? 0xFFFFFFFFu : (1u << c->width) - 1;
        for (int i = 0; i < c->k; i++) {
            uint64_t x = fastmod(splitmix64(h + (uint64_t)(i + 1) * GOLDEN), c->m, c->M);
            unsigned v = cget(d, c->width, x);
            if (v >= maxval) over = 1;
            else cset(d, c->width, x, v + 1);
        }
    } else {
        uint64_t *w = (uint64_t *)c->view.buf + (fastmod(h, c->m, c->M) << 3);
        uint64_t g = splitmix64(h + GOLDEN);
        for (int i = 0; i < 8; i++) w[i] |= 1ULL << ((g >> (6 * i)) & 63);
    }
    return over;
}

static int core_test(Core *c, uint64_t h) {
    if (c->kind == KIND_BITS) {
        const uint64_t *w = (const uint64_t *)c->view.buf;
        for (int i = 0; i < c->k; i++) {
            uint64_t x = fastmod(splitmix64(h + (uint64_t)(i + 1) * GOLDEN), c->m, c->M);
            if (!((w[x >> 6] >> (x & 63)) & 1)) return 0;
        }
        return 1;
    }
    if (c->kind == KIND_COUNTERS) {
        const uint8_t *d = (const uint8_t *)c->view.buf;
        for (int i = 0; i < c->k; i++) {
            uint64_t x = fastmod(splitmix64(h + (uint64_t)(i + 1) * GOLDEN), c->m, c->M);
            if (cget(d, c->width, x) == 0) return 0;
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
        int tag = key_hash(key, seed, h);
        if (tag < 0) return -1;
        if (core_ready(c) && c->seed == seed) return tag;
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
    Py_RETURN_NONE;
}

static int core_contains(Core *c, PyObject *key) {
    uint64_t h;
    int tag = core_prepare(c, key, &h);
    if (tag < 0) return -1;
    if (tag > 0) return core_test(c, h);
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
    storage_names = PySet_New(NULL);
    if (!s_key_mask || !s_rebind || !s_note_keys || !s_py_add || !s_py_contains || !s_overflowed || !storage_names)
        return NULL;
    const char *names[] = {"_bits", "_counters", "_words", "_B64", "_num_hashes", "seed", "_width", "mode", NULL};
    for (int i = 0; names[i]; i++) {
        PyObject *s = PyUnicode_InternFromString(names[i]);
        if (s == NULL || PySet_Add(storage_names, s) < 0) return NULL;
        Py_DECREF(s);
    }
    if (PyType_Ready(&CoreType) < 0) return NULL;
    PyObject *mod = PyModule_Create(&module_def);
    if (mod == NULL) return NULL;
    Py_INCREF(&CoreType);
    if (PyModule_AddObject(mod, "FilterCore", (PyObject *)&CoreType) < 0) {
        Py_DECREF(&CoreType);
        Py_DECREF(mod);
        return NULL;
    }
    if (PyModule_AddIntConstant(mod, "KIND_PYTHON", KIND_PYTHON) < 0 || PyModule_AddIntConstant(mod, "KIND_BITS", KIND_BITS) < 0 ||
        PyModule_AddIntConstant(mod, "KIND_COUNTERS", KIND_COUNTERS) < 0 || PyModule_AddIntConstant(mod, "KIND_SPLIT", KIND_SPLIT) < 0) {
        Py_DECREF(mod);
        return NULL;
    }
    return mod;
}
