"""numba kernels of the parallel Bloom filter (document 004): probe positions of p attributes
(the foundation's :func:`bloomkit._engine.kernels.probe` + :func:`bloomkit._engine.kernels.fastmod`),
fused counter update + verification value, the two-step query, and an open-addressing
multiset of verification values (the "hash table" of Fig. 1).

Counter layout: counter ``(i, j, x)`` (attribute i, hash function j, position x in [0, m))
lives at flat index ``(i*q + j)*m + x`` of one :class:`bloomkit._engine.storage.CounterArray`
(4-bit counters packed two per byte, as in :mod:`bloomkit._engine.kernels`). Kernels are compiled
lazily and cached on disk (``cache=True``), never at import.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._engine import counters as KC
from .._engine import kernels as K
from .._engine.jit import GOLDEN, jit_inline, jit_mut, jit_read, splitmix64

U64 = np.uint64
TABLE_MAX_LOAD = 0.7
"""Largest load factor of the verification table (slots holding a key / slots)."""
TABLE_MAX_ITEMS = (1 << 31) - 1
"""Most values (counting multiplicity) a verification table holds: its counts are int32."""


# ---------------------------------------------------------------------------------------------
# verification values and the two-step check on precomputed positions (the MD5 hash and the
# experiments)


@jit_read
def verification_values(pos: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """V_a = sum_i sum_j w_j * H_ij(a_i) for every item (int64)."""
    n, p, q = pos.shape
    out = np.empty(n, dtype=np.int64)
    for r in range(n):
        v = np.int64(0)
        for i in range(p):
            for j in range(q):
                v += weights[j] * pos[r, i, j]
        out[r] = v
    return out


@jit_mut
def pbf_add(data: np.ndarray, width: int, maxval: int, pos: np.ndarray, m: int,
            weights: np.ndarray, vals: np.ndarray) -> bool:
    """Fig. 2: PBF[H_ij(a_i)]++ for every item and V_a into ``vals``; True if a counter saturated."""
    n, p, q = pos.shape
    over = False
    for r in range(n):
        v = np.int64(0)
        for i in range(p):
            for j in range(q):
                x = pos[r, i, j]
                idx = np.int64((i * q + j) * m + x)
                c = KC.cget(data, width, idx)
                if c >= maxval:
                    over = True
                else:
                    KC.cset(data, width, idx, c + 1)
                v += weights[j] * x
        vals[r] = v
    return over


@jit_read
def pbf_probe(data: np.ndarray, width: int, pos: np.ndarray, m: int,
              weights: np.ndarray, passed: np.ndarray, vals: np.ndarray) -> None:
    """First step of Fig. 3: ``passed[r]`` iff all p*q counters are non-zero; V_a into ``vals``."""
    n, p, q = pos.shape
    for r in range(n):
        ok = True
        v = np.int64(0)
        for i in range(p):
            for j in range(q):
                x = pos[r, i, j]
                if ok and KC.cget(data, width, np.int64((i * q + j) * m + x)) == 0:
                    ok = False
                v += weights[j] * x
        passed[r] = ok
        vals[r] = v


@jit_read
def attribute_probe(data: np.ndarray, width: int, pos: np.ndarray, i: int, q: int, m: int) -> np.ndarray:
    """True where all q counters of submatrix i are non-zero for (n, q) positions ``pos``."""
    n = pos.shape[0]
    out = np.empty(n, dtype=np.bool_)
    for r in range(n):
        ok = True
        for j in range(q):
            if KC.cget(data, width, np.int64((i * q + j) * m + pos[r, j])) == 0:
                ok = False
                break
        out[r] = ok
    return out


@jit_read
def array_stats(data: np.ndarray, width: int, arrays: int, m: int) -> tuple[np.ndarray, np.ndarray]:
    """Sum and number of non-zero counters of each of the p*q arrays (one pass)."""
    sums = np.zeros(arrays, dtype=np.int64)
    nonzero = np.zeros(arrays, dtype=np.int64)
    for a in range(arrays):
        s = np.int64(0)
        nz = np.int64(0)
        for x in range(m):
            v = KC.cget(data, width, np.int64(a * m + x))
            s += v
            if v != 0:
                nz += 1
        sums[a] = s
        nonzero[a] = nz
    return sums, nonzero


# ---------------------------------------------------------------------------------------------
# the verification table: open addressing (linear probing) over uint32 or int64 keys with int32
# counts; ``empty`` (all ones: 2^32 - 1 or -1) marks a free slot.
# A key whose count dropped to 0 keeps its slot (so probe chains stay intact) until a rebuild.


@jit_inline
def _slot(v: np.int64, mask: np.uint64) -> np.int64:
    return np.int64(splitmix64(U64(v) + GOLDEN) & mask)


@jit_inline
def _find(keys: np.ndarray, v: np.int64, mask: np.uint64, empty: Any) -> np.int64:
    """Slot holding v, or the empty slot where v would go."""
    s = _slot(v, mask)
    while True:
        k = keys[s]
        if k == v or k == empty:
            return s
        s = (s + 1) & np.int64(mask)


@jit_mut
def table_add(keys: np.ndarray, counts: np.ndarray, vals: np.ndarray, mult: np.ndarray, empty: Any) -> np.int64:
    """Add ``mult[t]`` copies of ``vals[t]``; returns ``new_slots * 2^32 + newly_live_keys``.

    The caller guarantees enough empty slots (load factor kept below 0.7).
    """
    mask = U64(keys.shape[0] - 1)
    new = np.int64(0)
    live = np.int64(0)
    for t in range(vals.shape[0]):
        s = _find(keys, vals[t], mask, empty)
        if keys[s] == empty:
            keys[s] = vals[t]
            new += 1
        if counts[s] == 0:
            live += 1
        counts[s] += mult[t]
    return new * (np.int64(1) << 32) + live


@jit_read
def table_count(keys: np.ndarray, counts: np.ndarray, vals: np.ndarray, empty: Any) -> np.ndarray:
    """Multiplicity of every value (0 if absent)."""
    mask = U64(keys.shape[0] - 1)
    out = np.zeros(vals.shape[0], dtype=np.int64)
    for t in range(vals.shape[0]):
        s = _find(keys, vals[t], mask, empty)
        if keys[s] != empty:
            out[t] = counts[s]
    return out


@jit_read
def table_contains_masked(keys: np.ndarray, counts: np.ndarray, vals: np.ndarray,
                          passed: np.ndarray, empty: Any) -> np.ndarray:
    """Second step of Fig. 3: True where ``passed`` and the value has a positive count."""
    mask = U64(keys.shape[0] - 1)
    out = np.zeros(vals.shape[0], dtype=np.bool_)
    for t in range(vals.shape[0]):
        if passed[t]:
            s = _find(keys, vals[t], mask, empty)
            out[t] = keys[s] != empty and counts[s] > 0
    return out


@jit_mut
def table_remove(keys: np.ndarray, counts: np.ndarray, vals: np.ndarray, empty: Any) -> np.int64:
    """Remove one copy of each value, all or nothing; -1 on success, else the failing index."""
    mask = U64(keys.shape[0] - 1)
    for t in range(vals.shape[0]):
        s = _find(keys, vals[t], mask, empty)
        if keys[s] == empty or counts[s] <= 0:
            for u in range(t):
                counts[_find(keys, vals[u], mask, empty)] += 1
            return t
        counts[s] -= 1
    return -1


@jit_read
def table_rehash(keys: np.ndarray, counts: np.ndarray, new_keys: np.ndarray, new_counts: np.ndarray,
                 empty: Any) -> np.int64:
    """Move every live (count > 0) entry into the new arrays; returns the number moved."""
    mask = U64(new_keys.shape[0] - 1)
    moved = np.int64(0)
    for s in range(keys.shape[0]):
        if keys[s] != empty and counts[s] > 0:
            d = _find(new_keys, keys[s], mask, empty)
            new_keys[d] = keys[s]
            new_counts[d] = counts[s]
            moved += 1
    return moved


@jit_read
def table_probe_ok(keys: np.ndarray, empty: Any) -> np.int64:
    """-1 if every used key is reachable from its home slot without crossing an empty slot."""
    mask = U64(keys.shape[0] - 1)
    for s in range(keys.shape[0]):
        if keys[s] != empty:
            if _find(keys, keys[s], mask, empty) != s:
                return s
    return -1


# ---------------------------------------------------------------------------------------------
# the default hash ("xxh64"): the foundation's probe positions, fused with the counter updates


@jit_read
def positions_xxh64(h1: np.ndarray, q: int, m: np.uint64) -> np.ndarray:
    """(n, p, q) int64 positions from a (p, n) uint64 array of per-attribute h1 values.

    Position j of attribute i is ``fastmod(probe(h1[i], j), m)`` = ``G_j mod m``, exactly
    :func:`bloomkit._engine.kernels.positions` of that attribute's h1 (q independent SplitMix64
    words per attribute, like the paper's four MD5 words).
    """
    M = K.reducer(m)
    p, n = h1.shape
    out = np.empty((n, p, q), dtype=np.int64)
    for r in range(n):
        for i in range(p):
            h = h1[i, r]
            for j in range(q):
                out[r, i, j] = np.int64(K.fastmod(K.probe(h, j), m, M))
    return out


@jit_mut
def pbf_add_xxh64(data: np.ndarray, width: int, maxval: int, h1: np.ndarray, q: int, m: np.uint64,
                  weights: np.ndarray, vals: np.ndarray) -> bool:
    """:func:`pbf_add` fused with :func:`positions_xxh64` (no position array).

    Array-major order: one pass over the batch per array (i, j), so the counters touched by a
    pass (one array, m counters) stay in cache.
    """
    M = K.reducer(m)
    p, n = h1.shape
    mi = np.int64(m)
    over = False
    for r in range(n):
        vals[r] = 0
    for i in range(p):
        for j in range(q):
            base = (i * q + j) * mi
            w = weights[j]
            for r in range(n):
                x = np.int64(K.fastmod(K.probe(h1[i, r], j), m, M))
                idx = base + x
                c = KC.cget(data, width, idx)
                if c >= maxval:
                    over = True
                else:
                    KC.cset(data, width, idx, c + 1)
                vals[r] += w * x
    return over


@jit_read
def pbf_probe_xxh64(data: np.ndarray, width: int, h1: np.ndarray, q: int, m: np.uint64,
                    weights: np.ndarray, passed: np.ndarray, vals: np.ndarray) -> None:
    """:func:`pbf_probe` fused with :func:`positions_xxh64`, array-major; items that met a
    zero counter are skipped in the later passes (their V is then not needed)."""
    M = K.reducer(m)
    p, n = h1.shape
    mi = np.int64(m)
    for r in range(n):
        passed[r] = True
        vals[r] = 0
    for i in range(p):
        for j in range(q):
            base = (i * q + j) * mi
            w = weights[j]
            for r in range(n):
                if passed[r]:
                    x = np.int64(K.fastmod(K.probe(h1[i, r], j), m, M))
                    if KC.cget(data, width, base + x) == 0:
                        passed[r] = False
                    else:
                        vals[r] += w * x


# ---------------------------------------------------------------------------------------------
# one item ("xxh64"): everything after the hashing in one call (the single add / `in`)


@jit_inline
def _item_position(h: np.uint64, j: int, m: np.uint64, M: np.uint64) -> np.int64:
    return np.int64(K.fastmod(K.probe(h, j), m, M))


@jit_mut
def pbf_add_item(data: np.ndarray, width: int, maxval: int, h1: np.ndarray, q: int, m: int,
                 weights: np.ndarray, keys: np.ndarray, counts: np.ndarray, stats: np.ndarray,
                 empty: int) -> int:
    """Fig. 2 for one item of p h1 values: PBF[H_ij(a_i)]++ and V_a into the verification
    table, in one GIL-holding call (``stats``: the table's [used slots, distinct, total],
    ``empty`` its free-slot key as an int).

    Returns -1 with nothing changed when the table is full or must grow first (above
    :data:`TABLE_MAX_LOAD`), else 1 if a counter saturated, else 0.

    C twin: ``item_insert`` of _speedups.c, section "ItemCore".
    """
    if stats[2] >= TABLE_MAX_ITEMS or stats[0] + 1 > TABLE_MAX_LOAD * keys.shape[0]:
        return -1
    mu = U64(m)
    M = K.reducer(mu)
    mi = np.int64(m)
    over = 0
    v = np.int64(0)
    for i in range(h1.shape[0]):
        for j in range(q):
            x = _item_position(h1[i], j, mu, M)
            idx = (i * q + j) * mi + x
            c = KC.cget(data, width, idx)
            if c >= maxval:
                over = 1
            else:
                KC.cset(data, width, idx, c + 1)
            v += weights[j] * x
    one = np.ones(1, dtype=np.int64)
    packed = table_add(keys, counts, np.full(1, v, dtype=np.int64), one, empty)
    stats[0] += packed >> 32
    stats[1] += packed & 0xFFFFFFFF
    stats[2] += 1
    return over


@jit_read
def pbf_contains_item(data: np.ndarray, width: int, h1: np.ndarray, q: int, m: int,
                      weights: np.ndarray, keys: np.ndarray, counts: np.ndarray, empty: int) -> bool:
    """The two-step check of Fig. 3 for one item of p h1 values, in one call: all p*q
    counters non-zero, then V_a with a positive count in the table.

    C twin: ``item_test`` of _speedups.c, section "ItemCore".
    """
    mu = U64(m)
    M = K.reducer(mu)
    mi = np.int64(m)
    v = np.int64(0)
    for i in range(h1.shape[0]):
        for j in range(q):
            x = _item_position(h1[i], j, mu, M)
            if KC.cget(data, width, (i * q + j) * mi + x) == 0:
                return False
            v += weights[j] * x
    s = _find(keys, v, U64(keys.shape[0] - 1), empty)
    return bool(keys[s] != empty and counts[s] > 0)
