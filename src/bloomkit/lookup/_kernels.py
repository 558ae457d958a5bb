"""numba kernels of ``bloomkit.lookup``: packed c-bit cells, the Geometric filter's walk
(Algorithms 3-5) and the Monte Carlo of Algorithms 6 and 7. The Bloomier filter's peeling
(Algorithm 1) and XOR encoding (Eq. 2.2) are in :mod:`bloomkit.lookup._bloomier_kernels`.

Everything is ``np.uint64`` arithmetic; kernels compile on first use and are cached on
disk (``cache=True``), never at import. Kernels that write a structure's cells (``gf_encode``,
``gf_write_cell``, the Bloomier filter's ``bl_assign``) are :data:`~bloomkit._engine.jit.jit_mut`
(they keep the GIL); the others only read and release it.

Cells of more than 64 bits
--------------------------
A cell has c = E + V bits, up to 127 (V <= 64, E <= 63). Cells are packed in a uint64 array
``words`` of cells of ``c_lo = min(c, 64)`` bits; when c > 64 the remaining ``c_hi = c - 64``
bits of every cell are packed in a second array ``high`` (same cell index). The space is
still exactly c bits per cell. A Geometric cell keeps its fingerprint and the low
``v_lo = c_lo - E`` value bits in ``words`` (so the walk's open / fingerprint tests read one
array) and the high ``V - v_lo`` value bits in ``high``, read only when the fingerprint
matches. A Bloomier cell is the c-bit word split at bit 64 (the value is its low V bits). With
c <= 64, ``c_hi = 0``, ``high`` is never read and the layout is the 64-bit one.

Probe positions
---------------
Probe ``t = i*k + j`` (table i, probe j, both from 0) of a key uses the foundation's enhanced
double hashing value ``G_t = h1 + t*h2 + (t^3 - t)/6`` (mod 2^64), re-mixed by fmix64 and
reduced to the table size ``M_i`` by multiply-shift: ``floor(fmix64(G_t) * M_i / 2^64)``.

The re-mix matters. Multiply-shift keeps the *high* bits of its input, and the G_t of one key
are linear in t: G_2 = 2 G_1 - G_0 + 1. Without the mix a key's cell in table 3 is fixed to
within about two cells by its cells in tables 1 and 2, so keys rejected together keep
colliding, the tables absorb fewer keys than Eq. 3.11 predicts and the tail over-fills (we
measured this: 100 exhausted keys of 10^6 at r = 0.2860 against 0 for a uniform simulation).
``G_t mod M_i`` (the foundation's reduction) has no such correlation across coprime sizes
but costs a 64-bit division per probe.
"""

from __future__ import annotations

import numpy as np

# prefetch is an @intrinsic: its calls carry type: ignore[call-arg] (numba's stub; see _kernels)
from .._engine.jit import GOLDEN, U64, jit_inline, jit_mut, jit_read, mulhi64, prefetch
from .._engine.kernels import second_hash

FP_SALT = U64(0xD6E8FEB86659FD93)
BL_SALT = U64(0xA0761D6478BD642F)

PREFETCH_DIST = 32  # gf_encode prefetch distance (keys); 12 -> 32 took 10^7-key encoding 120 -> 105 ns
QUERY_BLOCK = 8192  # keys walking together in gf_query_pipelined
PREFETCH_QUERY = 32  # its prefetch distance (keys)

OPEN = 0
MATCH = 1
INVALID = 2
EXHAUSTED = 3


@jit_inline
def fmix64(z: np.uint64) -> np.uint64:
    z ^= z >> U64(33)
    z *= U64(0xFF51AFD7ED558CCD)
    z ^= z >> U64(33)
    z *= U64(0xC4CEB9FE1A85EC53)
    z ^= z >> U64(33)
    return z


@jit_inline
def low_mask(bits: np.int64) -> np.uint64:
    """2^bits - 1 for bits in [0, 64] (no shift by 64)."""
    return (U64(1) << U64(bits)) - U64(1) if bits < 64 else ~U64(0)


@jit_inline
def get_cell(words: np.ndarray, idx: np.int64, c: np.int64, mask: np.uint64) -> np.uint64:
    """Cell ``idx`` of width ``c``, without a branch: every cell array carries one padding
    word after its last cell (checked on load), so ``words[w + 1]`` always exists. A cell
    crosses a word boundary at random (about c/64 of the time); the branch it replaced was
    mispredicted about half the time and took 270 -> 93 ns off a negative lookup in an
    L2-resident filter (2/3 of the time per probe)."""
    bit = idx * c
    w = bit >> 6
    b = U64(bit & 63)
    # (x << 1) << (63 - b) == x << (64 - b) for b > 0 and 0 for b == 0 (no shift by 64)
    return ((words[w] >> b) | ((words[w + 1] << U64(1)) << (U64(63) - b))) & mask


@jit_inline
def set_cell(words: np.ndarray, idx: np.int64, c: np.int64, mask: np.uint64, val: np.uint64) -> None:
    bit = idx * c
    w = bit >> 6
    b = bit & 63
    words[w] = (words[w] & ~(mask << U64(b))) | ((val & mask) << U64(b))
    if b + c > 64:
        r = 64 - b
        hmask = mask >> U64(r)
        words[w + 1] = (words[w + 1] & ~hmask) | ((val & mask) >> U64(r))


@jit_read
def all_cells(words: np.ndarray, ncells: int, c: int) -> np.ndarray:
    """Every cell of a packed array of ``ncells`` cells of ``c`` bits."""
    mask = low_mask(c)
    out = np.empty(ncells, dtype=np.uint64)
    for n in range(ncells):
        out[n] = get_cell(words, n, c, mask)
    return out


# --------------------------------------------------------------------------- Geometric filter


@jit_inline
def fingerprint(h1: np.uint64, fpmod: np.uint64) -> np.uint64:
    """f(x) in [1, 2^E - 1] (Assumption 3.2.1), fpmod = 2^E - 1."""
    return U64(1) + mulhi64(fmix64(h1 ^ FP_SALT), fpmod)  # type: ignore[call-arg]


@jit_inline
def probe(h1: np.uint64, h2: np.uint64, t: np.int64, m: np.uint64) -> np.int64:
    g = h1 + U64(t) * h2 + U64((t * t * t - t) // 6)
    return np.int64(mulhi64(fmix64(g), m))  # type: ignore[call-arg]


@jit_inline
def cell_value(
    wide: bool, cell: np.uint64, idx: np.int64, high: np.ndarray, vb: np.int64, vmask: np.uint64, cb: np.int64,
    bmask: np.uint64,
) -> np.uint64:
    """The value part of a Geometric cell: its ``vb`` low bits (``vmask``), and when ``wide``
    (c > 64) its ``cb``-bit part in ``high`` (``bmask``) above them. Hot loops pass a constant
    ``wide``, so their code for cells of at most 64 bits never touches ``high``."""
    v = cell & vmask
    if wide:
        v |= get_cell(high, idx, cb, bmask) << U64(vb)
    return v


@jit_inline
def put_cell(
    wide: bool, words: np.ndarray, high: np.ndarray, idx: np.int64, c: np.int64, mask: np.uint64, vb: np.int64,
    vmask: np.uint64, cb: np.int64, bmask: np.uint64, fp: np.uint64, value: np.uint64,
) -> None:
    """Write fingerprint ``fp`` and ``value`` (0: an invalid cell) into Geometric cell ``idx``
    (``mask``, ``vmask``, ``bmask``: the low_mask of c, vb and cb)."""
    set_cell(words, idx, c, mask, (fp << U64(vb)) | (value & vmask))
    if wide:
        set_cell(high, idx, cb, bmask, value >> U64(vb))


@jit_mut
def gf_write_cell(
    words: np.ndarray, high: np.ndarray, idx: int, c: int, vb: int, cb: int, fp: np.uint64, value: np.uint64
) -> None:
    """:func:`put_cell` for one cell (update / insert / remove after encoding)."""
    put_cell(cb > 0, words, high, idx, c, low_mask(c), vb, low_mask(vb), cb, low_mask(cb), fp, value)


@jit_inline
def walk(
    h1: np.uint64,
    fp: np.uint64,
    words: np.ndarray,
    high: np.ndarray,
    offsets: np.ndarray,
    sizes: np.ndarray,
    k: np.int64,
    c: np.int64,
    vb: np.int64,
    cb: np.int64,
    mask: np.uint64,
) -> tuple[np.int64, np.int64, np.uint64, np.int64, np.int64]:
    """Algorithm 4's walk with Algorithm 5's statuses: (status, cell, value, table, probes)."""
    h2 = second_hash(h1)
    vmask = low_mask(vb)
    bmask = low_mask(cb)
    t = 0
    for i in range(sizes.shape[0]):
        m = U64(sizes[i])
        base = offsets[i]
        for _j in range(k):
            idx = base + probe(h1, h2, t, m)
            t += 1
            cell = get_cell(words, idx, c, mask)
            if cell == U64(0):
                return OPEN, idx, U64(0), i, t
            if (cell >> U64(vb)) == fp:
                val = cell_value(cb > 0, cell, idx, high, vb, vmask, cb, bmask)
                if val != U64(0):
                    return MATCH, idx, val, i, t
                return INVALID, idx, U64(0), i, t
    return EXHAUSTED, np.int64(-1), U64(0), sizes.shape[0], t


@jit_inline
def _encode_table(
    wide: bool, ncur: int, cur: np.ndarray, nxt: np.ndarray, first: np.ndarray, h1s: np.ndarray, h2s: np.ndarray,
    fps: np.ndarray, values: np.ndarray, status: np.ndarray, words: np.ndarray, high: np.ndarray, base: int,
    m: np.uint64, t0: int, k: int, c: int, mask: np.uint64, vb: int, vmask: np.uint64, cb: int, bmask: np.uint64,
    dist: int,
) -> tuple[int, int, int, int]:
    """One table of :func:`gf_encode`: the ``ncur`` keys ``cur`` still walking try it in order
    (first cells ``first``, prefetched ``dist`` keys ahead); the rejected ones go to ``nxt``.
    Returns (rejected, stored, invalidated, landed here). Called with a constant ``wide``."""
    nn = 0
    stored = 0
    invalidated = 0
    landed = 0
    for a in range(ncur):
        if a + dist < ncur:
            prefetch(words, (first[a + dist] * c) >> 6)  # type: ignore[call-arg]
        x = cur[a]
        h1 = h1s[x]
        fp = fps[x]
        done = False
        for j in range(k):
            idx = first[a] if j == 0 else base + probe(h1, h2s[x], t0 + j, m)
            cell = get_cell(words, idx, c, mask)
            if cell == U64(0):  # Open
                put_cell(wide, words, high, idx, c, mask, vb, vmask, cb, bmask, fp, values[x])
                stored += 1
                done = True
                break
            if (cell >> U64(vb)) == fp:  # Match / Unrecoverable: invalidate (line 19)
                status[x] = 2 if cell_value(wide, cell, idx, high, vb, vmask, cb, bmask) != U64(0) else 1
                put_cell(wide, words, high, idx, c, mask, vb, vmask, cb, bmask, fp, U64(0))
                invalidated += 1
                done = True
                break
        if done:
            landed += 1
        else:
            nxt[nn] = x
            nn += 1
    return nn, stored, invalidated, landed


@jit_mut
def gf_encode(
    h1s: np.ndarray,
    values: np.ndarray,
    words: np.ndarray,
    high: np.ndarray,
    offsets: np.ndarray,
    sizes: np.ndarray,
    k: int,
    c: int,
    vb: int,
    cb: int,
    fpmod: np.uint64,
    landed: np.ndarray,
    dist: int = PREFETCH_DIST,
) -> tuple[int, int, int, np.ndarray, np.ndarray, np.ndarray]:
    """First scan of Algorithm 3 (compact rules of Sec. 3.2.4) over one chunk.

    The chunk is processed *table by table*: all its keys try A_1 in order, the rejected
    ones try A_2 in order, and so on. This gives exactly the cells of the key-by-key order of
    Algorithm 3: table i only ever sees the keys rejected by A_1..A_{i-1}, in the same order,
    whichever way the loops are nested (tests compare with a literal Algorithm 3). Within a
    table the first probe of a key does not depend on earlier keys, so it is prefetched
    ``dist`` (PREFETCH_DIST) keys ahead; memory is O(chunk).

    ``values`` are uint64 in [1, 2^V - 1]. ``landed[i]`` counts keys whose walk ended in
    table i (``landed[N]``: exhausted), so the trying-set sizes |S_i| are suffix sums. Returns
    (stored, invalidated, exhausted, unstored, inv_cells, inv_fps): the chunk positions of the
    keys that were not stored (they met their fingerprint, or ran past A_N), and the cells that
    this chunk turned from valid to invalid with their fingerprints (their owners' answers are
    now wrong too).
    """
    mask = low_mask(c)
    vmask = low_mask(vb)
    bmask = low_mask(cb)
    nk = h1s.shape[0]
    status = np.zeros(nk, dtype=np.uint8)  # 1: not stored, 2: not stored + invalidated a valid cell
    nt = sizes.shape[0]
    cur = np.empty(nk, dtype=np.int32)
    nxt = np.empty(nk, dtype=np.int32)
    h2s = np.empty(nk, dtype=np.uint64)
    fps = np.empty(nk, dtype=np.uint64)
    first = np.empty(nk, dtype=np.int64)
    for a in range(nk):
        cur[a] = a
        h2s[a] = second_hash(h1s[a])
        fps[a] = fingerprint(h1s[a], fpmod)
    ncur = nk
    stored = 0
    invalidated = 0
    for i in range(nt):
        if ncur == 0:
            break
        m = U64(sizes[i])
        base = offsets[i]
        t0 = i * k
        for a in range(ncur):  # first cells in table i of every key still walking
            x = cur[a]
            first[a] = base + probe(h1s[x], h2s[x], t0, m)
        for a in range(min(dist, ncur)):
            prefetch(words, (first[a] * c) >> 6)  # type: ignore[call-arg]
        if cb > 0:  # two copies of the loop: the narrow one never touches `high`
            nn, st, inv, ld = _encode_table(True, ncur, cur, nxt, first, h1s, h2s, fps, values, status, words, high,
                                            base, m, t0, k, c, mask, vb, vmask, cb, bmask, dist)
        else:
            nn, st, inv, ld = _encode_table(False, ncur, cur, nxt, first, h1s, h2s, fps, values, status, words, high,
                                            base, m, t0, k, c, mask, vb, vmask, cb, bmask, dist)
        stored += st
        invalidated += inv
        landed[i] += ld
        tmp = cur
        cur = nxt
        nxt = tmp
        ncur = nn
    landed[nt] += ncur
    for a in range(ncur):  # exhausted
        status[cur[a]] = 1
    nu = 0
    ni = 0
    for x in range(nk):
        if status[x] != 0:
            nu += 1
        if status[x] == 2:
            ni += 1
    unstored = np.empty(nu, dtype=np.int64)
    inv_cells = np.empty(ni, dtype=np.int64)
    inv_fps = np.empty(ni, dtype=np.uint64)
    a = 0
    b = 0
    for x in range(nk):
        if status[x] != 0:
            unstored[a] = x
            a += 1
        if status[x] == 2:
            # its walk now ends on the cell it invalidated: every earlier cell of the walk had
            # another fingerprint when it passed, and fingerprints never change
            _st, idx, _val, _tab, _pr = walk(h1s[x], fps[x], words, high, offsets, sizes, k, c, vb, cb, mask)
            inv_cells[b] = idx
            inv_fps[b] = fps[x]
            b += 1
    return stored, invalidated, ncur, unstored, inv_cells, inv_fps


@jit_read
def gf_find_owners(
    h1s: np.ndarray,
    inv_fps: np.ndarray,
    inv_cells: np.ndarray,
    words: np.ndarray,
    high: np.ndarray,
    offsets: np.ndarray,
    sizes: np.ndarray,
    k: int,
    c: int,
    vb: int,
    cb: int,
    fpmod: np.uint64,
) -> np.ndarray:
    """Chunk positions of the keys whose walk ends on one of ``inv_cells`` (sorted), looking
    only at keys whose fingerprint is in ``inv_fps`` (sorted): the owners of the cells that
    were invalidated after they were stored, plus the keys that invalidated them."""
    mask = low_mask(c)
    out = np.empty(h1s.shape[0], dtype=np.int64)
    no = 0
    for n in range(h1s.shape[0]):
        h1 = h1s[n]
        fp = fingerprint(h1, fpmod)
        if _bsearch(inv_fps, fp) < 0:
            continue
        st, idx, _val, _tab, _pr = walk(h1, fp, words, high, offsets, sizes, k, c, vb, cb, mask)
        if st == INVALID and _bsearch(inv_cells, idx) >= 0:
            out[no] = n
            no += 1
    return out[:no].copy()


@jit_inline
def _bsearch(arr: np.ndarray, x: np.uint64 | np.int64) -> np.int64:
    """Index of ``x`` in the sorted array ``arr`` (uint64 or int64; numba specializes), or -1."""
    lo = 0
    hi = arr.shape[0]
    while lo < hi:
        mid = (lo + hi) >> 1
        if arr[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    if lo < arr.shape[0] and arr[lo] == x:
        return lo
    return -1


@jit_read
def gf_query(
    h1s: np.ndarray,
    words: np.ndarray,
    high: np.ndarray,
    offsets: np.ndarray,
    sizes: np.ndarray,
    k: int,
    c: int,
    vb: int,
    cb: int,
    fpmod: np.uint64,
    ovf_h1: np.ndarray,
    out: np.ndarray,
    flag: np.ndarray,
) -> int:
    """Algorithm 4 over a batch, key by key (the reference of :func:`gf_query_pipelined`).
    ``out`` (uint64) gets the value or 0; ``flag[n] = 1`` when the overflow table holds a key
    with this h1 (the caller confirms with the second hash). Returns the total number of cells
    probed."""
    mask = low_mask(c)
    probes = 0
    for n in range(h1s.shape[0]):
        h1 = h1s[n]
        fp = fingerprint(h1, fpmod)
        st, _idx, val, _tab, pr = walk(h1, fp, words, high, offsets, sizes, k, c, vb, cb, mask)
        probes += pr
        flag[n] = 0
        out[n] = val
        if st != OPEN and st != MATCH and ovf_h1.shape[0] > 0 and _bsearch(ovf_h1, h1) >= 0:
            flag[n] = 1
    return probes


@jit_inline
def _query_probe(
    wide: bool, ncur: int, keys: np.ndarray, xs: np.ndarray, ys: np.ndarray, fps: np.ndarray, pos: np.ndarray,
    words: np.ndarray, high: np.ndarray, c: int, mask: np.uint64, vb: int, vmask: np.uint64, cb: int,
    bmask: np.uint64, h1s: np.ndarray, ovf_h1: np.ndarray, has_ovf: bool, out: np.ndarray, flag: np.ndarray,
) -> int:
    """Test the cells ``pos`` of one probe of the ``ncur`` keys walking (prefetching
    PREFETCH_QUERY keys ahead), answer the keys that stop and compact the others; returns how
    many walk on. Called with a constant ``wide``: the compiler keeps two loops, and the one for
    cells of at most 64 bits has no code for ``high``."""
    nn = 0
    for a in range(ncur):
        if a + PREFETCH_QUERY < ncur:
            prefetch(words, (pos[a + PREFETCH_QUERY] * c) >> 6)  # type: ignore[call-arg]
        cell = get_cell(words, pos[a], c, mask)
        key = keys[a]
        if cell == U64(0):  # Open: absent
            out[key] = 0
            flag[key] = 0
        elif (cell >> U64(vb)) == fps[a]:  # Match, or invalid: ask the overflow table
            val = cell_value(wide, cell, pos[a], high, vb, vmask, cb, bmask)
            out[key] = val
            if val != U64(0):
                flag[key] = 0
            else:
                flag[key] = 1 if (has_ovf and _bsearch(ovf_h1, h1s[key]) >= 0) else 0
        else:  # another key's cell: walk on
            keys[nn] = key
            xs[nn] = xs[a]
            ys[nn] = ys[a]
            fps[nn] = fps[a]
            nn += 1
    return nn


@jit_read
def gf_query_pipelined(
    h1s: np.ndarray,
    words: np.ndarray,
    high: np.ndarray,
    offsets: np.ndarray,
    sizes: np.ndarray,
    k: int,
    c: int,
    vb: int,
    cb: int,
    fpmod: np.uint64,
    ovf_h1: np.ndarray,
    out: np.ndarray,
    flag: np.ndarray,
) -> int:
    """Same answers (and probe count) as :func:`gf_query`, pipelined over blocks of keys
    (the "pipelining" of Section 5.3).

    A block of QUERY_BLOCK keys walks *probe by probe*, like :func:`gf_encode`: the cells of
    probe t of every key still walking are computed in one branch-free loop, then tested in a
    second loop that prefetches PREFETCH_QUERY keys ahead; the keys that walk on are compacted
    in place. Independent keys' cache misses overlap instead of queuing behind one key's chain
    of dependent probes. Each key carries its probe value incrementally: with x_0 = h1,
    y_0 = h2 and x_{t+1} = x_t + y_t, y_{t+1} = y_t + t + 1, x_t = h1 + t h2 + (t^3 - t)/6 is
    the G_t of :func:`probe`. Measured at 10^7 keys (V = 16, e_o = 2^-16, k = 1): negatives
    246 -> 149 ns/key, positives 124 -> 72, against one slot per key in flight."""
    mask = low_mask(c)
    vmask = low_mask(vb)
    bmask = low_mask(cb)
    n = h1s.shape[0]
    ntab = sizes.shape[0]
    has_ovf = ovf_h1.shape[0] > 0
    keys = np.empty(QUERY_BLOCK, np.int64)
    xs = np.empty(QUERY_BLOCK, np.uint64)  # x_t = G_t
    ys = np.empty(QUERY_BLOCK, np.uint64)  # y_t
    fps = np.empty(QUERY_BLOCK, np.uint64)
    pos = np.empty(QUERY_BLOCK, np.int64)
    probes = 0
    for start in range(0, n, QUERY_BLOCK):
        ncur = min(QUERY_BLOCK, n - start)
        for a in range(ncur):
            h1 = h1s[start + a]
            keys[a] = start + a
            xs[a] = h1
            ys[a] = second_hash(h1)
            fps[a] = fingerprint(h1, fpmod)
        t = 0
        for i in range(ntab * k):
            if ncur == 0:
                break
            tab = i // k
            m = U64(sizes[tab])
            base = offsets[tab]
            for a in range(ncur):  # cells of probe t, then advance to t + 1
                x = xs[a]
                pos[a] = base + np.int64(mulhi64(fmix64(x), m))  # type: ignore[call-arg]
                xs[a] = x + ys[a]
                ys[a] += U64(t + 1)
            t += 1
            for a in range(min(PREFETCH_QUERY, ncur)):
                prefetch(words, (pos[a] * c) >> 6)  # type: ignore[call-arg]
            if cb > 0:  # two copies of the loop: the narrow one never touches `high`
                nn = _query_probe(True, ncur, keys, xs, ys, fps, pos, words, high, c, mask, vb, vmask, cb, bmask,
                                  h1s, ovf_h1, has_ovf, out, flag)
            else:
                nn = _query_probe(False, ncur, keys, xs, ys, fps, pos, words, high, c, mask, vb, vmask, cb, bmask,
                                  h1s, ovf_h1, has_ovf, out, flag)
            probes += ncur
            ncur = nn
        for a in range(ncur):  # exhausted: only the overflow table can hold it
            key = keys[a]
            out[key] = 0
            flag[key] = 1 if (has_ovf and _bsearch(ovf_h1, h1s[key]) >= 0) else 0
    return probes


@jit_read
def gf_walk_one(
    h1: np.uint64,
    words: np.ndarray,
    high: np.ndarray,
    offsets: np.ndarray,
    sizes: np.ndarray,
    k: int,
    c: int,
    vb: int,
    cb: int,
    fpmod: np.uint64,
) -> tuple[np.int64, np.int64, np.uint64, np.uint64]:
    """(status, cell index, value, fingerprint) of one key."""
    fp = fingerprint(h1, fpmod)
    st, idx, val, _tab, _pr = walk(h1, fp, words, high, offsets, sizes, k, c, vb, cb, low_mask(c))
    return st, idx, val, fp


@jit_read
def gf_fingerprints(h1s: np.ndarray, fpmod: np.uint64) -> np.ndarray:
    out = np.empty(h1s.shape[0], dtype=np.uint64)
    for n in range(h1s.shape[0]):
        out[n] = fingerprint(h1s[n], fpmod)
    return out


@jit_read
def gf_positions(h1s: np.ndarray, sizes: np.ndarray, k: int) -> np.ndarray:
    """(n, N*k) cell indices *within* each table, probe order (for the reference model)."""
    nt = sizes.shape[0]
    out = np.empty((h1s.shape[0], nt * k), dtype=np.int64)
    for n in range(h1s.shape[0]):
        h1 = h1s[n]
        h2 = second_hash(h1)
        for t in range(nt * k):
            out[n, t] = probe(h1, h2, t, U64(sizes[t // k]))
    return out


@jit_read
def gf_table_stats(
    words: np.ndarray, high: np.ndarray, offsets: np.ndarray, c: int, vb: int, cb: int
) -> tuple[np.ndarray, np.ndarray, np.int64]:
    """Per table: occupied cells, valid cells; and the number of malformed cells
    (non-zero value part with a zero fingerprint: impossible by Assumption 3.2.1)."""
    mask = low_mask(c)
    vmask = low_mask(vb)
    bmask = low_mask(cb)
    nt = offsets.shape[0] - 1
    occ = np.zeros(nt, dtype=np.int64)
    val = np.zeros(nt, dtype=np.int64)
    bad = 0
    for i in range(nt):
        for idx in range(offsets[i], offsets[i + 1]):
            cell = get_cell(words, idx, c, mask)
            v = cell_value(cb > 0, cell, idx, high, vb, vmask, cb, bmask)
            if cell != U64(0):
                occ[i] += 1
                if (cell >> U64(vb)) == U64(0):
                    bad += 1
                if v != U64(0):
                    val[i] += 1
            elif v != U64(0):
                bad += 1
    return occ, val, bad


@jit_read
def gf_max_value(words: np.ndarray, high: np.ndarray, ncells: int, c: int, vb: int, cb: int) -> np.uint64:
    """The largest value part of the first ``ncells`` cells (label ids are checked against it)."""
    mask = low_mask(c)
    vmask = low_mask(vb)
    bmask = low_mask(cb)
    top = U64(0)
    for idx in range(ncells):
        v = cell_value(cb > 0, get_cell(words, idx, c, mask), idx, high, vb, vmask, cb, bmask)
        if v > top:
            top = v
    return top


# --------------------------------------------------------------------------- Monte Carlo


@jit_inline
def _draw(state: np.uint64, m: np.uint64, rng_range: np.uint64) -> tuple[np.uint64, np.uint64]:
    state = state + GOLDEN
    z = fmix64(state)
    if rng_range == U64(0):
        return state, mulhi64(z, m)  # type: ignore[call-arg]
    return state, mulhi64(z, rng_range) % m  # type: ignore[call-arg]


@jit_read
def mc_load_factor(m: int, k: int, n: int, rng_range: np.uint64, seed: np.uint64) -> int:
    """Algorithm 6: n keys, k attempts each, on m bits; returns the number of set bits."""
    bits = np.zeros((m + 63) // 64, dtype=np.uint64)
    state = fmix64(seed ^ FP_SALT)
    mm = U64(m)
    c = 0
    for _i in range(n):
        for _j in range(k):
            state, h = _draw(state, mm, rng_range)
            w = h >> U64(6)
            b = U64(1) << (h & U64(63))
            if bits[w] & b == U64(0):
                bits[w] |= b
                c += 1
                break
    return c


@jit_read
def mc_storage_ratio(m: int, k: int, target: int, rng_range: np.uint64, seed: np.uint64) -> int:
    """Algorithm 7 (corrected): number of keys tried until ``target`` of m bits are set."""
    bits = np.zeros((m + 63) // 64, dtype=np.uint64)
    state = fmix64(seed ^ FP_SALT)
    mm = U64(m)
    c = 0
    tried = 0
    while c < target:
        tried += 1
        for _j in range(k):
            state, h = _draw(state, mm, rng_range)
            w = h >> U64(6)
            b = U64(1) << (h & U64(63))
            if bits[w] & b == U64(0):
                bits[w] |= b
                c += 1
                break
    return tried


@jit_read
def mc_table_loads(sizes: np.ndarray, k: int, n: int, seed: np.uint64, rng_range: np.uint64) -> np.ndarray:
    """Simulation of a whole table sequence with the generator of Algorithms 6/7 (uniform
    when rng_range = 0, else ``random() mod M_i``): occupied cells per table after n keys."""
    nt = sizes.shape[0]
    offs = np.zeros(nt + 1, dtype=np.int64)
    for i in range(nt):
        offs[i + 1] = offs[i] + sizes[i]
    bits = np.zeros((offs[nt] + 63) // 64, dtype=np.uint64)
    occ = np.zeros(nt, dtype=np.int64)
    state = fmix64(seed ^ BL_SALT)
    for _x in range(n):
        done = False
        for i in range(nt):
            for _j in range(k):
                state, h = _draw(state, U64(sizes[i]), rng_range)
                idx = U64(offs[i]) + h
                w = idx >> U64(6)
                b = U64(1) << (idx & U64(63))
                if bits[w] & b == U64(0):
                    bits[w] |= b
                    occ[i] += 1
                    done = True
                    break
            if done:
                break
    return occ
