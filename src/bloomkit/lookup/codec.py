"""ValueCodec: store labels (any hashable, JSON-able values), not only integers.

A Geometric or Bloomier filter stores integers in [1, 2^V - 1]; a codec numbers the labels
1, 2, 3, ... in order of first appearance and maps them back. 0 stays "absent".
"""

from __future__ import annotations

import json
from collections.abc import Hashable, Iterable
from typing import Any

import numpy as np

from .._validation import check_int
from ..errors import FormatError, InvalidParameterError

__all__ = ["ValueCodec"]


class ValueCodec:
    """Bidirectional map label <-> value id in [1, 2^V - 1].

    Parameters
    ----------
    labels : iterable of hashable, optional
        Labels to number first, in order.
    value_bits : int
        V; at most 2^V - 1 labels.

    Examples
    --------
    >>> codec = ValueCodec(["noun", "verb"])
    >>> codec.encode("verb"), codec.encode("adj"), codec.decode(3), codec.decode(0)
    (2, 3, 'adj', None)
    """

    def __init__(self, labels: Iterable[Hashable] = (), value_bits: int = 16) -> None:
        self.value_bits = check_int(value_bits, "value_bits", "ValueCodec", lo=1, hi=32)
        self._ids: dict[Hashable, int] = {}
        self._labels: list[Hashable] = []
        for lab in labels:
            self.encode(lab)

    def __len__(self) -> int:
        return len(self._labels)

    @property
    def labels(self) -> list[Hashable]:
        """Labels in id order (id = position + 1)."""
        return list(self._labels)

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
                f"labels (V = {self.value_bits}). Got the new label {label!r} instead."
            )
        self._labels.append(label)
        self._ids[label] = len(self._labels)
        return len(self._labels)

    def encode_many(self, labels: Iterable[Hashable]) -> np.ndarray:
        """Ids of many labels (numbering new ones). Complexity: O(n)."""
        return np.fromiter((self.encode(lab) for lab in labels), dtype=np.int64)

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

    def to_json(self) -> str:
        """The labels as JSON (labels must be JSON values)."""
        return json.dumps({"value_bits": self.value_bits, "labels": self._labels})

    @classmethod
    def from_json(cls, text: str) -> ValueCodec:
        """Inverse of :meth:`to_json`; FormatError on malformed input."""
        try:
            d = json.loads(text)
            return cls(d["labels"], d["value_bits"])
        except (ValueError, KeyError, TypeError) as e:
            raise FormatError(f"invalid ValueCodec JSON: {e}") from None
