"""Deferred imports: the numba kernels (so that ``import bloomkit`` does not import numba) and
the optional dependencies of the extras.

``from bloomkit._engine.lazy import kernels as K`` gives an object whose first attribute access
imports :mod:`bloomkit._engine.kernels` and copies its namespace in; later accesses are plain
attribute lookups. :func:`require` imports an optional dependency or says which extra installs it.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import TYPE_CHECKING, Any


class _LazyModule:
    def __init__(self, name: str) -> None:
        self.__dict__["_lazy_name"] = name

    def __getattr__(self, attr: str) -> Any:
        mod = importlib.import_module(self.__dict__["_lazy_name"])
        self.__dict__.update({k: v for k, v in vars(mod).items() if not k.startswith("__")})
        return getattr(mod, attr)


if TYPE_CHECKING:  # type checkers see the module itself, so kernel calls are checked
    from ..splitblock import _kernels as splitblock_kernels
    from . import counters as counters
    from . import kernels as kernels
    from . import probes as probes
else:
    counters = _LazyModule("bloomkit._engine.counters")
    kernels = _LazyModule("bloomkit._engine.kernels")
    probes = _LazyModule("bloomkit._engine.probes")
    splitblock_kernels = _LazyModule("bloomkit.splitblock._kernels")

__all__ = ["counters", "extra_hint", "kernels", "probes", "require", "splitblock_kernels"]


def extra_hint(extra: str) -> str:
    """How to install an extra: from a checkout (bloomkit is not on a package index yet)."""
    return f"pip install -e '.[{extra}]' in a checkout of bloomkit (pip install 'bloomkit[{extra}]' from an index)"


def require(module: str, extra: str, feature: str) -> ModuleType:
    """Import ``module``, an optional dependency of ``feature``; ModuleNotFoundError naming the
    extra that installs it when it is missing.

    >>> require("json", "test", "this example").__name__
    'json'
    """
    try:
        return importlib.import_module(module)
    except ImportError as e:
        top = module.split(".")[0]
        raise ModuleNotFoundError(f"{feature} needs {top!r}, part of bloomkit's {extra!r} extra: {extra_hint(extra)}.",
                                  name=top) from e
