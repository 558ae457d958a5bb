"""The receiving side of doc 003: decoding transmitted filters (:func:`from_wire`) and the
multi-transmission receiver of Section IV-C (:class:`MultiTransmissionReceiver`)."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from .._engine.columns import as_keys
from .._engine.storage import load_budget
from .._validation import NUM_HASHES, SEED, Int, Optional
from ..errors import FormatError, IncompatibleFiltersError, InvalidParameterError
from .foldable import FoldableBloomFilter, FoldableCountingBloomFilter
from .planner import aggregate_fpr
from .wire import KIND_BITS, decode

__all__ = ["MultiTransmissionReceiver", "from_wire"]

Foldable = FoldableBloomFilter | FoldableCountingBloomFilter


def from_wire(data: bytes | bytearray | memoryview, *, seed: int | None = None, num_hashes: int | None = None) -> Foldable:
    """Decode :meth:`FoldableBloomFilter.to_wire` / :meth:`FoldableCountingBloomFilter.to_wire`.

    Parameters
    ----------
    data : bytes, bytearray or memoryview
        The received message (layout: :mod:`bloomkit.folding.wire`).
    seed, num_hashes : int, optional
        If given, the filter must have been built with this seed and ``k``.

    Returns
    -------
    FoldableBloomFilter or FoldableCountingBloomFilter
        A filter at the transmitted size without ``B_1`` (it can fold, not unfold); its
        ``set_version`` holds the transmitted version, its ``key_types`` are ``("unknown",)``
        (the message does not carry them).

    Raises
    ------
    FormatError
        On truncated, corrupted (CRC-32), foreign or inconsistent data, or a message whose
        declared sizes its length does not back (a message of N bytes never makes bloomkit
        allocate more than the load budget of :mod:`bloomkit._engine.storage` for N bytes).
    IncompatibleFiltersError
        If ``seed`` or ``num_hashes`` is given and differs.
    InvalidParameterError
        If ``seed`` or ``num_hashes`` is not a valid seed / ``k``.

    Notes
    -----
    Complexity: O(len(data)).
    """
    seed = Optional(SEED)(seed, "seed", "from_wire")
    num_hashes = Optional(NUM_HASHES)(num_hashes, "num_hashes", "from_wire")
    msg = decode(data)
    cls: type[Foldable] = FoldableBloomFilter if msg.kind == KIND_BITS else FoldableCountingBloomFilter
    if msg.hash_id not in cls._HASH_IDS:
        raise FormatError(f"{cls.__name__} implements hash id(s) {cls._HASH_IDS}; the message says {msg.hash_id}")
    with load_budget(memoryview(data).nbytes):
        obj = cls._from_wire(msg)
        try:
            obj._check()
        except AssertionError as e:
            raise FormatError(f"inconsistent wire message: {e}") from None
    if seed is not None and obj.seed != seed:
        raise IncompatibleFiltersError(f"wire filter has seed {obj.seed}, expected {seed}")
    if num_hashes is not None and obj.num_hashes != num_hashes:
        raise IncompatibleFiltersError(f"wire filter has k = {obj.num_hashes}, expected {num_hashes}")
    return obj


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

    Notes
    -----
    Thread safety: ``receive`` and the queries may run in any threads at once; ``receive``
    replaces the list of kept copies under a lock and queries read one list.

    Examples
    --------
    >>> f = FoldableBloomFilter(5040, 2, seed=3); f.add_many(list(range(50)))
    >>> r = MultiTransmissionReceiver(window=3)
    >>> r.receive(f.folded(8).to_wire()); r.receive(f.folded(9).to_wire())
    >>> r.contains_many(list(range(50))).all(), r.sizes
    (np.True_, [630, 560])
    """

    _WINDOW = Int(1)

    def __init__(self, window: int = 4) -> None:
        self.window = self._WINDOW(window, "window", "MultiTransmissionReceiver")
        self._copies: tuple[Foldable, ...] = ()
        self._version: int | None = None
        self._lock = threading.Lock()

    @property
    def sizes(self) -> list[int]:
        """Sizes of the kept copies, oldest first."""
        return [c.num_bits for c in self._copies]

    @property
    def set_version(self) -> int | None:
        """Version of the set the kept copies describe (None before the first copy)."""
        return self._version

    def receive(self, message: bytes | bytearray | memoryview | Foldable) -> None:
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
        filt = message if isinstance(message, FoldableBloomFilter | FoldableCountingBloomFilter) else from_wire(message)
        with self._lock:
            copies = self._copies
            if copies:
                ref = copies[0]
                mine = (type(ref), ref.seed, ref.num_hashes, ref.m1)
                theirs = (type(filt), filt.seed, filt.num_hashes, filt.m1)
                if mine != theirs:
                    raise IncompatibleFiltersError(
                        f"received copy (seed, k, m_1) = {theirs[1:]} of {theirs[0].__name__} "
                        f"does not match the kept copies' {mine[1:]} of {mine[0].__name__}"
                    )
            if filt.set_version != self._version:
                copies, self._version = (), filt.set_version
            self._copies = (*copies, filt)[-self.window:]

    def _kept(self) -> tuple[Foldable, ...]:
        copies = self._copies
        if not copies:
            raise InvalidParameterError("MultiTransmissionReceiver has received no filter yet")
        return copies

    def contains_many(self, keys: Any) -> np.ndarray:
        """Bool array: True where every kept copy answers present. Complexity: O(c n k)."""
        copies = self._kept()
        keys = as_keys(keys, "keys", "MultiTransmissionReceiver.contains_many")  # read once, by every copy
        out = copies[0].contains_many(keys)
        for c in copies[1:]:
            out &= c.contains_many(keys)
        return out

    def __contains__(self, key: Any) -> bool:
        """True if every kept copy answers present. Complexity: O(c k)."""
        return all(key in c for c in self._kept())

    def predicted_fpr(self, model: str = "folds") -> float:
        """Model rate of :meth:`contains_many` over the kept copies.

        ``model="folds"`` (default): :func:`bloomkit.folding.planner.aggregate_fpr`, which
        accounts for the copies being folds of one ``B_1``; ``model="product"``: the product
        of the copies' Eq. 4 rates. ``n`` is the item count carried by the newest copy.

        Notes
        -----
        Complexity: O(3^c) for c distinct sizes.
        """
        copies = self._kept()
        last = copies[-1]
        return aggregate_fpr([c.num_bits for c in copies], last.count, last.num_hashes, model)
