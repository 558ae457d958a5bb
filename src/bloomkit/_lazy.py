"""Deferred import of the numba kernels, so that ``import bloomkit`` does not import numba.

``from ._lazy import kernels as K`` gives an object whose first attribute access imports
:mod:`bloomkit._kernels` and copies its namespace in; later accesses are plain attribute
lookups.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any


class _LazyModule:
    def __init__(self, name: str) -> None:
        self.__dict__["_lazy_name"] = name

    def __getattr__(self, attr: str) -> Any:
        mod = importlib.import_module(self.__dict__["_lazy_name"])
        self.__dict__.update({k: v for k, v in vars(mod).items() if not k.startswith("__")})
        return getattr(mod, attr)


if TYPE_CHECKING:  # type checkers see the module itself, so kernel calls are checked
    from . import _kernels as kernels
    from . import _splitblock_kernels as splitblock_kernels
else:
    kernels = _LazyModule("bloomkit._kernels")
    splitblock_kernels = _LazyModule("bloomkit._splitblock_kernels")

__all__ = ["kernels", "splitblock_kernels"]
