"""The multi-granularity verification Bloom filter (MVBF) on its own (document 002, Section 5.2).

Stores verification elements xi = j . h_1 ... h_k (an AND-construction index and k level-0
addresses) and answers membership of xi at any level theta = 0..S-1, where xi's level-theta
form is j . (h_1 >> theta) ... (h_k >> theta). Only VVBF 0 (m' bits) is stored; VVBF theta
has m'' = m' / 2^theta virtual locations (Theorem 7). This is the component inside
:class:`~bloomkit.similarity.MLBF`; standalone it reproduces Fig 7 (MVBF vs a naive Bloom
filter holding every level's concatenations, Section 5.1).

The MVBF's hash seeds (:func:`mvbf_seeds`) are defined here and used by every filter that
holds an MVBF, so the MVBF of an MLBF with seed s equals ``MVBF(..., seed=s)`` fed the same
elements.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from .._hashing import tag_seed
from .._protocols import keyword_only
from .._storage import BitArray
from .._validation import SEED, check_int
from ..errors import InvalidParameterError
from . import _kernels as SK
from . import theory
from .spec import AND_WIDTH, NUM_LEVELS, VERIFY_BITS, VERIFY_HASHES, check_levels_fit

__all__ = ["MVBF", "TAG_COARSE", "TAG_SUFFIX", "mvbf_seeds"]

TAG_COARSE = 21
"""Seed tag of the coarse (VVBF S-1) addresses: XXH64 seed ``tag_seed(seed, TAG_COARSE)``."""
TAG_SUFFIX = 22
"""Seed tag of the per-level suffix bits: XXH64 seed ``tag_seed(seed, TAG_SUFFIX) + v * GOLDEN``."""


def mvbf_seeds(seed: int) -> tuple[np.uint64, np.uint64]:
    """(coarse seed, suffix seed) of the MVBF of a structure with hash seed ``seed``.

    Complexity: O(1).

    >>> [int(s) > 0 for s in mvbf_seeds(0)]
    [True, True]
    """
    return np.uint64(tag_seed(seed, TAG_COARSE)), np.uint64(tag_seed(seed, TAG_SUFFIX))


class MVBF:
    """Multi-granularity verification Bloom filter.

    Parameters
    ----------
    verify_bits : int
        m' (a power of two, >= 2^S).
    verify_hashes : int
        k' (1..64).
    num_levels : int
        S.
    seed : int
        Hash seed (the same derivation as inside an MLBF with this seed); keyword-only.

    Notes
    -----
    Thread safety: any number of threads may add and test at once. Insertion is one compiled
    call that keeps the GIL (no bit is lost) and the count is updated under the object's lock;
    tests release the GIL.
    """

    @keyword_only(4)
    def __init__(self, verify_bits: int, verify_hashes: int, num_levels: int, *, seed: int = 0) -> None:
        own = "MVBF"
        self.num_levels = NUM_LEVELS(num_levels, "num_levels", own)
        self.verify_bits = check_levels_fit(VERIFY_BITS(verify_bits, "verify_bits", own), self.num_levels,
                                            "verify_bits", own)
        self.verify_hashes = VERIFY_HASHES(verify_hashes, "verify_hashes", own)
        self.seed = SEED(seed, "seed", own)
        self.bits = BitArray(self.verify_bits)
        self.count = 0
        self._seeds = mvbf_seeds(self.seed)
        self._mc = np.uint64(self.verify_bits >> (self.num_levels - 1))
        self._lock = threading.Lock()

    def _args(self, jvals: Any, addresses: Any, method: str) -> tuple[np.ndarray, np.ndarray]:
        own = f"MVBF.{method}"
        try:
            j = np.ascontiguousarray(jvals, dtype=np.int64)
            a = np.ascontiguousarray(addresses, dtype=np.int64)
        except (TypeError, ValueError, OverflowError):
            raise InvalidParameterError(
                f"The 'addresses' parameter of {own} must be an (n, k) integer array with one j per row. "
                f"Got {type(addresses).__name__} and {type(jvals).__name__} instead."
            ) from None
        if a.ndim != 2 or j.shape != (a.shape[0],):
            raise InvalidParameterError(
                f"The 'addresses' parameter of {own} must be an (n, k) integer array with one j per row. "
                f"Got shapes {j.shape} and {a.shape} instead."
            )
        AND_WIDTH(a.shape[1], "addresses (its number of columns k)", own)
        if a.size and a.min() < 0:
            raise InvalidParameterError(
                f"The 'addresses' parameter of {own} must hold non-negative addresses. Got {int(a.min())} instead."
            )
        return j, a

    def add_many(self, jvals: Any, addresses: Any) -> None:
        """Store xi = j . h_1 ... h_k for every row. Complexity: O(n (k + k' S))."""
        j, a = self._args(jvals, addresses, "add_many")
        with self._lock:
            SK.verify_insert(self.bits.words, j, a, self.num_levels, self.verify_hashes, self._mc, *self._seeds)
            self.count += int(a.shape[0])

    def contains_many(self, jvals: Any, addresses: Any, level: int = 0) -> np.ndarray:
        """Bool array: is j . (h >> theta) in VVBF theta? ``addresses`` are level-0 addresses.

        Complexity: O(n (k + k' S + k' 2^theta / 64)).
        """
        lv = check_int(level, "level", "MVBF.contains_many", lo=0, hi=self.num_levels - 1)
        j, a = self._args(jvals, addresses, "contains_many")
        return SK.verify_test(self.bits.words, j, a, self.num_levels, lv, self.verify_hashes, self._mc,
                              *self._seeds)

    def predicted_fpr(self, level: int = 0) -> float:
        """Theorem 7 (exact form) for the elements stored so far. Complexity: O(1)."""
        lv = check_int(level, "level", "MVBF.predicted_fpr", lo=0, hi=self.num_levels - 1)
        return float(theory.mvbf_fpr(self.count, self.verify_bits, self.verify_hashes, lv))

    def _check(self) -> None:
        assert self.bits.popcount() <= self.verify_hashes * self.count
