"""The simulation program of document 000, Section V.

"The program literally computes the average false positive rate for all the possible inserted
ranges of a given size": for every inserted range ``[a, a + n - 1]`` of the scope, build the
filter of that range alone, test every value of the scope outside the range, and average the
fraction of false positives over the ranges. Like the report, ranges that do not leave room
for all the overlapping false positives on both ends are skipped: the ``r`` groups before the
range's first group and after its last group must lie inside the scope (for d = 1 the report's
example: Age 0..120, k = 8, s = 2, n = 10 keeps [3..12] .. [108..117]).

The report hashes with SHA-512("name:value"), 16-bit words mod m (``hash="sha512"``, the
default here); ``hash="xxh64"`` uses the package hash. The inner loop is a numba kernel.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .._engine.hashing import HASH_XXH64, check_seed
from .._validation import check_choice, check_int, param_error
from . import _kernels as K
from . import model as M
from ._keys import HASH_SHA512, SHA512_MAX_POSITIONS, key_positions, key_strings

__all__ = ["SimulationResult", "random_names", "simulate", "simulate_names"]


@dataclass(frozen=True)
class SimulationResult:
    """Mean false positive rate over the inserted ranges, and the model's value (Eq. 14)."""

    fpr: float
    model_fpr: float
    num_ranges: int
    false_positives: int
    tested: int


def _starts(R: int, n: int, d: int, r: int, skip_edges: bool) -> np.ndarray:
    a = np.arange(0, R - n + 1, dtype=np.int64)
    if not skip_edges:
        return a
    ga = a // d
    gb = (a + n - 1) // d
    ok = (ga - r >= 0) & ((gb + r + 1) * d - 1 <= R - 1)
    return a[ok]


def _check(R: int, n: int, m: int, k: int, d: int, s: int, hash: str, owner: str) -> tuple[int, int, int, int, int, int]:
    R = check_int(R, "scope_size", owner, lo=2)
    n = check_int(n, "range_size", owner, lo=1, hi=R - 1)
    m = check_int(m, "num_bits", owner, lo=1)
    k = check_int(k, "num_hashes", owner, lo=1)
    d = check_int(d, "group_size", owner, lo=1, hi=R)
    s = check_int(s, "positions", owner, lo=1, hi=k)
    check_choice(hash, "hash", owner, ("sha512", "xxh64"))
    if hash == "sha512" and s > SHA512_MAX_POSITIONS:
        raise param_error("positions", owner, f"<= {SHA512_MAX_POSITIONS} with hash='sha512'", s)
    return R, n, m, k, d, s


def _table(name: str, R: int, d: int, s: int, r: int, m: int, hash_id: int, seed: int, lo: int) -> np.ndarray:
    ngroups = (R + d - 1) // d + r + 1
    values = lo + np.arange(ngroups, dtype=np.int64) * d
    return key_positions(key_strings(name, values), s, m, hash_id, seed)


def simulate(
    scope_size: int,
    range_size: int,
    num_bits: int,
    num_hashes: int,
    group_size: int = 1,
    positions: int | None = None,
    *,
    name: str = "Age",
    lo: int = 0,
    hash: str = "sha512",
    seed: int = 0,
    skip_edges: bool = True,
) -> SimulationResult:
    """Average false positive rate of one inserted range of size n over all its positions.

    Parameters
    ----------
    scope_size, range_size, num_bits, num_hashes, group_size, positions :
        R, n, m, k, d, s of the report (``positions`` defaults to k).
    name : str
        Attribute name hashed in the keys ``"name:value"``.
    lo : int
        First value of the scope (keys are ``lo + g d``).
    hash : {"sha512", "xxh64"}
    skip_edges : bool
        Skip ranges without room for all overlapping false positives (the report does).

    Returns
    -------
    SimulationResult

    Complexity: O(number of ranges * R/d * k) in a numba kernel.
    """
    s = num_hashes if positions is None else positions
    R, n, m, k, d, s = _check(scope_size, range_size, num_bits, num_hashes, group_size, s, hash, "simulate")
    seed = check_seed(seed, "simulate")
    r = int(M.r(k, s))
    starts = _starts(R, n, d, r, skip_edges)
    hid = HASH_SHA512 if hash == "sha512" else HASH_XXH64
    pos = _table(name, R, d, s, r, m, hid, seed, lo)
    fpr, fps = K.simulate_ranges(pos, R, n, d, s, k, m, starts)
    model = float(M.f_go(R, n, d, s, k, m, True))
    return SimulationResult(float(fpr), model, int(starts.size), int(fps.sum()), int(starts.size) * (R - n))


def random_names(count: int, rng: np.random.Generator, length: int = 8) -> list[str]:
    """``count`` distinct random attribute names of ``length`` lowercase letters."""
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    out: list[str] = []
    seen: set[str] = set()
    while len(out) < count:
        nm = "".join(rng.choice(letters, length))
        if nm not in seen:
            seen.add(nm)
            out.append(nm)
    return out


def simulate_names(
    scope_size: int,
    range_size: int,
    num_bits: int,
    num_hashes: int,
    group_size: int = 1,
    positions: int | None = None,
    *,
    names: Sequence[str],
    hash: str = "sha512",
    seed: int = 0,
    skip_edges: bool = True,
) -> np.ndarray:
    """Per-name mean false positive rates (the report's "simulation average" over names).

    Complexity: len(names) times :func:`simulate`.
    """
    if isinstance(names, str) or not len(names):
        raise param_error("names", "simulate_names", "a non-empty sequence of str", names)
    return np.array(
        [
            simulate(scope_size, range_size, num_bits, num_hashes, group_size, positions, name=nm, hash=hash, seed=seed, skip_edges=skip_edges).fpr
            for nm in names
        ]
    )
