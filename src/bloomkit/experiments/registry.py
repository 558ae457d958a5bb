"""Registry of experiments: ids, titles, source references and the functions that run them."""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import InvalidParameterError

__all__ = [
    "Comparison",
    "Experiment",
    "ExperimentResult",
    "all_experiments",
    "experiment",
    "get_experiment",
]


@dataclass(frozen=True)
class Comparison:
    """One quantity with the document's value, our model's value and our measured value.

    Any of the three may be ``None`` (not given by the document / no model / not measured).
    """

    quantity: str
    paper: float | str | None = None
    model: float | str | None = None
    measured: float | str | None = None
    note: str = ""


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
    """

    rows: list[dict[str, Any]]
    comparisons: list[Comparison] = field(default_factory=list)
    plot: Callable[[Any], None] | None = None
    notes: str = ""


@dataclass(frozen=True)
class Experiment:
    id: str
    title: str
    source: str
    func: Callable[[bool, np.random.Generator], ExperimentResult]
    seed: int

    def run(self, quick: bool = True, seed: int | None = None) -> ExperimentResult:
        """Run with a generator seeded by ``seed`` (default: the experiment's own seed)."""
        rng = np.random.default_rng(self.seed if seed is None else seed)
        result = self.func(quick, rng)
        if not isinstance(result, ExperimentResult):
            raise TypeError(f"experiment {self.id} returned {type(result).__name__}, not ExperimentResult")
        return result


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
        if info.name != "registry" and not info.name.startswith("_"):
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
