"""numba kernels of standard ribbon retrieval, w = 64 (Dillinger and Walzer 2021, Sections 2-3;
Dillinger, Huebschle-Schneider, Sanders, Walzer, SEA 2022, "standard ribbon").

A key x of attempt ``salt`` has the hash ``h = fmix64(h1 + (salt + 1) * GOLDEN ^ RB_SALT)``, a
start ``s(x) = floor(h * (m - 63) / 2^64)`` in [0, m - 64], a 64-bit coefficient row ``c(x)``
with bit 0 set (bit t multiplies slot s + t) and a c-bit check ``fp(x)`` (the top c bits of
``h * FP_MUL``). The solution Z (m slots of c bits) satisfies, for every stored key,
``XOR_{t: bit t of c(x)} Z[s(x) + t] = v(x) XOR fp(x)``; a query returns that XOR with fp(x)
XORed back: v(x) for a stored key, a uniform c-bit word for an absent one.

Construction is on-the-fly banded Gaussian elimination (the paper's Algorithm "insert"): rows
are kept in per-slot arrays C[m] (uint64: the row normalised to start at its pivot slot) and
R[m] (its right-hand side); a new row is XORed with the row at its pivot until it finds an
empty pivot, or becomes 0 (0 = 0: a redundant key, e.g. the same key and value twice; 0 = r:
the system has no solution, the attempt fails). Keys are inserted in order of their start (a
counting sort by 64-slot block) so that the rows touched move through memory. Back-substitution
runs from slot m-1 down, bit-sliced: one 64-bit window of solution bits per result bit.

Z is stored interleaved column-major (the paper's ICML): block b of 64 slots is c words, word j
holding result bit j of the block's 64 slots, so a query reads 2 x c words of two adjacent
blocks and computes each result bit as a parity of 64 bits.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._jit import GOLDEN, U64, jit_inline, jit_read, mulhi64, prefetch
from .._kernels import popcount64
from ._kernels import fmix64

RB_SALT = U64(0x8EBC6AF09C88C6E3)
RB_COEF = U64(0x589965CC75374CC3)
FP_MUL = U64(0x1D8E4E27C47D124F)


@jit_inline
def rb_hash(h1: np.uint64, salt: np.uint64) -> np.uint64:
    return fmix64((h1 + (salt + U64(1)) * GOLDEN) ^ RB_SALT)


@jit_inline
def rb_coef(h: np.uint64) -> np.uint64:
    """c(x): 64 pseudo-random bits, bit 0 set."""
    return fmix64(h ^ RB_COEF) | U64(1)


@jit_inline
def rb_fp(h: np.uint64, c: Any) -> np.uint64:
    """fp(x): the top c bits of h * FP_MUL (0 < c <= 64)."""
    return ((h * FP_MUL) >> U64(63 - c)) >> U64(1)


PREFETCH = 16
"""Keys ahead whose first-layer blocks a query prefetches (each block is c words: c / 8 cache lines)."""


@jit_inline
def _band_insert(C: np.ndarray, R: np.ndarray, slot: Any, cf: np.uint64, r: np.uint64) -> Any:
    """Insert one row: the pivot slot it filled (>= 0), -1 redundant (0 = 0), -2 inconsistent."""
    while True:
        ci = C[slot]
        if ci == U64(0):
            C[slot] = cf
            R[slot] = r
            return slot
        cf ^= ci
        r ^= R[slot]
        if cf == U64(0):
            return np.int64(-1) if r == U64(0) else np.int64(-2)
        tz = np.int64(popcount64((cf & (~cf + U64(1))) - U64(1)))  # trailing zeros of cf
        cf >>= U64(tz)
        slot += tz


@jit_inline
def _back_substitute(C: np.ndarray, R: np.ndarray, m: Any, c: Any) -> np.ndarray:
    """Z from the banded rows, bit-sliced, block by block from the last: within a block of 64
    slots each result bit j runs slot 63 down to 0 with its window of solution bits in a
    register (empty slots get 0)."""
    Z = np.zeros((m // 64) * c, dtype=np.uint64)
    state = np.zeros(c, dtype=np.uint64)
    for b in range(m // 64 - 1, -1, -1):
        base = b * 64
        for j in range(c):
            st = state[j]
            for i in range(63, -1, -1):
                st = (st << U64(1)) | U64((popcount64((st << U64(1)) & C[base + i])
                                           + np.int64((R[base + i] >> U64(j)) & U64(1))) & 1)
            state[j] = st
            Z[b * c + j] = st
    return Z


@jit_read
def rb_build_bumped(
    h1s: np.ndarray, vals: np.ndarray, salt: np.uint64, m: int, c: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """One layer of bumped ribbon (BuRR, Dillinger et al. SEA 2022, with a one-byte threshold per
    bucket): buckets of 64 start positions, solved left to right; in each bucket the keys are
    inserted by decreasing offset (start mod 64), and at the first row that cannot be inserted
    every key of the bucket with that offset or a lower one is *bumped* to the next layer (the
    rows of that offset already placed are taken back: an insertion only fills one empty pivot
    slot, so clearing those slots restores the system). ``thr[b]`` = 1 + the bumping offset
    (0: nothing bumped); a query whose offset is below ``thr[b]`` asks the next layer.

    Keys are counting-sorted by start (8 bytes per slot of positions, 16 per key of hashes and
    key indices). Returns (Z, thresholds, indices of the bumped keys, redundant rows)."""
    n = h1s.shape[0]
    nb = m // 64
    starts = U64(m - 63)
    cmask = (U64(1) << U64(c)) - U64(1) if c < 64 else ~U64(0)
    pos = np.zeros(m + 1, dtype=np.int64)
    for i in range(n):
        pos[np.int64(mulhi64(rb_hash(h1s[i], salt), starts)) + 1] += 1  # type: ignore[call-arg]
    for q in range(m):
        pos[q + 1] += pos[q]
    hs = np.empty(n, dtype=np.uint64)
    ks = np.empty(n, dtype=np.int64)
    for i in range(n):
        h = rb_hash(h1s[i], salt)
        q = np.int64(mulhi64(h, starts))  # type: ignore[call-arg,assignment]
        hs[pos[q]] = h
        ks[pos[q]] = i
        pos[q] += 1
    # now pos[q] = end of the keys starting at q; bucket b = [pos[64 b - 1], pos[64 b + 63])
    C = np.zeros(m, dtype=np.uint64)
    R = np.zeros(m, dtype=np.uint64)
    thr = np.zeros(nb, dtype=np.uint8)
    bumped = np.empty(n, dtype=np.int64)
    nbumped = 0
    redundant = 0
    placed = np.empty(64, dtype=np.int64)  # pivots of the current offset's rows (<= 64 distinct)
    for b in range(nb):
        lo = pos[64 * b - 1] if b > 0 else 0
        hi = pos[min(64 * b + 63, m - 64)]
        cur = -1
        top = hi - 1
        nplaced = 0
        for t in range(hi - 1, lo - 1, -1):
            h = hs[t]
            slot = np.int64(mulhi64(h, starts))  # type: ignore[call-arg]
            if slot & 63 != cur:
                cur = slot & 63
                top = t
                nplaced = 0
            got = _band_insert(C, R, slot, rb_coef(h), (vals[ks[t]] ^ rb_fp(h, c)) & cmask)
            if got >= 0:
                placed[nplaced] = got
                nplaced += 1
            elif got == -1:
                redundant += 1
            else:
                for q in range(nplaced):
                    C[placed[q]] = U64(0)
                    R[placed[q]] = U64(0)
                thr[b] = np.uint8(cur + 1)
                for q in range(lo, top + 1):
                    bumped[nbumped] = ks[q]
                    nbumped += 1
                break
    return _back_substitute(C, R, m, c), thr, bumped[:nbumped], redundant


@jit_read
def rb_build(h1s: np.ndarray, vals: np.ndarray, salt: np.uint64, m: int, c: int) -> tuple[np.ndarray, int, int]:
    """Standard ribbon: band every key's row (keys counting-sorted by 64-slot block), then
    back-substitute. Returns (Z, redundant rows, status): status 0 = solved, 1 = no solution (Z
    is then empty). ``vals`` are uint64 values (zeros for a filter)."""
    n = h1s.shape[0]
    nb = m // 64
    starts = U64(m - 63)
    cmask = (U64(1) << U64(c)) - U64(1) if c < 64 else ~U64(0)
    pos = np.zeros(nb + 1, dtype=np.int64)
    for i in range(n):
        s = np.int64(mulhi64(rb_hash(h1s[i], salt), starts))  # type: ignore[call-arg]
        pos[(s >> 6) + 1] += 1
    for b in range(nb):
        pos[b + 1] += pos[b]
    hs = np.empty(n, dtype=np.uint64)
    vs = np.empty(n, dtype=np.uint64)
    for i in range(n):
        h = rb_hash(h1s[i], salt)
        b = np.int64(mulhi64(h, starts)) >> 6  # type: ignore[call-arg,assignment]
        hs[pos[b]] = h
        vs[pos[b]] = vals[i]
        pos[b] += 1
    C = np.zeros(m, dtype=np.uint64)
    R = np.zeros(m, dtype=np.uint64)
    redundant = 0
    for k in range(n):
        h = hs[k]
        got = _band_insert(C, R, np.int64(mulhi64(h, starts)), rb_coef(h),  # type: ignore[call-arg]
                           (vs[k] ^ rb_fp(h, c)) & cmask)
        if got == -2:
            return np.zeros(0, dtype=np.uint64), redundant, 1
        if got == -1:
            redundant += 1
    return _back_substitute(C, R, m, c), redundant, 0


@jit_read
def rb_query(
    h1s: np.ndarray, Z: np.ndarray, zoff: np.ndarray, thr: np.ndarray, toff: np.ndarray, ms: np.ndarray,
    salts: np.ndarray, c: int, out: np.ndarray,
) -> None:
    """out[i] = XOR of key i's row with its layer's Z, XOR fp: its value if stored (0 for a
    filter's key). Layer l holds slots ``ms[l]``, words ``Z[zoff[l]:zoff[l + 1]]`` and, when
    bumped, one threshold byte per bucket ``thr[toff[l]:toff[l + 1]]``; a key whose offset is
    below its bucket's threshold asks the next layer. The first layer's blocks of key
    i + PREFETCH are prefetched while key i is answered."""
    n = h1s.shape[0]
    layers = ms.shape[0]
    m0 = U64(ms[0] - 63)
    last0 = (ms[0] // 64 - 1) * c
    for i in range(n + PREFETCH):
        if i < n:
            s = np.int64(mulhi64(rb_hash(h1s[i], salts[0]), m0))  # type: ignore[call-arg]
            b0 = (s >> 6) * c
            for q in range(0, min(2 * c, last0 + c - b0), 8):
                prefetch(Z, b0 + q)
        k = i - PREFETCH
        if k < 0:
            continue
        for lay in range(layers):
            h = rb_hash(h1s[k], salts[lay])
            m = ms[lay]
            s = np.int64(mulhi64(h, U64(m - 63)))  # type: ignore[call-arg]
            if toff[lay + 1] > toff[lay] and lay + 1 < layers and (s & 63) < thr[toff[lay] + (s >> 6)]:
                continue
            cf = rb_coef(h)
            off = U64(s & 63)
            b0 = zoff[lay] + (s >> 6) * c
            b1 = min(b0 + c, zoff[lay] + (m // 64 - 1) * c)
            g = U64(0)
            for j in range(c):
                w = (Z[b0 + j] >> off) | ((Z[b1 + j] << U64(1)) << (U64(63) - off))
                g |= U64(popcount64(w & cf) & 1) << U64(j)
            out[k] = g ^ rb_fp(h, c)
            break
