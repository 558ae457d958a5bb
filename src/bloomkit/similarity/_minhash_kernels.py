"""numba kernels of the MinHash signatures (:mod:`bloomkit.similarity.minhash`).

Texts arrive as one UTF-8 buffer ``data`` with ``offsets`` (pyarrow's layout); every kernel
works on a slice ``[lo, hi)`` of the documents and writes only rows ``lo..hi-1`` of its output,
so several threads fill one array without a lock (``jit_read``: the GIL is released).

Shingles (hashed as they are produced, never stored):

* ``mode 0`` character n-grams: n consecutive Unicode code points (boundaries are the bytes
  that are not UTF-8 continuation bytes); shingle hash = XXH64(its UTF-8 bytes, seed0);
* ``mode 1`` word n-grams: words are maximal runs of bytes that are not ASCII whitespace;
  word hash = XXH64(its bytes, seed0), shingle hash = the word hashes chained,
  h <- XXH64_u64(word hash, h) from seed0.

A document with at least one code point / word but fewer than n has one shingle: all of it.
A document with none has no shingle: its signature is all :data:`EMPTY`.

MinHash values of a shingle hash x:

* k-way (``oph=False``): value i = splitmix64(x + perm[i]), a bijection of uint64 per i;
  signature[i] = the minimum over the document's shingles (collision probability = Jaccard);
* one-permutation hashing (``oph=True``): v = splitmix64(x + perm[0]) goes to bin
  floor(v K / 2^64) (its top bits); signature[bin] = min. Empty bins are filled by optimal
  densification (Shrivastava, ICML 2017): bin j takes the value of the first non-empty bin in
  the sequence splitmix64(dens + j * 2^32 + t) mod K, t = 0, 1, ... -- the same sequence for
  every document, so each bin still collides with probability equal to the Jaccard similarity.
"""

from __future__ import annotations

import numba
import numpy as np

from .._engine import kernels as K
from .._engine.jit import jit_inline, jit_read, mulhi64, splitmix64

U64 = np.uint64
EMPTY = U64(0xFFFFFFFFFFFFFFFF)


@jit_inline
def _is_space(b: np.uint8) -> bool:
    return bool(b == 32 or 9 <= b <= 13)


@jit_inline
def _update(sig: np.ndarray, row: int, x: np.uint64, perm: np.ndarray, oph: bool) -> None:
    K_ = perm.shape[0]
    if oph:
        v = splitmix64(x + perm[0])
        b = np.int64(mulhi64(v, U64(K_)))  # type: ignore[call-arg]
        if v < sig[row, b]:
            sig[row, b] = v
    else:
        for i in range(K_):
            v = splitmix64(x + perm[i])
            if v < sig[row, i]:
                sig[row, i] = v


@jit_inline
def _densify(sig: np.ndarray, row: int, dens: np.uint64, filled: bool) -> None:
    """Optimal densification of one OPH row (see the module docstring)."""
    K_ = sig.shape[1]
    if not filled:
        return
    for j in range(K_):
        if sig[row, j] != EMPTY:
            continue
        t = U64(0)
        while True:
            src = np.int64(mulhi64(splitmix64(dens + (U64(j) << U64(32)) + t), U64(K_)))  # type: ignore[call-arg]
            if sig[row, src] != EMPTY and not _was_empty(sig, row, src, j):
                sig[row, j] = sig[row, src]
                break
            t += U64(1)


@jit_inline
def _was_empty(sig: np.ndarray, row: int, src: np.int64, j: int) -> bool:
    # a donor filled earlier in this pass was empty before it: its value is not its own. The
    # value of a bin's own minimum lies in that bin's range; a borrowed one does not.
    K_ = sig.shape[1]
    return bool(np.int64(mulhi64(sig[row, src], U64(K_))) != src)  # type: ignore[call-arg]


@jit_inline
def _shingles(data: np.ndarray, a: int, b: int, mode: int, n: int, seed0: np.uint64,
              out: np.ndarray, ring: np.ndarray, wh: np.ndarray) -> int:
    """Write the shingle hashes of document data[a:b] into out (room for b - a + 1); return
    how many (repeats included)."""
    m = 0
    if mode == 0:
        cnt = 0
        for p in range(a, b + 1):
            if p == b or (data[p] & 0xC0) != 0x80:
                ring[cnt % (n + 1)] = p
                cnt += 1
                if cnt >= n + 1:
                    s = ring[(cnt - 1 - n) % (n + 1)]
                    out[m] = K.xxh64(data, s, p - s, seed0)
                    m += 1
        if m == 0 and cnt >= 2:  # 1..n-1 code points: one shingle, the whole text
            out[m] = K.xxh64(data, a, b - a, seed0)
            m += 1
        return m
    words = 0
    p = a
    while p < b:
        while p < b and _is_space(data[p]):
            p += 1
        if p >= b:
            break
        s = p
        while p < b and not _is_space(data[p]):
            p += 1
        wh[words % n] = K.xxh64(data, s, p - s, seed0)
        words += 1
        if words >= n:
            h = seed0
            for t in range(words - n, words):
                h = K.xxh64_u64(wh[t % n], h)
            out[m] = h
            m += 1
    if m == 0 and words >= 1:  # 1..n-1 words: one shingle, all of them
        h = seed0
        for t in range(words):
            h = K.xxh64_u64(wh[t], h)
        out[m] = h
        m += 1
    return m


@jit_read
def minhash_text(data: np.ndarray, offsets: np.ndarray, lo: int, hi: int, mode: int, n: int,
                 seed0: np.uint64, perm: np.ndarray, oph: bool, dens: np.uint64,
                 sig: np.ndarray) -> None:
    """Signatures of documents lo..hi-1 into rows lo..hi-1 of ``sig`` (pre-filled with EMPTY)."""
    ring = np.empty(n + 1, dtype=np.int64)
    wh = np.empty(n, dtype=np.uint64)
    buf = np.empty(4096, dtype=np.uint64)
    for d in range(lo, hi):
        a = int(offsets[d])
        b = int(offsets[d + 1])
        if b - a + 1 > buf.shape[0]:
            buf = np.empty(2 * (b - a + 1), dtype=np.uint64)
        m = _shingles(data, a, b, mode, n, seed0, buf, ring, wh)
        for i in range(m):
            _update(sig, d, buf[i], perm, oph)
        _densify(sig, d, dens, oph and m > 0)


@jit_read
def minhash_hashes(hashes: np.ndarray, doc_offsets: np.ndarray, lo: int, hi: int, perm: np.ndarray,
                   oph: bool, dens: np.uint64, sig: np.ndarray) -> None:
    """Signatures of pre-hashed token sets: document d holds hashes[doc_offsets[d]:doc_offsets[d+1]]."""
    for d in range(lo, hi):
        a = np.int64(doc_offsets[d])
        b = np.int64(doc_offsets[d + 1])
        for p in range(a, b):
            _update(sig, d, hashes[p], perm, oph)
        _densify(sig, d, dens, bool(oph and b > a))


@jit_read
def shingle_hashes(data: np.ndarray, offsets: np.ndarray, mode: int, n: int, seed0: np.uint64) -> tuple[np.ndarray, np.ndarray]:
    """Every document's distinct shingle hashes, sorted: (hashes, doc_offsets) (exact Jaccard)."""
    nd = offsets.shape[0] - 1
    out = np.empty(np.int64(offsets[nd]) - np.int64(offsets[0]) + nd, dtype=np.uint64)
    doc_off = np.zeros(nd + 1, dtype=np.int64)
    ring = np.empty(n + 1, dtype=np.int64)
    wh = np.empty(n, dtype=np.uint64)
    m = 0
    for d in range(nd):
        a = int(offsets[d])
        b = int(offsets[d + 1])
        c = _shingles(data, a, b, mode, n, seed0, out[m:], ring, wh)
        part = np.sort(out[m : m + c])
        u = 0
        for i in range(c):
            if i == 0 or part[i] != part[i - 1]:
                out[m + u] = part[i]
                u += 1
        m += u
        doc_off[d + 1] = m
    return out[:m].copy(), doc_off


# -- b-bit verification of candidates (:mod:`bloomkit.similarity.minhash_bbit`) --------------------------
#
# The index keeps, per stored document, its ``verify`` MinHash values cut to their lowest
# ``bits`` bits and packed 64 // bits to a uint64 word (the sketch), and one table of band
# entries: a band key is h = hash(j, the band's r values); its entry (h >> 32) << 32 | id sits in
# a linear-probing table of 2^B uint64 slots (EMPTY = all ones) from slot (h >> 32) >> (32 - B),
# so the table can be rebuilt at any B <= 32 from its entries alone.

SLOT_EMPTY = U64(0xFFFFFFFFFFFFFFFF)


@jit_inline
def _band_key(sig: np.ndarray, d: int, j: int, r: int, seed: np.uint64) -> np.uint64:
    h = seed ^ (U64(j + 1) * U64(0x9E3779B97F4A7C15))
    for i in range(r):
        h = splitmix64(h ^ sig[d, j * r + i])
    return h


@jit_inline
def _mismatches(sk: np.ndarray, a: int, b: np.int64, bits: int, low: np.uint64, stop: int) -> int:
    """b-bit fields of sketches a and b that differ (counting stops above ``stop``)."""
    n = 0
    for w in range(sk.shape[1]):
        x = sk[a, w] ^ sk[b, w]
        y = x
        for s in range(1, bits):
            y |= x >> U64(s)
        n += int(K.popcount64(y & low))
        if n > stop:
            break
    return n


@jit_inline
def _table_put(table: np.ndarray, shift: int, entry: np.uint64) -> None:
    mask = np.int64(table.shape[0] - 1)
    s = np.int64((entry >> U64(32)) >> U64(shift)) if shift < 32 else np.int64(0)
    while table[s] != SLOT_EMPTY:
        s = (s + 1) & mask
    table[s] = entry


@numba.njit(cache=True)
def bbit_rehash(old: np.ndarray, table: np.ndarray, shift: int, offset: int) -> None:
    """Put every entry of ``old`` into ``table`` (2^B slots, shift = 32 - B), its id plus ``offset``."""
    for i in range(old.shape[0]):
        if old[i] != SLOT_EMPTY:
            _table_put(table, shift, old[i] + U64(offset))


@numba.njit(cache=True)
def bbit_seen(sig: np.ndarray, rows: int, bands: int, bits: int, seed: np.uint64, table: np.ndarray,
              shift: int, sketches: np.ndarray, count: int, max_mismatch: int, query: bool, store: bool,
              out: np.ndarray) -> int:
    """For each document d in order: out[d] = some stored document shares a band with d and its
    sketch differs from d's in at most ``max_mismatch`` fields (when ``query``); then d is
    stored (when ``store``) as id ``count`` (its sketch row, its ``bands`` entries). Columns
    0..rows*bands-1 of ``sig`` are the band values, the rest the verification values. Documents
    without shingles: False, not stored. Returns the new count."""
    mask = np.int64(table.shape[0] - 1)
    vcol = rows * bands
    nver = sig.shape[1] - vcol
    per = 64 // bits
    bmask = (U64(1) << U64(bits)) - U64(1)
    low = U64(0)
    for f in range(per):
        low |= U64(1) << U64(f * bits)
    for d in range(sig.shape[0]):
        out[d] = False
        if sig[d, 0] == EMPTY:
            continue
        row = count
        for w in range(sketches.shape[1]):
            sketches[row, w] = U64(0)
        for i in range(nver):
            sketches[row, i // per] |= (sig[d, vcol + i] & bmask) << U64((i % per) * bits)
        if query:
            found = False
            for j in range(bands):
                h = _band_key(sig, d, j, rows, seed)
                fp = h >> U64(32)
                s = np.int64(fp >> U64(shift)) if shift < 32 else np.int64(0)
                while table[s] != SLOT_EMPTY:
                    e = table[s]
                    if (e >> U64(32)) == fp:
                        c = np.int64(e & U64(0xFFFFFFFF))
                        if _mismatches(sketches, row, c, bits, low, max_mismatch) <= max_mismatch:
                            found = True
                            break
                    s = (s + 1) & mask
                if found:
                    break
            out[d] = found
        if store:
            for j in range(bands):
                h = _band_key(sig, d, j, rows, seed)
                _table_put(table, shift, ((h >> U64(32)) << U64(32)) | U64(row))
            count += 1
    return count
