"""Every public call fails cleanly (issue 26, item 6): the seeded fuzz suite of tests/_fuzz.py.

The default run calls every public constructor, method, operator and module function of the
package (a few thousand calls, each target several times) in child processes under a time and
an address-space limit; ``make test-slow`` runs 30,000 calls with larger inputs. A failure lists
each problem with the command that reproduces it (``python tests/_fuzz.py --seed S --case N``).
"""

from __future__ import annotations

import pytest
from _fuzz import Config, classify, names_a_parameter, run

SEED = 26
DEFAULT_CALLS = 2000


def _assert_clean(report) -> None:
    assert not report.problems, report.summary() + "\n" + "\n".join(report.lines())
    assert report.counts["ok"] + report.counts["clean"] == report.calls, report.summary()


def test_public_calls_fail_cleanly():
    report = run(Config(SEED), DEFAULT_CALLS)
    _assert_clean(report)
    assert report.calls >= 3 * report.targets  # every target called, several times
    assert report.counts["ok"] > report.calls / 10  # not only errors: calls get past the checks
    _assert_every_structure_and_module_is_a_target(report.target_names)


@pytest.mark.slow
def test_public_calls_fail_cleanly_30000_large_inputs():
    _assert_clean(run(Config(SEED + 1, big=True), 30_000))


def _assert_every_structure_and_module_is_a_target(target_names: list[str]) -> None:
    from bloomkit._format import registered_structures

    names = set(target_names)
    for cls in registered_structures().values():
        assert f"{cls.__name__}()" in names and any(n.startswith(f"{cls.__name__}.") for n in names)
    for must in ("BloomFilter.union", "BloomFilter.__or__", "bloomkit.load", "bloomkit.parquet.parse_bloom_filter",
                 "SplitBlockBloomFilter.add_hashes", "bloomkit.theory.false_positive_rate",
                 "bloomkit.lookup.params.load_factor_monte_carlo", "bloomkit.folding.primes_up_to"):
        assert must in names, must


def test_the_oracle():
    from bloomkit import InvalidParameterError

    assert classify(None, {"x"}) == "ok"
    assert classify(InvalidParameterError("anything"), set()) == "clean"
    assert classify(TypeError("The 'fpr' parameter ..."), {"fpr"}) == "clean"
    assert classify(ValueError("could not convert string to float: 'a'"), {"fpr"}) == "unclear"
    assert classify(AttributeError("'int' object has no attribute '_key_mask'"), {"other"}) == "unclear"
    assert classify(RecursionError("maximum recursion depth exceeded"), {"key"}) == "unclear"
    assert classify(FileNotFoundError(2, "No such file", "x.bkf"), {"path"}) == "clean"
    assert classify(KeyError("k"), {"key"}, mapping_get=True) == "clean"
    assert classify(KeyError("k"), {"key"}) == "unclear"
    assert names_a_parameter("The 'n' parameter of f ...", {"n"})
    assert not names_a_parameter("n is bad", {"n"})  # a one-letter name counts only quoted
    assert names_a_parameter("num_bits must be positive", {"num_bits"})


def test_the_fuzzer_finds_hangs_memory_bombs_and_unclear_errors():
    """Through the same child processes and limits as the suite, on faulty functions."""
    cfg = Config(SEED, time_limit=0.5, memory_limit=1 << 30, modules=("_fuzz_selftest",))
    report = run(cfg, 4)  # round robin: each of the four functions once
    got = {(p["target"].rsplit(".", 1)[-1] if p.get("target") else p["call"].split("(")[0].rsplit(".", 1)[-1],
            p["outcome"]) for p in report.problems}
    assert {("hang", "hang"), ("bomb", "memory"), ("unclear", "unclear")} <= got, report.lines()
    assert not any(name == "clean" for name, _ in got), report.lines()
