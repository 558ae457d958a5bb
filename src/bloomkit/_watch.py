"""The two :class:`~bloomkit.errors.BloomkitWarning` checks of the membership filters.

:class:`FilterWatch` is mixed into :class:`~bloomkit.BloomFilter` (and its subclasses),
:class:`~bloomkit.SplitBlockBloomFilter` and :class:`~bloomkit.ScalableBloomFilter`:

* **Past the design.** Every ``budget`` adds, :meth:`FilterWatch._design_check` counts the set
  bits; once they exceed the fill expected at ``capacity`` keys by more than three standard
  deviations (``info()["overfilled"]``, the same test) it warns, once per filter. The budget
  is the number of adds that cannot cross that line (each add sets at most ``k`` bits), but at
  least ``capacity / 64``: a check costs O(m / 64) and happens at most 64 times per
  ``capacity`` adds (about 0.15 bit-counting words per add at 10 bits per key), so the
  warning comes at most ``capacity / 64`` adds after the line was crossed. The compiled
  ``add`` (``_speedups.c``) keeps its own countdown and calls ``_design_check`` when it runs
  out; the Python paths call :meth:`FilterWatch._count_adds`.
* **A key type the filter never held.** A query whose key has a type the filter holds none of
  (``"1"`` or ``1.0`` asked of a filter of ``int`` keys) warns, once per filter and type
  (:meth:`FilterWatch._foreign_key`; the compiled ``in`` calls it only for such keys, so the
  common query pays nothing). Not for an empty filter, nor for one whose key types are
  "unknown" (received over the folding wire format, which does not carry them).

``warnings.simplefilter("error", bloomkit.BloomkitWarning)`` makes both errors (raised every
time: the state that silences repeats is set only when a warning was shown).

Thread safety: the countdowns are plain integers updated without a lock; concurrent adds may
lose a decrement, which only moves the next check a few adds later (the check itself counts
the bits, so the verdict is never wrong).
"""

from __future__ import annotations

import warnings
from typing import Any

from .errors import BloomkitWarning

__all__ = ["NEVER", "FilterWatch"]

NEVER = 1 << 62
"""A budget that never runs out: no design to check, or the warning was given."""

_INT_TAGS = (1 << 4) | (1 << 5)  # TAG_INT, TAG_BIGINT: both are "int"


class FilterWatch:
    """Overfill and key-type warnings (see the module docstring). A class using it provides
    ``capacity``, ``_set_count()``, ``_design_limit()`` and ``_key_mask``."""

    _budget: int = 0  # adds left before the next _design_check() on the Python paths
    _warned: int = 0  # bit 0: overfill warned; bit t: keys of tag t warned

    _key_mask: int

    def _set_count(self) -> int:  # pragma: no cover - provided by the class
        raise NotImplementedError

    def _design_limit(self) -> tuple[int, int] | None:
        """(most set bits consistent with ``capacity`` keys, most bits one add sets), or None
        when the filter has no design (built from its size alone)."""
        raise NotImplementedError  # pragma: no cover - provided by the class

    def _design_check(self, depth: int = 1) -> int:
        """Warn once if the fill shows more keys than ``capacity``; the number of adds until
        the next check. ``depth``: frames from the caller's code to here (1: called by the
        compiled ``add``, which is no Python frame). Complexity: O(m / 64)."""
        if self._warned & 1:
            return NEVER
        limit = self._design_limit()
        if limit is None:
            return NEVER
        most, per_add = limit
        have = self._set_count()
        if have > most:
            self._budget = 0  # raised as an error: every later add checks (and raises) again
            fpr = getattr(self, "fpr", None)
            rate = self.predicted_fpr()  # type: ignore[attr-defined]
            warnings.warn(
                f"this {type(self).__name__} now holds more keys than its capacity ({getattr(self, 'capacity', None)}): "
                f"its predicted false positive rate is {rate:.3g}"
                + (f", above the {fpr} it was built for" if fpr is not None else "")
                + "; build a larger one (or a ScalableBloomFilter, which grows)",
                BloomkitWarning, stacklevel=depth + 1)
            self._warned |= 1
            return NEVER
        cap = getattr(self, "capacity", None) or 0
        return max((most - have) // per_add + 1, cap // 64, 1)

    def _count_adds(self, n: int, depth: int = 1) -> None:
        """``n`` keys were added on a Python path: check the design when the budget runs out."""
        left = self._budget - n
        if left <= 0:
            left = self._design_check(depth + 1)
        self._budget = left

    def _foreign_key(self, key: Any, tag: int, depth: int = 1) -> None:
        """A query's key has type ``tag``, which this filter may never have held: warn (once
        per filter and type) if it holds keys and none of that type."""
        mask = self._key_mask
        if not mask or mask & 1 or mask >> tag & 1 or (1 << tag) & _INT_TAGS and mask & _INT_TAGS:
            return
        if self._warned >> tag & 1:
            return
        from ._engine.hashing import key_type_names

        held = key_type_names(mask)
        got = key_type_names(1 << tag)[0]
        what = f"the {got} key {_short(key)} is never one of them" if key is not None else \
            f"{got} keys are never among them"
        to = held[0] if len(held) == 1 else "one of those types"
        warnings.warn(
            f"this {type(self).__name__} holds {', '.join(held)} keys; {what} (keys of different types never "
            f"match: 1, 1.0 and '1' are three keys): convert the query keys to {to}",
            BloomkitWarning, stacklevel=depth + 1)
        self._warned |= 1 << tag

    def _foreign_keys(self, tags: int, depth: int = 1) -> None:
        """A batch query of keys of the types in the mask ``tags`` (:meth:`_foreign_key`)."""
        mask = self._key_mask
        if not mask or not tags & ~mask:
            return
        for t in range(1, 8):
            if tags >> t & 1:
                self._foreign_key(None, t, depth + 1)


def _short(key: Any) -> str:
    text = repr(key)
    return text if len(text) <= 40 else text[:37] + "..."
