"""One contract for every persistable structure (issue 11), parametrized over the registry:
round trip, pickle, golden files of format 2 (format 1 refused), every truncation and flipped byte,
forged files with a recomputed CRC (in a child process: a crash, hang or MemoryError is caught),
the shared protocol (size_in_bits, predicted_fpr, info), and specs declared for the loader.

A new structure is covered by registering it (its line in ``bloomkit._registry``): the suite fails until
tests/conformance/examples.py has its example."""

from __future__ import annotations

import json
import pickle
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest
from _damage import assert_damage_detected
from conformance.examples import EXAMPLES
from conformance.forge import build, forgeries, run_forgeries

import bloomkit
from bloomkit._format import FORMAT_VERSION, registered_structures
from bloomkit._protocols import Structure
from bloomkit.errors import FormatError

GOLDEN = Path(__file__).parent / "golden"
STRUCTURES = registered_structures()
TAGS = sorted(STRUCTURES)



def _same(a: tuple, b: tuple) -> bool:
    return len(a) == len(b) and all(
        np.array_equal(np.asarray(x), np.asarray(y)) for x, y in zip(a, b, strict=True))


def test_every_registered_structure_has_an_example():
    assert set(EXAMPLES) == set(STRUCTURES), (
        "register an example in tests/conformance/examples.py for: "
        f"{sorted(set(STRUCTURES) - set(EXAMPLES))}; stale: {sorted(set(EXAMPLES) - set(STRUCTURES))}")


@pytest.mark.parametrize("tag", TAGS)
def test_declares_parameter_and_array_specs(tag):
    cls = STRUCTURES[tag]
    assert cls._PARAMS is not None and cls._ARRAYS is not None
    params, arrays = EXAMPLES[tag].make()._to_state()
    assert set(params) == set(cls._PARAMS), "the saved parameters are exactly the declared ones"
    assert set(arrays) <= set(cls._ARRAYS)


@pytest.mark.parametrize("tag", TAGS)
def test_round_trip_pickle_and_files(tag, tmp_path):
    ex = EXAMPLES[tag]
    obj = ex.make()
    obj._check()
    raw = obj.to_bytes()
    assert isinstance(obj, STRUCTURES[tag])
    buffers: list[pickle.PickleBuffer] = []  # protocol 5: the arrays out of band (dask, distributed)
    oob = pickle.dumps(obj, protocol=5, buffer_callback=buffers.append)
    for back in (type(obj).from_bytes(raw), bloomkit.loads(raw), pickle.loads(pickle.dumps(obj)),
                 pickle.loads(oob, buffers=buffers), pickle.loads(pickle.dumps(obj, protocol=5))):
        back._check()
        assert type(back) is type(obj)
        assert back.to_bytes() == raw
        assert _same(ex.probe(back), ex.probe(obj))
    path = tmp_path / "x.bkf"
    obj.save(path)
    assert path.read_bytes() == raw
    assert bloomkit.load(path).to_bytes() == raw
    assert type(obj).load(path).to_bytes() == raw


@pytest.mark.parametrize("tag", TAGS)
def test_golden_file_of_the_current_format(tag):
    path = GOLDEN / f"v{FORMAT_VERSION}" / f"{tag}.bkf"
    raw = EXAMPLES[tag].make().to_bytes()
    if not path.exists():
        pytest.fail(f"missing golden file {path}: write it with `python tests/conformance/write_golden.py`")
    assert raw == path.read_bytes(), "today's code writes the pinned bytes"
    obj = bloomkit.load(path)
    obj._check()
    assert _same(EXAMPLES[tag].probe(obj), EXAMPLES[tag].probe(EXAMPLES[tag].make()))


@pytest.mark.parametrize("tag", TAGS)
def test_format_1_files_are_refused(tag):
    """Format 1 predates release 0.1.0: its files (here today's bytes under version 1, with a
    valid checksum) are refused with a FormatError that says so."""
    raw = bytearray(EXAMPLES[tag].make().to_bytes())
    raw[8:10] = (1).to_bytes(2, "little")
    raw[-4:] = zlib.crc32(raw[:-4]).to_bytes(4, "little")
    with pytest.raises(FormatError, match="format version 1 is not read"):
        bloomkit.loads(bytes(raw))


@pytest.mark.parametrize("tag", TAGS)
def test_every_truncation_and_flipped_byte(tag):
    raw = EXAMPLES[tag].make().to_bytes()
    assert_damage_detected(raw, bloomkit.loads, cut_step=max(1, len(raw) // 400))
    with pytest.raises(FormatError):
        STRUCTURES[tag].from_bytes(EXAMPLES[TAGS[(TAGS.index(tag) + 1) % len(TAGS)]].make().to_bytes())


@pytest.mark.parametrize("tag", TAGS)
def test_forged_files_give_format_error_or_a_valid_object(tag, tmp_path):
    """Forged files with a recomputed CRC: huge / negative / NaN / wrong-typed / deep values in
    every parameter, arrays of huge declared shape or values, wrong dtype, missing, duplicated;
    loaded in a child process with a 6 GiB address-space limit and a time limit.

    ``make test`` runs the suite once more under ``python -O`` (where ``assert`` statements
    vanish: the loader's checks must not be asserts): :func:`test_forged_files_under_optimize`.
    The checks here are explicit: pytest does not rewrite asserts under -O."""
    if sys.flags.optimize:
        pytest.skip("under -O: test_forged_files_under_optimize (every structure in one child)")
    raw = EXAMPLES[tag].make().to_bytes()
    cases = list(forgeries(raw))
    if len(cases) <= 50:
        pytest.fail(f"only {len(cases)} forged files")
    problems = run_forgeries(cases, tmp_path)
    if problems:
        pytest.fail(f"{len(problems)} of {len(cases)} forged files misbehaved:\n" + "\n".join(problems[:15]))


def test_forged_files_under_optimize(tmp_path):
    """The forged-file suite under ``python -O`` (``make test`` runs it so; skipped otherwise):
    every eighth forgery of every structure, loaded in one child process that runs with -O
    too, so validation the loader relies on raises instead of asserting. One child for all
    structures: its start-up (numba's kernels) is paid once."""
    if not sys.flags.optimize:
        pytest.skip("runs under python -O (make test)")
    cases = [(f"{tag}: {desc}", data) for tag in TAGS
             for desc, data in list(forgeries(EXAMPLES[tag].make().to_bytes()))[::8]]
    problems = run_forgeries(cases, tmp_path)
    if problems:
        pytest.fail(f"{len(problems)} of {len(cases)} forged files misbehaved:\n" + "\n".join(problems[:15]))


@pytest.mark.parametrize("tag", TAGS)
def test_shared_protocol(tag):
    obj = EXAMPLES[tag].make()
    assert isinstance(obj, Structure), f"{type(obj).__name__} misses part of the Structure protocol"
    size = obj.size_in_bits
    assert isinstance(size, int) and size > 0 and not callable(getattr(type(obj), "size_in_bits", None))
    rate = obj.predicted_fpr()
    assert isinstance(rate, float) and 0.0 <= rate <= 1.0
    info = obj.info()
    assert isinstance(info, dict) and info["structure"] == tag
    assert info["size_in_bits"] == size and info["predicted_fpr"] == pytest.approx(rate)
    json.dumps(info)  # plain JSON: what `bloomkit info` prints
    assert isinstance(type(obj).exact_len, bool) and isinstance(len(obj), int)
    copy = obj.copy()
    assert copy is not obj and copy.to_bytes() == obj.to_bytes()


def test_load_budget_refuses_a_small_file_declaring_a_huge_structure():
    """A file of N bytes never makes the storage layer allocate more than the documented budget."""
    from bloomkit._engine.storage import aligned_zeros, load_budget

    with load_budget(1000), pytest.raises(FormatError, match="would allocate"):
        aligned_zeros(1 << 30, np.uint8)
    aligned_zeros(1 << 30, np.uint8)[:1]  # outside a load: no limit (lazy pages)


def test_python_version_independent_loader_messages():
    with pytest.raises(FormatError, match="nested too deeply|deeper"):
        bloomkit.loads(build("bloom.BloomFilter", '{"x": ' + "[" * 3000 + "]" * 3000 + "}", []))
    assert sys.getrecursionlimit() >= 1000
