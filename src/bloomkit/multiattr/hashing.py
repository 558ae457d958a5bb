"""Attribute hashing of the parallel Bloom filter: H_ij(a_i) in [0, m) for every attribute i
and hash function j (document 004, Section 3.1).

Two hashes. The XXH64 one starts from the package's seeded XXH64 ``h1`` of the attribute
value (:func:`bloomkit._engine.hashing.hash_many`); attribute i uses seed
``seed_i = (seed + i * 0xD6E8FEB86659FD93) mod 2^64`` so that the hash functions of different
attributes are independent (``H_[i][j]`` in the document is "the j-th hash function for the
i-th attribute").

* ``"xxh64"`` (default, hash id 1 = :data:`bloomkit._engine.hashing.HASH_XXH64`): the foundation's
  probe positions of ``h1_i``, ``H_ij = splitmix64(h1_i + (j + 1) * 0x9E3779B97F4A7C15) mod m``,
  i.e. exactly ``bloomkit._engine.hashing.positions(h1_i, q, m)`` (computed in the fused kernels of
  :mod:`bloomkit.multiattr._kernels` with ``bloomkit._engine.kernels.probe`` and ``fastmod``): q
  independent words per attribute, like the paper's MD5 words.
* ``"md5"`` (hash id 3, the paper-faithful option of Section 6.2): "the value of an attribute
  is hashed into 128 bits by calculating the MD5 signature; we divide the 128 bits into four
  32-bit values and utilize the modulus of each 32-bit value by the filter size m". For q > 4
  the document does not say where the further values come from; we use block b = j // 4 as
  ``MD5(seed (8 bytes LE) || b (4 bytes LE) || tag || payload)`` and block 0 with seed 0 as
  ``MD5(tag || payload)`` (tag + payload = the canonical key encoding of
  :func:`bloomkit._engine.hashing.encode_key`). 32-bit words are read big-endian. As in the document
  the hash does not depend on the attribute index, so swapping two attribute values of an item
  keeps V_a (documented in docs/multiattr.md).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

import numpy as np
import pyarrow as pa

from .._engine.boundary import extension
from .._engine.columns import as_keys
from .._engine.hashing import HASH_XXH64, encode_key, hash64_tag, hash_keys, register_hash_id
from . import _kernels as MK

__all__ = [
    "HASHES",
    "HASH_MD5",
    "HASH_XXH64",
    "attribute_positions",
    "attribute_seed",
    "attribute_seeds",
    "hash_columns",
    "hash_item",
    "hash_item_into",
    "hash_material",
    "item_material",
    "material_len",
    "material_positions",
]

HASH_MD5 = register_hash_id(3, "md5-words (doc 004)")
#: the ``hash`` option of ParallelBloomFilter -> hash id of the container header
HASHES = {"xxh64": HASH_XXH64, "md5": HASH_MD5}
_MASK = (1 << 64) - 1
_C = extension()
_ATTR_STEP = 0xD6E8FEB86659FD93


def attribute_seed(seed: int, i: int) -> int:
    """Seed of attribute i: ``(seed + i * 0xD6E8FEB86659FD93) mod 2^64``.

    >>> attribute_seed(5, 0)
    5
    """
    return (int(seed) + int(i) * _ATTR_STEP) & _MASK


@lru_cache(maxsize=64)
def attribute_seeds(seed: int, p: int) -> tuple[int, ...]:
    """The seeds of attributes 0 .. p - 1 (:func:`attribute_seed`), cached."""
    return tuple(attribute_seed(seed, i) for i in range(p))


def _md5_words(value: Any, seed: int, blocks: int) -> tuple[list[int], int]:
    """(the first 4 * blocks MD5 words of a value, its key tag)."""
    tag, payload = encode_key(value)
    body = bytes((tag,)) + payload
    out: list[int] = []
    for b in range(blocks):
        prefix = b"" if (seed == 0 and b == 0) else seed.to_bytes(8, "little") + b.to_bytes(4, "little")
        d = hashlib.md5(prefix + body, usedforsecurity=False).digest()
        out.extend(int.from_bytes(d[4 * w : 4 * w + 4], "big") for w in range(4))
    return out, tag


def _pylist(column: Any) -> list[Any]:
    values: list[Any]
    if isinstance(column, np.ndarray):
        values = column.tolist()
    elif isinstance(column, pa.Array | pa.ChunkedArray):
        values = column.to_pylist()
    else:
        values = list(column)
    return values


def hash_columns(columns: Sequence[Any], hash_name: str, seed: int, q: int, *,
                 owner: str | None = None) -> tuple[np.ndarray, list[int]]:
    """Hash the p columns of a batch once (before any mutation, so a bad value changes nothing).

    Returns the material and the key-type tag mask of every column
    (:func:`bloomkit._engine.hashing.key_type_names`): a (p, n) uint64 array of h1 values for
    ``"xxh64"``, or an (n, p, q) uint64 array of MD5 words for ``"md5"``. Each column goes
    through the data front door (:func:`bloomkit._engine.columns.as_keys`, by position; a null is
    refused naming ``data[i]`` and ``owner``). Complexity: O(n p) hashes.
    """
    p = len(columns)
    masks: list[int] = []
    if hash_name != "md5":
        rows = []
        for i, (col, s) in enumerate(zip(columns, attribute_seeds(seed, p), strict=True)):
            h, mask = hash_keys(col, s, name=f"data[{i}]", owner=owner)
            rows.append(h)
            masks.append(mask)
        n = rows[0].shape[0] if rows else 0
        out = np.empty((p, n), dtype=np.uint64)
        for i, r in enumerate(rows):
            out[i] = r
        return out, masks
    blocks = (q + 3) // 4
    lists = [_pylist(as_keys(c, f"data[{i}]", owner)) for i, c in enumerate(columns)]
    n = len(lists[0]) if lists else 0
    words = np.empty((n, p, q), dtype=np.uint64)
    for i, values in enumerate(lists):
        mask = 0
        for j, v in enumerate(values):
            w, tag = _md5_words(v, seed, blocks)
            words[j, i, :] = w[:q]
            mask |= 1 << tag
        masks.append(mask)
    return words, masks


def hash_material(columns: Sequence[Any], hash_name: str, seed: int, q: int) -> np.ndarray:
    """The material of :func:`hash_columns` alone (h1 values or MD5 words)."""
    return hash_columns(columns, hash_name, seed, q)[0]


def _hash_item_into(item: Sequence[Any], seeds: Sequence[int], out: np.ndarray) -> list[int]:
    """:data:`hash_item_into` in Python.

    C twin: ``hash_each`` of _speedups.c, section "module functions"."""
    masks = []
    for i, (v, s) in enumerate(zip(item, seeds, strict=True)):
        h, tag = hash64_tag(v, s)
        out[i] = h
        masks.append(1 << tag)
    return masks


hash_item_into: Callable[[Sequence[Any], Sequence[int], np.ndarray], list[int]] = (
    _hash_item_into if _C is None else _C.hash_each)
"""``hash_item_into(item, seeds, out) -> masks``: the XXH64 h1 of the p values of one item
into ``out`` (p uint64, C-contiguous) and the tag mask ``1 << tag`` of every value; value i is
hashed with ``seeds[i]`` (:func:`attribute_seeds`). The compiled boundary's ``hash_each``
itself when it is active (one call, no Python frame), else the same in Python.

Complexity: O(p) hashes."""


def hash_item(item: Sequence[Any], hash_name: str, seed: int, q: int) -> tuple[np.ndarray, list[int]]:
    """:func:`hash_columns` of one item (the single-key path, same values and tag masks)."""
    if hash_name != "md5":
        out = np.empty((len(item), 1), dtype=np.uint64)
        return out, hash_item_into(item, attribute_seeds(seed, len(item)), out.reshape(-1))
    blocks = (q + 3) // 4
    words = [_md5_words(v, seed, blocks) for v in item]
    return np.array([[w[:q] for w, _ in words]], dtype=np.uint64), [1 << t for _, t in words]


def item_material(item: Sequence[Any], hash_name: str, seed: int, q: int) -> np.ndarray:
    """The material of :func:`hash_item` alone."""
    return hash_item(item, hash_name, seed, q)[0]


def material_positions(material: np.ndarray, hash_name: str, q: int, m: int,
                       lo: int = 0, hi: int | None = None) -> np.ndarray:
    """(hi - lo, p, q) int64 positions H_ij in [0, m) of items lo..hi of a hashed batch."""
    if hash_name == "xxh64":
        return MK.positions_xxh64(np.ascontiguousarray(material[:, lo:hi]), int(q), np.uint64(m))
    return (material[lo:hi] % np.uint64(m)).astype(np.int64)


def material_len(material: np.ndarray, hash_name: str) -> int:
    """Number of items in a hashed batch."""
    return int(material.shape[0] if hash_name == "md5" else material.shape[1])


def attribute_positions(values: Any, i: int, hash_name: str, seed: int, q: int, m: int) -> np.ndarray:
    """(n, q) int64 positions H_ij of a column of values of attribute i (same as the item path)."""
    if isinstance(values, str | bytes):
        values = [values]
    # a one-column batch: column 0 of seed attribute_seed(seed, i) is attribute i (MD5 ignores i)
    mat = hash_columns([values], hash_name, seed if hash_name == "md5" else attribute_seed(seed, i), q)[0]
    return np.ascontiguousarray(material_positions(mat, hash_name, q, m)[:, 0, :])
