"""The protocols every bloomkit structure implements, one meaning per name (DESIGN convention 1).

=========================  ===================================================================
name                       meaning, on every structure that has it
=========================  ===================================================================
``size_in_bits``           int property: bits of the structure's payload (its model's size)
``predicted_fpr()``        float: the headline false positive rate now (details: keyword
                           arguments, or ``info()``)
``info()``                 dict: structure, parameters, sizes, fill, predicted rates, key types
``to_bytes`` /             the container format (docs/format.md); ``bloomkit.load(path)``
``from_bytes`` /           picks the class from the file
``save`` / ``load``
``for_requirements(...)``  classmethod: a structure sized for stated requirements
``add(key)`` /             insert one key / a batch (list, numpy, pyarrow, pandas, polars)
``add_many(keys)``
``key in s`` /             membership of one key / a batch (numpy bool array)
``contains_many(keys)``
``update(x)``              set meaning: insert many keys (or merge another filter); on lookup
                           tables dict meaning: store many (key, value) pairs
``get`` / ``get_many`` /   lookup tables: the value of one key / a batch; ``set`` overwrites
``set``                    (or inserts) one pair
``query_many(points,       similarity filters: "is each point near the set at level ``level``"
level)``
``clear()``                remove everything, keep the parameters
``copy()``                 an independent copy
``union(other)`` / ``|``   a structure of both sets (same parameters required)
``len(s)``                 number of keys: exact where the structure counts them
                           (``exact_len = True``), an estimate otherwise (Bloom filters)
``key_types``              the kinds of keys stored ("str", "bytes", "int", "float", "bool",
                           "tuple")
=========================  ===================================================================

Optional parameters are keyword-only; ``seed``, ``hash``, ``num_hashes``, ``capacity``,
``fpr`` are the names. Deprecations go through :mod:`bloomkit._deprecation`.
"""

from __future__ import annotations

from typing import Any, ClassVar, Protocol, runtime_checkable

import numpy as np

__all__ = ["LookupTable", "MembershipFilter", "SimilarityFilter", "Structure"]


@runtime_checkable
class Structure(Protocol):
    """What every persistable bloomkit structure provides."""

    exact_len: ClassVar[bool]

    @property
    def size_in_bits(self) -> int: ...

    def predicted_fpr(self) -> float: ...

    def info(self) -> dict[str, Any]: ...

    def to_bytes(self) -> bytes: ...

    @classmethod
    def from_bytes(cls, data: bytes) -> Any: ...

    def save(self, path: Any) -> None: ...

    @classmethod
    def load(cls, path: Any) -> Any: ...

    def copy(self) -> Any: ...

    def __len__(self) -> int: ...


@runtime_checkable
class MembershipFilter(Structure, Protocol):
    """Approximate sets: no false negatives, false positives at ``predicted_fpr()``."""

    @property
    def key_types(self) -> tuple[str, ...]: ...

    def add(self, key: Any) -> None: ...

    def add_many(self, keys: Any) -> None: ...

    def __contains__(self, key: Any) -> bool: ...

    def contains_many(self, keys: Any) -> np.ndarray: ...

    def update(self, keys: Any) -> None: ...

    def clear(self) -> None: ...

    def union(self, other: Any) -> Any: ...

    def __or__(self, other: Any) -> Any: ...


@runtime_checkable
class LookupTable(Structure, Protocol):
    """Approximate maps key -> value: stored keys give their value, absent keys ``default``
    except at rate ``predicted_fpr()``."""

    @property
    def key_types(self) -> tuple[str, ...]: ...

    def get(self, key: Any, default: int = 0) -> int: ...

    def get_many(self, keys: Any, default: int = 0) -> np.ndarray: ...

    def set(self, key: Any, value: int) -> None: ...

    def __getitem__(self, key: Any) -> int: ...

    def __contains__(self, key: Any) -> bool: ...


@runtime_checkable
class SimilarityFilter(Structure, Protocol):
    """Approximate "is q near some point of the set" at distance levels 0, 1, ..."""

    def add(self, point: Any) -> None: ...

    def add_many(self, points: Any) -> None: ...

    def query(self, point: Any, level: int = 0) -> bool: ...

    def query_many(self, points: Any, level: int = 0) -> np.ndarray: ...

    def clear(self) -> None: ...
