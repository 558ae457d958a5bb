"""An independent MLBF / MLBF* / VLBF, written from document 002 (Sections 3-5) with numpy alone.

It shares no code with :mod:`bloomkit.similarity`: its own Gaussian projections, its own hash
functions (the MurmurHash3 64-bit finalizer over salted words, k' independent functions for the
coarse addresses where bloomkit uses XXH64 and double hashing), its own bit arrays. The
reproductions of 002 run it beside bloomkit on the same data: where both agree with each other
and not with a theorem, the theorem is the approximation (the report's "document model
approximate"); where bloomkit disagrees with it, bloomkit is suspect.

The structure, as the document describes it:

* h(x) = floor(a . (x + s) / w), a ~ N(0, I_d) (Section 4, no random offset), k functions per
  AND-construction g_j, L constructions; BMLBF address loc_0 = h & (m - 1), m = 2^B; VLBF theta
  location = loc_0 >> theta, "set" when any of its 2^theta level-0 bits is (Theorem 4);
* MVBF (Section 5.2): coarse addresses from k' hashes of (j, upper substrings loc_0 >> (S-1)),
  modulo m' / 2^(S-1); one suffix bit per level v = 1..S-1 and address i: bit i of a hash of the
  k-bit slice of the v-th lower bits; the level-0 address is stored, level theta tests the
  2^theta bits under its prefix;
* a query is positive at level theta when for some j all k VLBF-theta bits (MLBF only) and all
  k' VVBF-theta bits are set.
"""

from __future__ import annotations

import numpy as np

__all__ = ["IndependentMLBF"]

_M1 = np.uint64(0xFF51AFD7ED558CCD)
_M2 = np.uint64(0xC4CEB9FE1A85EC53)


def _fmix(x: np.ndarray) -> np.ndarray:
    """MurmurHash3's 64-bit finalizer (uint64 arrays wrap around)."""
    x = x ^ (x >> np.uint64(33))
    x = x * _M1
    x = x ^ (x >> np.uint64(33))
    x = x * _M2
    out: np.ndarray = x ^ (x >> np.uint64(33))
    return out


class IndependentMLBF:
    """One filter of document 002 (module docstring); ``physical=False`` is the MLBF* and
    ``verify=False`` in :meth:`query` the bare VLBF of Theorems 5-6.

    Parameters
    ----------
    dim, w, num_levels, and_width, or_count, num_bits, verify_bits, verify_hashes :
        d, w, S, k, L, m, m', k' of the document.
    rng : numpy Generator
        Draws the projections and the salts of the hash functions.
    shift : float
        s of Section 4 (x + s >= 0 over the domain).
    """

    def __init__(self, dim: int, w: float, *, num_levels: int, and_width: int, or_count: int, num_bits: int,
                 verify_bits: int, verify_hashes: int, rng: np.random.Generator, shift: float = 1.0,
                 physical: bool = True) -> None:
        self.S, self.k, self.L = num_levels, and_width, or_count
        self.m, self.mp, self.kp = num_bits, verify_bits, verify_hashes
        self.physical = physical
        self.shift = shift
        self.A = rng.standard_normal((dim, and_width * or_count)) / w
        self.salts = rng.integers(0, 2**63, size=3 + verify_hashes + num_levels, dtype=np.int64).astype(np.uint64)
        self.bml = np.zeros(num_bits, dtype=bool)
        self.mv = np.zeros(verify_bits, dtype=bool)
        self._levels: dict[tuple[str, int], np.ndarray] = {}  # VLBF / VVBF theta, derived after adds

    def _loc(self, X: np.ndarray) -> np.ndarray:
        """(n, L, k) level-0 BMLBF addresses."""
        h = np.floor((X + self.shift) @ self.A).astype(np.int64) & (self.m - 1)
        return h.reshape(len(X), self.L, self.k)

    def _mvbf(self, loc: np.ndarray) -> np.ndarray:
        """(n, L, k') level-0 MVBF addresses of every construction (Section 5.2)."""
        S, k = self.S, self.k
        n = loc.shape[0]
        key = np.broadcast_to(np.arange(self.L, dtype=np.uint64)[None, :], (n, self.L)) ^ self.salts[0]
        key = _fmix(key)
        for t in range(k):
            key = _fmix(key ^ (loc[:, :, t] >> (S - 1)).astype(np.uint64) * self.salts[1] + np.uint64(t))
        mc = np.uint64(self.mp >> (S - 1))
        addr = np.stack([(_fmix(key ^ self.salts[3 + i]) % mc).astype(np.int64) for i in range(self.kp)], axis=2)
        for v in range(1, S):
            sl = np.zeros(loc.shape[:2], dtype=np.uint64)
            for t in range(k):
                sl |= ((loc[:, :, t] >> (S - 1 - v)) & 1).astype(np.uint64) << np.uint64(t)
            bits = _fmix(sl ^ self.salts[3 + self.kp + v])
            for i in range(self.kp):
                addr[:, :, i] = (addr[:, :, i] << 1) | ((bits >> np.uint64(i)) & np.uint64(1)).astype(np.int64)
        return addr

    def add(self, X: np.ndarray) -> None:
        loc = self._loc(np.asarray(X, dtype=np.float64))
        if self.physical:
            self.bml[loc.ravel()] = True
        self.mv[self._mvbf(loc).ravel()] = True
        self._levels.clear()

    def _level(self, name: str, level: int) -> np.ndarray:
        """VLBF / VVBF theta: location a is set when any of its 2^theta level-0 bits is."""
        if level == 0:
            return self.bml if name == "bml" else self.mv
        got = self._levels.get((name, level))
        if got is None:
            finer = self._level(name, level - 1)
            got = self._levels[(name, level)] = finer[0::2] | finer[1::2]
        return got

    def query(self, Q: np.ndarray, level: int, *, verify: bool = True) -> np.ndarray:
        """Bool per query row: positive at level theta."""
        return self.query_levels(Q, (level,), verify=verify)[0]

    def query_levels(self, Q: np.ndarray, levels: tuple[int, ...], *, verify: bool = True) -> list[np.ndarray]:
        """:meth:`query` at several levels (the addresses computed once)."""
        loc = self._loc(np.asarray(Q, dtype=np.float64))
        addr = self._mvbf(loc) if verify else None
        out = []
        for level in levels:
            ok = np.ones(loc.shape[:2], dtype=bool)
            if self.physical:
                ok &= self._level("bml", level)[loc >> level].all(axis=2)
            if addr is not None:
                ok &= self._level("mv", level)[addr >> level].all(axis=2)
            out.append(np.asarray(ok.any(axis=1)))
        return out
