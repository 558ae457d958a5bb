"""Thread safety of every mutable structure (issue 11, DESIGN convention 11): 4 and 8 writer
threads at once, two rounds, then zero false negatives / exact values, and no hang.

The structures run in one child process with a time limit: a hang inside compiled code that
holds the GIL cannot be interrupted from Python, and ending a pytest-xdist worker from inside
(faulthandler's exit) leaves the controller waiting; a child that does not finish in time fails
every structure it had not finished, with its stacks dumped. One child for all structures, not
one each (issue 28: 17 children took 108 s of wall and 52 s of CPU at load 9, one 21 s / 12 s:
each child paid the interpreter, the imports and numba's loading of the shared kernels); the
child reports each structure's outcome and the test of each tag reads its own."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest
from conformance.examples import EXAMPLES

import bloomkit
from bloomkit._engine import boundary as _boundary
from bloomkit._engine import parallel as _parallel
from bloomkit._format import registered_structures

WRITERS = sorted(t for t, ex in EXAMPLES.items() if ex.writers is not None)
TIMEOUT = 600.0

CHILD = textwrap.dedent(r'''
    import faulthandler, json, sys, threading, traceback
    sys.path.insert(0, sys.argv[1])
    from conformance.examples import EXAMPLES
    faulthandler.dump_traceback_later(float(sys.argv[3]) - 10, exit=True)
    n = 400

    def check(tag):
        make, write, verify = EXAMPLES[tag].writers
        for workers in (4, 8):
            for _round in range(2):
                obj = make()
                errors = []
                barrier = threading.Barrier(workers)
                def run(w, obj=obj):
                    try:
                        barrier.wait()
                        write(obj, w, n)
                    except BaseException as e:
                        errors.append(e)
                threads = [threading.Thread(target=run, args=(w,)) for w in range(workers)]
                for t in threads:
                    t.start()
                for t in threads:
                    t.join()
                if errors:
                    raise errors[0]
                obj._check()
                verify(obj, workers, n)

    for tag in sys.argv[2].split(","):
        try:
            check(tag)
            out = "ok"
        except BaseException:
            out = traceback.format_exc()
        print(json.dumps([tag, out]), flush=True)
''')


@functools.cache
def _outcomes() -> tuple[dict[str, str], str]:
    """({tag: "ok" or its traceback}, the child's stderr) of one child over every writer tag."""
    env = {**os.environ, "PYTHONFAULTHANDLER": "1"}
    cmd = [sys.executable, "-c", CHILD, str(Path(__file__).parent), ",".join(WRITERS), str(TIMEOUT)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT, env=env)
        stdout, stderr = proc.stdout, f"exit {proc.returncode}\n{proc.stderr[-4000:]}"
    except subprocess.TimeoutExpired as e:
        stdout, stderr = e.stdout or "", f"no result in {TIMEOUT} s\n{e.stderr}"
    stdout = stdout.decode() if isinstance(stdout, bytes) else stdout
    done = dict(json.loads(line) for line in stdout.splitlines() if line.startswith("["))
    return done, stderr


def test_every_mutable_structure_has_a_writer_test():
    immutable = {"lookup.BloomierFilter", "lookup.RibbonRetrieval", "static.BinaryFuseFilter",
                 "static.RibbonFilter"}  # no updates after encoding (UpdateNotSupportedError)
    assert set(WRITERS) == set(registered_structures()) - immutable


@pytest.mark.parametrize("tag", WRITERS)
def test_concurrent_writers_lose_nothing(tag):
    done, stderr = _outcomes()
    assert tag in done, f"{tag}: writer threads hang or the child died before it\n{stderr}"
    assert done[tag] == "ok", f"{tag}:\n{done[tag]}"

MAKERS = {
    "bloom": lambda: bloomkit.BloomFilter(num_bits=1 << 16, num_hashes=5, seed=4),
    "double": lambda: bloomkit.BloomFilter(num_bits=1 << 16, num_hashes=7, seed=4, probes="double"),
    "split": lambda: bloomkit.SplitBlockBloomFilter(num_blocks=128, seed=4),
}


@pytest.mark.parametrize("name", sorted(MAKERS))
def test_single_adds_during_a_threaded_batch_add_lose_nothing(monkeypatch, name):
    """Issue 28: a batch add on 2 threads writes the filter without the GIL, holding its lock
    (``_parallel.batch_writer``); single-key adds and queries from other Python threads at the
    same time (the compiled add is re-bound to the Python methods, which wait for the lock).
    The words equal those of one thread adding everything, and the compiled path is bound
    again afterwards."""
    monkeypatch.setattr(_parallel, "MIN_PER_THREAD", 1000)
    monkeypatch.setattr(_parallel, "CHUNK", 512)  # many chunks: the lock held across them
    f, ref = MAKERS[name](), MAKERS[name]()
    batch = np.arange(100_000, dtype=np.int64)
    singles = [f"s{i}" for i in range(3000)] + list(range(10**7, 10**7 + 3000))
    start = threading.Barrier(3)
    errors: list[BaseException] = []

    def run(fn):
        def body():
            try:
                start.wait()
                fn()
            except BaseException as e:  # noqa: BLE001 - reported below
                errors.append(e)
        return threading.Thread(target=body)

    def batches():
        for lo in range(0, len(batch), 25_000):
            f.add_many(batch[lo:lo + 25_000])

    def adds():
        for x in singles:
            f.add(x)

    def queries():
        assert all(x in f for x in singles[:500] if x in ref)

    bloomkit.set_num_threads(2)
    try:
        threads = [run(batches), run(adds), run(queries)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        assert not any(t.is_alive() for t in threads), "writer threads hang"
    finally:
        bloomkit.set_num_threads(None)
    assert not errors, errors
    ref.add_many(batch)
    ref.add_many(singles)
    assert f == ref and f.contains_many(singles).all()
    f._check()
    f.add("again")
    if _boundary.COMPILED:
        assert f._core_kind in (_boundary.KIND_BITS, _boundary.KIND_BITS_DH, _boundary.KIND_SPLIT)
    assert not _parallel.writers_active(f)
