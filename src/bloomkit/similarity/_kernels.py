"""numba kernels of the MLBF / MLBF* / LSBF (document 002, Sections 3 and 5.2).

Layout: a row of ``proj`` holds the k*L scaled projections a_{t,j}.x / w (+ b/w for the
LSBF), column ``j*k + t``. Bucket = floor(projection) as int64; BMLBF address
loc_0 = bucket & (m - 1) with m = 2^B, so loc_theta = loc_0 >> theta (Theorem 4, ERRATA).

MVBF addresses (Section 5.2), for AND-construction j with level-0 addresses loc_0[t]:

1. s1_t = loc_0[t] >> (S - 1) (upper substring), s2_t the S - 1 lower bits;
2. h = XXH64 chained over the int64 words (j, s1_1, ..., s1_k), h <- XXH64(word, h), from
   seed ``seed_c``;
   the k' addresses of VVBF S-1 are G_i(h) mod (m' / 2^(S-1)), i = 0..k'-1 (enhanced double
   hashing of h, this module's own scheme; the rest of bloomkit now uses independent SplitMix64
   probes, see bloomkit._engine.kernels);
3. for v = 1..S-1: the v-th leading bits of the lower substrings form a k-bit integer
   (bit t from loc_0[t]); XXH64 of it with seed ``seed_s + v * golden`` gives k' suffix bits
   (bit i of the hash for address i);
4. A_{S-v-1, i} = 2 A_{S-v, i} + suffix bit i; only VVBF 0 is stored.

A level-theta location (BMLBF or MVBF) of address a is "set" when any of the 2^theta level-0
bits a*2^theta .. (a+1)*2^theta - 1 is set.
"""

from __future__ import annotations

import numpy as np

from .._engine import kernels as K
from .._engine.jit import GOLDEN, jit_inline, jit_mut, jit_read

U64 = np.uint64


@jit_inline
def _any_set(words: np.ndarray, start: np.int64, length: np.int64) -> bool:
    """True if any bit in [start, start + length) is set; length a power of two, start a
    multiple of length."""
    if length <= 64:
        w = words[start >> 6]
        if length == 64:
            return w != U64(0)
        mask = ((U64(1) << U64(length)) - U64(1)) << U64(start & 63)
        return (w & mask) != U64(0)
    first = start >> 6
    last = (start + length) >> 6
    for i in range(first, last):
        if words[i] != U64(0):
            return True
    return False


@jit_inline
def _coarse_hash(loc: np.ndarray, r: int, col0: int, jval: np.int64, k: int, shift: int,
                 seed_c: np.uint64) -> np.uint64:
    """Hash of the words (j, s1_1, ..., s1_k): XXH64 of each 8-byte little-endian word,
    chained through the seed (h <- XXH64(word, h))."""
    h = K.xxh64_u64(U64(jval), seed_c)
    for t in range(k):
        h = K.xxh64_u64(U64(loc[r, col0 + t] >> shift), h)
    return h


@jit_inline
def _mvbf_addresses(loc: np.ndarray, r: int, col0: int, jval: np.int64, k: int, S: int,
                    upto: int, kp: int, mc: np.uint64, seed_c: np.uint64, seed_s: np.uint64,
                    out: np.ndarray) -> None:
    """Fill out[0:kp] with the level-``upto`` MVBF addresses of one AND-construction whose
    k level-0 addresses are loc[r, col0:col0+k] and whose index is ``jval``."""
    _coarse_addresses(_coarse_hash(loc, r, col0, jval, k, S - 1, seed_c), kp, mc, out)
    _mvbf_suffixes(loc, r, col0, k, S, upto, kp, seed_s, out)


@jit_inline
def _coarse_addresses(h1: np.uint64, kp: int, mc: np.uint64, out: np.ndarray) -> None:
    """out[0:kp] = the k' VVBF S-1 addresses G_i(h1) mod m_c (enhanced double hashing)."""
    x = h1 % mc
    y = K.second_hash(h1) % mc
    for i in range(kp):
        out[i] = np.int64(x)
        x += y
        if x >= mc:
            x -= mc
        y += U64(i + 1)
        if y >= mc:
            y %= mc


@jit_inline
def _mvbf_suffixes(loc: np.ndarray, r: int, col0: int, k: int, S: int, upto: int, kp: int,
                   seed_s: np.uint64, out: np.ndarray) -> None:
    """Append the suffix bits of levels S-2 .. ``upto`` to the VVBF S-1 addresses in out:
    the bit of level v for address i is bit i of XXH64(slice_v) with a per-level seed."""
    for v in range(1, S - upto):
        sl = U64(0)
        bitpos = S - 1 - v
        for t in range(k):
            sl |= U64((loc[r, col0 + t] >> bitpos) & 1) << U64(t)
        hs = K.xxh64_u64(sl, seed_s + U64(v) * GOLDEN)
        for i in range(kp):
            out[i] = (out[i] << 1) | np.int64((hs >> U64(i)) & U64(1))


@jit_inline
def _project_row(X: np.ndarray, r: int, At: np.ndarray, shift: np.ndarray,
                 out: np.ndarray) -> None:
    """out[t] = (sum_i X[r, i] At[i, t]) + shift[t]: the scaled projection
    (a_t.(x + s) + b_t) / w with At = (a / w)^T and shift = (a.s + b) / w, summed over i in
    order. Every path (insert, query, buckets) uses this one evaluation order, so a bucket
    never depends on the path; scaling w by 2^theta scales At and shift exactly, so Theorem
    4's alignment holds bit for bit. The loop over t is independent per t (SIMD-friendly)."""
    nf = At.shape[1]
    for t in range(nf):
        out[t] = 0.0
    for i in range(X.shape[1]):
        xi = X[r, i]
        for t in range(nf):
            out[t] += xi * At[i, t]
    for t in range(nf):
        out[t] += shift[t]


@jit_read
def projections(X: np.ndarray, A: np.ndarray, shift: np.ndarray) -> np.ndarray:
    """(n, num_functions) scaled projections (see _project_row)."""
    n = X.shape[0]
    out = np.empty((n, A.shape[1]), dtype=np.float64)
    row = np.empty(A.shape[1], dtype=np.float64)
    for r in range(n):
        _project_row(X, r, A, shift, row)
        for t in range(A.shape[1]):
            out[r, t] = row[t]
    return out


@jit_read
def locations(X: np.ndarray, A: np.ndarray, shift: np.ndarray, mask: np.int64) -> np.ndarray:
    """(n, num_functions) level-0 addresses floor(projection) & mask."""
    n = X.shape[0]
    out = np.empty((n, A.shape[1]), dtype=np.int64)
    row = np.empty(A.shape[1], dtype=np.float64)
    for r in range(n):
        _project_row(X, r, A, shift, row)
        for t in range(A.shape[1]):
            out[r, t] = np.int64(np.floor(row[t])) & mask
    return out


@jit_mut
def insert(loc: np.ndarray, k: int, L: int, S: int, bml_words: np.ndarray, physical: bool,
           mv_words: np.ndarray, kp: int, mc: np.uint64, seed_c: np.uint64,
           seed_s: np.uint64) -> None:
    """Insert every row of ``loc`` (n, k*L level-0 addresses) into BMLBF and MVBF."""
    addr = np.empty(kp, dtype=np.int64)
    for r in range(loc.shape[0]):
        for j in range(L):
            if physical:
                for t in range(k):
                    a = loc[r, j * k + t]
                    bml_words[a >> 6] |= U64(1) << U64(a & 63)
            _mvbf_addresses(loc, r, j * k, np.int64(j), k, S, 0, kp, mc, seed_c, seed_s, addr)
            for i in range(kp):
                a = addr[i]
                mv_words[a >> 6] |= U64(1) << U64(a & 63)


@jit_read
def _bml_pass(loc: np.ndarray, r: int, col0: int, k: int, level: int, bml_words: np.ndarray,
              span: np.int64) -> bool:
    """All k VLBF-theta locations of one AND-construction set?"""
    for t in range(k):
        a = (loc[r, col0 + t] >> level) << level
        if not _any_set(bml_words, a, span):
            return False
    return True


@jit_inline
def _query_row(loc: np.ndarray, r: int, k: int, L: int, S: int, level: int,
               bml_words: np.ndarray, physical: bool, mv_words: np.ndarray, kp: int,
               mc: np.uint64, seed_c: np.uint64, seed_s: np.uint64, use_verify: bool,
               addr: np.ndarray) -> bool:
    span = np.int64(1) << level
    for j in range(L):
        ok = True
        if physical:
            ok = _bml_pass(loc, r, j * k, k, level, bml_words, span)
        if ok and use_verify:
            # coarse addresses first (VVBF S-1): a necessary condition at every level, and it
            # tests the same words as the final check, so failing early costs no extra miss
            _mvbf_addresses(loc, r, j * k, np.int64(j), k, S, S - 1, kp, mc, seed_c, seed_s,
                            addr)
            cspan = np.int64(1) << (S - 1)
            for i in range(kp):
                if not _any_set(mv_words, addr[i] << (S - 1), cspan):
                    ok = False
                    break
            if ok and level < S - 1:
                _mvbf_suffixes(loc, r, j * k, k, S, level, kp, seed_s, addr)
                for i in range(kp):
                    if not _any_set(mv_words, addr[i] << level, span):
                        ok = False
                        break
        if ok:
            return True
    return False


@jit_read
def query_vectors(X: np.ndarray, A: np.ndarray, shift: np.ndarray, mask: np.int64, k: int,
                  L: int, S: int, level: int, bml_words: np.ndarray, physical: bool,
                  mv_words: np.ndarray, kp: int, mc: np.uint64, seed_c: np.uint64,
                  seed_s: np.uint64, use_verify: bool) -> np.ndarray:
    """Fused projection + query of every row of X (no (n, kL) temporaries)."""
    n = X.shape[0]
    out = np.zeros(n, dtype=np.bool_)
    addr = np.empty(kp, dtype=np.int64)
    row = np.empty(A.shape[1], dtype=np.float64)
    loc = np.empty((1, A.shape[1]), dtype=np.int64)
    for r in range(n):
        _project_row(X, r, A, shift, row)
        for t in range(A.shape[1]):
            loc[0, t] = np.int64(np.floor(row[t])) & mask
        out[r] = _query_row(loc, 0, k, L, S, level, bml_words, physical, mv_words, kp, mc,
                            seed_c, seed_s, use_verify, addr)
    return out


@jit_read
def and_pass(loc: np.ndarray, k: int, L: int, level: int, bml_words: np.ndarray) -> np.ndarray:
    """(n, L) bool: does g_j(q) pass the BMLBF alone at VLBF theta (Theorems 5-6)."""
    n = loc.shape[0]
    out = np.zeros((n, L), dtype=np.bool_)
    span = np.int64(1) << level
    for r in range(n):
        for j in range(L):
            out[r, j] = _bml_pass(loc, r, j * k, k, level, bml_words, span)
    return out


@jit_mut
def verify_insert(words: np.ndarray, jvals: np.ndarray, loc: np.ndarray, S: int, kp: int,
                  mc: np.uint64, seed_c: np.uint64, seed_s: np.uint64) -> None:
    """Store raw verification elements xi = j . h_1 ... h_k in the MVBF (Fig 7): ``jvals`` (n,)
    and ``loc`` (n, k) level-0 addresses. Writes shared storage: keeps the GIL."""
    k = loc.shape[1]
    addr = np.empty(kp, dtype=np.int64)
    for r in range(loc.shape[0]):
        _mvbf_addresses(loc, r, 0, jvals[r], k, S, 0, kp, mc, seed_c, seed_s, addr)
        for i in range(kp):
            a = addr[i]
            words[a >> 6] |= U64(1) << U64(a & 63)


@jit_read
def verify_test(words: np.ndarray, jvals: np.ndarray, loc: np.ndarray, S: int, level: int,
                kp: int, mc: np.uint64, seed_c: np.uint64, seed_s: np.uint64) -> np.ndarray:
    """Is each raw verification element in VVBF ``level``? (read-only)."""
    n, k = loc.shape
    out = np.zeros(n, dtype=np.bool_)
    addr = np.empty(kp, dtype=np.int64)
    span = np.int64(1) << level
    for r in range(n):
        _mvbf_addresses(loc, r, 0, jvals[r], k, S, level, kp, mc, seed_c, seed_s, addr)
        ok = True
        for i in range(kp):
            if not _any_set(words, addr[i] << level, span):
                ok = False
                break
        out[r] = ok
    return out


# -- the Jaccard family (issue 24): MinHash signatures instead of projections -----------------------
#
# A row of ``sig`` holds the k L MinHash values of one document, band j in columns j*k .. j*k+k-1.
# Level theta uses the first rows[theta] values of every band (rows strictly decreasing:
# coarser level = fewer rows = lower Jaccard threshold). The MVBF address of band j at level
# theta keeps Section 5.2's prefix structure with row groups in place of bit slices:
#   coarse (VVBF S-1): k' addresses from XXH64 chained over (j, the first rows[S-1] values);
#   level v = 1..S-1-theta: one suffix bit per address, bit i of XXH64 chained over the values
#   rows[S-v] .. rows[S-v-1]-1 from seed_s + v golden.
# So VVBF theta's address of a band is a function of its first rows[theta] values, and two
# documents whose first rows[theta] values agree in a band share that location: Theorem 4's
# containment, by construction. The suffix bits hash 64-bit values, so they are uniform (Theorem 7
# as printed). The BMLBF (MLBF only) holds one bit per value, value & (m - 1); level theta checks
# the first rows[theta] of them. A document whose first value is EMPTY (no shingle) is skipped.

EMPTY_SIG = np.uint64(0xFFFFFFFFFFFFFFFF)


@jit_inline
def _band_addresses(sig: np.ndarray, r: int, col0: int, jval: int, rows: np.ndarray, S: int,
                    upto: int, kp: int, mc: np.uint64, seed_c: np.uint64, seed_s: np.uint64,
                    out: np.ndarray) -> None:
    h = K.xxh64_u64(U64(jval), seed_c)
    for t in range(rows[S - 1]):
        h = K.xxh64_u64(sig[r, col0 + t], h)
    _coarse_addresses(h, kp, mc, out)
    for v in range(1, S - upto):
        hs = seed_s + U64(v) * GOLDEN
        for t in range(rows[S - v], rows[S - v - 1]):
            hs = K.xxh64_u64(sig[r, col0 + t], hs)
        for i in range(kp):
            out[i] = (out[i] << 1) | np.int64((hs >> U64(i)) & U64(1))


@jit_inline
def _band_pass(sig: np.ndarray, r: int, j: int, k: int, rows: np.ndarray, S: int, level: int,
               bml_words: np.ndarray, physical: bool, mask: np.uint64, mv_words: np.ndarray,
               kp: int, mc: np.uint64, seed_c: np.uint64, seed_s: np.uint64, use_verify: bool,
               addr: np.ndarray) -> bool:
    if physical:
        for t in range(rows[level]):
            a = np.int64(sig[r, j * k + t] & mask)
            if (bml_words[a >> 6] >> U64(a & 63)) & U64(1) == U64(0):
                return False
    if not use_verify:
        return True
    _band_addresses(sig, r, j * k, j, rows, S, level, kp, mc, seed_c, seed_s, addr)
    span = np.int64(1) << level
    for i in range(kp):
        if not _any_set(mv_words, addr[i] << level, span):
            return False
    return True


@jit_inline
def _band_insert(sig: np.ndarray, r: int, j: int, k: int, rows: np.ndarray, S: int,
                 bml_words: np.ndarray, physical: bool, mask: np.uint64, mv_words: np.ndarray,
                 kp: int, mc: np.uint64, seed_c: np.uint64, seed_s: np.uint64,
                 addr: np.ndarray) -> None:
    if physical:
        for t in range(k):
            a = np.int64(sig[r, j * k + t] & mask)
            bml_words[a >> 6] |= U64(1) << U64(a & 63)
    _band_addresses(sig, r, j * k, j, rows, S, 0, kp, mc, seed_c, seed_s, addr)
    for i in range(kp):
        a = addr[i]
        mv_words[a >> 6] |= U64(1) << U64(a & 63)


@jit_inline
def _doc_pass(sig: np.ndarray, r: int, k: int, L: int, rows: np.ndarray, S: int, level: int,
              bml_words: np.ndarray, physical: bool, mask: np.uint64, mv_words: np.ndarray, kp: int,
              mc: np.uint64, seed_c: np.uint64, seed_s: np.uint64, use_verify: bool, addr: np.ndarray) -> bool:
    """Does some band of document r pass at ``level`` (the OR over the L bands)?"""
    for j in range(L):
        if _band_pass(sig, r, j, k, rows, S, level, bml_words, physical, mask, mv_words, kp, mc, seed_c, seed_s,
                      use_verify, addr):
            return True
    return False


@jit_mut
def jaccard_insert(sig: np.ndarray, k: int, L: int, S: int, rows: np.ndarray, bml_words: np.ndarray,
                   physical: bool, mask: np.uint64, mv_words: np.ndarray, kp: int, mc: np.uint64,
                   seed_c: np.uint64, seed_s: np.uint64) -> int:
    """Insert every signature row (skipping documents without shingles); returns how many."""
    addr = np.empty(kp, dtype=np.int64)
    added = 0
    for r in range(sig.shape[0]):
        if sig[r, 0] == EMPTY_SIG:
            continue
        for j in range(L):
            _band_insert(sig, r, j, k, rows, S, bml_words, physical, mask, mv_words, kp, mc, seed_c, seed_s, addr)
        added += 1
    return added


@jit_read
def jaccard_query(sig: np.ndarray, k: int, L: int, S: int, rows: np.ndarray, level: int,
                  bml_words: np.ndarray, physical: bool, mask: np.uint64, mv_words: np.ndarray, kp: int,
                  mc: np.uint64, seed_c: np.uint64, seed_s: np.uint64, use_verify: bool) -> np.ndarray:
    """Is each document near a stored one at ``level`` (some band passes)? Empty: False."""
    n = sig.shape[0]
    out = np.zeros(n, dtype=np.bool_)
    addr = np.empty(kp, dtype=np.int64)
    for r in range(n):
        if sig[r, 0] != EMPTY_SIG:
            out[r] = _doc_pass(sig, r, k, L, rows, S, level, bml_words, physical, mask, mv_words, kp, mc, seed_c,
                               seed_s, use_verify, addr)
    return out


@jit_read
def jaccard_band_pass(sig: np.ndarray, k: int, L: int, S: int, rows: np.ndarray, level: int,
                      bml_words: np.ndarray, mask: np.uint64) -> np.ndarray:
    """(n, L) bool: which bands pass the BMLBF alone at ``level`` (Theorems 5-6's alpha)."""
    n = sig.shape[0]
    out = np.zeros((n, L), dtype=np.bool_)
    addr = np.empty(1, dtype=np.int64)
    for r in range(n):
        if sig[r, 0] == EMPTY_SIG:
            continue
        for j in range(L):
            out[r, j] = _band_pass(sig, r, j, k, rows, S, level, bml_words, True, mask, bml_words, 1,
                                   U64(1), U64(0), U64(0), False, addr)
    return out


@jit_mut
def jaccard_seen(sig: np.ndarray, k: int, L: int, S: int, rows: np.ndarray, level: int,
                 bml_words: np.ndarray, physical: bool, mask: np.uint64, mv_words: np.ndarray, kp: int,
                 mc: np.uint64, seed_c: np.uint64, seed_s: np.uint64) -> np.ndarray:
    """Stream order: for each document, is it near one stored before it (at ``level``)? Then
    store it. Documents without shingles are neither reported nor stored."""
    n = sig.shape[0]
    out = np.zeros(n, dtype=np.bool_)
    addr = np.empty(kp, dtype=np.int64)
    for r in range(n):
        if sig[r, 0] == EMPTY_SIG:
            continue
        out[r] = _doc_pass(sig, r, k, L, rows, S, level, bml_words, physical, mask, mv_words, kp, mc, seed_c, seed_s,
                           True, addr)
        for j in range(L):
            _band_insert(sig, r, j, k, rows, S, bml_words, physical, mask, mv_words, kp, mc, seed_c, seed_s, addr)
    return out
