"""The wire format of folded filters: what a sender transmits (doc 003, Sections III and IV-C).

A sender keeps ``B_1`` and sends the folded ``B_t``; the message carries what a receiver needs
to test keys (``k``, the seed, the current size ``m_t = m_1 / fold factor``) and to fold
further, and nothing of ``B_1``. Layout of wire version 1 (little-endian; *varint* = unsigned
LEB128: 7 bits per byte, low groups first, high bit set on every byte but the last)::

    offset  size    field
    0       4       magic b"BKFW"
    4       1       wire version (1)
    5       1       kind: 0 = bits, 1 = counters
    6       1       counter bits: 0 for bits; 4, 8, 16 or 32 for counters
    7       2       k, probes per key
    9       2       hash id (as in the container: 1 = XXH64 + SplitMix64 probes, 5 = XXH64 +
                    enhanced double hashing, :mod:`bloomkit._engine.probes`)
    11      8       seed
    19      varint  m_1
            varint  fold factor m_1 / m_t
            varint  count (items added minus removed)
            varint  set_version
            P       payload: ceil(m_t / 8) bytes for bits (bit i at byte i // 8, bit i % 8);
                    counters packed as in the container (4-bit: two per byte, low nibble
                    first; else little-endian uint8 / uint16 / uint32)
    end-4   4       CRC-32 (zlib) of every byte before it

Decoding is defensive, as the container's (docs/format.md): a message is untrusted input.
Beyond the CRC, :func:`decode` refuses a varint longer than 10 bytes, above ``2**64 - 1`` or
not minimally encoded, every field outside what the filters' constructors accept (``m_1`` in
``[1, 2**63 - 1]``, ``k`` in ``[1, 1024]``, count and set_version in ``[0, 2**63 - 1]``, a fold
factor that divides ``m_1``, a known kind and counter width), and a payload whose length is not
exactly what ``m_t`` needs, all before anything of the declared size is allocated. Every
refusal is a :class:`~bloomkit.errors.FormatError` naming the field.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass
from typing import Any

from .._validation import NUM_HASHES, Constraint, Int
from ..bloom import COUNTER_BITS, NUM_BITS
from ..errors import FormatError, InvalidParameterError

__all__ = [
    "COUNT",
    "KIND_BITS",
    "KIND_COUNTERS",
    "SET_VERSION",
    "WIRE_MAGIC",
    "WIRE_VERSION",
    "WireMessage",
    "decode",
    "encode",
    "payload_size",
]

WIRE_MAGIC = b"BKFW"
WIRE_VERSION = 1
KIND_BITS, KIND_COUNTERS = 0, 1
COUNT = Int(0)
"""The item count a foldable filter carries (adds minus removes, duplicates included)."""
SET_VERSION = Int(0)
"""The identifier of the set a transmitted filter describes."""
MAX_VARINT_BYTES = 10  # ceil(64 / 7)
_FIXED = struct.Struct("<BBBHHQ")
_MIN_SIZE = len(WIRE_MAGIC) + _FIXED.size + 4 + 4  # four one-byte varints, no payload, CRC


@dataclass(frozen=True)
class WireMessage:
    """The fields of one message (:func:`decode` returns it validated)."""

    kind: int
    counter_bits: int
    num_hashes: int
    hash_id: int
    seed: int
    m1: int
    factor: int
    count: int
    set_version: int
    payload: bytes

    @property
    def num_bits(self) -> int:
        """``m_t = m_1 / factor``: the size of the transmitted filter."""
        return self.m1 // self.factor


def payload_size(kind: int, counter_bits: int, num_bits: int) -> int:
    """Bytes of the payload of a filter of ``num_bits`` bits or counters. Complexity: O(1)."""
    if kind == KIND_BITS:
        return (num_bits + 7) // 8
    return (num_bits + 1) // 2 if counter_bits == 4 else num_bits * (counter_bits // 8)


def _put_varint(out: bytearray, v: int) -> None:
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return


def _get_varint(buf: bytes, pos: int, end: int, name: str) -> tuple[int, int]:
    v = shift = 0
    for i in range(MAX_VARINT_BYTES):
        if pos >= end:
            raise FormatError(f"wire data truncated inside the {name} field")
        b = buf[pos]
        pos += 1
        v |= (b & 0x7F) << shift
        if not b & 0x80:
            if b == 0 and i:
                raise FormatError(f"the {name} field of the wire header is not minimally encoded")
            if v >> 64:
                raise FormatError(f"the {name} field of the wire header overflows 64 bits")
            return v, pos
        shift += 7
    raise FormatError(f"the {name} field of the wire header is longer than {MAX_VARINT_BYTES} bytes")


def _field(constraint: Constraint, value: int, name: str) -> Any:
    try:
        return constraint(value, name, "from_wire")
    except InvalidParameterError as e:
        raise FormatError(f"invalid wire header: {e}") from None


def encode(msg: WireMessage) -> bytes:
    """The bytes of ``msg`` (the layout above). Complexity: O(len(payload))."""
    out = bytearray(WIRE_MAGIC)
    out += _FIXED.pack(WIRE_VERSION, msg.kind, msg.counter_bits, msg.num_hashes, msg.hash_id, msg.seed)
    for v in (msg.m1, msg.factor, msg.count, msg.set_version):
        _put_varint(out, v)
    out += msg.payload
    out += struct.pack("<I", zlib.crc32(out))
    return bytes(out)


def decode(data: Any) -> WireMessage:
    """Parse and validate a message (every check of the module docstring).

    Raises
    ------
    FormatError
        On anything but a well-formed message of a known version and kind with every field
        in range (the hash id is checked against the filter class by ``from_wire``).

    Notes
    -----
    Complexity: O(len(data)); allocates one copy of ``data``.
    """
    if not isinstance(data, bytes | bytearray | memoryview):  # bytes(10**12) would allocate 1 TB
        raise FormatError(f"wire data must be bytes, got {type(data).__name__}")
    buf = bytes(data)
    if len(buf) < _MIN_SIZE:
        raise FormatError(f"wire data too short ({len(buf)} bytes)")
    if buf[:4] != WIRE_MAGIC:
        raise FormatError("not a bloomkit folded-filter wire message (bad magic)")
    (crc,) = struct.unpack_from("<I", buf, len(buf) - 4)
    if zlib.crc32(memoryview(buf)[:-4]) != crc:
        raise FormatError("wire data is corrupted (CRC-32 mismatch)")
    version, kind, cbits, k, hash_id, seed = _FIXED.unpack_from(buf, 4)
    if version != WIRE_VERSION:
        raise FormatError(f"unsupported wire version {version} (this bloomkit reads {WIRE_VERSION})")
    if kind == KIND_BITS:
        if cbits != 0:
            raise FormatError(f"invalid wire header: a bit filter with counter bits {cbits} (must be 0)")
    elif kind == KIND_COUNTERS:
        cbits = _field(COUNTER_BITS, cbits, "counter_bits")
    else:
        raise FormatError(f"unknown wire kind {kind} (0 = bits, 1 = counters)")
    k = _field(NUM_HASHES, k, "num_hashes")
    pos, end = len(WIRE_MAGIC) + _FIXED.size, len(buf) - 4
    m1, pos = _get_varint(buf, pos, end, "m_1")
    factor, pos = _get_varint(buf, pos, end, "fold factor")
    count, pos = _get_varint(buf, pos, end, "count")
    set_version, pos = _get_varint(buf, pos, end, "set_version")
    m1 = _field(NUM_BITS, m1, "m1")
    if not 1 <= factor <= m1 or m1 % factor:
        raise FormatError(f"invalid wire header: the fold factor {factor} does not divide m_1 = {m1}")
    count = _field(COUNT, count, "count")
    set_version = _field(SET_VERSION, set_version, "set_version")
    need = payload_size(kind, cbits, m1 // factor)
    if end - pos != need:
        raise FormatError(
            f"wire payload has {end - pos} bytes; a filter of {m1 // factor} "
            f"{'bits' if kind == KIND_BITS else f'{cbits}-bit counters'} needs {need}"
        )
    return WireMessage(kind, cbits, k, hash_id, seed, m1, factor, count, set_version, buf[pos:end])
