"""The multi-granularity verification Bloom filter (MVBF) on its own (document 002, Section 5.2).

Stores verification elements xi = j . h_1 ... h_k (an AND-construction index and k level-0
addresses) and answers membership of xi at any level theta = 0..S-1, where xi's level-theta
form is j . (h_1 >> theta) ... (h_k >> theta). Only VVBF 0 (m' bits) is stored; VVBF theta
has m'' = m' / 2^theta virtual locations (Theorem 7). This is the component inside
:class:`~bloomkit.similarity.MLBF`; standalone it reproduces Fig 7 (MVBF vs a naive Bloom
filter holding every level's concatenations, Section 5.1).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._hashing import tag_seed
from .._storage import BitArray
from .._validation import check_int
from ..errors import InvalidParameterError
from . import _kernels as SK
from . import theory
from .mlbf import _TAG_COARSE, _TAG_SUFFIX, _log2_exact

__all__ = ["MVBF"]


class MVBF:
    """Multi-granularity verification Bloom filter.

    Parameters
    ----------
    verify_bits : int
        m' (a power of two, >= 2^S).
    verify_hashes : int
        k'.
    num_levels : int
        S.
    seed : int
        Hash seed (the same derivation as inside an MLBF with this seed).
    """

    def __init__(self, verify_bits: int, verify_hashes: int, num_levels: int, seed: int = 0) -> None:
        own = "MVBF"
        self.num_levels = check_int(num_levels, "num_levels", own, lo=1, hi=32)
        self._bp = _log2_exact(verify_bits, "verify_bits", own, self.num_levels, 40)
        self.verify_bits = 1 << self._bp
        self.verify_hashes = check_int(verify_hashes, "verify_hashes", own, lo=1, hi=64)
        self.seed = check_int(seed, "seed", own, lo=0, hi=(1 << 64) - 1)
        self.bits = BitArray(self.verify_bits)
        self.count = 0

    def _args(self, jvals: Any, addresses: Any) -> tuple[np.ndarray, np.ndarray]:
        j = np.ascontiguousarray(jvals, dtype=np.int64)
        a = np.ascontiguousarray(addresses, dtype=np.int64)
        if a.ndim != 2 or j.shape != (a.shape[0],) or a.shape[1] < 1 or a.shape[1] > 63:
            raise InvalidParameterError(
                "The 'addresses' parameter of MVBF must be an (n, k) integer array (1 <= k <= 63) "
                f"with one j per row. Got shapes {j.shape} and {a.shape} instead."
            )
        if a.size and a.min() < 0:
            raise InvalidParameterError(
                "The 'addresses' parameter of MVBF must hold non-negative addresses. "
                f"Got {int(a.min())} instead."
            )
        return j, a

    def add_many(self, jvals: Any, addresses: Any) -> None:
        """Store xi = j . h_1 ... h_k for every row. Complexity: O(n (k + k' S))."""
        j, a = self._args(jvals, addresses)
        SK.verify_elements(self.bits.words, j, a, self.num_levels, 0, self.verify_hashes,
                           np.uint64(self.verify_bits >> (self.num_levels - 1)),
                           np.uint64(tag_seed(self.seed, _TAG_COARSE)),
                           np.uint64(tag_seed(self.seed, _TAG_SUFFIX)), True)
        self.count += int(a.shape[0])

    def contains_many(self, jvals: Any, addresses: Any, level: int = 0) -> np.ndarray:
        """Bool array: is j . (h >> theta) in VVBF theta? ``addresses`` are level-0 addresses.

        Complexity: O(n (k + k' S + k' 2^theta / 64)).
        """
        lv = check_int(level, "level", "MVBF", lo=0, hi=self.num_levels - 1)
        j, a = self._args(jvals, addresses)
        return SK.verify_elements(self.bits.words, j, a, self.num_levels, lv, self.verify_hashes,
                                  np.uint64(self.verify_bits >> (self.num_levels - 1)),
                                  np.uint64(tag_seed(self.seed, _TAG_COARSE)),
                                  np.uint64(tag_seed(self.seed, _TAG_SUFFIX)), False)

    def predicted_fpr(self, level: int = 0) -> float:
        """Theorem 7 for the elements stored so far. Complexity: O(1)."""
        lv = check_int(level, "level", "MVBF", lo=0, hi=self.num_levels - 1)
        return float(theory.mvbf_fpr(self.count, self.verify_bits, self.verify_hashes, lv))

    def _check(self) -> None:
        assert self.bits.popcount() <= self.verify_hashes * self.count
