"""The LookupTable protocol shared by the Geometric and the Bloomier filter.

Each table implements four hooks over *value ids* (integers in [1, 2^V - 1], 0 = found
absent): ``_id_of(key)``, ``_ids_of(keys) -> (ids, probes)``, ``_set_ident(h1, hb, id)``
(overwrite or insert; or overwrite a present key only) and ``_table_bits()``. This
class turns them into the protocol of :class:`bloomkit._protocols.LookupTable`: ``get`` /
``get_many`` / ``[]`` / ``in`` / ``len`` / ``set`` / ``update`` (dict meaning), with values
that are integers, or str labels numbered by the table's :class:`ValueCodec` (saved with it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, NoReturn

import numpy as np

from .._engine.columns import as_keys, sized_items
from .._engine.hashing import (
    HASH_XXH64,
    KeyTypesMixin,
    hash64,
    hash64_tag,
    hash_keys,
    key_type_mask,
)
from .._engine.parallel import hash_batch, key_source
from .._format import ArraySpec, Persistable
from .._validation import Int, param_error, safe_repr
from ..errors import FormatError, InvalidParameterError, UpdateNotSupportedError
from .codec import ValueCodec
from .overflow import alt_seed

__all__ = ["LABEL_ARRAYS", "LookupBase", "padding_clear", "words_for"]

LABEL_ARRAYS = {
    "labels_offsets": ArraySpec("<i8", optional=True, lo=0),
    "labels_data": ArraySpec("|u1", optional=True),
}
"""The saved labels of a table of str values (:meth:`ValueCodec.to_arrays`)."""

_INT64 = Int(-(1 << 63), (1 << 63) - 1)
_UINT64 = Int(0, (1 << 64) - 1)


def words_for(cells: int, bits: int) -> int:
    """Words of a packed array of ``cells`` cells of ``bits`` bits, with its padding word
    (:func:`bloomkit.lookup._kernels.get_cell` reads the word after a cell)."""
    return (cells * bits + 63) // 64 + 1


def padding_clear(words: np.ndarray, used_bits: int) -> bool:
    """True when every bit of ``words`` beyond the first ``used_bits`` is zero."""
    w, b = divmod(used_bits, 64)
    if words[w + 1 :].any():
        return False
    return (int(words[w]) >> b == 0) if b else int(words[w]) == 0



def pairs_of(other: Any, owner: str) -> list[tuple[Any, Any]]:
    """The (key, value) pairs of ``other``, a mapping or a sized collection of pairs (what
    ``update`` takes, ``dict.update`` style); InvalidParameterError naming ``other``."""
    allowed = "a mapping or a collection of (key, value) pairs"
    if isinstance(other, Mapping):
        return list(other.items())
    if isinstance(other, str | bytes):
        raise param_error("other", owner, allowed, other)
    items = [p if isinstance(p, tuple | list) else sized_items(p, "other", owner, "values")
             for p in sized_items(other, "other", owner, "(key, value) pairs")]
    bad = next((i for i, p in enumerate(items) if len(p) != 2), None)
    if bad is not None:
        raise param_error("other", owner, allowed, f"an item of length {len(items[bad])} at position {bad}")
    return [(p[0], p[1]) for p in items]


class LookupBase(KeyTypesMixin, Persistable):
    """``get`` / ``get_many`` / ``[]`` / ``in`` / ``len`` / ``set`` / ``update`` over value ids."""

    exact_len: ClassVar[bool] = True
    _HASH_IDS: ClassVar[tuple[int, ...]] = (HASH_XXH64,)  # the loader refuses files of other hashes
    seed: int
    value_bits: int
    error_bits: int
    fpr: float
    _count: int
    _codec: ValueCodec | None = None

    # -- hooks --------------------------------------------------------------------------------
    def _id_of(self, key: Any) -> int:  # pragma: no cover - overridden
        raise NotImplementedError

    def _ids_of(self, keys: Any) -> tuple[np.ndarray, int]:  # pragma: no cover - overridden
        raise NotImplementedError

    def _set_ident(self, h1: int, hb: int, vid: int) -> None:
        """Store id ``vid`` for the key of identity (h1, hb), overwriting or inserting. The
        caller holds the lock."""
        raise NotImplementedError  # pragma: no cover - overridden

    def _table_bits(self) -> int:  # pragma: no cover - overridden
        raise NotImplementedError

    # -- values -------------------------------------------------------------------------------
    @property
    def codec(self) -> ValueCodec | None:
        """The :class:`ValueCodec` of a table of str values (None for integer values)."""
        return self._codec

    def _owner(self, method: str) -> str:
        return f"{type(self).__name__}.{method}"

    def _value_id(self, value: Any, method: str) -> int:
        """The id of one value: a str label of a label table, or an integer in [1, 2^V - 1]."""
        if self._codec is not None:
            if not isinstance(value, str):
                raise param_error("value", self._owner(method), "a str label (this table stores labels)", value)
            try:
                return self._codec.encode(value)
            except InvalidParameterError as e:
                raise InvalidParameterError(f"The 'value' parameter of {self._owner(method)}: {e}") from None
        hi = (1 << self.value_bits) - 1
        if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer) or not 1 <= int(value) <= hi:
            raise param_error("value", self._owner(method), f"an integer in [1, {hi}] (V = {self.value_bits})", value)
        return int(value)

    def _known(self, vid: int) -> int:
        """``vid``, or 0 when it is not the id of a label of a label table (a false positive of
        a Bloomier table can be any integer below 2^V)."""
        return 0 if self._codec is not None and vid > len(self._codec) else vid

    def _ident(self, key: Any) -> tuple[int, int, int]:
        """(h1, hb, key type tag) of one key."""
        h1, tag = hash64_tag(key, self.seed)
        return h1, hash64(key, alt_seed(self.seed)), tag

    # -- queries ------------------------------------------------------------------------------
    def get(self, key: Any, default: Any = None) -> Any:
        """The value of ``key``, or ``default`` when it is found absent (None: 0 for integer
        values, None for str labels). An absent key gets a value with probability
        ``predicted_fpr()``.

        Complexity: see the table's class docstring (expected O(k / (r p)) probes for the
        Geometric filter, 3 cell reads for the Bloomier filter).
        """
        vid = self._known(self._id_of(key))
        if vid == 0:
            return (0 if self._codec is None else None) if default is None else default
        return vid if self._codec is None else self._codec.decode(vid)

    def get_many(self, keys: Any, default: Any = None, *, return_probes: bool = False) -> Any:
        """The values of a batch of keys, by position; ``default`` where a key is found absent.

        Parameters
        ----------
        keys : list, tuple, numpy, pyarrow, pandas or polars column
            Through :func:`bloomkit._engine.columns.as_keys` (by position, never by label).
        default : int or object, optional
            The answer for absent keys: 0 by default (None for str labels). For integer values
            an integer that fits the result's dtype.
        return_probes : bool
            Also return the total number of cells probed (the experiments' cost measure).

        Returns
        -------
        numpy.ndarray, or (numpy.ndarray, int) with ``return_probes``
            int64 values (uint64 when V = 64), or an object array of str labels.

        Complexity: O(n) hashing plus the table's probes (see the class docstring).
        """
        if not isinstance(return_probes, bool | np.bool_):
            raise InvalidParameterError(f"The 'return_probes' parameter of {self._owner('get_many')} must be True or "
                                        f"False. Got {safe_repr(return_probes)} instead.")
        ids, probes = self._ids_of(as_keys(keys, "keys", self._owner("get_many")))
        out: np.ndarray
        if self._codec is not None:
            out = self._codec.decode_array(np.where(ids > len(self._codec), 0, ids), default)
        else:
            wide = self.value_bits == 64
            out = ids if wide else ids.view(np.int64)
            if default is not None:
                fill = (_UINT64 if wide else _INT64)(default, "default", self._owner("get_many"))
                if fill:
                    out[out == 0] = fill
        return (out, int(probes)) if return_probes else out

    def __getitem__(self, key: Any) -> Any:
        """Value of ``key``; KeyError when it is found absent. Complexity: as :meth:`get`."""
        vid = self._known(self._id_of(key))
        if vid == 0:
            raise KeyError(key)
        return vid if self._codec is None else self._codec.decode(vid)

    def __contains__(self, key: Any) -> bool:
        """True when ``key`` gets a value (false positives at the table's rate)."""
        return self._known(self._id_of(key)) != 0

    def __len__(self) -> int:
        """Number of keys stored (exact: ``exact_len`` is True)."""
        return self._count

    # -- updates ------------------------------------------------------------------------------
    def set(self, key: Any, value: Any) -> None:
        """Store ``value`` for ``key``: overwrite it if the key is present, insert it otherwise.

        Complexity: as one query.
        """
        h1, hb, tag = self._ident(key)
        with self._lock:  # a new label is numbered under the lock too
            self._set_ident(h1, hb, self._value_id(value, "set"))
            self._note_keys(1 << tag)

    def update(self, *args: Any, **kwargs: Any) -> None:
        """Store many (key, value) pairs, ``dict.update`` style: a mapping, an iterable of
        pairs, and/or keyword arguments (str keys). Every key and value is checked before
        anything changes.

        Complexity: O(number of pairs) queries.
        """
        if len(args) > 1:
            raise TypeError(f"update expected at most 1 positional argument, got {len(args)}")
        items = pairs_of(args[0], self._owner("update")) if args else []
        items += list(kwargs.items())
        idents = [self._ident(k) for k, _v in items]
        with self._lock:
            vids = [self._value_id(v, "update") for _k, v in items]
            mask = 0
            for (h1, hb, tag), vid in zip(idents, vids, strict=True):
                self._set_ident(h1, hb, vid)
                mask |= 1 << tag
            self._note_keys(mask)

    # -- sizes and the protocol ---------------------------------------------------------------
    @property
    def size_in_bits(self) -> int:
        """Bits of the table (see :meth:`_table_bits`). Complexity: O(1)."""
        return self._table_bits()

    def bits_per_key(self) -> float:
        """``size_in_bits`` / number of keys (per capacity when empty). Complexity: O(1)."""
        return self._table_bits() / max(1, self._count or getattr(self, "capacity", 1))

    def _info_common(self) -> dict[str, Any]:
        return {
            "structure": self._STRUCTURE, "class": type(self).__name__, "seed": self.seed,
            "value_bits": self.value_bits, "error_bits": self.error_bits, "fpr": self.fpr,
            "count": self._count, "count_is_exact": True, "key_types": list(self.key_types),
            "values": "int" if self._codec is None else "str", "num_labels": None if self._codec is None else len(self._codec),
            "size_in_bits": int(self._table_bits()), "bits_per_key": self.bits_per_key(),
        }

    # -- persistence --------------------------------------------------------------------------
    def _label_arrays(self) -> dict[str, np.ndarray]:
        return {} if self._codec is None else self._codec.to_arrays()

    @staticmethod
    def _read_labels(arrays: dict[str, np.ndarray], value_bits: int, owner: str) -> ValueCodec | None:
        off, data = arrays.get("labels_offsets"), arrays.get("labels_data")
        if (off is None) != (data is None):
            raise FormatError(f"{owner} needs both 'labels_offsets' and 'labels_data', or neither")
        if off is None or data is None:
            return None
        return ValueCodec.from_arrays(off, data, value_bits, owner)

    def _restore_keys(self, params: dict[str, Any]) -> None:
        self._key_mask = key_type_mask(params["key_types"])


class StaticLookup(LookupBase):
    """A table solved once for its keys (Bloomier filter, ribbon retrieval): queries are
    ``_query(h1)`` over the keys' 64-bit hashes, ``_PROBES_PER_KEY`` blocks read per key, and every
    change raises UpdateNotSupportedError saying why (``_FROZEN``) and what to use instead."""

    _PROBES_PER_KEY: ClassVar[int]
    _FROZEN: ClassVar[str]  # why the table cannot change, for the error message

    def _query(self, h1: np.ndarray) -> np.ndarray:  # pragma: no cover - overridden
        raise NotImplementedError

    def _ids_of(self, keys: Any) -> tuple[np.ndarray, int]:
        """Value ids of a batch, on several threads for big batches.

        Complexity: O(n) hashing plus ``_PROBES_PER_KEY`` block reads per key."""
        batch, hash_chunk = key_source(keys, lambda ks: hash_keys(ks, self.seed), self._owner("get_many"))
        _h1, _parts, res = hash_batch(batch, hash_chunk, lambda h, lo, hi: self._query(h[lo:hi]))
        out = res[0] if len(res) == 1 else np.concatenate(res)
        return out, self._PROBES_PER_KEY * len(out)

    def _id_of(self, key: Any) -> int:
        """Value id of one key. Complexity: O(1) block reads."""
        return int(self._query(np.array([hash64(key, self.seed)], dtype=np.uint64))[0])

    def _refuse(self, what: str) -> UpdateNotSupportedError:
        return UpdateNotSupportedError(
            f"{self._owner(what)}: {self._FROZEN}; rebuild it, or use GeometricFilter, which supports "
            "set/update/insert/remove"
        )

    def _set_ident(self, h1: int, hb: int, vid: int) -> NoReturn:
        raise self._refuse("set")

    def set(self, key: Any, value: Any) -> NoReturn:
        """Always raises UpdateNotSupportedError (the table is solved once for its keys)."""
        raise self._refuse("set")

    def update(self, *args: Any, **kwargs: Any) -> NoReturn:
        """Always raises UpdateNotSupportedError (the table is solved once for its keys)."""
        raise self._refuse("update")

    def insert(self, key: Any, value: Any) -> NoReturn:
        """Always raises UpdateNotSupportedError (the table is solved once for its keys)."""
        raise self._refuse("insert")

    def remove(self, key: Any) -> NoReturn:
        """Always raises UpdateNotSupportedError (the table is solved once for its keys)."""
        raise self._refuse("remove")
