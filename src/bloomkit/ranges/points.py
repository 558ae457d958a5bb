"""Point queries, range queries and inserts of plain values, without building a record batch
(document 000).

A point query ``might_contain(attribute, x)`` tests what inserting the single value ``x``
would set (:mod:`bloomkit.ranges.layout`): for a numeric attribute with group size ``d``, ``s``
positions per group and ``r = ceil(k/s) - 1`` (Eq. 13), the ``s`` probe bits of the keys of
groups ``g(x) .. g(x) + r - 1`` and the first ``k - r s`` of group ``g(x) + r``; for a text,
the k probe bits of its key. Keys are ``"name:value"``, ``value`` the scaled first number of
the group.

:class:`PointProbe` answers the plain cases in one compiled call: an ``int`` or a numpy
integer scalar (Integer, Decimal) or a ``float`` or ``numpy.float64`` (Decimal) within the
scope, a ``str`` (Text), with the ``"xxh64"`` hash (numpy scalars, e.g. the values of an array
or a Series, have the record path's answers of the equal Python numbers: tested). The same
values as ``(lo, hi)`` pairs answer ``might_cover`` / ``might_intersect`` (``cover``,
``intersect``) and are inserted (``entry``, then ``fill``). Everything else (other types,
values out of scope, NaN, a float near a rounding tie, ranges of more than :data:`MAX_GROUPS`
groups, ``hash="sha512"``) returns None and is answered, or refused, by the record path, so
answers and error messages are the record path's by construction.

:func:`point_query` gives each attribute its query: with the compiled boundary
(:mod:`bloomkit._engine.boundary`) the extension's ``PointTest``, the same algorithm in one C call
(scaling, the group keys' decimal text, XXH64 and the probes; tested equal), else
:class:`PointProbe` (the scaling in Python, the keys and probes in one numba kernel).
"""

from __future__ import annotations

import functools
from typing import Any, Protocol

import numpy as np

from .._engine.boundary import PointTest
from .._engine.hashing import TAG_STR, hash64, tag_seed
from . import _kernels as K
from .schema import Decimal, Numeric, Text

__all__ = ["MAX_GROUPS", "NUMPY_FLOATS", "NUMPY_INTS", "PointProbe", "PointQuery", "point_query"]

NUMPY_INTS: tuple[type, ...] = tuple({np.dtype(c).type for c in "bhilqBHILQ"})
"""The numpy integer scalar types a point query takes as an ``int``."""
NUMPY_FLOATS: tuple[type, ...] = (np.float64,)
"""The numpy float scalar types (subclasses of ``float``) a point query takes as a ``float``."""
MAX_GROUPS = 1 << 20
"""Ranges of more groups than this take the record path (the compiled ``PointTest`` the same)."""


def _encodable(text: str) -> bool:
    """Whether a str has UTF-8 (no lone surrogates, which the record path refuses)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class PointQuery(Protocol):
    """What a layout holds for each attribute: ``test(words, value, where)`` is whether every
    bit the single value sets is set in ``words``; ``cover(words, lo, hi)`` and
    ``intersect(words, lo, hi)`` answer ``might_cover`` / ``might_intersect`` of a plain
    (lo, hi) pair; ``entry(value)`` / ``fill(words, entry)`` insert a plain record value in two
    steps (every value checked before any bit is set). Each returns None for what the record
    path must take."""

    def test(self, words: np.ndarray, value: Any, where: str) -> bool | None: ...
    def cover(self, words: np.ndarray, lo: Any, hi: Any) -> bool | None: ...
    def intersect(self, words: np.ndarray, lo: Any, hi: Any) -> bool | None: ...
    def entry(self, value: Any) -> Any: ...
    def fill(self, words: np.ndarray, entry: Any) -> None: ...


class PointProbe:
    """The point query of one attribute of an ``"xxh64"`` layout (see the module docstring).

    Parameters
    ----------
    attr : Attribute
        The attribute.
    k, d, s, r, last, base : int
        Its plan (:class:`bloomkit.ranges.layout.Plan`).
    num_bits, seed : int
        m and the layout's seed.
    """

    __slots__ = ("attr", "base", "d", "decimal", "hi", "k", "last", "lo", "m", "nkeys", "prefix", "prefix_bytes",
                 "s", "seed", "str_seed", "unit")

    def __init__(self, attr: Any, k: int, d: int, s: int, r: int, last: int, base: int, num_bits: int,
                 seed: int) -> None:
        self.attr = attr
        self.k, self.d, self.s, self.last, self.base = k, d, s, last, base
        self.nkeys = r + 1
        self.m = num_bits
        self.seed = seed
        self.prefix = attr.name + ":"
        self.prefix_bytes = np.frombuffer(self.prefix.encode("utf-8"), np.uint8).copy()
        self.str_seed = np.uint64(tag_seed(seed, TAG_STR))  # the seed of str keys (hash64 of "name:value")
        self.decimal = isinstance(attr, Decimal)
        self.unit = 10**attr.places if isinstance(attr, Decimal) else 1
        self.lo = attr.scaled_lo if isinstance(attr, Numeric) else 0
        self.hi = attr.scaled_hi if isinstance(attr, Numeric) else 0

    def test(self, words: np.ndarray, value: Any, where: str) -> bool | None:
        """Whether every bit the single value ``value`` sets is set in ``words``; None for a
        value the record path must take (``where`` names the record in the messages of a
        text's check, as the record path does).

        Complexity: O(k) probes, (r + 1) key hashes.

        C twin: ``PointTest.test`` of _speedups.c, section "PointTest".
        """
        tp = type(value)
        if isinstance(self.attr, Text):
            if tp is not str:
                return None
            key = self.prefix + self.attr.check_text(value, where)
            found: bool = K.key_in_words(words, self.m, np.uint64(hash64(key, self.seed)), self.k)
            return found
        a = self._scaled(value)
        if a is None:
            return None
        return self._cover(words, a, a)

    def _scaled(self, value: Any) -> int | None:
        """The scaled value of a plain number within the scope (an int or a numpy integer; a
        float or numpy float64 of a Decimal), else None."""
        tp = type(value)
        if tp is int or tp in NUMPY_INTS:
            a: int | None = int(value) * self.unit
        elif (tp is float or tp in NUMPY_FLOATS) and self.decimal:
            a = self.attr.scale_float(float(value))
        else:
            return None
        return a if a is not None and self.lo <= a <= self.hi else None

    def _interval(self, lo: Any, hi: Any) -> tuple[int, int] | None:
        """The scaled interval of plain numbers lo <= hi in the scope of a numeric attribute,
        of at most :data:`MAX_GROUPS` groups, else None."""
        if isinstance(self.attr, Text):
            return None
        a, b = self._scaled(lo), self._scaled(hi)
        if a is None or b is None or a > b or (b - self.base) // self.d - (a - self.base) // self.d >= MAX_GROUPS:
            return None
        return a, b

    def _keys(self, a: int, b: int) -> tuple[np.ndarray, np.ndarray]:
        """(h1, positions) of the keys the entry [a, b] sets: groups g(a) .. g(b) + r, s
        positions each, the last one k - r s."""
        ga, gb = (a - self.base) // self.d, (b - self.base) // self.d
        n = gb - ga + self.nkeys
        h = K.int_key_hashes(self.prefix_bytes, self.base + (ga + np.arange(n, dtype=np.int64)) * self.d,
                             self.str_seed, K.DIGIT_PAIRS)
        counts = np.full(n, self.s, dtype=np.int64)
        counts[-1] = self.last
        return h, counts

    def entry(self, value: Any) -> Any:
        """The entry a record's plain value makes (a text's str; the scaled ``(a, b)`` of a
        number or of a ``(lo, hi)`` / ``[lo, hi]`` pair), or None for the record path.

        Complexity: O(1) (O(len) for a text).
        """
        if isinstance(self.attr, Text):
            if type(value) is not str or not (value.isascii() or _encodable(value)):
                return None
            return value
        if type(value) in (tuple, list):
            return self._interval(*value) if len(value) == 2 else None
        return self._interval(value, value)

    def fill(self, words: np.ndarray, entry: Any) -> None:
        """Set the bits of an :meth:`entry` in ``words`` (one kernel call).

        Complexity: O(((b - a)/d + r) s) positions, or k for a text.
        """
        if isinstance(self.attr, Text):
            h = np.array([hash64(self.prefix + entry, self.seed)], dtype=np.uint64)
            counts = np.array([self.k], dtype=np.int64)
        else:
            h, counts = self._keys(*entry)
        K.set_bits_counts(words, h, counts, np.uint64(self.m))

    def _cover(self, words: np.ndarray, a: int, b: int) -> bool:
        """Every position the entry [a, b] sets is set: the keys of groups g(a) .. g(b) + r,
        s positions each, the last one k - r s (the record path's keys)."""
        ga, gb = (a - self.base) // self.d, (b - self.base) // self.d
        found: bool = K.point_in_words(words, self.m, self.prefix_bytes, self.base + ga * self.d, self.d,
                                       gb - ga + self.nkeys, self.s, self.last, self.str_seed, K.DIGIT_PAIRS)
        return found

    def cover(self, words: np.ndarray, lo: Any, hi: Any) -> bool | None:
        """Might every value of [lo, hi] be in the set (``might_cover``); None for the record
        path (not plain numbers, lo > hi, out of scope, a text attribute).

        Complexity: O(((hi - lo)/d + r) s) probes in one kernel.
        """
        ab = self._interval(lo, hi)
        return None if ab is None else self._cover(words, *ab)

    def intersect(self, words: np.ndarray, lo: Any, hi: Any) -> bool | None:
        """None: on the numba path ``might_intersect`` tests the groups of the range in its
        vectorised form (the extension's ``PointTest.intersect`` answers in one call)."""
        return None


@functools.lru_cache(maxsize=1024)
def point_query(attr: Any, k: int, d: int, s: int, r: int, last: int, base: int, num_bits: int,
                seed: int) -> PointQuery:
    """The point query of one attribute of an ``"xxh64"`` layout (parameters as
    :class:`PointProbe`): the extension's ``PointTest`` when the compiled boundary is active
    and the plan's values fit its 64-bit arithmetic, else a :class:`PointProbe`.

    Both are immutable (the words are an argument of every call), so filters of equal layouts
    share them: cached by the (hashable, frozen) attribute and the plan, a new filter of a
    known layout costs no point construction (document 000 builds one filter per profile)."""
    probe = PointProbe(attr, k, d, s, r, last, base, num_bits, seed)
    if PointTest is None:
        return probe
    text = isinstance(attr, Text)
    try:
        compiled: PointQuery = PointTest(
            text=text, decimal=probe.decimal, prefix=probe.prefix_bytes.tobytes(), seed=int(probe.str_seed),
            m=num_bits, k=k, d=1 if text else d, s=s, last=last, nkeys=probe.nkeys, base=base, lo=probe.lo,
            hi=probe.hi, unit=probe.unit, factor=float(probe.unit), int_types=NUMPY_INTS, float_types=NUMPY_FLOATS)
    except (ValueError, OverflowError):  # beyond 64-bit values: the numba path checks them
        return probe
    return compiled
