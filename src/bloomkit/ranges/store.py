"""The records of a ProfileIndex as arrays (exact verification, ``record(id)``, persistence).

One fixed-width **row of bytes** per profile slot (slot-major), each field in the narrowest
whole number of bytes that holds it, and one dictionary of the texts; in the container as
arrays, never in the JSON parameter block (which is capped at 64 MiB):

=================  ===========================  ===============================================
array              shape / dtype                contents
=================  ===========================  ===============================================
``rec_rows``       (slots, row bytes) uint8     per slot: the presence bits (bit ``j % 8`` of
                                                byte ``j // 8``: the record gives attribute
                                                ``j``), then per numeric attribute its scaled
                                                inclusive ends ``lo``, ``hi`` as offsets from the
                                                attribute's lowest scaled value (little-endian,
                                                the bytes that hold ``scaled_hi - scaled_lo``:
                                                Age 1..120 one byte, a longitude at four places
                                                three), then per text attribute its entry in the
                                                dictionary (the code: 1, 2, 4 or 8 bytes, as the
                                                number of entries needs); 0 where absent
``rec_toff``       (entries + 1,) int64         where each dictionary entry starts in
                                                ``rec_text`` (0, ..., len(rec_text))
``rec_text``       (bytes,) uint8               the entries' UTF-8 bytes
=================  ===========================  ===============================================

This is **records layout 3** (issue 28: Table 1's profiles take 32 bytes each, layout 2 took
170 bytes + their texts).
Layout 2 (``rec_present`` / ``rec_lo`` / ``rec_hi`` / ``rec_tstart`` / ``rec_tlen`` /
``rec_text``: a bool per attribute, int64 ends, int64 text start and length) is still read
(converted on load, a copy); files are written in layout 3.

Texts are dictionary-encoded: a text already in the dictionary reuses its entry, so a column of
few distinct values costs its code per profile. The dictionary remembers at most
:data:`DICT_MAX` texts (memory bounded); past that, new texts get entries of their own (no
deduplication: the code is then an offset into the entries, 4 bytes + the text). Verification
compares bytes, so it is exact either way.

A removed profile's row is zeroed; its texts' entries stay in memory (other profiles may share
them) but are not saved: :meth:`RecordStore.state` writes only the entries live rows use, and
:meth:`RecordStore.gathered` (:meth:`ProfileIndex.compacted`) keeps only those.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from .._engine.storage import aligned_zeros
from .._format import ArraySpec
from ..errors import FormatError
from .records import RecordBatch
from .schema import MAX_SCALED, Numeric, Schema, Text

__all__ = ["DICT_MAX", "RECORD_ARRAYS", "RECORD_ARRAYS_2", "RecordStore", "field_width"]

RECORD_ARRAYS = {
    "rec_rows": ArraySpec("|u1", 2, optional=True),
    "rec_toff": ArraySpec("<i8", 1, optional=True, lo=0),
    "rec_text": ArraySpec("|u1", 1, optional=True),
}
"""The saved arrays of the records, layout 3 (present iff the index stores records)."""

RECORD_ARRAYS_2 = {
    "rec_present": ArraySpec("|b1", 2, optional=True),
    "rec_lo": ArraySpec("<i8", 2, optional=True, lo=-MAX_SCALED, hi=MAX_SCALED),
    "rec_hi": ArraySpec("<i8", 2, optional=True, lo=-MAX_SCALED, hi=MAX_SCALED),
    "rec_tstart": ArraySpec("<i8", 2, optional=True, lo=0),
    "rec_tlen": ArraySpec("<i8", 2, optional=True, lo=0),
}
"""The arrays of records layout 2 that layout 3 replaced (read, never written)."""

DICT_MAX = 1 << 16
"""Texts the dictionary remembers for reuse (beyond them, new texts get entries of their own)."""

_CODE_WIDTHS = (1, 2, 4, 8)


def field_width(span: int) -> int:
    """Bytes (1 .. 8) of the narrowest little-endian unsigned field holding 0 .. ``span``."""
    return max(1, (int(span).bit_length() + 7) // 8)


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


def _get(rows: np.ndarray, sel: Any, off: int, w: int) -> np.ndarray:
    """The little-endian unsigned field of ``w`` bytes at byte ``off`` of the rows ``sel``, as int64."""
    part = rows[sel, off : off + w]
    if part.ndim == 1:
        part = part[None, :]
    pad = 1 << (w - 1).bit_length()  # 1, 2, 4 or 8 bytes: a numpy dtype
    buf = np.zeros((part.shape[0], pad), dtype=np.uint8)
    buf[:, :w] = part
    out: np.ndarray = buf.view(f"<u{pad}")[:, 0].astype(np.int64)
    return out


def _put(rows: np.ndarray, sel: Any, off: int, w: int, values: Any) -> None:
    """Write ``values`` (non-negative, below 2**(8 w)) into the field of ``w`` bytes at ``off``."""
    v = np.asarray(values, dtype="<u8").reshape(-1)
    rows[sel, off : off + w] = v.view(np.uint8).reshape(-1, 8)[:, :w].reshape(rows[sel, off : off + w].shape)


class RecordStore:
    """Records of ``capacity`` slots of one schema, as rows of bytes and a text dictionary.

    ``view`` is ``(rows, fields, toff, text)``: the arrays the kernels read, replaced as a whole
    when one of them is (growth, wider codes), so a reader that took it has a consistent set;
    ``fields`` is int64 (attributes, 3): byte offset, width and base (the lowest scaled value of
    a numeric attribute, 0 for a text) of each attribute's field(s) in a row.

    Thread safety: the owner (ProfileIndex) writes under its lock; readers take ``view`` once.
    """

    def __init__(self, schema: Schema, capacity: int, code_width: int = 1) -> None:
        self._setup(schema, code_width)
        rows = aligned_zeros((capacity, self.row_bytes), np.uint8, "profile records")
        toff = np.zeros(64 if self._txt else 1, dtype=np.int64)
        text = aligned_zeros(1024 if self._txt else 0, np.uint8, "profile texts")
        self.view = (rows, self.fields, toff, text)
        self.entries = 0
        self.used = 0
        self._dict: dict[str, int] | None = {}

    def _setup(self, schema: Schema, code_width: int) -> None:
        self.schema = schema
        self._num = [i for i, a in enumerate(schema) if a.is_numeric]
        self._txt = [i for i, a in enumerate(schema) if not a.is_numeric]
        self._col = {a.name: (self._num.index(i) if a.is_numeric else self._txt.index(i)) for i, a in enumerate(schema)}
        self.code_width = code_width
        fields = np.zeros((len(schema), 3), dtype=np.int64)
        at = (len(schema) + 7) // 8
        for j, a in enumerate(schema):
            if isinstance(a, Numeric):
                w = field_width(a.scaled_hi - a.scaled_lo)
                fields[j] = at, w, a.scaled_lo
                at += 2 * w
        for j in self._txt:
            fields[j] = at, code_width, 0
            at += code_width
        self.fields = fields  # never written after this (writeable: numba takes read-only arrays more slowly)
        self.row_bytes = at

    @property
    def rows(self) -> np.ndarray:
        return self.view[0]

    @property
    def capacity(self) -> int:
        return int(self.view[0].shape[0])

    @property
    def nbytes(self) -> int:
        rows, fields, toff, text = self.view
        return int(rows.nbytes + fields.nbytes + toff.nbytes + text.nbytes)

    def columns(self, name: str) -> tuple[int, int]:
        """(attribute index = presence bit, column among the numeric or among the text attributes)."""
        return self.schema.index(name), self._col[name]

    # -- fields -----------------------------------------------------------------------------------
    def present(self, sel: Any, j: int) -> np.ndarray:
        """Bool: the rows ``sel`` give attribute ``j``."""
        out: np.ndarray = (self.view[0][sel, j >> 3] >> (j & 7)) & 1 == 1
        return out

    def bounds(self, sel: Any, j: int) -> tuple[np.ndarray, np.ndarray]:
        """(lo, hi) scaled (int64) of numeric attribute ``j`` in the rows ``sel`` (base where absent)."""
        rows, fields = self.view[0], self.fields
        off, w, base = (int(x) for x in fields[j])
        return _get(rows, sel, off, w) + base, _get(rows, sel, off + w, w) + base

    def codes(self, sel: Any, j: int) -> np.ndarray:
        """The dictionary entries of text attribute ``j`` in the rows ``sel``."""
        off, w, _ = (int(x) for x in self.fields[j])
        return _get(self.view[0], sel, off, w)

    def _entry(self, e: int) -> bytes:
        _, _, toff, text = self.view
        return bytes(text[toff[e] : toff[e + 1]])

    # -- copies -----------------------------------------------------------------------------------
    def _copy_rows(self, out: RecordStore, sel: Any, n: int) -> None:
        """Rows ``sel`` of this store into rows 0 .. n - 1 of ``out`` (same numeric fields; the
        text codes are written by the caller when the code widths differ)."""
        src, dst = self.view[0], out.view[0]
        fixed = int(self.fields[self._txt[0], 0]) if self._txt else self.row_bytes
        dst[:n, :fixed] = src[sel, :fixed]

    def gathered(self, slots: np.ndarray, capacity: int) -> RecordStore:
        """A new store of ``capacity`` slots holding the records of ``slots`` in rows
        ``0 .. len(slots) - 1``, with only the dictionary entries they use (in their order).
        Complexity: O(len(slots) x row bytes + their entries' bytes), vectorised."""
        out = RecordStore(self.schema, capacity, self.code_width)
        n = len(slots)
        self._copy_rows(out, slots, n)
        if self._txt and n:
            keep, remap = self._used_entries(slots)
            out._dict = None
            out._append_entries(*self._entry_bytes(keep))
            for j in self._txt:
                p = self.present(slots, j)
                codes = np.where(p, remap[self.codes(slots, j)], 0)
                off = int(out.fields[j, 0])
                _put(out.view[0], slice(0, n), off, out.code_width, codes)
        return out

    def _used_entries(self, slots: Any) -> tuple[np.ndarray, np.ndarray]:
        """(the entries the rows ``slots`` use, sorted; old entry -> new entry number)."""
        used = np.zeros(max(self.entries, 1), dtype=bool)
        for j in self._txt:
            p = self.present(slots, j)
            used[self.codes(slots, j)[p]] = True
        keep = np.flatnonzero(used[: self.entries])
        remap = np.zeros(max(self.entries, 1), dtype=np.int64)
        remap[keep] = np.arange(keep.size)
        return keep, remap

    def _entry_bytes(self, keep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(bytes, offsets from 0) of the entries ``keep``, concatenated."""
        _, _, toff, text = self.view
        lens = toff[keep + 1] - toff[keep]
        starts = np.cumsum(lens) - lens
        total = int(lens.sum())
        src = np.repeat(toff[keep] - starts, lens) + np.arange(total, dtype=np.int64)
        return text[src], np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)

    def grown(self, capacity: int) -> RecordStore:
        """A copy with room for ``capacity`` slots (the dictionary shared: append-only).
        Complexity: O(size)."""
        out = object.__new__(RecordStore)
        out._setup(self.schema, self.code_width)
        rows = aligned_zeros((capacity, self.row_bytes), np.uint8, "profile records")
        c = min(capacity, self.capacity)
        rows[:c] = self.view[0][:c]
        out.view = (rows, *self.view[1:])
        out.entries, out.used, out._dict = self.entries, self.used, self._dict
        return out

    def copy(self) -> RecordStore:
        """An independent copy (rows and dictionary). Complexity: O(size)."""
        out = self.grown(self.capacity)
        rows, fields, toff, text = out.view
        out.view = (rows, fields, toff.copy(), text.copy())
        out._dict = None if self._dict is None else dict(self._dict)
        return out

    def _widen(self, entries: int) -> None:
        """Make the codes wide enough for ``entries`` dictionary entries (the rows rewritten
        whole once: at 256 and 65,536 entries)."""
        w = self.code_width
        while w < 8 and entries > 1 << (8 * w):
            w = _CODE_WIDTHS[_CODE_WIDTHS.index(w) + 1]
        if w == self.code_width:
            return
        old = (self.view[0], self.fields)
        out = RecordStore(self.schema, 0, w)
        rows = aligned_zeros((self.capacity, out.row_bytes), np.uint8, "profile records")
        fixed = int(self.fields[self._txt[0], 0])
        rows[:, :fixed] = old[0][:, :fixed]
        for j in self._txt:
            _put(rows, slice(None), int(out.fields[j, 0]), w, self.codes(slice(None), j))
        self._setup(self.schema, w)
        self.view = (rows, self.fields, *self.view[2:])

    # -- writing ----------------------------------------------------------------------------------
    def _append_entries(self, data: np.ndarray, offsets: np.ndarray) -> int:
        """Append entries (``data``, ``offsets`` from 0); returns the first one's number."""
        rows, fields, toff, text = self.view
        first = self.entries
        n = len(offsets) - 1
        if first + n + 1 > toff.shape[0]:
            bigger = np.zeros(max(first + n + 1, 2 * toff.shape[0]), dtype=np.int64)
            bigger[: first + 1] = toff[: first + 1]
            toff = bigger
        need = self.used + len(data)
        if need > text.shape[0]:
            big = aligned_zeros(max(need, 2 * text.shape[0]), np.uint8, "profile texts")
            big[: self.used] = text[: self.used]
            text = big
        text[self.used : need] = data
        toff[first + 1 : first + n + 1] = self.used + offsets[1:]
        self.used = need
        self.entries = first + n
        self.view = (rows, fields, toff, text)  # replaced whole: readers see the old or the new set
        return first

    def _dictionary(self) -> dict[str, int]:
        if self._dict is None:  # after a load or a compaction: rebuilt from the first entries
            self._dict = {}
            for e in range(min(self.entries, DICT_MAX)):
                self._dict.setdefault(self._entry(e).decode("utf-8"), e)
        return self._dict

    def _encode(self, texts: list[str]) -> np.ndarray:
        """The entries of distinct ``texts`` (new ones appended; remembered up to DICT_MAX)."""
        d = self._dictionary()
        out = np.empty(len(texts), dtype=np.int64)
        new: list[int] = []
        for i, t in enumerate(texts):
            e = d.get(t)
            if e is None:
                new.append(i)
                out[i] = -1
            else:
                out[i] = e
        if new:
            fresh = [texts[i] for i in new]
            first = self._append_entries(*_utf8(fresh))
            out[new] = first + np.arange(len(new))
            for i, t in zip(new, fresh, strict=True):
                if len(d) >= DICT_MAX:
                    break
                d[t] = int(out[i])
        self._widen(self.entries)
        return out

    def write(self, first: int, batch: RecordBatch) -> None:
        """Store the records of ``batch`` in slots ``first .. first + batch.size - 1``."""
        for col in batch.columns:
            self._write_column(first + col.rows, self.schema.index(col.name), col.a, col.b, col.text)

    def _write_column(self, slots: np.ndarray, j: int, a: np.ndarray | None, b: np.ndarray | None, text: Any) -> None:
        if text is not None:
            if isinstance(text, list):
                uniq, inverse = np.unique(np.array(text, dtype=object), return_inverse=True) if len(text) > 1 else (
                    text, np.zeros(1, np.int64))
                codes = self._encode(list(uniq))[np.asarray(inverse).reshape(-1)]
            else:
                enc = text.dictionary_encode()
                codes = self._encode(enc.dictionary.to_pylist())[enc.indices.to_numpy(zero_copy_only=False)]
            rows = self.view[0]
            _put(rows, slots, int(self.fields[j, 0]), self.code_width, codes)
        else:
            assert a is not None and b is not None
            rows = self.view[0]
            off, w, base = (int(x) for x in self.fields[j])
            _put(rows, slots, off, w, np.asarray(a) - base)
            _put(rows, slots, off + w, w, np.asarray(b) - base)
        rows[slots, j >> 3] |= np.uint8(1 << (j & 7))

    def clear(self, slot: int) -> None:
        """Forget the record of ``slot``: its presence bits and text codes are zeroed (its
        texts' entries are not saved); its numeric ends stay in memory, where the interval index
        reads them as its keys, and are zeroed in what :meth:`state` saves."""
        row = self.view[0][slot]
        row[: (len(self.schema) + 7) // 8] = 0
        if self._txt:
            row[int(self.fields[self._txt[0], 0]) :] = 0

    # -- reading ----------------------------------------------------------------------------------
    def matches(self, ids: np.ndarray, query: RecordBatch, mode: str) -> np.ndarray:
        """Bool mask: the records of ``ids`` satisfy the (one-record) ``query`` exactly: texts
        equal; numeric query values inside the record's range (``"subset"``) or overlapping it
        (``"intersect"``). Complexity: O(len(ids) x query attributes), vectorised."""
        ok = np.ones(len(ids), dtype=bool)
        _, _, toff, text = self.view
        for col in query.columns:
            j = self.schema.index(col.name)
            ok &= self.present(ids, j)
            if col.text is not None:
                t = col.text[0]
                want = np.frombuffer((t.as_py() if hasattr(t, "as_py") else t).encode("utf-8"), dtype=np.uint8)
                if toff.shape[0] < 2:  # no entry (a loaded index whose profiles give no text)
                    ok[:] = False
                    continue
                e = np.where(ok, np.minimum(self.codes(ids, j), toff.shape[0] - 2), 0)  # (in the arrays taken)
                ok &= ((toff[e + 1] - toff[e]) == len(want)) & (toff[e + 1] <= len(text))
                sel = np.flatnonzero(ok)
                if len(want) and sel.size:
                    got = text[toff[e[sel]][:, None] + np.arange(len(want))]
                    ok[sel] = (got == want).all(axis=1)
                continue
            assert col.a is not None and col.b is not None
            qa, qb = int(col.a[0]), int(col.b[0])
            lo, hi = self.bounds(ids, j)
            ok &= ((lo <= qa) & (qb <= hi)) if mode == "subset" else ((lo <= qb) & (qa <= hi))
        return ok

    def counts(self, name: str, slots: int) -> np.ndarray:
        """Values (``b - a + 1``; 1 for a text) of each record among the first ``slots`` that
        gives attribute ``name``."""
        j = self.schema.index(name)
        p = self.present(slice(0, slots), j)
        if not self.schema[name].is_numeric:
            return np.ones(int(p.sum()), dtype=np.int64)
        lo, hi = self.bounds(slice(0, slots), j)
        out: np.ndarray = (hi - lo + 1)[p]
        return out

    def record(self, slot: int) -> dict[str, Any]:
        """The record of ``slot`` as given (numbers unscaled; a range as a (lo, hi) tuple)."""
        out: dict[str, Any] = {}
        for j, attr in enumerate(self.schema):
            if not bool(self.present(slot, j)):
                continue
            if isinstance(attr, Text):
                out[attr.name] = self._entry(int(self.codes(slot, j)[0])).decode("utf-8")
            else:
                assert isinstance(attr, Numeric)
                lo, hi = self.bounds(slot, j)
                a, b = attr.unscale(int(lo[0])), attr.unscale(int(hi[0]))
                out[attr.name] = a if a == b else (a, b)
        return out

    # -- persistence ------------------------------------------------------------------------------
    def state(self, slots: int, live: np.ndarray) -> dict[str, np.ndarray]:
        """The arrays of the first ``slots`` rows (``live``: their active mask) and the
        dictionary entries they use: taken without a copy unless removed profiles left unused
        entries or numeric ends (zeroed here: a removed record does not survive in a file)."""
        rows, _, toff, text = self.view
        out = rows[:slots]
        copied = False
        for j in self._num:
            off, w, _ = (int(x) for x in self.fields[j])
            stale = ~(self.present(slice(0, slots), j) & live) & np.any(out[:, off : off + 2 * w] != 0, axis=1)
            if stale.any():
                out, copied = (out, True) if copied else (out.copy(), True)
                out[stale, off : off + 2 * w] = 0
        if not self._txt:
            return {"rec_rows": out, "rec_toff": toff[:1], "rec_text": text[:0]}
        keep, remap = self._used_entries(slice(0, slots))
        if keep.size == self.entries:
            return {"rec_rows": out, "rec_toff": toff[: self.entries + 1], "rec_text": text[: self.used]}
        out = out if copied else out.copy()
        for j in self._txt:
            p = self.present(slice(0, slots), j)
            _put(out, slice(None), int(self.fields[j, 0]), self.code_width,
                 np.where(p, remap[self.codes(slice(0, slots), j)], 0))
        data, offsets = self._entry_bytes(keep)
        return {"rec_rows": out, "rec_toff": offsets, "rec_text": data}

    @classmethod
    def from_state(cls, schema: Schema, arrays: dict[str, np.ndarray], slots: int, live: np.ndarray) -> RecordStore:
        """The store of a file's arrays (already checked against :data:`RECORD_ARRAYS`), taken
        over without copies (layout 2: converted); ``live`` is the bool mask of active slots.
        FormatError naming the array for every inconsistency: shapes, values outside their
        attribute's scope, reversed ranges, codes outside the dictionary, entries outside the
        text or not UTF-8, data kept for inactive slots."""
        if "rec_rows" not in arrays and any(n in arrays for n in RECORD_ARRAYS_2):
            return cls._from_layout2(schema, arrays, slots, live)
        missing = [n for n in RECORD_ARRAYS if n not in arrays]
        if missing:
            raise FormatError(f"ProfileIndex stores records but the {missing[0]!r} array is missing")
        extra = [n for n in RECORD_ARRAYS_2 if n in arrays]
        if extra:
            raise FormatError(f"ProfileIndex mixes records layouts 2 and 3 (the {extra[0]!r} array)")
        rows, toff, text = arrays["rec_rows"], arrays["rec_toff"], arrays["rec_text"]
        out = object.__new__(cls)
        out._setup(schema, 1)
        fixed = out.row_bytes - len(out._txt)
        width = rows.shape[1] if rows.ndim == 2 else -1
        cw = (width - fixed) // len(out._txt) if out._txt else 0
        if rows.shape[0] != slots or (out._txt and (cw not in _CODE_WIDTHS or fixed + cw * len(out._txt) != width)) or (
                not out._txt and width != fixed):
            raise FormatError(f"the 'rec_rows' array of ProfileIndex has shape {rows.shape}; {slots} slots of this "
                              f"schema need ({slots}, {fixed} + 1, 2, 4 or 8 bytes per text attribute)")
        if out._txt:
            out._setup(schema, cw)
        if np.any(rows[~live]):
            raise FormatError("ProfileIndex keeps record data for slots that are not active")
        nattr = len(schema)
        if nattr % 8 and np.any(rows[:, nattr >> 3] >> (nattr & 7)):
            raise FormatError("the 'rec_rows' array of ProfileIndex sets presence bits of no attribute")
        if toff.shape[0] < 1 or toff[0] != 0 or np.any(np.diff(toff) < 0) or int(toff[-1]) != len(text):
            raise FormatError("the 'rec_toff' array of ProfileIndex does not divide 'rec_text' into entries")
        out.view = (rows, out.fields, toff, text)
        out.entries, out.used, out._dict = toff.shape[0] - 1, len(text), None
        for j in out._num:
            attr = schema.attributes[j]
            assert isinstance(attr, Numeric)
            p = out.present(slice(None), j)
            off, w, _ = (int(x) for x in out.fields[j])
            a, b = _get(rows, slice(None), off, w), _get(rows, slice(None), off + w, w)
            if np.any(p & ((b > attr.scaled_hi - attr.scaled_lo) | (a > b))) or np.any(~p & ((a != 0) | (b != 0))):
                raise FormatError(f"ProfileIndex records hold values of {attr.name!r} outside its scope or reversed")
        for j in out._txt:
            p = out.present(slice(None), j)
            e = out.codes(slice(None), j)
            if np.any(p & (e >= out.entries)) or np.any(~p & (e != 0)):
                raise FormatError("ProfileIndex record texts name entries outside the 'rec_toff' dictionary")
        if out._txt:
            _check_utf8(text, toff, "'rec_text'")
        elif len(text) or len(toff) != 1:
            raise FormatError("ProfileIndex has record texts but no text attribute")
        return out

    @classmethod
    def _from_layout2(cls, schema: Schema, arrays: dict[str, np.ndarray], slots: int, live: np.ndarray) -> RecordStore:
        """A store of layout-2 arrays (validated as layout 2 always was), converted."""
        names = [*RECORD_ARRAYS_2, "rec_text"]
        missing = [n for n in names if n not in arrays]
        if missing:
            raise FormatError(f"ProfileIndex stores records but the {missing[0]!r} array is missing")
        if "rec_toff" in arrays:
            raise FormatError("ProfileIndex mixes records layouts 2 and 3 (the 'rec_toff' array)")
        out = cls(schema, slots)
        nn, nt = len(out._num), len(out._txt)
        shapes = {"rec_present": (slots, len(schema)), "rec_lo": (slots, nn), "rec_hi": (slots, nn),
                  "rec_tstart": (slots, nt), "rec_tlen": (slots, nt)}
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
            sel = np.flatnonzero(p)
            out._write_column(sel, j, a[sel], b[sel], None)
        if out._txt:
            p = present[:, out._txt]
            ends = tstart + tlen
            if np.any(~p & ((tstart != 0) | (tlen != 0))) or (ends.size and int(ends.max()) > len(text)):
                raise FormatError("ProfileIndex record texts lie outside the 'rec_text' array")
            _check_utf8(text, np.concatenate([tstart[p], ends[p]]), "'rec_text'")
            for c, j in enumerate(out._txt):
                sel = np.flatnonzero(p[:, c])
                lens = tlen[sel, c]
                starts = np.cumsum(lens) - lens
                src = np.repeat(tstart[sel, c] - starts, lens) + np.arange(int(lens.sum()), dtype=np.int64)
                offsets = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
                col = pa.LargeStringArray.from_buffers(len(sel), pa.py_buffer(offsets), pa.py_buffer(text[src].copy()))
                out._write_column(sel, j, None, None, col)
        elif len(text):
            raise FormatError("ProfileIndex has record texts but no text attribute")
        return out


def _check_utf8(text: np.ndarray, bounds: np.ndarray, what: str) -> None:
    """FormatError unless ``text`` is UTF-8 and no bound in ``bounds`` falls inside a character."""
    try:
        bytes(text).decode("utf-8")
    except UnicodeDecodeError:
        raise FormatError(f"the {what} array of ProfileIndex is not UTF-8") from None
    cont = (text & 0xC0) == 0x80  # continuation bytes: no text may start or end inside a character
    inner = bounds[bounds < len(text)]
    if np.any(cont[inner]):
        raise FormatError("ProfileIndex record texts split UTF-8 characters")
