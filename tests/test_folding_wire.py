"""Tests of the folding wire format and the receiving side (bloomkit.folding.wire,
bloomkit.folding.receiver): round trips, golden bytes of wire version 1, damage, a forger of hostile
messages (recomputed CRC) decoded in a child process, the multi-transmission receiver."""

from __future__ import annotations

import math
import zlib

import numpy as np
import pytest
from _damage import assert_damage_detected

from bloomkit.errors import FormatError, IncompatibleFiltersError, InvalidParameterError
from bloomkit.folding import (
    FoldableBloomFilter,
    FoldableCountingBloomFilter,
    MultiTransmissionReceiver,
    aggregate_fpr,
    from_wire,
)
from bloomkit.theory import false_positive_rate

KEYS = np.arange(3000, dtype=np.int64)

# ------------------------------------------------------------------------------ wire


def test_wire_round_trip_and_size() -> None:
    f = FoldableBloomFilter(720720, 4, seed=2**63 + 5)
    f.add_many(KEYS)
    f.fold(720720 // 30030)
    w = f.to_wire(set_version=7)
    assert len(w) <= (30030 + 7) // 8 + 40
    g = from_wire(w, seed=2**63 + 5, num_hashes=4)
    assert isinstance(g, FoldableBloomFilter) and not g.retains_original
    assert g.num_bits == 30030 and g.m1 == 720720 and g.set_version == 7 and g.count == 3000
    assert g.bits == f.bits and g.contains_many(KEYS).all()
    g.fold(3)  # a received filter can still fold
    assert g.bits == f.folded(3).bits
    with pytest.raises(InvalidParameterError):
        g.unfold()
    c = FoldableCountingBloomFilter(5040, 3, seed=1, counter_bits=4)
    c.add_many(KEYS[:300])
    c.fold(7)
    h = from_wire(c.to_wire())
    assert isinstance(h, FoldableCountingBloomFilter) and h.counters == c.counters
    h.remove_many(KEYS[:100])
    assert h.contains_many(KEYS[100:300]).all()


def test_wire_damage_and_mismatch() -> None:
    f = FoldableBloomFilter(360, 2, seed=3)
    f.add_many(KEYS[:20])
    f.fold(10)
    w = f.to_wire()
    assert_damage_detected(w, from_wire)
    with pytest.raises(FormatError):
        from_wire(w + b"\x00")
    with pytest.raises(FormatError):
        from_wire("not bytes")  # type: ignore[arg-type]
    with pytest.raises(IncompatibleFiltersError):
        from_wire(w, seed=4)
    with pytest.raises(IncompatibleFiltersError):
        from_wire(w, num_hashes=3)
    # a well-formed (CRC-valid) header that lies about the sizes
    body = bytearray(w[:-4])
    body[-5] ^= 0x01  # payload bit flip, CRC recomputed: a different but valid filter
    fixed = bytes(body) + zlib.crc32(bytes(body)).to_bytes(4, "little")
    assert from_wire(fixed).num_bits == 36


def test_receiver_ands_copies_and_checks_compatibility() -> None:
    f = FoldableBloomFilter(720720, 2, seed=6)
    f.add_many(KEYS[:2000])
    r = MultiTransmissionReceiver(window=3)
    with pytest.raises(InvalidParameterError):
        r.contains_many(KEYS[:3])
    sizes = [720720 // d for d in (48, 55, 91)]
    for s in sizes:
        r.receive(f.folded(720720 // s).to_wire(set_version=1))
    assert r.sizes == sizes and r.set_version == 1
    assert r.contains_many(KEYS[:2000]).all()
    probe = np.arange(10**7, 10**7 + 20000)
    single = f.folded(48).contains_many(probe).mean()
    both = r.contains_many(probe).mean()
    assert both < single
    assert r.predicted_fpr("product") == pytest.approx(
        math.prod(false_positive_rate(2000, s, 2) for s in sizes)
    )
    assert r.predicted_fpr() == pytest.approx(aggregate_fpr(sizes, 2000, 2))
    r.receive(f.folded(40).to_wire(set_version=2))
    assert r.sizes == [18018]
    with pytest.raises(IncompatibleFiltersError):
        r.receive(FoldableBloomFilter(720720, 3, seed=6).to_wire(set_version=2))
    with pytest.raises(IncompatibleFiltersError):
        r.receive(FoldableBloomFilter(360360, 2, seed=6).to_wire(set_version=2))
    with pytest.raises(FormatError):
        r.receive(b"garbage")
    with pytest.raises(InvalidParameterError):
        MultiTransmissionReceiver(window=0)


def test_wire_golden_bytes() -> None:
    """Pins the wire layout, the hash and the position scheme (changing any breaks receivers)."""
    f = FoldableBloomFilter(360, 3, seed=1)
    f.add_many(["a", "b", "c", 1, 2.5, b"x"])
    f.fold(4)
    golden = "424b4657010000030001000100000000000000e80204060288008010048d010008d40801b6e01f97"
    assert f.to_wire(set_version=2).hex() == golden
    g = from_wire(bytes.fromhex(golden))
    assert g.contains_many(["a", "b", "c", 1, 2.5, b"x"]).all() and g.set_version == 2
    c = FoldableCountingBloomFilter(60, 2, seed=5, counter_bits=4)
    c.add_many(["a", "b", "c"])
    c.fold(3)
    assert c.to_wire().hex() == "424b46570101040200010005000000000000003c03030000002001110000000010d2e22070"


# ------------------------------------------------------------------------------ wire: golden, hostile


def test_format_1_wire_messages_decode_to_the_same_filters() -> None:
    from pathlib import Path

    from conformance.examples import EXAMPLES

    folder = Path(__file__).parent / "golden" / "wire"
    for name, tag, version in (("bits", "folding.FoldableBloomFilter", 3), ("counters", "folding.FoldableCounting", 4)):
        raw = (folder / f"folding.wire_{name}.bin").read_bytes()
        ref = EXAMPLES[tag].make()
        got = from_wire(raw, seed=ref.seed, num_hashes=ref.num_hashes)
        got._check()
        assert type(got) is type(ref) and got == ref and got.set_version == version
        assert (got.m1, got.num_bits, got.count, got.size_history) == (ref.m1, ref.num_bits, ref.count, ref.size_history)
        assert got.key_types == ("unknown",) and not got.retains_original
        assert ref.to_wire(set_version=version) == raw == got.to_wire(set_version=version)
        assert from_wire(memoryview(raw)) == got and from_wire(bytearray(raw)) == got


def _varint(v: int) -> bytes:
    out = bytearray()
    while True:
        out.append((v & 0x7F) | (0x80 if v >> 7 else 0))
        v >>= 7
        if not v:
            return bytes(out)


def _wire(fields: dict, varints: bytes | None = None, payload: bytes | None = None) -> bytes:
    """A wire message built from docs/folding.md alone, with a correct CRC-32."""
    import struct

    body = b"BKFW" + struct.pack("<BBBHHQ", fields["version"], fields["kind"], fields["cbits"], fields["k"],
                                 fields["hash_id"], fields["seed"])
    body += varints if varints is not None else b"".join(
        _varint(fields[n]) for n in ("m1", "factor", "count", "set_version"))
    body += fields["payload"] if payload is None else payload
    return body + zlib.crc32(body).to_bytes(4, "little")


def _wire_forgeries(fields: dict) -> list[tuple[str, bytes]]:
    out = [("unchanged", _wire(fields))]
    huge = [0, 1, 3, 2**30, 2**40, 2**62, 2**63 - 1, 2**63, 2**64 - 1]
    for name, values in (("version", [0, 2, 255]), ("kind", [2, 255, 1 - fields["kind"]]),
                         ("cbits", [0, 1, 4, 8, 12, 16, 32, 64, 255]), ("k", [0, 1, 1024, 1025, 65535]),
                         ("hash_id", [0, 2, 3, 65535]), ("seed", [0, 2**64 - 1]), ("m1", huge), ("factor", huge),
                         ("count", huge), ("set_version", huge)):
        for v in values:
            out.append((f"{name}={v}", _wire({**fields, name: v})))
    m1 = fields["m1"]
    for m1_, factor in ((2**40, 2**40), (2**40, 2**37), (2**62, 2**62), (2**63 - 1, 1),
                        (m1 * 2**30, 2**30 * fields["factor"]), (m1, m1), (m1, m1 + 1)):
        out.append((f"m1={m1_} factor={factor}", _wire({**fields, "m1": m1_, "factor": factor})))
    vs = b"".join(_varint(fields[n]) for n in ("m1", "factor", "count", "set_version"))
    for desc, raw in (("11-byte varint", b"\x80" * 10 + b"\x01"), ("10-byte varint over 64 bits", b"\xff" * 9 + b"\x7f"),
                      ("varint 2**64", b"\x80" * 9 + b"\x02"), ("non-minimal varint", b"\x81\x00"),
                      ("endless varint", b"\xff" * 40)):
        out.append((f"m1 {desc}", _wire(fields, varints=raw + vs[len(_varint(m1)):])))
        out.append((f"set_version {desc}", _wire(fields, varints=vs[:-1] + raw)))
    for cut in range(len(vs)):
        out.append((f"header cut at varint byte {cut}", _wire(fields, varints=vs[:cut], payload=b"")))
    p = fields["payload"]
    for desc, pay in (("empty", b""), ("one byte short", p[:-1]), ("one byte more", p + b"\0"), ("all ones", b"\xff" * len(p)),
                      ("1 MB", b"\0" * (1 << 20))):
        out.append((f"payload {desc}", _wire(fields, payload=pay)))
    good = _wire(fields)
    for i in range(len(good) - 4):  # every flipped byte, CRC recomputed: FormatError or a valid filter
        for x in (0x01, 0x80, 0xFF):
            body = bytearray(good[:-4])
            body[i] ^= x
            out.append((f"byte {i} ^ {x:#x}", bytes(body) + zlib.crc32(body).to_bytes(4, "little")))
    for cut in range(len(good) - 4):  # truncated, CRC recomputed over what is left
        out.append((f"truncated to {cut}", good[:cut] + zlib.crc32(good[:cut]).to_bytes(4, "little")))
    return out


_WIRE_LOADER = r'''
from bloomkit.folding import from_wire

def load(raw):
    return from_wire(raw)

def valid(f):  # a decoded filter is valid: invariants, wire and container round trips, info
    f._check()
    assert from_wire(f.to_wire(f.set_version)) == f
    bloomkit.loads(f.to_bytes())._check()
    json.dumps(f.info())
'''


def test_forged_wire_messages_give_format_error_or_a_valid_filter(tmp_path: object) -> None:
    """Hostile messages with a recomputed CRC: huge m_1 / factor / count / k / set_version,
    bad varints (11 bytes, over 64 bits, non-minimal, endless), unknown kind / version / hash /
    counter width, wrong payload lengths, truncations, every flipped byte; decoded in a child
    process with a 6 GiB address-space limit: FormatError or a valid filter, nothing else."""
    f = FoldableBloomFilter(720, 3, seed=42)
    f.add_many(["alpha", "beta"])
    f.fold(3)
    c = FoldableCountingBloomFilter(90, 3, seed=42, counter_bits=4)
    c.add_many(["alpha", "beta"])
    c.fold(2)
    cases = []
    for filt, kind, cbits in ((f, 0, 0), (c, 1, 4)):
        fields = {"version": 1, "kind": kind, "cbits": cbits, "k": 3, "hash_id": 1, "seed": 42, "m1": filt.m1,
                  "factor": filt.fold_factor, "count": 2, "set_version": 5, "payload": filt._store.to_bytes()}
        assert _wire(fields) == filt.to_wire(set_version=5)  # the forger writes what bloomkit writes
        cases += [(f"{type(filt).__name__} {d}", b) for d, b in _wire_forgeries(fields)]
    assert len(cases) > 500
    from conformance.forge import run_forgeries

    outcomes: dict[str, str] = {}
    problems = run_forgeries(cases, tmp_path, loader=_WIRE_LOADER, outcomes=outcomes)
    assert not problems, f"{len(problems)} of {len(cases)} forged messages misbehaved:\n" + "\n".join(problems[:20])
    for name in ("FoldableBloomFilter", "FoldableCountingBloomFilter"):
        assert outcomes[f"{name} unchanged"] == outcomes[f"{name} count={2**63 - 1}"] == "valid"
        assert outcomes[f"{name} m1={2**40} factor={2**37}"] == outcomes[f"{name} m1 varint 2**64"] == "FormatError"


def test_hostile_wire_inputs_in_process() -> None:
    for bad in (10**12, "text", None, 3.5, [1, 2], np.zeros(4)):
        with pytest.raises(FormatError):
            from_wire(bad)  # type: ignore[arg-type]
    w = FoldableBloomFilter(360, 2, seed=3).to_wire()
    for bad_arg in (dict(seed=-1), dict(seed="x"), dict(num_hashes=0), dict(num_hashes=2.5)):
        with pytest.raises(InvalidParameterError):
            from_wire(w, **bad_arg)  # type: ignore[arg-type]
    with pytest.raises(InvalidParameterError):
        FoldableBloomFilter(360, 2).to_wire(set_version=2**63)


def test_receiver_reads_a_batch_once_and_refuses_a_generator() -> None:
    f = FoldableBloomFilter(5040, 2, seed=3)
    f.add_many(list(range(50)))
    r = MultiTransmissionReceiver(window=2)
    r.receive(f.folded(8).to_wire())
    r.receive(f.folded(9))
    assert r.contains_many(range(50)).all() and 7 in r
    with pytest.raises(InvalidParameterError, match="with a length"):  # iteration only over sized inputs
        r.contains_many(i for i in range(50))
    with pytest.raises(InvalidParameterError):
        r.predicted_fpr("other")
