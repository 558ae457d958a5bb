"""MinHash signatures of texts in batch: the hash family of the Jaccard filters (issue 24).

The Jaccard similarity of two documents is J(A, B) = |A & B| / |A | B| over their sets of
shingles. A MinHash value h_i(A) = min over the shingles x of A of pi_i(x), pi_i a random
permutation of the 64-bit hashes, collides with h_i(B) with probability J(A, B): it is the LSH
family of document 002's Definition 1 for the Jaccard similarity, with P1 = J (Broder 1997).

:class:`MinHasher` turns texts into an (n, K) uint64 signature matrix in one compiled pass per
thread (:mod:`bloomkit.similarity._minhash_kernels`): no Python loop per document or shingle.

* Shingles: ``shingle="char"`` (n consecutive Unicode code points, default n = 5) or
  ``"word"`` (n consecutive whitespace-separated words, default n = 3); ``normalize=True``
  (default) lower-cases and collapses runs of whitespace to one space first (pyarrow compute).
* Methods: ``"kway"`` (default): K independent seeded 64-bit permutations
  pi_i(x) = splitmix64(x + c_i), O(K) per shingle, rows independent (the S-curve
  1 - (1 - s^r)^b of :mod:`bloomkit.similarity.jaccard` is exact for them). ``"oph"``:
  one-permutation hashing with optimal densification (Shrivastava 2017), O(1) per shingle
  plus O(K) per document: every value still collides with probability J, but the values of one
  document are not independent (an empty bin borrows another's), so the S-curve is an
  approximation for it (measured in tests/test_minhash.py and docs/dedup.md).

Input rules (each a clear error or a documented rule):

* a list / tuple of str (or UTF-8 bytes), a numpy str / object array, a pyarrow string /
  binary array (or chunked array, one-column table), a pandas / polars column; or pre-tokenized
  sets: a list of sets / lists of str or bytes tokens (each token one shingle);
* nulls (None, pyarrow nulls, pandas NA): InvalidParameterError naming the first position;
* bytes that are not UTF-8: InvalidParameterError naming the position;
* an empty or all-whitespace text has no shingle: its signature is all :data:`EMPTY`
  (``MinHasher.is_empty``); the filters never store it and never report it as a duplicate;
* a text shorter than the shingle size (1..n-1 code points or words) has one shingle: itself.

>>> mh = MinHasher(num_perm=64, seed=1)
>>> sig = mh.signatures(["the quick brown fox", "the quick brown fax", ""])
>>> sig.shape, sig.dtype.name
((3, 64), 'uint64')
>>> mh.is_empty(sig).tolist()
[False, False, True]
>>> round(mh.jaccard("the quick brown fox", "the quick brown fax"), 3)
0.765
"""

from __future__ import annotations

from collections.abc import Set as AbstractSet
from typing import Any, ClassVar

import numpy as np

from .._engine.columns import as_keys
from .._validation import SEED, Bool, Int, Options, Spec, safe_repr
from ..errors import InvalidParameterError

__all__ = ["EMPTY", "MinHasher"]

EMPTY = np.uint64(0xFFFFFFFFFFFFFFFF)
"""The MinHash value of a document without shingles (the minimum over nothing)."""

SHINGLES = Options("char", "word")
METHODS = Options("kway", "oph")
NGRAM = Int(1, 64)
NUM_PERM = Int(1, 1 << 16)
_DEFAULT_NGRAM = {"char": 5, "word": 3}
_MIN_PER_THREAD = 1024


def _pa() -> Any:
    import pyarrow

    return pyarrow


class MinHasher:
    """Seeded MinHash signatures of texts (k-way or one-permutation hashing with densification).

    Parameters
    ----------
    num_perm : int
        K, values per signature (the filters use K = k L: L bands of k rows).
    shingle : {"char", "word"}
        Character or word n-grams.
    ngram : int, optional
        n (default 5 for characters, 3 for words).
    method : {"kway", "oph"}
        K independent permutations, or one permutation hashing with optimal densification.
    normalize : bool
        Lower-case and collapse whitespace before shingling.
    seed : int
        Seed of the shingle hash and the permutations.

    Notes
    -----
    Thread safety: immutable after construction; ``signatures`` runs on the threads of
    :mod:`bloomkit._engine.parallel` (``BLOOMKIT_NUM_THREADS``) and may be called from several threads.
    """

    PARAMS: ClassVar[Spec] = {"num_perm": NUM_PERM, "shingle": SHINGLES, "ngram": NGRAM, "method": METHODS,
                              "normalize": Bool()}
    """The parameters a filter saves for its hash family (the seed is the filter's)."""

    def __init__(self, num_perm: int = 128, *, shingle: str = "char", ngram: int | None = None,
                 method: str = "kway", normalize: bool = True, seed: int = 0) -> None:
        own = "MinHasher"
        self.num_perm: int = NUM_PERM(num_perm, "num_perm", own)
        self.shingle: str = SHINGLES(shingle, "shingle", own)
        self.ngram: int = _DEFAULT_NGRAM[self.shingle] if ngram is None else NGRAM(ngram, "ngram", own)
        self.method: str = METHODS(method, "method", own)
        self.normalize: bool = Bool()(normalize, "normalize", own)
        self.seed: int = SEED(seed, "seed", own)
        rng = np.random.default_rng(np.random.SeedSequence([self.seed, 0x024]))
        draws = rng.integers(0, 2**64 - 1, self.num_perm + 2, dtype=np.uint64, endpoint=True)
        self._seed0, self._dens = draws[0], draws[1]
        self._perm = np.ascontiguousarray(draws[2:])

    def params(self) -> dict[str, Any]:
        """The parameters (:attr:`PARAMS`) as a filter saves them. Complexity: O(1)."""
        return {"num_perm": self.num_perm, "shingle": self.shingle, "ngram": self.ngram,
                "method": self.method, "normalize": self.normalize}

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, MinHasher):
            return NotImplemented
        return self.params() == other.params() and self.seed == other.seed

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (f"MinHasher(num_perm={self.num_perm}, shingle={self.shingle!r}, ngram={self.ngram}, "
                f"method={self.method!r}, normalize={self.normalize}, seed={self.seed})")

    # -- input ----------------------------------------------------------------------------------
    def _buffer(self, texts: Any, owner: str) -> tuple[np.ndarray, np.ndarray] | tuple[None, Any]:
        """(UTF-8 bytes, offsets) of normalized texts, or (None, token lists) for token sets."""
        pa = _pa()
        if isinstance(texts, list | tuple) and texts and all(
                isinstance(t, AbstractSet | list | tuple) for t in texts[:1]):
            return None, list(texts)
        if isinstance(texts, pa.Array | pa.ChunkedArray) and (pa.types.is_list(texts.type)
                                                             or pa.types.is_large_list(texts.type)):
            return None, texts if not texts.null_count else _null_list(texts, owner)
        keys = as_keys(texts, "texts", owner)
        if isinstance(keys, np.ndarray):
            if keys.dtype.kind not in "US":
                raise InvalidParameterError(
                    f"The 'texts' parameter of {owner} must hold str (or UTF-8 bytes). Got a numpy array of "
                    f"{keys.dtype} instead.")
            keys = keys.tolist()
        if isinstance(keys, list):
            arr = _list_to_arrow(keys, owner)
        else:
            arr = keys if isinstance(keys, pa.ChunkedArray) else pa.chunked_array([keys])
            if not (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)):
                arr = _binary_to_string(arr, owner)
        arr = arr.cast(pa.large_string()).combine_chunks()
        if self.normalize:
            import pyarrow.compute as pc

            arr = pc.utf8_trim_whitespace(pc.replace_substring_regex(pc.utf8_lower(arr), r"\s+", " "))
        bufs = arr.buffers()
        n = len(arr)
        offsets = np.frombuffer(bufs[1], dtype=np.int64, count=n + 1, offset=arr.offset * 8)
        data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None else np.zeros(1, np.uint8)
        if data.size == 0:
            data = np.zeros(1, np.uint8)
        return data, offsets

    # -- signatures -----------------------------------------------------------------------------
    def signatures(self, texts: Any) -> np.ndarray:
        """The (n, K) uint64 signatures of ``texts`` (see the module docstring for the input
        rules). Row i is all :data:`EMPTY` for a text without shingles.

        Complexity: O(total bytes + shingles * K) ("kway") or O(total bytes + n K) ("oph"),
        over the threads of :mod:`bloomkit._engine.parallel`.
        """
        from .._engine.parallel import map_ranges, ranges
        from . import _minhash_kernels as MK

        own = "MinHasher.signatures"
        data, rest = self._buffer(texts, own)
        oph = self.method == "oph"
        if data is None:
            hashes, doc_off = self._token_hashes(rest, own)
            sig = np.full((len(doc_off) - 1, self.num_perm), EMPTY, dtype=np.uint64)
            map_ranges(lambda lo, hi: MK.minhash_hashes(hashes, doc_off, lo, hi, self._perm, oph, self._dens, sig),
                       ranges(sig.shape[0], _MIN_PER_THREAD))
            return sig
        offsets = rest
        mode = 0 if self.shingle == "char" else 1
        sig = np.full((len(offsets) - 1, self.num_perm), EMPTY, dtype=np.uint64)
        map_ranges(lambda lo, hi: MK.minhash_text(data, offsets, lo, hi, mode, self.ngram, self._seed0, self._perm,
                                                  oph, self._dens, sig),
                   ranges(sig.shape[0], _MIN_PER_THREAD))
        return sig

    def check_signatures(self, sig: Any, owner: str, holder: str = "filter") -> np.ndarray:
        """``sig`` as a C-contiguous (n, K) uint64 array of this hasher's signatures, or
        InvalidParameterError naming ``owner`` and the expected shape. Complexity: O(1) (a copy
        when not contiguous)."""
        K = self.num_perm
        if not isinstance(sig, np.ndarray) or sig.dtype != np.uint64 or sig.ndim != 2 or sig.shape[1] != K:
            got = (f"{sig.dtype} of shape {sig.shape}" if isinstance(sig, np.ndarray)
                   else f"{safe_repr(sig, 80)} ({type(sig).__name__})")
            raise InvalidParameterError(
                f"The 'signatures' parameter of {owner} must be an (n, {K}) uint64 numpy array (this {holder}'s "
                f"hasher.signatures(texts)). Got {got} instead.")
        return np.ascontiguousarray(sig)

    def _token_hashes(self, docs: Any, owner: str) -> tuple[np.ndarray, np.ndarray]:
        """XXH64 (seed0) of every token of pre-tokenized documents, and the document offsets: the
        tokens go into one pyarrow list array (one Python step per document, none per token) and
        are hashed from its buffers."""
        from .._engine import kernels as K

        pa = _pa()
        if not isinstance(docs, pa.Array | pa.ChunkedArray):
            for i, d in enumerate(docs):
                if d is None:
                    raise InvalidParameterError(
                        f"The 'texts' parameter of {owner} must not contain nulls. Got None at position {i} instead.")
                if not isinstance(d, AbstractSet | list | tuple):
                    raise InvalidParameterError(
                        f"The 'texts' parameter of {owner} must be all texts or all token sets. Got "
                        f"{safe_repr(d)} ({type(d).__name__}) at position {i} among token sets instead.")
            try:
                docs = pa.array([list(d) for d in docs], pa.large_list(pa.large_binary()))
            except (pa.ArrowException, TypeError, ValueError):
                docs = None
        arr = docs.combine_chunks() if isinstance(docs, pa.ChunkedArray) else docs
        ok = arr is not None and (pa.types.is_list(arr.type) or pa.types.is_large_list(arr.type)) and (
            pa.types.is_string(arr.type.value_type) or pa.types.is_large_string(arr.type.value_type)
            or pa.types.is_binary(arr.type.value_type) or pa.types.is_large_binary(arr.type.value_type))
        if not ok or arr.null_count or arr.values.null_count:
            raise InvalidParameterError(
                f"The 'texts' parameter of {owner} must hold token sets of str or bytes tokens (no nulls). Got "
                f"{'tokens of another type' if not ok else 'a null'} instead.")
        arr = arr.cast(pa.large_list(pa.large_binary()))
        doc_off = np.asarray(arr.offsets, dtype=np.int64) - int(arr.offsets[0].as_py())
        values = arr.flatten()
        bufs = values.buffers()
        offs = np.frombuffer(bufs[1], dtype=np.int64, count=len(values) + 1, offset=values.offset * 8)
        data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None and bufs[2].size else np.zeros(1, np.uint8)
        return K.hash_offsets(data, np.ascontiguousarray(offs), self._seed0), np.ascontiguousarray(doc_off)

    @staticmethod
    def is_empty(signatures: np.ndarray) -> np.ndarray:
        """Bool per row: the document had no shingle (an empty or all-whitespace text, an empty
        token set). Complexity: O(n K)."""
        out: np.ndarray = (np.asarray(signatures) == EMPTY).all(axis=1)
        return out

    # -- exact similarity (ground truth) ---------------------------------------------------------
    def shingle_sets(self, texts: Any) -> list[np.ndarray]:
        """Every text's distinct shingle hashes (sorted uint64 arrays), with the same shingles,
        normalization and hash as the signatures. Complexity: O(total bytes log)."""
        from . import _minhash_kernels as MK

        own = "MinHasher.shingle_sets"
        data, rest = self._buffer(texts, own)
        if data is None:
            hashes, doc_off = self._token_hashes(rest, own)
            return [np.unique(hashes[doc_off[i] : doc_off[i + 1]]) for i in range(len(doc_off) - 1)]
        mode = 0 if self.shingle == "char" else 1
        flat, off = MK.shingle_hashes(data, np.ascontiguousarray(rest), mode, self.ngram, self._seed0)
        return [flat[off[i] : off[i + 1]] for i in range(len(off) - 1)]

    def jaccard(self, a: Any, b: Any) -> float:
        """Exact Jaccard similarity of two texts' shingle sets (0.0 when both are empty).

        Complexity: O(len(a) + len(b)).
        """
        sa, sb = self.shingle_sets([a, b])
        union = np.union1d(sa, sb).size
        return float(np.intersect1d(sa, sb, assume_unique=True).size / union) if union else 0.0

    @staticmethod
    def estimate(sig_a: np.ndarray, sig_b: np.ndarray) -> Any:
        """The MinHash estimate of J: the fraction of equal values (row-wise for 2-D input).

        Complexity: O(K) per pair.
        """
        a, b = np.asarray(sig_a), np.asarray(sig_b)
        return (a == b).mean(axis=-1)


def _null_list(arr: Any, owner: str) -> Any:
    first = next(i for i, v in enumerate(arr.is_null().to_pylist()) if v)
    raise InvalidParameterError(
        f"The 'texts' parameter of {owner} must not contain nulls. Got {arr.null_count} null(s) (first at "
        f"position {first}) instead.")


def _list_to_arrow(keys: list[Any], owner: str) -> Any:
    pa = _pa()
    out: list[str] = []
    for i, t in enumerate(keys):
        if isinstance(t, str):
            out.append(t)
        elif isinstance(t, bytes | bytearray | np.bytes_):
            try:
                out.append(bytes(t).decode("utf-8"))
            except UnicodeDecodeError as e:
                raise InvalidParameterError(
                    f"The 'texts' parameter of {owner} must be valid UTF-8. Got bytes that are not at position {i} "
                    f"(byte {e.start}: {bytes(t)[e.start:e.start + 4]!r}) instead; decode them first.") from None
        elif t is None:
            raise InvalidParameterError(
                f"The 'texts' parameter of {owner} must not contain nulls. Got None at position {i} instead.")
        else:
            raise InvalidParameterError(
                f"The 'texts' parameter of {owner} must hold str (or UTF-8 bytes). Got {safe_repr(t)} "
                f"({type(t).__name__}) at position {i} instead.")
    try:
        return pa.chunked_array([pa.array(out, pa.large_string())])
    except (pa.ArrowInvalid, UnicodeEncodeError) as e:  # lone surrogates
        raise InvalidParameterError(
            f"The 'texts' parameter of {owner} must be encodable as UTF-8. Got {e} instead.") from None


def _binary_to_string(arr: Any, owner: str) -> Any:
    pa = _pa()
    try:
        return arr.cast(pa.large_string(), safe=True)
    except pa.ArrowInvalid:
        for i, v in enumerate(arr.to_pylist()):
            try:
                v.decode("utf-8")
            except UnicodeDecodeError as e:
                raise InvalidParameterError(
                    f"The 'texts' parameter of {owner} must be valid UTF-8. Got bytes that are not at position {i} "
                    f"(byte {e.start}) instead; decode them first.") from None
        raise
