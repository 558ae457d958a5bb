"""numba kernels of :class:`bloomkit.lookup.BloomierFilter`: the peeling (Algorithm 1), the
XOR encoding of Eq. 2.2 and the batch query, over the packed c-bit cells of
:mod:`bloomkit.lookup._kernels` (whose docstring describes the layout; cells of more than 64
bits keep their high bits in ``high``). Compiled on first use, cached on disk.
"""

from __future__ import annotations

import numpy as np

from .._engine.jit import GOLDEN, U64, jit_inline, jit_mut, jit_read, mulhi64
from ._kernels import BL_SALT, fmix64, get_cell, low_mask, set_cell

BL_SALT_HI = U64(0xE7037ED1A0B428DB)


# --------------------------------------------------------------------------- Bloomier filter


@jit_inline
def bl_pos(h1: np.uint64, salt: np.uint64, j: np.int64, block: np.uint64) -> np.int64:
    g = fmix64(h1 + (salt * U64(3) + U64(j) + U64(1)) * GOLDEN)
    return np.int64(j) * np.int64(block) + np.int64(mulhi64(g, block))  # type: ignore[call-arg]


@jit_inline
def bl_fp(h1: np.uint64, salt: np.uint64, mask: np.uint64) -> np.uint64:
    """f(x): the low ``min(c, 64)`` bits of the c-bit fingerprint of Eq. (2.1)."""
    return fmix64(h1 ^ BL_SALT ^ (salt * GOLDEN)) & mask


@jit_inline
def bl_fp_hi(h1: np.uint64, salt: np.uint64, hmask: np.uint64) -> np.uint64:
    """The bits of f(x) above bit 64 (cells wider than 64 bits)."""
    return fmix64(h1 ^ BL_SALT_HI ^ (salt * GOLDEN)) & hmask


@jit_read
def bl_peel(h1s: np.ndarray, salt: np.uint64, block: np.uint64) -> tuple[np.ndarray, np.ndarray, int]:
    """Ordered matching (Algorithm 1) by peeling degree-one cells, with per-cell counts and
    the XOR of incident key indices instead of adjacency lists. Returns (keys, cells, count);
    count < n means failure."""
    n = h1s.shape[0]
    m = 3 * np.int64(block)
    cnt = np.zeros(m, dtype=np.int32)
    xr = np.zeros(m, dtype=np.int64)
    for i in range(n):
        for j in range(3):
            p = bl_pos(h1s[i], salt, j, block)
            cnt[p] += 1
            xr[p] ^= i
    stack = np.empty(m, dtype=np.int64)
    top = 0
    for p in range(m):
        if cnt[p] == 1:
            stack[top] = p
            top += 1
    order_k = np.empty(n, dtype=np.int64)
    order_c = np.empty(n, dtype=np.int64)
    count = 0
    while top > 0:
        top -= 1
        p = stack[top]
        if cnt[p] != 1:
            continue
        i = xr[p]
        order_k[count] = i
        order_c[count] = p
        count += 1
        for j in range(3):
            q = bl_pos(h1s[i], salt, j, block)
            cnt[q] -= 1
            xr[q] ^= i
            if cnt[q] == 1:
                stack[top] = q
                top += 1
    return order_k, order_c, count


@jit_mut
def bl_assign(
    h1s: np.ndarray,
    values: np.ndarray,
    order_k: np.ndarray,
    order_c: np.ndarray,
    salt: np.uint64,
    block: np.uint64,
    words: np.ndarray,
    high: np.ndarray,
    c: int,
    cb: int,
) -> None:
    """Eq. (2.2) in reverse peeling order: A[critical] = v XOR f XOR (other two cells), on
    both parts of cells wider than 64 bits. ``values`` are uint64."""
    mask = low_mask(c)
    hmask = low_mask(cb)
    for t in range(order_k.shape[0] - 1, -1, -1):
        i = order_k[t]
        crit = order_c[t]
        h1 = h1s[i]
        acc = U64(values[i]) ^ bl_fp(h1, salt, mask)
        acc_hi = bl_fp_hi(h1, salt, hmask) if cb > 0 else U64(0)
        for j in range(3):
            p = bl_pos(h1, salt, j, block)
            if p != crit:
                acc ^= get_cell(words, p, c, mask)
                if cb > 0:
                    acc_hi ^= get_cell(high, p, cb, hmask)
        set_cell(words, crit, c, mask, acc)
        if cb > 0:
            set_cell(high, crit, cb, hmask, acc_hi)


@jit_read
def bl_query(
    h1s: np.ndarray,
    words: np.ndarray,
    high: np.ndarray,
    salt: np.uint64,
    block: np.uint64,
    c: int,
    cb: int,
    v_bits: int,
    out: np.ndarray,
) -> None:
    """Eq. (2.1): g = f XOR A[h1] XOR A[h2] XOR A[h3]; ``out`` (uint64) gets g when
    0 < g < 2^V, else 0."""
    mask = low_mask(c)
    hmask = low_mask(cb)
    vmax = low_mask(v_bits)
    for n in range(h1s.shape[0]):
        h1 = h1s[n]
        g = bl_fp(h1, salt, mask)
        for j in range(3):
            g ^= get_cell(words, bl_pos(h1, salt, j, block), c, mask)
        if cb > 0 and g <= vmax:  # cells wider than 64 bits: their high parts must XOR to 0
            gh = bl_fp_hi(h1, salt, hmask)
            for j in range(3):
                gh ^= get_cell(high, bl_pos(h1, salt, j, block), cb, hmask)
            if gh != U64(0):
                g = vmax + U64(1)
        out[n] = g if g <= vmax else U64(0)
