"""Every public call fails cleanly (issue 26, item 6): the seeded fuzz suite of tests/_fuzz.py.

The default run calls every public constructor, method, operator and module function of the
package (a few thousand calls, each target several times) in child processes under a time and
an address-space limit; ``make test-slow`` runs 30,000 calls with larger inputs. A failure lists
each problem with the command that reproduces it (``python tests/_fuzz.py --seed S --case N``).
"""

from __future__ import annotations

import pytest
from _fuzz import Config, classify, names_a_parameter, run, targets

SEED = 26
MIN_CALLS = 2000
CALLS_PER_TARGET = 3  # the default run grows with the public surface: every target several times


def _assert_clean(report) -> None:
    assert not report.problems, report.summary() + "\n" + "\n".join(report.lines())
    assert report.counts["ok"] + report.counts["clean"] == report.calls, report.summary()


def test_public_calls_fail_cleanly():
    report = run(Config(SEED), max(MIN_CALLS, CALLS_PER_TARGET * len(targets())))
    _assert_clean(report)
    assert report.calls >= CALLS_PER_TARGET * report.targets  # every target called, several times
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


# -- the cases the issue lists, each reproduced (the fuzz suite finds their kind; these pin them)


def test_set_operations_with_a_non_filter_are_incompatible_filters_errors():
    import operator

    from bloomkit import (
        BloomFilter,
        CountingBloomFilter,
        IncompatibleFiltersError,
        ScalableBloomFilter,
        SplitBlockBloomFilter,
    )

    ops = (operator.or_, operator.and_, operator.ior, operator.iand, operator.le, operator.lt, operator.ge,
           operator.gt, lambda a, b: a.union(b), lambda a, b: a.intersection(b), lambda a, b: a.issubset(b),
           lambda a, b: a.issuperset(b), lambda a, b: a.intersection_update(b))
    for f in (BloomFilter(capacity=10, fpr=0.1), CountingBloomFilter(capacity=10, fpr=0.1),
              SplitBlockBloomFilter(capacity=10, fpr=0.1)):
        for op in ops:
            for other in (3, {1}, "x", None, BloomFilter(capacity=11, fpr=0.1)):
                with pytest.raises(IncompatibleFiltersError):
                    op(f, other)
    s = ScalableBloomFilter(10, 0.1)
    for op in (operator.or_, operator.ior, lambda a, b: a.union(b)):
        with pytest.raises(IncompatibleFiltersError):
            op(s, 3)


def test_paths_bytes_and_hashes_are_checked_by_name():
    import numpy as np

    import bloomkit
    from bloomkit import InvalidParameterError, SplitBlockBloomFilter
    from bloomkit.parquet import parse_bloom_filter

    for bad in (3, 1.5, None, [1], np.zeros(2), "", "a\x00b", "\ud800"):
        with pytest.raises(InvalidParameterError, match="'path' parameter of load"):
            bloomkit.load(bad)
    for bad in (2**32 + 1, "abc", None, [1, 2]):  # an int would make bytes(n) allocate n bytes
        with pytest.raises(InvalidParameterError, match="'data' parameter of parse_bloom_filter"):
            parse_bloom_filter(bad, physical_type="INT64")
        with pytest.raises(InvalidParameterError, match="'bitset' parameter"):
            SplitBlockBloomFilter.from_parquet_bitset(bad, physical_type="INT64")
    f = SplitBlockBloomFilter(capacity=100, fpr=0.01)
    for bad in (3, b"abc", np.zeros((3, 4)), np.ones(3), ["a"], [2**64], "x"):
        for call in (f.add_hashes, f.contains_hashes):
            with pytest.raises(InvalidParameterError, match="'hashes' parameter"):
                call(bad)
    f.add_hashes([1, 2**64 - 1])
    assert f.contains_hashes(np.array([1, 2**64 - 1], dtype=np.uint64)).all()


def test_the_endless_recursions_are_parameter_errors():
    import numpy as np

    from bloomkit import InvalidParameterError, SplitBlockBloomFilter
    from bloomkit.parquet import plain_values

    f = SplitBlockBloomFilter.for_parquet(physical_type="INT64", num_bytes=1024)
    with pytest.raises(InvalidParameterError, match="numpy array of dtype bool"):
        f.contains_many(np.ones(3, bool))
    with pytest.raises(InvalidParameterError, match="numpy array of dtype bool"):
        plain_values(np.array([True]), "INT32")


def test_model_functions_are_bounded_for_huge_n():
    import tracemalloc

    from bloomkit import SplitBlockBloomFilter
    from bloomkit.splitblock import split_block_fpr, split_block_fpr_sd

    f = SplitBlockBloomFilter(capacity=1000, fpr=0.01)
    tracemalloc.start()
    try:
        assert f.predicted_fpr(10**15) == 1.0  # was 5.3 GB and 15 s: the terms grew as sqrt(n / B)
        assert split_block_fpr(2**60, 3, 32) == 1.0 and split_block_fpr_sd(10**15, 7, 1000) == 0.0
        assert split_block_fpr(5e-324, 10) == 0.0  # n / B underflows: no block holds a key
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 10 << 20, peak


def test_add_many_iterates_only_sized_inputs():
    from bloomkit import BloomFilter, InvalidParameterError
    from bloomkit.ranges import RangeConfig

    with pytest.raises(InvalidParameterError, match="'keys' parameter of BloomFilter.add_many must be an iterable"):
        BloomFilter(capacity=10, fpr=0.1).add_many(RangeConfig(6))  # __getitem__ answers every index
