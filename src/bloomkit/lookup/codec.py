"""ValueCodec: store labels (any hashable values), not only integers.

A Geometric or Bloomier filter stores integers in [1, 2^V - 1]; a codec numbers the labels
1, 2, 3, ... in order of first appearance and maps them back. 0 stays "absent".

The filters build a codec themselves when their values are str (``GeometricFilter.build(keys,
["noun", "verb", ...])``) and save it with the filter (the labels as UTF-8 in the container's
data block), so a table read back from a file answers with the same str labels. A codec of
other hashable labels works in memory; only str labels are saved.
"""

from __future__ import annotations

import json
from collections.abc import Hashable, Iterable
from typing import Any

import numpy as np

from .._engine.columns import sized_items
from .._validation import Int, safe_repr
from ..errors import FormatError, InvalidParameterError
from .params import MAX_VALUE_BITS

__all__ = ["ValueCodec"]

_VALUE_BITS = Int(1, MAX_VALUE_BITS)


class ValueCodec:
    """Bidirectional map label <-> value id in [1, 2^V - 1].

    Parameters
    ----------
    labels : iterable of hashable, optional
        Labels to number first, in order.
    value_bits : int
        V in [1, 64]; at most 2^V - 1 labels.

    Examples
    --------
    >>> codec = ValueCodec(["noun", "verb"])
    >>> codec.encode("verb"), codec.encode("adj"), codec.decode(3), codec.decode(0)
    (2, 3, 'adj', None)
    """

    def __init__(self, labels: Iterable[Hashable] = (), value_bits: int = 16) -> None:
        self.value_bits: int = _VALUE_BITS(value_bits, "value_bits", "ValueCodec")
        self._ids: dict[Hashable, int] = {}
        self._labels: list[Hashable] = []
        for lab in sized_items(labels, "labels", "ValueCodec", "labels"):
            self.encode(lab)

    def __len__(self) -> int:
        return len(self._labels)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ValueCodec):
            return NotImplemented
        return self.value_bits == other.value_bits and self._labels == other._labels

    __hash__ = None  # type: ignore[assignment]

    @property
    def labels(self) -> list[Hashable]:
        """Labels in id order (id = position + 1)."""
        return list(self._labels)

    def copy(self) -> ValueCodec:
        """An independent copy. Complexity: O(number of labels)."""
        out = ValueCodec(value_bits=self.value_bits)
        out._labels = list(self._labels)
        out._ids = dict(self._ids)
        return out

    def encode(self, label: Hashable) -> int:
        """Id of ``label``, numbering it if new. Complexity: O(1)."""
        try:
            got = self._ids.get(label)
        except TypeError:
            raise InvalidParameterError(
                f"The 'label' parameter of ValueCodec must be hashable. Got {type(label).__name__} instead."
            ) from None
        if got is not None:
            return got
        if len(self._labels) >= (1 << self.value_bits) - 1:
            raise InvalidParameterError(
                f"The 'label' parameter of ValueCodec must be one of at most {(1 << self.value_bits) - 1} "
                f"labels (V = {self.value_bits}). Got the new label {safe_repr(label)} instead."
            )
        self._labels.append(label)
        self._ids[label] = len(self._labels)
        return len(self._labels)

    def encode_many(self, labels: Iterable[Hashable]) -> np.ndarray:
        """Ids of many labels (numbering new ones). Complexity: O(n)."""
        return np.fromiter((self.encode(lab) for lab in sized_items(labels, "labels", "ValueCodec.encode_many", "labels")),
                           dtype=np.int64)

    def encode_str_array(self, labels: np.ndarray) -> np.ndarray:
        """uint64 ids of a 1-D numpy array of str (``U`` or object of str), numbering new labels
        in order of first appearance: the same ids as :meth:`encode_many`, vectorised.

        Complexity: O(n log n) (a sort), O(distinct labels) Python work.
        """
        uniq, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
        order = np.argsort(first, kind="stable")  # distinct labels by first appearance
        ids = np.empty(len(uniq), dtype=np.uint64)
        for j in order.tolist():
            ids[j] = self.encode(str(uniq[j]))
        out: np.ndarray = ids[inverse.reshape(-1)]
        return out

    def decode(self, value_id: int, default: Any = None) -> Any:
        """Label of an id; ``default`` for 0 (absent). Complexity: O(1)."""
        i = int(value_id)
        if i == 0:
            return default
        if not 1 <= i <= len(self._labels):
            raise InvalidParameterError(
                f"The 'value_id' parameter of ValueCodec must be 0 or in [1, {len(self._labels)}]. Got {value_id!r} instead."
            )
        return self._labels[i - 1]

    def decode_many(self, value_ids: Iterable[int], default: Any = None) -> list[Any]:
        """Labels of many ids. Complexity: O(n)."""
        return [self.decode(i, default) for i in value_ids]

    def decode_array(self, value_ids: np.ndarray, default: Any = None) -> np.ndarray:
        """Labels of an array of ids as a numpy object array; ``default`` for 0.

        Complexity: O(n) (one vectorised take)."""
        table = np.empty(len(self._labels) + 1, dtype=object)
        table[0] = default
        table[1:] = self._labels
        ids = np.asarray(value_ids)
        if ids.size and int(ids.max()) > len(self._labels):
            bad = int(ids[ids > len(self._labels)][0])
            raise InvalidParameterError(
                f"The 'value_ids' parameter of ValueCodec must hold 0 or ids in [1, {len(self._labels)}]. "
                f"Got {bad} instead."
            )
        out: np.ndarray = table[ids.astype(np.intp)]
        return out

    # -- persistence (as arrays of the filter that holds the codec) ----------------------------
    def to_arrays(self) -> dict[str, np.ndarray]:
        """The str labels as ``labels_offsets`` (int64, n + 1) and ``labels_data`` (UTF-8).

        Raises InvalidParameterError if a label is not a str (only str labels are saved)."""
        parts = []
        for lab in self._labels:
            if not isinstance(lab, str):
                raise InvalidParameterError(
                    f"The labels of a ValueCodec must be str to be saved. Got {lab!r} of type "
                    f"{type(lab).__name__} instead."
                )
            parts.append(lab.encode("utf-8", "surrogatepass"))
        offsets = np.zeros(len(parts) + 1, dtype=np.int64)
        np.cumsum(np.fromiter(map(len, parts), dtype=np.int64, count=len(parts)), out=offsets[1:])
        data = np.frombuffer(b"".join(parts), dtype=np.uint8).copy()
        return {"labels_offsets": offsets, "labels_data": data}

    @classmethod
    def from_arrays(cls, offsets: np.ndarray, data: np.ndarray, value_bits: int, owner: str) -> ValueCodec:
        """Inverse of :meth:`to_arrays`; FormatError naming the field on anything wrong (offsets
        not starting at 0, decreasing or not ending at the data's length, invalid UTF-8, a label
        twice, more than 2^V - 1 labels)."""
        n = len(offsets) - 1
        if n < 0 or int(offsets[0]) != 0 or int(offsets[-1]) != len(data):
            raise FormatError(f"the 'labels_offsets' array of {owner} must run from 0 to the length of 'labels_data'")
        if n and bool((np.diff(offsets) < 0).any()):
            raise FormatError(f"the 'labels_offsets' array of {owner} decreases")
        if n > (1 << value_bits) - 1:
            raise FormatError(f"{owner} holds {n} labels; V = {value_bits} allows {(1 << value_bits) - 1}")
        raw = data.tobytes()
        bounds = offsets.tolist()
        try:
            labels = [raw[bounds[i]:bounds[i + 1]].decode("utf-8", "surrogatepass") for i in range(n)]
        except UnicodeDecodeError:
            raise FormatError(f"the 'labels_data' array of {owner} is not UTF-8") from None
        out = cls(value_bits=value_bits)
        out._labels = list(labels)
        out._ids = {lab: i + 1 for i, lab in enumerate(labels)}
        if len(out._ids) != n:
            raise FormatError(f"the labels of {owner} hold a label twice")
        return out

    def to_json(self) -> str:
        """The labels as JSON (labels must be JSON values)."""
        return json.dumps({"value_bits": self.value_bits, "labels": self._labels})

    @classmethod
    def from_json(cls, text: str) -> ValueCodec:
        """Inverse of :meth:`to_json`; FormatError on malformed input."""
        try:
            d = json.loads(text)
            return cls(d["labels"], d["value_bits"])
        except (ValueError, KeyError, TypeError, InvalidParameterError) as e:
            raise FormatError(f"invalid ValueCodec JSON: {e}") from None
