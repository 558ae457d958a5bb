"""The snapshot file of ``bloomkit serve``: a magic line, a JSON header that carries its own
SHA-256 (the database's uuid and write number, the schema and configuration, the sizes and hash
of the slot map), then the slot map and the saved :class:`~bloomkit.ranges.ProfileIndex`. The
service decides when to write and whether to trust one
(:class:`~bloomkit.serve.service.MatchingService`); this module reads and writes the format.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from ..errors import FormatError

__all__ = ["MAGIC", "head_hash", "peek_head", "snapshot_parts", "split_snapshot"]

MAGIC = b"BLOOMKIT-SERVE-SNAPSHOT 1\n"


def head_hash(head: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(head, sort_keys=True).encode()).hexdigest()


def split_snapshot(data: bytes) -> tuple[dict[str, Any], memoryview]:
    """(checked header, body) of a snapshot file; FormatError if it is not one or its header
    is damaged."""
    if not data.startswith(MAGIC):
        raise FormatError("not a bloomkit serve snapshot")
    end = data.index(b"\n", len(MAGIC))
    head = json.loads(data[len(MAGIC):end])
    if not isinstance(head, dict) or head.pop("head_sha256", None) != head_hash(head):
        raise FormatError("the snapshot's header is damaged")
    return head, memoryview(data)[end + 1:]


def peek_head(path: Path) -> dict[str, Any] | None:
    """The header of the snapshot at ``path`` (None if unreadable or not one)."""
    try:
        with path.open("rb") as fh:
            data = fh.read(len(MAGIC) + (1 << 20))
        return split_snapshot(data + (b"" if b"\n" in data[len(MAGIC):] else b"\n"))[0]
    except (OSError, ValueError, FormatError):
        return None


def snapshot_parts(head: dict[str, Any], slot_map: bytes, index_bytes: bytes) -> list[bytes]:
    """The parts of a snapshot file (written in order, atomically, by the caller): ``head``
    (it gets its ``head_sha256``), the slot map, the saved index."""
    head["head_sha256"] = head_hash(head)
    return [MAGIC, json.dumps(head).encode() + b"\n", slot_map, index_bytes]
