"""Numba kernels of :mod:`bloomkit.folding` (compiled lazily on first call, cached on disk).

Only the number-theoretic sieves live here (folds are the foundation's BitArray.fold); hashing, bit storage and
counter storage are the foundation's (:mod:`bloomkit._engine.hashing`, :mod:`bloomkit._engine.storage`).
"""

from __future__ import annotations

import numpy as np

from .._engine.jit import jit_read

__all__ = ["interval_divisor_counts", "log_smooth_sieve"]


@jit_read
def log_smooth_sieve(x: int, z: int, primes: np.ndarray, logs: np.ndarray) -> np.ndarray:  # pragma: no cover - jitted
    """Sum of ``log p`` over the prime powers ``p^j <= x + z`` dividing ``x + i``.

    The corrected sieve of Section IV-B of doc 003 (see ERRATA.md): for every prime
    ``p <= y`` and every power ``p^j <= x + z`` the multiples of ``p^j`` inside
    ``[x, x + z]`` receive ``log p`` once, so ``w[i]`` is the logarithm of the
    ``y``-smooth part of ``x + i`` (Eq. 13: ``sum_j gamma_j log p_j``).
    """
    w = np.zeros(z + 1, dtype=np.float64)
    top = x + z
    for t in range(primes.shape[0]):
        p = primes[t]
        lp = logs[t]
        q = p
        while q <= top:
            r = x % q
            start = 0 if r == 0 else q - r
            i = start
            while i <= z:
                w[i] += lp
                i += q
            if q > top // p:
                break
            q *= p
    return w


@jit_read
def interval_divisor_counts(x: int, z: int, primes: np.ndarray) -> np.ndarray:  # pragma: no cover - jitted
    """d(m) (Eq. 8 of doc 003) for every m in [x, x + z].

    ``primes`` must hold every prime ``<= sqrt(x + z)``; the cofactor left after dividing
    them out is 1 or a single prime (which contributes a factor 2).
    """
    rem = np.empty(z + 1, dtype=np.int64)
    d = np.ones(z + 1, dtype=np.int64)
    for i in range(z + 1):
        rem[i] = x + i
    top = x + z
    for t in range(primes.shape[0]):
        p = primes[t]
        if p * p > top:
            break
        r = x % p
        i = 0 if r == 0 else p - r
        while i <= z:
            e = 0
            v = rem[i]
            while v != 0 and v % p == 0:  # m = 0 (x = 0) has no finite factorization
                v //= p
                e += 1
            rem[i] = v
            d[i] *= e + 1
            i += p
    for i in range(z + 1):
        if rem[i] > 1:
            d[i] *= 2
    if x == 0:
        d[0] = 0
    return d
