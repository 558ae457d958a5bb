"""The Jaccard (MinHash) family of the locality-sensitive Bloom filters (issue 24).

Document 002's structures with MinHash in place of the p-stable projections: "is this text a
near-duplicate of one already stored?" at several Jaccard thresholds from one filter.

* AND-construction j (k = r_0 hash functions) = band j of r_0 MinHash values; OR-construction
  over L = b bands. A band's values (its bucket key) are stored as the verification element
  xi_j = j . h_{1,j} ... h_{r,j} in the MVBF (Section 5.2): LSHBloom (arXiv 2411.04257) is this
  family's LSBF.
* Levels are thresholds: level theta uses the first r_theta values of each band,
  r_0 > r_1 > ... > r_{S-1} (coarser level = fewer rows = lower Jaccard). The MVBF keeps its
  prefix structure: the coarse address hashes (j, the first r_{S-1} values), each finer level
  appends one suffix bit per address from a hash of the rows it adds, so VVBF theta has
  m' / 2^theta locations and only VVBF 0 is stored (kernels: :mod:`bloomkit.similarity._kernels`).
* The MLBF's BMLBF holds one bit per MinHash value (value & (m - 1)); level theta checks the
  first r_theta of a band's bits. The MLBF* and the LSBF of this family have no such array.

Model (:mod:`bloomkit.similarity.theory`): a band collides with a stored document of Jaccard
similarity s with probability s^r (Broder 1997); the S-curve 1 - (1 - s^r)^b
(:func:`~bloomkit.similarity.theory.s_curve`) combined with the verification filter's rate phi
(Theorem 7, n' = n b elements, uniform suffix bits) gives ``predicted_fnr(similarity)`` =
((1 - s^r)(1 - phi))^b and ``predicted_fpr(similarity=s)`` = 1 - that (Theorems 8-10).
:meth:`for_thresholds` sizes a filter (:func:`~bloomkit.similarity.params.select_jaccard_parameters`).

Rules: a document without shingles (empty or all-whitespace text) is never stored and never
reported; see :mod:`bloomkit.similarity.minhash` for the other input rules.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Self

import numpy as np

from .._format import ArraySpec
from .._validation import Bool, Int, InvariantError, ListOf, Spec, safe_repr
from ..errors import FormatError, InvalidParameterError
from . import _kernels as SK
from . import theory
from .base import ALPHA, LSHFilterBase
from .minhash import MinHasher
from .spec import AND_WIDTH, NUM_BITS, NUM_LEVELS, OR_COUNT, VERIFY_BITS, VERIFY_HASHES

__all__ = ["JaccardLSBF", "JaccardMLBF", "JaccardMLBFStar"]

ROWS = ListOf(Int(1, 63), 1, 32)
"""r_theta per level: MinHash rows per band used at level theta (strictly decreasing)."""

JPARAMS: Spec = {
    "num_levels": NUM_LEVELS, "and_width": AND_WIDTH, "or_count": OR_COUNT, "num_bits": NUM_BITS,
    "verify_bits": VERIFY_BITS, "verify_hashes": VERIFY_HASHES, "count": Int(0), "rows_by_level": ROWS,
    **{k: v for k, v in MinHasher.PARAMS.items() if k != "num_perm"},
}
"""The saved parameters of a Jaccard filter (K = k L is derived: the signature length)."""


def _check_rows(rows: Any, owner: str) -> tuple[int, ...]:
    r = tuple(ROWS(rows, "rows_by_level", owner))
    if any(b >= a for a, b in zip(r, r[1:], strict=False)):
        raise InvalidParameterError(
            f"The 'rows_by_level' parameter of {owner} must be strictly decreasing (level 0 uses the most rows: "
            f"the highest threshold). Got {safe_repr(rows)} instead.")
    return r


class _JaccardFilter(LSHFilterBase):
    """What the Jaccard LSBF, MLBF and MLBF* share (the engine is :class:`LSHFilterBase`)."""

    _PARAMS: ClassVar[Spec] = JPARAMS
    _ARRAYS: ClassVar[dict[str, ArraySpec]] = {"mvbf": ArraySpec("<u8"), "bmlbf": ArraySpec("<u8")}
    _FAMILY_KEY: ClassVar[str] = "rows by level, MinHash parameters"

    rows_by_level: tuple[int, ...]
    _hasher: MinHasher

    def _setup_jaccard(self, rows_by_level: Any, bands: Any, num_bits: Any, verify_bits: Any, verify_hashes: Any,
                       seed: Any, shingle: Any, ngram: Any, method: Any, normalize: Any) -> None:
        own = type(self).__name__
        rows = _check_rows(rows_by_level, own)
        self._setup_storage(len(rows), rows[0], bands, num_bits, verify_bits, verify_hashes, seed)
        self.rows_by_level = rows
        self._hasher = MinHasher(rows[0] * self.or_count, shingle=shingle, ngram=ngram, method=method,
                                 normalize=normalize, seed=self.seed)
        self._derive()

    def _derive(self) -> None:
        super()._derive()
        self._rows = np.array(self.rows_by_level, dtype=np.int64)
        self._umask = np.uint64(self.num_bits - 1)

    # -- the family -------------------------------------------------------------------------------
    @property
    def hasher(self) -> MinHasher:
        """The MinHash family (K = r_0 b values per document; read-only use)."""
        return self._hasher

    @property
    def bands(self) -> int:
        """b, the bands (document 002's L, ``or_count``)."""
        return self.or_count

    def _not_euclidean(self, what: str) -> InvalidParameterError:
        return InvalidParameterError(
            f"{type(self).__name__} has no {what}: it is a Jaccard filter of texts (levels are thresholds; see "
            "similarity_for_level).")

    @property
    def dim(self) -> int:
        raise self._not_euclidean("dimension")

    @property
    def w(self) -> float:
        raise self._not_euclidean("bucket width w")

    @property
    def lsh(self) -> Any:
        raise self._not_euclidean("projection LSH (its family is .hasher)")

    def distance_for_level(self, level: int) -> float:
        """Not defined for the Jaccard family: :meth:`similarity_for_level`. Complexity: O(1)."""
        raise self._not_euclidean("distance scale")

    def similarity_for_level(self, level: int = 0) -> float:
        """The Jaccard similarity at which level theta reports half of the near documents: the
        S-curve's midpoint (1 - 2^(-1/b))^(1/r_theta).

        Complexity: O(1).
        """
        lv = self._check_level(level, f"{type(self).__name__}.similarity_for_level")
        return float((1.0 - 0.5 ** (1.0 / self.or_count)) ** (1.0 / self.rows_by_level[lv]))

    def _family_key(self) -> tuple[Any, ...]:
        return (self.rows_by_level, tuple(sorted(self._hasher.params().items())))

    def _family_ready(self) -> bool:
        return True

    def _family_compatible(self, other: Any) -> None:
        return None  # the key holds every parameter of the family; the seed is compared beside it

    def _merge_family(self, src: Any) -> None:
        return None

    def _check_family(self) -> None:
        r = self.rows_by_level
        if not (len(r) == self.num_levels and r[0] == self.and_width):
            raise InvariantError("len(r) == self.num_levels and r[0] == self.and_width")
        if not (all(b < a for a, b in zip(r, r[1:], strict=False))):
            raise InvariantError("all(b < a for a, b in zip(r, r[1:], strict=False))")
        if not (self._hasher.num_perm == self.and_width * self.or_count and self._hasher.seed == self.seed):
            raise InvariantError("self._hasher.num_perm == self.and_width * self.or_count and self._hasher.seed == self.seed")

    def _family_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        p = self._hasher.params()
        del p["num_perm"]
        return {**p, "rows_by_level": list(self.rows_by_level)}, {}

    @classmethod
    def _from_state(cls, params: dict[str, Any], arrays: dict[str, np.ndarray], seed: int,
                    hash_id: int) -> Any:
        own = cls.__name__
        rows = params["rows_by_level"]
        if len(rows) != params["num_levels"] or rows[0] != params["and_width"]:
            raise FormatError(f"{own}: 'rows_by_level' {rows} does not match S = {params['num_levels']}, "
                              f"k = {params['and_width']}")
        try:
            rows = _check_rows(rows, own)
        except InvalidParameterError as e:
            raise FormatError(str(e)) from None
        obj = cls._restore(params, arrays, seed)
        obj.rows_by_level = rows
        obj._hasher = MinHasher(rows[0] * params["or_count"], shingle=params["shingle"], ngram=params["ngram"],
                                method=params["method"], normalize=params["normalize"], seed=seed)
        obj._derive()
        return obj

    # -- input --------------------------------------------------------------------------------------
    def _one(self, text: Any, owner: str, batch: str) -> np.ndarray:
        if not isinstance(text, str | bytes | bytearray | frozenset | set):
            raise InvalidParameterError(
                f"The 'text' parameter of {owner} must be one text (str or UTF-8 bytes) or one token set. Got "
                f"{safe_repr(text)} ({type(text).__name__}) instead; use {batch} for a batch.")
        return self._hasher.signatures([text])

    def _signatures(self, sig: Any, owner: str) -> np.ndarray:
        return self._hasher.check_signatures(sig, owner)

    # -- building -----------------------------------------------------------------------------------
    def add(self, text: Any) -> None:
        """Store one text (or token set). A text without shingles is not stored.

        Complexity: O(len(text) K + L (k + k' S)).
        """
        own = f"{type(self).__name__}.add"
        self._insert_sig(self._one(text, own, f"{type(self).__name__}.add_many"))

    def add_many(self, texts: Any) -> None:
        """Store every text of ``texts`` (a list, numpy / pyarrow / pandas / polars column of
        str or UTF-8 bytes, or a list of token sets; nulls and non-UTF-8 bytes raise
        InvalidParameterError and store nothing). Texts without shingles are not stored and not
        counted.

        Complexity: O(shingles K + n L (k + k' S)).
        """
        self._insert_sig(self._hasher.signatures(texts))

    def add_signatures(self, signatures: Any) -> None:
        """Store precomputed signatures (rows of ``hasher.signatures``). Complexity: O(n L (k + k' S))."""
        self._insert_sig(self._signatures(signatures, f"{type(self).__name__}.add_signatures"))

    def _insert_sig(self, sig: np.ndarray) -> None:
        with self._lock:
            added = SK.jaccard_insert(sig, self.and_width, self.or_count, self.num_levels, self._rows,
                                      self._bml_words(), self._PHYSICAL, self._umask, self._mv.words,
                                      self.verify_hashes, self._mc, self._sc, self._ss)
            self.count += int(added)

    # -- querying -----------------------------------------------------------------------------------
    def query(self, text: Any, level: int = 0) -> bool:
        """Is ``text`` a near-duplicate of a stored text at level theta? Complexity: O(len(text) K + L k' S)."""
        own = f"{type(self).__name__}.query"
        lv = self._check_level(level, own)
        return bool(self._query_sig(self._one(text, own, f"{type(self).__name__}.query_many"), lv, True)[0])

    def query_many(self, texts: Any, level: int = 0, *, verify: bool = True) -> np.ndarray:
        """Bool array: is each text a near-duplicate of a stored one at level theta?
        ``verify=False`` (MLBF only) skips the verification filter: the BMLBF alone (Theorems 5-6).
        Texts without shingles answer False.

        Complexity: O(shingles K + n L (k + k' S)).
        """
        own = f"{type(self).__name__}.query_many"
        lv = self._check_level(level, own)
        verify = Bool()(verify, "verify", own)
        if not verify and not self._PHYSICAL:
            raise InvalidParameterError(
                f"The 'verify' parameter of {own} must be True: a {type(self).__name__} has no BMLBF to answer alone. "
                "Got False instead.")
        return self._query_sig(self._hasher.signatures(texts), lv, verify)

    def query_signatures(self, signatures: Any, level: int = 0) -> np.ndarray:
        """:meth:`query_many` for precomputed signatures. Complexity: O(n L (k + k' S))."""
        own = f"{type(self).__name__}.query_signatures"
        lv = self._check_level(level, own)
        return self._query_sig(self._signatures(signatures, own), lv, True)

    def _query_sig(self, sig: np.ndarray, level: int, verify: bool) -> np.ndarray:
        out: np.ndarray = SK.jaccard_query(sig, self.and_width, self.or_count, self.num_levels, self._rows, level,
                                           self._bml_words(), self._PHYSICAL, self._umask, self._mv.words,
                                           self.verify_hashes, self._mc, self._sc, self._ss, verify)
        return out

    def seen_many(self, texts: Any, level: int = 0) -> np.ndarray:
        """Stream deduplication: for each text in order, is it a near-duplicate (at level theta)
        of one stored before it -- earlier in this batch or in the filter? Every text with
        shingles is then stored (a chain A ~ B ~ C reports B and C). Texts without shingles:
        False, not stored.

        Complexity: O(shingles K + n L (k + k' S)).
        """
        own = f"{type(self).__name__}.seen_many"
        lv = self._check_level(level, own)
        return self.seen_signatures(self._hasher.signatures(texts), lv)

    def seen_signatures(self, signatures: Any, level: int = 0) -> np.ndarray:
        """:meth:`seen_many` for precomputed signatures. Complexity: O(n L (k + k' S))."""
        own = f"{type(self).__name__}.seen_signatures"
        lv = self._check_level(level, own)
        sig = self._signatures(signatures, own)
        with self._lock:
            out: np.ndarray = SK.jaccard_seen(sig, self.and_width, self.or_count, self.num_levels, self._rows, lv,
                                              self._bml_words(), self._PHYSICAL, self._umask, self._mv.words,
                                              self.verify_hashes, self._mc, self._sc, self._ss)
            self.count += int((sig[:, 0] != SK.EMPTY_SIG).sum())
        return out

    # -- theory -------------------------------------------------------------------------------------
    def _fill(self, level: int) -> float:
        """Fill of VVBF theta, 1 - e^(-k' n b / m''): Theorem 7's phi = fill^k' (the suffix bits hash
        64-bit values, so they are uniform)."""
        phi = float(theory.mvbf_fpr(self.count * self.or_count, self.verify_bits, self.verify_hashes, level,
                                    exact=False))
        return float(phi ** (1.0 / self.verify_hashes))

    def _predicted(self, level: Any, alpha: Any, owner: str) -> float:
        lv = self._check_level(level, owner)
        phi = self._fill(lv) ** self.verify_hashes
        return float(theory.or_amplify(ALPHA(alpha, "alpha", owner) * phi, self.or_count))

    def _rates(self, similarity: Any, level: Any, owner: str) -> Any:
        lv = self._check_level(level, owner)
        return theory.jaccard_fnr(similarity, self.rows_by_level, self.or_count, level=lv,
                                  verify_hashes=self.verify_hashes, fill=self._fill(lv))

    def predicted_fnr(self, similarity: Any, *, level: int = 0) -> Any:
        """The probability that a query is NOT reported at level theta when the stored texts
        have Jaccard similarities ``similarity`` to it (last axis; a scalar: one near text, the
        others unlike it): the S-curve's complement (1 - s^r)^b with r = r_theta, made exact for
        this structure by :func:`bloomkit.similarity.theory.jaccard_fnr` (Theorems 9-10; the
        verification filter's false positives and the suffix bits of the finer levels, Section
        6.3's extended case, make it slightly smaller).

        Complexity: O(size 2^(S - 1 - theta)).
        """
        return self._rates(similarity, level, f"{type(self).__name__}.predicted_fnr")

    def predicted_fpr(self, *, level: int = 0, similarity: Any = 0.0, alpha: float = 1.0) -> Any:
        """The probability that a query is reported at level theta with the current count n.
        ``similarity`` (default 0: a text unlike every stored one) is the Jaccard similarity of
        its most similar stored text, below the level's threshold for a false positive: then
        1 - :meth:`predicted_fnr`. At similarity 0 it is Theorem 8, 1 - (1 - alpha phi)^b with
        phi = (1 - e^(-k' n b / m''))^k', m'' = m' / 2^theta; alpha (MLBF only) is the probability
        that a band's r_theta BMLBF bits are set (default 1: an upper bound; it scales phi only).

        Complexity: O(size 2^(S - 1 - theta)).
        """
        own = f"{type(self).__name__}.predicted_fpr"
        a = ALPHA(alpha, "alpha", own)
        rate = 1.0 - np.asarray(self._rates(similarity, level, own))  # validates level and similarity
        if a == 1.0:
            return float(rate) if rate.ndim == 0 else rate
        if np.all(np.asarray(similarity) == 0) and np.ndim(similarity) == 0:
            return self._predicted(level, a, own)
        raise InvalidParameterError(
            f"The 'alpha' parameter of {own} must be 1 when a similarity is given (the BMLBF's part of a near "
            f"text's bands is not modelled). Got {alpha!r} instead.")

    def info(self) -> dict[str, Any]:
        """Parameters, sizes, fill and predicted rates per level. Complexity: O((m + m') / 64)."""
        own = f"{type(self).__name__}.info"
        rates = [self._predicted(t, 1.0, own) for t in range(self.num_levels)]
        return {
            "structure": self._STRUCTURE, "class": type(self).__name__, "seed": self.seed, "family": "jaccard",
            **self._hasher.params(), "num_levels": self.num_levels, "rows_by_level": list(self.rows_by_level),
            "bands": self.or_count, "num_bits": self.num_bits if self._PHYSICAL else None,
            "verify_bits": self.verify_bits, "verify_hashes": self.verify_hashes,
            "size_in_bits": self.size_in_bits, "count": self.count, "count_is_exact": True,
            "fill_ratio_bmlbf": None if self._bml is None else self._bml.popcount() / self.num_bits,
            "fill_ratio_mvbf": self._mv.popcount() / self.verify_bits,
            "similarity_by_level": [self.similarity_for_level(t) for t in range(self.num_levels)],
            "predicted_fpr": rates[0], "predicted_fpr_by_level": rates,
        }

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(rows_by_level={list(self.rows_by_level)}, bands={self.or_count}, "
                f"verify_bits={self.verify_bits}, verify_hashes={self.verify_hashes}, seed={self.seed}, "
                f"hasher={self._hasher!r}) with {self.count} texts")

    # -- sizing ---------------------------------------------------------------------------------------
    @classmethod
    def for_thresholds(cls, thresholds: Any, capacity: int, *, fnr: float = 0.05, fpr: float = 0.05,
                       verify_fpr: float = 0.01, near_gap: float = 0.1, far_gap: float = 0.2, seed: int = 0,
                       shingle: str = "char", ngram: int | None = None, method: str = "kway",
                       normalize: bool = True) -> Self:
        """A filter sized for Jaccard ``thresholds`` (one per level, decreasing) and ``capacity``
        texts: :func:`bloomkit.similarity.params.select_jaccard_parameters` (FNR at t + near_gap
        <= fnr, FPR at t - far_gap <= fpr, far queries <= verify_fpr at capacity).

        Complexity: as select_jaccard_parameters, plus O(m') allocation.
        """
        from .params import select_jaccard_parameters

        p = select_jaccard_parameters(thresholds, capacity, fnr=fnr, fpr=fpr, verify_fpr=verify_fpr,
                                      near_gap=near_gap, far_gap=far_gap)
        if cls._SINGLE and len(p.thresholds) != 1:
            raise InvalidParameterError(
                f"The 'thresholds' parameter of {cls.__name__}.for_thresholds must be one threshold (an LSBF has one "
                f"level). Got {safe_repr(thresholds)} instead; use JaccardMLBFStar for several.")
        return cls._make(p.rows_by_level, p.bands, p.verify_bits, p.verify_hashes, seed, shingle, ngram, method,
                         normalize)

    _SINGLE: ClassVar[bool] = False

    @classmethod
    def _make(cls, rows: Sequence[int], bands: int, verify_bits: int, verify_hashes: int, seed: int, shingle: str,
              ngram: int | None, method: str, normalize: bool) -> Self:
        obj = cls.__new__(cls)
        nb = max(1 << 20, 1 << len(rows)) if cls._PHYSICAL else 1 << 32
        obj._setup_jaccard(list(rows), bands, nb, verify_bits, verify_hashes, seed, shingle, ngram, method, normalize)
        return obj


class JaccardMLBFStar(_JaccardFilter):
    """MLBF* of the Jaccard family: the multi-granularity verification filter alone, one level
    per Jaccard threshold (document 002, Section 5.3; issue 24).

    Parameters
    ----------
    rows_by_level : sequence of int
        r_theta, MinHash rows per band at level theta, strictly decreasing (r_0 = k).
    bands : int
        b, bands (L).
    verify_bits : int
        m' (a power of two, >= 2^S).
    verify_hashes : int
        k'.
    seed : int
        Seed of the MinHash family and the verification hashes.
    shingle, ngram, method, normalize
        The :class:`~bloomkit.similarity.minhash.MinHasher` (K = r_0 b values).

    Notes
    -----
    Thread safety: adds and ``seen_many`` hold the object's lock (one compiled call that keeps
    the GIL); queries take none and release the GIL.

    Examples
    --------
    >>> f = JaccardMLBFStar.for_thresholds((0.9, 0.7), 1000, seed=1)
    >>> f.add_many(["the quick brown fox jumps over the lazy dog"])
    >>> f.query_many(["the quick brown fox jumped over the lazy dog", "an unrelated text"], level=1).tolist()
    [True, False]
    >>> f.seen_many(["a new text", "a new text!", ""]).tolist()
    [False, True, False]
    """

    _PHYSICAL = False
    _ARRAYS: ClassVar[dict[str, ArraySpec]] = {"mvbf": ArraySpec("<u8")}

    def __init__(self, rows_by_level: Sequence[int] = (20, 12, 8), *, bands: int = 10, verify_bits: int = 1 << 20,
                 verify_hashes: int = 4, seed: int = 0, shingle: str = "char", ngram: int | None = None,
                 method: str = "kway", normalize: bool = True) -> None:
        self._setup_jaccard(rows_by_level, bands, 1 << 32, verify_bits, verify_hashes, seed, shingle, ngram,
                            method, normalize)


class JaccardMLBF(_JaccardFilter):
    """MLBF of the Jaccard family: a BMLBF of one bit per MinHash value (value & (m - 1)) in
    front of the multi-granularity verification filter (document 002, Sections 3-5; issue 24).

    Parameters as :class:`JaccardMLBFStar`, plus ``num_bits`` (m = 2^B, the BMLBF). At corpus
    scale the BMLBF fills up (k L bits per text) and filters little: the MLBF* puts that memory
    into the MVBF (Section 5.3's argument holds here too).

    Examples
    --------
    >>> f = JaccardMLBF((12, 8), bands=8, num_bits=2**16, verify_bits=2**16, seed=2)
    >>> f.add_many(["to be or not to be, that is the question"])
    >>> bool(f.query("to be or not to be: that is the question", level=1))
    True
    """

    _PHYSICAL = True

    def __init__(self, rows_by_level: Sequence[int] = (20, 12, 8), *, bands: int = 10, num_bits: int = 1 << 20,
                 verify_bits: int = 1 << 20, verify_hashes: int = 4, seed: int = 0, shingle: str = "char",
                 ngram: int | None = None, method: str = "kway", normalize: bool = True) -> None:
        self._setup_jaccard(rows_by_level, bands, num_bits, verify_bits, verify_hashes, seed, shingle, ngram,
                            method, normalize)

    def and_pass_many(self, texts: Any, level: int = 0) -> np.ndarray:
        """(n, b) bool: which bands pass the BMLBF alone at level theta (Theorem 5's alpha).

        Complexity: O(shingles K + n b r_theta).
        """
        own = "JaccardMLBF.and_pass_many"
        lv = self._check_level(level, own)
        assert self._bml is not None
        out: np.ndarray = SK.jaccard_band_pass(self._hasher.signatures(texts), self.and_width, self.or_count,
                                               self.num_levels, self._rows, lv, self._bml.words, self._umask)
        return out


class JaccardLSBF(_JaccardFilter):
    """LSBF of the Jaccard family: LSHBloom (arXiv 2411.04257), one threshold.

    b bands of r MinHash values; each band's key (j and its r values) goes into one Bloom
    filter of m' bits and k' hashes (document 002's verification filter with S = 1). Hua et
    al.'s LSH bit array is left out: with MinHash it holds one bit per value and is full at
    corpus scale, so LSHBloom's form is this family's LSBF.

    Parameters
    ----------
    rows : int
        r, MinHash rows per band.
    bands, verify_bits, verify_hashes, seed, shingle, ngram, method, normalize
        As :class:`JaccardMLBFStar`.

    Examples
    --------
    >>> f = JaccardLSBF(rows=10, bands=7, verify_bits=2**16, seed=3)
    >>> f.seen_many(["a stitch in time saves nine", "a stitch in time saves nine!", "fortune favours the bold"]).tolist()
    [False, True, False]
    """

    _PHYSICAL = False
    _SINGLE = True
    _ARRAYS: ClassVar[dict[str, ArraySpec]] = {"mvbf": ArraySpec("<u8")}
    _PARAMS: ClassVar[Spec] = {**JPARAMS, "num_levels": Int(1, 1)}

    def __init__(self, *, rows: int = 10, bands: int = 10, verify_bits: int = 1 << 20, verify_hashes: int = 4,
                 seed: int = 0, shingle: str = "char", ngram: int | None = None, method: str = "kway",
                 normalize: bool = True) -> None:
        self._setup_jaccard([rows], bands, 1 << 32, verify_bits, verify_hashes, seed, shingle, ngram, method,
                            normalize)
