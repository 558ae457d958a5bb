"""numba kernels of standard ribbon retrieval, w = 64 (Dillinger and Walzer 2021, Sections 2-3;
Dillinger, Huebschle-Schneider, Sanders, Walzer, SEA 2022, "standard ribbon").

A key x of attempt ``salt`` has the hash ``h = fmix64(h1 + (salt + 1) * GOLDEN ^ RB_SALT)``, a
start ``s(x) = floor(h * (m - 63) / 2^64)`` in [0, m - 64], a 64-bit coefficient row ``c(x)``
with bit 0 set (bit t multiplies slot s + t) and a c-bit check ``fp(x)`` (the top c bits of
``h * FP_MUL``). The solution Z (m slots of c bits) satisfies, for every stored key,
``XOR_{t: bit t of c(x)} Z[s(x) + t] = v(x) XOR fp(x)``; a query returns that XOR with fp(x)
XORed back: v(x) for a stored key, a uniform c-bit word for an absent one.

Construction is on-the-fly banded Gaussian elimination (the paper's Algorithm "insert"): rows
are kept in per-slot arrays C (uint64: the row normalised to start at its pivot slot) and R
(its right-hand side, uint32 when c <= 32); a new row is XORed with the row at its pivot until
it finds an empty pivot, or becomes 0 (0 = 0: a row implied by the rows before it, solved as it
is; 0 = r: the system has no solution, the attempt fails). Keys are inserted in order of their
start (a counting sort of their hashes by 64-slot block, then by offset inside the block) so
that the rows touched move through memory; a repeated key (equal h1: equal hash, equal start,
equal offset) is found while ordering a block and reported, never solved. A bumped layer is cut
into parts (:data:`PART_BUCKETS`) whose last bucket bumps every key, so no row crosses into the
next part: each part is banded in C and R of its own slots and back-substituted at once, and
the parts run on several threads (:func:`rb_solve_parts`). Back-substitution runs from the
last slot down: bit-sliced in the columns layout (one 64-bit window of solution bits per result
bit), one :func:`bloomkit._engine.jit.band_xor` per slot in the rows layout.

Z has one of two layouts (``width`` of the builds):

* *columns* (``width = 0``, the paper's interleaved column-major ICML): block b of 64 slots is
  c words, word j holding result bit j of the block's 64 slots, so a query reads 2 x c words of
  two adjacent blocks (8 cache lines at c = 32) and computes each result bit as a parity of 64
  bits. Any c; the ribbon filter's layout.
* *rows* (``width = c``, c in 8 / 16 / 32 / 64): slot i is the c-bit word i of Z (packed into
  the uint64 words little-endian, read through a uint8 / 16 / 32 / 64 view), so a query XORs
  the 64 consecutive slots its coefficient selects: 64 c / 8 bytes (4 - 5 cache lines at
  c = 32, half the columns' traffic), one vector load, select and xor reduction
  (:func:`bloomkit._engine.jit.band_xor`). Ribbon retrieval's layout when c is one of those
  widths.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from .._engine.jit import GOLDEN, U64, band_xor, jit_inline, jit_read, mulhi64, prefetch
from ._kernels import fmix64

RB_SALT = U64(0x8EBC6AF09C88C6E3)
RB_COEF = U64(0x589965CC75374CC3)
FP_MUL = U64(0x1D8E4E27C47D124F)


@jit_inline
def rb_hash(h1: np.uint64, salt: np.uint64) -> np.uint64:
    return fmix64((h1 + (salt + U64(1)) * GOLDEN) ^ RB_SALT)


@jit_inline
def rb_unhash(h: np.uint64, salt: np.uint64) -> np.uint64:
    """h1 of a hash h = :func:`rb_hash` (h1, salt): fmix64 inverted (its xor-shifts by 33 are
    involutions, its multipliers odd; their inverses mod 2^64 below). The builds keep h, not h1,
    for the keys they sort, and recover h1 for the keys bumped to the next layer."""
    z = h ^ (h >> U64(33))
    z *= U64(0x9CB4B2F8129337DB)
    z ^= z >> U64(33)
    z *= U64(0x4F74430C22A54005)
    z ^= z >> U64(33)
    return (z ^ RB_SALT) - (salt + U64(1)) * GOLDEN


@jit_inline
def rb_coef(h: np.uint64) -> np.uint64:
    """c(x): 64 pseudo-random bits, bit 0 set."""
    return fmix64(h ^ RB_COEF) | U64(1)


@jit_inline
def rb_fp(h: np.uint64, c: Any) -> np.uint64:
    """fp(x): the top c bits of h * FP_MUL (0 < c <= 64: a shift of 0 - 63)."""
    return (h * FP_MUL) >> U64(64 - c)


# numba's stubs type a call of an @intrinsic with its code generator's signature (typingctx
# first): call sites in compiled code carry `type: ignore[call-arg]`.
@intrinsic
def ctpop64(typingctx, a):  # type: ignore[no-untyped-def]
    """``llvm.ctpop.i64``: set bits of a uint64 (measured 2x faster in the query loop than the
    SWAR popcount, which LLVM did not turn into the intrinsic there)."""
    sig = types.uint64(types.uint64)

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        return builder.ctpop(args[0])

    return sig, codegen


@intrinsic
def cttz64(typingctx, a):  # type: ignore[no-untyped-def]
    """``llvm.cttz.i64`` of a non-zero uint64: its trailing zero bits (one tzcnt)."""
    sig = types.uint64(types.uint64)

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        return builder.cttz(args[0], ir.Constant(ir.IntType(1), 1))

    return sig, codegen


PREFETCH = 8
"""Keys ahead whose first-layer blocks a query prefetches (each block is c words: c / 8 cache lines)."""

PREFETCH_ROWS = 16
"""Keys ahead whose first-layer slots the rows query prefetches (measured at 10^6 and 10^7 keys,
c = 32: 8, 16 and 32 within 5 %)."""
RING = 32
"""Hashes the rows query keeps between prefetch and answer (a power of two > PREFETCH_ROWS)."""


@jit_inline
def _band_insert(C: np.ndarray, R: np.ndarray, slot: Any, cf: np.uint64, r: np.uint64) -> Any:
    """Insert one row: the pivot slot it filled (>= 0), -1 redundant (0 = 0), -2 inconsistent."""
    while True:
        ci = C[slot]
        if ci == U64(0):
            C[slot] = cf
            R[slot] = r
            return slot
        cf ^= ci
        r ^= R[slot]
        if cf == U64(0):
            return np.int64(-1) if r == U64(0) else np.int64(-2)
        tz = np.int64(cttz64(cf))  # type: ignore[call-arg]
        cf >>= U64(tz)
        slot += tz


@jit_inline
def _back_columns(C: np.ndarray, R: np.ndarray, Z: np.ndarray, b_lo: Any, b_hi: Any, c: Any, off: Any) -> None:
    """Z of blocks [b_lo, b_hi) in the columns layout, bit-sliced, block by block from the last:
    within a block of 64 slots, slot 63 down to 0, each result bit j shifts its window of
    solution bits ``state[j]`` by one and appends parity(window & C[slot]) XOR bit j of R[slot]
    (empty slots get 0). The c windows of one slot are independent (no chain of dependent
    popcounts). The window starts empty: no row of these blocks reaches past block b_hi - 1.
    ``C`` / ``R`` hold slots from ``off`` on."""
    state = np.zeros(c, dtype=np.uint64)
    for b in range(b_hi - 1, b_lo - 1, -1):
        base = b * 64 - off
        for i in range(63, -1, -1):
            ci = C[base + i]
            ri = R[base + i]
            for j in range(c):
                st = state[j] << U64(1)
                state[j] = st | (ctpop64(st & ci) ^ (ri >> U64(j))) & U64(1)  # type: ignore[call-arg]
        for j in range(c):
            Z[b * c + j] = state[j]


@jit_inline
def _back_slots(C: np.ndarray, R: np.ndarray, Zv: np.ndarray, lo: Any, hi: Any, off: Any) -> None:
    """Slots [lo, hi) of Z in the rows layout (``Zv``: Z viewed as c-bit slots, zero there):
    slot i = R[i] XOR the slots i + t (t >= 1) that bit t of C[i] selects, from hi - 1 down (an
    empty slot stays 0). No row of the range reaches slot hi. Slots whose 64-slot window ends
    inside the range XOR it with :func:`band_xor` (bit 0 of C[i] selects slot i, still 0); the
    last 63 walk the set bits. ``C`` / ``R`` hold slots from ``off`` on."""
    for i in range(hi - 1, max(hi - 64, lo - 1), -1):
        ci = C[i - off]
        if ci != U64(0):
            v = U64(R[i - off])
            rest = ci >> U64(1)
            while rest != U64(0):
                t = np.int64(cttz64(rest))  # type: ignore[call-arg]
                v ^= U64(Zv[i + 1 + t])
                rest &= rest - U64(1)
            Zv[i] = v
    for i in range(hi - 64, lo - 1, -1):
        ci = C[i - off]
        if ci != U64(0):
            Zv[i] = U64(R[i - off]) ^ band_xor(Zv, i, ci)  # type: ignore[call-arg]


@jit_inline
def _back(C: np.ndarray, R: np.ndarray, Z: np.ndarray, b_lo: Any, b_hi: Any, c: Any, width: Any, off: Any) -> None:
    """Z of blocks [b_lo, b_hi) (no row of them reaches block b_hi) in the columns layout
    (``width`` 0) or the rows layout of ``width`` = c bits, slot i packed into word i c / 64 at
    bit (i c) mod 64 (read through a uint8 / 16 / 32 / 64 view). ``C`` / ``R`` hold the rows
    of slots ``off`` on."""
    lo = b_lo * 64
    hi = b_hi * 64
    if width == 8:
        _back_slots(C, R, Z.view(np.uint8), lo, hi, off)
    elif width == 16:
        _back_slots(C, R, Z.view(np.uint16), lo, hi, off)
    elif width == 32:
        _back_slots(C, R, Z.view(np.uint32), lo, hi, off)
    elif width == 64:
        _back_slots(C, R, Z, lo, hi, off)
    else:
        _back_columns(C, R, Z, b_lo, b_hi, c, off)


@jit_inline
def _solution(C: np.ndarray, R: np.ndarray, m: Any, c: Any, width: Any) -> np.ndarray:
    """Z of all m slots in the columns layout (``width`` 0) or the rows layout (``width`` = c)."""
    Z = np.zeros((m // 64) * c, dtype=np.uint64)
    _back(C, R, Z, 0, m // 64, c, width, 0)
    return Z


@jit_inline
def _by_bucket(h1s: np.ndarray, vals: np.ndarray, salt: np.uint64, m: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Counting sort of the keys by 64-slot block of their start (:func:`rb_count`, then
    :func:`rb_scatter` over all keys: the sort the threaded bumped layer does in slices): (hashes
    :func:`rb_hash` sorted, values sorted, ends) with block b's keys at ``[ends[b - 1], ends[b])``
    (ends[-1] = 0). ``vals`` may be empty (every value 0: a filter)."""
    n = h1s.shape[0]
    nb = m // 64
    cnt = rb_count(h1s, salt, m, 0, n)
    at = np.empty(nb, dtype=np.int64)
    pos = np.empty(nb + 1, dtype=np.int64)
    end = 0
    for b in range(nb):
        at[b] = end
        end += cnt[b]
        pos[b] = end
    pos[nb] = 0  # pos[b] = end of block b; pos[-1] = start of block 0
    sh = np.empty(n, dtype=np.uint64)
    sv = np.empty(n if vals.shape[0] else 0, dtype=np.uint64)
    rb_scatter(h1s, vals, salt, m, 0, n, at, sh, sv)
    return sh, sv, pos


@jit_inline
def _bucket_order(sh: np.ndarray, sv: np.ndarray, lo: Any, hi: Any, starts: np.uint64,
                  th: np.ndarray, tv: np.ndarray, cnt: np.ndarray) -> int:
    """One block's keys ``sh[lo:hi]`` (their hashes :func:`rb_hash`) ordered by offset (start mod
    64, 64 counters) into ``th`` / ``tv``; afterwards ``cnt[o]`` = end of offset o's keys.
    Returns the number of keys whose hash equals an earlier key's (a repeated key: equal h1,
    equal hash, the same start, hence the same offset)."""
    nv = sv.shape[0]
    for q in range(65):
        cnt[q] = 0
    for t in range(lo, hi):
        cnt[(np.int64(mulhi64(sh[t], starts)) & 63) + 1] += 1  # type: ignore[call-arg]
    for q in range(64):
        cnt[q + 1] += cnt[q]
    for t in range(lo, hi):
        o = np.int64(mulhi64(sh[t], starts)) & 63  # type: ignore[call-arg]
        at = cnt[o]
        th[at] = sh[t]
        tv[at] = sv[t] if nv else U64(0)
        cnt[o] = at + 1
    dups = 0
    first = 0
    for g in range(64):
        for k in range(first + 1, cnt[g]):
            for p in range(first, k):
                if th[p] == th[k]:
                    dups += 1
                    break
        first = cnt[g]
    return dups


@jit_inline
def _setup(h1s: np.ndarray, vals: np.ndarray, salt: np.uint64, m: Any) -> tuple[
        np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """What both builds start from: the keys sorted by block (:func:`_by_bucket`), buffers for
    the largest block and 65 offset counters (:func:`_bucket_order`) and the rows C[m] (the
    right-hand sides R[m] are the caller's zeroed array: uint32 when c <= 32, see :func:`rhs`)."""
    sh, sv, pos = _by_bucket(h1s, vals, salt, m)
    big = 1
    for b in range(m // 64):
        big = max(big, pos[b] - pos[b - 1])
    th = np.empty(big, dtype=np.uint64)
    tv = np.empty(big, dtype=np.uint64)
    cnt = np.zeros(65, dtype=np.int64)
    return sh, sv, pos, th, tv, cnt, np.zeros(m, dtype=np.uint64)


def rhs(m: int, c: int) -> np.ndarray:
    """The zeroed right-hand sides R[m] of a build: 4 bytes per slot when c <= 32, else 8."""
    return np.zeros(m, dtype=np.uint32 if c <= 32 else np.uint64)


PART_BUCKETS = 1024
"""Buckets per part of a bumped layer (at least; the parts of a layer are equal to a bucket).
Every bucket of a part but the last bumps its keys as usual; the last bumps all of them
(threshold 64), so that no row of a part reaches the next part: the parts are independent
systems, solved and back-substituted on several threads. Measured at 10^6 keys, c = 32: parts
of 256 / 1024 / 4096 buckets took 1.0056 / 1.0046 / 1.0043x the bound, against 1.0042 without."""


def num_parts(m: int) -> int:
    """Parts of a bumped layer of m slots (a function of m only: the solution does not depend on
    the number of threads)."""
    return max(1, (m // 64) // PART_BUCKETS)


@jit_read
def rb_count(h1s: np.ndarray, salt: np.uint64, m: int, lo: int, hi: int) -> np.ndarray:
    """A bumped layer's first step, on keys [lo, hi): how many start in each 64-slot block."""
    cnt = np.zeros(m // 64, dtype=np.int64)
    rb_count_into(h1s[lo:hi], salt, m, cnt)
    return cnt


@jit_read
def rb_scatter(h1s: np.ndarray, vals: np.ndarray, salt: np.uint64, m: int, lo: int, hi: int, at: np.ndarray,
               sh: np.ndarray, sv: np.ndarray) -> None:
    """Its second: the hashes :func:`rb_hash` of keys [lo, hi) (and their values, unless ``vals`` is
    empty) written to ``sh`` / ``sv`` by block, block b's from ``at[b]`` on in input order (``at`` is advanced):
    :func:`rb_scatter_blocks` of those keys over every block. Calls on consecutive key ranges with
    ``at`` from :func:`slice_offsets` give the sequential counting sort, on several threads at once."""
    rb_scatter_blocks(h1s[lo:hi], vals[lo:hi], salt, m, 0, m // 64, at, sh, sv)


def slice_offsets(cnt: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The write positions of a counting sort by block done in slices of the keys, from
    ``cnt[t, b]`` (keys of slice t that start in block b): (ends, at). ``ends[b]`` is the end of
    block b's keys in the sorted order and ``ends[nb]`` = 0, so ``ends[b - 1]`` is block b's start
    for every b (the ``pos`` of :func:`rb_solve_parts`); ``at[t, b]`` is where slice t's first key
    of block b goes (for :func:`rb_scatter` / :func:`rb_scatter_blocks`).

    >>> ends, at = slice_offsets(np.array([[2, 0, 1], [1, 3, 0]]))
    >>> ends.tolist(), at.tolist()
    ([3, 6, 7, 0], [[0, 3, 6], [2, 3, 7]])
    """
    tot = cnt.sum(axis=0)
    ends = np.empty(len(tot) + 1, dtype=np.int64)
    np.cumsum(tot, out=ends[:-1])
    ends[-1] = 0
    return ends, (ends[:-1] - tot) + (np.cumsum(cnt, axis=0) - cnt)


@jit_read
def rb_count_into(h1s: np.ndarray, salt: np.uint64, m: int, cnt: np.ndarray) -> None:
    """:func:`rb_count` of all of ``h1s`` (a chunk of the keys), added to ``cnt`` (the low-memory build)."""
    starts = U64(m - 63)
    for i in range(h1s.shape[0]):
        cnt[np.int64(mulhi64(rb_hash(h1s[i], salt), starts)) >> 6] += 1  # type: ignore[call-arg]


@jit_read
def rb_scatter_blocks(h1s: np.ndarray, vals: np.ndarray, salt: np.uint64, m: int, b_lo: int, b_hi: int,
                      at: np.ndarray, sh: np.ndarray, sv: np.ndarray) -> None:
    """:func:`rb_scatter` of the keys of a chunk ``h1s`` (values ``vals``, or empty) that start in
    blocks [b_lo, b_hi) only: block b's next write position is ``at[b - b_lo]`` (advanced).
    Chunks given in input order leave each block's keys in input order, as the full sort does."""
    nv = vals.shape[0]
    starts = U64(m - 63)
    for i in range(h1s.shape[0]):
        h = rb_hash(h1s[i], salt)
        blk = np.int64(mulhi64(h, starts)) >> 6  # type: ignore[call-arg]
        if b_lo <= blk < b_hi:
            q = at[blk - b_lo]
            sh[q] = h
            if nv:
                sv[q] = vals[i]
            at[blk - b_lo] = q + 1


@jit_read
def rb_solve_parts(
    sh: np.ndarray, sv: np.ndarray, pos: np.ndarray, salt: np.uint64, m: int, c: int, width: int, Z: np.ndarray,
    thr: np.ndarray, parts: int, R: np.ndarray, p_lo: int, p_hi: int, zb: int = 0,
) -> tuple[np.ndarray, np.ndarray, int]:
    """Parts [p_lo, p_hi) of ``parts`` of one layer of bumped ribbon (BuRR, Dillinger et al. SEA
    2022, with a one-byte threshold per bucket), banded and back-substituted into Z (zeroed; the
    layout of ``width``). Buckets of 64 start positions are solved left to right; in each
    bucket the keys are inserted by decreasing offset (start mod 64), and at the first row that
    cannot be inserted every key of the bucket with that offset or a lower one is *bumped* to
    the next layer (the rows of that offset already placed are taken back: an insertion only
    fills one empty pivot slot, so clearing those slots restores the system). ``thr[b]`` = 1 +
    the bumping offset (0: nothing bumped); a query whose offset is below ``thr[b]`` asks the
    next layer. A row that reduces to 0 = 0 (implied by the rows before it) is solved as it is.

    The last bucket of a part (not of the layer) bumps every key (:data:`PART_BUCKETS`), so no
    row of a part reaches the next: a part is banded in rows C and right-hand sides R of its own
    slots only (12 bytes per slot at c <= 32, reused from part to part; ``R``: :func:`rhs` of at
    least the largest part's slots) and back-substituted at once, and parts touch disjoint words of Z and bytes of thr: several calls may run at once
    on one layer.

    ``sh`` / ``sv`` / ``pos``: the keys' hashes and values by block (:func:`rb_scatter`;
    ``pos[b]`` the end of block b's, ``pos[-1]`` = 0). Each block's keys are ordered by offset
    (:func:`_bucket_order`). Returns (h1 and values of the bumped keys, repeated keys): when a
    key's hash repeats, the count says how many (the layer must be built again).

    ``zb``: Z holds the words from block ``zb`` on (a slice of the layer's solution: the
    low-memory build solves a layer pass by pass, :func:`bloomkit.lookup._ribbon_lowmem.bumped_layer_passes`);
    ``sh`` / ``sv`` / ``pos`` need only hold parts [p_lo, p_hi) (``pos`` indexed by block, 0 at
    ``pos[b_lo - 1]``)."""
    nv = sv.shape[0]
    nb = m // 64
    starts = U64(m - 63)
    cmask = (U64(1) << U64(c)) - U64(1) if c < 64 else ~U64(0)
    b_lo = p_lo * nb // parts
    b_hi = p_hi * nb // parts
    big = 1
    span = 1
    for p in range(p_lo, p_hi):
        span = max(span, (p + 1) * nb // parts - p * nb // parts)
    for b in range(b_lo, b_hi):
        big = max(big, pos[b] - pos[b - 1])
    th = np.empty(big, dtype=np.uint64)
    tv = np.empty(big, dtype=np.uint64)
    cnt = np.zeros(65, dtype=np.int64)
    C = np.zeros(span * 64, dtype=np.uint64)
    R = R[: span * 64]
    cap = (pos[b_hi - 1] - pos[b_lo - 1]) // 8 + 64
    bh = np.empty(cap, dtype=np.uint64)
    bv = np.empty(cap if nv else 0, dtype=np.uint64)
    nbumped = 0
    placed = np.empty(64, dtype=np.int64)  # pivots of the current offset's rows (<= 64 distinct)
    for p in range(p_lo, p_hi):
        p0 = p * nb // parts
        p1 = (p + 1) * nb // parts
        off = p0 * 64  # C[i], R[i]: slot off + i
        C[:] = 0
        R[:] = 0
        for b in range(p0, p1):
            lo = pos[b - 1]
            hi = pos[b]
            if hi == lo:
                continue
            dups = _bucket_order(sh, sv, lo, hi, starts, th, tv, cnt)
            if dups:
                return bh[:0], bv[:0], dups
            end = 0
            if b == p1 - 1 and p < parts - 1:
                end = hi - lo  # the part's last bucket: every key to the next layer
                thr[b] = np.uint8(64)
            else:
                cur = -1
                nplaced = 0
                for t in range(hi - lo - 1, -1, -1):
                    h = th[t]
                    slot = np.int64(mulhi64(h, starts))  # type: ignore[call-arg]
                    if slot & 63 != cur:
                        cur = slot & 63
                        nplaced = 0
                    got = _band_insert(C, R, slot - off, rb_coef(h), (tv[t] ^ rb_fp(h, c)) & cmask)
                    if got >= 0:
                        placed[nplaced] = got
                        nplaced += 1
                    elif got == -2:
                        for q in range(nplaced):
                            C[placed[q]] = U64(0)
                            R[placed[q]] = U64(0)
                        thr[b] = np.uint8(cur + 1)
                        end = cnt[cur]
                        break
            if end:
                if nbumped + end > cap:
                    cap = 2 * cap + end
                    bh2 = np.empty(cap, dtype=np.uint64)
                    bh2[:nbumped] = bh[:nbumped]
                    bh = bh2
                    if nv:
                        bv2 = np.empty(cap, dtype=np.uint64)
                        bv2[:nbumped] = bv[:nbumped]
                        bv = bv2
                for q in range(end):
                    bh[nbumped + q] = rb_unhash(th[q], salt)
                    if nv:
                        bv[nbumped + q] = tv[q]
                nbumped += end
        _back(C, R, Z, p0 - zb, p1 - zb, c, width, off - zb * 64)
    return bh[:nbumped], bv[:nbumped] if nv else bv, 0


@jit_read
def rb_build(h1s: np.ndarray, vals: np.ndarray, salt: np.uint64, m: int, c: int, width: int,
             R: np.ndarray) -> tuple[np.ndarray, int]:
    """Standard ribbon: band every key's row (keys counting-sorted by 64-slot block, each block
    by offset), then back-substitute. Returns (Z, status): 0 = solved, 1 = no solution (a row
    reduced to 0 = 1), 2 = a key's h1 repeats (Z empty for 1 and 2). A row that reduces to
    0 = 0 is solved as it is. ``vals`` are uint64 values (empty: every value 0, a filter); Z in
    the layout of ``width`` (module docstring)."""
    nv = vals.shape[0]
    nb = m // 64
    starts = U64(m - 63)
    cmask = (U64(1) << U64(c)) - U64(1) if c < 64 else ~U64(0)
    sh, sv, pos, th, tv, cnt, C = _setup(h1s, vals, salt, m)
    for b in range(nb):
        lo = pos[b - 1]
        hi = pos[b]
        if _bucket_order(sh, sv, lo, hi, starts, th, tv, cnt):
            return np.zeros(0, dtype=np.uint64), 2
        for t in range(lo, hi):  # in input order inside the block (the order is free: any gives a solution)
            h = sh[t]
            got = _band_insert(C, R, np.int64(mulhi64(h, starts)), rb_coef(h),  # type: ignore[call-arg]
                               ((sv[t] if nv else U64(0)) ^ rb_fp(h, c)) & cmask)
            if got == -2:
                return np.zeros(0, dtype=np.uint64), 1
    sh = np.empty(0, dtype=np.uint64)  # freed before Z is made
    sv = np.empty(0, dtype=np.uint64)
    return _solution(C, R, m, c, width), 0


@jit_read
def rb_query(
    h1s: np.ndarray, Z: np.ndarray, zoff: np.ndarray, thr: np.ndarray, toff: np.ndarray, ms: np.ndarray,
    salts: np.ndarray, c: int, vbits: int, miss: int, out: np.ndarray,
) -> None:
    """out[i] = XOR of key i's row with its layer's Z, XOR fp: its value if stored (0 for a
    filter's key), replaced by ``miss`` when it has a bit at ``vbits`` or above (an absent key:
    retrieval passes V and 0, a filter 0 and 1). Layer l holds slots ``ms[l]``, words ``Z[zoff[l]:zoff[l + 1]]`` and, when
    bumped, one threshold byte per bucket ``thr[toff[l]:toff[l + 1]]``; a key whose offset is
    below its bucket's threshold asks the next layer. The first layer's blocks of key
    i + PREFETCH are prefetched while key i is answered."""
    n = h1s.shape[0]
    layers = ms.shape[0]
    m0 = U64(ms[0] - 63)
    last0 = (ms[0] // 64 - 1) * c
    for i in range(n + PREFETCH):
        if i < n:
            s = np.int64(mulhi64(rb_hash(h1s[i], salts[0]), m0))  # type: ignore[call-arg]
            b0 = (s >> 6) * c
            for q in range(0, min(2 * c, last0 + c - b0), 8):
                prefetch(Z, b0 + q)
        k = i - PREFETCH
        if k < 0:
            continue
        for lay in range(layers):
            h = rb_hash(h1s[k], salts[lay])
            m = ms[lay]
            s = np.int64(mulhi64(h, U64(m - 63)))  # type: ignore[call-arg]
            if toff[lay + 1] > toff[lay] and lay + 1 < layers and (s & 63) < thr[toff[lay] + (s >> 6)]:
                continue
            cf = rb_coef(h)
            off = U64(s & 63)
            lo = cf << off  # the band's bits in block b0 ...
            hi = (cf >> U64(1)) >> (U64(63) - off)  # ... and in block b0 + 1 (none when off = 0)
            b0 = zoff[lay] + (s >> 6) * c
            b1 = min(b0 + c, zoff[lay] + (m // 64 - 1) * c)
            g = U64(0)
            for j in range(c):
                g |= (ctpop64((Z[b0 + j] & lo) ^ (Z[b1 + j] & hi)) & U64(1)) << U64(j)
            g ^= rb_fp(h, c)
            out[k] = g if g >> U64(vbits) == U64(0) else U64(miss)
            break


@jit_read
def rb_query_rows(
    h1s: np.ndarray, Z: np.ndarray, soff: np.ndarray, thr: np.ndarray, toff: np.ndarray, ms: np.ndarray,
    salts: np.ndarray, c: int, vbits: int, miss: int, out: np.ndarray,
) -> None:
    """:func:`rb_query` on the rows layout: ``Z`` is the solution viewed as c-bit slots (uint8 /
    16 / 32 / 64), layer l's slots start at ``soff[l]``; a key XORs the 64 slots from its start
    that its coefficient selects (:func:`band_xor`: one vector load, select, reduction). Key
    i + PREFETCH_ROWS is hashed for the first layer while key i is answered: the cache lines of
    its 64 slots are prefetched (Z starts on a cache line) and its hash waits in a ring, so a
    key that the first layer answers (about 95 %) is hashed once."""
    n = h1s.shape[0]
    layers = ms.shape[0]
    m0 = U64(ms[0] - 63)
    step = 512 // c  # slots per cache line
    lmask = ~np.int64(step - 1)
    ring = np.empty(RING, dtype=np.uint64)
    bumped0 = layers > 1 and toff[1] > toff[0]
    for i in range(n + PREFETCH_ROWS):
        if i < n:
            h = rb_hash(h1s[i], salts[0])
            ring[i & (RING - 1)] = h
            s = np.int64(mulhi64(h, m0))  # type: ignore[call-arg]
            for q in range(s & lmask, s + 64, step):
                prefetch(Z, q)
        k = i - PREFETCH_ROWS
        if k < 0:
            continue
        h = ring[k & (RING - 1)]
        s = np.int64(mulhi64(h, m0))  # type: ignore[call-arg]
        if not (bumped0 and (s & 63) < thr[s >> 6]):
            g = band_xor(Z, s, rb_coef(h)) ^ rb_fp(h, c)
            out[k] = g if g >> U64(vbits) == U64(0) else U64(miss)
            continue
        for lay in range(1, layers):  # bumped from the first layer
            h = rb_hash(h1s[k], salts[lay])
            s = np.int64(mulhi64(h, U64(ms[lay] - 63)))
            if toff[lay + 1] > toff[lay] and lay + 1 < layers and (s & 63) < thr[toff[lay] + (s >> 6)]:
                continue
            g = band_xor(Z, soff[lay] + s, rb_coef(h)) ^ rb_fp(h, c)
            out[k] = g if g >> U64(vbits) == U64(0) else U64(miss)
            break
