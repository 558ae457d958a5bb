"""numba kernels of :class:`bloomkit.ranges.index.ProfileIndex` (compiled lazily, cached on
disk): the bit-sliced AND over the profiles' columns, the per-profile fill and the per-query
model, the compiled search (one kernel call per query: hashing, the AND, verification) and the
interval index of the records' ranges. The keys and their probe positions are in
:mod:`bloomkit.ranges._kernels`.
"""

from __future__ import annotations

import math

import numpy as np

from .._engine.jit import jit_mut, jit_read
from .._engine.kernels import fastmod, popcount64, probe, reducer
from ._kernels import _bytes_hash, _int_key_hash

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
def _field(rows: np.ndarray, slot: int, off: int, w: int) -> int:
    """The little-endian unsigned field of ``w`` bytes at byte ``off`` of record row ``slot``
    (:mod:`bloomkit.ranges.store`, records layout 3)."""
    v = 0
    for b in range(w):
        v |= np.int64(rows[slot, off + b]) << (8 * b)
    return v


@jit_read
def _has(rows: np.ndarray, slot: int, j: int) -> bool:
    """Record row ``slot`` gives attribute ``j`` (its presence bit)."""
    return (rows[slot, j >> 3] >> (j & 7)) & 1 == 1


@jit_read
def _bounds(rows: np.ndarray, fields: np.ndarray, slot: int, j: int) -> tuple[int, int]:
    """(lo, hi) scaled of numeric attribute ``j`` in record row ``slot``."""
    off = fields[j, 0]
    w = fields[j, 1]
    return _field(rows, slot, off, w) + fields[j, 2], _field(rows, slot, off + w, w) + fields[j, 2]


@jit_read
def _text_is(rows: np.ndarray, fields: np.ndarray, toff: np.ndarray, text: np.ndarray, slot: int, j: int,
             qtext: np.ndarray, qstart: int, length: int) -> bool:
    """The text of attribute ``j`` in record row ``slot`` (its dictionary entry) is the
    ``length`` bytes of ``qtext`` from ``qstart`` (entries outside the arrays a racing reader
    holds count as unequal)."""
    e = _field(rows, slot, fields[j, 0], fields[j, 1])
    if e + 1 >= toff.shape[0]:
        return False
    start = toff[e]
    if toff[e + 1] - start != length or toff[e + 1] > text.shape[0]:
        return False
    for i in range(length):
        if text[start + i] != qtext[qstart + i]:
            return False
    return True


@jit_read
def false_candidates(active: np.ndarray, nslots: int, fills: np.ndarray, rows: np.ndarray, fields: np.ndarray,
                     toff: np.ndarray, text: np.ndarray, spec: np.ndarray,
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
                if not _has(rows, slot, pcol[a]):
                    match = False
                    if kind[a] == 2:
                        mult *= tables[tab[a], c]
                    else:
                        J += qwords[a]
                    continue
                if kind[a] == 0:
                    n = qtl[a]
                    if not _text_is(rows, fields, toff, text, slot, pcol[a], qtext, qts[a], n):
                        match = False
                        J += kk[a]
                    continue
                plo, phi = _bounds(rows, fields, slot, pcol[a])
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
def _record_ok(slot: int, spec: np.ndarray, vals: np.ndarray, qbytes: np.ndarray, rows: np.ndarray,
               fields: np.ndarray, toff: np.ndarray, text: np.ndarray, intersect: bool) -> bool:
    """The record of ``slot`` satisfies the compiled query exactly (RecordStore.matches): every
    attribute present; texts equal; numeric: the query range inside the record's (subset) or
    overlapping it (``intersect``). A slot past the rows a racing reader holds does not."""
    if slot >= rows.shape[0]:
        return False
    for i in range(spec.shape[0]):
        j = spec[i, Q_PCOL]
        if not _has(rows, slot, j):
            return False
        if spec[i, Q_KIND] == 0:
            if not _text_is(rows, fields, toff, text, slot, j, qbytes, vals[3 * i + 2] + spec[i, Q_PLEN],
                            vals[3 * i + 1]):
                return False
            continue
        a = vals[3 * i]
        b = vals[3 * i + 1]
        lo, hi = _bounds(rows, fields, slot, j)
        if intersect:
            if lo > b or a > hi:
                return False
        elif lo > a or b > hi:
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
                    verify: bool, records: np.ndarray, fields: np.ndarray, toff: np.ndarray,
                    text: np.ndarray) -> np.ndarray:
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
                if verify and not _record_ok(slot, spec, vals, qbytes, records, fields, toff, text, False):
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
def _lower(entries: np.ndarray, rows: np.ndarray, off: int, w: int, fences: np.ndarray, i0: int, i1: int,
           x: int) -> int:
    """First index in keys[i0:i1] (sorted) whose key is >= x: first among the fences
    (``fences[j] = keys[j FENCE]``), then within the run of FENCE keys it leaves, each key read
    through the records: the lower end's field (at byte ``off``, ``w`` bytes: ``lo - base``) of
    record row ``entries[i]``."""
    f0 = _fence_rank(fences, i0, i1, x)
    hi = min(i1, f0 * FENCE)  # keys[f0 FENCE] >= x (or past the segment)
    lo = max(i0, hi - FENCE)  # keys[(f0 - 1) FENCE] < x (or before the segment)
    while lo < hi:
        mid = (lo + hi) >> 1
        if _field(rows, np.int64(entries[mid]), off, w) < x:
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
    ``classes[c, NCLASS + 1 + cl]`` the widest range of class ``cl`` (``classes[c, 2 NCLASS +
    1]``: 1 if column ``c`` is built)."""
    s0 = classes[c, cl]
    s1 = classes[c, cl + 1]
    W = classes[c, NCLASS + 1 + cl]
    if s0 == s1 or (not intersect and b - a > W):
        return 0, 0, 0, 0
    if intersect:
        return s0, s1, a - W, b
    return s0, s1, b - W, a


@jit_read
def _class_span(entries: np.ndarray, rows: np.ndarray, off: int, w: int, fences: np.ndarray, classes: np.ndarray,
                c: int, cl: int, a: int, b: int, intersect: bool) -> tuple[int, int]:
    """The run of entries of :func:`_class_bounds`, by binary search."""
    s0, s1, x0, x1 = _class_bounds(classes, c, cl, a, b, intersect)
    if s0 == s1:
        return 0, 0
    return _lower(entries, rows, off, w, fences, s0, s1, x0), _lower(entries, rows, off, w, fences, s0, s1, x1 + 1)


@jit_read
def interval_search(entries: np.ndarray, fences: np.ndarray, classes: np.ndarray, built: int,
                    active: np.ndarray, nslots: int, spec: np.ndarray, vals: np.ndarray, qbytes: np.ndarray,
                    rows: np.ndarray, fields: np.ndarray, toff: np.ndarray, text: np.ndarray, intersect: bool,
                    limit: int) -> tuple[np.ndarray, bool]:
    """The verified search through the interval index of a ProfileIndex's records (built over
    slots ``0 .. built - 1``): for each numeric query attribute, the entries whose lower end
    can satisfy it are counted (binary searches per width class; ``entries`` are slots, sorted
    by their lower ends (minus the attribute's base, read through the records' rows) within
    each class segment of numeric record column ``c`` (:func:`_class_bounds`)), the attribute
    with the fewest is taken and only those entries (plus the slots added since the build,
    ``built .. nslots - 1``) are checked: active, and the record satisfies the query
    (:func:`_record_ok`). ``(ids sorted, True)``, or ``(empty, False)`` when no numeric
    attribute prunes to at most ``limit`` candidates (the caller scans the bit slices). The
    attribute is chosen by its count to within FENCE entries per class (from the fences).

    Complexity: O(numeric query attributes x classes x log N) + O(candidates x attributes)."""
    best = -1
    best_count = 0
    for i in range(spec.shape[0]):
        c = spec[i, Q_RCOL]
        if spec[i, Q_KIND] == 0 or classes[c, 2 * NCLASS + 1] == 0:  # a text, or a column not built
            continue
        a = vals[3 * i] - fields[spec[i, Q_PCOL], 2]
        b = vals[3 * i + 1] - fields[spec[i, Q_PCOL], 2]
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
    j = spec[best, Q_PCOL]
    a = vals[3 * best] - fields[j, 2]
    b = vals[3 * best + 1] - fields[j, 2]
    off = fields[j, 0]
    w = fields[j, 1]
    best_count = 0
    for cl in range(NCLASS):
        i0, i1 = _class_span(entries, rows, off, w, fences, classes, c, cl, a, b, intersect)
        best_count += i1 - i0
    if best_count > limit:
        return np.zeros(0, dtype=np.int64), False
    out = np.empty(best_count + max(nslots - built, 0), dtype=np.int64)
    n = 0
    one = np.uint64(1)
    for cl in range(NCLASS):
        i0, i1 = _class_span(entries, rows, off, w, fences, classes, c, cl, a, b, intersect)
        for e in range(i0, i1):
            slot = np.int64(entries[e])
            if slot >= nslots or (active[slot >> 6] >> np.uint64(slot & 63)) & one == 0:
                continue
            if _record_ok(slot, spec, vals, qbytes, rows, fields, toff, text, intersect):
                out[n] = slot
                n += 1
    for slot in range(built, nslots):
        if (active[slot >> 6] >> np.uint64(slot & 63)) & one == 0:
            continue
        if _record_ok(slot, spec, vals, qbytes, rows, fields, toff, text, intersect):
            out[n] = slot
            n += 1
    res = out[:n].copy()
    res.sort()
    return res, True
