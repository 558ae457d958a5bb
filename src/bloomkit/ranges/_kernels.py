"""numba kernels of :mod:`bloomkit.ranges` (compiled lazily, cached on disk): the model, the
simulation and the keys.

* the analytic model of Eq. (14) for the optimizers' inner loops,
* the Phase 2 gradient re-allocation of Figure 7,
* the simulation program of Section V,
* the keys ``"name:value"`` of numeric values hashed without building strings, and their
  probe positions set in a filter or in the columns of a ProfileIndex.

The kernels of :class:`bloomkit.ranges.index.ProfileIndex` (the bit-sliced AND, the compiled
search, the interval index) are in :mod:`bloomkit.ranges._index_kernels`.
"""

from __future__ import annotations

import math

import numpy as np

from .._engine.jit import jit_inline, jit_mut, jit_read
from .._engine.kernels import fastmod, popcount_words, probe, reducer, xxh64


@jit_read
def fgo_fill(R: float, n: float, d: float, s: float, k: float, q: float) -> float:
    """Eq. (14) with fill probability q = 1 - p (scalar twin of model.f_go_fill)."""
    out_count = R - n
    if out_count <= 0.0:
        return 0.0
    rr = math.ceil(k / s) - 1.0
    qs = q**s
    if abs(1.0 - qs) > 1e-15:
        geo = qs * (1.0 - q ** (rr * s)) / (1.0 - qs)
    else:
        geo = rr
    rest = out_count - (d - 1.0) - 2.0 * rr * d
    if rest < 0.0:
        rest = 0.0
    f = ((d - 1.0) + 2.0 * d * geo + rest * q**k) / out_count
    return min(f, 1.0)


@jit_read
def fill_of(b: float, m: float, exact: bool) -> float:
    """1 - p after b hashed positions: Eq. (36) / m."""
    if exact:
        return 1.0 - math.exp(b * math.log1p(-1.0 / m))
    return 1.0 - math.exp(-b / m)


@jit_read
def attr_bits(n: float, d: float, s: float, k: float, text: bool) -> float:
    """b_i: Eq. (11) for numeric attributes (Eqs. 21, 28), k for text."""
    if text:
        return k
    return (n - 1.0) * s / d + k


@jit_read
def attr_fpr(R: float, n: float, d: float, s: float, k: float, text: bool, q: float) -> float:
    if text:
        return q**k
    return fgo_fill(R, n, d, s, k, q)


@jit_read
def total_fpr(
    R: np.ndarray, n: np.ndarray, text: np.ndarray, d: np.ndarray, s: np.ndarray, kk: np.ndarray, m: float, exact: bool
) -> tuple[float, float]:
    """(f_T, b): the sum of the attributes' rates at the shared fill of b = sum b_i."""
    b = 0.0
    for i in range(R.shape[0]):
        b += attr_bits(n[i], d[i], s[i], kk[i], text[i])
    q = fill_of(b, m, exact)
    f = 0.0
    for i in range(R.shape[0]):
        f += attr_fpr(R[i], n[i], d[i], s[i], kk[i], text[i], q)
    return f, b


@jit_read
def _step_up(d: int, s: int, k: int, coarse: float) -> tuple[int, int, bool]:
    # one step towards more hashed positions on (..., (3,1), (2,1), (1,1), (1,2), ...)
    if d > 1:
        delta = max(1, int(d * coarse))
        return max(1, d - delta), 1, True
    if s < k:
        return 1, s + 1, True
    return d, s, False


@jit_read
def _step_down(d: int, s: int, dmax: int, coarse: float) -> tuple[int, int, bool]:
    if d == 1 and s > 1:
        return 1, s - 1, True
    if d < dmax:
        delta = max(1, int(d * coarse))
        return min(dmax, d + delta), 1, True
    return d, s, False


@jit_read
def _derivs(
    R: np.ndarray, n: np.ndarray, text: np.ndarray, d: np.ndarray, s: np.ndarray, kk: np.ndarray, q: float
) -> tuple[float, float]:
    """First and second derivatives of f_T = sum_i f_i with respect to the fill q = 1 - p."""
    d1 = 0.0
    d2 = 0.0
    for j in range(R.shape[0]):
        k = kk[j]
        if text[j]:
            d1 += k * q ** (k - 1.0)
            d2 += k * (k - 1.0) * q ** (k - 2.0) if k >= 2.0 else 0.0
            continue
        out_count = R[j] - n[j]
        if out_count <= 0.0:
            continue
        sj = s[j]
        rr = math.ceil(k / sj) - 1.0
        rest = out_count - (d[j] - 1.0) - 2.0 * rr * d[j]
        if rest < 0.0:
            rest = 0.0
        a1 = rest * k * q ** (k - 1.0)
        a2 = rest * k * (k - 1.0) * q ** (k - 2.0) if k >= 2.0 else 0.0
        for i in range(1, int(rr) + 1):
            e = i * sj
            a1 += 2.0 * d[j] * e * q ** (e - 1.0)
            if e >= 2.0:
                a2 += 2.0 * d[j] * e * (e - 1.0) * q ** (e - 2.0)
        d1 += a1 / out_count
        d2 += a2 / out_count
    return d1, d2


@jit_read
def phase2(
    R: np.ndarray, n: np.ndarray, text: np.ndarray, d: np.ndarray, s: np.ndarray, kk: np.ndarray, m: float,
    exact: bool, dmax: np.ndarray, k_moves: bool, kmax: int, max_steps: int, coarse: float,
) -> tuple[float, float, int]:
    """Figure 7, lines 8-14: re-allocate hashed positions while f_T decreases.

    Candidate moves per numeric attribute: one step up or down the (d, s) sequence; with
    ``k_moves`` also k_i +- 1 per attribute (per-attribute k, the report's future work).
    The move with the largest decrease of f_T per hashed position changed is taken
    ("improves f_T the most per bit change"). Arrays d, s, kk are updated in place.

    To keep a step O(attributes * r) instead of O(attributes^2 * r), a candidate's effect on
    the *other* attributes (through the shared fill q) is taken from a second-order Taylor
    expansion of f_T in q (the changes of q per step are below 1e-2, the remainder below
    1e-9 relative); the chosen move is then re-evaluated exactly and, should it not lower
    f_T, the step falls back to exact evaluation of every candidate. ``coarse > 0`` moves d by
    ``max(1, floor(d * coarse))`` instead of 1 (callers finish with ``coarse = 0``, Figure 7's
    unit steps). Returns (f_T, b, steps).
    """
    A = R.shape[0]
    f, b = total_fpr(R, n, text, d, s, kk, m, exact)
    steps = 0
    use_taylor = True
    while steps < max_steps:
        q = fill_of(b, m, exact)
        g1, g2 = _derivs(R, n, text, d, s, kk, q)
        best_score = 0.0
        best_i = -1
        best_d = 0
        best_s = 0
        best_k = 0
        for i in range(A):
            d0 = int(d[i])
            s0 = int(s[i])
            k0 = int(kk[i])
            fi_old = attr_fpr(R[i], n[i], d0, s0, k0, text[i], q)
            bi_old = attr_bits(n[i], d0, s0, k0, text[i])
            for mv in range(4):
                nd = d0
                ns = s0
                nk = k0
                ok = False
                if mv == 0 and not text[i]:
                    nd, ns, ok = _step_up(d0, s0, k0, coarse)
                elif mv == 1 and not text[i]:
                    nd, ns, ok = _step_down(d0, s0, int(dmax[i]), coarse)
                elif mv == 2 and k_moves and k0 < kmax:
                    nk = k0 + 1
                    if text[i]:
                        ns = nk
                    ok = True
                elif mv == 3 and k_moves and k0 > 1:
                    nk = k0 - 1
                    if text[i] or ns > nk:
                        ns = nk
                    ok = True
                if not ok:
                    continue
                b2 = b - bi_old + attr_bits(n[i], nd, ns, nk, text[i])
                if use_taylor:
                    q2 = fill_of(b2, m, exact)
                    dq = q2 - q
                    others = (f - fi_old) + (g1 - 0.0) * dq + 0.5 * g2 * dq * dq
                    # remove attribute i's own share of the expansion, add its exact new value
                    own_old_at_q2 = attr_fpr(R[i], n[i], d0, s0, k0, text[i], q2)
                    own_lin = fi_old
                    f2 = others - (own_old_at_q2 - own_lin) + attr_fpr(R[i], n[i], nd, ns, nk, text[i], q2)
                else:
                    d[i] = nd
                    s[i] = ns
                    kk[i] = nk
                    f2, b2 = total_fpr(R, n, text, d, s, kk, m, exact)
                    d[i] = d0
                    s[i] = s0
                    kk[i] = k0
                if f2 < f * (1.0 - 1e-13):
                    db = abs(b2 - b)
                    score = (f2 - f) / db if db > 1e-12 else (f2 - f) * 1e12
                    if best_i < 0 or score < best_score:
                        best_score = score
                        best_i = i
                        best_d = nd
                        best_s = ns
                        best_k = nk
        if best_i < 0:
            if use_taylor:
                use_taylor = False  # confirm the local optimum exactly
                continue
            break
        d0 = d[best_i]
        s0 = s[best_i]
        k0 = kk[best_i]
        d[best_i] = best_d
        s[best_i] = best_s
        kk[best_i] = best_k
        f_new, b_new = total_fpr(R, n, text, d, s, kk, m, exact)
        if not f_new < f:
            d[best_i] = d0
            s[best_i] = s0
            kk[best_i] = k0
            if use_taylor:
                use_taylor = False
                continue
            break
        f = f_new
        b = b_new
        steps += 1
        use_taylor = True
    return f, b, steps


@jit_read
def coord_best(
    R: np.ndarray, n: np.ndarray, text: np.ndarray, d: np.ndarray, s: np.ndarray, kk: np.ndarray, m: float,
    exact: bool, i: int, opt_d: np.ndarray, opt_s: np.ndarray, opt_k: np.ndarray,
) -> tuple[float, int]:
    """Exact f_T of every option (opt_d[j], opt_s[j], opt_k[j]) of attribute i, others fixed.

    Returns (best f_T, index of the best option).
    """
    b_others = 0.0
    for j in range(R.shape[0]):
        if j != i:
            b_others += attr_bits(n[j], d[j], s[j], kk[j], text[j])
    best = math.inf
    best_j = -1
    for o in range(opt_d.shape[0]):
        b = b_others + attr_bits(n[i], opt_d[o], opt_s[o], opt_k[o], text[i])
        q = fill_of(b, m, exact)
        f = attr_fpr(R[i], n[i], opt_d[o], opt_s[o], opt_k[o], text[i], q)
        for j in range(R.shape[0]):
            if j != i:
                f += attr_fpr(R[j], n[j], d[j], s[j], kk[j], text[j], q)
            if f >= best:
                break
        if f < best:
            best = f
            best_j = o
    return best, best_j


# ---------------------------------------------------------------------------------------------
# simulation (Section V)


@jit_read
def simulate_ranges(
    pos: np.ndarray, R: int, n: int, d: int, s: int, k: int, m: int, starts: np.ndarray
) -> tuple[float, np.ndarray]:
    """Mean false positive rate over inserted ranges [a, a+n-1] (a in ``starts``, 0-based).

    ``pos[g, j]`` is position j of group g (group g holds values g*d .. g*d+d-1 relative to the
    scope's lower end). A value in group g sets the s positions of groups g, g+1, ..., the last
    group contributing the remaining k - r*s positions (Figures 2-4). For each range the filter
    is built and every value of the scope outside the range is tested.
    """
    r = (k + s - 1) // s - 1
    last = k - r * s
    ngroups_scope = (R + d - 1) // d
    words = np.zeros((m + 63) // 64, dtype=np.uint64)
    total = 0.0
    fp_counts = np.zeros(starts.shape[0], dtype=np.int64)
    for t in range(starts.shape[0]):
        a = starts[t]
        bnd = a + n - 1
        words[:] = 0
        ga = a // d
        gb = bnd // d
        for g in range(ga, gb + r + 1):
            cnt = s if g < gb + r else last
            if r == 0:
                cnt = k
            for j in range(cnt):
                p = pos[g, j]
                words[p >> 6] |= np.uint64(1) << np.uint64(p & 63)
        fp = 0
        for g in range(ngroups_scope):
            # values of group g inside the scope and outside the range
            v0 = g * d
            v1 = min(v0 + d - 1, R - 1)
            inside_lo = max(v0, a)
            inside_hi = min(v1, bnd)
            n_in = inside_hi - inside_lo + 1 if inside_hi >= inside_lo else 0
            n_out = (v1 - v0 + 1) - n_in
            if n_out == 0:
                continue
            hit = True
            for jj in range(r + 1):
                cnt = s if jj < r else last
                if r == 0:
                    cnt = k
                for j in range(cnt):
                    p = pos[g + jj, j]
                    if (words[p >> 6] >> np.uint64(p & 63)) & np.uint64(1) == 0:
                        hit = False
                        break
                if not hit:
                    break
            if hit:
                fp += n_out
        fp_counts[t] = fp
        total += fp / (R - n)
    return total / max(starts.shape[0], 1), fp_counts


# ---------------------------------------------------------------------------------------------
# keys and their positions


DIGIT_PAIRS = np.frombuffer("".join(f"{i:02d}" for i in range(100)).encode("ascii"), dtype=np.uint8).copy()
"""The ASCII digits of 00 .. 99 (two decimal digits per division in :func:`int_key_hashes`)."""


@jit_read
def _bytes_hash(buf: np.ndarray, start: int, length: int, seed: np.uint64) -> np.uint64:
    """:func:`xxh64` behind a call (its inlined body compiles once, here)."""
    return xxh64(buf, start, length, seed)


@jit_read
def _int_key_hash(buf: np.ndarray, p: int, v: int, seed: np.uint64, pairs: np.ndarray) -> np.uint64:
    """XXH64 with ``seed`` of ``buf[:p]`` (the prefix, already there) followed by the decimal
    text of ``v``, written into ``buf`` from ``p`` on (``buf`` has room for 21 more bytes)."""
    ten = np.uint64(10)
    hundred = np.uint64(100)
    length = p
    if v < 0:
        buf[length] = 45  # "-"
        length += 1
        u = np.uint64(-v)
    else:
        u = np.uint64(v)
    nd = 1
    t = u
    while t >= ten:
        t //= ten
        nd += 1
    end = length + nd
    i = end
    while u >= hundred:
        q = u // hundred
        r = np.int64(u - q * hundred)
        u = q
        i -= 2
        buf[i] = pairs[2 * r]
        buf[i + 1] = pairs[2 * r + 1]
    if u >= ten:
        r = np.int64(u)
        buf[i - 2] = pairs[2 * r]
        buf[i - 1] = pairs[2 * r + 1]
    else:
        buf[i - 1] = np.uint8(48 + np.int64(u))
    return _bytes_hash(buf, 0, end, seed)


@jit_read
def int_key_hashes(prefix: np.ndarray, values: np.ndarray, seed: np.uint64, pairs: np.ndarray) -> np.ndarray:
    """XXH64 with ``seed`` of the UTF-8 keys ``prefix + decimal(value)`` of int64 values: with
    the str tag seed, the hash bloomkit gives the str key ``f"{name}:{value}"`` (tested equal),
    without building the strings. ``pairs`` is :data:`DIGIT_PAIRS`."""
    n = values.shape[0]
    p = prefix.shape[0]
    buf = np.empty(p + 21, dtype=np.uint8)
    buf[:p] = prefix
    out = np.empty(n, dtype=np.uint64)
    for j in range(n):
        out[j] = _int_key_hash(buf, p, values[j], seed, pairs)
    return out


@jit_inline
def _probes_set(words: np.ndarray, h1: np.uint64, count: int, m: np.uint64, M: np.uint64) -> bool:
    """Whether the first ``count`` probe bits ``G_i mod m`` of a key are all set."""
    for i in range(count):
        x = fastmod(probe(h1, i), m, M)
        if not (words[x >> np.uint64(6)] >> (x & np.uint64(63))) & np.uint64(1):
            return False
    return True


@jit_read
def key_in_words(words: np.ndarray, m: int, h1: np.uint64, count: int) -> bool:
    """A text point query: the first ``count`` (k) probe bits of one key's h1 all set.

    C twin: ``PointTest.test`` of _speedups.c, section "PointTest"."""
    mu = np.uint64(m)
    return _probes_set(words, h1, count, mu, reducer(mu))


@jit_read
def point_in_words(words: np.ndarray, m: int, prefix: np.ndarray, first: int, d: int, nkeys: int, s: int,
                   last: int, seed: np.uint64, pairs: np.ndarray) -> bool:
    """A numeric point query (Figures 2-4): the keys ``prefix + decimal(first + t d)`` of the
    groups g .. g + r of the value (``nkeys`` = r + 1), hashed as :func:`int_key_hashes`; key t
    needs its first s probe bits set, the last key its first ``last`` = k - r s.

    C twin: ``PointTest.test`` of _speedups.c, section "PointTest".
    """
    mu = np.uint64(m)
    M = reducer(mu)
    h = int_key_hashes(prefix, first + np.arange(nkeys, dtype=np.int64) * d, seed, pairs)
    for t in range(nkeys):
        if not _probes_set(words, h[t], s if t < nkeys - 1 else last, mu, M):
            return False
    return True


@jit_read
def count_positions(h1: np.ndarray, counts: np.ndarray, m: np.uint64) -> np.ndarray:
    """The first ``counts[j]`` probe positions ``G_i mod m`` of every key j, flattened."""
    M = reducer(m)
    out = np.empty(counts.sum(), dtype=np.int64)
    t = 0
    for j in range(h1.shape[0]):
        for i in range(counts[j]):
            out[t] = np.int64(fastmod(probe(h1[j], i), m, M))
            t += 1
    return out


@jit_mut
def set_bits_counts(words: np.ndarray, h1: np.ndarray, counts: np.ndarray, m: np.uint64) -> None:
    """Set the first ``counts[j]`` probe bits of every key j in a filter's words."""
    M = reducer(m)
    for j in range(h1.shape[0]):
        for i in range(counts[j]):
            p = fastmod(probe(h1[j], i), m, M)
            words[p >> np.uint64(6)] |= np.uint64(1) << (p & np.uint64(63))


@jit_mut
def set_columns_h1(slices: np.ndarray, h1: np.ndarray, counts: np.ndarray, slots: np.ndarray, m: np.uint64) -> int:
    """Set the first ``counts[j]`` probe bits of key j in column ``slots[j]`` of a bit-sliced
    index; returns how many bits were 0 (one call for a whole batch of profiles)."""
    M = reducer(m)
    new = 0
    for j in range(h1.shape[0]):
        slot = slots[j]
        w = slot >> 6
        bit = np.uint64(1) << np.uint64(slot & 63)
        for i in range(counts[j]):
            row = fastmod(probe(h1[j], i), m, M)
            old = slices[row, w]
            if old & bit == 0:
                new += 1
                slices[row, w] = old | bit
    return new


@jit_read
def transpose64(a: np.ndarray) -> None:
    """Transpose a 64 x 64 bit matrix in place: bit t of ``a[b]`` becomes bit b of ``a[t]``
    (least significant bit first; recursive block swaps, Hacker's Delight 7-3)."""
    j = 32
    mask = np.uint64(0x00000000FFFFFFFF)
    while j != 0:
        sj = np.uint64(j)
        for k in range(64):
            if k & j == 0:
                t = ((a[k] >> sj) ^ a[k + j]) & mask
                a[k + j] ^= t
                a[k] ^= t << sj
        j >>= 1
        mask ^= mask << np.uint64(j)


@jit_mut
def set_columns_blocked(slices: np.ndarray, h1: np.ndarray, counts: np.ndarray, keyrows: np.ndarray,
                        part_starts: np.ndarray, first: int, n: int, m: np.uint64) -> int:
    """:func:`set_columns_h1` for a batch of ``n`` profiles (columns ``first + row``), 64 at a
    time: the filters of the profiles sharing a column word are built in a local 64 x m bit
    matrix, transposed 64 x 64 bits at a time and ORed into the rows (one write per row and
    word instead of one per position). Keys come in parts (one per attribute, ``part_starts``),
    each sorted by record. Returns the number of bits set."""
    M = reducer(m)
    mbits = np.int64(m)
    mw = (mbits + 63) // 64
    local = np.zeros((mw, 64), dtype=np.uint64)  # local[c, t]: word c of profile t's filter
    nparts = part_starts.shape[0] - 1
    cursor = part_starts[:nparts].copy()
    new = 0
    last = first + n - 1
    for w in range(first >> 6, (last >> 6) + 1):
        hi = min((w + 1) * 64 - first, n)
        local[:, :] = 0
        for p in range(nparts):
            j = cursor[p]
            end = part_starts[p + 1]
            while j < end and keyrows[j] < hi:
                t = (first + keyrows[j]) & 63
                for i in range(counts[j]):
                    pos = fastmod(probe(h1[j], i), m, M)
                    local[pos >> np.uint64(6), t] |= np.uint64(1) << (pos & np.uint64(63))
                j += 1
            cursor[p] = j
        for c in range(mw):
            block = local[c]
            transpose64(block)  # block[b]: bit t set iff profile t has position 64 c + b
            new += popcount_words(block)
            for b in range(64 if 64 * c + 64 <= mbits else mbits - 64 * c):
                if block[b]:
                    slices[64 * c + b, w] |= block[b]
    return new
