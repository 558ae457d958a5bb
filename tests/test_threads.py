"""Thread safety of every mutable structure (issue 11, DESIGN convention 11): 4 and 8 writer
threads at once, two rounds, then zero false negatives / exact values, and no hang.

Each structure runs in a child process with a time limit: a hang inside compiled code that
holds the GIL cannot be interrupted from Python, and ending a pytest-xdist worker from inside
(faulthandler's exit) leaves the controller waiting; a child that does not finish in time is a
failure of the test, with its stacks dumped."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conformance.examples import EXAMPLES

from bloomkit._format import registered_structures

WRITERS = sorted(t for t, ex in EXAMPLES.items() if ex.writers is not None)
TIMEOUT = 300.0

CHILD = textwrap.dedent(r'''
    import faulthandler, sys, threading
    sys.path.insert(0, sys.argv[1])
    from conformance.examples import EXAMPLES
    faulthandler.dump_traceback_later(float(sys.argv[3]) - 10, exit=True)
    make, write, verify = EXAMPLES[sys.argv[2]].writers
    n = 400
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
    print("ok")
''')


def test_every_mutable_structure_has_a_writer_test():
    immutable = {"lookup.BloomierFilter", "lookup.RibbonRetrieval", "static.BinaryFuseFilter",
                 "static.RibbonFilter"}  # no updates after encoding (UpdateNotSupportedError)
    assert set(WRITERS) == set(registered_structures()) - immutable


@pytest.mark.parametrize("tag", WRITERS)
def test_concurrent_writers_lose_nothing(tag):
    tests_dir = str(Path(__file__).parent)
    env = {**os.environ, "PYTHONFAULTHANDLER": "1"}
    try:
        proc = subprocess.run([sys.executable, "-c", CHILD, tests_dir, tag, str(TIMEOUT)],
                              capture_output=True, text=True, timeout=TIMEOUT, env=env)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"{tag}: writer threads hang (no result in {TIMEOUT} s)\n{e.stderr}")
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", (
        f"{tag}: exit {proc.returncode}\n{proc.stderr[-4000:]}")
