"""The false positive model of split-block Bloom filters (Putze, Sanders, Singler, WEA 2007 /
JEA 2009, Section 3: a sum over the binomial block loads) and the sizing that inverts it.

One model for both modes: w = 64 bits per lane (native) or 32 (Parquet), k = :data:`LANES`."""

from __future__ import annotations

import math

import numpy as np

from .._validation import CAPACITY, FPR, Int, Options, check_float
from ..errors import InvalidParameterError

__all__ = ["LANES", "MAX_BLOCKS", "split_block_fill", "split_block_fpr", "split_block_fpr_sd", "split_block_num_blocks"]

LANES = 8
"""k: bits a key sets (one per lane) in both modes."""
MAX_BLOCKS = 1 << 40
"""Most blocks a filter may have."""


# ---------------------------------------------------------------------------------------------
# the model


LANE_BITS = Options(32, 64)
"""w, bits per lane: 64 in native mode, 32 in Parquet mode."""


def _saturation(lane_bits: int) -> int:
    """The block load beyond which a lane's bit is set with probability 1 in float64:
    ``(1 - 1/w)^j < exp(-j/w) < 2^-60`` for ``j >= 42 w``, so every per-block quantity of the
    model equals its limit there."""
    return 42 * lane_bits


def _loads(n: float, num_blocks: int, lane_bits: int) -> tuple[np.ndarray, np.ndarray, float]:
    """(j, P(J = j), P(J > j_max)) over the block loads that matter: J ~ Binomial(n, 1/B) for
    integral n (exact for a uniform block choice), Poisson(n/B) otherwise (Putze et al.'s form,
    the binomial's limit). The log-pmf is the one at the lowest j (``math.lgamma``) plus the
    cumulative log-ratios of consecutive terms (no scipy: it would cost every process that
    sizes a filter 45 MB). Loads above ``j_max = _saturation(w)`` are one tail mass (a block
    that full answers every probe), so the terms are at most ``min(24 sqrt(n/B), 42 w)``:
    bounded time and memory for any n."""
    p = 1.0 / num_blocks
    mu = n * p
    if mu == 0.0:  # n so small that n / B underflows: every block is empty
        return np.zeros(1), np.ones(1), 0.0
    spread = 12.0 * math.sqrt(mu) + 12.0
    lo = max(0, math.floor(mu - spread))
    hi = math.ceil(mu + spread + 30.0)
    binomial = float(n).is_integer() and n <= 2**53
    if binomial:
        hi = min(hi, int(n))
    cap = _saturation(lane_bits)
    capped = hi > cap
    hi = min(hi, cap)
    if lo > hi:  # every block is saturated
        return np.zeros(0), np.zeros(0), 1.0
    j = np.arange(lo, hi + 1, dtype=np.float64)
    if binomial and p >= 1.0:
        return j, (j == n).astype(np.float64), float(n > cap)
    if binomial:
        first = (math.lgamma(n + 1) - math.lgamma(lo + 1) - math.lgamma(n - lo + 1)
                 + lo * math.log(p) + (n - lo) * math.log1p(-p))
        steps = np.log(n - j[:-1]) - np.log(j[:-1] + 1) + math.log(p) - math.log1p(-p)
    else:
        first = -mu + lo * math.log(mu) - math.lgamma(lo + 1)
        steps = math.log(mu) - np.log(j[:-1] + 1)
    logs = np.concatenate(([first], first + np.cumsum(steps)))
    pmf = np.exp(logs)
    return j, pmf, max(0.0, 1.0 - float(pmf.sum())) if capped else 0.0


def split_block_fpr(num_keys: float, num_blocks: int, lane_bits: int = 64) -> float:
    """False positive rate of a split-block Bloom filter of B blocks holding n keys.

    After Putze, Sanders, Singler (2007), Section 3: a blocked filter's rate is the rate of a
    block averaged over the distribution of its load,

    .. math:: f = \\sum_{j \\ge 0} P(J = j) \\, \\bigl(1 - (1 - 1/w)^j\\bigr)^k,
              \\qquad J \\sim \\mathrm{Binomial}(n, 1/B)

    with the inner rate of a *split* block (k = 8 lanes of w bits, one bit per lane, so a lane
    holding j keys has a given bit set with probability ``1 - (1 - 1/w)^j``). Putze et al.
    write the load as Poisson(n/B), the binomial's limit (used here for non-integral n).

    Parameters
    ----------
    num_keys : float
        n, keys inserted (distinct).
    num_blocks : int
        B (z in the Parquet format).
    lane_bits : int
        w: 64 in native mode (512-bit blocks), 32 in Parquet mode (256-bit blocks).

    Complexity: O(min(sqrt(n / B), w)) terms.

    >>> round(split_block_fpr(100_000, 1872), 4)  # 9.585 bits per key: 1% for a Bloom filter
    0.0129
    >>> round(split_block_fpr(26214, 1024, lane_bits=32), 4)  # the Parquet spec's example
    0.0126
    """
    n = check_float(num_keys, "num_keys", "split_block_fpr", lo=0)
    B = Int(1, 1 << 53)(num_blocks, "num_blocks", "split_block_fpr")
    lane_bits = LANE_BITS(lane_bits, "lane_bits", "split_block_fpr")
    if n == 0:
        return 0.0
    j, pmf, tail = _loads(n, B, lane_bits)
    inner = (-np.expm1(j * np.log1p(-1.0 / lane_bits))) ** LANES
    return float(min(1.0, max(0.0, float(np.dot(pmf, inner)) + tail)))


def split_block_fpr_sd(num_keys: int, num_blocks: int, probes: int, lane_bits: int = 64) -> float:
    """Standard deviation of the false positive rate measured on *one* filter of n keys with
    ``probes`` never-inserted keys: the binomial sd of the probes combined with the spread of
    the filter's own rate, the mean over B blocks of ``prod_i c_i / w`` (c_i set bits of lane
    i). Given a load j the lanes are independent occupancy counts with
    ``E[c] = w (1 - q)`` and ``E[c^2] = w (w - 1)(1 - 2q + r) + w (1 - q)``,
    ``q = (1 - 1/w)^j``, ``r = (1 - 2/w)^j``; a block's rate has variance
    ``sum_j P(j) (E[c^2] / w^2)^8 - f^2``, the mean over B blocks that over B (an upper
    bound: multinomial loads are negatively correlated).

    Complexity: O(min(sqrt(n / B), w)).
    """
    n = check_float(num_keys, "num_keys", "split_block_fpr_sd", lo=0)
    B = Int(1, 1 << 53)(num_blocks, "num_blocks", "split_block_fpr_sd")
    lane_bits = LANE_BITS(lane_bits, "lane_bits", "split_block_fpr_sd")
    probes = Int(1, 1 << 62)(probes, "probes", "split_block_fpr_sd")
    w = float(lane_bits)
    if n == 0:
        return 0.0
    j, pmf, tail = _loads(n, B, lane_bits)
    q = np.exp(j * np.log1p(-1.0 / w))
    r = np.exp(j * np.log1p(-2.0 / w))
    e1 = 1.0 - q
    e2 = ((w - 1.0) * (1.0 - 2.0 * q + r) + (1.0 - q)) / w
    f = float(np.dot(pmf, e1**LANES)) + tail  # a saturated block: e1 = e2 = 1
    var_block = max(0.0, float(np.dot(pmf, e2**LANES)) + tail - f * f)
    return math.sqrt(f * (1.0 - f) / probes + var_block / B)


def _gap(log_b: float, n: float, rel: float) -> float:
    """``b (1 + rel)^n - b`` for ``b = exp(log_b)``, without cancelling nearly equal powers and
    without overflow."""
    t = n * math.log1p(rel)
    if t > 700.0:
        return math.exp(log_b + t) - math.exp(log_b)
    return math.exp(log_b) * math.expm1(t)


def split_block_fill(num_keys: float, num_blocks: int, lane_bits: int = 64) -> tuple[float, float]:
    """Expected fraction of set bits X / m of a filter of B blocks after n distinct keys, and
    its standard deviation (what ``info()["overfilled"]`` compares the fill against).

    A key picks a block (1/B) and one bit of each of its 8 lanes of w bits. With q = 1 - 1/w,
    r = 1 - 2/w, the loads K_b multinomial and their generating function
    ``E[s_1^K_1 s_2^K_2] = (1 - (1 - s_1)/B - (1 - s_2)/B)^n``:

    * a lane holding j keys has ``E[c] = w (1 - q^j)``, ``Var c = w (w-1) r^j + w q^j - w^2 q^2j``
      (occupancy), its 8 lanes independent given j; ``g(j) = 8 w (1 - q^j)``;
    * ``E[X / m] = 1 - E[q^K] = 1 - (1 - x)^n``, x = 1 / (B w);
    * ``Var X = B (8 E[Var c] + Var g(K)) + B (B - 1) Cov(g(K_1), g(K_2))``, the covariance
      negative (the loads sum to n).

    Every difference of nearly equal powers is computed as ``a^n expm1(n log1p(.))``
    (:func:`_gap`).

    Complexity: O(1).
    """
    n = check_float(num_keys, "num_keys", "split_block_fill", lo=0)
    B = Int(1, None)(num_blocks, "num_blocks", "split_block_fill")
    lane_bits = LANE_BITS(lane_bits, "lane_bits", "split_block_fill")
    w = float(lane_bits)
    if n == 0:
        return 0.0, 0.0
    x = 1.0 / (B * w)
    log_q1 = math.log1p(-x)
    log_r = n * math.log1p(-2.0 * x)  # log E[r^K] = log E[q^K1 q^K2] = n log(1 - 2x)
    log_q2 = n * math.log1p(-2.0 * x + x / w)  # log E[q^2K]
    log_qq = 2.0 * n * log_q1  # log E[q^K]^2
    var_c = (w * w * _gap(log_q2, n, -(x / w) / (1.0 - 2.0 * x + x / w))  # w^2 (E r^K - E q^2K)
             + w * _gap(log_r, n, x / (1.0 - 2.0 * x)))  # + w (E q^K - E r^K)
    g2 = (LANES * w) ** 2
    var_g = g2 * _gap(log_qq, n, (x / w - x * x) / (1.0 - x) ** 2)  # Var q^K
    cov = g2 * _gap(log_qq, n, -(x * x) / (1.0 - x) ** 2)  # Cov(q^K1, q^K2) < 0
    var_x = max(0.0, B * (LANES * var_c + var_g) + B * (B - 1.0) * cov)
    return -math.expm1(n * log_q1), math.sqrt(var_x) / (B * LANES * w)


def split_block_num_blocks(capacity: int, fpr: float, lane_bits: int = 64) -> int:
    """The fewest blocks B with ``split_block_fpr(capacity, B) <= fpr`` (the model is
    decreasing in B; found by doubling then bisection).

    Complexity: O(log B) evaluations of the model.

    >>> split_block_num_blocks(1_000_000, 0.01) * 512 / 1_000_000  # bits per key for 1%
    10.099712
    """
    owner = "split_block_num_blocks"
    n = CAPACITY(capacity, "capacity", owner)
    p = FPR(fpr, "fpr", owner)
    lane_bits = LANE_BITS(lane_bits, "lane_bits", owner)
    block_bits = LANES * lane_bits
    hi = max(1, math.ceil(n * 1.5 * -math.log2(p) / block_bits))
    while hi <= MAX_BLOCKS and split_block_fpr(n, hi, lane_bits) > p:
        hi *= 2
    if hi > MAX_BLOCKS:
        raise InvalidParameterError(
            f"The 'fpr' parameter of {owner} needs more than {MAX_BLOCKS} blocks for "
            f"{n} keys. Got {p!r} instead."
        )
    lo = 0  # fpr(lo) > p or lo == 0
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if split_block_fpr(n, mid, lane_bits) <= p:
            hi = mid
        else:
            lo = mid
    return hi
