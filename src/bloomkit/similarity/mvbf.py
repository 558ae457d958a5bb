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

import functools
import math
import threading
from typing import Any

import numpy as np

from .._engine import kernels as K
from .._engine.hashing import tag_seed
from .._engine.jit import GOLDEN
from .._engine.storage import BitArray
from .._validation import SEED, InvariantError, Options, check_int
from ..errors import InvalidParameterError
from . import _kernels as SK
from . import theory
from .spec import AND_WIDTH, NUM_LEVELS, VERIFY_BITS, VERIFY_HASHES, check_levels_fit

__all__ = ["MVBF", "TAG_COARSE", "TAG_SUFFIX", "mvbf_seeds", "suffix_model", "verification_fpr"]

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


MAX_SLICE_BITS = 20
"""Above this AND width k the 2^k slice values are not enumerated: the suffix bits are then
uniform to within 2^-(k/2) / 2 and Theorem 7 is used as it is."""
_MAX_CLASSES = 1 << 16
"""Suffix-code classes enumerated exactly; beyond, a fixed seeded sample of slices stands in."""
_MODELS = Options("seed", "theorem7")


@functools.lru_cache(maxsize=1024)
def suffix_model(suffix_seed: int, and_width: int, verify_hashes: int, num_levels: int,
                 level: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The suffix bits of VVBF ``level`` for one hash seed: ``(bit_probs, codes, weights)`` of
    :func:`bloomkit.similarity.theory.verification_pass_probability`.

    The suffix bits of level v (v = 1..S-1-theta) are the low k' bits of
    XXH64(slice, suffix_seed + v * golden) over the 2^k slice values (the kernel's hash, see
    :mod:`bloomkit.similarity._kernels`): ``bit_probs[v-1, i]`` is the fraction of slices giving
    bit i = 1. A query's slices are uniform and independent across levels, so its k' codes are
    fixed by the tuple of its per-level k'-bit patterns: ``codes`` has one row per distinct tuple,
    ``weights`` its probability (exact while at most 2^16 tuples arise, else a seeded sample of
    2^16 slice tuples with equal weights). k > 20 (bits uniform to 2^-11) gives the uniform
    model, Theorem 7. The arrays are read-only (cached).

    Complexity: O(2^k (S-1) + N k'), N <= 2^16 rows; cached per argument tuple.
    """
    k, kp, V = and_width, verify_hashes, num_levels - 1 - level
    if V <= 0 or k > MAX_SLICE_BITS:
        return _uniform_model(max(V, 0), kp)
    slices = np.arange(1 << k, dtype=np.uint64)
    low = np.uint64((1 << kp) - 1) if kp < 64 else np.uint64(2**64 - 1)
    masks = []  # per level: the k'-bit pattern of every slice
    for v in range(1, V + 1):
        seed_v = np.uint64((suffix_seed + v * int(GOLDEN)) % (1 << 64))
        masks.append(K.hash_u64(slices, seed_v) & low)
    shifts = np.arange(kp, dtype=np.uint64)
    bits = np.array([((mv[:, None] >> shifts) & np.uint64(1)).mean(axis=0) for mv in masks])
    patterns, probs = [], []
    for mv in masks:
        u, c = np.unique(mv, return_counts=True)
        patterns.append(u)
        probs.append(c / len(mv))
    if math.prod(len(u) for u in patterns) <= _MAX_CLASSES:
        grids = np.meshgrid(*[np.arange(len(u)) for u in patterns], indexing="ij")
        idx = [g.ravel() for g in grids]
        rows = np.stack([patterns[v][idx[v]] for v in range(V)], axis=1)
        weights = np.prod(np.stack([probs[v][idx[v]] for v in range(V)], axis=1), axis=1)
    else:
        rng = np.random.default_rng([suffix_seed, and_width, verify_hashes, num_levels, level])
        rows = np.stack([mv[rng.integers(0, len(mv), _MAX_CLASSES)] for mv in masks], axis=1)
        weights = np.full(_MAX_CLASSES, 1.0 / _MAX_CLASSES)
    return _frozen(bits, _codes(rows, kp), weights)


def _codes(rows: np.ndarray, kp: int) -> np.ndarray:
    """(N, k') suffix codes from (N, V) per-level k'-bit patterns: bit V-v of code i is bit i of
    the level-v pattern (the first level appended first, the most significant)."""
    V = rows.shape[1]
    codes = np.zeros((rows.shape[0], kp), dtype=np.int64)
    for v in range(V):
        bit = ((rows[:, v : v + 1] >> np.arange(kp, dtype=np.uint64)) & np.uint64(1)).astype(np.int64)
        codes = codes * 2 + bit
    return codes


def _uniform_model(V: int, kp: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Uniform suffix bits (Theorem 7): every suffix is equally crowded, so one code row does."""
    return _frozen(np.full((V, kp), 0.5), np.zeros((1, kp), dtype=np.int64), np.ones(1))


def _frozen(*arrays: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    for a in arrays:
        a.setflags(write=False)
    return arrays[0], arrays[1], arrays[2]


def verification_fpr(num_elements: float, verify_bits: int, verify_hashes: int, num_levels: int,
                     level: int, seed: int, and_width: int, *, exact: bool = True) -> float:
    """The false positive rate of VVBF ``level`` of the MVBF with hash seed ``seed`` holding
    ``num_elements`` elements of AND width k: Theorem 7 with the seed's suffix bits
    (:func:`suffix_model`, :func:`bloomkit.similarity.theory.verification_pass_probability`).
    At the coarsest level (no suffix bits) it is Theorem 7. ``exact=False`` takes Theorem 7's
    exponential form (Theorem 8's).

    Complexity: O(2^k S + N k'), cached per (seed, k, k', S, level) after the first call.

    >>> from bloomkit.similarity import theory
    >>> a, b = verification_fpr(2000, 65536, 1, 5, 4, 0, 5), theory.mvbf_fpr(2000, 65536, 1, 4)
    >>> abs(a - b) < 1e-12   # the coarsest level: Theorem 7
    True
    >>> round(verification_fpr(2000, 65536, 1, 5, 0, 5, 5) / theory.mvbf_fpr(2000, 65536, 1, 0), 2)
    1.38
    """
    bits, codes, weights = suffix_model(int(mvbf_seeds(seed)[1]), and_width, verify_hashes, num_levels, level)
    return theory.verification_pass_probability(num_elements, verify_bits >> (num_levels - 1), bits, codes,
                                                weights, exact=exact)


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

    def __init__(self, verify_bits: int, verify_hashes: int, num_levels: int, *, seed: int = 0) -> None:
        own = "MVBF"
        self.num_levels = NUM_LEVELS(num_levels, "num_levels", own)
        self.verify_bits = check_levels_fit(VERIFY_BITS(verify_bits, "verify_bits", own), self.num_levels,
                                            "verify_bits", own)
        self.verify_hashes = VERIFY_HASHES(verify_hashes, "verify_hashes", own)
        self.seed = SEED(seed, "seed", own)
        self.bits = BitArray(self.verify_bits)
        self.count = 0
        self.and_width: int | None = None  # k of the elements stored (their address columns)
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
            if a.shape[0]:
                self.and_width = a.shape[1] if self.and_width is None else min(self.and_width, a.shape[1])

    def contains_many(self, jvals: Any, addresses: Any, level: int = 0) -> np.ndarray:
        """Bool array: is j . (h >> theta) in VVBF theta? ``addresses`` are level-0 addresses.

        Complexity: O(n (k + k' S + k' 2^theta / 64)).
        """
        lv = check_int(level, "level", "MVBF.contains_many", lo=0, hi=self.num_levels - 1)
        j, a = self._args(jvals, addresses, "contains_many")
        return SK.verify_test(self.bits.words, j, a, self.num_levels, lv, self.verify_hashes, self._mc,
                              *self._seeds)

    def predicted_fpr(self, level: int = 0, *, model: str = "seed") -> float:
        """The false positive rate of VVBF theta for the elements stored so far.

        ``model="seed"`` (default): Theorem 7 (exact form) with this seed's suffix bits
        (:func:`verification_fpr`): a level's suffix bit is a hash of a k-bit slice, only 2^k
        values, so below the coarsest level the bits are not uniform and the rate is 1.0-1.4
        times Theorem 7's, depending on the seed (k = 5, k' = 1). The slices have k bits, k the
        number of address columns of the elements added (the smallest, if widths were mixed).
        ``model="theorem7"``: Theorem 7 as printed (uniform bits).

        Complexity: O(2^k S + N k') the first time for a (level, k), then O(2^(S-1-theta) k' + N k')
        (N <= 2^16 code rows).
        """
        own = "MVBF.predicted_fpr"
        lv = check_int(level, "level", own, lo=0, hi=self.num_levels - 1)
        kind = _MODELS(model, "model", own)
        if kind == "theorem7":
            return float(theory.mvbf_fpr(self.count, self.verify_bits, self.verify_hashes, lv))
        if self.and_width is None:
            return 0.0
        return verification_fpr(self.count, self.verify_bits, self.verify_hashes, self.num_levels, lv, self.seed,
                                self.and_width)

    def _check(self) -> None:
        if not (self.bits.popcount() <= self.verify_hashes * self.count):
            raise InvariantError("self.bits.popcount() <= self.verify_hashes * self.count")
