"""The ribbon filter (Dillinger and Walzer, "Ribbon filter: practically smaller than Bloom and
Xor", 2021; bumped: BuRR, Dillinger et al. SEA 2022), w = 64: ribbon retrieval of the value 0 under an r-bit check, so that a
stored key's row XOR fp(x) is 0 and an absent key's is uniform on r bits (false positive rate
2^-r, any r in [1, 64]). Same kernels as :class:`bloomkit.lookup.RibbonRetrieval`
(:mod:`bloomkit.lookup._ribbon_kernels`). Bumped (the default): layers of 0.95 slots per key
plus a threshold byte per 64 slots, r + 0.125 bits per key and a little; standard: the slack eps
it needs grows with log n (:func:`bloomkit.lookup.ribbon.default_overhead`).
"""

from __future__ import annotations

from typing import Any, ClassVar, Self

import numpy as np

from .._engine.columns import as_keys
from .._engine.hashing import check_seed, key_type_mask
from .._engine.storage import aligned_zeros
from .._format import ArraySpec
from .._validation import KEY_TYPES, Int, InvariantError, Optional
from ..lookup import _ribbon_kernels as RK
from ..lookup._ribbon_lowmem import KeySource
from ..lookup.ribbon import (
    ATTEMPTS,
    BUMP_MIN,
    BUMPED,
    LAYER_SALTS,
    LAYER_SLOTS,
    LOW_MEMORY,
    MAX_LAYERS,
    OVERHEAD,
    Layers,
    _check_layers,
    kernel_args,
    read_layers,
    solve,
    solve_low_memory,
)
from ._base import StaticFilter, fingerprint_bits_of, read_keys
from .model import static_fpr

__all__ = ["RibbonFilter"]

_OWNER = "RibbonFilter"
CHECK_BITS = Int(1, 64)


class RibbonFilter(StaticFilter):
    """Static membership filter: a ribbon filter (bumped or standard), w = 64, r-bit fingerprints.

    Build with :meth:`build`; answers True for every key it was built from and for an absent key
    with probability 2^-r. It cannot change afterwards.

    Notes
    -----
    Thread safety: a built filter is never written; any number of threads may query it at once
    (the query kernel releases the GIL).

    Examples
    --------
    >>> f = RibbonFilter.build(["apple", "pear", "plum"], fingerprint_bits=12)
    >>> "pear" in f, len(f), f.predicted_fpr() == 2**-12
    (True, 3, True)
    """

    _PARAMS: ClassVar[Any] = {"fingerprint_bits": CHECK_BITS, "layer_slots": LAYER_SLOTS, "layer_salts": LAYER_SALTS,
                              "bumped_layers": Int(0, MAX_LAYERS), "count": Int(0), "key_types": KEY_TYPES}
    _ARRAYS: ClassVar[Any] = {"solution": ArraySpec("<u8"), "thresholds": ArraySpec("|u1", optional=True, hi=64)}

    def __init__(self) -> None:  # use build(); this is the empty filter of 64 slots
        self.seed = 0
        self.fingerprint_bits = 8
        self._count = 0
        self._set_layers(Layers([64], [0], 0, aligned_zeros(8, np.uint64, "the ribbon solution"), np.zeros(0, np.uint8)))

    def _set_layers(self, layers: Layers) -> None:
        self._layers = layers
        self._kargs = kernel_args(layers, self.fingerprint_bits)

    @classmethod
    def build(
        cls,
        keys: Any,
        *,
        fingerprint_bits: int | None = None,
        fpr: float | None = None,
        bumped: bool = True,
        overhead: float | None = None,
        seed: int = 0,
        max_attempts: int = 16,
        low_memory: bool = False,
    ) -> Self:
        """Build the filter of a set of keys.

        Parameters
        ----------
        keys : list, tuple, numpy, pyarrow, pandas or polars column
            By position; a key given twice is kept once.
        fingerprint_bits : int, optional
            r in [1, 64]: the false positive rate is 2^-r. Default 8, or ceil(log2(1/fpr)).
        fpr : float, optional
            A target rate instead of ``fingerprint_bits``.
        bumped : bool
            Bumped ribbon (BuRR, the default) or one standard ribbon.
        overhead : float, optional
            eps = m / n - 1 of the standard ribbon (the last layer when bumped; default
            :func:`bloomkit.lookup.ribbon.default_overhead`).
        seed : int
        max_attempts : int
            Salts tried before giving up (BloomkitError naming the slack).
        low_memory : bool
            The first layer in passes over the input, the same filter: as
            :meth:`bloomkit.lookup.RibbonRetrieval.build`.

        Returns
        -------
        RibbonFilter

        Complexity: as :meth:`bloomkit.lookup.RibbonRetrieval.build`.
        """
        owner = f"{_OWNER}.build"
        r = fingerprint_bits_of(fingerprint_bits, fpr, owner, CHECK_BITS, range(1, 65))
        bump = BUMPED(bumped, "bumped", owner)
        eps = Optional(OVERHEAD)(overhead, "overhead", owner)
        attempts = ATTEMPTS(max_attempts, "max_attempts", owner)
        low = LOW_MEMORY(low_memory, "low_memory", owner)
        sd = check_seed(seed, owner)

        def dedupe(h: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            return np.unique(h), v  # v: empty (every value 0)

        batch = as_keys(keys, "keys", owner) if low and bump else None
        src = KeySource(batch, sd, owner) if batch is not None and len(batch) >= BUMP_MIN else None
        if src is not None:
            layers, count = solve_low_memory(src, np.zeros(0, np.uint64), r, eps, attempts, owner, dedupe, bump)
            tags = src.tags
        else:
            h1, tags = read_keys(keys if batch is None else batch, owner, sd)
            layers, h1, _ = solve(h1, np.zeros(0, np.uint64), r, eps, attempts, owner, dedupe, bump)
            count = len(h1)
        f = cls()
        f.seed, f.fingerprint_bits, f._count = sd, r, count
        f._set_layers(layers)
        f._note_keys(tags)
        return f

    # ------------------------------------------------------------------ queries
    def _test(self, h1: np.ndarray) -> np.ndarray:
        out = np.empty(len(h1), dtype=np.uint64)
        RK.rb_query(h1, *self._kargs, self.fingerprint_bits, 0, 1, out)
        hit: np.ndarray = out == 0
        return hit

    def clear(self) -> None:
        """Forget every key (the solution zero: an absent key still matches at 2^-r). Complexity: O(m r / 64)."""
        with self._lock:
            self._layers.Z.fill(0)
            self._count = 0
            self._key_mask = 0

    def copy(self) -> Self:
        """An independent copy. Complexity: O(m r / 64)."""
        out = type(self).__new__(type(self))
        out.__dict__.update({k: v for k, v in self.__dict__.items() if k != "_bk_lock"})
        out._set_layers(self._layers.copy())
        return out

    # ------------------------------------------------------------------ space and model
    @property
    def num_slots(self) -> int:
        """m, over all layers."""
        return sum(self._layers.slots)

    def _table_bits(self) -> int:
        """m r plus 8 bits per bucket of a bumped layer."""
        return self._layers.bits(self.fingerprint_bits)

    def predicted_fpr(self) -> float:
        """2^-r (an absent key's check is uniform). Complexity: O(1)."""
        return static_fpr(self.fingerprint_bits)

    def build_stats(self) -> dict[str, Any]:
        """Layers and solve attempts (one per layer, plus the standard layer's retries)."""
        lay = self._layers
        return {"attempts": lay.attempts, "layers": len(lay.slots), "bumped_layers": lay.bumped,
                "layer_slots": list(lay.slots)}

    def info(self) -> dict[str, Any]:
        """Parameters, sizes, overhead over the bound and the predicted rate. Complexity: O(1)."""
        return {**self._info_common(self.predicted_fpr(), float(self.fingerprint_bits)),
                "fingerprint_bits": self.fingerprint_bits, "num_slots": self.num_slots, "ribbon_width": 64,
                "layers": len(self._layers.slots), "bumped_layers": self._layers.bumped}

    def __repr__(self) -> str:
        return f"RibbonFilter(keys={self._count}, r={self.fingerprint_bits}, m={self.num_slots})"

    def _check(self) -> None:
        """Assert the structure's invariants."""
        if not (1 <= self.fingerprint_bits <= 64):
            raise InvariantError("1 <= self.fingerprint_bits <= 64")
        _check_layers(self._layers, self.fingerprint_bits)
        if not (self._count >= 0):
            raise InvariantError("self._count >= 0")

    # ------------------------------------------------------------------ persistence
    def _to_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        lay = self._layers
        arrays = {"solution": lay.Z}
        if len(lay.thr):
            arrays["thresholds"] = lay.thr
        return ({"fingerprint_bits": self.fingerprint_bits, "layer_slots": list(lay.slots),
                 "layer_salts": list(lay.salts), "bumped_layers": lay.bumped, "count": self._count,
                 "key_types": list(self.key_types)}, arrays)

    @classmethod
    def _from_state(cls, params: dict[str, Any], arrays: dict[str, np.ndarray], seed: int, hash_id: int) -> Self:
        r = params["fingerprint_bits"]
        layers = read_layers(params, arrays, r, _OWNER)
        f = cls.__new__(cls)
        f.seed, f.fingerprint_bits, f._count = seed, r, params["count"]
        f._set_layers(layers)
        f._key_mask = key_type_mask(params["key_types"])
        return f
