"""Sizes that fold well: divisor counts, highly / largely composite and smooth numbers.

Section IV of doc 003 (Sailhan & Stehr, "Folding and Unfolding Bloom Filters") plans the
folding of a Bloom filter as the factorisation of its initial size ``m_1``
(Eq. 2, ``m_1 = prod_j p_j^alpha_j``): every divisor of ``m_1`` is a size the filter can
be folded to. This module provides the number theory the planner needs:

* :func:`factorize`, :func:`divisor_count` (Eq. 8), :func:`divisors`, :func:`divisor_counts`;
* :func:`highly_composite` (Eq. 9), :func:`largely_composite` (Eq. 10),
  :func:`superior_highly_composite` (the numbers starred in Table III);
* :func:`smooth_numbers` (the sieve of Section IV-B, as corrected in ERRATA.md),
  :func:`is_smooth`, :func:`dickman_rho` (Eqs. 11-12).

The chooser of ``m_1`` that uses them, :func:`bloomkit.folding.planner.choose_initial_size`,
is planning: it lives with the planner.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterator

import numpy as np

from .._validation import INT64_MAX, check_float, check_int, check_reals, param_error

__all__ = [
    "dickman_rho",
    "divisor_count",
    "divisor_counts",
    "divisors",
    "factorize",
    "highly_composite",
    "is_smooth",
    "largely_composite",
    "primes_up_to",
    "smooth_numbers",
    "superior_highly_composite",
]

#: Largest integer the sieves accept (x + z must stay below this; int64 arithmetic inside).
MAX_VALUE = 2**62
#: Largest interval length a single sieve call allocates (three arrays of 8 bytes per number:
#: about 400 MB and a few seconds at the limit; bounded time and memory).
MAX_INTERVAL = 1 << 24
#: Largest ``limit`` accepted by :func:`largely_composite` (a segmented sieve: time O(limit),
#: about 20 s at the limit).
MAX_SIEVE_LIMIT = 10**8
#: Largest bound of :func:`primes_up_to` and the smoothness bound of :func:`smooth_numbers`
#: (a sieve of that many bytes: 100 MB, about a second).
MAX_PRIME = 10**8
#: Largest argument of :func:`dickman_rho` (rho(100) is about 1e-230, near the float range) and
#: most grid points it computes (bounded time: a Python loop of that many steps).
MAX_DICKMAN_U = 100.0
MAX_DICKMAN_STEPS = 10**6
_SEGMENT = 1 << 20


def primes_up_to(y: int) -> np.ndarray:
    """All primes ``<= y`` (sieve of Eratosthenes), ascending, int64.

    Parameters
    ----------
    y : int
        Upper bound, ``0 <= y <= MAX_PRIME`` (10**8).

    Returns
    -------
    numpy.ndarray
        The primes ``p <= y``.

    Notes
    -----
    Complexity: O(y log log y) time, O(y) bytes.

    >>> primes_up_to(20).tolist()
    [2, 3, 5, 7, 11, 13, 17, 19]
    """
    y = check_int(y, "y", "primes_up_to", lo=0, hi=MAX_PRIME)
    if y < 2:
        return np.zeros(0, dtype=np.int64)
    sieve = np.ones(y + 1, dtype=np.bool_)
    sieve[:2] = False
    sieve[4::2] = False
    for p in range(3, math.isqrt(y) + 1, 2):
        if sieve[p]:
            sieve[p * p :: 2 * p] = False
    return np.flatnonzero(sieve).astype(np.int64)


_MR_BASES = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37)  # deterministic below 3.3e24
_TRIAL_LIMIT = 1000


def _is_prime(n: int) -> bool:
    """Miller-Rabin with the first 12 prime bases: exact for every n < 3.3e24."""
    if n < 2:
        return False
    for p in _MR_BASES:
        if n % p == 0:
            return n == p
    d, s = n - 1, 0
    while d % 2 == 0:
        d //= 2
        s += 1
    for a in _MR_BASES:
        x = pow(a, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(s - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True


def _split(n: int) -> int:
    """A non-trivial factor of a composite ``n`` without factors below 1000 (Brent's variant of
    Pollard's rho, products of 128 differences per gcd; deterministic: c = 1, 2, ...)."""
    for c in range(1, n):
        y, r, q, g = 2, 1, 1, 1
        x = ys = y
        while g == 1:
            x = y
            for _ in range(r):
                y = (y * y + c) % n
            k = 0
            while k < r and g == 1:
                ys = y
                for _ in range(min(128, r - k)):
                    y = (y * y + c) % n
                    q = q * abs(x - y) % n
                g = math.gcd(q, n)
                k += 128
            r *= 2
        if g == n:  # the batch overshot: redo it one step at a time
            g = 1
            while g == 1:
                ys = (ys * ys + c) % n
                g = math.gcd(abs(x - ys), n)
        if g != n:
            return g
    raise AssertionError("unreachable for composite n")  # pragma: no cover


def factorize(m: int) -> dict[int, int]:
    """Canonical factorisation ``m = prod_j p_j^gamma_j`` (Eq. 7 of doc 003).

    Parameters
    ----------
    m : int
        A positive integer ``< 2**63`` (any filter size).

    Returns
    -------
    dict
        ``{p_j: gamma_j}`` with ascending primes (empty for ``m = 1``).

    Notes
    -----
    Trial division by the primes below 1000, then Miller-Rabin (deterministic bases) and
    Pollard's rho (Brent) for the cofactor. Complexity: O(m^(1/4)) multiplications expected
    (milliseconds for any ``m < 2**63``; a trial division to ``sqrt(m)`` took minutes for a
    62-bit prime).

    >>> factorize(50)
    {2: 1, 5: 2}
    """
    m = check_int(m, "m", "factorize", lo=1, hi=INT64_MAX)
    out: dict[int, int] = {}
    for p in (2, 3, 5):
        while m % p == 0:
            out[p] = out.get(p, 0) + 1
            m //= p
    # wheel mod 30 over the remaining small candidates
    steps = (4, 2, 4, 2, 4, 6, 2, 6)
    p, s = 7, 0
    while p < _TRIAL_LIMIT and p * p <= m:
        while m % p == 0:
            out[p] = out.get(p, 0) + 1
            m //= p
        p += steps[s]
        s = (s + 1) & 7
    todo = [m] if m > 1 else []
    while todo:
        n = todo.pop()
        if _is_prime(n):
            out[n] = out.get(n, 0) + 1
        else:
            d = _split(n)
            todo += [d, n // d]
    return dict(sorted(out.items()))


def divisor_count(m: int) -> int:
    """Number of divisors ``d(m) = prod_j (1 + gamma_j)`` (Eq. 8 of doc 003).

    It is the number of sizes (including ``m`` itself and 1) a filter of ``m`` bits can be
    folded to.

    Notes
    -----
    Complexity: that of :func:`factorize`.

    >>> divisor_count(50), divisor_count(55440)
    (6, 120)
    """
    return math.prod(g + 1 for g in factorize(m).values())


def divisors(m: int) -> np.ndarray:
    """All divisors of ``m``, ascending (the sizes a filter of ``m`` bits folds to).

    Notes
    -----
    Complexity: factorisation plus O(d(m) log d(m)).

    >>> divisors(50).tolist()
    [1, 2, 5, 10, 25, 50]
    """
    divs = [1]
    for p, g in factorize(m).items():
        divs = [d * p**e for d in divs for e in range(g + 1)]
    return np.array(sorted(divs), dtype=np.int64)


def _primes_for(top: int) -> np.ndarray:
    return primes_up_to(math.isqrt(top) + 1)


def _divisor_count_segments(x: int, z: int) -> Iterator[tuple[int, np.ndarray]]:
    """``d(m)`` for ``m`` in ``[x, x + z]``, sieved in segments of 2^20: (offset from x, counts)."""
    from ._kernels import interval_divisor_counts

    primes = _primes_for(x + z)
    for lo in range(0, z + 1, _SEGMENT):
        hi = min(z, lo + _SEGMENT - 1)
        yield lo, interval_divisor_counts(x + lo, hi - lo, primes)


def divisor_counts(x: int, z: int) -> np.ndarray:
    """``d(m)`` (Eq. 8) for every ``m`` in ``[x, x + z]`` by a segmented sieve.

    Parameters
    ----------
    x : int
        First number, ``>= 0`` (``d(0)`` is reported as 0).
    z : int
        Interval length, ``0 <= z <= MAX_INTERVAL`` (2**24); ``x + z <= 10**12``.

    Returns
    -------
    numpy.ndarray
        int64 array of length ``z + 1``.

    Notes
    -----
    Complexity: O(z log log(x + z) + pi(sqrt(x + z))) word operations (numba).

    >>> divisor_counts(1, 11).tolist()
    [1, 2, 2, 3, 2, 4, 2, 4, 3, 4, 2, 6]
    """
    x = check_int(x, "x", "divisor_counts", lo=0, hi=10**12)
    z = check_int(z, "z", "divisor_counts", lo=0, hi=MAX_INTERVAL)
    if x + z > 10**12:
        raise param_error("z", "divisor_counts", f"<= {10**12 - x} for x = {x}", z)
    out = np.empty(z + 1, dtype=np.int64)
    for lo, d in _divisor_count_segments(x, z):
        out[lo : lo + d.size] = d
    return out


def _record_scan(limit: int, strict: bool) -> np.ndarray:
    """Numbers <= limit whose d(m) beats (strict) or ties (not strict) every smaller number."""
    found: list[np.ndarray] = []
    best = 0
    for off, d in _divisor_count_segments(1, limit - 1):
        prev = np.maximum.accumulate(np.concatenate(([best], d[:-1])))
        hit = d > prev if strict else d >= prev
        found.append(np.flatnonzero(hit) + 1 + off)
        best = max(best, int(d.max()))
    return np.concatenate(found).astype(np.int64) if found else np.zeros(0, dtype=np.int64)


def _nonincreasing_exponent_numbers(limit: int) -> list[tuple[int, int]]:
    """(m, d(m)) for every m <= limit of the form 2^a1 3^a2 5^a3 ... with a1 >= a2 >= ...

    Every highly composite number has this form (Ramanujan 1915), and for every m' there is
    such a number <= m' with the same d, so records over this set are records over all N*.
    """
    primes = primes_up_to(200).tolist()
    out: list[tuple[int, int]] = []

    def rec(idx: int, value: int, dcount: int, max_exp: int) -> None:
        out.append((value, dcount))
        p = primes[idx]
        v = value
        for e in range(1, max_exp + 1):
            if v > limit // p:
                break
            v *= p
            rec(idx + 1, v, dcount * (e + 1), e)

    rec(0, 1, 1, 64)
    out.sort()
    return out


def highly_composite(limit: int) -> np.ndarray:
    """Highly composite numbers ``<= limit`` (Eq. 9: ``d(m') < d(m)`` for all ``m' < m``).

    Includes 1 (vacuously highly composite; Table III of doc 003 starts at 2).

    Parameters
    ----------
    limit : int
        Upper bound, ``1 <= limit <= 2**62``.

    Returns
    -------
    numpy.ndarray
        Ascending int64 array.

    Notes
    -----
    Enumerates the numbers with non-increasing exponents over consecutive primes
    (Ramanujan's necessary form) and keeps the divisor-count records, so large limits are
    cheap. Complexity: O(number of such products <= limit), about 10^5 for limit = 2**62.

    >>> highly_composite(400).tolist()
    [1, 2, 4, 6, 12, 24, 36, 48, 60, 120, 180, 240, 360]
    """
    limit = check_int(limit, "limit", "highly_composite", lo=1, hi=MAX_VALUE)
    best = 0
    out = []
    for value, dcount in _nonincreasing_exponent_numbers(limit):
        if dcount > best:
            out.append(value)
            best = dcount
    return np.array(out, dtype=np.int64)


def largely_composite(limit: int) -> np.ndarray:
    """Largely composite numbers ``<= limit`` (Eq. 10: ``d(m') <= d(m)`` for all ``m' <= m``).

    Includes 1 and 3, 8, 10, ... (numbers that tie the record). Table III of doc 003 is an
    extract of this sequence (see ERRATA.md).

    Parameters
    ----------
    limit : int
        Upper bound, ``1 <= limit <= MAX_SIEVE_LIMIT`` (10**8).

    Returns
    -------
    numpy.ndarray
        Ascending int64 array.

    Notes
    -----
    Segmented divisor-count sieve over ``[1, limit]``. Complexity: O(limit log log limit)
    time (numba), O(2^20) memory.

    >>> largely_composite(100).tolist()
    [1, 2, 3, 4, 6, 8, 10, 12, 18, 20, 24, 30, 36, 48, 60, 72, 84, 90, 96]
    """
    limit = check_int(limit, "limit", "largely_composite", lo=1, hi=MAX_SIEVE_LIMIT)
    return _record_scan(limit, strict=False)


def superior_highly_composite(limit: int) -> np.ndarray:
    """Superior highly composite numbers ``<= limit`` (starred in Table III of doc 003).

    ``m`` is superior highly composite if for some ``e > 0``, ``d(m) / m^e >= d(k) / k^e`` for
    every ``k > 1``. They are built by multiplying, in decreasing order of the critical
    exponent ``e(p, a) = log(1 + 1/a) / log p``, by the prime ``p`` whose next exponent is ``a``.

    Notes
    -----
    Complexity: O(s log s) for the s numbers returned.

    >>> superior_highly_composite(10**6).tolist()
    [2, 6, 12, 60, 120, 360, 2520, 5040, 55440, 720720]
    """
    limit = check_int(limit, "limit", "superior_highly_composite", lo=1, hi=MAX_VALUE)
    primes = primes_up_to(200).tolist()
    # heap of (-critical exponent, prime index, next exponent)
    heap = [(-math.log(2.0) / math.log(p), i, 1) for i, p in enumerate(primes)]
    heapq.heapify(heap)
    value, out = 1, []
    while heap:
        _neg, i, a = heapq.heappop(heap)
        p = primes[i]
        if value > limit // p:
            break
        value *= p
        out.append(value)
        heapq.heappush(heap, (-math.log1p(1.0 / (a + 1)) / math.log(p), i, a + 1))
    return np.array(out, dtype=np.int64)


def is_smooth(m: int, y: int) -> bool:
    """True if no prime factor of ``m`` exceeds ``y`` (:func:`factorize`).

    Notes
    -----
    Complexity: that of :func:`factorize`.

    >>> is_smooth(50, 5), is_smooth(14, 5)
    (True, False)
    """
    y = check_int(y, "y", "is_smooth", lo=1)
    return all(p <= y for p in factorize(m))


def smooth_numbers(x: int, z: int, y: int) -> np.ndarray:
    """The ``y``-smooth integers in ``[x, x + z]``, ascending (Section IV-B of doc 003).

    A number is ``y``-smooth if none of its prime factors exceeds ``y``. The sieve is the
    algorithm of Section IV-B as intended (ERRATA.md): for every prime ``p <= y`` and every
    power ``p^j <= x + z``, ``log p`` is added to each multiple of ``p^j`` in the interval;
    afterwards ``w[i] = sum_j gamma_j log p_j`` over the ``y``-smooth part of ``x + i``, and
    ``x + i`` is smooth iff ``w[i] = log(x + i)`` (Eq. 13). A non-smooth number misses at
    least ``log(y') >= log 2`` (``y'`` its prime factor above ``y``), so the float test
    ``w[i] >= log(x + i) - 0.5`` is exact.

    Parameters
    ----------
    x : int
        Start of the interval, ``>= 1``.
    z : int
        Length of the interval, ``0 <= z <= MAX_INTERVAL`` (2**24; the paper's ``z``).
    y : int
        Smoothness bound, ``1 <= y <= MAX_PRIME`` (10**8).

    Returns
    -------
    numpy.ndarray
        int64 array of the ``y``-smooth numbers in ``[x, x + z]``.

    Raises
    ------
    InvalidParameterError
        On non-integer, out-of-range or too large arguments.

    Notes
    -----
    Complexity: O(z log log y + pi(y) log(x + z)) (numba); an interval of 10^6 takes a few
    ms after compilation. The paper requires ``z > x``; any ``z >= 0`` is accepted here.

    >>> smooth_numbers(90, 10, 5).tolist()
    [90, 96, 100]
    """
    from ._kernels import log_smooth_sieve

    x = check_int(x, "x", "smooth_numbers", lo=1, hi=MAX_VALUE)
    z = check_int(z, "z", "smooth_numbers", lo=0, hi=MAX_INTERVAL)
    y = check_int(y, "y", "smooth_numbers", lo=1, hi=MAX_PRIME)
    if x + z > MAX_VALUE:
        raise param_error("z", "smooth_numbers", f"<= {MAX_VALUE - x} for x = {x}", z)
    primes = primes_up_to(min(y, x + z))
    logs = np.log(primes.astype(np.float64))
    w = log_smooth_sieve(x, z, primes, logs)
    values = np.arange(x, x + z + 1, dtype=np.int64)
    target = np.log(values.astype(np.float64))
    return values[w >= target - 0.5]


def _enumerate_smooth(lo: int, hi: int, y: int) -> np.ndarray:
    """The y-smooth numbers in [lo, hi] by enumerating products of primes <= y (small y)."""
    primes = primes_up_to(y).tolist()
    out: list[int] = []

    def rec(idx: int, value: int) -> None:
        if value >= lo:
            out.append(value)
        for j in range(idx, len(primes)):
            p = primes[j]
            if value > hi // p:
                break
            rec(j, value * p)

    rec(0, 1)
    return np.array(sorted(out), dtype=np.int64)


def dickman_rho(u: float | np.ndarray, step: float = 1e-3) -> float | np.ndarray:
    """Dickman-de Bruijn function ``rho(u)`` (Eq. 12 of doc 003).

    ``rho(u) = 1`` on ``[0, 1]`` and ``u rho'(u) = -rho(u - 1)`` beyond (equivalent to the
    integral form of Eq. 12); by Eq. 11 the number of ``y``-smooth integers near ``x`` is
    about ``rho(log x / log y)`` per integer. Solved with the trapezoidal rule on a grid
    of ``step``.

    Notes
    -----
    Complexity: O(max(u) / step).

    >>> round(float(dickman_rho(2.0)), 6)  # 1 - ln 2
    0.306853
    """
    arr = check_reals(u, "u", "dickman_rho", 0, MAX_DICKMAN_U)
    if arr.size == 0:
        return arr.copy()
    step = check_float(step, "step", "dickman_rho", 0, 0.1, lo_open=True)
    umax = max(1.0, float(arr.max()))
    if umax / step > MAX_DICKMAN_STEPS:
        raise param_error("step", "dickman_rho", f">= max(u) / {MAX_DICKMAN_STEPS} = {umax / MAX_DICKMAN_STEPS:.3g} "
                          "(the grid's points)", step)
    n1 = int(round(1.0 / step))
    h = 1.0 / n1
    total = int(math.ceil(umax / h)) + 1
    rho = np.ones(total + 1, dtype=np.float64)
    grid = np.arange(total + 1, dtype=np.float64) * h
    for i in range(n1 + 1, total + 1):
        # u rho' = -rho(u - 1): trapezoid on [u_{i-1}, u_i]
        f_prev = -rho[i - 1 - n1] / grid[i - 1]
        f_cur = -rho[i - n1] / grid[i]
        rho[i] = rho[i - 1] + 0.5 * h * (f_prev + f_cur)
    out = np.interp(arr, grid, rho)
    return float(out) if np.ndim(u) == 0 else out
