"""Filters mapped from files (issue 22): bloomkit.open, create, verify, the mappable layout,
crashes mid-build and mid-write (real child processes killed with SIGKILL), forged headers."""

from __future__ import annotations

import errno
import json
import os
import pickle
import signal
import struct
import subprocess
import sys
import textwrap
import zlib
from pathlib import Path

import numpy as np
import pytest
from conformance.examples import EXAMPLES
from conformance.forge import forgeries, run_forgeries

import bloomkit
from bloomkit import (
    BloomFilter,
    CountingBloomFilter,
    FormatError,
    InvalidParameterError,
    SplitBlockBloomFilter,
)
from bloomkit._format import FLAG_BUILDING, FLAG_MODIFIED, PAGE, PAGE_ALIGN_MIN, unpack
from bloomkit._mapped import MAPPABLE
from bloomkit.errors import UpdateNotSupportedError

GOLDEN = Path(__file__).parent / "golden"
KINDS = [(BloomFilter, {}), (CountingBloomFilter, {"counter_bits": 8}), (SplitBlockBloomFilter, {})]
IDS = [c.__name__ for c, _ in KINDS]
KEYS = np.arange(20_000, dtype=np.int64)


def _flags(path: Path) -> int:
    return int(struct.unpack_from("<H", path.read_bytes()[:12], 10)[0])


@pytest.mark.parametrize(("cls", "kw"), KINDS, ids=IDS)
def test_create_add_close_then_load_open_and_reopen_for_writing(cls, kw, tmp_path):
    path = tmp_path / "f.bkf"
    f = cls.create(path, capacity=50_000, fpr=0.01, seed=7, **kw)
    assert type(f).__name__ == cls.__name__ and isinstance(f, cls) and f.path == str(path)
    assert _flags(path) == FLAG_BUILDING  # refused by open and load until close()
    with pytest.raises(FormatError, match="being built"):
        bloomkit.load(path)
    f.add("alice")
    f.add_many(KEYS)
    assert "alice" in f and f.contains_many(KEYS).all()
    mem = cls(capacity=50_000, fpr=0.01, seed=7, **kw)
    mem.add("alice")
    mem.add_many(KEYS)
    assert f == mem and (f | mem) == mem.union(mem) and type(f.copy()) is cls and f.copy().path is None
    back = pickle.loads(pickle.dumps(f, protocol=5))
    assert type(back) is cls and back == mem and back.path is None
    f.close()
    f.close()  # twice: nothing
    assert f.closed and _flags(path) == 0
    with pytest.raises(ValueError, match="closed"):
        "alice" in f  # noqa: B015
    with pytest.raises(ValueError, match="closed"):
        f.add_many(KEYS)
    loaded = bloomkit.load(path)  # the CRC of the sealed file holds
    assert type(loaded) is cls and loaded == mem and loaded.key_types == ("int", "str")
    assert bloomkit.verify(path)["structure"] == cls._STRUCTURE
    with bloomkit.open(path, "r+") as g:
        assert _flags(path) == FLAG_MODIFIED
        g.add(2.5)
        g.update(["bob"])
        g.flush()
        assert bloomkit.open(path, "r", recover=True).contains_many([2.5, "bob"]).all()  # flushed pages
    back = bloomkit.load(path)
    assert back.contains_many([2.5, "bob", "alice"]).all() and back.key_types == ("float", "int", "str")


@pytest.mark.parametrize(("cls", "kw"), KINDS, ids=IDS)
def test_files_saved_today_and_golden_files_open(cls, kw, tmp_path):
    """Compact files (today's save of small filters, the golden files) map for reading as they
    are; ``r+`` rewrites them once into the mappable layout."""
    tag = cls._STRUCTURE
    with bloomkit.open(GOLDEN / "v2" / f"{tag}.bkf") as f:
        ex = EXAMPLES[tag]
        assert all(np.array_equal(a, b) for a, b in zip(ex.probe(f), ex.probe(ex.make()), strict=True))
    path = tmp_path / "small.bkf"
    small = cls(capacity=1000, fpr=0.01, **kw)
    small.add_many(["x", "y"])
    small.save(path)
    raw = path.read_bytes()
    assert raw == small.to_bytes() and unpack(raw).nbytes == len(raw)  # small files stay compact
    with bloomkit.open(path, "r+") as f:
        f.add(7)
    c = unpack(path.read_bytes())
    assert c.params["key_types"] == ["int", "str"]
    assert bloomkit.load(path).contains_many(["x", "y", 7]).all()


def test_large_payloads_are_page_aligned_in_saved_and_created_files(tmp_path):
    big = BloomFilter(num_bits=8 * PAGE_ALIGN_MIN, num_hashes=3)
    big.add_many(KEYS)
    path = tmp_path / "big.bkf"
    big.save(path)
    raw = path.read_bytes()
    plen = struct.unpack_from("<I", raw, 56)[0]
    assert (68 + plen) % PAGE == 0 and len(raw[68 : 68 + plen]) - len(raw[68 : 68 + plen].rstrip(b" ")) >= 512
    assert bloomkit.loads(raw) == big  # still a plain format-2 file: today's loader reads it
    with bloomkit.open(path) as f:
        assert f.bits.words.ctypes.data % PAGE == 0 and f == big
    with SplitBlockBloomFilter.create(tmp_path / "c.bkf", num_blocks=16) as s:
        assert s.words.ctypes.data % PAGE == 0


def test_open_reads_the_header_only_and_verify_checks_the_payload(tmp_path):
    """open does not compute the CRC (O(1)); a flipped payload bit is found by verify(),
    bloomkit.verify(path) and load, never silently by open."""
    path = tmp_path / "f.bkf"
    with BloomFilter.create(path, capacity=100_000, fpr=0.01) as f:
        f.add_many(KEYS)
    raw = bytearray(path.read_bytes())
    raw[PAGE + 100] ^= 0x10
    path.write_bytes(bytes(raw))
    with bloomkit.open(path) as g:
        with pytest.raises(FormatError, match="checksum"):
            g.verify()
    with pytest.raises(FormatError, match="checksum"):
        bloomkit.verify(path)
    with pytest.raises(FormatError, match="checksum"):
        bloomkit.load(path)
    with bloomkit.open(path, "r+") as w, pytest.raises(InvalidParameterError, match="close it"):
        w.verify()
    bloomkit.verify(path)  # close() sealed the file as it now is


def test_read_only_mappings_refuse_every_change(tmp_path):
    path = tmp_path / "f.bkf"
    with CountingBloomFilter.create(path, capacity=1000, fpr=0.01) as f:
        f.add_many(["a", "b"])
    other = CountingBloomFilter(capacity=1000, fpr=0.01)
    g = bloomkit.open(path)
    calls = {
        "add": lambda: g.add("c"), "add_many": lambda: g.add_many(["c"]), "update": lambda: g.update(["c"]),
        "remove": lambda: g.remove("a"), "remove_many": lambda: g.remove_many(["a"]), "clear": g.clear,
        "fold": lambda: g.fold(2), "ior": lambda: g.__ior__(other), "iand": lambda: g.__iand__(other),
        "intersection_update": lambda: g.intersection_update(other),
    }
    for name, call in calls.items():
        with pytest.raises(UpdateNotSupportedError, match="read-only"):
            call()
        assert g.contains_many(["a", "b"]).all(), name
    g.close()
    assert bloomkit.load(path).contains_many(["a", "b"]).all()


def test_writable_mappings_keep_their_size_and_storage(tmp_path):
    path = tmp_path / "f.bkf"
    with CountingBloomFilter.create(path, num_bits=1000, num_hashes=3) as f:
        f.add_many(["a", "b"])
        with pytest.raises(UpdateNotSupportedError, match="size"):
            f.fold(2)
        other = CountingBloomFilter(num_bits=1000, num_hashes=3)
        other.add("z")
        f |= other  # the counting union builds new counters: copied back into the file
        f.remove("a")
        assert f.path == str(path) and "z" in f and f.contains_many(["b"]).all()
        assert f.folded(2).num_bits == 500  # a copy in memory
    back = bloomkit.load(path)
    assert "z" in back and "b" in back


@pytest.mark.parametrize("mode", ["w", "rb", "a", "", None, 1, "R"])
def test_bad_modes(mode, tmp_path):
    path = tmp_path / "f.bkf"
    BloomFilter(capacity=10, fpr=0.1).save(path)
    with pytest.raises(InvalidParameterError, match="'mode'"):
        bloomkit.open(path, mode)


def test_bad_paths_other_structures_and_damaged_files(tmp_path):
    with pytest.raises(InvalidParameterError, match="regular file"):
        bloomkit.open(tmp_path)
    with pytest.raises(FileNotFoundError):
        bloomkit.open(tmp_path / "missing.bkf")
    with pytest.raises(InvalidParameterError):
        bloomkit.open(3)
    p = tmp_path / "other.bkf"
    bloomkit.ScalableBloomFilter(initial_capacity=100, fpr=0.01).save(p)
    for mode in ("r", "r+"):
        with pytest.raises(InvalidParameterError, match="bloomkit.load"):
            bloomkit.open(p, mode)
    from bloomkit.folding import FoldableBloomFilter

    with pytest.raises(InvalidParameterError, match="built into files"):
        FoldableBloomFilter.create(tmp_path / "x.bkf", capacity=10, fpr=0.1)
    path = tmp_path / "f.bkf"
    with BloomFilter.create(path, capacity=10_000, fpr=0.01) as f:
        f.add("a")
    raw = path.read_bytes()
    for bad in (raw[:-1], raw[:PAGE], raw[:60], raw + b"\0", b"", b"PAR1" + raw[4:]):
        path.write_bytes(bad)
        for mode in ("r", "r+"):
            with pytest.raises(FormatError):
                bloomkit.open(path, mode)
    forged = bytearray(raw)
    forged[60:68] = struct.pack("<Q", 1 << 40)  # a data block past the end of the file: never mapped
    path.write_bytes(bytes(forged))
    with pytest.raises(FormatError, match="does not match its header"):
        bloomkit.open(path)
    path.write_bytes(raw)
    p2 = tmp_path / "new.bkf"
    with pytest.raises(InvalidParameterError, match="fpr"):
        BloomFilter.create(p2, capacity=10, fpr=2.0)
    assert not p2.exists()  # a refused build leaves nothing
    with pytest.raises(FileExistsError):
        BloomFilter.create(path, capacity=10, fpr=0.1)
    BloomFilter.create(path, capacity=10, fpr=0.1, overwrite=True).close()
    assert bloomkit.load(path).num_bits < 1000


def test_running_out_of_disk_is_an_error_and_leaves_no_file(tmp_path, monkeypatch):
    def full(fd, offset, length):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "posix_fallocate", full)
    path = tmp_path / "f.bkf"
    with pytest.raises(OSError, match="cannot build a filter of .* bytes there: No space") as e:
        BloomFilter.create(path, capacity=10_000, fpr=0.01)
    assert e.value.errno == errno.ENOSPC and e.value.filename == str(path) and not path.exists()


CHILD = textwrap.dedent("""
    import sys, time, bloomkit
    from bloomkit import BloomFilter
    path, what = sys.argv[1], sys.argv[2]
    if what == "build":
        f = BloomFilter.create(path, capacity=20_000, fpr=0.01)
        for k in range(10_000):
            f.add(k)
    else:
        f = bloomkit.open(path, "r+")
        for k in range(10_000, 15_000):
            f.add(k)
        f.flush()
    print("ready", flush=True)
    time.sleep(120)
""")


def _killed_midway(path: Path, what: str) -> subprocess.Popen[str]:
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(path), what], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None and child.stdout.readline().strip() == "ready"
    return child


def test_a_build_killed_midway_is_refused_and_a_crashed_writer_needs_recover(tmp_path):
    path = tmp_path / "f.bkf"
    child = _killed_midway(path, "build")
    with pytest.raises(BlockingIOError):  # the builder holds the file
        bloomkit.open(path, "r+")
    child.send_signal(signal.SIGKILL)
    child.wait()
    for call in (lambda: bloomkit.open(path), lambda: bloomkit.open(path, "r+", recover=True), lambda: bloomkit.load(path)):
        with pytest.raises(FormatError, match="being built"):
            call()
    with BloomFilter.create(path, capacity=20_000, fpr=0.01, overwrite=True) as f:
        f.add_many(np.arange(10_000))
    child = _killed_midway(path, "write")
    with pytest.raises(BlockingIOError):  # one writer at a time
        bloomkit.open(path, "r+")
    with bloomkit.open(path) as live:  # readers share a file a live writer has open
        assert live.contains_many(np.arange(15_000)).all()
    child.send_signal(signal.SIGKILL)
    child.wait()
    with pytest.raises(FormatError, match="not closed"):
        bloomkit.open(path)
    with pytest.raises(FormatError, match="not closed"):
        bloomkit.load(path)
    with bloomkit.open(path, "r", recover=True) as f:
        assert f.contains_many(np.arange(15_000)).all()  # everything flushed before the crash
    with bloomkit.open(path, "r+", recover=True) as f:
        pass  # close() seals it again
    assert bloomkit.load(path).contains_many(np.arange(15_000)).all()


def test_processes_share_a_read_only_mapping(tmp_path):
    path = tmp_path / "f.bkf"
    with SplitBlockBloomFilter.create(path, capacity=100_000, fpr=0.01) as f:
        f.add_many(KEYS)
    code = ("import sys, bloomkit\n"
            "f = bloomkit.open(sys.argv[1])\n"
            "print(sum(k in f for k in range(20_000)), f.path == sys.argv[1])")
    with bloomkit.open(path) as mine:  # this process and a child map the same pages
        out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=120)
        assert out.stdout.split() == ["20000", "True"], out.stderr
        assert mine.contains_many(KEYS).all()


def _mapping_rss(path: Path) -> int:
    """Bytes of ``path``'s mappings resident in this process (/proc/self/smaps)."""
    rss, ours = 0, False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        if line[:1].isalnum() and "-" in line.split(" ", 1)[0]:
            ours = line.endswith(str(path))
        elif ours and line.startswith("Rss:"):
            rss += int(line.split()[1]) * 1024
    return rss


ORDERED = [(BloomFilter, {}), (CountingBloomFilter, {"counter_bits": 4}), (SplitBlockBloomFilter, {}),
           pytest.param(SplitBlockBloomFilter, {"parquet": True}, marks=pytest.mark.slow),  # CI time
           (BloomFilter, {"probes": "double"}), (CountingBloomFilter, {"counter_bits": 4, "probes": "double"})]


@pytest.mark.parametrize(("cls", "kw"), ORDERED, ids=[*IDS, "SplitBlockParquet", "BloomDouble", "CountingDouble"])
def test_page_ordered_adds_equal_the_plain_path_and_leave_no_pages_resident(cls, kw, tmp_path, monkeypatch):
    """Large files mapped for writing take the page-ordered add_many (positions counting-sorted
    by 1 MiB region, applied in file order, each written window dropped from the page tables):
    bit for bit the in-memory filter's result (counters' saturation included), a bad key leaves
    the file unchanged, and the data dropped from the page tables with MADV_DONTNEED are still
    in the file (close's CRC and load read them back)."""
    import bloomkit._mapped as mapped

    monkeypatch.setattr(mapped, "ORDERED_MIN_BYTES", 1 << 20)
    monkeypatch.setattr(mapped, "ORDERED_POSITIONS", 1 << 16)  # several chunks, each one sweep
    monkeypatch.setattr(mapped, "_WINDOW_LOG2", 20)  # windows of 1 MiB
    path = tmp_path / "f.bkf"
    parquet = kw.get("parquet", False)
    if parquet:
        cls.for_parquet(physical_type="INT64", num_bytes=2 << 20).save(path)  # saved, then mapped "r+"
        f = bloomkit.open(path, "r+")
        mem = cls.for_parquet(physical_type="INT64", num_bytes=2 << 20)
        keys: list[object] = [np.arange(50_000, dtype=np.int64)]
    else:
        f = cls.create(path, capacity=1_000_000, fpr=0.01, seed=3, **kw)
        mem = cls(capacity=1_000_000, fpr=0.01, seed=3, **kw)
        keys = [np.arange(100_000, dtype=np.int64), [f"k{i}" for i in range(2000)], np.full(40, 7, dtype=np.int64)]
    assert type(f).add_many is mapped._add_ordered
    for batch in keys:
        f.add_many(batch)
        mem.add_many(batch)
        assert _mapping_rss(path) <= (1 << 20) + 2 * PAGE  # released window by window
    assert f == mem
    if cls is CountingBloomFilter:
        assert f.overflowed and mem.overflowed  # 4-bit counters: key 7 forty times saturates
    if not parquet:
        before = bytes(f._mapping.mm)
        with pytest.raises(InvalidParameterError):
            f.add_many(np.array([1.0, np.nan]))
        with pytest.raises(InvalidParameterError):
            f.add_many(["a", None])
        assert bytes(f._mapping.mm) == before
    f.close()
    assert bloomkit.load(path) == mem
    probe = np.arange(-50_000, 150_000, dtype=np.int64)
    with bloomkit.open(path) as g:  # queries of a large BloomFilter are page-ordered too
        assert (type(g).contains_many is mapped._contains_ordered) == (cls is BloomFilter)
        assert np.array_equal(g.contains_many(probe), mem.contains_many(probe))
        if cls is BloomFilter:
            assert _mapping_rss(path) <= (1 << 20) + 2 * PAGE
            assert np.array_equal(g.contains_many(["k1", "x"]), [True, False])
            with pytest.raises(InvalidParameterError, match="position 1"):
                g.contains_many(["a", None])


@pytest.mark.slow
def test_sizes_beyond_two_to_the_32_bits(tmp_path):
    """A BloomFilter of 2**33 + 64 bits (1 GiB, sparse) built into a file: positions above
    2**32 set and found, the file loads back mapped."""
    m = (1 << 33) + 64
    path = tmp_path / "huge.bkf"
    f = BloomFilter.create(path, num_bits=m, num_hashes=4, preallocate=False)
    assert type(f).add_many is bloomkit._mapped._add_ordered  # 1 GiB: the page-ordered path
    f.add_many(KEYS[:2000])
    f.add("x")
    assert f.contains_many(KEYS[:2000]).all() and "x" in f
    words = f.bits.words
    high = np.flatnonzero(words[(1 << 32) // 64 :])
    assert high.size > 0  # bits beyond 2**32 are set
    mem = BloomFilter(num_bits=m, num_hashes=4)
    mem.add_many(KEYS[:2000])
    mem.add("x")
    assert f == mem  # the page-ordered path beyond 2**32 bits: the plain path's bits
    del mem
    f.flush()
    f.close()
    with bloomkit.open(path) as g:
        assert g.num_bits == m and g.contains_many(KEYS[:2000]).all() and "x" in g
    assert os.path.getsize(path) > (1 << 30)


@pytest.mark.slow
def test_fold_and_set_algebra_beyond_two_to_the_32_bits():
    """Item 5 of issue 22 (64-bit everywhere) for fold, union, intersection and equality: a
    BloomFilter of 2**34 bits (2 GiB) folded by 2 is bit for bit the filter built at 2**33
    bits; the union / intersection of two 2**33-bit filters hold exactly the bits of each
    (words beyond 2**31 included); single keys and batches agree above 2**32."""
    a_keys, b_keys = KEYS[:3000].tolist(), [f"other-{i}" for i in range(3000)]
    big = BloomFilter(num_bits=1 << 34, num_hashes=3)
    big.add_many(a_keys)
    big.add("single")
    assert np.flatnonzero(big.bits.words[(1 << 33) // 64 :]).size > 0
    half = BloomFilter(num_bits=1 << 33, num_hashes=3)
    half.add_many(a_keys)
    half.add("single")
    big.fold(2)
    assert big.num_bits == 1 << 33 and big == half
    del big
    other = BloomFilter(num_bits=1 << 33, num_hashes=3)
    other.add_many(b_keys)
    u = half | other
    assert u.contains_many(a_keys + b_keys).all() and "single" in u
    assert np.array_equal(u.bits.words, half.bits.words | other.bits.words)
    i = half & other
    assert np.array_equal(i.bits.words, half.bits.words & other.bits.words)
    high = (1 << 32) // 64
    assert np.flatnonzero(u.bits.words[high:]).size > 0 and u != half


MAPPED_LOADER = textwrap.dedent(r'''
    import os, tempfile
    def load(raw):
        global RAW
        RAW = raw
        fd, p = tempfile.mkstemp(suffix=".bkf")
        os.write(fd, raw)
        os.close(fd)
        try:
            return bloomkit.open(p)
        finally:
            os.unlink(p)

    def valid(obj):  # valid, and what load makes of the same bytes
        obj._check()
        "a" in obj
        assert bloomkit.loads(RAW) == obj
''')


def _mapping_forgeries(raw: bytes, every: bool) -> list[tuple[str, bytes]]:
    """The container's forgeries (all of them, or those of the header and array shapes) and
    the mapping's own: flags, data and parameter lengths, lengths off by one."""
    body = bytearray(raw[:-4])
    out = [(d, b) for d, b in forgeries(raw) if every or not d.startswith("param ") and " as " not in d]

    def sealed(b: bytearray) -> bytes:
        return bytes(b) + struct.pack("<I", zlib.crc32(b))

    for flags in (FLAG_BUILDING, FLAG_MODIFIED, 3, 4, 0x8000):
        b = bytearray(body)
        b[10:12] = struct.pack("<H", flags)
        out.append((f"flags={flags}", sealed(b)))
    for dlen in (0, 8, len(raw), 1 << 40, (1 << 64) - 1):
        b = bytearray(body)
        b[60:68] = struct.pack("<Q", dlen)
        out.append((f"data length {dlen}", sealed(b)))
    for plen in (0, 1, (1 << 32) - 1):
        b = bytearray(body)
        b[56:60] = struct.pack("<I", plen)
        out.append((f"parameter length {plen}", sealed(b)))
    out += [("one byte short", raw[:-1]), ("one byte more", raw + b"\0"), ("header only", raw[:68])]
    return out


def _run_mapped_forgeries(every: bool, tmp_path: Path) -> None:
    cases = [(f"{tag}: {d}", b) for tag in MAPPABLE for d, b in _mapping_forgeries(EXAMPLES[tag].make().to_bytes(), every)]
    outcomes: dict[str, str] = {}
    problems = run_forgeries(cases, tmp_path, loader=MAPPED_LOADER, outcomes=outcomes)
    assert not problems, f"{len(problems)} of {len(cases)} forged files misbehaved:\n" + "\n".join(problems[:15])
    for tag in MAPPABLE:
        assert outcomes[f"{tag}: unchanged"] == "valid"
        assert outcomes[f"{tag}: data length 1099511627776"] == outcomes[f"{tag}: flags=1"] == "FormatError"


def test_forged_headers_never_map_out_of_bounds(tmp_path):
    """Forged headers (flags, lengths, array shapes, with a recomputed CRC) of the three mapped
    structures, each opened with bloomkit.open in a child process: FormatError, or a valid
    filter equal to what load makes of the same bytes."""
    _run_mapped_forgeries(False, tmp_path)


@pytest.mark.slow
def test_every_forgery_of_the_container_suite_opens_safely(tmp_path):
    """The whole forged-file suite of the container (every parameter, every hostile value)."""
    _run_mapped_forgeries(True, tmp_path)


def test_info_verify_on_the_command_line(tmp_path):
    path = tmp_path / "k.bkf"
    with BloomFilter.create(path, capacity=1000, fpr=0.01) as f:
        f.add_many(["a", "b"])
    exe = str(Path(sys.executable).parent / "bloomkit")
    ok = subprocess.run([exe, "info", "--verify", "--json", str(path)], capture_output=True, text=True)
    assert ok.returncode == 0 and '"crc32_verified"' in ok.stdout, ok.stderr
    q = subprocess.run([exe, "query", "--json", str(path), "a", "zz-absent"], capture_output=True, text=True)
    assert q.returncode == 0 and q.stdout.count("true") == 1, q.stdout + q.stderr  # mapped, not loaded
    raw = bytearray(path.read_bytes())
    raw[PAGE + 3] ^= 1
    path.write_bytes(bytes(raw))
    bad = subprocess.run([exe, "info", "--verify", str(path)], capture_output=True, text=True)
    assert bad.returncode != 0 and "checksum mismatch" in bad.stderr and "Traceback" not in bad.stderr
    # plain info maps the filter and reads its header, never the whole file (O(1) for a 12 GB
    # filter): it answers, and says the CRC was not checked
    mapped = subprocess.run([exe, "info", "--json", str(path)], capture_output=True, text=True)
    assert mapped.returncode == 0, mapped.stderr
    doc = json.loads(mapped.stdout)
    assert doc["crc32_verified"].startswith("not checked") and doc["bytes"] == len(raw) and doc["capacity"] == 1000
    c = tmp_path / "c.bkf"
    bloomkit.CountingBloomFilter(capacity=100, fpr=0.01).save(c)  # a structure that maps
    assert json.loads(subprocess.run([exe, "info", "--json", str(c)], capture_output=True, text=True).stdout)[
        "crc32_verified"].startswith("not checked")
