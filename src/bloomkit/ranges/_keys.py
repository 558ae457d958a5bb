"""Hashed positions of "name:value" keys: the shared XXH64 probes or SHA-512 (Section V).

``HASH_XXH64`` (default): ``h1 = XXH64("name:value")`` of the foundation
(:mod:`bloomkit._engine.hashing`, UTF-8 string keys) and the foundation's probe positions
``G_i mod m`` (SplitMix64 of h1); position ``i`` of a key does not depend on how many positions are drawn, so
the first ``s`` positions of a key are the same whether s or k are drawn.

``HASH_SHA512`` (paper-faithful, document 000 Section V): the 512-bit digest of
SHA-512("name:value") split into 32 16-bit big-endian words; position ``i`` is word ``i``
modulo ``m``. At most 32 positions per key.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .._engine.hashing import HASH_XXH64, hash_many, positions, register_hash_id

__all__ = [
    "HASHES", "HASH_NAMES", "HASH_SHA512", "HASH_XXH64", "SHA512_MAX_POSITIONS", "key_positions", "key_strings",
    "masked_positions", "sha512_positions",
]

HASH_SHA512 = register_hash_id(2, "sha512-16bit-words")
SHA512_MAX_POSITIONS = 32
HASHES = {"xxh64": HASH_XXH64, "sha512": HASH_SHA512}
"""The ``hash=`` names of the ranges structures and their container hash ids."""
HASH_NAMES = {v: k for k, v in HASHES.items()}
"""Container hash id -> ``hash=`` name (the ids a ranges structure implements: its ``_HASH_IDS``)."""


def key_strings(name: str, values: np.ndarray) -> pa.Array:
    """The keys ``"name:value"`` of an int64 array of (scaled) values, as a pyarrow string array.

    >>> key_strings("Age", np.array([0, 5])).to_pylist()
    ['Age:0', 'Age:5']
    """
    vals = pa.array(np.ascontiguousarray(values, dtype=np.int64)).cast(pa.string())
    return pc.binary_join_element_wise(name + ":", vals, "")


def sha512_positions(keys: list[str], count: int, m: int) -> np.ndarray:
    """(len(keys), count) positions: the first ``count`` 16-bit words of SHA-512 mod m.

    Complexity: O(len(keys)) SHA-512 evaluations.
    """
    out = np.empty((len(keys), count), dtype=np.int64)
    for i, key in enumerate(keys):
        words = np.frombuffer(hashlib.sha512(key.encode("utf-8")).digest(), dtype=">u2")
        out[i] = words[:count].astype(np.int64) % m
    return out


def key_positions(keys: pa.Array | list[str], count: int, m: int, hash_id: int, seed: int) -> np.ndarray:
    """(len(keys), count) int64 positions of string keys under ``hash_id``.

    Complexity: O(len(keys) * count).
    """
    n = len(keys)
    if n == 0 or count == 0:
        return np.zeros((n, count), dtype=np.int64)
    if hash_id == HASH_SHA512:
        lst = keys.to_pylist() if isinstance(keys, pa.Array) else list(keys)
        return sha512_positions(lst, count, m)
    if hash_id != HASH_XXH64:  # pragma: no cover - guarded by the filter's validation
        raise ValueError(f"unknown hash id {hash_id}")
    arr = keys if isinstance(keys, pa.Array) else pa.array(list(keys), type=pa.string())
    return positions(hash_many(arr, seed), count, m)


def masked_positions(keys: pa.Array | list[str], counts: np.ndarray, m: int, hash_id: int, seed: int) -> np.ndarray:
    """The first ``counts[j]`` positions of every key ``j``, flattened in key order (1-D int64).

    One hashing pass over all keys (``max(counts)`` positions each; the first ``c`` positions
    of a key do not depend on how many are drawn).

    Complexity: O(len(keys) * max(counts)).
    """
    c = np.asarray(counts, dtype=np.int64)
    if c.size == 0:
        return np.zeros(0, dtype=np.int64)
    width = int(c.max())
    pos = key_positions(keys, width, m, hash_id, seed)
    if int(c.min()) == width:
        return pos.reshape(-1)
    out: np.ndarray = pos[np.arange(width)[None, :] < c[:, None]]
    return out
