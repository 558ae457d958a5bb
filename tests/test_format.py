"""The container format: header layout, the hardened parser, and durable, atomic saves.

Golden files, truncations, flipped bytes and forged files of every structure are in
tests/test_conformance.py."""

from __future__ import annotations

import json
import os
import stat
import struct
import threading
import zlib
from pathlib import Path

import numpy as np
import pytest
from conformance.forge import build

import bloomkit
from bloomkit import BloomFilter, FormatError, InvalidParameterError
from bloomkit._format import FORMAT_VERSION, MAGIC, pack, unpack, write_atomic

GOLDEN = Path(__file__).parent / "golden"
V2 = GOLDEN / "v2" / "bloom.BloomFilter.bkf"


def test_header_layout():
    raw = V2.read_bytes()
    assert raw[:8] == MAGIC
    assert struct.unpack_from("<H", raw, 8)[0] == FORMAT_VERSION == 2
    assert raw[12:44].rstrip(b"\0") == b"bloom.BloomFilter"
    assert struct.unpack_from("<H", raw, 44)[0] == 1  # XXH64 hash id
    assert struct.unpack_from("<Q", raw, 48)[0] == 11  # seed
    assert zlib.crc32(raw[:-4]) == struct.unpack("<I", raw[-4:])[0]
    c = unpack(raw)
    assert c.params["num_bits"] == 200 and c.arrays["words"].dtype == np.uint64
    assert c.params["key_types"] == ["str"]


def test_pack_unpack_arrays():
    arrays = {"a": np.arange(5, dtype=np.int32), "b": np.ones((2, 3), dtype=np.float64), "c": np.array([True, False])}
    c = unpack(pack("test.Thing", {"x": 1, "y": [1, 2]}, arrays, seed=5))
    assert c.structure == "test.Thing" and c.seed == 5 and c.params == {"x": 1, "y": [1, 2]}
    for k, v in arrays.items():
        assert np.array_equal(c.arrays[k], v) and c.arrays[k].dtype == v.dtype
        assert c.arrays[k].ctypes.data % 64 == 0  # loaded arrays are cache-line aligned
    with pytest.raises(ValueError):
        pack("x", {}, {"o": np.array([object()])})
    with pytest.raises(ValueError):
        pack("x" * 33, {}, {})


def _reseal(body: bytes) -> bytes:
    return body + struct.pack("<I", zlib.crc32(body))


def test_newer_version_foreign_and_unknown_structures():
    raw = V2.read_bytes()
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
    with pytest.raises(FormatError, match="expected bytes"):
        bloomkit.loads(10**12)  # type: ignore[arg-type]  # bytes(10**12) would allocate 1 TB
    with pytest.raises(FormatError, match="unknown structure"):
        bloomkit.loads(pack("nobody.Nothing", {}, {}))
    c = unpack(raw)
    with pytest.raises(FormatError, match="num_bits"):  # parameters that do not match the arrays
        bloomkit.loads(pack("bloom.BloomFilter", dict(c.params, num_bits=10_000), c.arrays, seed=c.seed))
    with pytest.raises(FormatError, match="'num_hashes' parameter of BloomFilter is missing"):
        bloomkit.loads(pack("bloom.BloomFilter", {k: v for k, v in c.params.items() if k != "num_hashes"},
                            c.arrays, seed=c.seed))
    with pytest.raises(FormatError, match="hash id"):
        bloomkit.loads(pack("bloom.BloomFilter", c.params, c.arrays, seed=c.seed, hash_id=99))


@pytest.mark.parametrize(("params", "match"), [
    ('{"num_bits": 200, "num_hashes": 3, "capacity": null, "fpr": NaN, "key_types": []}', "NaN"),
    ('{"num_bits": 200, "num_hashes": 3, "capacity": null, "fpr": 1e400, "key_types": []}', "overflows"),
    ('{"num_bits": 200, "num_hashes": 3, "capacity": null, "fpr": "x", "key_types": []}', "'fpr'"),
    ('{"num_bits": 200, "num_hashes": 3, "capacity": ' + "9" * 400 + ', "fpr": null, "key_types": []}', "digits"),
    ('{"num_bits": 200, "num_hashes": 3, "capacity": null, "fpr": null, "key_types": [], "x": 1}', "no parameter 'x'"),
    ('{"num_bits": 200, "num_hashes": 3, "num_hashes": 3, "capacity": null, "fpr": null, "key_types": []}', "twice"),
    ('{"num_bits": 200, "num_hashes": true, "capacity": null, "fpr": null, "key_types": []}', "'num_hashes'"),
    ('{"num_bits": 200, "num_hashes": 3, "capacity": null, "fpr": null, "key_types": ["str", "str"]}', "key_types"),
    ('{"num_bits": 200, "num_hashes": 3, "capacity": null, "fpr": null, "key_types": ' + "[" * 2000 + "]" * 2000 + "}",
     "deep"),
])
def test_hostile_parameter_blocks_name_the_problem(params, match):
    words = np.zeros(4, np.uint64).tobytes()
    with pytest.raises(FormatError, match=match):
        bloomkit.loads(build("bloom.BloomFilter", params, [("words", "<u8", [4], words)]))


def test_hostile_array_descriptors():
    params = '{"num_bits": 200, "num_hashes": 3, "capacity": null, "fpr": null, "key_types": []}'
    words = np.zeros(4, np.uint64).tobytes()
    ok = build("bloom.BloomFilter", params, [("words", "<u8", [4], words)])
    assert bloomkit.loads(ok).num_bits == 200
    for descr, match in [('[["words", "<u8", [1099511627776]]]', "runs past"),
                         ('[["words", "<u8", [4]], ["words", "<u8", [0]]]', "twice"),
                         ('[["words", "<u8", [4]], ["w2", "<u8", [0]]]', "no array 'w2'|length"),
                         ('[["words", "<u8", [-4]]]', "invalid shape"),
                         ('[["words", "<c16", [2]]]', "dtype"),
                         ('[["words", "|O", [4]]]', "dtype"),
                         ('[["words", "<u8", [2, 2]]]', "1-D"),
                         ('[["words"]]', "descriptor")]:
        with pytest.raises(FormatError, match=match):
            bloomkit.loads(build("bloom.BloomFilter", params, [("words", "<u8", [4], words)], descr_json=descr))


def test_json_block_is_plain_json():
    raw = V2.read_bytes()
    plen = struct.unpack_from("<I", raw, 56)[0]
    meta = json.loads(raw[68 : 68 + plen])
    assert meta["num_hashes"] == 3 and meta["__arrays__"][0][:2] == ["words", "<u8"]


def test_load_missing_file_raises_oserror(tmp_path):
    with pytest.raises(OSError):
        bloomkit.load(tmp_path / "nope.bkf")


# -- durable saves ------------------------------------------------------------------------------

def _bf(n: int = 100) -> BloomFilter:
    bf = BloomFilter(capacity=1000, fpr=0.01, seed=1)
    bf.add_many([f"k{i}" for i in range(n)])
    return bf


def test_save_is_atomic_and_leaves_no_temporary_file(tmp_path):
    path = tmp_path / "f.bkf"
    _bf().save(path)
    assert bloomkit.load(path) == _bf()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.bkf"]


def test_save_keeps_the_mode_of_the_file_it_replaces(tmp_path):
    path = tmp_path / "f.bkf"
    path.write_bytes(b"old")
    os.chmod(path, 0o600)
    _bf().save(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    new = tmp_path / "new.bkf"
    old_umask = os.umask(0o022)
    try:
        _bf().save(new)
    finally:
        os.umask(old_umask)
    assert stat.S_IMODE(new.stat().st_mode) == 0o644  # a new file: 0o666 less the umask


def test_save_follows_a_symlink_and_keeps_it(tmp_path):
    real = tmp_path / "real.bkf"
    real.write_bytes(b"old")
    link = tmp_path / "link.bkf"
    link.symlink_to(real)
    _bf().save(link)
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert bloomkit.load(real) == _bf()


def test_save_to_a_directory_is_a_clear_error(tmp_path):
    with pytest.raises(IsADirectoryError, match="directory"):
        _bf().save(tmp_path)
    assert list(tmp_path.iterdir()) == []  # no <dir>.tmp beside it
    with pytest.raises(FileNotFoundError):
        _bf().save(tmp_path / "missing" / "f.bkf")


def test_save_never_replaces_a_device_fifo_or_socket_and_load_never_waits(tmp_path):
    """save() renames a temporary file over its target: over a device (run as root, /dev/null
    itself), a FIFO or a socket that would replace it. It refuses them; load() refuses them too,
    without waiting for a FIFO's writer or reading a device to its (never reached) end."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(InvalidParameterError, match="'path' parameter of save must name a regular file"):
        _bf().save(fifo)
    assert stat.S_ISFIFO(fifo.stat().st_mode) and sorted(p.name for p in tmp_path.iterdir()) == ["pipe"]
    for path in (fifo, "/dev/zero", "/dev/null"):
        with pytest.raises(InvalidParameterError, match="must name a regular file"):
            bloomkit.load(path)
    with pytest.raises(InvalidParameterError, match="'path' parameter of load must be a file path.*loads"):
        bloomkit.load(_bf().to_bytes())


def test_a_failed_save_removes_its_temporary_file_and_keeps_the_target(tmp_path):
    path = tmp_path / "f.bkf"
    _bf(10).save(path)
    before = path.read_bytes()

    def parts():
        yield b"partial"
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space"):
        write_atomic(path, parts())
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.bkf"]

    def interrupted():
        yield b"partial"
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_atomic(path, interrupted())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.bkf"]


def test_save_fsyncs_the_file_and_its_directory(tmp_path, monkeypatch):
    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd))[1])
    _bf().save(tmp_path / "f.bkf")
    assert len(synced) == 2  # the file, then the directory


def test_concurrent_saves_of_one_path(tmp_path):
    """Every save has its own temporary file: threads saving one path never collide."""
    path = tmp_path / "f.bkf"
    filters = [_bf(10 * (i + 1)) for i in range(6)]
    errors: list[BaseException] = []

    def save(f: BloomFilter) -> None:
        try:
            for _ in range(20):
                f.save(path)
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=save, args=(f,)) for f in filters]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert bloomkit.load(path) in filters
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.bkf"]


def test_save_while_another_thread_adds_writes_a_consistent_file(tmp_path):
    bf = BloomFilter(capacity=2_000_000, fpr=0.01)
    stop = threading.Event()

    def adder() -> None:
        i = 0
        while not stop.is_set():
            bf.add_many(np.arange(i, i + 10_000))
            i += 10_000

    t = threading.Thread(target=adder)
    t.start()
    try:
        for j in range(5):
            bf.save(tmp_path / f"f{j}.bkf")
            bloomkit.load(tmp_path / f"f{j}.bkf")._check()  # the CRC matches the bytes written
    finally:
        stop.set()
        t.join()
