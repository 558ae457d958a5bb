"""The maps between the database ids of a :class:`~bloomkit.serve.service.MatchingService` and
the slots of its :class:`~bloomkit.ranges.ProfileIndex`: the view a search reads (the index and
its slot -> id map, replaced together) and the id -> slot map of the writer thread.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..ranges import ProfileIndex

__all__ = ["IdMap", "View"]


@dataclass(frozen=True)
class View:
    """The index and its slot -> database id map, replaced together: a search reads one view,
    so a compaction (a new index, renumbered slots) never pairs slots with the wrong map."""

    index: ProfileIndex
    slot_to_id: np.ndarray


class IdMap:
    """Database id -> index slot for the live profiles, as two sorted int64 arrays: O(live)
    memory however many ids were ever given out (ids only grow: a new one is appended), a
    deleted id is marked and dropped at the next :meth:`compact`.

    Only the writer thread (and start-up) uses it."""

    def __init__(self, slot_to_id: np.ndarray) -> None:
        live = np.flatnonzero(slot_to_id >= 0)
        order = np.argsort(slot_to_id[live], kind="stable")
        self._ids = slot_to_id[live][order].astype(np.int64)
        self._slots = live[order].astype(np.int64)
        self._n = int(self._ids.size)
        self._dead = 0

    @property
    def nbytes(self) -> int:
        return int(self._ids.nbytes + self._slots.nbytes)

    def get(self, pids: np.ndarray) -> np.ndarray:
        """Slots of ``pids`` (-1 where not in the index). Complexity: O(len(pids) log live)."""
        ids = self._ids[: self._n]
        at = np.searchsorted(ids, pids)
        ok = at < self._n
        ok[ok] = ids[at[ok]] == pids[ok]
        out = np.full(len(pids), -1, dtype=np.int64)
        out[ok] = self._slots[at[ok]]
        return out

    def set(self, pids: np.ndarray, slots: np.ndarray) -> None:
        """Map ``pids`` (distinct) to ``slots`` (-1: no longer in the index)."""
        ids = self._ids[: self._n]
        at = np.searchsorted(ids, pids)
        found = at < self._n
        found[found] = ids[at[found]] == pids[found]
        old = self._slots[at[found]]
        self._dead += int(np.count_nonzero((old >= 0) & (slots[found] < 0)) - np.count_nonzero((old < 0) & (slots[found] >= 0)))
        self._slots[at[found]] = slots[found]
        new = ~found & (slots >= 0)
        if new.any():
            add_ids, add_slots = pids[new], slots[new]
            order = np.argsort(add_ids, kind="stable")
            add_ids, add_slots = add_ids[order], add_slots[order]
            if self._n and add_ids[0] <= ids[-1]:  # not the usual append of new ids: merge
                all_ids = np.concatenate([ids, add_ids])
                all_slots = np.concatenate([self._slots[: self._n], add_slots])
                o = np.argsort(all_ids, kind="stable")
                self._ids, self._slots, self._n = all_ids[o], all_slots[o], int(all_ids.size)
            else:
                need = self._n + add_ids.size
                if need > self._ids.size:
                    cap = max(need, 2 * self._ids.size, 1024)
                    self._ids = np.concatenate([ids, np.zeros(cap - self._n, dtype=np.int64)])
                    self._slots = np.concatenate([self._slots[: self._n], np.full(cap - self._n, -1, dtype=np.int64)])
                self._ids[self._n : need] = add_ids
                self._slots[self._n : need] = add_slots
                self._n = need
        if self._dead > max(self._n // 2, 1024):
            self.compact()

    def remap(self, new_slot: np.ndarray) -> None:
        """Slots renumbered by a compaction: ``new_slot[old]`` (-1 for slots gone)."""
        live = self._slots[: self._n] >= 0
        self._slots[: self._n][live] = new_slot[self._slots[: self._n][live]]
        self.compact()

    def compact(self) -> None:
        keep = self._slots[: self._n] >= 0
        self._ids, self._slots = self._ids[: self._n][keep].copy(), self._slots[: self._n][keep].copy()
        self._n, self._dead = int(self._ids.size), 0
