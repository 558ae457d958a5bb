"""Which path single keys and Python lists take: the compiled boundary or numba alone.

``bloomkit._speedups`` (``src/bloomkit/_speedups.c``, optional at install) hashes Python
objects and sets / tests the bits of one key in one C call; the numba kernels are the
bit-identical fallback. This module loads the extension unless ``BLOOMKIT_NO_EXTENSION=1``
(read once, at import) and says which path is active (:func:`hash_path`, reported by
``bloomkit.info()`` and ``python -m bloomkit --version``).

:class:`FilterCore` is the base class of the filters with compiled single-key methods
(``BloomFilter``, ``CountingBloomFilter``, ``SplitBlockBloomFilter``): the extension's type
when it is active, else an empty class. A filter class defines its Python ``_py_add`` /
``_py_contains``, and ``add`` / ``__contains__`` only when :data:`COMPILED` is False; with the
extension, ``FilterCore.add`` and ``in`` hash the key in C and set / test the bits of the
storage bound by the class's ``_core_rebind()`` (which calls ``_core_bind``), or call
``_py_add`` / ``_py_contains`` for storage bound as :data:`KIND_PYTHON`.

:class:`ItemCore` does the same for ``ParallelBloomFilter`` items (a tuple of p values:
hashed, counters and verification table updated under the filter's lock in one C call; other
item forms call ``_py_add`` / ``_py_contains``), bound by ``_core_rebind()`` through
``_item_bind``. :data:`PointTest` is the point query of one attribute of a range filter.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import InvalidParameterError

__all__ = [
    "COMPILED", "ENV_VAR", "KIND_BITS", "KIND_BITS_DH", "KIND_COUNTERS", "KIND_COUNTERS_DH", "KIND_ITEMS", "KIND_PYTHON", "KIND_SPLIT", "FilterCore",
    "ItemCore", "PointTest", "check_storage", "extension", "hash_path",
]

ENV_VAR = "BLOOMKIT_NO_EXTENSION"

_why_not: str | None = None
_ext: ModuleType | None = None
if os.environ.get(ENV_VAR, "") not in ("", "0"):
    _why_not = f"{ENV_VAR}={os.environ[ENV_VAR]}"
else:
    try:
        _ext = importlib.import_module("bloomkit._speedups")
    except ImportError as e:  # built without a compiler, or a foreign build
        _why_not = f"not built ({e})"

COMPILED: bool = _ext is not None
"""True when the compiled boundary is active."""

KIND_PYTHON, KIND_BITS, KIND_COUNTERS, KIND_SPLIT, KIND_ITEMS, KIND_BITS_DH, KIND_COUNTERS_DH = 1, 2, 3, 4, 5, 6, 7
"""Storage kinds of ``FilterCore._core_bind`` and ``ItemCore._item_bind`` (the extension's constants)."""

PointTest: Any = None if _ext is None else _ext.PointTest
"""The extension's point query of one attribute of a range filter
(:mod:`bloomkit.ranges.points`), or None on the numba path."""


def check_storage(owner: str, arr: Any, dtype: np.dtype[Any], length: int, what: str) -> None:
    """InvalidParameterError unless ``arr`` is a writeable C-contiguous 1-D array of ``length``
    items of ``dtype``: what the single-key kernels (by address) and the compiled boundary may
    read and write without going out of bounds."""
    ok = (isinstance(arr, np.ndarray) and arr.dtype == dtype and arr.ndim == 1
          and arr.flags.c_contiguous and arr.flags.writeable and len(arr) == length)
    if not ok:
        raise InvalidParameterError(
            f"The storage of this {owner} must be a writeable C-contiguous {dtype} array of {length} "
            f"{what}. Got {getattr(arr, 'dtype', type(arr))!r} {getattr(arr, 'shape', '')} instead."
        )


def extension() -> Any:
    """The loaded ``bloomkit._speedups`` module, or None on the numba path."""
    return _ext


def hash_path() -> str:
    """``"c-extension"`` or ``"numba (<why>)"``: the path single keys and lists take."""
    return "c-extension" if _ext is not None else f"numba ({_why_not})"


if TYPE_CHECKING:

    class FilterCore:
        """What the filters get from the extension's base class (see the module docstring)."""

        _core_kind: int

        def add(self, key: Any) -> None: ...
        def __contains__(self, key: Any) -> bool: ...
        def _core_bind(self, kind: int, store: Any, array: Any, m: int, k: int, seed: int, width: int,
                       slot: str) -> None: ...
        def _core_unbind(self) -> None: ...

    class ItemCore:
        """What ParallelBloomFilter gets from the extension's base class (see the module docstring)."""

        _core_kind: int

        def add(self, item: Any) -> None: ...
        def __contains__(self, item: Any) -> bool: ...
        def _item_bind(self, kind: int, counters: Any, table: Any, p: int, q: int, m: int, width: int,
                       seeds: Any, weights: Any, lock: Any, max_items: int, max_load: float) -> None: ...
        def _core_unbind(self) -> None: ...

elif _ext is not None:
    assert (_ext.KIND_PYTHON, _ext.KIND_BITS, _ext.KIND_COUNTERS, _ext.KIND_SPLIT, _ext.KIND_ITEMS,
            _ext.KIND_BITS_DH, _ext.KIND_COUNTERS_DH) == (KIND_PYTHON, KIND_BITS, KIND_COUNTERS, KIND_SPLIT, KIND_ITEMS,
                                                         KIND_BITS_DH, KIND_COUNTERS_DH)
    FilterCore = _ext.FilterCore
    ItemCore = _ext.ItemCore
else:

    class FilterCore:
        """The numba path's stand-in for the extension's base class (adds nothing)."""

        __slots__ = ()

    class ItemCore:
        """The numba path's stand-in for the extension's base class of ParallelBloomFilter."""

        __slots__ = ()
