"""Data for the lookup experiments: n-gram count tables.

The thesis encodes Google's Web 1T 3-gram counts (Section 4.1), which are not freely
available. We build the same kind of table from an English corpus that is available offline:
the GCIDE dictionary of the Debian package ``dict-gcide`` (``/usr/share/dictd/gcide.dict.dz``,
dictzip = gzip-readable; about 5.4 million tokens and 3.7 million distinct trigrams). For
10^7 - 10^8 keys, a seeded Zipf generator gives distinct 64-bit keys with Zipf-distributed
counts. Both give ``(keys, values)`` with values clipped to [1, 2^V - 1].

Tokenization: lower-cased runs of ASCII letters with inner apostrophes
(``[a-z]+(?:'[a-z]+)*``); the dictionary's markup words are kept (they are English text too).
A trigram key is the three tokens joined by single spaces.
"""

from __future__ import annotations

import gzip
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .._validation import check_float, check_int
from ..errors import InvalidParameterError

__all__ = [
    "GCIDE_PATH",
    "NgramTable",
    "absent_zipf_keys",
    "gcide_available",
    "load_table",
    "ngram_table_from_text",
    "read_text",
    "trigram_table",
    "zipf_table",
]

GCIDE_PATH = Path(os.environ.get("BLOOMKIT_GCIDE", "/usr/share/dictd/gcide.dict.dz"))
_TOKEN = re.compile(r"[a-z]+(?:'[a-z]+)*")


@dataclass
class NgramTable:
    """An n-gram count table.

    Attributes
    ----------
    keys : pyarrow.StringArray or numpy.ndarray
        Distinct keys (n-gram strings, or uint64 for the Zipf generator).
    values : numpy.ndarray of int64
        Counts clipped to [1, 2^V - 1].
    source : str
        Where the data came from (printed in experiment notes).
    num_tokens : int
        Tokens read (0 for generated tables).
    absent : Any
        Keys guaranteed not to be in ``keys`` (same type), for negative tests.
    """

    keys: Any
    values: np.ndarray
    source: str
    num_tokens: int
    absent: Any = None

    def __len__(self) -> int:
        return len(self.values)


def gcide_available(path: str | os.PathLike[str] | None = None) -> bool:
    """True when the GCIDE dictionary file exists."""
    return Path(path or GCIDE_PATH).is_file()


def read_text(path: str | os.PathLike[str], max_bytes: int | None = None) -> str:
    """Text of a plain or gzip (dictzip) file, decoded as UTF-8 (errors replaced).

    Complexity: O(file size).
    """
    p = Path(path)
    with p.open("rb") as fh:
        magic = fh.read(2)
    opener = gzip.open if magic == b"\x1f\x8b" else open
    with opener(p, "rb") as fh:
        raw = fh.read() if max_bytes is None else fh.read(max_bytes)
    return raw.decode("utf-8", errors="replace")


def _clip(counts: np.ndarray, value_bits: int) -> np.ndarray:
    out: np.ndarray = np.minimum(counts, (1 << value_bits) - 1).astype(np.int64)
    return out


def ngram_table_from_text(
    text: str, n: int = 3, *, value_bits: int = 16, num_absent: int = 0, seed: int = 0, source: str = "text"
) -> NgramTable:
    """Count the distinct n-grams of a text.

    Parameters
    ----------
    text : str
    n : int
        n-gram order, 1..3 (ids are packed in 64 bits).
    value_bits : int
        Counts are clipped to 2^V - 1.
    num_absent : int
        Also draw this many distinct n-grams of the text's vocabulary that do not occur in
        it (uniform random words), for negative tests.
    seed : int
        Seed of the absent-key draw.

    Returns
    -------
    NgramTable
        Keys as a pyarrow string array, sorted by packed token ids.

    Complexity: O(len(text)) plus a sort of the n-grams.
    """
    nn = check_int(n, "n", "ngram_table_from_text", lo=1, hi=3)
    vb = check_int(value_bits, "value_bits", "ngram_table_from_text", lo=1, hi=32)
    tokens = _TOKEN.findall(text.lower())
    if len(tokens) < nn:
        raise InvalidParameterError(
            f"The 'text' parameter of ngram_table_from_text must hold at least {nn} tokens. Got {len(tokens)} instead."
        )
    enc = pa.array(tokens, type=pa.string()).dictionary_encode()
    vocab = enc.dictionary
    ids = enc.indices.to_numpy().astype(np.int64)
    nv = len(vocab)
    if nv ** nn >= 2**63:
        raise InvalidParameterError("vocabulary too large to pack n-grams in 64 bits")
    packed = np.zeros(len(ids) - nn + 1, dtype=np.int64)
    for j in range(nn):
        packed = packed * nv + ids[j : len(ids) - nn + 1 + j]
    uniq, counts = np.unique(packed, return_counts=True)
    keys = _join(vocab, uniq, nn, nv)
    absent = None
    if num_absent:
        rng = np.random.default_rng(seed)
        want = check_int(num_absent, "num_absent", "ngram_table_from_text", lo=0)
        got: list[np.ndarray] = []
        have = 0
        while have < want:
            cand = np.zeros(2 * (want - have) + 16, dtype=np.int64)
            for _j in range(nn):
                cand = cand * nv + rng.integers(0, nv, size=len(cand))
            cand = np.unique(cand)
            pos = np.searchsorted(uniq, cand)
            pos = np.minimum(pos, len(uniq) - 1)
            cand = cand[uniq[pos] != cand]
            if got:
                cand = np.setdiff1d(cand, np.concatenate(got))
            got.append(cand[: want - have])
            have += len(got[-1])
        absent = _join(vocab, np.concatenate(got), nn, nv)
    return NgramTable(keys, _clip(counts, vb), source, len(tokens), absent)


def _join(vocab: pa.Array, packed: np.ndarray, n: int, nv: int) -> pa.Array:
    parts = []
    rest = packed.copy()
    for _j in range(n):
        parts.append(rest % nv)
        rest //= nv
    parts.reverse()
    cols = [vocab.take(pa.array(p)) for p in parts]
    if n == 1:
        return cols[0]
    return pc.binary_join_element_wise(*cols, " ")


def trigram_table(
    path: str | os.PathLike[str] | None = None,
    *,
    max_bytes: int | None = None,
    value_bits: int = 16,
    num_absent: int = 0,
    seed: int = 0,
) -> NgramTable:
    """The trigram count table of the GCIDE dictionary (or of any text file).

    Parameters
    ----------
    path : path-like, optional
        Default ``/usr/share/dictd/gcide.dict.dz`` (env ``BLOOMKIT_GCIDE`` overrides).
    max_bytes : int, optional
        Read only this many (uncompressed) bytes: a prefix of the corpus.

    Complexity: O(corpus size); about 5 s for the whole GCIDE.
    """
    p = Path(path or GCIDE_PATH)
    if not p.is_file():
        raise FileNotFoundError(f"{p} not found (apt-get install dict-gcide)")
    text = read_text(p, max_bytes)
    desc = f"{p.name}" + ("" if max_bytes is None else f" (first {max_bytes / 1e6:.0f} MB)")
    return ngram_table_from_text(text, 3, value_bits=value_bits, num_absent=num_absent, seed=seed, source=desc)


def _mix_keys(idx: np.ndarray, seed: int) -> np.ndarray:
    """A bijection of uint64: the SplitMix64 finalizer of idx + seed * golden."""
    from .._engine.lazy import kernels as K

    return K.splitmix64_many(idx.astype(np.uint64), np.uint64(seed & ((1 << 64) - 1)))


def zipf_table(
    num_keys: int, *, exponent: float = 3.5, value_bits: int = 16, seed: int = 0, num_absent: int = 0
) -> NgramTable:
    """Seeded synthetic n-gram table: distinct uint64 keys, Zipf(exponent) counts.

    Keys are a bijective mix of 0..num_keys-1 (distinct by construction); absent keys are
    the mix of num_keys..num_keys+num_absent-1 (distinct from every key). Counts follow
    ``numpy.random.Generator.zipf(exponent)`` clipped to [1, 2^V - 1]; the default exponent 3.5
    gives 89% ones and 8% twos, like the GCIDE trigram counts (89.2%, 6.5%).

    Complexity: O(num_keys).
    """
    n = check_int(num_keys, "num_keys", "zipf_table", lo=1)
    a = check_float(exponent, "exponent", "zipf_table", 1, None, lo_open=True)
    vb = check_int(value_bits, "value_bits", "zipf_table", lo=1, hi=32)
    rng = np.random.default_rng(seed)
    keys = _mix_keys(np.arange(n, dtype=np.uint64), seed)
    values = _clip(rng.zipf(a, size=n), vb)
    absent = absent_zipf_keys(n, num_absent, seed) if num_absent else None
    return NgramTable(keys, values, f"Zipf(a={a}) generator, seed {seed}", 0, absent)


def absent_zipf_keys(num_keys: int, num_absent: int, seed: int = 0) -> np.ndarray:
    """Keys guaranteed absent from ``zipf_table(num_keys, seed=seed)``."""
    return _mix_keys(np.arange(num_keys, num_keys + num_absent, dtype=np.uint64), seed)


def load_table(
    num_keys: int | None = None,
    *,
    max_bytes: int | None = None,
    value_bits: int = 16,
    num_absent: int = 0,
    seed: int = 0,
) -> tuple[NgramTable, str]:
    """The GCIDE trigram table if the file is there, else a Zipf table; with a note saying which.

    ``num_keys`` (optional) truncates the trigram table to its first keys, or sizes the Zipf
    fallback (default 3.7 million, the GCIDE table's size).
    """
    if gcide_available():
        t = trigram_table(max_bytes=max_bytes, value_bits=value_bits, num_absent=num_absent, seed=seed)
        if num_keys is not None and num_keys < len(t):
            t = NgramTable(t.keys.slice(0, num_keys), t.values[:num_keys], t.source, t.num_tokens, t.absent)
        note = (
            f"real data: {len(t)} distinct trigrams of {t.source} ({t.num_tokens} tokens); "
            f"absent keys are random word triples of its vocabulary that do not occur"
        )
        return t, note
    n = num_keys or 3_700_000
    t = zipf_table(n, value_bits=value_bits, seed=seed, num_absent=num_absent)
    note = (
        f"FALLBACK: {GCIDE_PATH} not found (apt-get install dict-gcide), so a seeded Zipf table "
        f"of {n} keys stands in for the real trigram table"
    )
    return t, note
