"""Deprecations, all through this one module: every deprecated name says the release that
announced it, and is removed in a later release.

bloomkit 0.1.0 was never released, so nothing is deprecated today; the names of the
pre-release drafts (``size_in_bits()`` as a method, ``hash_function=``, ``nbytes``, the
similarity filters' ``x`` / ``X`` / ``q`` / ``Q``, positional options, ``update(key, value)`` on
lookup tables, format-1 files) were removed before anyone could depend on them.

>>> import warnings
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     warn_deprecated("f(x=)", "f(point=)", since="0.2.0")
>>> print(caught[0].message)
f(x=) is deprecated since bloomkit 0.2.0 and will be removed in a later release; use f(point=) instead.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from typing import Any

__all__ = ["deprecated_alias", "warn_deprecated"]

_VERSION = re.compile(r"\d+\.\d+\.\d+")


def warn_deprecated(old: str, new: str, *, since: str, stacklevel: int = 3) -> None:
    """Warn (DeprecationWarning) that ``old``, deprecated in release ``since``, is to be
    replaced by ``new``."""
    if not _VERSION.fullmatch(since):
        raise ValueError(f"'since' must be a release number such as '0.2.0'. Got {since!r} instead.")
    warnings.warn(f"{old} is deprecated since bloomkit {since} and will be removed in a later release; "
                  f"use {new} instead.", DeprecationWarning, stacklevel=stacklevel)


def deprecated_alias(new_name: str, old_name: str, *, since: str) -> Callable[..., Any]:
    """A method ``old_name`` that warns and calls ``new_name``:
    ``old = deprecated_alias("new", "old", since="0.2.0")`` in a class body."""

    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        warn_deprecated(f"{type(self).__name__}.{old_name}", f"{type(self).__name__}.{new_name}", since=since)
        return getattr(self, new_name)(*args, **kwargs)

    method.__name__ = old_name
    method.__doc__ = f"Deprecated (since {since}) alias of :meth:`{new_name}`."
    return method
