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
from .evidence import Check, Measure, Rate, Timing

__all__ = [
    "VERDICTS",
    "Check",
    "Comparison",
    "Experiment",
    "ExperimentResult",
    "Measure",
    "Rate",
    "Timing",
    "all_experiments",
    "experiment",
    "get_experiment",
]


VERDICTS = (
    "deviates",
    "document erratum",
    "document model approximate",
    "not comparable",
    "consistent within noise",
    "reproduced",
    "not judged",
)
"""The verdicts of a comparison and of an experiment, the most severe first (an experiment
takes its most severe comparison's; "failed" when it raised)."""

_PAPER_KINDS = ("auto", "measurement", "model")


@dataclass(frozen=True)
class Comparison:
    """One quantity: the document's value, our model's, our measurement, and the evidence the
    report needs to name a cause when they differ.

    Parameters
    ----------
    quantity : str
        What is compared.
    paper : number, str, Rate or None
        The document's value: a printed number, its words ("about 2", "<= 0.002", "511, 897",
        "yes"), or -- when the document states the sample size of a measured rate --
        ``Rate.reported(value, trials)``, so that its noise counts too.
    model : number, str or None
        Our model's value (a formula, an optimizer's output, a bound such as "<= 23.65").
    measured : Rate, Measure, Timing, int, str or None
        Our measurement. A rate is a :class:`~bloomkit.experiments.evidence.Rate` (events,
        trials), never a bare float; another measured quantity a
        :class:`~bloomkit.experiments.evidence.Measure` (value, standard error); a time only a
        :class:`~bloomkit.experiments.evidence.Timing` (a ratio within one run); an int is an
        exact count or size; a str is descriptive or a list / fraction the report reads.
    note : str
        Shown beside the row.
    tolerance : float, optional
        Relative difference within which values without sampling noise agree (default 10%).
    check : Check, optional
        An independent derivation (:class:`~bloomkit.experiments.evidence.Check`): the evidence
        for "document erratum" (it agrees with ours, not with the document) or "document model
        approximate" (it agrees with our measurement, not with the model).
    differs : str
        Why our setting is not the document's (another scale, machine, data, unstated
        parameters): ours against the document's value is then "not comparable", never a defect.
    erratum : str
        The explanation of a document erratum and where it is documented (ERRATA.md entry,
        docs page); shown in the report's errata list. Needs a ``check``.
    paper_kind : {"auto", "measurement", "model"}
        Whether the document's value is its measurement (compared with ours measured) or a
        value of its model (compared with our model). "auto": the measurement when we have one.

    Raises
    ------
    TypeError
        A measured value that is a bare float (a rate without its counts), or values of the
        wrong type.
    """

    quantity: str
    paper: float | int | str | Rate | None = None
    model: float | int | str | None = None
    measured: Rate | Measure | Timing | int | str | None = None
    note: str = ""
    tolerance: float | None = None
    check: Check | None = None
    differs: str = ""
    erratum: str = ""
    paper_kind: str = "auto"

    def __post_init__(self) -> None:
        where = f"Comparison {self.quantity!r}"
        m = self.measured
        if isinstance(m, np.integer):
            object.__setattr__(self, "measured", int(m))
        elif isinstance(m, bool | np.bool_) or isinstance(m, float | np.floating):
            raise TypeError(
                f"{where}: 'measured' is a bare {type(m).__name__} ({m!r}). A measured rate needs its "
                "counts, Rate(events, trials) (Rate.pooled(...) over rebuilt filters); another "
                "measurement Measure(value, se); a wall-clock time Timing(ratio) within one run; "
                "an exact count an int.")
        elif not isinstance(m, Rate | Measure | Timing | int | str | type(None)):
            raise TypeError(f"{where}: 'measured' must be Rate, Measure, Timing, int, str or None. "
                            f"Got {type(m).__name__} instead.")
        for name in ("paper", "model"):
            v = getattr(self, name)
            if isinstance(v, np.integer | np.floating):
                object.__setattr__(self, name, v.item())
            elif isinstance(v, Measure | Timing) or (isinstance(v, Rate) and name == "model") or isinstance(v, bool):
                raise TypeError(f"{where}: {name!r} cannot be a {type(v).__name__}"
                                + (" (a model value is a number)" if name == "model" else ""))
            elif not isinstance(v, int | float | str | Rate | type(None)):
                raise TypeError(f"{where}: {name!r} must be a number, str{', Rate' if name == 'paper' else ''} "
                                f"or None. Got {type(v).__name__} instead.")
        if self.check is not None and not isinstance(self.check, Check):
            raise TypeError(f"{where}: 'check' must be a Check(value, how). Got {type(self.check).__name__} instead.")
        if self.erratum and self.check is None:
            raise TypeError(f"{where}: an erratum needs the independent derivation behind it (check=Check(...))")
        if self.paper_kind not in _PAPER_KINDS:
            raise ValueError(f"{where}: 'paper_kind' must be one of {_PAPER_KINDS}. Got {self.paper_kind!r} instead.")


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
    seconds, jit_seconds : float
        Set by :meth:`Experiment.run`: the run time without JIT work, and the time spent
        compiling or loading compiled kernels (numba's compiler lock), measured apart.
    """

    rows: list[dict[str, Any]]
    comparisons: list[Comparison] = field(default_factory=list)
    plot: Callable[[Any], None] | None = None
    notes: str = ""
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
        if info.name not in ("registry", "report", "evidence", "figures", "independent") and not info.name.startswith("_"):
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
