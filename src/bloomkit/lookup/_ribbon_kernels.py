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
def rb_fp(h: np.uint64, c: np.int64) -> np.uint64:
    """fp(x): the top c bits of h * FP_MUL (0 < c <= 64)."""
    return ((h * FP_MUL) >> U64(63 - c)) >> U64(1)


@jit_read
def rb_build(h1s: np.ndarray, vals: np.ndarray, salt: np.uint64, m: int, c: int) -> tuple[np.ndarray, int, int]:
    """One attempt: band every key's row, then back-substitute.

    Returns (Z as interleaved words, number of redundant keys, status): status 0 = solved, 1 =
    no solution (the solution array is then empty). ``vals`` are uint64 values (zeros for a
    filter)."""
    n = h1s.shape[0]
    nb = m // 64
    starts = U64(m - 63)
    cmask = (U64(1) << U64(c)) - U64(1) if c < 64 else ~U64(0)
    # counting sort of the keys by the block of their start
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
        s = np.int64(mulhi64(h, starts))  # type: ignore[call-arg]
        b = s >> 6
        hs[pos[b]] = h
        vs[pos[b]] = vals[i]
        pos[b] += 1
    C = np.zeros(m, dtype=np.uint64)
    R = np.zeros(m, dtype=np.uint64)
    redundant = 0
    for k in range(n):
        h = hs[k]
        slot = np.int64(mulhi64(h, starts))  # type: ignore[call-arg]
        cf = rb_coef(h)
        r = (vs[k] ^ rb_fp(h, c)) & cmask
        while True:
            ci = C[slot]
            if ci == U64(0):
                C[slot] = cf
                R[slot] = r
                break
            cf ^= ci
            r ^= R[slot]
            if cf == U64(0):
                if r != U64(0):
                    return np.zeros(0, dtype=np.uint64), redundant, 1
                redundant += 1
                break
            tz = np.int64(popcount64((cf & (~cf + U64(1))) - U64(1)))  # trailing zeros of cf
            cf >>= U64(tz)
            slot += tz
    Z = np.zeros(nb * c, dtype=np.uint64)
    state = np.zeros(c, dtype=np.uint64)
    for i in range(m - 1, -1, -1):
        cf = C[i]
        r = R[i]
        for j in range(c):
            st = state[j] << U64(1)
            st |= U64((popcount64(st & cf) + np.int64((r >> U64(j)) & U64(1))) & 1)
            state[j] = st
        if i & 63 == 0:
            base = (i >> 6) * c
            for j in range(c):
                Z[base + j] = state[j]
    return Z, redundant, 0


PREFETCH = 16
"""Keys ahead whose two blocks a query prefetches (each block is c words: c / 8 cache lines)."""


@jit_inline
def _rb_prefetch(h1: np.uint64, Z: np.ndarray, salt: np.uint64, starts: np.uint64, c: int, last: int) -> None:
    s = np.int64(mulhi64(rb_hash(h1, salt), starts))  # type: ignore[call-arg]
    b0 = (s >> 6) * c
    for q in range(0, min(2 * c, last + c - b0), 8):
        prefetch(Z, b0 + q)


@jit_read
def rb_query(h1s: np.ndarray, Z: np.ndarray, salt: np.uint64, m: int, c: int, out: np.ndarray) -> None:
    """out[i] = XOR of key i's row with Z, XOR fp: its value if stored (0 for a filter's key).
    The blocks of key i + PREFETCH are prefetched while key i is answered."""
    starts = U64(m - 63)
    last = (m // 64 - 1) * c
    n = h1s.shape[0]
    for i in range(min(PREFETCH, n)):
        _rb_prefetch(h1s[i], Z, salt, starts, c, last)
    for i in range(n):
        if i + PREFETCH < n:
            _rb_prefetch(h1s[i + PREFETCH], Z, salt, starts, c, last)
        h = rb_hash(h1s[i], salt)
        s = np.int64(mulhi64(h, starts))  # type: ignore[call-arg]
        cf = rb_coef(h)
        off = U64(s & 63)
        b0 = (s >> 6) * c
        b1 = min(b0 + c, last)
        g = U64(0)
        for j in range(c):
            w = (Z[b0 + j] >> off) | ((Z[b1 + j] << U64(1)) << (U64(63) - off))
            g |= U64(popcount64(w & cf) & 1) << U64(j)
        out[i] = g ^ rb_fp(h, c)
