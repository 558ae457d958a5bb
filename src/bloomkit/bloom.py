"""Bloom and counting Bloom filters: the shared core every module builds on.

Positions are ``G_i(x) mod m`` (k independent SplitMix64 values of the seeded XXH64 of the
key's canonical encoding, :mod:`bloomkit._engine.hashing`), so a filter folded to a divisor of ``m``
equals the filter built at that size (document 003).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Self, cast

import numpy as np

from . import theory
from ._engine.boundary import (
    COMPILED,
    KIND_BITS,
    KIND_BITS_DH,
    KIND_COUNTERS,
    KIND_COUNTERS_DH,
    FilterCore,
    check_storage,
)
from ._engine.hashing import (
    HASH_XXH64,
    TAG_INT,
    TAG_STR,
    TAG_TUPLE,
    KeyTypesMixin,
    check_seed,
    encode_key,
    hash64,
    hash64_tag,
    hash_keys,
    key_type_mask,
    key_type_names,
    register_hash_id,
    tag_seed,
)
from ._engine.lazy import counters as KC
from ._engine.lazy import kernels as K
from ._engine.lazy import probes as P
from ._engine.parallel import add_chunked, core_rebind, key_source, query_chunked
from ._engine.storage import BitArray, CounterArray
from ._format import ArraySpec, Persistable
from ._mapped import Mappable
from ._membership import WordSetAlgebra
from ._sizing import NUM_BITS as _NUM_BITS
from ._sizing import resolve_size as _resolve_size
from ._validation import (
    CAPACITY,
    FPR,
    KEY_TYPES,
    MAX_HASHES,
    NUM_HASHES,
    Bool,
    InvariantError,
    Optional,
    Options,
    check_float,
)
from ._watch import FilterWatch
from .errors import FormatError, IncompatibleFiltersError, InvalidParameterError

if TYPE_CHECKING:
    from ._engine.probes import Entries

__all__ = ["HASH_DOUBLE", "PROBES", "BloomFilter", "CountingBloomFilter"]

HASH_DOUBLE = register_hash_id(5, "xxh64-double-hashing")
"""Hash id of BloomFilters probed by enhanced double hashing (:mod:`bloomkit._engine.probes`)."""
PROBES = Options("independent", "double")

NUM_BITS = _NUM_BITS  # the folding modules import it from here
COUNTER_BITS = Options(4, 8, 16, 32)
_INT64 = 1 << 63
_STR_BIT, _INT_BIT = 1 << TAG_STR, 1 << TAG_INT


class _Entries:
    """The single-key entry points of :class:`bloomkit._engine.probes.Entries`, imported (with numba)
    on first use and then plain attributes (``_ENTRY.bits_add_ascii``)."""

    def __getattr__(self, name: str) -> Any:
        from ._engine.probes import Entries

        fn = getattr(Entries(), name)
        setattr(self, name, fn)
        return fn


_ENTRY: Entries = cast("Entries", _Entries())
# (words, address, number of words, m) of the storage the by-address kernels last used; one
# tuple, so a thread never sees an address with another array's length or m
_WordsRef = tuple[np.ndarray | None, int, int, int]
_NO_WORDS: _WordsRef = (None, 0, 0, 0)


def _tag_seeds(seed: int) -> dict[int, np.uint64]:
    return {t: np.uint64(tag_seed(seed, t)) for t in range(TAG_STR, TAG_TUPLE + 1)}


class BloomFilter(FilterCore, WordSetAlgebra, KeyTypesMixin, FilterWatch, Mappable, Persistable):
    """A Bloom filter over bits: no false negatives, false positives at rate ``predicted_fpr()``.

    Parameters
    ----------
    capacity : int, optional
        Expected number of keys n; with ``fpr`` it sizes the filter: from
        ``m = ceil(-n ln(fpr) / ln(2)^2)``, ``k = round(m/n ln 2)`` (doc 000 Eqs. 1-2), m raised
        until Eq. 2 with that integer k is at most ``fpr`` (a few per mille more bits).
    fpr : float in (0, 1), optional
        The false positive rate at ``capacity`` keys: ``predicted_fpr(capacity) <= fpr``.
    num_bits : int, optional
        m, the number of bits, given directly (instead of fpr).
    num_hashes : int, optional
        k, the number of probes (rounded; must round to >= 1).
    seed : int in [0, 2**64)
        Hash seed; filters combine only with filters of the same seed.
    probes : {"independent", "double"}
        The probe scheme (:mod:`bloomkit._engine.probes`): ``"independent"`` (default; k SplitMix64
        values per key, the positions of every file saved before) or ``"double"`` (enhanced
        double hashing: one, about half the time per key; the rate model
        :func:`bloomkit.theory.double_hashing_fpr`). Saved in the file as its hash id;
        filters combine only with filters of the same scheme.

    Notes
    -----
    The whole set protocol of Python (``add``, ``in``, ``update``, ``|``, ``&``, ``|=``, ``&=``,
    ``union``, ``intersection``, ``issubset``, ``<=``, ``copy``, ``clear``, ``bool``, ...) plus
    ``add_many`` / ``contains_many`` for batches. ``len()`` is the rounded Swamidass-Baldi
    *estimate* of the number of distinct keys (``exact_len`` is False: 10,000 keys may give
    10,002); an empty batch is allowed and changes nothing (``contains_many([])`` is an empty
    array), as ``set.update([])`` is.

    Warnings (:class:`bloomkit.BloomkitWarning`, once per filter): when adds take the filter
    past its design (more than ``capacity`` keys: its false positive rate is then above
    ``fpr``), and when a query's key has a type the filter holds none of (``"1"`` or ``1.0``
    asked of a filter of ``int`` keys is never a member). ``warnings.simplefilter("error",
    bloomkit.BloomkitWarning)`` makes them errors.

    Single keys: ``add`` and ``in`` are one C call each when the compiled boundary is active
    (:mod:`bloomkit._engine.boundary`; the base class ``FilterCore``), else numba kernels; both give
    the same bits.

    Thread safety: any number of threads may add and query at once. Single-key adds keep the
    GIL (the C call and the numba kernels alike); batch adds set bits without it holding the
    filter's lock, which single-key adds wait for while a batch add runs, so no bit is ever
    lost; queries release the GIL. ``fold`` / ``clear`` /
    ``|=`` while other threads add can lose those concurrent adds (they replace or reset the
    storage): do them from one thread.

    Examples
    --------
    >>> bf = BloomFilter(capacity=1000, fpr=0.01)
    >>> bf.add("alice"); "alice" in bf
    True
    >>> bf.add_many(["bob", "carol"]); bf.contains_many(["bob", "dave"]).tolist()
    [True, False]
    """

    _PARAMS: ClassVar[Any] = {
        "num_bits": NUM_BITS, "num_hashes": NUM_HASHES, "capacity": Optional(CAPACITY),
        "fpr": Optional(FPR), "key_types": KEY_TYPES,
    }
    _ARRAYS: ClassVar[Any] = {"words": ArraySpec("<u8")}
    _HASH_IDS: ClassVar[tuple[int, ...]] = (HASH_XXH64, HASH_DOUBLE)  # the probe scheme (bloomkit._engine.probes)
    _dh = False  # double hashing (set by _set_storage from the hash id; never in subclasses without it)
    exact_len: ClassVar[bool] = False

    def __init__(
        self,
        capacity: int | None = None,
        fpr: float | None = None,
        *,
        num_bits: int | None = None,
        num_hashes: int | None = None,
        seed: int = 0,
        probes: str = "independent",
    ) -> None:
        owner = type(self).__name__
        m, k, self.capacity, self.fpr = _resolve_size(owner, capacity, fpr, num_bits, num_hashes)
        self.seed = check_seed(seed, owner)
        self._hash_id = HASH_DOUBLE if PROBES(probes, "probes", owner) == "double" else HASH_XXH64
        self._num_hashes = k
        self._set_storage(self._new_storage(m))

    @classmethod
    def for_requirements(cls, capacity: int, fpr: float, *, seed: int = 0) -> Self:
        """The smallest filter (optimal k) holding ``capacity`` keys at false positive rate
        ``fpr``: ``m = ceil(-n ln(fpr) / ln(2)^2)`` (doc 000 Eqs. 1-2). Complexity: O(m / 64)."""
        return cls(capacity, fpr, seed=seed)

    # -- storage ------------------------------------------------------------------------------
    def _new_storage(self, m: int) -> Any:
        return BitArray(m)

    def _set_storage(self, bits: BitArray) -> None:
        """Install the storage; every construction path (init, load, fold, copy) ends here,
        so the state derived from it and from the seed is set here and nowhere else."""
        self._bits = bits
        self._dh = self.__dict__.get("_hash_id") == HASH_DOUBLE  # the probe scheme (bloomkit._engine.probes)
        self._tag_seeds = _tag_seeds(self.seed)
        self._str_seed = int(self._tag_seeds[TAG_STR])
        self._int_seed = int(self._tag_seeds[TAG_INT])
        self._wref: _WordsRef = _NO_WORDS

    @property
    def bits(self) -> BitArray:
        """The underlying :class:`~bloomkit._engine.storage.BitArray` (shared, not a copy)."""
        return self._bits

    @property
    def num_bits(self) -> int:
        """m, the number of bits."""
        return self._bits.num_bits

    @property
    def num_hashes(self) -> int:
        """k, the number of probes per key."""
        return self._num_hashes

    @property
    def probes(self) -> str:
        """The probe scheme: ``"independent"`` or ``"double"`` (:mod:`bloomkit._engine.probes`)."""
        return "double" if self._hash_id == HASH_DOUBLE else "independent"

    @property
    def size_in_bits(self) -> int:
        """Bits of the filter's payload: m."""
        return self.num_bits

    # -- single keys --------------------------------------------------------------------------
    def _words_ref(self) -> _WordsRef:
        """(words, address, number of words, m) of the current storage, re-read whenever its
        words array is another object. The tuple holds a reference to the array, so the
        address stays valid for as long as a caller holds the tuple; it is replaced whole."""
        bits = self._bits
        words = bits.words
        ref = self._wref
        if ref[0] is not words:
            m = bits.num_bits
            check_storage(type(self).__name__, words, np.dtype(np.uint64), (m + 63) // 64, "words")
            ref = (words, int(words.ctypes.data), len(words), m)
            self._wref = ref
        return ref

    def _core_rebind(self) -> None:
        """Bind the storage to the compiled ``add`` / ``in`` (:mod:`bloomkit._engine.boundary`): called
        by them whenever the words array is not the one bound (a new BitArray or a new words
        array), checked as :meth:`_words_ref` checks it."""
        def bind() -> None:
            ref = self._words_ref()
            kind = KIND_BITS_DH if self._dh else KIND_BITS
            self._core_bind(kind, self._bits, ref[0], ref[3], self._num_hashes, self.seed, 0, "words")

        core_rebind(self, bind)  # the Python methods while a batch add writes without the GIL

    def _py_add(self, key: Any) -> None:
        """Insert one key, holding the filter's lock (a batch add may be setting bits without
        the GIL: :func:`bloomkit._engine.parallel.batch_writer`). Complexity: O(k)."""
        with self._lock:  # one frame: the design warning's stacklevel points at the caller
            t = type(key)
            if t is str and key.isascii() or t is int and -_INT64 <= key < _INT64:
                ref = self._wref
                if ref[0] is not self._bits.words:
                    ref = self._words_ref()
                if t is str:
                    _ENTRY.bits_add_ascii(key, self._str_seed, ref[1], ref[2], self._num_hashes, ref[3], self._dh)
                    if not self._key_mask & _STR_BIT:
                        self._note_keys(_STR_BIT)
                else:
                    _ENTRY.bits_add_int(key, self._int_seed, ref[1], ref[2], self._num_hashes, ref[3], self._dh)
                    if not self._key_mask & _INT_BIT:
                        self._note_keys(_INT_BIT)
            else:
                tag, payload = encode_key(key)
                bits = self._bits
                _ENTRY.bits_add_one(payload, self._tag_seeds[tag], bits.words, self._num_hashes, bits.m64, self._dh)
                self._note_keys(1 << tag)
            left = self._budget - 1
            self._budget = left if left > 0 else self._design_check(2)

    def _py_contains(self, key: Any) -> bool:
        """True if the key may be in the set (never False for an inserted key). Complexity: O(k)."""
        t = type(key)
        if t is str and key.isascii() or t is int and -_INT64 <= key < _INT64:
            ref = self._wref
            if ref[0] is not self._bits.words:
                ref = self._words_ref()
            mask = self._key_mask
            if t is str:
                if mask and not mask & _STR_BIT:
                    self._foreign_key(key, TAG_STR, 2)
                return _ENTRY.bits_test_ascii(key, self._str_seed, ref[1], ref[2], self._num_hashes, ref[3], self._dh)
            if mask and not mask & _INT_BIT:
                self._foreign_key(key, TAG_INT, 2)
            return _ENTRY.bits_test_int(key, self._int_seed, ref[1], ref[2], self._num_hashes, ref[3], self._dh)
        tag, payload = encode_key(key)
        if self._key_mask and not self._key_mask >> tag & 1:
            self._foreign_key(key, tag, 2)
        bits = self._bits
        return _ENTRY.bits_test_one(payload, self._tag_seeds[tag], bits.words, self._num_hashes, bits.m64, self._dh)

    if not COMPILED:  # else FilterCore's compiled add / in (the same bits)
        add = _py_add
        __contains__ = _py_contains

    # -- batches ------------------------------------------------------------------------------
    def _hash(self, keys: Any) -> tuple[np.ndarray, int]:
        """(h1, key tag mask) of a batch, through the data front door."""
        return hash_keys(keys, self.seed, owner=type(self).__name__)

    def add_many(self, keys: Any) -> None:
        """Insert a batch: list, numpy, pyarrow, pandas or polars (by position). Complexity: O(n k).

        One chunked pass (:func:`bloomkit._engine.parallel.add_chunked`): a slice of keys is hashed,
        its bits set, then the next slice; numpy and pyarrow batches never make an array of
        the hashes of all keys, so memory is the input, the filter and O(chunk) (a list is
        hashed whole first, 8 bytes per key, so that a bad key raises before any bit is set).
        Large batches use several threads (:func:`bloomkit.set_num_threads`): the calling
        thread sets its share of the bits in the filter without the GIL, holding the
        filter's lock (concurrent single-key and batch adds wait for it, so no bit is ever
        lost; queries go on), the others in private word arrays ORed into the filter at the
        end (private arrays take at most a fifth of the batch's bytes). A bad key (NaN, None, an unsupported type) raises before any bit is
        set. An empty batch changes nothing.
        """
        batch, hash_chunk = key_source(keys, self._hash, f"{type(self).__name__}.add_many")
        bits = self._bits  # words and m of one storage object (a concurrent fold replaces both)
        words, k, m = bits.words, self._num_hashes, bits.m64
        insert = P.dh_set if self._dh else K.bits_set_nogil
        add_chunked(batch, hash_chunk, lambda target, h: insert(target, h, k, m), words, self, probes_per_key=k)
        self._note_keys(batch.tags)
        self._count_adds(len(batch), 2)

    def contains_many(self, keys: Any) -> np.ndarray:
        """Bool array: membership of every key of a batch. Complexity: O(n k).

        Hashed and tested a chunk at a time (no array of all hashes for numpy / pyarrow
        batches), large batches on several threads (read-only, no copies)."""
        batch, hash_chunk = key_source(keys, self._hash, f"{type(self).__name__}.contains_many")
        bits = self._bits
        words, k, m = bits.words, self._num_hashes, bits.m64
        self._foreign_keys(batch.tags, 2)
        test = P.dh_test if self._dh else K.bits_test
        return query_chunked(batch, lambda part: test(words, hash_chunk(part), k, m))

    # -- folding (document 003) ---------------------------------------------------------------
    def fold(self, factor: int) -> None:
        """Fold in place by ``factor``, a divisor of m (document 003, Eq. 3): bit j of the
        result is the OR of bits ``j + t m / factor``; counters are summed (saturating).

        The result is bit for bit the filter built at ``m / factor`` bits from the same keys
        (probe positions are ``G_i mod m`` with ``G_i`` independent of m), with a higher false
        positive rate. :class:`bloomkit.folding.FoldableBloomFilter` keeps the original to
        unfold. Complexity: O(m / 64) words (bits), O(m) (counters).
        """
        with self._lock:
            self._set_storage(self._store.fold(factor))

    def folded(self, factor: int) -> Self:
        """A copy folded by ``factor`` (:meth:`fold`); this filter is unchanged."""
        return self._like(self._store.fold(factor))

    # -- set algebra (bloomkit._membership.WordSetAlgebra) ---------------------------------------
    _COMPAT_FIELDS = "(num_bits, num_hashes, seed, hash)"

    def _compat_key(self) -> tuple[Any, ...]:
        return (self.num_bits, self._num_hashes, self.seed, self._hash_id)

    @property
    def _store(self) -> Any:
        """The storage object (BitArray here, CounterArray in the counting filter)."""
        return self._bits

    def _word_array(self) -> np.ndarray:
        return self._bits.words

    def _store_from_words(self, words: np.ndarray) -> BitArray:
        return BitArray(self.num_bits, words)

    def _copy_store(self) -> Any:
        return self._store.copy()

    def _clear_store(self) -> None:
        self._store.clear()

    def _same_store(self, other: Any) -> bool:
        return bool(self._store == other._store)

    def _set_count(self) -> int:
        """Number of set bits (non-zero counters in the counting filter)."""
        return int(self._store.nonzero_count())

    # -- statistics ---------------------------------------------------------------------------
    def fill_ratio(self) -> float:
        """Fraction of bits set (non-zero counters), X / m. Complexity: O(m)."""
        return self._set_count() / self.num_bits

    def estimated_count(self) -> float:
        """Swamidass-Baldi estimate of the number of distinct keys inserted
        (:func:`bloomkit.theory.estimate_count`)."""
        return float(theory.estimate_count(self._set_count(), self.num_bits, self._num_hashes))

    def predicted_fpr(self, num_keys: float | None = None) -> float:
        """False positive rate of doc 000 Eq. (2) for ``num_keys`` keys.

        Without ``num_keys``, uses the Swamidass-Baldi estimate of the keys inserted so far, which
        makes the prediction ``fill_ratio() ** k`` up to the (1 - 1/m) vs e^(-1/m) difference.
        """
        n = self.estimated_count() if num_keys is None else check_float(num_keys, "num_keys", "predicted_fpr", lo=0)
        if not np.isfinite(n):
            return 1.0
        model = theory.double_hashing_fpr if self._dh else theory.false_positive_rate
        return float(model(n, self.num_bits, self._num_hashes))

    def __len__(self) -> int:
        """Rounded Swamidass-Baldi *estimate* of the number of distinct keys (not a count:
        10,000 keys may give 10,002; ``exact_len`` is False). Complexity: O(m / 64)."""
        n = self.estimated_count()
        return int(round(n)) if np.isfinite(n) else self.num_bits

    def info(self) -> dict[str, Any]:
        """Parameters, sizes, fill and predicted rates (what ``bloomkit info`` prints).

        ``overfilled`` is True once the fill X/m exceeds its expectation at ``capacity`` keys
        (doc 000 Eq. 1) by more than three binomial standard deviations: the filter then holds
        more than ``capacity`` keys (beyond chance) and no longer meets its ``fpr``. A small
        filter filled to exactly ``capacity`` is not flagged for the spread of its fill."""
        set_bits = self._set_count()
        m = self.num_bits
        est = float(theory.estimate_count(set_bits, m, self._num_hashes))
        cap = self.capacity
        limit = self._design_limit()
        over = limit is not None and set_bits > limit[0]
        return {
            "structure": self._STRUCTURE, "class": type(self).__name__, "seed": self.seed,
            "num_bits": self.num_bits, "num_hashes": self._num_hashes, "probes": self.probes, "capacity": cap,
            "fpr": self.fpr,
            "size_in_bits": self.size_in_bits, "key_types": list(self.key_types),
            "fill_ratio": set_bits / m, "estimated_count": est if np.isfinite(est) else None,
            "count_is_exact": False, "predicted_fpr": self.predicted_fpr(),
            "overfilled": over,
        }

    def _design_limit(self) -> tuple[int, int] | None:
        """(most set bits at ``capacity`` keys: the expected fill X/m of doc 000 Eq. 1 plus three
        binomial standard deviations, times m; bits one add sets at most: k), None without a
        capacity. The line of ``info()["overfilled"]`` and of the overfill warning."""
        cap = self.capacity
        if cap is None:
            return None
        m, k = self.num_bits, self._num_hashes
        cached = self.__dict__.get("_limit")
        if cached is not None and cached[0] == (cap, m, k):
            return cached[1]  # type: ignore[no-any-return]
        expected = float(theory.fill_ratio(cap, m, k))
        limit = (int(np.floor((expected + 3.0 * float(theory.binomial_sd(expected, m))) * m)), k)
        self.__dict__["_limit"] = ((cap, m, k), limit)
        return limit

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(num_bits={self.num_bits}, num_hashes={self._num_hashes}, "
            f"seed={self.seed}, fill_ratio={self.fill_ratio():.4f})"
        )

    def _check(self) -> None:
        """Assert the invariants (storage size, no stray bits beyond m)."""
        b = self._bits
        if not (b.words.dtype == np.uint64 and b.words.shape == ((b.num_bits + 63) // 64,)):
            raise InvariantError("b.words.dtype == np.uint64 and b.words.shape == ((b.num_bits + 63) // 64,)")
        rem = b.num_bits & 63
        if not (rem == 0 or int(b.words[-1]) >> rem == 0):
            raise InvariantError("bits set beyond num_bits")
        if not (1 <= self._num_hashes <= MAX_HASHES):
            raise InvariantError("1 <= self._num_hashes <= MAX_HASHES")
        if not (key_type_mask(key_type_names(self._key_mask)) & ~self._key_mask == 0):
            raise InvariantError("key_type_mask(key_type_names(self._key_mask)) & ~self._key_mask == 0")

    # -- persistence --------------------------------------------------------------------------
    def _params(self) -> dict[str, Any]:
        return {"num_bits": self.num_bits, "num_hashes": self._num_hashes, "capacity": self.capacity,
                "fpr": self.fpr, "key_types": list(self.key_types)}

    def _to_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        return self._params(), {"words": self._bits.words}

    @classmethod
    def _restore_common(cls, params: dict[str, Any], seed: int, hash_id: int) -> Self:
        out = cls.__new__(cls)
        out.capacity = params["capacity"]
        out.fpr = params["fpr"]
        out.seed = seed
        out._hash_id = hash_id
        out._num_hashes = params["num_hashes"]
        out._key_mask = key_type_mask(params["key_types"])
        return out

    @classmethod
    def _from_state(cls, params: dict[str, Any], arrays: dict[str, np.ndarray], seed: int, hash_id: int) -> Any:
        out = cls._restore_common(params, seed, hash_id)
        m = params["num_bits"]
        words = arrays["words"]
        if words.shape != ((m + 63) // 64,):
            raise FormatError(f"{cls.__name__} words array has {words.shape[0]} words; num_bits = {m} needs {(m + 63) // 64}")
        rem = m & 63
        if rem and int(words[-1]) >> rem:
            raise FormatError(f"{cls.__name__} payload has bits set beyond num_bits")
        out._set_storage(BitArray(m, words))
        return out


class CountingBloomFilter(BloomFilter):
    """A counting Bloom filter: counters instead of bits, so keys can be removed.

    Parameters
    ----------
    capacity, fpr, num_bits, num_hashes, seed, probes
        As for :class:`BloomFilter` (``num_bits`` is the number of counters m; ``probes``
        chooses the counters a key increments, as it chooses a BloomFilter's bits).
    counter_bits : {4, 8, 16, 32}
        Width of each counter. Counters saturate at ``2**counter_bits - 1``; the first
        saturation sets :attr:`overflowed`. A saturated counter is never decremented again (its
        true value is unknown), so no key ever becomes a false negative; the cost is that the
        filter keeps answering True for keys sharing that counter.

    Notes
    -----
    ``remove`` raises InvalidParameterError when the key is certainly absent (one of its
    counters is zero); it cannot detect removal of a false positive, which corrupts the filter
    as in every counting Bloom filter.

    Thread safety: every counter update (add, remove, batch or single) is one compiled call that
    keeps the GIL, so concurrent adds and removes from any number of threads lose nothing.
    """

    _PARAMS: ClassVar[Any] = {**BloomFilter._PARAMS, "counter_bits": COUNTER_BITS, "overflowed": Bool()}
    _ARRAYS: ClassVar[Any] = {"counters": ArraySpec(None)}

    def __init__(
        self,
        capacity: int | None = None,
        fpr: float | None = None,
        *,
        num_bits: int | None = None,
        num_hashes: int | None = None,
        seed: int = 0,
        counter_bits: int = 4,
        probes: str = "independent",
    ) -> None:
        self._width: int = COUNTER_BITS(counter_bits, "counter_bits", "CountingBloomFilter")
        super().__init__(capacity, fpr, num_bits=num_bits, num_hashes=num_hashes, seed=seed, probes=probes)

    @classmethod
    def for_requirements(cls, capacity: int, fpr: float, *, seed: int = 0, counter_bits: int = 4) -> Self:
        """As :meth:`BloomFilter.for_requirements`, with ``counter_bits``-bit counters."""
        return cls(capacity, fpr, seed=seed, counter_bits=counter_bits)

    def _new_storage(self, m: int) -> CounterArray:
        return CounterArray(m, self._width)

    def _set_storage(self, counters: CounterArray) -> None:  # type: ignore[override]
        self._counters = counters
        self._dh = self.__dict__.get("_hash_id") == HASH_DOUBLE
        self._tag_seeds = _tag_seeds(self.seed)

    @property
    def counters(self) -> CounterArray:
        """The underlying :class:`~bloomkit._engine.storage.CounterArray`."""
        return self._counters

    @property
    def bits(self) -> BitArray:
        """Bit view: a bit is set where the counter is non-zero (a copy)."""
        return self.to_bloom().bits

    @property
    def num_bits(self) -> int:
        """m, the number of counters."""
        return self._counters.size

    @property
    def size_in_bits(self) -> int:
        """Bits of the filter's payload: m counters of ``counter_bits`` bits."""
        return self._counters.size * self._width

    @property
    def counter_bits(self) -> int:
        """Width of each counter in bits."""
        return self._width

    @property
    def overflowed(self) -> bool:
        """True once any counter has saturated."""
        return self._counters.overflowed

    def _h1_one(self, key: Any) -> np.ndarray:
        """h1 of one key as a length-1 array for the batch kernels (one compiled call each)."""
        return np.array([hash64(key, self.seed)], dtype=np.uint64)

    def _core_rebind(self) -> None:
        c = self._counters
        n, dtype = CounterArray.storage_shape(c.size, c.width)
        check_storage(type(self).__name__, c.data, dtype, n, "counter bytes" if c.width == 4 else "counters")
        kind = KIND_COUNTERS_DH if self._dh else KIND_COUNTERS
        self._core_bind(kind, c, c.data, c.size, self._num_hashes, self.seed, c.width, "data")

    def _py_add(self, key: Any) -> None:
        """Insert one key. Complexity: O(k)."""
        c = self._counters
        h1, tag = hash64_tag(key, self.seed)
        over = KC.counters_inc_h1(c.data, c.width, c.max_value, np.array([h1], dtype=np.uint64),
                                 self._num_hashes, c.m64, self._dh)
        c.overflowed |= bool(over)
        self._note_keys(1 << tag)
        self._count_adds(1, 2)

    def _py_contains(self, key: Any) -> bool:
        """True if the key may be in the set. Complexity: O(k)."""
        c = self._counters
        h1, tag = hash64_tag(key, self.seed)
        if self._key_mask and not self._key_mask >> tag & 1:
            self._foreign_key(key, tag, 2)
        h = np.array([h1], dtype=np.uint64)
        return bool(KC.counters_test_h1(c.data, c.width, h, self._num_hashes, c.m64, self._dh)[0])

    if not COMPILED:
        add = _py_add
        __contains__ = _py_contains

    def add_many(self, keys: Any) -> None:
        """Insert a batch (list, numpy, pyarrow, pandas, polars). Complexity: O(n k)."""
        c = self._counters
        h, tags = self._hash(keys)
        over = KC.counters_inc_h1(c.data, c.width, c.max_value, h, self._num_hashes, c.m64, self._dh)
        c.overflowed |= bool(over)
        self._note_keys(tags)
        self._count_adds(len(h), 2)

    def contains_many(self, keys: Any) -> np.ndarray:
        """Bool array: membership of every key. Complexity: O(n k)."""
        c = self._counters
        h, tags = self._hash(keys)
        self._foreign_keys(tags, 2)
        return KC.counters_test_h1(c.data, c.width, h, self._num_hashes, c.m64, self._dh)

    def remove(self, key: Any) -> None:
        """Remove one key; InvalidParameterError (filter unchanged) if it is certainly absent.

        Complexity: O(k).
        """
        c = self._counters
        if KC.counters_dec_h1(c.data, c.width, c.max_value, self._h1_one(key), self._num_hashes, c.m64, self._dh) >= 0:
            raise InvalidParameterError(
                f"The 'key' parameter of CountingBloomFilter.remove must be a present key. "
                f"Got {key!r}, which is not in the filter, instead."
            )

    def remove_many(self, keys: Any) -> None:
        """Remove a batch, all or nothing: if any key is certainly absent (also counting
        repeats within the batch), InvalidParameterError is raised and nothing is removed.

        Complexity: O(n k).
        """
        c = self._counters
        h1 = self._hash(keys)[0]
        bad = int(KC.counters_dec_h1(c.data, c.width, c.max_value, h1, self._num_hashes, c.m64, self._dh))
        if bad >= 0:
            raise InvalidParameterError(
                f"The 'keys' parameter of CountingBloomFilter.remove_many must hold present keys only. "
                f"Got an absent key at index {bad} instead; nothing was removed."
            )

    def to_bloom(self) -> BloomFilter:
        """The plain Bloom filter of the same keys (bit set where the counter is non-zero)."""
        bf = BloomFilter(num_bits=self.num_bits, num_hashes=self._num_hashes, seed=self.seed, probes=self.probes)
        bf.capacity, bf.fpr = self.capacity, self.fpr
        nz = np.flatnonzero(self._counters.values())
        bf.bits.set_many(nz)
        bf._key_mask = self._key_mask
        return bf

    def _compatible(self, other: Any, op: str) -> None:
        super()._compatible(other, op)
        if other._width != self._width:
            raise IncompatibleFiltersError(
                f"cannot {op} counting filters with {self._width}- and {other._width}-bit counters"
            )

    def _combine(self, other: CountingBloomFilter, op: str, fn: Any, key_mask: int) -> Self:
        self._compatible(other, op)
        vals = fn(self._counters.values(), other._counters.values())
        out = CounterArray.from_values(vals, self._width)
        out.overflowed |= self._counters.overflowed or other._counters.overflowed
        return self._like(out, key_mask)

    def union(self, other: CountingBloomFilter) -> Self:
        """Multiset sum of both filters (counters added, saturating). Complexity: O(m)."""
        self._compatible(other, "union")
        return self._combine(other, "union", np.add, self._key_mask | other._key_mask)

    def intersection(self, other: CountingBloomFilter) -> Self:
        """Counter-wise minimum. Complexity: O(m)."""
        self._compatible(other, "intersect")
        return self._combine(other, "intersect", np.minimum, self._key_mask & other._key_mask)

    def __ior__(self, other: CountingBloomFilter) -> Self:
        res = self.union(other)
        self._set_storage(res._counters)
        self._note_keys(other._key_mask)
        return self

    def __iand__(self, other: CountingBloomFilter) -> Self:
        res = self.intersection(other)
        self._set_storage(res._counters)
        return self

    def issubset(self, other: BloomFilter) -> bool:
        """True if every non-zero counter here is non-zero in ``other``."""
        self._compatible(other, "compare")
        a = self._counters.values() > 0
        b = other._counters.values() > 0  # type: ignore[attr-defined]
        return bool(np.all(~a | b))

    @property
    def _store(self) -> Any:
        return self._counters

    def info(self) -> dict[str, Any]:
        out = super().info()
        out.update(counter_bits=self._width, overflowed=self.overflowed)
        return out

    def _check(self) -> None:
        c = self._counters
        if not (c.size >= 1 and c.width == self._width):
            raise InvariantError("c.size >= 1 and c.width == self._width")
        if not (c.data.shape == (((c.size + 1) // 2) if c.width == 4 else c.size,)):
            raise InvariantError("c.data.shape == (((c.size + 1) // 2) if c.width == 4 else c.size,)")
        if c.width == 4 and c.size % 2:
            if not (int(c.data[-1]) >> 4 == 0):
                raise InvariantError("padding nibble is not zero")
        if not (1 <= self._num_hashes <= MAX_HASHES):
            raise InvariantError("1 <= self._num_hashes <= MAX_HASHES")

    def _to_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        params = {**self._params(), "counter_bits": self._width, "overflowed": self.overflowed}
        return params, {"counters": self._counters.data}

    @classmethod
    def _from_state(cls, params: dict[str, Any], arrays: dict[str, np.ndarray], seed: int, hash_id: int) -> Any:
        out = cls._restore_common(params, seed, hash_id)
        out._width = params["counter_bits"]
        m = params["num_bits"]
        data = arrays["counters"]
        need = CounterArray.storage_shape(m, out._width)
        if data.dtype != need[1] or data.shape != (need[0],):
            raise FormatError(
                f"{cls.__name__} counters must be {need[0]} x {np.dtype(need[1])} for {m} {out._width}-bit "
                f"counters; got {data.shape} {data.dtype}"
            )
        c = CounterArray(m, out._width, data)
        if out._width == 4 and m % 2 and int(c.data[-1]) >> 4:
            raise FormatError(f"{cls.__name__} payload has a non-zero padding nibble")
        c.overflowed = params["overflowed"]
        out._set_storage(c)
        return out
