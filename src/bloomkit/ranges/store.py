"""The records of a ProfileIndex as arrays (exact verification, ``record(id)``, persistence).

One row per profile slot (slot-major), in the container as arrays, never in the JSON
parameter block (which is capped at 64 MiB: a million records would not fit):

=================  ===========================  ===============================================
array              shape / dtype                contents
=================  ===========================  ===============================================
``rec_present``    (slots, attributes) bool     the record gives the attribute
``rec_lo``         (slots, numeric) int64       scaled inclusive ends of numeric values (a
``rec_hi``                                      point is lo = hi); 0 where absent
``rec_tstart``     (slots, text) int64          where each text starts in ``rec_text`` and its
``rec_tlen``                                    length in bytes; 0 where absent
``rec_text``       (bytes,) uint8               UTF-8 texts, appended in insertion order
=================  ===========================  ===============================================

A removed profile's row and text bytes are zeroed (its attributes do not survive in a saved
file). Texts of removed profiles keep their (zeroed) bytes in ``rec_text`` until the index is
rebuilt or compacted (:meth:`RecordStore.gathered`, :meth:`ProfileIndex.compacted`).
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pyarrow as pa

from .._engine.storage import aligned_zeros
from .._format import ArraySpec
from ..errors import FormatError
from .records import RecordBatch
from .schema import MAX_SCALED, Numeric, Schema, Text

__all__ = ["RECORD_ARRAYS", "RecordStore"]

RECORD_ARRAYS = {
    "rec_present": ArraySpec("|b1", 2, optional=True),
    "rec_lo": ArraySpec("<i8", 2, optional=True, lo=-MAX_SCALED, hi=MAX_SCALED),
    "rec_hi": ArraySpec("<i8", 2, optional=True, lo=-MAX_SCALED, hi=MAX_SCALED),
    "rec_tstart": ArraySpec("<i8", 2, optional=True, lo=0),
    "rec_tlen": ArraySpec("<i8", 2, optional=True, lo=0),
    "rec_text": ArraySpec("|u1", 1, optional=True),
}
"""The saved arrays of the records (present iff the index stores records)."""


def _utf8(text: pa.Array | list[str]) -> tuple[np.ndarray, np.ndarray]:
    """(bytes uint8, offsets int64 of len(text) + 1 starting at 0) of a batch of texts."""
    arr = pa.array(text, type=pa.large_string()) if isinstance(text, list) else text
    if pa.types.is_string(arr.type):  # int32 offsets, widened here (a cast to large_string costs ~40 us)
        off32 = np.frombuffer(arr.buffers()[1], dtype=np.int32, count=len(arr) + 1, offset=arr.offset * 4)
        offsets = off32.astype(np.int64)
    elif pa.types.is_large_string(arr.type):
        offsets = np.frombuffer(arr.buffers()[1], dtype=np.int64, count=len(arr) + 1, offset=arr.offset * 8)
    else:
        return _utf8(arr.cast(pa.large_string()))
    bufs = arr.buffers()
    data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None else np.zeros(0, np.uint8)
    return data[offsets[0] : offsets[-1]], offsets - offsets[0]


class RecordStore:
    """Records of ``capacity`` slots of one schema, as arrays.

    Thread safety: the owner (ProfileIndex) writes under its lock; readers may read rows of
    slots they saw active while a writer appends (growth replaces arrays whole, after copying).
    """

    def __init__(self, schema: Schema, capacity: int) -> None:
        self.schema = schema
        self._num = [i for i, a in enumerate(schema) if a.is_numeric]
        self._txt = [i for i, a in enumerate(schema) if not a.is_numeric]
        self._col = {a.name: (self._num.index(i) if a.is_numeric else self._txt.index(i))
                     for i, a in enumerate(schema)}
        n, t = len(self._num), len(self._txt)
        self.present = aligned_zeros((capacity, len(schema)), np.bool_, "profile records")
        self.lo = aligned_zeros((capacity, n), np.int64, "profile records")
        self.hi = aligned_zeros((capacity, n), np.int64, "profile records")
        self.tstart = aligned_zeros((capacity, t), np.int64, "profile records")
        self.tlen = aligned_zeros((capacity, t), np.int64, "profile records")
        self.text = aligned_zeros(1024 if t else 0, np.uint8, "profile texts")
        self.used = 0

    @property
    def capacity(self) -> int:
        return int(self.present.shape[0])

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in (self.present, self.lo, self.hi, self.tstart, self.tlen, self.text))

    def columns(self, name: str) -> tuple[int, int]:
        """(column of ``present``, column of ``lo`` / ``hi`` or of ``tstart`` / ``tlen``) of an attribute."""
        return self.schema.index(name), self._col[name]

    def gathered(self, slots: np.ndarray, capacity: int) -> RecordStore:
        """A new store of ``capacity`` slots holding the records of ``slots`` in rows
        ``0 .. len(slots) - 1``, texts repacked (the bytes of removed records are not carried
        over). Complexity: O(len(slots) x attributes + their text bytes), vectorised."""
        out = RecordStore(self.schema, capacity)
        n = len(slots)
        for name in ("present", "lo", "hi", "tlen"):
            getattr(out, name)[:n] = getattr(self, name)[slots]
        if self._txt and n:
            lens = self.tlen[slots].ravel()
            starts = np.cumsum(lens) - lens
            total = int(lens.sum())
            src = np.repeat(self.tstart[slots].ravel() - starts, lens) + np.arange(total, dtype=np.int64)
            out._reserve_text(total)
            out.text[:total] = self.text[src]
            out.used = total
            out.tstart[:n] = np.where(out.present[:n][:, self._txt], starts.reshape(n, len(self._txt)), 0)
        return out

    def grown(self, capacity: int) -> RecordStore:
        """A copy with room for ``capacity`` slots. Complexity: O(size)."""
        out = RecordStore(self.schema, capacity)
        c = min(capacity, self.capacity)
        for name in ("present", "lo", "hi", "tstart", "tlen"):
            getattr(out, name)[:c] = getattr(self, name)[:c]
        out.text, out.used = self.text, self.used  # append-only: shared until it grows
        return out

    def _reserve_text(self, nbytes: int) -> None:
        need = self.used + nbytes
        if need > self.text.shape[0]:
            bigger = aligned_zeros(max(need, 2 * self.text.shape[0]), np.uint8, "profile texts")
            bigger[: self.used] = self.text[: self.used]
            self.text = bigger  # replaced whole: readers see the old or the new buffer, both valid

    def write(self, first: int, batch: RecordBatch) -> None:
        """Store the records of ``batch`` in slots ``first .. first + batch.size - 1``."""
        if batch.size == 1:
            self._write_one(first, batch)
            return
        for col in batch.columns:
            slots = first + col.rows
            c = self._col[col.name]
            if col.text is not None:
                data, offsets = _utf8(col.text)
                self._append_text(data, slots, c, offsets)
            else:
                assert col.a is not None and col.b is not None
                self.lo[slots, c] = col.a
                self.hi[slots, c] = col.b
            self.present[slots, self.schema.index(col.name)] = True

    def _append_text(self, data: np.ndarray, slots: Any, c: Any, offsets: np.ndarray) -> None:
        self._reserve_text(len(data))
        self.text[self.used : self.used + len(data)] = data
        self.tstart[slots, c] = self.used + offsets[:-1]
        self.tlen[slots, c] = np.diff(offsets)
        self.used += len(data)

    def _write_one(self, slot: int, batch: RecordBatch) -> None:
        """One record: a few array writes for all its attributes."""
        num: list[tuple[int, int, int]] = []
        txt: list[tuple[int, bytes]] = []
        for col in batch.columns:
            if col.text is not None:
                t = col.text[0]
                txt.append((self._col[col.name], (t.as_py() if hasattr(t, "as_py") else t).encode("utf-8")))
            else:
                assert col.a is not None and col.b is not None
                num.append((self._col[col.name], int(col.a[0]), int(col.b[0])))
        if num:
            cs, a, b = zip(*num, strict=True)
            self.lo[slot, list(cs)] = a
            self.hi[slot, list(cs)] = b
        if txt:
            cs_t, enc = zip(*txt, strict=True)
            offsets = np.array([0, *itertools.accumulate(map(len, enc))], dtype=np.int64)
            self._append_text(np.frombuffer(b"".join(enc), np.uint8), slot, list(cs_t), offsets)
        self.present[slot, [self.schema.index(c.name) for c in batch.columns]] = True

    def clear(self, slot: int) -> None:
        """Forget the record of ``slot`` (its text bytes are zeroed)."""
        for c in range(len(self._txt)):
            s, n = int(self.tstart[slot, c]), int(self.tlen[slot, c])
            self.text[s : s + n] = 0
        for a in (self.present, self.lo, self.hi, self.tstart, self.tlen):
            a[slot] = 0

    def matches(self, ids: np.ndarray, query: RecordBatch, mode: str) -> np.ndarray:
        """Bool mask: the records of ``ids`` satisfy the (one-record) ``query`` exactly: texts
        equal; numeric query values inside the record's range (``"subset"``) or overlapping it
        (``"intersect"``). Complexity: O(len(ids) x query attributes), vectorised."""
        ok = np.ones(len(ids), dtype=bool)
        for col in query.columns:
            ok &= self.present[ids, self.schema.index(col.name)]
            c = self._col[col.name]
            if col.text is not None:
                t = col.text[0]
                want = np.frombuffer((t.as_py() if hasattr(t, "as_py") else t).encode("utf-8"), dtype=np.uint8)
                ok &= self.tlen[ids, c] == len(want)
                sel = np.flatnonzero(ok)
                if len(want) and sel.size:
                    got = self.text[self.tstart[ids[sel], c][:, None] + np.arange(len(want))]
                    ok[sel] = (got == want).all(axis=1)
                continue
            assert col.a is not None and col.b is not None
            qa, qb = int(col.a[0]), int(col.b[0])
            lo, hi = self.lo[ids, c], self.hi[ids, c]
            ok &= ((lo <= qa) & (qb <= hi)) if mode == "subset" else ((lo <= qb) & (qa <= hi))
        return ok

    def counts(self, name: str, slots: int) -> np.ndarray:
        """Values (``b - a + 1``; 1 for a text) of each record among the first ``slots`` that
        gives attribute ``name``."""
        p = self.present[:slots, self.schema.index(name)]
        if not self.schema[name].is_numeric:
            return np.ones(int(p.sum()), dtype=np.int64)
        c = self._col[name]
        out: np.ndarray = (self.hi[:slots, c] - self.lo[:slots, c] + 1)[p]
        return out

    def record(self, slot: int) -> dict[str, Any]:
        """The record of ``slot`` as given (numbers unscaled; a range as a (lo, hi) tuple)."""
        out: dict[str, Any] = {}
        for j, attr in enumerate(self.schema):
            if not self.present[slot, j]:
                continue
            c = self._col[attr.name]
            if isinstance(attr, Text):
                s, n = int(self.tstart[slot, c]), int(self.tlen[slot, c])
                out[attr.name] = bytes(self.text[s : s + n]).decode("utf-8")
            else:
                assert isinstance(attr, Numeric)
                a, b = attr.unscale(int(self.lo[slot, c])), attr.unscale(int(self.hi[slot, c]))
                out[attr.name] = a if a == b else (a, b)
        return out

    # -- persistence ------------------------------------------------------------------------------
    def state(self, slots: int) -> dict[str, np.ndarray]:
        """The arrays of the first ``slots`` rows (and the texts in use), for the container."""
        return {"rec_present": self.present[:slots], "rec_lo": self.lo[:slots], "rec_hi": self.hi[:slots],
                "rec_tstart": self.tstart[:slots], "rec_tlen": self.tlen[:slots], "rec_text": self.text[: self.used]}

    @classmethod
    def from_state(cls, schema: Schema, arrays: dict[str, np.ndarray], slots: int, live: np.ndarray) -> RecordStore:
        """The store of a file's arrays (already checked against :data:`RECORD_ARRAYS`), taken
        over without copies; ``live`` is the bool mask of active slots. FormatError naming the
        array for every inconsistency: shapes, values outside their attribute's scope, reversed
        ranges, texts outside the buffer or not UTF-8, data kept for inactive slots."""
        missing = [n for n in RECORD_ARRAYS if n not in arrays]
        if missing:
            raise FormatError(f"ProfileIndex stores records but the {missing[0]!r} array is missing")
        out = object.__new__(cls)
        out.schema = schema
        out._num = [i for i, a in enumerate(schema) if a.is_numeric]
        out._txt = [i for i, a in enumerate(schema) if not a.is_numeric]
        out._col = {a.name: (out._num.index(i) if a.is_numeric else out._txt.index(i)) for i, a in enumerate(schema)}
        shapes = {"rec_present": (slots, len(schema)), "rec_lo": (slots, len(out._num)), "rec_hi": (slots, len(out._num)),
                  "rec_tstart": (slots, len(out._txt)), "rec_tlen": (slots, len(out._txt))}
        for name, shape in shapes.items():
            if arrays[name].shape != shape:
                raise FormatError(f"the {name!r} array of ProfileIndex has shape {arrays[name].shape}; "
                                  f"{slots} slots of this schema need {shape}")
        present, lo, hi = arrays["rec_present"], arrays["rec_lo"], arrays["rec_hi"]
        tstart, tlen, text = arrays["rec_tstart"], arrays["rec_tlen"], arrays["rec_text"]
        if np.any(present[~live]) or np.any(lo[~live]) or np.any(hi[~live]) or np.any(tlen[~live]) or np.any(tstart[~live]):
            raise FormatError("ProfileIndex keeps record data for slots that are not active")
        for c, j in enumerate(out._num):
            attr = schema.attributes[j]
            assert isinstance(attr, Numeric)
            p, a, b = present[:, j], lo[:, c], hi[:, c]
            if np.any(p & ((a < attr.scaled_lo) | (b > attr.scaled_hi) | (a > b))) or np.any(~p & ((a != 0) | (b != 0))):
                raise FormatError(f"ProfileIndex records hold values of {attr.name!r} outside its scope or reversed")
        if out._txt:
            p = present[:, out._txt]
            ends = tstart + tlen
            if np.any(~p & ((tstart != 0) | (tlen != 0))) or (ends.size and int(ends.max()) > len(text)):
                raise FormatError("ProfileIndex record texts lie outside the 'rec_text' array")
            try:
                bytes(text).decode("utf-8")
            except UnicodeDecodeError:
                raise FormatError("the 'rec_text' array of ProfileIndex is not UTF-8") from None
            cont = (text & 0xC0) == 0x80  # continuation bytes: no text may start or end inside a character
            bounds = np.concatenate([tstart[p], ends[p]])
            inner = bounds[bounds < len(text)]
            if np.any(cont[inner]):
                raise FormatError("ProfileIndex record texts split UTF-8 characters")
        elif len(text):
            raise FormatError("ProfileIndex has record texts but no text attribute")
        out.present, out.lo, out.hi, out.tstart, out.tlen, out.text = present, lo, hi, tstart, tlen, text
        out.used = len(text)
        return out
