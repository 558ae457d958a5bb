"""Every optional dependency, when missing, is named with the extra that installs it (and how to
install that extra from a checkout), never a bare ``No module named ...``."""

from __future__ import annotations

import argparse
import sys

import numpy as np
import pytest


def _missing(monkeypatch: pytest.MonkeyPatch, *modules: str) -> None:
    for m in modules:  # an entry of None makes `import m` raise ModuleNotFoundError
        monkeypatch.setitem(sys.modules, m, None)


def _says_extra(excinfo: pytest.ExceptionInfo[BaseException], module: str, extra: str) -> None:
    msg = str(excinfo.value)
    assert f"'{extra}'" in msg and f"pip install -e '.[{extra}]'" in msg, msg
    if module:
        assert f"'{module}'" in msg, msg


def test_dask(monkeypatch):
    from bloomkit.dask._build import dask_module

    _missing(monkeypatch, "dask.dataframe")
    with pytest.raises(ModuleNotFoundError) as e:
        dask_module("dask.dataframe")
    _says_extra(e, "dask", "dask")


@pytest.mark.parametrize("module, call", [
    ("tabulate", lambda: __import__("bloomkit.experiments.report", fromlist=["_"])._table_html(["a"], [[1]])),
    ("markdown_it", lambda: __import__("bloomkit.experiments.report", fromlist=["_"])._html([], None)),
    ("pybloom_live", lambda: __import__("bloomkit.experiments.folding", fromlist=["_"])._sbf_bytes_and_rate(
        np.arange(3), np.arange(3, 6), 10, 0.01)),
    ("sklearn", lambda: __import__("bloomkit.experiments.similarity_digits", fromlist=["_"])._digits()),
])
def test_experiments(monkeypatch, module, call):
    _missing(monkeypatch, module, *(f"{module}.{sub}" for sub in ("datasets",) if module == "sklearn"))
    with pytest.raises(ModuleNotFoundError) as e:
        call()
    _says_extra(e, module, "experiments")


@pytest.mark.parametrize("module", ["uvicorn", "fastapi"])
def test_serve(monkeypatch, tmp_path, module):
    from bloomkit.serve.cli import ServeError, add_arguments, run

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args(["--demo", "--db", str(tmp_path / "x.sqlite"), "--port", "0"])
    _missing(monkeypatch, module)
    with pytest.raises(ServeError) as e:
        run(args)
    _says_extra(e, "", "serve")
    assert not (tmp_path / "x.sqlite").exists()  # nothing created before the missing extra is named
