"""The split-block Bloom filter itself (:class:`SplitBlockBloomFilter`, native and Parquet
modes); its model is :mod:`bloomkit.splitblock.model`, Parquet's PLAIN encoding
:mod:`bloomkit.splitblock.plain`, its numba kernels :mod:`bloomkit.splitblock._kernels`."""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from typing import Any, ClassVar, Self

import numpy as np

from .._engine.boundary import COMPILED, KIND_PYTHON, KIND_SPLIT, FilterCore, check_storage
from .._engine.columns import KeyBatch
from .._engine.hashing import (
    HASH_XXH64,
    KeyTypesMixin,
    check_seed,
    hash64_tag,
    hash_keys,
    key_type_mask,
    key_type_names,
    register_hash_id,
)
from .._engine.lazy import splitblock_kernels as SK
from .._engine.parallel import add_chunked, core_rebind, hashes_of, key_source, query_chunked
from .._engine.storage import aligned_copy, aligned_zeros, popcount_words
from .._format import ArraySpec, Persistable
from .._mapped import Mappable
from .._membership import WordSetAlgebra
from .._validation import (
    CAPACITY,
    FPR,
    KEY_TYPES,
    Int,
    InvariantError,
    Optional,
    Options,
    check_bytes,
    check_float,
    check_hashes,
)
from .._watch import FilterWatch
from ..errors import FormatError, InvalidParameterError
from .model import LANES, MAX_BLOCKS, split_block_fill, split_block_fpr, split_block_num_blocks
from .plain import PHYSICAL_TYPES, optimal_num_bytes, plain_hashes, plain_source

__all__ = ["HASH_PARQUET", "SplitBlockBloomFilter"]

HASH_PARQUET = register_hash_id(4, "parquet-xxh64-plain")
"""Hash id of Parquet mode: XXH64, seed 0, of the PLAIN encoding of the value."""

NATIVE_BLOCK_BITS = 512
PARQUET_BLOCK_BITS = 256
MAX_PARQUET_BLOCKS = (1 << 31) - 1
"""The format allows z < 2**31 blocks (Arrow writes at most 2**22: 128 MiB)."""
NUM_BLOCKS = Int(1, MAX_BLOCKS)
_LANE_BITS = {"native": 64, "parquet": 32}
_WORDS_PER_BLOCK = {"native": 8, "parquet": 4}


# ---------------------------------------------------------------------------------------------
# the filter


class SplitBlockBloomFilter(FilterCore, WordSetAlgebra, KeyTypesMixin, FilterWatch, Mappable, Persistable):
    """A split-block Bloom filter: each key sets 8 bits in one block of one cache line.

    Parameters
    ----------
    capacity : int, optional
        n, the keys to hold; with ``fpr`` it sizes the filter by the model:
        B = :func:`split_block_num_blocks` (``capacity``, ``fpr``), about 10.1 bits per key
        at 1% and 15.7 at 0.1% (a standard Bloom filter: 9.6 and 14.4).
    fpr : float in (0, 1), optional
        The false positive rate at ``capacity`` keys, met by the model
        (:func:`split_block_fpr`), not approximated.
    num_blocks : int, optional
        B given directly (instead of ``fpr``); a highly composite B can be folded by many
        factors (:meth:`fold`).
    seed : int in [0, 2**64)
        Hash seed; filters combine only with filters of the same seed.

    Notes
    -----
    Native mode: block ``h mod B`` (512 bits, 64-byte aligned), lane i's bit
    ``(splitmix64(h + golden) >> 6 i) & 63``, h bloomkit's key hash (:mod:`bloomkit._engine.hashing`,
    the same keys as :class:`bloomkit.BloomFilter`). Parquet mode (:meth:`for_parquet`,
    :meth:`from_parquet_values`, :meth:`from_parquet_bitset`): Parquet's SBBF exactly; keys
    are values of the column's physical type (``physical_type``), hashed as Parquet does.

    The set protocol of :class:`bloomkit.BloomFilter` (``add``, ``in``, ``update``, ``|``,
    ``&``, ``|=``, ``&=``, ``issubset``, ``copy``, ``clear``, ``bool``, ``==``) plus
    ``add_many`` / ``contains_many``. ``len()`` is a rounded *estimate* (``exact_len`` is
    False), from the fraction of bits set; an empty batch changes nothing. Warnings
    (:class:`bloomkit.BloomkitWarning`, once per filter): adds past ``capacity`` (beyond chance:
    ``info()["overfilled"]``), and queries of a key type the filter holds none of, as for
    :class:`bloomkit.BloomFilter`.

    Thread safety: any number of threads may add and query at once. Single-key adds keep the
    GIL (the compiled boundary's C call and the numba kernel alike); a batch add sets bits from
    the calling thread without the GIL, holding the filter's lock (single-key adds wait for
    it meanwhile), and from the other threads in private arrays merged at the end, so no bit
    is ever lost; queries release the GIL. ``fold`` / ``clear`` / ``|=`` while other threads add can lose those concurrent
    adds (they replace or reset the storage): do them from one thread.

    Examples
    --------
    >>> f = SplitBlockBloomFilter(capacity=1000, fpr=0.01)
    >>> f.add("alice"); "alice" in f
    True
    >>> f.add_many(["bob", "carol"]); f.contains_many(["bob", "dave"]).tolist()
    [True, False]
    """

    _PARAMS: ClassVar[Any] = {
        "mode": Options("native", "parquet"), "num_blocks": NUM_BLOCKS, "capacity": Optional(CAPACITY),
        "fpr": Optional(FPR), "key_types": KEY_TYPES, "physical_type": Optional(Options(*PHYSICAL_TYPES)),
        "type_length": Optional(Int(1, (1 << 31) - 1)),
    }
    _ARRAYS: ClassVar[Any] = {"words": ArraySpec("<u8")}
    _HASH_IDS = (HASH_XXH64, HASH_PARQUET)
    exact_len: ClassVar[bool] = False

    def __init__(
        self,
        capacity: int | None = None,
        fpr: float | None = None,
        *,
        num_blocks: int | None = None,
        seed: int = 0,
    ) -> None:
        owner = type(self).__name__
        cap = None if capacity is None else CAPACITY(capacity, "capacity", owner)
        rate = None if fpr is None else FPR(fpr, "fpr", owner)
        if num_blocks is None:
            if cap is None or rate is None:
                raise InvalidParameterError(
                    f"{owner} needs either capacity and fpr, or num_blocks. "
                    f"Got capacity={capacity!r}, fpr={fpr!r}, num_blocks=None instead."
                )
            B = split_block_num_blocks(cap, rate)
        else:
            if rate is not None:
                raise InvalidParameterError(
                    f"{owner} takes either fpr or num_blocks, not both. "
                    f"Got fpr={fpr!r}, num_blocks={num_blocks!r} instead."
                )
            B = NUM_BLOCKS(num_blocks, "num_blocks", owner)
        self.capacity, self.fpr = cap, rate
        self.seed = check_seed(seed, owner)
        self._setup("native", HASH_XXH64, None, None)
        self._set_storage(aligned_zeros(B * 8, np.uint64, f"a {owner} of {B} blocks"))

    @classmethod
    def for_requirements(cls, capacity: int, fpr: float, *, seed: int = 0) -> Self:
        """The smallest native filter holding ``capacity`` keys at rate ``fpr`` by the model
        (:func:`split_block_num_blocks`). Complexity: O(B)."""
        return cls(capacity, fpr, seed=seed)

    # -- Parquet mode -------------------------------------------------------------------------
    @classmethod
    def for_parquet(
        cls,
        *,
        physical_type: str,
        num_bytes: int | None = None,
        ndv: int | None = None,
        fpp: float | None = None,
        type_length: int | None = None,
    ) -> Self:
        """An empty Parquet-mode filter for values of a column of ``physical_type``.

        Parameters
        ----------
        physical_type : {"INT32", "INT64", "FLOAT", "DOUBLE", "BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY"}
            The column's physical type (values are hashed by their PLAIN encoding).
        num_bytes : int, optional
            The bitset size: a multiple of 32 (Arrow reads only powers of two, 32 .. 2**27).
        ndv, fpp : optional
            Instead of ``num_bytes``: Arrow's sizing, :func:`bloomkit.parquet.optimal_num_bytes`
            (defaults as pyarrow's ``bloom_filter_options``: ndv 1048576, fpp 0.05).
        type_length : int, optional
            The value length of a FIXED_LEN_BYTE_ARRAY column (required for it).

        Complexity: O(num_bytes).
        """
        owner = f"{cls.__name__}.for_parquet"
        ptype = Options(*PHYSICAL_TYPES)(physical_type, "physical_type", owner)
        tlen = cls._check_type_length(ptype, type_length, owner)
        if num_bytes is None:
            nb = optimal_num_bytes(1048576 if ndv is None else ndv, 0.05 if fpp is None else fpp)
        else:
            if ndv is not None or fpp is not None:
                raise InvalidParameterError(
                    f"{owner} takes either num_bytes or ndv / fpp, not both. Got num_bytes={num_bytes!r}, "
                    f"ndv={ndv!r}, fpp={fpp!r} instead."
                )
            nb = Int(32, MAX_PARQUET_BLOCKS * 32)(num_bytes, "num_bytes", owner)
            if nb % 32:
                raise InvalidParameterError(
                    f"The 'num_bytes' parameter of {owner} must be a multiple of 32 (256-bit blocks). "
                    f"Got {num_bytes!r} instead."
                )
        out = cls.__new__(cls)
        out.capacity, out.fpr, out.seed = None, None, 0
        out._setup("parquet", HASH_PARQUET, ptype, tlen)
        out._set_storage(aligned_zeros(nb // 8, np.uint64, f"a Parquet bitset of {nb} bytes"))
        return out

    @classmethod
    def from_parquet_values(
        cls,
        values: Any,
        *,
        physical_type: str,
        num_bytes: int | None = None,
        ndv: int | None = None,
        fpp: float | None = None,
        type_length: int | None = None,
    ) -> Self:
        """The filter Parquet writers store for these values (a row group's column chunk).

        With ``num_bytes``: that bitset size. Without it, sized as Arrow sizes it: a bitset of
        :func:`bloomkit.parquet.optimal_num_bytes` (``ndv``, ``fpp``), filled, then folded to
        the fewest blocks whose estimated rate stays within ``fpp`` (:meth:`shrink_to_fpp`,
        Arrow's ``FoldToTargetFpp``); the bytes equal pyarrow's ``bloom_filter_options=
        {col: {"ndv": ndv, "fpp": fpp}}`` (tested). Values as for :meth:`add_many` of a
        Parquet-mode filter (:func:`bloomkit.parquet.plain_values`); nulls are refused.

        Complexity: O(n + num_bytes).
        """
        out = cls.for_parquet(physical_type=physical_type, num_bytes=num_bytes, ndv=ndv, fpp=fpp,
                              type_length=type_length)
        out.add_many(values)
        if num_bytes is None:
            out.shrink_to_fpp(0.05 if fpp is None else fpp)
        return out

    @classmethod
    def from_parquet_bitset(
        cls, bitset: bytes | bytearray | memoryview, *, physical_type: str, type_length: int | None = None
    ) -> Self:
        """A Parquet-mode filter over a bitset read from a file (FormatError if its length is
        not a positive multiple of 32). Complexity: O(len(bitset))."""
        data = check_bytes(bitset, "bitset", "SplitBlockBloomFilter.from_parquet_bitset")
        if not data or len(data) % 32 or len(data) // 32 > MAX_PARQUET_BLOCKS:
            raise FormatError(f"a Parquet bloom filter bitset must be a positive multiple of 32 bytes; got {len(data)}")
        out = cls.for_parquet(physical_type=physical_type, num_bytes=len(data), type_length=type_length)
        out._words.view(np.uint8)[:] = np.frombuffer(data, dtype=np.uint8)
        if sys.byteorder == "big":  # pragma: no cover - the bitset is little-endian
            out._words.byteswap(inplace=True)
        return out

    def to_parquet_bitset(self) -> bytes:
        """The bitset as Parquet stores it (eight little-endian uint32 words per block).

        Complexity: O(num_bytes)."""
        self._need_parquet("to_parquet_bitset")
        return self._words.astype("<u8", copy=False).tobytes()

    def shrink_to_fpp(self, fpp: float) -> None:
        """Parquet mode: fold by the largest power of two (dividing the block count) whose
        estimated rate ``(1 - (1 - fill)^(2^t))^8`` stays within ``fpp``, fill being the
        fraction of set bits; an empty filter becomes one block. This is Arrow's
        ``FoldToTargetFpp``, applied by pyarrow before it writes a filter.

        Complexity: O(num_bytes)."""
        self._need_parquet("shrink_to_fpp")
        p = FPR(fpp, "fpp", "shrink_to_fpp")
        bits = self.num_blocks * PARQUET_BLOCK_BITS
        set_bits = self._set_count()
        if set_bits == 0:
            self._set_storage(aligned_zeros(_WORDS_PER_BLOCK["parquet"], np.uint64))
            return
        unset = 1.0 - set_bits / bits
        folds = 0
        z = self.num_blocks
        while z % 2 == 0 and z > 1:
            unset *= unset
            if (1.0 - unset) ** 8 > p:
                break
            folds += 1
            z //= 2
        if folds:
            self.fold(1 << folds)

    def contains_hashes(self, hashes: Any) -> np.ndarray:
        """Membership of precomputed hashes (native: bloomkit's h1; Parquet: XXH64 of the
        plain encoding, :func:`bloomkit.parquet.plain_hashes`). Complexity: O(n)."""
        out: np.ndarray = self._kernels()[1](check_hashes(hashes, "hashes", f"{type(self).__name__}.contains_hashes"))
        return out

    def add_hashes(self, hashes: Any) -> None:
        """Insert precomputed hashes (see :meth:`contains_hashes`). Complexity: O(n)."""
        batch = KeyBatch(check_hashes(hashes, "hashes", f"{type(self).__name__}.add_hashes"), hashed=True)
        add_chunked(batch, hashes_of, self._kernels()[0], self._words, self, refuse_nan=False)

    # -- state --------------------------------------------------------------------------------
    def _setup(self, mode: str, hash_id: int, physical_type: str | None, type_length: int | None) -> None:
        self.mode = mode
        self._hash_id = hash_id
        self.physical_type = physical_type
        self.type_length = type_length
        self._key_mask = 0

    @staticmethod
    def _check_type_length(ptype: str, type_length: Any, owner: str) -> int | None:
        if ptype == "FIXED_LEN_BYTE_ARRAY":
            if type_length is None:
                raise InvalidParameterError(
                    f"The 'type_length' parameter of {owner} is required for FIXED_LEN_BYTE_ARRAY. Got None instead."
                )
            return int(Int(1, (1 << 31) - 1)(type_length, "type_length", owner))
        if type_length is not None:
            raise InvalidParameterError(
                f"The 'type_length' parameter of {owner} applies to FIXED_LEN_BYTE_ARRAY only. "
                f"Got {type_length!r} for {ptype} instead."
            )
        return None

    def _set_storage(self, words: np.ndarray) -> None:
        """Install the storage; every construction path ends here."""
        self._words = words
        self._B64 = np.uint64(len(words) // _WORDS_PER_BLOCK[self.mode])

    def _kernels(self) -> tuple[Any, Any]:
        """(insert into a word array without the GIL, test) of this layout, bound to the block
        count (the test also to the current storage)."""
        words, B = self._words, self._B64
        if self.mode == "native":
            return lambda t, h: SK.native_add(t, h, B), lambda h: SK.native_test(words, h, B)
        return lambda t, h: SK.parquet_add(t, h, B), lambda h: SK.parquet_test(words, h, B)

    def _need_parquet(self, what: str) -> None:
        if self.mode != "parquet":
            raise InvalidParameterError(
                f"{type(self).__name__}.{what} needs a Parquet-mode filter (for_parquet, "
                "from_parquet_values, from_parquet_bitset). Got a native-mode filter instead."
            )

    @property
    def num_blocks(self) -> int:
        """B (z in the Parquet format), the number of blocks."""
        return int(self._B64)

    @property
    def block_bits(self) -> int:
        """Bits per block: 512 (native) or 256 (Parquet)."""
        return NATIVE_BLOCK_BITS if self.mode == "native" else PARQUET_BLOCK_BITS

    @property
    def num_hashes(self) -> int:
        """k = 8: bits set per key, one per lane."""
        return LANES

    @property
    def size_in_bits(self) -> int:
        """Bits of the filter's payload: B times the block size."""
        return self.num_blocks * self.block_bits

    @property
    def words(self) -> np.ndarray:
        """The storage (uint64 words, 64-byte aligned; shared, not a copy)."""
        return self._words

    # -- keys ---------------------------------------------------------------------------------
    def _hash(self, keys: Any) -> tuple[np.ndarray, int]:
        """(hashes, key tag mask) of a batch (native: bloomkit's h1; Parquet: plain XXH64)."""
        if self.mode == "native":
            return hash_keys(keys, self.seed, owner=type(self).__name__)
        return plain_hashes(keys, self.physical_type, self.type_length)

    def _batch(self, keys: Any, what: str) -> tuple[KeyBatch, Callable[[KeyBatch], np.ndarray]]:
        owner = f"{type(self).__name__}.{what}"
        if self.mode == "native":
            return key_source(keys, self._hash, owner)
        return plain_source(keys, self.physical_type, self.type_length, name="keys", owner=owner)

    def _core_rebind(self) -> None:
        """Bind the storage to the compiled ``add`` / ``in`` (:mod:`bloomkit._engine.boundary`; native
        mode; Parquet mode keeps the Python methods)."""
        if self.mode == "native":
            def bind() -> None:
                words, B = self._words, int(self._B64)
                check_storage(type(self).__name__, words, np.dtype(np.uint64), B * _WORDS_PER_BLOCK["native"], "words")
                self._core_bind(KIND_SPLIT, None, words, B, LANES, self.seed, 0, "")

            core_rebind(self, bind)  # the Python methods while a batch add writes without the GIL
        else:
            self._core_bind(KIND_PYTHON, None, None, 1, 1, 0, 0, "")

    def _py_add(self, key: Any) -> None:
        """Insert one key (Parquet mode: one value of the column's type). Complexity: O(1)."""
        if self.mode == "native":
            h, tag = hash64_tag(key, self.seed)
            with self._lock:  # a batch add may be setting bits without the GIL (batch_writer)
                SK.native_add_one(self._words, np.uint64(h), self._B64)
            self._note_keys(1 << tag)
            self._count_adds(1, 2)
        else:
            self.add_many([key])

    def _py_contains(self, key: Any) -> bool:
        """True if the key may be in the set (never False for an inserted key). Complexity: O(1)."""
        if self.mode == "native":
            h, tag = hash64_tag(key, self.seed)
            if self._key_mask and not self._key_mask >> tag & 1:
                self._foreign_key(key, tag, 2)
            return bool(SK.native_test_one(self._words, np.uint64(h), self._B64))
        return bool(self.contains_many([key])[0])

    if not COMPILED:  # else FilterCore's compiled add / in (the same bits)
        add = _py_add
        __contains__ = _py_contains

    def add_many(self, keys: Any) -> None:
        """Insert a batch: list, numpy, pyarrow, pandas or polars (by position). Complexity: O(n).

        One chunked pass (:func:`bloomkit._engine.parallel.add_chunked`): a slice of keys is hashed,
        then inserted, then the next; no array of all hashes for numpy / pyarrow batches.
        Large batches use several threads (the calling thread writes the filter without the
        GIL, holding its lock, the others private arrays merged at the end). A bad key
        raises before any bit is set.
        """
        batch, hash_chunk = self._batch(keys, "add_many")
        add_chunked(batch, hash_chunk, self._kernels()[0], self._words, self, refuse_nan=self.mode == "native")
        self._note_keys(batch.tags)
        self._count_adds(len(batch), 2)

    def contains_many(self, keys: Any) -> np.ndarray:
        """Bool array: membership of every key of a batch, hashed and tested a chunk at a
        time (several threads for large batches). Complexity: O(n)."""
        batch, hash_chunk = self._batch(keys, "contains_many")
        if self.mode == "native":
            self._foreign_keys(batch.tags, 2)
        test = self._kernels()[1]
        return query_chunked(batch, lambda part: test(hash_chunk(part)))

    # -- folding ------------------------------------------------------------------------------
    def _folded_words(self, factor: int) -> np.ndarray:
        f = Int(2, None)(factor, "factor", f"{type(self).__name__}.fold")
        B = self.num_blocks
        if B % f:
            raise InvalidParameterError(
                f"The 'factor' parameter of {type(self).__name__}.fold must divide the number of blocks "
                f"{B}. Got {f} instead."
            )
        wpb = _WORDS_PER_BLOCK[self.mode]
        # native: block b of the result ORs blocks b + t B/f (h mod B/f = (h mod B) mod B/f);
        # Parquet: it ORs blocks b f .. b f + f - 1 (multiply-shift keeps the top bits)
        shape = (f, B // f, wpb) if self.mode == "native" else (B // f, f, wpb)
        out = aligned_zeros((B // f) * wpb, np.uint64, "a folded filter")
        np.bitwise_or.reduce(self._words.reshape(shape), axis=0 if self.mode == "native" else 1,
                             out=out.reshape(B // f, wpb))
        return out

    def fold(self, factor: int) -> None:
        """Fold in place by ``factor``, a divisor of B: the result is bit for bit the filter
        built with B / factor blocks from the same keys (native: blocks b + t B / factor are
        ORed, as ``h mod B`` reduces to ``h mod (B / factor)``; Parquet: groups of ``factor``
        adjacent blocks, as the multiply-shift block index keeps the top bits). The rate
        rises to ``split_block_fpr(n, B / factor)``. Complexity: O(B)."""
        with self._lock:
            self._set_storage(self._folded_words(factor))

    def folded(self, factor: int) -> Self:
        """A copy folded by ``factor`` (:meth:`fold`); this filter is unchanged."""
        return self._like(self._folded_words(factor))

    # -- set algebra (bloomkit._membership.WordSetAlgebra) ---------------------------------------
    _COMPAT_FIELDS = "(mode, num_blocks, seed, hash, physical_type, type_length)"

    def _compat_key(self) -> tuple[Any, ...]:
        return (self.mode, self.num_blocks, self.seed, self._hash_id, self.physical_type, self.type_length)

    @property
    def _store(self) -> np.ndarray:
        return self._words

    def _word_array(self) -> np.ndarray:
        return self._words

    def _store_from_words(self, words: np.ndarray) -> np.ndarray:
        return words

    def _copy_store(self) -> np.ndarray:
        return aligned_copy(self._words)

    def _clear_store(self) -> None:
        self._words.fill(0)

    def _same_store(self, other: Any) -> bool:
        return bool(np.array_equal(self._words, other._words))

    # -- statistics ---------------------------------------------------------------------------
    def fill_ratio(self) -> float:
        """Fraction of bits set. Complexity: O(B)."""
        return self._set_count() / self.size_in_bits

    def estimated_count(self) -> float:
        """Estimated number of distinct keys from the X set bits of the m = 8 B w:
        ``ln(1 - X/m) / ln(1 - 1/(B w))``, as a key leaves a given bit unset with probability
        exactly ``1 - 1/(B w)`` (block 1/B, then bit 1/w of its lane); inf for a full filter.
        Complexity: O(B)."""
        m = self.size_in_bits
        x = self._set_count()
        if x >= m:
            return math.inf
        return math.log1p(-x / m) / math.log1p(-1.0 / (self.num_blocks * _LANE_BITS[self.mode]))

    def predicted_fpr(self, num_keys: float | None = None) -> float:
        """The false positive rate.

        Without ``num_keys``: the rate of this filter given its bits, exactly
        ``(1/B) sum_b prod_i c_bi / w`` (a fresh key picks a uniform block and one uniform bit
        per lane), whose expectation at n keys is the model. With ``num_keys``: the model
        :func:`split_block_fpr` (n, B). Complexity: O(B) / O(sqrt(n / B)).
        """
        if num_keys is None:
            return float(SK.block_fpr_sum(self._words, 1 if self.mode == "native" else 2)) / self.num_blocks
        n = check_float(num_keys, "num_keys", "predicted_fpr", lo=0)
        return split_block_fpr(n, self.num_blocks, _LANE_BITS[self.mode])

    def __len__(self) -> int:
        """Rounded *estimate* of the number of distinct keys (:meth:`estimated_count`)."""
        n = self.estimated_count()
        return int(round(n)) if math.isfinite(n) else self.size_in_bits

    def info(self) -> dict[str, Any]:
        """Parameters, sizes, fill and predicted rate (what ``bloomkit info`` prints).

        ``overfilled`` is True once the fill exceeds its expectation at ``capacity`` keys by
        more than three standard deviations (:func:`split_block_fill`): more keys than
        ``capacity`` beyond chance."""
        rate, est = self.predicted_fpr(), self.estimated_count()
        cap = self.capacity
        set_bits = self._set_count()
        fill = set_bits / self.size_in_bits
        limit = self._design_limit()
        over = limit is not None and set_bits > limit[0]
        return {
            "structure": self._STRUCTURE, "class": type(self).__name__, "mode": self.mode, "seed": self.seed,
            "num_blocks": self.num_blocks, "block_bits": self.block_bits, "num_hashes": LANES,
            "capacity": cap, "fpr": self.fpr, "physical_type": self.physical_type,
            "type_length": self.type_length, "size_in_bits": self.size_in_bits,
            "bits_per_key": None if not cap else self.size_in_bits / cap, "key_types": list(self.key_types),
            "fill_ratio": fill, "estimated_count": est if math.isfinite(est) else None,
            "count_is_exact": False, "predicted_fpr": rate, "overfilled": over,
        }

    def _set_count(self) -> int:
        """Number of set bits. Complexity: O(B)."""
        return popcount_words(self._words)

    def _design_limit(self) -> tuple[int, int] | None:
        """(most set bits at ``capacity`` keys: the mean fill of :func:`split_block_fill` plus
        three standard deviations, times m; bits one add sets at most: 8), None without a
        capacity. The line of ``info()["overfilled"]`` and of the overfill warning."""
        cap = self.capacity
        if cap is None:
            return None
        key = (cap, self.num_blocks, self.mode)
        cached = self.__dict__.get("_limit")
        if cached is not None and cached[0] == key:
            return cached[1]  # type: ignore[no-any-return]
        mean, sd = split_block_fill(cap, self.num_blocks, _LANE_BITS[self.mode])
        limit = (int(math.floor((mean + 3.0 * sd) * self.size_in_bits)), LANES)
        self.__dict__["_limit"] = (key, limit)
        return limit

    def __repr__(self) -> str:
        extra = f", physical_type={self.physical_type!r}" if self.mode == "parquet" else f", seed={self.seed}"
        return (f"{type(self).__name__}(mode={self.mode!r}, num_blocks={self.num_blocks}{extra}, "
                f"fill_ratio={self.fill_ratio():.4f})")

    def _check(self) -> None:
        """Assert the invariants (storage shape, mode / hash / type consistency)."""
        w = self._words
        wpb = _WORDS_PER_BLOCK[self.mode]
        if not (w.dtype == np.uint64 and w.ndim == 1 and len(w) >= wpb and len(w) % wpb == 0):
            raise InvariantError("w.dtype == np.uint64 and w.ndim == 1 and len(w) >= wpb and len(w) % wpb == 0")
        if not (self.num_blocks == len(w) // wpb):
            raise InvariantError("self.num_blocks == len(w) // wpb")
        if self.mode == "native":
            if not (self._hash_id == HASH_XXH64 and self.physical_type is None and self.type_length is None):
                raise InvariantError("self._hash_id == HASH_XXH64 and self.physical_type is None and self.type_length is None")
            if not (self.num_blocks <= MAX_BLOCKS):
                raise InvariantError("self.num_blocks <= MAX_BLOCKS")
        else:
            if not (self._hash_id == HASH_PARQUET and self.seed == 0 and self.physical_type in PHYSICAL_TYPES):
                raise InvariantError("self._hash_id == HASH_PARQUET and self.seed == 0 and self.physical_type in PHYSICAL_TYPES")
            if not ((self.type_length is not None) == (self.physical_type == "FIXED_LEN_BYTE_ARRAY")):
                raise InvariantError('(self.type_length is not None) == (self.physical_type == "FIXED_LEN_BYTE_ARRAY")')
            if not (self.num_blocks <= MAX_PARQUET_BLOCKS):
                raise InvariantError("self.num_blocks <= MAX_PARQUET_BLOCKS")
        if not (key_type_mask(key_type_names(self._key_mask)) & ~self._key_mask == 0):
            raise InvariantError("key_type_mask(key_type_names(self._key_mask)) & ~self._key_mask == 0")

    # -- persistence --------------------------------------------------------------------------
    def _to_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        params = {"mode": self.mode, "num_blocks": self.num_blocks, "capacity": self.capacity, "fpr": self.fpr,
                  "key_types": list(self.key_types), "physical_type": self.physical_type,
                  "type_length": self.type_length}
        return params, {"words": self._words}

    @classmethod
    def _from_state(cls, params: dict[str, Any], arrays: dict[str, np.ndarray], seed: int, hash_id: int) -> Any:
        mode, B = params["mode"], params["num_blocks"]
        ptype, tlen = params["physical_type"], params["type_length"]
        if mode == "native":
            if hash_id != HASH_XXH64 or ptype is not None or tlen is not None:
                raise FormatError(f"{cls.__name__} in native mode has hash id {HASH_XXH64} and no physical_type")
        else:
            if hash_id != HASH_PARQUET or seed != 0 or ptype is None:
                raise FormatError(f"{cls.__name__} in Parquet mode has hash id {HASH_PARQUET}, seed 0 and a physical_type")
            if (tlen is not None) != (ptype == "FIXED_LEN_BYTE_ARRAY"):
                raise FormatError(f"{cls.__name__}: type_length is given for FIXED_LEN_BYTE_ARRAY columns only")
            if B > MAX_PARQUET_BLOCKS:
                raise FormatError(f"{cls.__name__}: a Parquet filter has fewer than 2**31 blocks; the file says {B}")
        words = arrays["words"]
        need = B * _WORDS_PER_BLOCK[mode]
        if words.shape != (need,):
            raise FormatError(f"{cls.__name__} words array has {words.shape[0]} words; {B} {mode} blocks need {need}")
        out = cls.__new__(cls)
        out.capacity, out.fpr, out.seed = params["capacity"], params["fpr"], seed
        out._setup(mode, hash_id, ptype, tlen)
        out._key_mask = key_type_mask(params["key_types"])
        out._set_storage(words)
        return out
