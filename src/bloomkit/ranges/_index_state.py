"""The arrays of a :class:`~bloomkit.ranges.index.ProfileIndex` (its bit slices, live-slot
bits, per-slot fills and records) and the helpers that read slot liveness from them."""

from __future__ import annotations

import numpy as np

from . import _index_kernels as IK
from .store import RecordStore


class _State:
    """The arrays of an index, replaced as a whole when the index grows (a reader that took
    ``index._st`` keeps a consistent view). ``fills`` holds the set bits of each slot's
    filter (c, the fill ``1 - p = c / m`` the per-query model uses; 0 for free slots)."""

    __slots__ = ("active", "fills", "records", "slices")

    def __init__(self, slices: np.ndarray, active: np.ndarray, records: RecordStore | None,
                 fills: np.ndarray | None = None) -> None:
        self.slices, self.active, self.records = slices, active, records
        if fills is None:
            fills = IK.column_fills(slices, 0, slices.shape[1] * 64).astype(_fill_dtype(slices.shape[0]))
        self.fills = fills


def _fill_dtype(m: int) -> type:
    """The narrowest dtype of a slot's set-bit count c <= m."""
    return np.uint16 if m < 1 << 16 else np.int32 if m < 1 << 31 else np.int64


def _is_active(active: np.ndarray, pid: int, next_id: int) -> bool:
    return pid < next_id and bool((int(active[pid >> 6]) >> (pid & 63)) & 1)


def _live_mask(active: np.ndarray, slots: int) -> np.ndarray:
    """Bool mask of the first ``slots`` slots: active or not."""
    return np.unpackbits(active.astype("<u8").view(np.uint8), bitorder="little")[:slots].astype(bool)


def _bit_vector(words: np.ndarray, m: int) -> np.ndarray:
    return np.unpackbits(words.astype("<u8").view(np.uint8), bitorder="little")[:m].astype(bool)
