"""Thread safety of every mutable structure (issue 11, DESIGN convention 11): 4+ writer threads
at once, then zero false negatives / exact values, and no hang. A hang in compiled code holding
the GIL cannot be interrupted from Python: faulthandler's C watchdog dumps the stacks and ends
the process, so the run fails instead of blocking CI."""

from __future__ import annotations

import faulthandler
import sys
import threading

import pytest
from conformance.examples import EXAMPLES

from bloomkit._format import registered_structures

WRITERS = sorted(t for t, ex in EXAMPLES.items() if ex.writers is not None)
TIMEOUT = 120.0


def test_every_mutable_structure_has_a_writer_test():
    immutable = {"lookup.BloomierFilter"}  # no updates after encoding (UpdateNotSupportedError)
    assert set(WRITERS) == set(registered_structures()) - immutable


def _run_threads(target, workers: int) -> None:
    errors: list[BaseException] = []
    barrier = threading.Barrier(workers)

    def run(w: int) -> None:
        try:
            barrier.wait()
            target(w)
        except BaseException as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=run, args=(w,), daemon=True) for w in range(workers)]
    faulthandler.dump_traceback_later(TIMEOUT, exit=True, file=sys.stderr)
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(TIMEOUT)
            assert not t.is_alive(), "a writer thread hangs"
    finally:
        faulthandler.cancel_dump_traceback_later()
    if errors:
        raise errors[0]


@pytest.mark.parametrize("tag", WRITERS)
@pytest.mark.parametrize("workers", [4, 8])
def test_concurrent_writers_lose_nothing(tag, workers):
    make, write, verify = EXAMPLES[tag].writers
    n = 400
    for _round in range(2):
        obj = make()
        _run_threads(lambda w, obj=obj: write(obj, w, n), workers)
        obj._check()
        verify(obj, workers, n)
