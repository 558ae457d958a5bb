"""Every python example of README.md runs as printed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)


def test_readme_has_an_example_per_structure():
    text = "\n".join(BLOCKS)
    for name in ("BloomFilter", "CountingBloomFilter", "RangeBloomFilter", "GeometricFilter",
                 "BloomierFilter", "MLBF", "FoldableBloomFilter", "ParallelBloomFilter"):
        assert name in text


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_readme_example_runs(code, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    exec(compile(code, str(README), "exec"), {"__name__": "__readme__"})
