"""Bloom and counting Bloom filters that shrink by folding and grow back by unfolding.

Doc 003, Section III. A filter is created at its planned maximal size ``m_1`` (Eq. 2). A fold
by a factor ``p`` that divides the current size ``m_t`` gives ``m_{t+1} = m_t / p`` and
(Eq. 3)

    b_{t+1}(i) = (+)_{l=0}^{p-1} b_t(i + l m_{t+1})

with (+) = OR for bits and = sum (saturating) for counters. Because every probe position is
``G_i(x) mod m`` with ``G_i`` independent of ``m`` (:mod:`bloomkit._hashing`), the folded
filter equals the filter built directly at ``m_{t+1}``, membership on it is
``G_i(q) mod m_t`` (Eq. 6 as corrected in ERRATA.md), and any order or grouping of the folds
gives the same result (Lemma, Eq. 5, and the Theorem of Section III).

Unfolding cannot be computed from the folded filter; the filter retains ``B_1`` and
regenerates ``B_t = phi_{m_1 / m_t}(B_1)`` (Section III, "Unfold"). A filter received over the
wire (:func:`from_wire`) carries no ``B_1`` and can only be folded further.
"""

from __future__ import annotations

import math
import struct
import zlib
from collections.abc import Sequence
from typing import Any, Self

import numpy as np

from .. import _kernels as K
from .. import theory
from .._hashing import HASH_XXH64, check_seed
from .._storage import BitArray, CounterArray
from .._validation import check_choice, check_float, check_int, param_error
from ..bloom import BloomFilter, CountingBloomFilter
from ..errors import FormatError, IncompatibleFiltersError, InvalidParameterError
from .numbers import divisors
from .planner import _fpr as exact_fpr
from .planner import aggregate_fpr, next_size, validate_band

__all__ = [
    "FoldableBloomFilter",
    "FoldableCountingBloomFilter",
    "MultiTransmissionReceiver",
    "WIRE_MAGIC",
    "from_wire",
]

WIRE_MAGIC = b"BKFW"
WIRE_VERSION = 1
_KIND_BITS, _KIND_COUNTERS = 0, 1
_MAX_BITS = (1 << 63) - 1


# ------------------------------------------------------------------------------------------
# helpers shared by both filters


def _check_fold_factor(factor: Any, size: int, owner: str) -> int:
    f = check_int(factor, "factor", owner, lo=2)
    if size % f:
        raise param_error("factor", owner, f"a divisor (>= 2) of the current size {size}", factor)
    return f


def _put_varint(out: bytearray, v: int) -> None:
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return


def _get_varint(data: bytes, pos: int) -> tuple[int, int]:
    v, shift = 0, 0
    while True:
        if pos >= len(data):
            raise FormatError("wire data truncated inside a header field")
        b = data[pos]
        pos += 1
        v |= (b & 0x7F) << shift
        if not b & 0x80:
            return v, pos
        shift += 7
        if shift > 63:
            raise FormatError("wire header field is too long")


def _absent_key_error(owner: str, bad: int) -> InvalidParameterError:
    return InvalidParameterError(
        f"The 'keys' parameter of {owner}.remove_many must hold present keys only. "
        f"Got an absent key at index {bad} instead; nothing was removed."
    )


class _FoldableMixin:
    """Bookkeeping common to both foldable filters (history, count, fold/unfold driver)."""

    _m1: int
    _origin: Any
    _history: list[int]
    _count: int
    _num_hashes: int
    seed: int
    _hash_id: int

    _store: Any  # BitArray or CounterArray (bloomkit.bloom)
    _set_storage: Any
    capacity: int | None
    fpr: float | None
    set_version: int

    def __eq__(self, other: object) -> bool:
        """Equal parameters, equal current storage and the same m_1 (the filters' own test)."""
        same = super().__eq__(other)
        if same is NotImplemented or not same:
            return same
        return self._m1 == other._m1  # type: ignore[attr-defined,no-any-return]

    __hash__ = None  # type: ignore[assignment]

    # the same for bits and counters: both stores have len, fold, copy and nonzero_count
    def _current_size(self) -> int:
        return len(self._store)

    def _apply_fold(self, factor: int) -> None:
        self._set_storage(self._store.fold(factor))

    def _regenerate(self, size: int) -> None:
        assert self._origin is not None
        f = self._m1 // size
        self._set_storage(self._origin.copy() if f == 1 else self._origin.fold(f))

    @property
    def m1(self) -> int:
        """``m_1``: the initial (maximal) size the filter was created with."""
        return self._m1

    # -- construction without __init__ (copy, load, wire) ---------------------------------------
    @classmethod
    def _bare(
        cls, m1: int, k: int, seed: int, store: Any, origin: Any, history: list[int], count: int,
    ) -> Self:
        out = cls.__new__(cls)
        out.capacity = None
        out.fpr = None
        out.seed = check_seed(seed, cls.__name__)
        out._hash_id = HASH_XXH64
        out._num_hashes = k
        out._m1 = m1
        out._origin = origin
        out._history = list(history)
        out._count = count
        out.set_version = 0
        out._set_storage(store)
        return out

    def _bare_extra(self) -> tuple[Any, ...]:
        """Arguments of :meth:`_bare` after ``count`` (the counter width for counters)."""
        return ()

    def copy(self) -> Self:
        """An independent copy (``B_1`` and history included).

        Complexity: O(m_1 / 64) for bits, O(m_1) for counters.
        """
        origin = None if self._origin is None else self._origin.copy()
        out = self._bare(
            self._m1, self._num_hashes, self.seed, self._store.copy(), origin, self._history, self._count,
            *self._bare_extra(),
        )
        out.set_version = self.set_version
        return out

    # -- updates and set algebra ----------------------------------------------------------------
    def add(self, key: Any) -> None:
        """Insert one key into ``B_t`` (at ``G_i mod m_t``) and ``B_1``. Complexity: O(k)."""
        self.add_many([key])  # type: ignore[attr-defined]

    def _compatible(self, other: Any, op: str) -> None:
        super()._compatible(other, op)  # type: ignore[misc]
        if other._m1 != self._m1:
            raise IncompatibleFiltersError(f"cannot {op} foldable filters with m_1 = {self._m1} and {other._m1}")

    def __ior__(self, other: Any) -> Any:
        res = self.union(other)  # type: ignore[attr-defined]
        self.__dict__.update(res.__dict__)
        return self

    def __iand__(self, other: Any) -> Any:
        res = self.intersection(other)  # type: ignore[attr-defined]
        self.__dict__.update(res.__dict__)
        return self

    def _check_sizes(self) -> None:
        """Assert that the current size and the size history divide ``m_1``."""
        cur = self._current_size()
        assert self._m1 % cur == 0, "current size does not divide m_1"
        assert self._history[0] == self._m1 and self._history[-1] == cur
        assert all(self._m1 % s == 0 for s in self._history)

    # -- persistence ----------------------------------------------------------------------------
    def _state_params(self) -> dict[str, Any]:
        return {
            "m1": self._m1, "num_bits": self._current_size(), "num_hashes": self._num_hashes,
            "history": list(self._history), "count": self._count,
            "retain_original": self._origin is not None, "set_version": self.set_version,
        }

    @classmethod
    def _state_common(
        cls, params: dict[str, Any], hash_id: int
    ) -> tuple[int, int, int, list[int], int, bool]:
        cls_name = cls.__name__
        if hash_id != HASH_XXH64:
            raise FormatError(f"{cls_name} supports hash id {HASH_XXH64}, got {hash_id}")
        m1 = check_int(params["m1"], "m1", cls_name, 1, _MAX_BITS)
        m = check_int(params["num_bits"], "num_bits", cls_name, 1, m1)
        k = check_int(params["num_hashes"], "num_hashes", cls_name, 1, 1024)
        hist = params["history"]
        if (
            not isinstance(hist, list) or not hist
            or not all(isinstance(s, int) and not isinstance(s, bool) and 1 <= s <= m1 and m1 % s == 0 for s in hist)
            or hist[0] != m1 or hist[-1] != m or m1 % m
        ):
            raise FormatError(f"{cls_name}: inconsistent size history {hist!r}")
        count = check_int(params["count"], "count", cls_name, lo=0)
        keep = params["retain_original"]
        if not isinstance(keep, bool):
            raise FormatError(f"{cls_name}: retain_original must be a bool")
        return m1, m, k, hist, count, keep

    @property
    def fold_factor(self) -> int:
        """``m_1 / m_t``: the product of the fold factors applied so far."""
        return self._m1 // self._current_size()

    @property
    def retains_original(self) -> bool:
        """True if ``B_1`` is kept, so the filter can be unfolded."""
        return self._origin is not None

    @property
    def size_history(self) -> list[int]:
        """Sizes the filter went through, starting with ``m_1`` (a copy)."""
        return list(self._history)

    @property
    def count(self) -> int:
        """Items added minus items removed (duplicates count every time)."""
        return self._count

    def fold(self, factor: int) -> None:
        """Fold in place by ``factor`` (elementary if prime, composite otherwise; Eq. 3).

        Parameters
        ----------
        factor : int
            A divisor ``>= 2`` of the current size ``m_t``.

        Raises
        ------
        InvalidParameterError
            If ``factor`` is not an integer ``>= 2`` dividing ``m_t``.

        Notes
        -----
        Complexity: O(m_t / 64) word operations for bits, O(m_t) for counters (Table II).
        """
        f = _check_fold_factor(factor, self._current_size(), f"{type(self).__name__}.fold")
        self._apply_fold(f)
        self._history.append(self._current_size())

    def folded(self, factor: int) -> Self:
        """A folded copy (``phi_factor(B_t)``); this filter is unchanged.

        Notes
        -----
        Complexity: that of :meth:`copy` plus :meth:`fold`.
        """
        _check_fold_factor(factor, self._current_size(), f"{type(self).__name__}.folded")
        out = self.copy()
        out.fold(factor)
        return out

    def unfold(self, to_size: int | None = None) -> None:
        """Grow back to ``to_size`` by regenerating ``phi_{m_1/to_size}(B_1)`` (Section III).

        Parameters
        ----------
        to_size : int, optional
            A multiple of the current size that divides ``m_1`` (default ``m_1``).

        Raises
        ------
        InvalidParameterError
            If ``B_1`` was not retained, if ``to_size`` exceeds ``m_1``, is not a multiple of
            the current size, or does not divide ``m_1``.

        Notes
        -----
        Complexity: O(m_1 / 64) (bits) or O(m_1) (counters): one composite fold of ``B_1``.
        """
        owner = f"{type(self).__name__}.unfold"
        cur = self._current_size()
        size = self._m1 if to_size is None else check_int(to_size, "to_size", owner, lo=1)
        if self._origin is None:
            raise InvalidParameterError(
                f"{owner} needs the original filter B_1, which this filter does not retain "
                "(created with retain_original=False or received over the wire)."
            )
        if size > self._m1:
            raise param_error("to_size", owner, f"<= m_1 = {self._m1}", to_size)
        if size % cur or self._m1 % size:
            raise param_error(
                "to_size", owner, f"a multiple of the current size {cur} that divides m_1 = {self._m1}", to_size
            )
        if size == cur:
            return
        self._regenerate(size)
        self._history.append(size)

    def resize(self, size: int) -> None:
        """Fold or unfold to ``size``, a divisor of ``m_1`` (unfolds go through ``B_1``).

        Notes
        -----
        Complexity: O(m_t) for a fold of the current filter, O(m_1) otherwise.
        """
        owner = f"{type(self).__name__}.resize"
        size = check_int(size, "size", owner, lo=1, hi=self._m1)
        cur = self._current_size()
        if size == cur:
            return
        if cur % size == 0:
            self.fold(cur // size)
            return
        if self._m1 % size:
            raise param_error("size", owner, f"a divisor of m_1 = {self._m1}", size)
        if self._origin is None:
            raise InvalidParameterError(
                f"{owner} to {size} is not a fold of the current size {cur} and B_1 is not retained."
            )
        self._regenerate(size)
        self._history.append(size)

    def _candidates(self) -> np.ndarray:
        return divisors(self._m1 if self._origin is not None else self._current_size())

    def fold_to_band(
        self,
        rho: float,
        eps: float,
        *,
        n: int | None = None,
        policy: str = "independent",
        sent: Sequence[int] = (),
    ) -> int:
        """Fold / unfold so the predicted rate of Eq. 4 lies in ``[rho - eps, rho + eps]``.

        The next size is chosen by :func:`bloomkit.folding.planner.next_size` among the
        divisors of ``m_1`` (of the current size if ``B_1`` is not retained).

        Parameters
        ----------
        rho, eps : float
            The band (``rho - eps > 0``, ``rho + eps < 1``).
        n : int, optional
            Number of items; default :attr:`count`.
        policy : {"independent", "greedy", "min_cost", "entropy"}
            Planner policy.
        sent : sequence of int
            Sizes already sent for this set (``"entropy"`` policy).

        Returns
        -------
        int
            The new size ``m_t``.

        Notes
        -----
        Complexity: O(sqrt(m_1) + d(m_1)) to plan, plus the fold or unfold.
        """
        owner = f"{type(self).__name__}.fold_to_band"
        rho, eps = validate_band(rho, eps, owner)
        n = self._count if n is None else check_int(n, "n", owner, lo=0)
        base = self._m1 if self._origin is not None else self._current_size()
        target = next_size(
            base, max(n, 0), self._num_hashes, rho, eps, policy=policy,
            current=self._current_size(), sent=[s for s in sent if base % s == 0],
        )
        self.resize(target)
        return self._current_size()

    def fold_to_fpr(self, target: float, tolerance: float = 0.0) -> int:
        """Fold / unfold to the smallest size whose estimated rate is ``<= target + tolerance``.

        The rate of a candidate size ``D`` is estimated from the filter itself (fill ratio of
        the fold to ``D``, raised to ``k``), so it needs no item count. Candidates are
        screened with the Swamidass-Baldi count estimate and Eq. 4, then verified by folding.
        If no candidate qualifies the filter goes to its largest reachable size.

        Parameters
        ----------
        target : float
            Target false positive rate in (0, 1).
        tolerance : float
            Allowed excess, ``>= 0``.

        Returns
        -------
        int
            The new size ``m_t``.

        Notes
        -----
        Complexity: O(d(m_1) + m_1 / 64) typically (one verifying fold per screened
        candidate).
        """
        owner = f"{type(self).__name__}.fold_to_fpr"
        target = check_float(target, "target", owner, 0, 1, lo_open=True, hi_open=True)
        tolerance = check_float(tolerance, "tolerance", owner, 0, 1)
        limit = target + tolerance
        cands = self._candidates()
        n_est = self._estimated_items()
        if math.isfinite(n_est):
            # Eq. 4 with the estimated count orders the search; verification is by folding
            with np.errstate(divide="ignore", invalid="ignore"):
                model = np.asarray(theory.false_positive_rate(n_est, cands, self._num_hashes), dtype=float)
            model = np.nan_to_num(model, nan=0.0 if n_est == 0 else 1.0)  # m = 1 gives 0 * inf
            near = np.flatnonzero(model <= 2.0 * limit)
            cands = cands[near[0]:] if near.size else cands[-1:]
        for d in cands.tolist():
            if self._fold_rate(int(d)) <= limit:
                self.resize(int(d))
                return self._current_size()
        self.resize(int(self._candidates()[-1]))
        return self._current_size()

    def _estimated_items(self) -> float:
        src = self._origin if self._origin is not None else self._store
        return float(theory.estimate_count(src.nonzero_count(), len(src), self._num_hashes))

    def _fold_rate(self, size: int) -> float:
        src = self._origin if self._origin is not None else self._store
        f = len(src) // size
        folded = src if f == 1 else src.fold(f)
        return float((folded.nonzero_count() / size) ** self._num_hashes)

    def predicted_fpr_at(self, size: int, n: int | None = None) -> float:
        """Eq. 4 (corrected): rate of ``n`` items (default :attr:`count`) at ``size`` bits.

        Notes
        -----
        Complexity: O(1).
        """
        owner = f"{type(self).__name__}.predicted_fpr_at"
        size = check_int(size, "size", owner, lo=1)
        n = self._count if n is None else check_int(n, "n", owner, lo=0)
        return exact_fpr(max(n, 0), size, self._num_hashes)

    # -- wire ---------------------------------------------------------------------------------
    def _wire_kind(self) -> tuple[int, int]:
        raise NotImplementedError

    def _wire_payload(self) -> bytes:
        raise NotImplementedError

    def to_wire(self, set_version: int = 0) -> bytes:
        """Compact encoding of the current (folded) filter for transmission.

        Layout (little-endian; varint = unsigned LEB128)::

            4  magic b"BKFW"        1  version            1  kind (0 bits, 1 counters)
            1  counter bits (0)     2  k                  2  hash id
            8  seed                 varint m_1           varint fold factor
            varint count            varint set_version   payload (ceil(m_t/8) bytes for
            bits, packed counters otherwise)              4  CRC-32 of all bytes before

        ``B_1`` is not sent. Typical headers are 25-30 bytes.

        Parameters
        ----------
        set_version : int
            Identifier of the set the filter describes; a receiver intersects only copies
            with the same version (:class:`MultiTransmissionReceiver`).

        Notes
        -----
        Complexity: O(m_t).
        """
        set_version = check_int(set_version, "set_version", f"{type(self).__name__}.to_wire", lo=0, hi=2**63 - 1)
        kind, cbits = self._wire_kind()
        out = bytearray(WIRE_MAGIC)
        out += struct.pack("<BBBHHQ", WIRE_VERSION, kind, cbits, self._num_hashes, self._hash_id, self.seed)
        for v in (self._m1, self.fold_factor, max(self._count, 0), set_version):
            _put_varint(out, v)
        out += self._wire_payload()
        out += struct.pack("<I", zlib.crc32(out) & 0xFFFFFFFF)
        return bytes(out)

    @property
    def wire_size(self) -> int:
        """Bytes :meth:`to_wire` produces now. Complexity: O(m_t)."""
        return len(self.to_wire())


def _expect_compatible(obj: Any, seed: int | None, num_hashes: int | None) -> None:
    if seed is not None and obj.seed != seed:
        raise IncompatibleFiltersError(f"wire filter has seed {obj.seed}, expected {seed}")
    if num_hashes is not None and obj.num_hashes != num_hashes:
        raise IncompatibleFiltersError(f"wire filter has k = {obj.num_hashes}, expected {num_hashes}")


def from_wire(
    data: bytes | bytearray | memoryview,
    *,
    seed: int | None = None,
    num_hashes: int | None = None,
) -> FoldableBloomFilter | FoldableCountingBloomFilter:
    """Decode :meth:`FoldableBloomFilter.to_wire` / :meth:`FoldableCountingBloomFilter.to_wire`.

    Parameters
    ----------
    data : bytes
        The received bytes.
    seed, num_hashes : int, optional
        If given, the filter must have been built with this seed and ``k``.

    Returns
    -------
    FoldableBloomFilter or FoldableCountingBloomFilter
        A filter at the transmitted size without ``B_1`` (it can fold, not unfold); its
        ``set_version`` attribute holds the transmitted version.

    Raises
    ------
    FormatError
        On truncated, corrupted (CRC-32) or foreign data.
    IncompatibleFiltersError
        If ``seed`` or ``num_hashes`` is given and differs.

    Notes
    -----
    Complexity: O(len(data)).
    """
    try:
        data = bytes(data)
    except TypeError:
        raise FormatError(f"wire data must be bytes, got {type(data).__name__}") from None
    fixed = struct.calcsize("<BBBHHQ")
    if len(data) < 4 + fixed + 4 + 4:
        raise FormatError(f"wire data too short ({len(data)} bytes)")
    if data[:4] != WIRE_MAGIC:
        raise FormatError("not a bloomkit folded-filter wire message (bad magic)")
    (crc,) = struct.unpack("<I", data[-4:])
    if zlib.crc32(data[:-4]) & 0xFFFFFFFF != crc:
        raise FormatError("wire data is corrupted (CRC-32 mismatch)")
    version, kind, cbits, k, hash_id, wseed = struct.unpack("<BBBHHQ", data[4 : 4 + fixed])
    if version != WIRE_VERSION:
        raise FormatError(f"unsupported wire version {version}")
    if hash_id != HASH_XXH64:
        raise FormatError(f"unsupported hash id {hash_id}")
    pos = 4 + fixed
    m1, pos = _get_varint(data, pos)
    factor, pos = _get_varint(data, pos)
    count, pos = _get_varint(data, pos)
    set_version, pos = _get_varint(data, pos)
    if not 1 <= m1 <= _MAX_BITS or factor < 1 or m1 % factor or not 1 <= k <= 1024:
        raise FormatError(f"inconsistent wire header (m_1={m1}, factor={factor}, k={k})")
    size = m1 // factor
    payload = data[pos:-4]
    history = [m1] if size == m1 else [m1, size]
    obj: FoldableBloomFilter | FoldableCountingBloomFilter
    if kind == _KIND_BITS:
        if cbits != 0:
            raise FormatError("bit filter with a counter width in the wire header")
        bits = BitArray.from_bytes(payload, size)
        obj = FoldableBloomFilter._bare(m1, k, wseed, bits, None, history, count)
    elif kind == _KIND_COUNTERS:
        if cbits not in (4, 8, 16, 32):
            raise FormatError(f"bad counter width {cbits} in the wire header")
        ctr = CounterArray.from_bytes(payload, size, cbits)
        ctr.overflowed = bool((ctr.values() == ctr.max_value).any())
        obj = FoldableCountingBloomFilter._bare(m1, k, wseed, ctr, None, history, count, cbits)
    else:
        raise FormatError(f"unknown wire kind {kind}")
    obj.set_version = set_version
    _expect_compatible(obj, seed, num_hashes)
    return obj


# ------------------------------------------------------------------------------------------


class FoldableBloomFilter(_FoldableMixin, BloomFilter):
    """A Bloom filter created at ``m_1`` bits that folds to any divisor and unfolds back.

    Parameters
    ----------
    num_bits : int
        ``m_1``, the planned maximal size (choose it with
        :func:`bloomkit.folding.choose_initial_size`: it should have many divisors).
    num_hashes : int
        ``k``.
    seed : int
        Hash seed.
    retain_original : bool
        Keep ``B_1`` (``m_1`` more bits) so that :meth:`unfold` works.

    Examples
    --------
    >>> f = FoldableBloomFilter(5040, 3, seed=1)
    >>> f.add_many(["a", "b", "c"])
    >>> f.fold(7); f.fold(2); f.num_bits
    360
    >>> f.contains_many(["a", "b", "c"]).tolist()
    [True, True, True]
    >>> f.unfold(2520); f.size_history
    [5040, 720, 360, 2520]
    """

    _STRUCTURE = "folding.FoldableBloomFilter"
    _PARAMS = None  # not yet declared (issue 11)
    _ARRAYS = None

    def __init__(self, num_bits: int, num_hashes: int, seed: int = 0, *, retain_original: bool = True) -> None:
        owner = type(self).__name__
        m1 = check_int(num_bits, "num_bits", owner, lo=1, hi=_MAX_BITS)
        k = check_int(num_hashes, "num_hashes", owner, lo=1, hi=1024)
        if not isinstance(retain_original, bool):
            raise param_error("retain_original", owner, "a bool", retain_original)
        super().__init__(num_bits=m1, num_hashes=k, seed=seed)
        self._m1 = m1
        self._origin = BitArray(m1) if retain_original else None
        self._history = [m1]
        self._count = 0
        self.set_version = 0

    def _wire_kind(self) -> tuple[int, int]:
        return _KIND_BITS, 0

    def _wire_payload(self) -> bytes:
        return self._bits.to_bytes()

    # -- updates --------------------------------------------------------------------------------
    def add_many(self, keys: Any) -> None:
        """Insert a batch (list, numpy or pyarrow array). Complexity: O(n k)."""
        h1, tags = self._hash(keys)
        K.bits_set(self._bits.words, h1, self._num_hashes, self._m64)
        if self._origin is not None:
            K.bits_set(self._origin.words, h1, self._num_hashes, np.uint64(self._m1))
        self._count += int(h1.shape[0])
        self._note_keys(tags)

    # -- set algebra ----------------------------------------------------------------------------
    def union(self, other: FoldableBloomFilter) -> FoldableBloomFilter:  # type: ignore[override]
        """Filter of the union (OR of ``B_t`` and, when both retain it, of ``B_1``).

        Notes
        -----
        Complexity: O(m_1 / 64).
        """
        self._compatible(other, "union")
        out = self.copy()
        out._set_storage(self._bits | other._bits)
        if self._origin is not None and other._origin is not None:
            out._origin = self._origin | other._origin
        else:
            out._origin = None
        out._count = self._count + other._count
        return out

    def intersection(self, other: FoldableBloomFilter) -> FoldableBloomFilter:  # type: ignore[override]
        """Superset filter of the intersection.

        With ``B_1`` on both sides the result is ``phi(B_1 & B'_1)``, which is at most (and
        usually fewer bits than) ``B_t & B'_t``; otherwise the AND of the current filters.

        Notes
        -----
        Complexity: O(m_1 / 64).
        """
        self._compatible(other, "intersect")
        out = self.copy()
        if self._origin is not None and other._origin is not None:
            out._origin = self._origin & other._origin
            out._regenerate(self.num_bits)
        else:
            out._origin = None
            out._set_storage(self._bits & other._bits)
        out._count = min(self._count, other._count)
        return out

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(m1={self._m1}, num_bits={self.num_bits}, "
            f"num_hashes={self._num_hashes}, seed={self.seed}, fold_factor={self.fold_factor})"
        )

    def _check(self) -> None:
        """Assert the invariants, including ``B_t == phi_{m_1/m_t}(B_1)``."""
        super()._check()
        self._check_sizes()
        if self._origin is not None:
            o = self._origin
            assert o.num_bits == self._m1
            rem = o.num_bits & 63
            assert rem == 0 or int(o.words[-1]) >> rem == 0
            f = self._m1 // self.num_bits
            ref = o if f == 1 else o.fold(f)
            assert ref == self._bits, "B_t differs from the fold of B_1"

    # -- persistence ----------------------------------------------------------------------------
    def _to_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        params = self._state_params()
        arrays = {"words": self._bits.words}
        if self._origin is not None:
            arrays["origin"] = self._origin.words
        return params, arrays

    @classmethod
    def _from_state(
        cls, params: dict[str, Any], arrays: dict[str, np.ndarray], seed: int, hash_id: int
    ) -> FoldableBloomFilter:
        m1, m, k, hist, count, keep = cls._state_common(params, hash_id)

        def bits_of(name: str, size: int) -> BitArray:
            w = arrays[name]
            if w.dtype != np.uint64 or w.shape != ((size + 63) // 64,):
                raise FormatError(f"{cls.__name__}: array {name!r} has the wrong shape")
            rem = size & 63
            if rem and int(w[-1]) >> rem:
                raise FormatError(f"{cls.__name__}: bits set beyond the size in {name!r}")
            return BitArray(size, np.ascontiguousarray(w, dtype=np.uint64))

        bits = bits_of("words", m)
        origin = bits_of("origin", m1) if keep else None
        if not keep and "origin" in arrays:
            raise FormatError(f"{cls.__name__}: unexpected origin array")
        out = cls._bare(m1, k, seed, bits, origin, hist, count)
        out.set_version = check_int(params["set_version"], "set_version", cls.__name__, lo=0)
        if origin is not None:
            f = m1 // m
            if (origin if f == 1 else origin.fold(f)) != bits:
                raise FormatError(f"{cls.__name__}: folded filter does not match its original")
        return out


class FoldableCountingBloomFilter(_FoldableMixin, CountingBloomFilter):
    """A counting Bloom filter created at ``m_1`` counters that folds (sums) and unfolds.

    Folding adds the counters of the folded parts (Eq. 3 with (+) = sum), saturating at
    ``2**counter_bits - 1``; keys can be removed from the folded filter (and from ``B_1``).
    A saturated counter stays saturated (never a false negative).

    Parameters
    ----------
    num_bits : int
        ``m_1``, number of counters of the unfolded filter.
    num_hashes : int
        ``k``.
    seed : int
        Hash seed.
    counter_bits : {4, 8, 16, 32}
        Counter width (default 8: folds add counters, so 4 bits saturate quickly).
    retain_original : bool
        Keep ``B_1`` so that :meth:`unfold` works.

    Examples
    --------
    >>> f = FoldableCountingBloomFilter(360, 3, seed=2)
    >>> f.add_many(["a", "b"]); f.fold(6); f.remove("a")
    >>> f.contains_many(["b"]).tolist(), f.num_bits
    ([True], 60)
    """

    _STRUCTURE = "folding.FoldableCounting"
    _PARAMS = None  # not yet declared (issue 11)
    _ARRAYS = None

    def __init__(
        self, num_bits: int, num_hashes: int, seed: int = 0, *, counter_bits: int = 8,
        retain_original: bool = True,
    ) -> None:
        owner = type(self).__name__
        m1 = check_int(num_bits, "num_bits", owner, lo=1, hi=_MAX_BITS)
        k = check_int(num_hashes, "num_hashes", owner, lo=1, hi=1024)
        if not isinstance(retain_original, bool):
            raise param_error("retain_original", owner, "a bool", retain_original)
        super().__init__(num_bits=m1, num_hashes=k, seed=seed, counter_bits=counter_bits)
        self._m1 = m1
        self._origin = CounterArray(m1, self._width) if retain_original else None
        self._history = [m1]
        self._count = 0
        self.set_version = 0

    @classmethod
    def _bare(  # type: ignore[override]
        cls, m1: int, k: int, seed: int, counters: CounterArray, origin: CounterArray | None,
        history: list[int], count: int, width: int,
    ) -> FoldableCountingBloomFilter:
        out = super()._bare(m1, k, seed, counters, origin, history, count)
        out._width = width
        return out

    def _bare_extra(self) -> tuple[Any, ...]:
        return (self._width,)

    def _wire_kind(self) -> tuple[int, int]:
        return _KIND_COUNTERS, self._width

    def _wire_payload(self) -> bytes:
        return self._counters.to_bytes()

    def add_many(self, keys: Any) -> None:
        """Insert a batch into ``B_t`` and ``B_1``. Complexity: O(n k)."""
        h1, tags = self._hash(keys)
        self._note_keys(tags)
        c = self._counters
        over = K.counters_inc_h1(c.data, c.width, c.max_value, h1, self._num_hashes, self._m64)
        c.overflowed |= bool(over)
        if self._origin is not None:
            o = self._origin
            o.overflowed |= bool(K.counters_inc_h1(o.data, o.width, o.max_value, h1, self._num_hashes, np.uint64(self._m1)))
        self._count += int(h1.shape[0])

    def remove(self, key: Any) -> None:
        """Remove one key; InvalidParameterError (nothing changed) if it is certainly absent.

        Complexity: O(k).
        """
        self.remove_many([key])

    def remove_many(self, keys: Any) -> None:
        """Remove a batch, all or nothing, from ``B_1`` (if kept) and the folded ``B_t``.

        Raises
        ------
        InvalidParameterError
            If some key is certainly absent (a zero counter, repeats in the batch counted);
            nothing is removed then.

        Notes
        -----
        Complexity: O(n k).
        """
        h1 = self._hash(keys)[0]
        k = self._num_hashes
        if self._origin is not None:
            o = self._origin
            bad = int(K.counters_dec_h1(o.data, o.width, o.max_value, h1, k, np.uint64(self._m1)))
            if bad >= 0:
                raise _absent_key_error(type(self).__name__, bad)
        c = self._counters
        bad = int(K.counters_dec_h1(c.data, c.width, c.max_value, h1, k, self._m64))
        if bad >= 0:
            if self._origin is not None:  # pragma: no cover - B_t >= fold(B_1) makes this impossible
                o = self._origin
                K.counters_inc_h1(o.data, o.width, o.max_value, h1, k, np.uint64(self._m1))
            raise _absent_key_error(type(self).__name__, bad)
        self._count = max(0, self._count - int(h1.shape[0]))

    def to_bloom(self) -> FoldableBloomFilter:
        """The foldable bit filter of the same keys (bit set where the counter is non-zero).

        The support of a sum-fold is the OR-fold of the support, so the result is the bit
        filter a sender transmits while it keeps the counting filter for removals.

        Notes
        -----
        Complexity: O(m_1).
        """

        def support(c: CounterArray) -> BitArray:
            packed = np.packbits(c.values() > 0, bitorder="little").tobytes()
            return BitArray.from_bytes(packed, c.size)

        origin = None if self._origin is None else support(self._origin)
        out = FoldableBloomFilter._bare(
            self._m1, self._num_hashes, self.seed, support(self._counters), origin, self._history, self._count
        )
        out.set_version = self.set_version
        return out

    def _combine(self, other: CountingBloomFilter, op: str, fn: Any, key_mask: int) -> FoldableCountingBloomFilter:
        self._compatible(other, op)
        assert isinstance(other, FoldableCountingBloomFilter)
        out = self.copy()
        cur = CounterArray.from_values(fn(self._counters.values(), other._counters.values()), self._width)
        cur.overflowed |= self._counters.overflowed or other._counters.overflowed
        out._set_storage(cur)
        if self._origin is not None and other._origin is not None:
            org = CounterArray.from_values(fn(self._origin.values(), other._origin.values()), self._width)
            org.overflowed |= self._origin.overflowed or other._origin.overflowed
            out._origin = org
            if op == "intersect":
                out._regenerate(self.num_bits)
        else:
            out._origin = None
        out._count = self._count + other._count if op == "union" else min(self._count, other._count)
        out._key_mask = key_mask
        return out

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(m1={self._m1}, num_bits={self.num_bits}, num_hashes={self._num_hashes}, "
            f"seed={self.seed}, counter_bits={self._width}, fold_factor={self.fold_factor})"
        )

    def _check(self) -> None:
        """Assert the invariants: ``B_t[j] = min(sum-fold(B_1)[j], max)`` or saturated."""
        super()._check()
        self._check_sizes()
        if self._origin is not None:
            o = self._origin
            assert o.size == self._m1 and o.width == self._width
            f = self._m1 // self.num_bits
            ref = o.values().reshape(f, self.num_bits).sum(axis=0)
            cur = self._counters.values()
            mx = self._counters.max_value
            ok = (cur == np.minimum(ref, mx)) | (cur == mx)
            assert bool(ok.all()), "B_t differs from the sum-fold of B_1"

    def _to_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        params = self._state_params() | {
            "counter_bits": self._width, "overflowed": self._counters.overflowed,
            "origin_overflowed": bool(self._origin is not None and self._origin.overflowed),
        }
        arrays = {"counters": self._counters.data}
        if self._origin is not None:
            arrays["origin"] = self._origin.data
        return params, arrays

    @classmethod
    def _from_state(
        cls, params: dict[str, Any], arrays: dict[str, np.ndarray], seed: int, hash_id: int
    ) -> FoldableCountingBloomFilter:
        m1, m, k, hist, count, keep = cls._state_common(params, hash_id)
        width = check_choice(params["counter_bits"], "counter_bits", cls.__name__, (4, 8, 16, 32))

        def ctr_of(name: str, size: int, over: Any) -> CounterArray:
            data = np.ascontiguousarray(arrays[name])
            c = CounterArray(size, width, data)
            if width == 4 and size % 2 and int(c.data[-1]) >> 4:
                raise FormatError(f"{cls.__name__}: non-zero padding nibble in {name!r}")
            if not isinstance(over, bool):
                raise FormatError(f"{cls.__name__}: overflow flag must be a bool")
            c.overflowed = over
            return c

        cur = ctr_of("counters", m, params["overflowed"])
        origin = ctr_of("origin", m1, params["origin_overflowed"]) if keep else None
        if not keep and "origin" in arrays:
            raise FormatError(f"{cls.__name__}: unexpected origin array")
        out = cls._bare(m1, k, seed, cur, origin, hist, count, width)
        out.set_version = check_int(params["set_version"], "set_version", cls.__name__, lo=0)
        try:
            out._check()
        except AssertionError as e:
            raise FormatError(f"{cls.__name__}: inconsistent state ({e})") from None
        return out


class MultiTransmissionReceiver:
    """Receiver that keeps several differently folded copies of one set and ANDs them.

    Section IV-C of doc 003 ("entropy"): if the sender changes the folding from one
    transmission to the next, a receiver that answers "present" only when every kept copy
    agrees has a lower false positive rate. Copies are grouped by ``set_version``: a copy of a
    new version replaces the kept ones (the set changed). The model rate is the product of
    the copies' rates (Eq. 4) if they were independent; :meth:`predicted_fpr` uses by default
    the model of :func:`~bloomkit.folding.planner.aggregate_fpr`, which accounts for all
    copies being folds of one ``B_1`` (an identical copy adds nothing).

    Parameters
    ----------
    window : int
        Maximum number of copies kept (oldest dropped first).

    Examples
    --------
    >>> f = FoldableBloomFilter(5040, 2, seed=3); f.add_many(list(range(50)))
    >>> r = MultiTransmissionReceiver(window=3)
    >>> r.receive(f.folded(8).to_wire()); r.receive(f.folded(9).to_wire())
    >>> r.contains_many(list(range(50))).all(), r.sizes
    (np.True_, [630, 560])
    """

    def __init__(self, window: int = 4) -> None:
        self.window = check_int(window, "window", "MultiTransmissionReceiver", lo=1)
        self._copies: list[FoldableBloomFilter | FoldableCountingBloomFilter] = []
        self._version: int | None = None

    @property
    def sizes(self) -> list[int]:
        """Sizes of the kept copies, oldest first."""
        return [c.num_bits for c in self._copies]

    @property
    def set_version(self) -> int | None:
        """Version of the set the kept copies describe (None before the first copy)."""
        return self._version

    def receive(self, message: bytes | FoldableBloomFilter | FoldableCountingBloomFilter) -> None:
        """Keep a received copy (wire bytes or a filter).

        Raises
        ------
        FormatError
            On damaged wire data.
        IncompatibleFiltersError
            If the copy's seed, ``k``, ``m_1`` or kind differ from the kept copies'.

        Notes
        -----
        Complexity: O(len(message)).
        """
        if isinstance(message, FoldableBloomFilter | FoldableCountingBloomFilter):
            filt = message
        else:
            filt = from_wire(message)
        version = getattr(filt, "set_version", 0)
        if self._copies:
            ref = self._copies[0]
            mine = (type(ref), ref.seed, ref.num_hashes, ref.m1)
            theirs = (type(filt), filt.seed, filt.num_hashes, filt.m1)
            if mine != theirs:
                raise IncompatibleFiltersError(
                    f"received copy (type, seed, k, m_1) = {theirs[1:]} of {theirs[0].__name__} "
                    f"does not match the kept copies' {mine[1:]}"
                )
        if version != self._version:
            self._copies = []
            self._version = version
        self._copies.append(filt)
        if len(self._copies) > self.window:
            self._copies.pop(0)

    def contains_many(self, keys: Any) -> np.ndarray:
        """Bool array: True where every kept copy answers present. Complexity: O(c n k)."""
        if not self._copies:
            raise InvalidParameterError("MultiTransmissionReceiver has received no filter yet")
        out = self._copies[0].contains_many(keys)
        for c in self._copies[1:]:
            out &= c.contains_many(keys)
        return out

    def __contains__(self, key: Any) -> bool:
        """True if every kept copy answers present. Complexity: O(c k)."""
        return bool(self.contains_many([key])[0])

    def predicted_fpr(self, model: str = "folds") -> float:
        """Model rate of :meth:`contains_many` over the kept copies.

        ``model="folds"`` (default): :func:`bloomkit.folding.planner.aggregate_fpr`, which
        accounts for the copies being folds of one ``B_1``; ``model="product"``: the product
        of the copies' Eq. 4 rates. ``n`` is the item count carried by the newest copy.

        Notes
        -----
        Complexity: O(3^c) for c distinct sizes.
        """
        if not self._copies:
            raise InvalidParameterError("MultiTransmissionReceiver has received no filter yet")
        last = self._copies[-1]
        return aggregate_fpr(self.sizes, max(last.count, 0), last.num_hashes, model)
