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
                           "tuple"; "unknown" for files of format 1)
=========================  ===================================================================

Optional parameters are keyword-only; ``seed``, ``hash``, ``num_hashes``, ``capacity``,
``fpr`` are the names. Old names keep working for one release with a DeprecationWarning
(:func:`deprecated_alias`, :func:`renamed_kwargs`, :class:`CallableInt`).
"""

from __future__ import annotations

import functools
import inspect
import warnings
from collections.abc import Callable
from typing import Any, ClassVar, Protocol, Self, TypeVar, runtime_checkable

import numpy as np

__all__ = [
    "CallableInt",
    "LookupTable",
    "MembershipFilter",
    "SimilarityFilter",
    "Structure",
    "deprecated_alias",
    "keyword_only",
    "renamed_kwargs",
    "warn_deprecated",
]


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


# ---------------------------------------------------------------------------------------------
# deprecations: old names work for one release, with a DeprecationWarning naming the new one

F = TypeVar("F", bound=Callable[..., Any])


def warn_deprecated(old: str, new: str, stacklevel: int = 3) -> None:
    """Warn that ``old`` is deprecated in favour of ``new`` (removed in the next release)."""
    warnings.warn(f"{old} is deprecated and will be removed in the next release; use {new} instead.",
                  DeprecationWarning, stacklevel=stacklevel)


def deprecated_alias(new_name: str, old_name: str) -> Callable[..., Any]:
    """A method ``old_name`` that warns and calls ``new_name``: ``old = deprecated_alias("new", "old")``."""

    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        warn_deprecated(f"{type(self).__name__}.{old_name}", f"{type(self).__name__}.{new_name}")
        return getattr(self, new_name)(*args, **kwargs)

    method.__name__ = old_name
    method.__doc__ = f"Deprecated alias of :meth:`{new_name}`."
    return method


def renamed_kwargs(**renames: str) -> Callable[[F], F]:
    """Accept old keyword names (``@renamed_kwargs(hash_function="hash")``) with a warning."""

    def deco(fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            for old, new in renames.items():
                if old in kwargs:
                    if new in kwargs:
                        raise TypeError(f"{fn.__qualname__}() got both {old!r} (deprecated) and {new!r}")
                    warn_deprecated(f"the {old!r} argument of {fn.__qualname__}", f"{new!r}")
                    kwargs[new] = kwargs.pop(old)
            return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    return deco


def keyword_only(positional: int) -> Callable[[F], F]:
    """Parameters after the first ``positional`` (``self`` included) are keyword-only; passing
    them by position still works for one release, with a DeprecationWarning (after
    scikit-learn's ``_deprecate_positional_args``). The wrapped function declares them
    keyword-only (after ``*``)."""

    def deco(fn: F) -> F:
        sig = inspect.signature(fn)
        names = [p.name for p in sig.parameters.values() if p.kind == p.KEYWORD_ONLY]

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            extra = len(args) - positional
            if extra > 0:
                moved = names[:extra]
                if extra > len(names):
                    raise TypeError(f"{fn.__qualname__}() takes {positional} positional arguments")
                warn_deprecated(f"passing {', '.join(map(repr, moved))} of {fn.__qualname__} by position",
                                "keyword arguments")
                for n, v in zip(moved, args[positional:], strict=True):
                    if n in kwargs:
                        raise TypeError(f"{fn.__qualname__}() got multiple values for {n!r}")
                    kwargs[n] = v
                args = args[:positional]
            return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    return deco


class CallableInt(int):
    """An int that can still be called once like the method it replaces (``f.size_in_bits()``,
    with a DeprecationWarning): lets a method become an int property for one release."""

    _old: str = "size_in_bits()"

    def __call__(self) -> int:
        warn_deprecated(f"calling {self._old}", self._old.rstrip("()") + " (a property)")
        return int(self)

    def __reduce__(self) -> Any:
        return (int, (int(self),))

    @classmethod
    def of(cls, value: int, old: str = "size_in_bits()") -> Self:
        out = cls(value)
        out._old = old
        return out
