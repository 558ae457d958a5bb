"""The set algebra of the word-backed membership filters, written once.

:class:`WordSetAlgebra` gives a filter whose state is an array of uint64 words of bits (plus
the key types it holds, ``_key_mask``) Python's set protocol: ``|``, ``&``, ``|=``, ``&=``,
``union``, ``intersection``, ``intersection_update``, ``update`` (keys or filters),
``issubset`` / ``issuperset`` and the comparisons, ``==``, ``copy``, ``clear``, ``bool``, with
one compatibility check (same class, same parameters) before every binary operation. The
registry marks these filters with the capability ``"set-algebra"`` (tests/test_membership.py
runs one behaviour suite over all of them).

A filter provides (see :class:`bloomkit.bloom.BloomFilter`, :class:`bloomkit.splitblock.SplitBlockBloomFilter`):

* ``_COMPAT_FIELDS`` and ``_compat_key()``: the parameters two filters must share, named;
* ``_store`` / ``_set_storage(store)``: its storage object, and how a filter installs one;
* ``_word_array()`` / ``_store_from_words(words)``: the words of its bits, and a storage object
  over new words; ``_copy_store()``, ``_clear_store()``, ``_same_store(other)``, ``_set_count()``.

A filter whose storage is not bits (the counting filters' counters) overrides the operations
that combine words (``union``, ``intersection``, ``|=``, ``&=``, ``issubset``).

Thread safety: ``|=`` ORs words in a kernel that keeps the GIL (concurrent adds of other threads
never lose a bit); operations that replace the storage take the filter's lock.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Self

import numpy as np

from ._engine.lazy import kernels as K
from ._engine.storage import aligned_copy
from ._mapped import plain_type
from .errors import IncompatibleFiltersError

__all__ = ["SetUpdate", "WordSetAlgebra"]


class SetUpdate:
    """Mixin: ``update(*others)`` with ``set.update`` semantics, for every filter with ``|=``
    and ``add_many`` (the word-backed filters, ParallelBloomFilter): a filter argument is merged
    (``|=``, which refuses a filter of another kind or other parameters), anything else is a
    batch of keys."""

    if TYPE_CHECKING:
        def add_many(self, keys: Any) -> None: ...
        def __ior__(self, other: Any) -> Self: ...

    def update(self, *others: Any) -> None:
        """Insert the keys of every batch argument, or merge every filter argument (``|=``, a
        union): ``set.update`` semantics. Complexity: per batch that of ``add_many``, per
        filter that of ``|=``."""
        for other in others:
            if isinstance(other, SetUpdate):
                self |= other
            else:
                self.add_many(other)


class WordSetAlgebra(SetUpdate):
    """Mixin: the set protocol over words of bits (module docstring)."""

    _COMPAT_FIELDS: ClassVar[str] = ""
    _key_mask: int

    if TYPE_CHECKING:  # provided by the filter (declared here for the type checker only)
        _store: Any

        def _compat_key(self) -> tuple[Any, ...]: ...
        def _set_storage(self, store: Any) -> None: ...
        def _word_array(self) -> np.ndarray: ...
        def _store_from_words(self, words: np.ndarray) -> Any: ...
        def _copy_store(self) -> Any: ...
        def _clear_store(self) -> None: ...
        def _same_store(self, other: Any) -> bool: ...
        def _set_count(self) -> int: ...
        def add_many(self, keys: Any) -> None: ...
        def _note_keys(self, mask: int) -> None: ...

    # -- the algebra ----------------------------------------------------------------------------
    def _compatible(self, other: Any, op: str) -> None:
        """IncompatibleFiltersError unless ``other`` is a filter of this class with the same
        parameters (``_COMPAT_FIELDS``)."""
        if plain_type(other) is not plain_type(self):
            raise IncompatibleFiltersError(f"cannot {op} a {type(self).__name__} with a {type(other).__name__}")
        mine, theirs = self._compat_key(), other._compat_key()
        if mine != theirs:
            raise IncompatibleFiltersError(
                f"cannot {op} filters with different {self._COMPAT_FIELDS}: {mine} and {theirs}")

    def _like(self, store: Any, key_mask: int | None = None) -> Self:
        """A filter with this one's parameters over ``store`` (shared, not copied)."""
        cls = plain_type(self)
        out: Self = cls.__new__(cls)
        out.__dict__.update({k: v for k, v in self.__dict__.items() if k not in ("_bk_lock", "_mapping")})
        out._set_storage(store)
        if key_mask is not None:
            out._key_mask = key_mask
        return out

    def _combined(self, other: Any, ufunc: Any) -> Any:
        """The storage over ``ufunc`` (OR / AND) of both filters' words, in new aligned words."""
        a = self._word_array()
        return self._store_from_words(ufunc(a, other._word_array(), out=aligned_copy(a)))

    def union(self, other: Self) -> Self:
        """Filter of the union of both sets (bitwise OR). Complexity: O(m / 64)."""
        self._compatible(other, "union")
        return self._like(self._combined(other, np.bitwise_or), self._key_mask | other._key_mask)

    def intersection(self, other: Self) -> Self:
        """Bitwise AND: holds every key of both sets (its rate is at least that of either).

        Complexity: O(m / 64)."""
        self._compatible(other, "intersect")
        return self._like(self._combined(other, np.bitwise_and), self._key_mask & other._key_mask)

    def __or__(self, other: Self) -> Self:
        return self.union(other)

    def __and__(self, other: Self) -> Self:
        return self.intersection(other)

    def __ior__(self, other: Self) -> Self:
        self._compatible(other, "union")
        K.or_into(self._word_array(), other._word_array())
        self._note_keys(other._key_mask)
        return self

    def __iand__(self, other: Self) -> Self:
        self._compatible(other, "intersect")
        words = self._word_array()
        np.bitwise_and(words, other._word_array(), out=words)
        return self

    def intersection_update(self, other: Self) -> None:
        """``self &= other``."""
        self &= other

    def issubset(self, other: Self) -> bool:
        """True if every set bit of this filter is set in ``other`` (BF(S1) subset of BF(S2)).

        Complexity: O(m / 64)."""
        self._compatible(other, "compare")
        a = self._word_array()
        return bool(np.array_equal(a & other._word_array(), a))

    def issuperset(self, other: Self) -> bool:
        """``other.issubset(self)``."""
        self._compatible(other, "compare")
        return other.issubset(self)

    def __le__(self, other: Self) -> bool:
        return self.issubset(other)

    def __ge__(self, other: Self) -> bool:
        return self.issuperset(other)

    def __lt__(self, other: Self) -> bool:
        return self.issubset(other) and self != other

    def __gt__(self, other: Self) -> bool:
        return self.issuperset(other) and self != other

    def __eq__(self, other: object) -> bool:
        """Same parameters and the same bits (key types are not compared)."""
        if plain_type(other) is not plain_type(self):
            return NotImplemented
        return bool(self._compat_key() == other._compat_key() and self._same_store(other))  # type: ignore[attr-defined]

    __hash__ = None  # type: ignore[assignment]

    def __bool__(self) -> bool:
        """False for a filter with nothing set."""
        return self._set_count() > 0

    def copy(self) -> Self:
        """An independent copy. Complexity: O(m / 64) words."""
        return self._like(self._copy_store())

    def clear(self) -> None:
        """Remove every key (all bits zero, key types forgotten); parameters stay. Complexity: O(m / 64)."""
        self._clear_store()
        self._key_mask = 0
