"""Registry of experiments: ids, titles, source references and the functions that run them."""

from __future__ import annotations

import contextlib
import importlib
import pkgutil
import re
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import InvalidParameterError

__all__ = [
    "VERDICTS",
    "Comparison",
    "Experiment",
    "ExperimentResult",
    "all_experiments",
    "experiment",
    "get_experiment",
]


VERDICTS = ("reproduced", "deviates")
"""What an experiment may state as its own verdict (:attr:`ExperimentResult.verdict`)."""


@dataclass(frozen=True)
class Comparison:
    """One quantity with the document's value, our model's value and our measured value.

    Any of the three may be ``None`` (not given by the document / no model / not measured).
    ``tolerance`` is the relative difference within which ours agrees with the paper's value
    (or, without one, with the model's); None takes the report's default. ``trials`` is the
    number of Bernoulli trials a measured rate was estimated from: the report then also
    accepts a difference within its binomial tolerance (:mod:`bloomkit.experiments.report`).
    """

    quantity: str
    paper: float | str | None = None
    model: float | str | None = None
    measured: float | str | None = None
    note: str = ""
    tolerance: float | None = None
    trials: int | None = None


@dataclass
class ExperimentResult:
    """What an experiment returns.

    Parameters
    ----------
    rows : list of dict
        A tidy table: one row per observation, the same keys in every row.
    comparisons : list of Comparison
        Paper / model / measured side by side; shown in the report.
    plot : callable, optional
        ``plot(fig)`` draws the figure on a matplotlib Figure.
    notes : str
        What was scaled down in quick mode, which data were used, known biases.
    verdict : {"reproduced", "deviates"}, optional
        The experiment's own verdict, when it knows better than the report's reading of its
        comparisons (:func:`bloomkit.experiments.report.verdict`); ``verdict_reason`` says why.
    seconds, jit_seconds : float
        Set by :meth:`Experiment.run`: the run time without JIT work, and the time spent
        compiling or loading compiled kernels (numba's compiler lock), measured apart.
    """

    rows: list[dict[str, Any]]
    comparisons: list[Comparison] = field(default_factory=list)
    plot: Callable[[Any], None] | None = None
    notes: str = ""
    verdict: str | None = None
    verdict_reason: str = ""
    seconds: float = 0.0
    jit_seconds: float = 0.0


@dataclass(frozen=True)
class Experiment:
    id: str
    title: str
    source: str
    func: Callable[[bool, np.random.Generator], ExperimentResult]
    seed: int

    def run(self, quick: bool = True, seed: int | None = None) -> ExperimentResult:
        """Run with a generator seeded by ``seed`` (default: the experiment's own seed).

        The result's ``seconds`` is the run time without the JIT work (the first compile of a
        kernel, or loading it from numba's cache), which ``jit_seconds`` holds: a kernel is
        compiled once per machine, and counting it made a 0.02 s run look like 1 s."""
        rng = np.random.default_rng(self.seed if seed is None else seed)
        with _jit_timer() as jit:
            start = time.perf_counter()
            result = self.func(quick, rng)
            wall = time.perf_counter() - start
        if not isinstance(result, ExperimentResult):
            raise TypeError(f"experiment {self.id} returned {type(result).__name__}, not ExperimentResult")
        if result.verdict is not None and result.verdict not in VERDICTS:
            raise ValueError(f"experiment {self.id} states the verdict {result.verdict!r}, not one of {VERDICTS}")
        result.jit_seconds = min(wall, jit.duration if jit.done else 0.0)
        result.seconds = wall - result.jit_seconds
        return result


class _NoTimer:
    done = False
    duration = 0.0


@contextlib.contextmanager
def _jit_timer() -> Iterator[Any]:
    """Time spent holding numba's compiler lock (compiling, or loading from the cache)."""
    try:
        from numba.core import event
    except ImportError:  # pragma: no cover - numba is a dependency
        yield _NoTimer()
        return
    with event.install_listener("numba:compiler_lock", event.TimingListener()) as timer:  # type: ignore[no-untyped-call]
        yield timer


_REGISTRY: dict[str, Experiment] = {}
_DISCOVERED = False


def experiment(
    exp_id: str, *, title: str, source: str, seed: int = 20261122
) -> Callable[[Callable[[bool, np.random.Generator], ExperimentResult]], Callable[[bool, np.random.Generator], ExperimentResult]]:
    """Register ``func(quick, rng) -> ExperimentResult`` under ``exp_id``."""

    def deco(
        func: Callable[[bool, np.random.Generator], ExperimentResult],
    ) -> Callable[[bool, np.random.Generator], ExperimentResult]:
        if exp_id in _REGISTRY and _REGISTRY[exp_id].func.__qualname__ != func.__qualname__:
            raise ValueError(f"experiment id {exp_id!r} registered twice")
        _REGISTRY[exp_id] = Experiment(exp_id, title, source, func, seed)
        return func

    return deco


def _discover() -> None:
    global _DISCOVERED
    if _DISCOVERED:
        return
    pkg = importlib.import_module("bloomkit.experiments")
    for info in pkgutil.iter_modules(pkg.__path__):
        if info.name not in ("registry", "report") and not info.name.startswith("_"):
            importlib.import_module(f"bloomkit.experiments.{info.name}")
    _DISCOVERED = True


def _sort_key(exp_id: str) -> tuple[Any, ...]:
    """Natural order: "000-fig8" before "000-fig10", "001-fig3.2" before "001-fig3.10"."""
    return tuple(int(t) if t.isdigit() else t for t in re.split(r"(\d+)", exp_id))


def all_experiments() -> list[Experiment]:
    """Every registered experiment, ordered by id."""
    _discover()
    return [_REGISTRY[k] for k in sorted(_REGISTRY, key=_sort_key)]


def get_experiment(exp_id: str) -> Experiment:
    """The experiment registered as ``exp_id`` (InvalidParameterError if unknown)."""
    _discover()
    try:
        return _REGISTRY[exp_id]
    except KeyError:
        known = ", ".join(sorted(_REGISTRY))
        raise InvalidParameterError(
            f"The 'only' parameter of reproduce must be a registered experiment id ({known}). "
            f"Got {exp_id!r} instead."
        ) from None


def select(ids: Sequence[str] | None) -> list[Experiment]:
    """Experiments named by ``ids`` (exact ids or prefixes such as ``"000"``), or all."""
    exps = all_experiments()
    if not ids:
        return exps
    chosen: list[Experiment] = []
    for want in ids:
        hits = [e for e in exps if e.id == want] or [e for e in exps if e.id.startswith(want)]
        if not hits:
            get_experiment(want)  # raises the standard error
        chosen.extend(h for h in hits if h not in chosen)
    return chosen
