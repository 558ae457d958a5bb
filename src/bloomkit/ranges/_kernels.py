"""numba kernels of :mod:`bloomkit.ranges` (compiled lazily, cached on disk).

* the analytic model of Eq. (14) for the optimizers' inner loops,
* the Phase 2 gradient re-allocation of Figure 7,
* the simulation program of Section V,
* the keys ``"name:value"`` of numeric values hashed without building strings, and their
  probe positions set in a filter or in the columns of a ProfileIndex,
* the bit-sliced AND of :class:`bloomkit.ranges.index.ProfileIndex`.
"""

from __future__ import annotations

import math

import numpy as np

from .._engine.jit import jit_inline, jit_mut, jit_read
from .._engine.kernels import fastmod, popcount64, popcount_words, probe, reducer, xxh64


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

    C twin: ``PointTest.test`` of ``_speedups.c`` (section "PointTest"); kept equal by
    tests/test_single_items.py::test_point_query_equals_the_record_path.
    """
    mu = np.uint64(m)
    return _probes_set(words, h1, count, mu, reducer(mu))


@jit_read
def point_in_words(words: np.ndarray, m: int, prefix: np.ndarray, first: int, d: int, nkeys: int, s: int,
                   last: int, seed: np.uint64, pairs: np.ndarray) -> bool:
    """A numeric point query (Figures 2-4): the keys ``prefix + decimal(first + t d)`` of the
    groups g .. g + r of the value (``nkeys`` = r + 1), hashed as :func:`int_key_hashes`; key t
    needs its first s probe bits set, the last key its first ``last`` = k - r s.

    C twin: ``PointTest.test`` of ``_speedups.c`` (section "PointTest"); kept equal by
    tests/test_single_items.py::test_point_query_equals_the_record_path.
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


# ---------------------------------------------------------------------------------------------
# bit-sliced profile index


@jit_read
def sliced_and_blocks(slices: np.ndarray, rows: np.ndarray, active: np.ndarray, block: int) -> np.ndarray:
    """AND of bit rows ``rows`` of ``slices`` (m x words) and of ``active``, block by block.

    Each block of ``block`` words starts from ``active`` and is ANDed with one row after the
    other; a block stops as soon as it is all zero (for filters about half full that happens
    after ~log2(64 * block) rows), so a query touches far fewer than len(rows) rows per block.
    """
    nwords = active.shape[0]
    out = np.zeros(nwords, dtype=np.uint64)
    nr = rows.shape[0]
    for start in range(0, nwords, block):
        stop = min(start + block, nwords)
        for w in range(start, stop):
            out[w] = active[w]
        for t in range(nr):
            row = rows[t]
            anyv = np.uint64(0)
            for w in range(start, stop):
                v = out[w] & slices[row, w]
                out[w] = v
                anyv |= v
            if anyv == 0:
                break
    return out


@jit_mut
def set_columns(slices: np.ndarray, bit_rows: np.ndarray, slots: np.ndarray) -> int:
    """Set bit ``slots[i]`` in row ``bit_rows[i]`` for every i; returns how many bits were 0."""
    new = 0
    for i in range(bit_rows.shape[0]):
        slot = slots[i]
        w = slot >> 6
        bit = np.uint64(1) << np.uint64(slot & 63)
        old = slices[bit_rows[i], w]
        if old & bit == 0:
            new += 1
            slices[bit_rows[i], w] = old | bit
    return new


@jit_mut
def clear_column(slices: np.ndarray, slot: int) -> int:
    """Clear column ``slot`` (bit ``slot`` of every row); returns how many bits were set."""
    w = slot >> 6
    bit = np.uint64(1) << np.uint64(slot & 63)
    was = 0
    for j in range(slices.shape[0]):
        v = slices[j, w]
        if v & bit:
            was += 1
            slices[j, w] = v & ~bit
    return was


@jit_mut
def set_bit_range(words: np.ndarray, lo: int, hi: int) -> None:
    """Set bits lo .. hi - 1 of a uint64 word array."""
    for i in range(lo, hi):
        words[i >> 6] |= np.uint64(1) << np.uint64(i & 63)


@jit_mut
def transpose_into(slices: np.ndarray, filters: np.ndarray, first_slot: int, m: int) -> None:
    """Write filters (N x words, bit j of filter i) into columns first_slot.. of slices."""
    for i in range(filters.shape[0]):
        slot = first_slot + i
        w = slot >> 6
        bit = np.uint64(1) << np.uint64(slot & 63)
        for j in range(m):
            if (filters[i, j >> 6] >> np.uint64(j & 63)) & np.uint64(1):
                slices[j, w] |= bit


@jit_read
def or_of_ands(slices: np.ndarray, rows: np.ndarray, offsets: np.ndarray, base: np.ndarray, block: int) -> np.ndarray:
    """``base & OR_g (AND of rows[offsets[g]:offsets[g+1]])``, block by block with early exits.

    Used for "some value of the query range is in the profile": one AND per group of the range.
    """
    nwords = base.shape[0]
    out = np.zeros(nwords, dtype=np.uint64)
    acc = np.empty(block, dtype=np.uint64)
    ng = offsets.shape[0] - 1
    for start in range(0, nwords, block):
        stop = min(start + block, nwords)
        width = stop - start
        anybase = np.uint64(0)
        for w in range(start, stop):
            anybase |= base[w]
        if anybase == 0:
            continue
        for g in range(ng):
            for w in range(width):
                acc[w] = base[start + w] & ~out[start + w]  # only profiles not yet found
            for t in range(offsets[g], offsets[g + 1]):
                row = rows[t]
                anyv = np.uint64(0)
                for w in range(width):
                    v = acc[w] & slices[row, start + w]
                    acc[w] = v
                    anyv |= v
                if anyv == 0:
                    break
            for w in range(width):
                out[start + w] |= acc[w]
    return out


# ---------------------------------------------------------------------------------------------
# per-profile fill, compaction and the per-query model of ProfileIndex


@jit_read
def column_fills(slices: np.ndarray, first: int, n: int) -> np.ndarray:
    """The number of set bits of columns ``first .. first + n - 1`` of a bit-sliced index (the
    fill ``c`` of each profile's filter, ``1 - p = c / m``): per column word a bit-sliced
    counter (a carry-save adder over the m rows: ~2 word operations per row), then the
    counts read out of its bit planes. Complexity: O(m n / 64 + n log m)."""
    m = slices.shape[0]
    out = np.zeros(n, dtype=np.int64)
    if n <= 0:
        return out
    nplanes = 1
    while (1 << nplanes) <= m:
        nplanes += 1
    planes = np.zeros(nplanes, dtype=np.uint64)
    last = first + n - 1
    for w in range(first >> 6, (last >> 6) + 1):
        planes[:] = 0
        for j in range(m):
            carry = slices[j, w]
            b = 0
            while carry != 0:
                t = planes[b] & carry
                planes[b] ^= carry
                carry = t
                b += 1
        for slot in range(max(first, w * 64), min(last, w * 64 + 63) + 1):
            t = np.uint64(slot & 63)
            c = 0
            for b in range(nplanes):
                c |= int((planes[b] >> t) & np.uint64(1)) << b
            out[slot - first] = c
    return out


@jit_read
def gather_columns_into(slices: np.ndarray, src: np.ndarray, out: np.ndarray) -> None:
    """Write into ``out`` (a new, private (m, words) array) the columns ``src`` of ``slices``:
    column ``t`` of ``out`` is column ``src[t]`` (the compaction of a ProfileIndex: its live
    columns, in order, packed from slot 0). Complexity: O(m len(src))."""
    m = slices.shape[0]
    n = src.shape[0]
    one = np.uint64(1)
    for w in range((n + 63) // 64):
        hi = min(n, w * 64 + 64)
        for j in range(m):
            acc = np.uint64(0)
            for t in range(w * 64, hi):
                s = src[t]
                acc |= ((slices[j, s >> 6] >> np.uint64(s & 63)) & one) << np.uint64(t & 63)
            out[j, w] = acc


@jit_read
def intersect_pass_tables(groups: int, s: int, k: int, fills: np.ndarray, span: int) -> np.ndarray:
    """P(some key of a query range passes) for the intersect search of one numeric attribute:
    ``out[j, c]`` for a profile filter of fill ``q = fills[c]`` (each word it does not cover
    is set with probability q), row 0 for a profile none of whose keys shares a word with the
    query's, row ``j`` (1 .. r) for a profile whose keys cover the query's last (or, by
    symmetry, first) words from group ``j`` past its range on (see
    :func:`bloomkit.ranges.model.intersect_pass_probability`).

    The query's ``groups`` keys are windows of k words starting every s words of a sequence of
    ``L = (groups - 1) s + k`` words; a forward pass over the words keeps, per c, the
    distribution of the run of consecutive set words (0 .. k) with the mass of runs that
    completed a key removed. A range of more than ``span`` groups runs ``span`` periods of s
    words exactly, then jumps by the per-period survival ratio (the run distribution is
    stationary by then). Complexity: O(min(groups, span) s k len(fills))."""
    r = (k + s - 1) // s - 1
    last = k - r * s
    nc = fills.shape[0]
    out = np.zeros((r + 1, nc), dtype=np.float64)
    dist = np.zeros((nc, k + 1), dtype=np.float64)
    prev_total = np.ones(nc, dtype=np.float64)
    for c in range(nc):
        dist[c, 0] = 1.0
    L = (groups - 1) * s + k
    # key g ends at word r s + last - 1 + g s; record j is taken after word (groups - 1 + j) s - 1
    x = 0
    while x < L:
        period = x // s
        if x % s == 0 and period > r + span and period + 2 < groups:
            # jump: the run distribution is stationary; every period multiplies it by lam
            target = groups - 2
            for c in range(nc):
                tot = 0.0
                for t in range(k + 1):
                    tot += dist[c, t]
                lam = tot / prev_total[c] if prev_total[c] > 0.0 else 0.0
                f = lam ** (target - period) if lam > 0.0 else 0.0
                for t in range(k + 1):
                    dist[c, t] *= f
            x = target * s
            continue
        if x % s == 0:
            for c in range(nc):
                tot = 0.0
                for t in range(k + 1):
                    tot += dist[c, t]
                prev_total[c] = tot
        for c in range(nc):
            q = fills[c]
            stay = 0.0
            for t in range(k + 1):
                stay += dist[c, t]
            top = dist[c, k] + dist[c, k - 1]  # (k = 1: top = stay, and the loop below is empty)
            for t in range(k - 1, 0, -1):
                dist[c, t] = q * dist[c, t - 1]
            dist[c, k] = q * top  # runs of k or more stay in state k
            dist[c, 0] = (1.0 - q) * stay
        end = x - (r * s + last - 1)
        if end >= 0 and end % s == 0 and end // s < groups:  # a key ends here: a run of k passes it
            for c in range(nc):
                dist[c, k] = 0.0
        if (x + 1) % s == 0:
            j = (x + 1) // s - (groups - 1)
            if 1 <= j <= r:
                for c in range(nc):
                    keep = 0.0
                    for t in range(j * s):
                        keep += dist[c, t]
                    out[j, c] = 1.0 - keep
        x += 1
    for c in range(nc):
        tot = 0.0
        for t in range(k + 1):
            tot += dist[c, t]
        out[0, c] = 1.0 - tot
    return out


@jit_read
def _text_equal(text: np.ndarray, start: int, length: int, qtext: np.ndarray, qstart: int) -> bool:
    for i in range(length):
        if text[start + i] != qtext[qstart + i]:
            return False
    return True


@jit_read
def false_candidates(active: np.ndarray, nslots: int, fills: np.ndarray, present: np.ndarray, lo: np.ndarray,
                     hi: np.ndarray, tstart: np.ndarray, tlen: np.ndarray, text: np.ndarray, spec: np.ndarray,
                     qtext: np.ndarray, qpow: np.ndarray, jstop: np.ndarray, tables: np.ndarray,
                     step: int) -> tuple[float, float, float, int, int]:
    """(sum of p, sum of p (1 - p), sum of p^2, profiles not matching, profiles visited) of
    one query over the live profiles of a ProfileIndex with records (the profiles of every
    ``step``-th column word: 1 prices them all), where p is the probability that a profile is a
    false candidate: per profile, the exact verification decides whether it matches; a profile
    that does not is a candidate with probability ``q^J`` times the pass probabilities of its
    intersect-range attributes, where ``q = c / m`` is its own fill and J the query words its
    keys do not cover (:func:`bloomkit.ranges.model.uncovered_words`).

    ``spec`` has one row per query attribute: kind (0 text, 1 numeric ANDed: a point, or a
    range in subset mode, 2 a range in intersect mode), present column, record column, query
    ends qa, qb (scaled), base, d, s, r, last, k, query words (Q1 - Q0), Q0 (= ga s), table
    row, query text start, query text length, then ga, gb and the value bounds outside which a
    profile's range shares no word with the query's (below ``base + (ga - r) d``, from
    ``base + (gb + r + 1) d`` on); attributes that most profiles are far from come first.
    ``qpow[J, c] = (c / m)^J`` for small J; once ``J >= jstop[c]`` (``(c/m)^J`` below 1e-12) a
    non-matching profile's remaining attributes are not looked at and it counts 0 (an error
    of at most 1e-12 per profile). ``tables``: the rows of :func:`intersect_pass_tables`.
    Complexity: O(live profiles x query attributes).
    """
    na = spec.shape[0]
    kind = spec[:, 0].copy()
    pcol = spec[:, 1].copy()
    rcol = spec[:, 2].copy()
    qa = spec[:, 3].copy()
    qb = spec[:, 4].copy()
    base = spec[:, 5].copy()
    dd = spec[:, 6].copy()
    ss = spec[:, 7].copy()
    rr = spec[:, 8].copy()
    last = spec[:, 9].copy()
    kk = spec[:, 10].copy()
    qwords = spec[:, 11].copy()
    q0 = spec[:, 12].copy()
    tab = spec[:, 13].copy()
    qts = spec[:, 14].copy()
    qtl = spec[:, 15].copy()
    ga = spec[:, 16].copy()
    gb = spec[:, 17].copy()
    flo = spec[:, 18].copy()
    fhi = spec[:, 19].copy()
    jcap = qpow.shape[0] - 1
    m = qpow.shape[1] - 1
    total = 0.0
    var = 0.0
    sq = 0.0
    nonmatch = 0
    visited = 0
    one = np.uint64(1)
    for w in range(0, (nslots + 63) >> 6, step):
        word = active[w]
        if word == 0:
            continue
        for bit in range(64):
            if (word >> np.uint64(bit)) & one == 0:
                continue
            slot = w * 64 + bit
            visited += 1
            c = fills[slot]
            stop = jstop[c]
            J = 0
            mult = 1.0
            match = True
            for a in range(na):
                if not match and J >= stop:
                    break  # this profile's chance is below 1e-12 whatever the rest
                col = rcol[a]
                if not present[slot, pcol[a]]:
                    match = False
                    if kind[a] == 2:
                        mult *= tables[tab[a], c]
                    else:
                        J += qwords[a]
                    continue
                if kind[a] == 0:
                    n = qtl[a]
                    if tlen[slot, col] != n or not _text_equal(text, tstart[slot, col], n, qtext, qts[a]):
                        match = False
                        J += kk[a]
                    continue
                plo = lo[slot, col]
                phi = hi[slot, col]
                far = phi < flo[a] or plo >= fhi[a]  # no word of the profile's keys is the query's
                if kind[a] == 1:
                    if plo > qa[a] or qb[a] > phi:
                        match = False
                    if far:
                        J += qwords[a]
                        continue
                    s = ss[a]
                    p0 = ((plo - base[a]) // dd[a]) * s
                    p1 = ((phi - base[a]) // dd[a] + rr[a]) * s + last[a]
                    ov = min(p1, q0[a] + qwords[a]) - max(p0, q0[a])
                    J += qwords[a] - (ov if ov > 0 else 0)
                    continue
                if plo <= qb[a] and qa[a] <= phi:
                    continue  # overlaps the query range: matches, and one of its keys is the query's
                match = False
                if far:
                    mult *= tables[tab[a], c]
                    continue
                g0 = (plo - base[a]) // dd[a]
                g1 = (phi - base[a]) // dd[a]
                if g1 >= ga[a] and g0 <= gb[a]:
                    continue  # shares a group with the query range: a grouping false positive
                mult *= tables[tab[a] + (ga[a] - g1 if g1 < ga[a] else g0 - gb[a]), c]
            if match:
                continue
            nonmatch += 1
            if J >= stop:
                continue
            if J <= jcap:
                p = mult * qpow[J, c]
            else:
                p = mult * math.exp(J * math.log(c / m)) if c > 0 else 0.0
            total += p
            var += p * (1.0 - p)
            sq += p * p
    return total, var, sq, nonmatch, visited


# ---------------------------------------------------------------------------------------------
# the compiled search of ProfileIndex: one kernel call per query (hashing, the AND, verification)

Q_KIND, Q_PCOL, Q_RCOL, Q_K, Q_BASE, Q_D, Q_S, Q_R, Q_LAST, Q_PLEN = range(10)
"""Columns of a compiled query's ``spec`` (one int64 row per query attribute): kind (0 text, 1
numeric), its column of the records' ``present`` and of ``lo`` / ``hi`` (numeric) or ``tstart`` /
``tlen`` (text), k, and the plan's base, d, s, r, last = k - r s, and the length of its key
prefix ``"name:"`` in bytes. The values of one query are ``vals``: three int64 per attribute,
``(a, b, start)``: a numeric's scaled ends ``a <= b``, or a text's ``(0, length in bytes)``, and
where its key bytes (the prefix, then the text) start in ``qbytes``."""
Q_FIELDS = 10
NCLASS = 64
"""Width classes of the interval index: class c holds ranges of width (hi - lo) of bit length c."""


@jit_read
def _order_by(rows: np.ndarray, key: np.ndarray) -> None:
    """Sort ``rows`` in place by ``key[rows]`` (Shell sort, gaps 3h + 1: a few dozen rows per
    query; no library sort to compile)."""
    n = rows.shape[0]
    gap = 1
    while gap < n // 3:
        gap = 3 * gap + 1
    while gap >= 1:
        for i in range(gap, n):
            r = rows[i]
            kr = key[r]
            j = i
            while j >= gap and key[rows[j - gap]] > kr:
                rows[j] = rows[j - gap]
                j -= gap
            rows[j] = r
        gap //= 3


@jit_read
def query_positions(spec: np.ndarray, vals: np.ndarray, qbytes: np.ndarray, seed: np.uint64, m: np.uint64,
                    pairs: np.ndarray) -> np.ndarray:
    """The distinct positions BF(query) sets, sorted: what :meth:`Layout.positions` gives a
    record batch of the query (its keys: a text's ``"name:text"`` with k positions; a numeric
    ``[a, b]``'s groups ``g(a) .. g(b) + r``, s positions each, the last one ``last``), hashed
    in this one call (``seed``: the str tag seed); repeats removed through a bitmap of m bits.
    Complexity: O(keys x s + m / 64)."""
    na = spec.shape[0]
    total = 0
    maxp = 0
    for i in range(na):
        maxp = max(maxp, spec[i, Q_PLEN])
        if spec[i, Q_KIND] == 0:
            total += spec[i, Q_K]
        else:
            ga = (vals[3 * i] - spec[i, Q_BASE]) // spec[i, Q_D]
            gb = (vals[3 * i + 1] - spec[i, Q_BASE]) // spec[i, Q_D]
            total += (gb - ga + spec[i, Q_R]) * spec[i, Q_S] + spec[i, Q_LAST]
    pos = np.empty(total, dtype=np.int64)
    buf = np.empty(maxp + 21, dtype=np.uint8)
    M = reducer(m)
    t = 0
    for i in range(na):
        start = vals[3 * i + 2]
        plen = spec[i, Q_PLEN]
        if spec[i, Q_KIND] == 0:
            h = _bytes_hash(qbytes, start, plen + vals[3 * i + 1], seed)
            for j in range(spec[i, Q_K]):
                pos[t] = np.int64(fastmod(probe(h, j), m, M))
                t += 1
            continue
        base = spec[i, Q_BASE]
        d = spec[i, Q_D]
        ga = (vals[3 * i] - base) // d
        gz = (vals[3 * i + 1] - base) // d + spec[i, Q_R]
        for j in range(plen):
            buf[j] = qbytes[start + j]
        for g in range(ga, gz + 1):
            h = _int_key_hash(buf, plen, base + g * d, seed, pairs)
            cnt = spec[i, Q_LAST] if g == gz else spec[i, Q_S]
            for j in range(cnt):
                pos[t] = np.int64(fastmod(probe(h, j), m, M))
                t += 1
    seen = np.zeros((np.int64(m) + 63) >> 6, dtype=np.uint64)
    n = 0
    for j in range(total):
        w = pos[j] >> 6
        bit = np.uint64(1) << np.uint64(pos[j] & 63)
        if seen[w] & bit == 0:
            seen[w] |= bit
            n += 1
    out = np.empty(n, dtype=np.int64)
    n = 0
    for w in range(seen.shape[0]):
        word = seen[w]
        while word != np.uint64(0):
            low = word & (~word + np.uint64(1))
            out[n] = w * 64 + popcount64(low - np.uint64(1))
            word ^= low
            n += 1
    return out


@jit_read
def _record_ok(slot: int, spec: np.ndarray, vals: np.ndarray, qbytes: np.ndarray, present: np.ndarray, lo: np.ndarray,
               hi: np.ndarray, tstart: np.ndarray, tlen: np.ndarray, text: np.ndarray, intersect: bool) -> bool:
    """The record of ``slot`` satisfies the compiled query exactly (RecordStore.matches): every
    attribute present; texts equal; numeric: the query range inside the record's (subset) or
    overlapping it (``intersect``)."""
    for i in range(spec.shape[0]):
        if not present[slot, spec[i, Q_PCOL]]:
            return False
        c = spec[i, Q_RCOL]
        if spec[i, Q_KIND] == 0:
            n = vals[3 * i + 1]
            if tlen[slot, c] != n:
                return False
            s0 = tstart[slot, c]
            q0 = vals[3 * i + 2] + spec[i, Q_PLEN]
            for j in range(n):
                if text[s0 + j] != qbytes[q0 + j]:
                    return False
            continue
        a = vals[3 * i]
        b = vals[3 * i + 1]
        if intersect:
            if lo[slot, c] > b or a > hi[slot, c]:
                return False
        elif lo[slot, c] > a or b > hi[slot, c]:
            return False
    return True


@jit_read
def _append(out: np.ndarray, n: int, v: int) -> np.ndarray:
    if n == out.shape[0]:
        bigger = np.empty(2 * n, dtype=np.int64)
        bigger[:n] = out
        out = bigger
    out[n] = v
    return out


@jit_read
def compiled_search(slices: np.ndarray, active: np.ndarray, nslots: int, density: np.ndarray, spec: np.ndarray,
                    vals: np.ndarray, qbytes: np.ndarray, seed: np.uint64, pairs: np.ndarray, block: int,
                    verify: bool, present: np.ndarray, lo: np.ndarray, hi: np.ndarray, tstart: np.ndarray,
                    tlen: np.ndarray, text: np.ndarray) -> np.ndarray:
    """The subset search of a ProfileIndex in one call: the rows of BF(query)
    (:func:`query_positions`), sparsest first (``density``: set bits per row), ANDed with
    ``active`` block by block with early exits (:func:`sliced_and_blocks`), each candidate's id
    read off its block and, with ``verify``, its record checked (:func:`_record_ok`) before it
    is kept. No array of N / 64 words is allocated. Returns the sorted ids.

    Complexity: O(positions) hashing + O(rows x N / 64) word ANDs in the worst case (a block of
    ``block`` words stops once all zero) + O(candidates x query attributes)."""
    m = np.uint64(slices.shape[0])
    rows = query_positions(spec, vals, qbytes, seed, m, pairs)
    _order_by(rows, density)
    nr = rows.shape[0]
    nwords = min(active.shape[0], (nslots + 63) >> 6)
    out = np.empty(64, dtype=np.int64)
    n = 0
    acc = np.empty(block, dtype=np.uint64)
    zero = np.uint64(0)
    for start in range(0, nwords, block):
        width = min(block, nwords - start)
        anyv = zero
        for w in range(width):
            acc[w] = active[start + w]
            anyv |= acc[w]
        t = 0
        while anyv != zero and t < nr:
            row = rows[t]
            anyv = zero
            for w in range(width):
                v = acc[w] & slices[row, start + w]
                acc[w] = v
                anyv |= v
            t += 1
        if anyv == zero:
            continue
        for w in range(width):
            word = acc[w]
            while word != zero:
                low = word & (~word + np.uint64(1))
                slot = (start + w) * 64 + popcount64(low - np.uint64(1))
                word ^= low
                if verify and not _record_ok(slot, spec, vals, qbytes, present, lo, hi, tstart, tlen, text, False):
                    continue
                out = _append(out, n, slot)
                n += 1
    return out[:n].copy()


FENCE = 64
"""Every FENCE-th key of the interval index is copied into its ``fences`` (a small array the
binary searches start in: at 10^6 entries 16 KiB per column, in cache, where the keys are not)."""


@jit_read
def _fence_rank(fences: np.ndarray, i0: int, i1: int, x: int) -> int:
    """The fences of keys[i0:i1] below x (the rank of x to within FENCE keys)."""
    f0 = (i0 + FENCE - 1) // FENCE
    f1 = (i1 - 1) // FENCE + 1
    while f0 < f1:
        mid = (f0 + f1) >> 1
        if fences[mid] < x:
            f0 = mid + 1
        else:
            f1 = mid
    return f0


@jit_read
def _lower(entries: np.ndarray, fences: np.ndarray, i0: int, i1: int, x: int) -> int:
    """First index in keys[i0:i1] (sorted; ``keys = entries[0]``) whose key is >= x: first among
    the fences (``fences[j] = keys[j FENCE]``), then within the run of FENCE keys it leaves."""
    f0 = _fence_rank(fences, i0, i1, x)
    hi = min(i1, f0 * FENCE)  # keys[f0 FENCE] >= x (or past the segment)
    lo = max(i0, hi - FENCE)  # keys[(f0 - 1) FENCE] < x (or before the segment)
    while lo < hi:
        mid = (lo + hi) >> 1
        if entries[0, mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


@jit_read
def _class_bounds(classes: np.ndarray, c: int, cl: int, a: int, b: int, intersect: bool) -> tuple[int, int, int, int]:
    """(segment start, end, lowest, highest lower end) of the entries of width class ``cl`` of
    interval column ``c`` that can satisfy the query ``[a, b]`` (relative to the base): subset
    ``b - W <= lo <= a`` (W the class's widest range), intersect ``a - W <= lo <= b``; an empty
    segment when none can. ``classes[c, :NCLASS + 1]`` are the segment starts of the classes,
    ``classes[c, NCLASS + 1 + cl]`` the widest range of class ``cl``."""
    s0 = classes[c, cl]
    s1 = classes[c, cl + 1]
    W = classes[c, NCLASS + 1 + cl]
    if s0 == s1 or (not intersect and b - a > W):
        return 0, 0, 0, 0
    if intersect:
        return s0, s1, a - W, b
    return s0, s1, b - W, a


@jit_read
def _class_span(entries: np.ndarray, fences: np.ndarray, classes: np.ndarray, c: int, cl: int, a: int, b: int,
                intersect: bool) -> tuple[int, int]:
    """The run of entries of :func:`_class_bounds`, by binary search."""
    s0, s1, x0, x1 = _class_bounds(classes, c, cl, a, b, intersect)
    if s0 == s1:
        return 0, 0
    return _lower(entries, fences, s0, s1, x0), _lower(entries, fences, s0, s1, x1 + 1)


@jit_read
def interval_search(entries: np.ndarray, fences: np.ndarray, classes: np.ndarray, built: int,
                    active: np.ndarray, nslots: int, spec: np.ndarray, vals: np.ndarray, qbytes: np.ndarray,
                    present: np.ndarray, lo: np.ndarray, hi: np.ndarray, tstart: np.ndarray, tlen: np.ndarray,
                    text: np.ndarray, intersect: bool, limit: int) -> tuple[np.ndarray, bool]:
    """The verified search through the interval index of a ProfileIndex's records (built over
    slots ``0 .. built - 1``): for each numeric query attribute, the entries whose lower end
    can satisfy it are counted (binary searches per width class; ``entries[0]`` are the lower
    ends minus the attribute's base, sorted within each class segment of numeric record column
    ``c`` (:func:`_class_bounds`), ``entries[1]`` their slots), the attribute
    with the fewest is taken and only those entries (plus the slots added since the build,
    ``built .. nslots - 1``) are checked: active, and the record satisfies the query
    (:func:`_record_ok`). ``(ids sorted, True)``, or ``(empty, False)`` when no numeric
    attribute prunes to at most ``limit`` candidates (the caller scans the bit slices). The
    attribute is chosen by its count to within FENCE entries per class (from the fences).

    Complexity: O(numeric query attributes x classes x log N) + O(candidates x attributes)."""
    best = -1
    best_count = 0
    for i in range(spec.shape[0]):
        if spec[i, Q_KIND] == 0:
            continue
        c = spec[i, Q_RCOL]
        a = vals[3 * i] - spec[i, Q_BASE]
        b = vals[3 * i + 1] - spec[i, Q_BASE]
        count = 0  # to within FENCE entries per class, from the fences alone (in cache)
        for cl in range(NCLASS):
            s0, s1, x0, x1 = _class_bounds(classes, c, cl, a, b, intersect)
            if s0 != s1:
                count += _fence_rank(fences, s0, s1, x1 + 1) - _fence_rank(fences, s0, s1, x0)
        if best < 0 or count < best_count:
            best = i
            best_count = count
    if best < 0:
        return np.zeros(0, dtype=np.int64), False
    c = spec[best, Q_RCOL]
    a = vals[3 * best] - spec[best, Q_BASE]
    b = vals[3 * best + 1] - spec[best, Q_BASE]
    best_count = 0
    for cl in range(NCLASS):
        i0, i1 = _class_span(entries, fences, classes, c, cl, a, b, intersect)
        best_count += i1 - i0
    if best_count > limit:
        return np.zeros(0, dtype=np.int64), False
    out = np.empty(best_count + max(nslots - built, 0), dtype=np.int64)
    n = 0
    one = np.uint64(1)
    for cl in range(NCLASS):
        i0, i1 = _class_span(entries, fences, classes, c, cl, a, b, intersect)
        for j in range(i0, i1):
            slot = np.int64(entries[1, j])
            if slot >= nslots or (active[slot >> 6] >> np.uint64(slot & 63)) & one == 0:
                continue
            if _record_ok(slot, spec, vals, qbytes, present, lo, hi, tstart, tlen, text, intersect):
                out[n] = slot
                n += 1
    for slot in range(built, nslots):
        if (active[slot >> 6] >> np.uint64(slot & 63)) & one == 0:
            continue
        if _record_ok(slot, spec, vals, qbytes, present, lo, hi, tstart, tlen, text, intersect):
            out[n] = slot
            n += 1
    res = out[:n].copy()
    res.sort()
    return res, True
