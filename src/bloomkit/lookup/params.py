"""Parameter setting of the Geometric filter (document 001, Sections 3.3-3.6).

Notation of the thesis (Zhao 2009), kept next to the Python names:

==========================  ======  =====================================================
Python name                 thesis  meaning
==========================  ======  =====================================================
``value_bits``              V       bits of the value part of a cell
``error_bits``              E       bits of the fingerprint part of a cell, c = E + V
``fpr``                     e_o     allowed overall false positive rate
``load_factor``             p       fraction of occupied cells of a hash table
``storage_ratio``           r       M_i / |S_i|, table size over keys tried on it
``num_tables``              N       number of hash tables in the sequence
``num_hashes``              k       probes per table
``num_keys``                |S|     number of keys encoded
``remainder``               d       1 - r p, reject rate (Eq. 3.13)
==========================  ======  =====================================================

The thesis's worked example (|S| = 4e8, V = 16, e_o = 2^-16, k = 1) comes out as
``p_hat = 0.9606, E = 21, p = 0.9697, r = 0.2860, N = 61``, encode cost 3.606 and
unmatched-query bound 27.95 (Sections 3.5.2, 3.6.1, 3.6.2)::

    >>> g = geometric_parameters(400_000_000, 16, 2.0**-16)
    >>> round(g.p_hat, 4), g.error_bits, round(g.load_factor, 4), round(g.storage_ratio, 4), g.num_tables
    (0.9606, 21, 0.9697, 0.286, 61)
    >>> round(g.encode_cost, 3), round(g.unmatched_query_bound, 2)
    (3.606, 27.95)
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any, NamedTuple

import numpy as np
from scipy.special import lambertw

from .._engine.hashing import check_seed
from .._validation import (
    FPR,
    Bool,
    Int,
    Real,
    check_choice,
    check_float,
    check_int,
    check_reals,
    param_error,
)
from . import _kernels as LK

__all__ = [
    "GeometricParameters",
    "bloomier_space_per_key",
    "choose_error_bits",
    "encode_cost",
    "error_bit_candidates",
    "false_positive_bound",
    "geometric_parameters",
    "geometric_space_per_key",
    "load_factor_k1",
    "load_factor_monte_carlo",
    "location_fpr",
    "num_tables_for",
    "optimal_load_factor",
    "predicted_fpr_from_loads",
    "space_ratio_to_bloomier",
    "storage_margin",
    "storage_ratio_k1",
    "storage_ratio_monte_carlo",
    "simulate_table_loads",
    "table_sizes",
    "unmatched_query_bound",
]

MAX_VALUE_BITS = 64
"""Largest V: values up to 2^64 - 1."""
MAX_ERROR_BITS = 63
"""Largest E (fingerprint bits)."""
MAX_CELL_BITS = MAX_VALUE_BITS + MAX_ERROR_BITS
"""Largest cell c = E + V (127 bits). Cells wider than 64 bits are stored in two packed arrays
(:mod:`bloomkit.lookup._kernels`); the space is still exactly c bits per cell."""
MAX_TABLES = 100_000
"""Longest table sequence N."""
MAX_MC_DRAWS = 1 << 34
"""Largest k x size a Monte Carlo simulation here accepts (k |S| keys or k M cells: about four
minutes at ~13 ns a draw; the thesis's |S| = M = 4e8 at k <= 6 is 2.4e9): bounded time."""
GENERATORS = ("uniform", "c_random")
C_RAND_RANGE = 1 << 31  # glibc random(): uniform in [0, 2^31 - 1]

# the constraints of the lookup tables' parameters: their constructors, builds and loaders
# (the ``_PARAMS`` specs) check with these same objects
VALUE_BITS = Int(1, MAX_VALUE_BITS)
"""V."""
ERROR_BITS = Int(1, MAX_ERROR_BITS)
"""E."""
LOAD_FACTOR = Real(0, 1, lo_open=True, hi_open=True)
"""p (and p_hat)."""
STORAGE_RATIO = Real(0, None, lo_open=True)
"""r."""
NUM_TABLES = Int(1, MAX_TABLES)
"""N."""
GF_NUM_HASHES = Int(1, 16)
"""k of a Geometric filter."""
MARGIN = Real(0, 0.5)
"""Relative reduction of the default r (:func:`storage_margin`)."""


def _check_v(value_bits: int, owner: str) -> int:
    return VALUE_BITS(value_bits, "value_bits", owner)


def _check_fpr(fpr: float, owner: str) -> float:
    return FPR(fpr, "fpr", owner)


def _check_p(p: float, owner: str, name: str = "load_factor") -> float:
    return LOAD_FACTOR(p, name, owner)


def optimal_load_factor(value_bits: int, fpr: float) -> float:
    r"""Load factor minimising the (ceiling-free) space, Lemma 3.5.1 (``p_hat``).

    .. math:: \hat p = 1 - \frac{1}{1 - W_{-1}\left(-e^{1 - a}\right)},
              \quad a = \ln 2 \,(V + \log_2 1/e_o)

    (ERRATA: the proof's last line writes :math:`W_{-1}(a)`; the argument is
    :math:`-e^{1-a}` as in the statement.)

    Parameters
    ----------
    value_bits : int
        V, in [1, 64].
    fpr : float
        e_o, in (0, 1). The lemma needs V + log2(1/e_o) >= 3.

    Returns
    -------
    float

    Complexity: O(1).

    >>> round(optimal_load_factor(16, 2.0**-16), 4)
    0.9606
    """
    v = _check_v(value_bits, "optimal_load_factor")
    e = _check_fpr(fpr, "optimal_load_factor")
    c = v + math.log2(1.0 / e)
    if c < 3:
        raise param_error("fpr", "optimal_load_factor", "such that V + log2(1/fpr) >= 3 (Lemma 3.5.1)", fpr)
    a = math.log(2.0) * c
    w = lambertw(-math.exp(1.0 - a), k=-1)
    return float(1.0 - 1.0 / (1.0 - w.real))


def geometric_space_per_key(p: float, value_bits: int, fpr: float, ceil: bool = True) -> float:
    r"""Bits per key of the Geometric filter at load factor p, Eq. (3.20)-(3.22).

    .. math:: \frac{1}{p}\left(V + \left\lceil \log_2 \frac{p}{(1-p) e_o} \right\rceil\right)

    With ``ceil=False`` the ceiling is dropped (Eq. 3.22, the smooth curve of Fig. 3.2).

    Complexity: O(1).

    >>> round(geometric_space_per_key(32 / 33, 16, 2.0**-16), 3)
    38.156
    """
    pp = _check_p(p, "geometric_space_per_key", "p")
    v = _check_v(value_bits, "geometric_space_per_key")
    e = _check_fpr(fpr, "geometric_space_per_key")
    x = math.log2(pp / ((1.0 - pp) * e))
    if ceil:
        x = math.ceil(x - 1e-12)
    return (v + x) / pp


def error_bit_candidates(p_hat: float, fpr: float) -> tuple[int, int]:
    r"""The two integer candidates E0, E0 + 1 around log2(p_hat / ((1 - p_hat) e_o)), Sec. 3.5.2.

    Complexity: O(1).

    >>> error_bit_candidates(0.9606, 2.0**-16)
    (20, 21)
    """
    p = _check_p(p_hat, "error_bit_candidates", "p_hat")
    e = _check_fpr(fpr, "error_bit_candidates")
    x = math.log2(p / ((1.0 - p) * e))
    e0 = max(1, math.floor(x))
    return e0, e0 + 1


def load_factor_for_error_bits(error_bits: int, fpr: float) -> float:
    r"""Load factor at which E error bits meet e_o exactly, Lemma 3.5.2.

    .. math:: p = 1 - \frac{1}{e_o 2^E + 1}

    (ERRATA: Section 3.5.2 prints 1 - 1/(e_o 2^(E0+1)); the lemma's form gives the text's
    0.9412 and 0.9697 for E = 20, 21.)

    Complexity: O(1).

    >>> round(load_factor_for_error_bits(21, 2.0**-16), 4)
    0.9697
    """
    eb = check_int(error_bits, "error_bits", "load_factor_for_error_bits", lo=1, hi=MAX_ERROR_BITS)
    e = _check_fpr(fpr, "load_factor_for_error_bits")
    return 1.0 - 1.0 / (e * 2.0**eb + 1.0)


def choose_error_bits(value_bits: int, fpr: float) -> tuple[float, int, float]:
    """Section 3.5.2: ``(p_hat, E, p)``; of the two candidates the one with the smaller Eq. 3.22.

    At an intersection of the ceiling and smooth curves Eq. 3.22 equals (V + E) / p.

    Complexity: O(1).

    >>> p_hat, e, p = choose_error_bits(16, 2.0**-16)
    >>> round(p_hat, 4), e, round(p, 4)
    (0.9606, 21, 0.9697)
    """
    v = _check_v(value_bits, "choose_error_bits")
    e = _check_fpr(fpr, "choose_error_bits")
    p_hat = optimal_load_factor(v, e)
    cands = [eb for eb in error_bit_candidates(p_hat, e) if eb <= MAX_ERROR_BITS]
    if not cands:
        raise param_error("fpr", "choose_error_bits",
                          f"large enough that E <= {MAX_ERROR_BITS} (V = {v} needs E = "
                          f"{error_bit_candidates(p_hat, e)[0]})", fpr)
    best: tuple[float, int, float] | None = None
    for eb in cands:
        p = load_factor_for_error_bits(eb, e)
        cost = (v + eb) / p
        if best is None or cost < best[0]:
            best = (cost, eb, p)
    assert best is not None
    return p_hat, best[1], best[2]


def load_factor_k1(storage_ratio: float) -> float:
    r"""Load factor of a table with one probe per key, Eq. (3.11): :math:`p_1(r) = 1 - e^{-1/r}`.

    Complexity: O(1).

    >>> round(load_factor_k1(0.2860), 4)
    0.9697
    """
    r = check_float(storage_ratio, "storage_ratio", "load_factor_k1", 0, None, lo_open=True)
    return -math.expm1(-1.0 / r)


def storage_ratio_k1(load_factor: float) -> float:
    r"""Inverse of Eq. (3.11), Eq. (3.23): :math:`r_1(p) = -1/\ln(1 - p)`.

    Complexity: O(1).

    >>> round(storage_ratio_k1(32 / 33), 4)
    0.286
    """
    p = _check_p(load_factor, "storage_ratio_k1")
    return -1.0 / math.log1p(-p)


def _mc_size(value: Any, name: str, k: int, owner: str) -> int:
    """A simulation's size (|S| or M): an integer >= 1 with k x size <= MAX_MC_DRAWS."""
    n = check_int(value, name, owner, lo=1)
    if k * n > MAX_MC_DRAWS:
        raise param_error(name, owner, f"an integer with num_hashes x {name} <= {MAX_MC_DRAWS} (MAX_MC_DRAWS: "
                          "the simulation's draws)", value)
    return n


def _generator_range(generator: str, random_range: int | None, owner: str) -> int:
    check_choice(generator, "generator", owner, GENERATORS)
    if generator == "uniform":
        return 0
    if random_range is None:
        return C_RAND_RANGE
    return check_int(random_range, "random_range", owner, lo=2, hi=(1 << 63))


def load_factor_monte_carlo(
    storage_ratio: float,
    num_hashes: int,
    num_keys: int,
    *,
    generator: str = "uniform",
    random_range: int | None = None,
    seed: int = 0,
) -> float:
    """Algorithm 6, loadFactor(r, k, |S|): simulate the k-attempt rule on a bit array of r|S| bits.

    Parameters
    ----------
    storage_ratio : float
        r > 0.
    num_hashes : int
        k >= 1.
    num_keys : int
        |S| >= 1.
    generator : {"uniform", "c_random"}
        ``"uniform"``: 64-bit generator reduced by multiply-shift (unbiased to 2^-64).
        ``"c_random"``: the thesis's ``random() mod M`` with ``random()`` uniform on
        [0, random_range) (default 2^31, glibc's RAND_MAX + 1); biased when M does not
        divide the range (Section 3.3.3).
    random_range : int, optional
        Range of the emulated ``random()``. Scale it with M to model a large M cheaply.
    seed : int
        Seed of the generator.

    Returns
    -------
    float
        p, the fraction of set bits.

    Complexity: O(k |S|) time, O(r |S|) bits of memory.
    """
    owner = "load_factor_monte_carlo"
    r = check_float(storage_ratio, "storage_ratio", owner, 0, None, lo_open=True)
    k = check_int(num_hashes, "num_hashes", owner, lo=1, hi=64)
    n = _mc_size(num_keys, "num_keys", k, owner)
    rng_range = _generator_range(generator, random_range, owner)
    seed = check_seed(seed, owner)
    if r * n > MAX_MC_DRAWS:
        raise param_error("storage_ratio", owner, f"at most MAX_MC_DRAWS / num_keys = {MAX_MC_DRAWS / n:.3g} "
                          "(the simulated array of r |S| bits)", storage_ratio)
    m = max(1, int(round(r * n)))
    c = LK.mc_load_factor(m, k, n, np.uint64(rng_range), np.uint64(seed & ((1 << 64) - 1)))
    return float(c) / m


@lru_cache(maxsize=256)
def _mc_ratio_cached(p: float, k: int, m: int, rng_range: int, seed: int) -> float:
    target = int(math.ceil(m * p))
    tried = LK.mc_storage_ratio(m, k, target, np.uint64(rng_range), np.uint64(seed))
    return m / float(tried)


def storage_ratio_monte_carlo(
    load_factor: float,
    num_hashes: int,
    num_cells: int,
    *,
    generator: str = "uniform",
    random_range: int | None = None,
    seed: int = 0,
) -> float:
    """Algorithm 7, storageRatio(p, k, M): keys tried until a fraction p of M cells is occupied.

    ERRATA (found here, not yet in ERRATA.md): Algorithm 7 as printed sets |S| = M p, loops
    while the number of occupied cells c < |S| and returns M / |S| = 1/p, which does not
    depend on k. The intended count is the number of *keys tried* until c reaches M p:
    r = M / (keys tried). That is what this function returns.

    Parameters
    ----------
    load_factor : float
        p in (0, 1).
    num_hashes : int
        k >= 1.
    num_cells : int
        M, the size of the simulated table; the thesis asks for at least the first table's
        size (Section 3.5.2).
    generator, random_range, seed
        As in :func:`load_factor_monte_carlo`.

    Returns
    -------
    float
        r = M / keys tried.

    Complexity: O(M p / r) draws (cached per argument tuple), O(M) bits of memory.

    >>> abs(storage_ratio_monte_carlo(32 / 33, 1, 1 << 20) - 0.2860) < 0.002
    True
    """
    owner = "storage_ratio_monte_carlo"
    p = _check_p(load_factor, owner)
    k = check_int(num_hashes, "num_hashes", owner, lo=1, hi=64)
    m = _mc_size(num_cells, "num_cells", k, owner)
    rng_range = _generator_range(generator, random_range, owner)
    return _mc_ratio_cached(p, k, m, rng_range, check_seed(seed, owner))


def storage_margin(num_keys: int) -> float:
    """Default relative reduction of r used by GeometricFilter: clip(4/sqrt(|S|), 0.001, 0.05).

    Not in the thesis. Section 4.2 says r "needs to be deducted by a small amount"; our
    measurements (experiment 001-fig4.1) show why even a uniform hash needs it: the relative
    surplus of keys passed down the sequence grows by p/d (about 1.34 for k = 1) per table,
    so at the exact r_k(p) the random fluctuation of the first tables (relative size about
    0.12/sqrt(|S|)) decides whether the tail over-fills or starves, and at |S| >= 10^7 the
    uniform simulation over-fills in most runs (a second-order, systematic bias). In uniform
    simulations a reduction of 4/sqrt(|S|), at least 0.1%, left no key exhausted in any of 4
    runs at 10^6, 10^7, 2e7 and 5e7 keys; the space sum(M_i) c ~ |S| c / p does not depend
    on r.

    Complexity: O(1).

    >>> storage_margin(10**6), storage_margin(10**8)
    (0.004, 0.001)
    """
    n = check_int(num_keys, "num_keys", "storage_margin", lo=1, hi=1 << 62)
    return min(0.05, max(0.001, 4.0 / math.sqrt(n)))


def simulate_table_loads(
    sizes: np.ndarray,
    num_hashes: int,
    num_keys: int,
    *,
    generator: str = "uniform",
    random_range: int | None = None,
    seed: int = 0,
) -> np.ndarray:
    """Algorithm 6 over a whole table sequence: occupied cells of each table after |S| keys.

    Each key tries tables A_1..A_N in turn, k uniform (or ``random() mod M_i``) positions in
    each, and takes the first free cell; this is the sequence of Figs. 4.1 / 4.2 with an ideal
    generator instead of a hash function.

    Parameters
    ----------
    sizes : array of int
        M_1..M_N (e.g. :func:`table_sizes`).
    num_hashes : int
        k >= 1.
    num_keys : int
        |S| >= 1.
    generator, random_range, seed
        As in :func:`load_factor_monte_carlo`.

    Returns
    -------
    numpy.ndarray of int64
        Occupied cells per table; ``num_keys - sum`` keys ran past the last table.

    Complexity: O(k |S| / (r p)) draws, O(sum M_i) bits of memory.

    >>> occ = simulate_table_loads(table_sizes(1000, 0.2860, 0.9697, 8), 1, 1000)
    >>> bool(occ.sum() <= 1000 and occ[0] > occ[1])
    True
    """
    owner = "simulate_table_loads"
    allowed = f"a 1-D array of 1 to {MAX_TABLES} positive integer sizes of at most MAX_MC_DRAWS cells in all"
    sz = check_reals(sizes, "sizes", owner, lo=1)
    if sz.ndim != 1 or sz.size == 0 or sz.size > MAX_TABLES or (sz != np.floor(sz)).any() or sz.sum() > MAX_MC_DRAWS:
        raise param_error("sizes", owner, allowed, sizes)
    m = np.ascontiguousarray(sz, dtype=np.int64)
    k = check_int(num_hashes, "num_hashes", owner, lo=1, hi=64)
    n = _mc_size(num_keys, "num_keys", k, owner)
    rng_range = _generator_range(generator, random_range, owner)
    out: np.ndarray = LK.mc_table_loads(m, k, n, np.uint64(check_seed(seed, owner)), np.uint64(rng_range))
    return out


def num_tables_for(num_keys: int, storage_ratio: float, load_factor: float) -> int:
    r"""Length of the table sequence, Eq. (3.16): :math:`N = \lceil \log_{1 - r p}(1/|S|) \rceil`.

    Complexity: O(1).

    >>> num_tables_for(400_000_000, 0.2860, 0.9697)
    61
    """
    owner = "num_tables_for"
    n = check_int(num_keys, "num_keys", owner, lo=1)
    r = check_float(storage_ratio, "storage_ratio", owner, 0, None, lo_open=True)
    p = _check_p(load_factor, owner)
    d = 1.0 - r * p
    if not 0.0 < d < 1.0:
        raise param_error("storage_ratio", owner, "such that 0 < r p < 1", storage_ratio)
    if n == 1:
        return 1
    return max(1, math.ceil(math.log(1.0 / n) / math.log(d) - 1e-9))


def table_sizes(num_keys: int, storage_ratio: float, load_factor: float, num_tables: int) -> np.ndarray:
    r"""Table sizes :math:`M_i = \lceil r |S| d^{i-1} \rceil`, d = 1 - r p, Eq. (3.15).

    Rounded up, so every table has at least one cell.

    Complexity: O(N).

    >>> table_sizes(1000, 0.2860, 0.9697, 3).tolist()
    [286, 207, 150]
    """
    owner = "table_sizes"
    n = check_int(num_keys, "num_keys", owner, lo=1)
    r = check_float(storage_ratio, "storage_ratio", owner, 0, None, lo_open=True)
    p = _check_p(load_factor, owner)
    nt = check_int(num_tables, "num_tables", owner, lo=1, hi=MAX_TABLES)
    d = 1.0 - r * p
    sizes = np.ceil(r * n * d ** np.arange(nt, dtype=np.float64) - 1e-9)
    return np.maximum(sizes, 1).astype(np.int64)


def encode_cost(num_hashes: int, storage_ratio: float, load_factor: float) -> float:
    r"""Upper bound of probes per key at encoding, Eq. (3.24): :math:`k / (r p)`.

    Also the bound of a matched query, Eq. (3.25).

    Complexity: O(1).

    >>> round(encode_cost(1, 0.2860, 0.9697), 3)
    3.606
    """
    k = check_int(num_hashes, "num_hashes", "encode_cost", lo=1)
    r = STORAGE_RATIO(storage_ratio, "storage_ratio", "encode_cost")
    cost = k / r / _check_p(load_factor, "encode_cost")  # not k / (r p): r p can underflow to 0
    if not math.isfinite(cost):
        raise param_error("storage_ratio", "encode_cost", "a ratio whose bound k / (r p) is finite", storage_ratio)
    return cost


def unmatched_query_bound(num_hashes: int, load_factor: float, num_tables: int) -> float:
    r"""Probes of an unmatched query ignoring the overflow table, Eq. (3.26).

    .. math:: \frac{k (1 - p^{kN})}{1 - p^k}

    Complexity: O(1).

    >>> round(unmatched_query_bound(1, 32 / 33, 61), 2)
    27.95
    """
    k = check_int(num_hashes, "num_hashes", "unmatched_query_bound", lo=1)
    p = _check_p(load_factor, "unmatched_query_bound")
    n = NUM_TABLES(num_tables, "num_tables", "unmatched_query_bound")
    return k * (1.0 - p ** (k * n)) / (1.0 - p**k)


def location_fpr(error_bits: int) -> float:
    r"""False positive rate of one occupied cell of the compact filter, Section 3.2.2.

    Fingerprints are non-zero (Assumption 3.2.1), so :math:`e_n = 1/(2^E - 1)`.

    Complexity: O(1).
    """
    eb = check_int(error_bits, "error_bits", "location_fpr", lo=1, hi=MAX_ERROR_BITS)
    return 1.0 / (2.0**eb - 1.0)


def false_positive_bound(load_factor: float, error_bits: int, *, compact: bool = True) -> float:
    r"""Lemma 3.4.2, Eq. (3.19): :math:`e_o \le \frac{p}{1-p} e_n`.

    ``compact=True`` uses :math:`e_n = 1/(2^E - 1)` (Section 3.2.2), ``False`` the
    explicit version's :math:`1/2^E`.

    Complexity: O(1).

    >>> round(false_positive_bound(32 / 33, 21, compact=False) * 2**16, 6)
    1.0
    """
    p = _check_p(load_factor, "false_positive_bound")
    compact = Bool()(compact, "compact", "false_positive_bound")
    en = location_fpr(error_bits) if compact else 2.0 ** -check_int(error_bits, "error_bits", "false_positive_bound", lo=1)
    return p / (1.0 - p) * en


def predicted_fpr_from_loads(
    loads: np.ndarray, valid: np.ndarray, num_hashes: int, error_bits: int
) -> float:
    r"""FPR of an absent key given each table's occupied and valid fractions.

    The refinement of Eqs. (3.18)-(3.19) with the measured per-table load factors
    :math:`p_i` instead of a common p and N finite: an absent key reaches table i with
    probability :math:`\prod_{j<i} p_j^k`, probes there :math:`\sum_{t=1}^{k} p_i^t`
    occupied cells on average, and each valid occupied cell is a false positive with
    probability :math:`e_n`. First order in :math:`e_n`.

    Parameters
    ----------
    loads : array of float
        Occupied fraction of each table.
    valid : array of float
        Fraction of each table's cells that are occupied *and* valid (value part non-zero).
    num_hashes, error_bits : int
        k and E.

    Complexity: O(N k).
    """
    owner = "predicted_fpr_from_loads"
    k = check_int(num_hashes, "num_hashes", owner, lo=1, hi=64)
    en = location_fpr(error_bits)
    loads = check_reals(loads, "loads", owner, 0, 1)
    valid = check_reals(valid, "valid", owner, 0, 1)
    if loads.ndim != 1 or valid.shape != loads.shape:
        raise param_error("valid", owner, f"a 1-D array of one fraction per table, as long as loads "
                          f"({loads.shape})", f"shape {valid.shape}")
    reach = 1.0
    total = 0.0
    for p_i, v_i in zip(loads, valid, strict=True):
        share = v_i / p_i if p_i > 0 else 0.0
        occ = sum(p_i**t for t in range(1, k + 1))
        total += reach * occ * share * en
        reach *= p_i**k
    return total


def geometric_space_ratio_model(c: float) -> float:
    """space_G / (|S| c) at Lemma 3.5.1's optimum for c = V + log2(1/e_o) (no ceiling)."""
    a = math.log(2.0) * c
    w = float(lambertw(-math.exp(1.0 - a), k=-1).real)
    p = 1.0 - 1.0 / (1.0 - w)
    return float((c + math.log2(p / (1.0 - p))) / p)


def bloomier_space_per_key(value_bits: int, fpr: float, storage_ratio: float = 1.23) -> float:
    r"""Bits per key of the Bloomier filter, Section 3.6.3: :math:`1.23 (V + \lceil\log_2 1/e_o\rceil)`.

    Complexity: O(1).

    >>> bloomier_space_per_key(16, 2.0**-16)
    39.36
    """
    v = _check_v(value_bits, "bloomier_space_per_key")
    e = _check_fpr(fpr, "bloomier_space_per_key")
    r = STORAGE_RATIO(storage_ratio, "storage_ratio", "bloomier_space_per_key")
    return r * (v + math.ceil(math.log2(1.0 / e) - 1e-12))


def space_ratio_to_bloomier(c: float) -> float:
    r"""space_G / space_B of Fig. 3.4 for c = V + log2(1/e_o) (Section 3.6.3).

    space_G = (c + log2(p/(1-p))) / p at Lemma 3.5.1's p; space_B = 1.23 c (the thesis
    writes the ceiling of log2(1/e_o); with integer log2(1/e_o) the two agree).

    Complexity: O(1).

    >>> space_ratio_to_bloomier(26) < 1.0 < space_ratio_to_bloomier(25)
    True
    """
    cc = check_float(c, "c", "space_ratio_to_bloomier", 3, MAX_CELL_BITS)
    return geometric_space_ratio_model(cc) / (1.23 * cc)


class GeometricParameters(NamedTuple):
    """Configuration of a Geometric filter (Section 3.5).

    Unpacks as ``p_hat, error_bits, load_factor, storage_ratio, num_tables``; the derived
    quantities are properties.
    """

    p_hat: float
    """Lemma 3.5.1's smooth optimum of the load factor."""
    error_bits: int
    """E, Section 3.5.2."""
    load_factor: float
    """p, Lemma 3.5.2 at the chosen E."""
    storage_ratio: float
    """r = r_k(p): Eq. (3.23) for k = 1, Algorithm 7 for k > 1."""
    num_tables: int
    """N, Eq. (3.16)."""

    @property
    def remainder(self) -> float:
        """d = 1 - r p, Eq. (3.13)."""
        return 1.0 - self.storage_ratio * self.load_factor

    @property
    def encode_cost(self) -> float:
        """k / (r p) for k = 1, Eq. (3.24); multiply by k for k > 1 (see :func:`encode_cost`)."""
        return 1.0 / (self.storage_ratio * self.load_factor)

    @property
    def unmatched_query_bound(self) -> float:
        """Eq. (3.26) for k = 1; see :func:`unmatched_query_bound` for k > 1."""
        return unmatched_query_bound(1, self.load_factor, self.num_tables)


def geometric_parameters(
    num_keys: int,
    value_bits: int,
    fpr: float,
    num_hashes: int = 1,
    *,
    storage_ratio: float | None = None,
    num_tables: int | None = None,
    error_bits: int | None = None,
    generator: str = "uniform",
    random_range: int | None = None,
    mc_cells: int | None = None,
    seed: int = 0,
) -> GeometricParameters:
    """All parameters of Section 3.5 for |S| keys, V value bits, rate e_o and k probes.

    Parameters
    ----------
    num_keys : int
        |S| >= 1.
    value_bits : int
        V in [1, 64].
    fpr : float
        e_o in (0, 1).
    num_hashes : int
        k in [1, 64].
    storage_ratio : float, optional
        r; default Eq. (3.23) for k = 1, Algorithm 7 (uniform generator) for k > 1.
    num_tables : int, optional
        N; default Eq. (3.16). (ERRATA: Table 4.1 used longer sequences than Eq. 3.16.)
    error_bits : int, optional
        E; default Section 3.5.2. When given, p follows from Lemma 3.5.2.
    generator, random_range, seed
        Generator of the Monte Carlo r for k > 1 (:func:`storage_ratio_monte_carlo`).
    mc_cells : int, optional
        Size of the Monte Carlo bit array; default max(2^20, r_1 |S|) capped at 2^28
        (Section 3.5.2 asks for at least the first table's size).

    Returns
    -------
    GeometricParameters

    Complexity: O(1) for k = 1; O(mc_cells) for the Monte Carlo of k > 1 (cached).
    """
    owner = "geometric_parameters"
    n = check_int(num_keys, "num_keys", owner, lo=1)
    v = _check_v(value_bits, owner)
    e = _check_fpr(fpr, owner)
    k = check_int(num_hashes, "num_hashes", owner, lo=1, hi=64)
    if v + math.log2(1.0 / e) < 3:
        raise param_error("fpr", owner, "such that value_bits + log2(1/fpr) >= 3 (Lemma 3.5.1)", fpr)
    p_hat, eb, p = choose_error_bits(v, e)
    if error_bits is not None:
        eb = ERROR_BITS(error_bits, "error_bits", owner)
        p = load_factor_for_error_bits(eb, e)
    if eb > MAX_ERROR_BITS:
        raise param_error("fpr", owner, f"large enough that E <= {MAX_ERROR_BITS} (here E = {eb})", fpr)
    if storage_ratio is not None:
        r = check_float(storage_ratio, "storage_ratio", owner, 0, None, lo_open=True)
        if r * p >= 1.0:
            raise param_error("storage_ratio", owner, f"< 1/p = {1 / p:.4f}", storage_ratio)
    elif k == 1:
        r = storage_ratio_k1(p)
    else:
        cells = mc_cells
        if cells is None:
            cells = int(min(max(1 << 20, storage_ratio_k1(p) * n), 1 << 28))
        r = storage_ratio_monte_carlo(
            p, k, cells, generator=generator, random_range=random_range, seed=seed
        )
    if num_tables is not None:
        nt = NUM_TABLES(num_tables, "num_tables", owner)
    else:
        nt = num_tables_for(n, r, p)
    return GeometricParameters(float(p_hat), int(eb), float(p), float(r), int(nt))
