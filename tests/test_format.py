"""The container format: golden files, round trips, and every kind of damaged input."""

from __future__ import annotations

import json
import struct
import zlib
from pathlib import Path

import numpy as np
import pytest

import bloomkit
from bloomkit import BloomFilter, CountingBloomFilter, FormatError
from bloomkit._format import FORMAT_VERSION, MAGIC, pack, unpack

GOLDEN = Path(__file__).parent / "golden"


def _golden_bloom() -> BloomFilter:
    bf = BloomFilter(num_bits=200, num_hashes=3, seed=11)
    bf.add_many(["alpha", "beta", "gamma", 7, 2.5])
    return bf


def _golden_counting() -> CountingBloomFilter:
    c = CountingBloomFilter(num_bits=101, num_hashes=3, seed=11, counter_bits=4)
    c.add_many(["alpha", "beta", "gamma", "alpha"])
    return c


def test_golden_files_pin_the_format():
    """Today's code writes byte-identical files and reads the pinned ones."""
    for name, make in (("bloom_v1.bkf", _golden_bloom), ("counting_v1.bkf", _golden_counting)):
        raw = (GOLDEN / name).read_bytes()
        assert make().to_bytes() == raw
        loaded = bloomkit.load(GOLDEN / name)
        assert loaded == make()
        assert all(k in loaded for k in ("alpha", "beta", "gamma"))


def test_header_layout():
    raw = (GOLDEN / "bloom_v1.bkf").read_bytes()
    assert raw[:8] == MAGIC
    assert struct.unpack_from("<H", raw, 8)[0] == FORMAT_VERSION
    assert raw[12:44].rstrip(b"\0") == b"bloom.BloomFilter"
    assert struct.unpack_from("<H", raw, 44)[0] == 1  # XXH64 hash id
    assert struct.unpack_from("<Q", raw, 48)[0] == 11  # seed
    assert zlib.crc32(raw[:-4]) == struct.unpack("<I", raw[-4:])[0]
    c = unpack(raw)
    assert c.params["num_bits"] == 200 and c.arrays["words"].dtype == np.uint64


def test_pack_unpack_arrays():
    arrays = {"a": np.arange(5, dtype=np.int32), "b": np.ones((2, 3), dtype=np.float64), "c": np.array([True, False])}
    c = unpack(pack("test.Thing", {"x": 1, "y": [1, 2]}, arrays, seed=5))
    assert c.structure == "test.Thing" and c.seed == 5 and c.params == {"x": 1, "y": [1, 2]}
    for k, v in arrays.items():
        assert np.array_equal(c.arrays[k], v) and c.arrays[k].dtype == v.dtype
    with pytest.raises(ValueError):
        pack("x", {}, {"o": np.array([object()])})
    with pytest.raises(ValueError):
        pack("x" * 33, {}, {})


@pytest.mark.parametrize("name", ["bloom_v1.bkf", "counting_v1.bkf"])
def test_every_flipped_byte_is_caught(name):
    raw = (GOLDEN / name).read_bytes()
    for i in range(len(raw)):
        for flip in (0x01, 0x80):
            bad = bytearray(raw)
            bad[i] ^= flip
            with pytest.raises(FormatError):
                bloomkit.loads(bytes(bad))


@pytest.mark.parametrize("name", ["bloom_v1.bkf", "counting_v1.bkf"])
def test_every_truncation_and_extension_is_caught(name):
    raw = (GOLDEN / name).read_bytes()
    for n in range(len(raw)):
        with pytest.raises(FormatError):
            bloomkit.loads(raw[:n])
    with pytest.raises(FormatError):
        bloomkit.loads(raw + b"\0")


def _reseal(body: bytes) -> bytes:
    return body + struct.pack("<I", zlib.crc32(body))


def test_newer_version_foreign_and_unknown_structures():
    raw = (GOLDEN / "bloom_v1.bkf").read_bytes()
    newer = bytearray(raw[:-4])
    struct.pack_into("<H", newer, 8, FORMAT_VERSION + 1)
    with pytest.raises(FormatError, match="newer"):
        bloomkit.loads(_reseal(bytes(newer)))
    with pytest.raises(FormatError, match="magic"):
        bloomkit.loads(b"PK\x03\x04" + b"\0" * 100)
    with pytest.raises(FormatError):
        bloomkit.loads(b"\x80\x04\x95" + b"\0" * 100)  # a pickle is refused, not loaded
    with pytest.raises(FormatError):
        bloomkit.loads("not bytes")  # type: ignore[arg-type]
    with pytest.raises(FormatError, match="unknown structure"):
        bloomkit.loads(pack("nobody.Nothing", {}, {}))
    # a consistent container whose parameters do not match its arrays
    c = unpack(raw)
    params = dict(c.params, num_bits=10_000)
    with pytest.raises(FormatError):
        bloomkit.loads(pack("bloom.BloomFilter", params, c.arrays, seed=c.seed))
    params = {k: v for k, v in c.params.items() if k != "num_hashes"}
    with pytest.raises(FormatError):
        bloomkit.loads(pack("bloom.BloomFilter", params, c.arrays, seed=c.seed))
    with pytest.raises(FormatError):
        bloomkit.loads(pack("bloom.BloomFilter", c.params, c.arrays, seed=c.seed, hash_id=99))


def test_json_block_is_plain_json():
    raw = (GOLDEN / "bloom_v1.bkf").read_bytes()
    plen = struct.unpack_from("<I", raw, 56)[0]
    meta = json.loads(raw[68 : 68 + plen])
    assert meta["num_hashes"] == 3 and meta["__arrays__"][0][:2] == ["words", "<u8"]


def test_load_missing_file_raises_oserror(tmp_path):
    with pytest.raises(OSError):
        bloomkit.load(tmp_path / "nope.bkf")
