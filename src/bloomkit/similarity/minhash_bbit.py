"""Verified near-duplicate detection: MinHash band candidates checked by b-bit minwise hashing
(issue 24's false-duplicate target).

An LSBF of the Jaccard family (:class:`~bloomkit.similarity.JaccardLSBF`, LSHBloom) reports a
text as "seen" when one band of r MinHash values agrees with a stored text: with probability
S(s) = 1 - (1 - s^r)^b for a stored text of Jaccard similarity s (the S-curve). Its slope at the
threshold is limited by K = r b: a corpus with many texts just below the threshold (edited copies
at s = 0.7-0.8) gets many false duplicates (6.7 % at t = 0.8 on the benchmark corpus).

:class:`BBitIndex` keeps the bands as candidates and verifies each candidate pair on a second,
independent set of K_v MinHash values stored in ``bits`` bits each (b-bit minwise hashing, Li &
Koenig, WWW 2010): a few bytes per stored text instead of its signature (default 256 values of
2 bits: 64 bytes; at t = 0.8 the estimate's standard deviation is 0.030, against 0.035 for 128
full 64-bit values).

Model (:func:`bbit_collision_probability`, :func:`bbit_accept_probability`,
:func:`verified_report_probability`). Two texts of Jaccard similarity s have equal MinHash
values with probability s; when the values differ, their lowest ``bits`` bits still agree with
probability C = 2^-bits (the minima are 64-bit values, Li & Koenig's C_1 = C_2 = 2^-b in the
limit of sets much smaller than the 2^64 universe). So one b-bit field agrees with probability
P_b(s) = C + (1 - C) s, the K_v fields independently (k-way MinHash: independent
permutations), and the matches M ~ Binomial(K_v, P_b(s)). The unbiased estimate is
s_hat = (M / K_v - C) / (1 - C); a candidate is accepted when s_hat >= t, i.e.
M >= m* = ceil(K_v (C + (1 - C) t)) (:func:`bbit_min_matches`), with probability
A(s) = P[Binomial(K_v, P_b(s)) >= m*]. The band values and the verification values come from
different permutations, so one stored text of similarity s is reported with probability
S(s) A(s) (:func:`verified_report_probability`; several stored texts: one minus the product of
their misses). The verification adds false duplicates only through estimation noise near t:
a text unlike every candidate (s = 0) passes with A(0) = P[Binomial(K_v, C) >= m*], below 1e-90
at the defaults.

Memory: K_v bits / 8 bytes of sketch per stored text (64 at the defaults) and one 8-byte table
slot per band entry (load <= 0.8, a power of two: 10-20 bytes per entry): about K_v bits / 8 + 15 b
bytes per text.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._validation import Int, Options, Real, check_float, check_int, check_reals
from ..errors import InvalidParameterError
from .minhash import MinHasher

__all__ = ["BBitIndex", "bbit_accept_probability", "bbit_collision_probability", "bbit_cut", "bbit_estimate",
           "bbit_min_matches", "select_bbit_parameters", "verified_report_probability"]

BITS = Options(1, 2, 4, 8, 16, 32)
VERIFY_PERM = Int(1, 4096)
THRESHOLD = Real(0, 1, lo_open=True, hi_open=True)
_MAX_LOAD = 0.8
_MAX_IDS = (1 << 32) - 2


def _bits(bits: Any, owner: str) -> int:
    return int(BITS(bits, "bits", owner))


def bbit_collision_probability(similarity: Any, bits: int) -> Any:
    """P_b(s) = C + (1 - C) s with C = 2^-bits: the probability that the lowest ``bits`` bits of
    two texts' MinHash values agree when their Jaccard similarity is s (Li & Koenig 2010,
    Theorem 1, with C_1 = C_2 = 2^-b for 64-bit values).

    Complexity: O(size).

    >>> float(bbit_collision_probability(0.8, 1)), float(bbit_collision_probability(0.8, 4))
    (0.9, 0.8125)
    """
    own = "bbit_collision_probability"
    c = 2.0 ** -_bits(bits, own)
    return c + (1.0 - c) * check_reals(similarity, "similarity", own, 0, 1)


def bbit_min_matches(num_values: int, bits: int, threshold: float) -> int:
    """m* = ceil(K_v (C + (1 - C) t)): the fewest agreeing b-bit fields out of K_v for which the
    unbiased estimate (M / K_v - C) / (1 - C) reaches the threshold t.

    Complexity: O(1).

    >>> bbit_min_matches(128, 4, 0.8)
    104
    """
    own = "bbit_min_matches"
    k = VERIFY_PERM(num_values, "num_values", own)
    c = 2.0 ** -_bits(bits, own)
    t = THRESHOLD(threshold, "threshold", own)
    return min(k, math.ceil(k * (c + (1.0 - c) * t) - 1e-9))


def bbit_cut(num_values: int, bits: int, threshold: float, *, far_gap: float = 0.05, fpr: float = 0.05) -> int:
    """The acceptance count :func:`BBitIndex.for_threshold` uses: the larger of the unbiased
    m* (:func:`bbit_min_matches`) and the smallest m with P[Binomial(K_v, P_b(t - far_gap)) >= m]
    <= ``fpr`` (a candidate at t - far_gap passes the verification alone with probability at
    most ``fpr``: the false-duplicate cost of texts just below the threshold; Neyman-Pearson).

    Complexity: O(1).

    >>> bbit_min_matches(256, 2, 0.8), bbit_cut(256, 2, 0.8)
    (218, 219)
    """
    from scipy.stats import binom

    own = "bbit_cut"
    k = VERIFY_PERM(num_values, "num_values", own)
    t = THRESHOLD(threshold, "threshold", own)
    g = check_float(far_gap, "far_gap", own, 0, 1)
    a = check_float(fpr, "fpr", own, 0, 1, True, True)
    p = float(bbit_collision_probability(max(t - g, 0.0), bits))
    m = int(binom.isf(a, k, p)) + 1  # smallest m with sf(m - 1) <= a
    while m > 1 and float(binom.sf(m - 2, k, p)) <= a:
        m -= 1
    return min(k, max(bbit_min_matches(k, bits, t), m))


def bbit_estimate(matches: Any, num_values: int, bits: int) -> Any:
    """s_hat = (M / K_v - C) / (1 - C), Li & Koenig's unbiased estimator of the Jaccard
    similarity from M agreeing b-bit fields out of K_v (may fall below 0 by chance).

    Complexity: O(size).

    >>> float(bbit_estimate(104, 128, 4))
    0.8
    """
    own = "bbit_estimate"
    k = VERIFY_PERM(num_values, "num_values", own)
    c = 2.0 ** -_bits(bits, own)
    m = check_reals(matches, "matches", own, 0, k)
    return (m / k - c) / (1.0 - c)


def bbit_accept_probability(similarity: Any, num_values: int, bits: int, threshold: float,
                            min_matches: int | None = None) -> Any:
    """A(s) = P[Binomial(K_v, P_b(s)) >= m*]: the probability that a candidate of Jaccard
    similarity s passes the b-bit verification at threshold t (m* = ``min_matches``, default
    the unbiased :func:`bbit_min_matches`).

    Complexity: O(size).

    >>> round(float(bbit_accept_probability(0.8, 128, 4, 0.8)), 3)
    0.554
    >>> float(bbit_accept_probability(0.0, 128, 4, 0.8)) < 1e-50
    True
    """
    from scipy.stats import binom

    own = "bbit_accept_probability"
    k = VERIFY_PERM(num_values, "num_values", own)
    m = bbit_min_matches(k, bits, threshold) if min_matches is None else check_int(min_matches, "min_matches", own, 0, k)
    p = bbit_collision_probability(check_reals(similarity, "similarity", own, 0, 1), bits)
    return binom.sf(m - 1, k, p)


def verified_report_probability(similarity: Any, rows: int, bands: int, num_values: int, bits: int,
                                threshold: float, min_matches: int | None = None) -> Any:
    """S(s) A(s): the probability that a text is reported when one stored text has Jaccard
    similarity s to it and no other is near (S-curve of ``bands`` bands of ``rows`` values,
    :func:`~bloomkit.similarity.theory.s_curve`, times :func:`bbit_accept_probability`).

    Complexity: O(size).

    >>> [round(float(verified_report_probability(s, 10, 7, 128, 4, 0.8)), 3) for s in (0.7, 0.8, 0.9)]
    [0.002, 0.304, 0.95]
    """
    from .theory import s_curve

    own = "verified_report_probability"
    s = check_reals(similarity, "similarity", own, 0, 1)
    r = check_int(rows, "rows", own, 1, 63)
    b = check_int(bands, "bands", own, 1, 4096)
    return s_curve(s, r, b) * bbit_accept_probability(s, num_values, bits, threshold, min_matches)


def select_bbit_parameters(threshold: float, *, fnr: float = 0.05, fpr: float = 0.05, near_gap: float = 0.1,
                           far_gap: float = 0.05, cost_gap: float = 0.2, verify_perm: int = 256, bits: int = 2,
                           max_rows: int = 63, max_bands: int = 1024) -> tuple[int, int]:
    """Rows r and bands b of a :class:`BBitIndex`, chosen on the verified curve S(s) A(s) (the
    false-duplicate cost included), A with the acceptance count :func:`bbit_cut` (far_gap, fpr):
    among the (r, b) with S(t + near_gap) A(t + near_gap) >= 1 - ``fnr``,
    S(t - far_gap) A(t - far_gap) <= ``fpr`` (one stored text at that similarity) and
    S(t - cost_gap) <= ``fpr`` (candidates far below t stay rare: the verification's time), the
    smallest K = r b, then the smallest b. ``near`` above 1 is halfway to 1 and a far similarity
    below 0 is t / 2, as in :func:`~bloomkit.similarity.select_jaccard_parameters`.

    Raises InvalidParameterError when no r <= max_rows, b <= max_bands reaches both (the
    verification alone may not: A(t + near_gap) < 1 - fnr or A(t - far_gap) > fpr).

    Complexity: O(max_bands max_rows).

    >>> select_bbit_parameters(0.8)
    (10, 7)
    """
    own = "select_bbit_parameters"
    t = THRESHOLD(threshold, "threshold", own)
    dn = check_float(fnr, "fnr", own, 0, 1, True, True)
    dp = check_float(fpr, "fpr", own, 0, 1, True, True)
    g1 = check_float(near_gap, "near_gap", own, 0, 1)
    g2 = check_float(far_gap, "far_gap", own, 0, 1)
    g3 = check_float(cost_gap, "cost_gap", own, 0, 1)
    rmax = check_int(max_rows, "max_rows", own, 1, 63)
    bmax = check_int(max_bands, "max_bands", own, 1, 4096)
    verify_perm = VERIFY_PERM(verify_perm, "verify_perm", own)
    bits = _bits(bits, own)
    near = min(t + g1, (t + 1.0) / 2.0)
    far = max(t - g2, t / 2.0)
    cost = max(t - g3, t / 2.0)
    cut = bbit_cut(verify_perm, bits, t, far_gap=t - far, fpr=dp)
    a_near = float(bbit_accept_probability(near, verify_perm, bits, t, cut))
    a_far = float(bbit_accept_probability(far, verify_perm, bits, t, cut))
    best: tuple[int, int] | None = None
    for b in range(1, bmax + 1):
        for r in range(1, rmax + 1):
            s_near = -math.expm1(b * math.log1p(-(near**r)))
            s_far = -math.expm1(b * math.log1p(-(far**r)))
            s_cost = -math.expm1(b * math.log1p(-(cost**r)))
            if s_near * a_near >= 1.0 - dn and s_far * a_far <= dp and s_cost <= dp:
                if best is None or r * b < best[0] * best[1]:
                    best = (r, b)
                break  # more rows only lower S(near)
            if s_near * a_near < 1.0 - dn:
                break
    if best is None:
        raise InvalidParameterError(
            f"{own} cannot reach FNR <= {dn} at s = {near:.3g} and FPR <= {dp} at s = {far:.3g} and {cost:.3g} "
            f"for threshold {t} "
            f"with r <= {rmax}, b <= {bmax}: the verification alone passes {a_near:.3g} at the near similarity "
            f"and {a_far:.3g} at the far one (raise verify_perm or bits, widen the gaps, or relax the rates).")
    return best


class BBitIndex:
    """Near-duplicate index: b bands of r MinHash values find candidates, K_v b-bit MinHash
    values per stored text verify them (see the module docstring for the model).

    Parameters
    ----------
    threshold : float
        Jaccard threshold t in (0, 1): a candidate is accepted when its b-bit estimate reaches t.
    rows, bands : int
        r and b of the candidate bands (:meth:`for_threshold` chooses them).
    verify_perm : int
        K_v, MinHash values per text kept for verification (independent of the band values).
    bits : {1, 2, 4, 8, 16, 32}
        Bits kept of each verification value.
    min_matches : int, optional
        m*, agreeing fields out of K_v to accept a candidate (default: the unbiased
        :func:`bbit_min_matches`; :meth:`for_threshold` uses :func:`bbit_cut`).
    capacity : int
        Texts to make room for (the index grows past it, doubling).
    seed, shingle, ngram, normalize
        The :class:`~bloomkit.similarity.MinHasher` (k-way: K = r b + K_v values per text).

    Notes
    -----
    Thread safety: safe from several threads. Signatures are computed outside the lock (on the
    threads of :mod:`bloomkit._engine.parallel`); the table pass of every method holds one lock (a
    query writes its sketch into a scratch row). Not persisted (no ``save``): it is the engine
    of :func:`~bloomkit.similarity.dedup.dedup`.

    >>> idx = BBitIndex(0.8, rows=10, bands=7)
    >>> idx.seen_many(["the quick brown fox jumps over the lazy dog near the river bank",
    ...                "the quick brown fox jumps over the lazy dog near the river bank!",
    ...                "a different story", ""]).tolist()
    [False, True, False, False]
    >>> len(idx)
    3
    """

    def __init__(self, threshold: float = 0.8, *, rows: int = 10, bands: int = 7, verify_perm: int = 256,
                 bits: int = 2, min_matches: int | None = None, capacity: int = 1024, seed: int = 0,
                 shingle: str = "char", ngram: int | None = None, normalize: bool = True) -> None:
        import threading

        own = "BBitIndex"
        self.threshold: float = THRESHOLD(threshold, "threshold", own)
        self.rows: int = check_int(rows, "rows", own, 1, 63)
        self.bands: int = check_int(bands, "bands", own, 1, 1024)
        self.verify_perm: int = VERIFY_PERM(verify_perm, "verify_perm", own)
        self.bits: int = _bits(bits, own)
        cap = check_int(capacity, "capacity", own, 1, _MAX_IDS)
        self.hasher = MinHasher(self.rows * self.bands + self.verify_perm, shingle=shingle, ngram=ngram,
                                normalize=normalize, seed=seed)
        self.min_matches: int = (bbit_min_matches(self.verify_perm, self.bits, self.threshold) if min_matches is None
                                 else check_int(min_matches, "min_matches", own, 0, self.verify_perm))
        self._words = -(-self.verify_perm * self.bits // 64)
        self._key_seed = np.uint64(self.hasher._dens ^ np.uint64(0x5BD1E9955BD1E995))
        self.count = 0
        self._sketches = np.zeros((cap + 1, self._words), dtype=np.uint64)
        self._entries = 0
        self._table = np.full(1 << self._table_log2(cap * self.bands), 0xFFFFFFFFFFFFFFFF, dtype=np.uint64)
        self._lock = threading.Lock()

    @staticmethod
    def _table_log2(entries: int) -> int:
        return max(4, math.ceil(math.log2(max(1, entries) / _MAX_LOAD)))

    @classmethod
    def for_threshold(cls, threshold: float, capacity: int, *, fnr: float = 0.05, fpr: float = 0.05,
                      near_gap: float = 0.1, far_gap: float = 0.05, verify_perm: int = 256, bits: int = 2,
                      seed: int = 0, shingle: str = "char", ngram: int | None = None,
                      normalize: bool = True) -> BBitIndex:
        """An index for one threshold t and ``capacity`` texts: r and b from
        :func:`select_bbit_parameters` (the verified curve S(s) A(s): FNR <= fnr at t + near_gap,
        one stored text at t - far_gap reported with probability <= fpr), verified by K_v values
        of ``bits`` bits with the acceptance count :func:`bbit_cut` (far_gap, fpr).

        Complexity: as :func:`select_bbit_parameters`.
        """
        rows, bands = select_bbit_parameters(threshold, fnr=fnr, fpr=fpr, near_gap=near_gap, far_gap=far_gap,
                                             verify_perm=verify_perm, bits=bits)
        cut = bbit_cut(verify_perm, bits, threshold, far_gap=far_gap, fpr=fpr)
        return cls(threshold, rows=rows, bands=bands, verify_perm=verify_perm, bits=bits, min_matches=cut,
                   capacity=capacity, seed=seed, shingle=shingle, ngram=ngram, normalize=normalize)

    # -- storage ------------------------------------------------------------------------------------
    def _reserve(self, n: int) -> None:
        """Room for n more texts (sketch rows, one scratch row, table load <= 0.8)."""
        need = self.count + n + 1
        if need > _MAX_IDS:
            raise InvalidParameterError(
                f"BBitIndex holds at most {_MAX_IDS} texts. Got {self.count} stored and {n} more instead.")
        if need > self._sketches.shape[0]:
            grown = np.zeros((max(need, 2 * self._sketches.shape[0]), self._words), dtype=np.uint64)
            grown[: self.count] = self._sketches[: self.count]
            self._sketches = grown
        log2 = self._table_log2(self._entries + n * self.bands)
        if log2 > 32:
            raise InvalidParameterError(f"BBitIndex's band table is limited to 2^32 slots. Got {need} texts instead.")
        if (1 << log2) > self._table.shape[0]:
            from . import _minhash_kernels as MK

            table = np.full(1 << log2, 0xFFFFFFFFFFFFFFFF, dtype=np.uint64)
            MK.bbit_rehash(self._table, table, 32 - log2, 0)
            self._table = table

    def _run(self, sig: np.ndarray, query: bool, store: bool) -> np.ndarray:
        from . import _minhash_kernels as MK

        out = np.zeros(sig.shape[0], dtype=bool)
        with self._lock:
            self._reserve(sig.shape[0] if store else 0)
            shift = 33 - int(self._table.shape[0]).bit_length()
            count = MK.bbit_seen(sig, self.rows, self.bands, self.bits, self._key_seed, self._table, shift,
                                 self._sketches, self.count, self.verify_perm - self.min_matches, query, store, out)
            self._entries += (count - self.count) * self.bands
            self.count = int(count)
        return out

    def add_many(self, texts: Any) -> None:
        """Store every text (as :meth:`MinHasher.signatures` reads them; texts without shingles are
        not stored). Complexity: O(shingles K + n b r)."""
        self._run(self.hasher.signatures(texts), False, True)

    def query_many(self, texts: Any) -> np.ndarray:
        """Bool array: does a stored text share a band with each text and pass the b-bit
        verification? Texts without shingles: False. Complexity: O(shingles K + n b (r + c K_v bits / 64)),
        c candidates per band."""
        return self._run(self.hasher.signatures(texts), True, False)

    def seen_many(self, texts: Any) -> np.ndarray:
        """Stream deduplication: for each text in order, is it a verified near-duplicate of one
        stored before it (earlier in this batch or before)? Every text with shingles is then
        stored. Complexity: as :meth:`query_many` plus the inserts."""
        return self.seen_signatures(self.hasher.signatures(texts))

    def seen_signatures(self, signatures: Any) -> np.ndarray:
        """:meth:`seen_many` for precomputed ``hasher.signatures``. Complexity: O(n b (r + c K_v bits / 64))."""
        return self._run(self.hasher.check_signatures(signatures, "BBitIndex.seen_signatures", "index"), True, True)

    def __len__(self) -> int:
        return self.count

    def params(self) -> dict[str, Any]:
        """The constructor's parameters (without ``capacity``). Complexity: O(1)."""
        h = self.hasher
        return {"threshold": self.threshold, "rows": self.rows, "bands": self.bands, "verify_perm": self.verify_perm,
                "bits": self.bits, "min_matches": self.min_matches, "seed": h.seed, "shingle": h.shingle, "ngram": h.ngram, "normalize": h.normalize}

    def empty_like(self, capacity: int = 1024) -> BBitIndex:
        """An empty index with the same parameters. Complexity: O(capacity)."""
        return BBitIndex(**self.params(), capacity=capacity)

    def __or__(self, other: BBitIndex) -> BBitIndex:
        """The index of both texts sets: ``other``'s texts after ``self``'s (ids shifted by
        ``len(self)``); queries answer as if every text had been stored in one index.
        Raises InvalidParameterError for another type or other parameters.

        Complexity: O(texts + table slots).
        """
        from . import _minhash_kernels as MK

        if not isinstance(other, BBitIndex):
            return NotImplemented
        if other.params() != self.params():
            raise InvalidParameterError(
                f"BBitIndex | BBitIndex needs equal parameters. Got {self.params()} and {other.params()} instead.")
        out = self.empty_like(self.count + other.count + 1)
        out._reserve(self.count + other.count)
        out._sketches[: self.count] = self._sketches[: self.count]
        out._sketches[self.count : self.count + other.count] = other._sketches[: other.count]
        shift = 33 - int(out._table.shape[0]).bit_length()
        MK.bbit_rehash(self._table, out._table, shift, 0)
        MK.bbit_rehash(other._table, out._table, shift, self.count)
        out.count = self.count + other.count
        out._entries = self._entries + other._entries
        return out

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        del state["_lock"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        import threading

        self.__dict__.update(state)
        self._lock = threading.Lock()

    @property
    def nbytes(self) -> int:
        """Bytes held: the sketches (with the rows reserved) and the band table. Complexity: O(1)."""
        return int(self._sketches.nbytes + self._table.nbytes)

    # -- model ------------------------------------------------------------------------------------
    def predicted_report_probability(self, similarity: Any) -> Any:
        """S(s) A(s) for one stored text of Jaccard similarity s (:func:`verified_report_probability`).
        Complexity: O(size)."""
        return verified_report_probability(similarity, self.rows, self.bands, self.verify_perm, self.bits,
                                           self.threshold, self.min_matches)

    def _check(self) -> None:
        """Invariants: entries = count * bands, each table entry names a stored text."""
        used = self._table[self._table != np.uint64(0xFFFFFFFFFFFFFFFF)]
        assert used.size == self._entries == self.count * self.bands, (used.size, self._entries, self.count)
        assert used.size == 0 or int((used & np.uint64(0xFFFFFFFF)).max()) < self.count
        assert self._table.shape[0] & (self._table.shape[0] - 1) == 0
        assert self._entries <= _MAX_LOAD * self._table.shape[0] + 1e-9

    def __repr__(self) -> str:
        return (f"BBitIndex(threshold={self.threshold}, rows={self.rows}, bands={self.bands}, "
                f"verify_perm={self.verify_perm}, bits={self.bits}, min_matches={self.min_matches}, count={self.count})")
