"""The conventions every reproduction figure follows (issue 27).

* the document's printed values are black markers labelled "document", drawn beside our model
  (lines) and our measurement (points), so a reader sees all three at once; a figure whose
  document prints no values says so in its legend (:func:`no_document_values`);
* every curve's label says whether it is a model or a measurement;
* legends and labels are legible (:data:`LEGEND_SIZE`; the report also raises any smaller
  text to 7.5 pt) and placed where they hide no data (outside the axes when crowded);
* nothing is clipped: log axes get limits from the data drawn (:func:`log_limits`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

LEGEND_SIZE = 8
DOC_STYLE = {"marker": "*", "color": "black", "markersize": 11, "linestyle": "none", "zorder": 5}


def document(ax: Any, xs: Sequence[float], ys: Sequence[float], label: str = "document (printed values)") -> None:
    """The document's printed values as black stars."""
    ax.plot(list(xs), list(ys), label=label, **DOC_STYLE)


def no_document_values(ax: Any, why: str = "document prints no values for this figure") -> None:
    """A legend entry saying the document gives no numbers to draw."""
    ax.plot([], [], " ", label=why)


def legend(ax: Any, *, outside: bool | str = False, ncol: int = 1, loc: str = "best") -> None:
    """A legible legend; ``outside`` puts it under the axes (``"right"``: beside them), where it
    hides no data."""
    if outside == "right":
        ax.legend(fontsize=LEGEND_SIZE, ncol=ncol, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    elif outside:
        ax.legend(fontsize=LEGEND_SIZE, ncol=ncol, loc="upper center", bbox_to_anchor=(0.5, -0.18), frameon=False)
    else:
        ax.legend(fontsize=LEGEND_SIZE, ncol=ncol, loc=loc)


def figure_legend(fig: Any, ncol: int = 2) -> None:
    """One legend under all panels of a figure (panels share their labels): the panels keep their
    width. Uses the constrained layout (the report then skips tight_layout)."""
    seen: dict[str, Any] = {}
    for ax in fig.axes:
        handles, labels = ax.get_legend_handles_labels()
        for h, lab in zip(handles, labels, strict=True):
            seen.setdefault(lab, h)
        if ax.get_legend() is not None:
            ax.get_legend().remove()
    fig.set_layout_engine("constrained")
    fig.legend(list(seen.values()), list(seen), loc="outside lower center", ncol=ncol, fontsize=LEGEND_SIZE,
               frameon=False)


def log_limits(ax: Any, values: Iterable[Any], pad: float = 2.0, floor: float | None = None) -> float:
    """Limits of a log y axis that show every positive value drawn; with ``floor``, the axis stops
    there (what lies below is drawn by :func:`below_floor`, never silently cut). Returns the bottom."""
    v = np.array([float(x) for x in values if x is not None and np.isfinite(float(x)) and float(x) > 0])
    if not v.size:
        return 0.0
    bottom = v.min() / pad if floor is None else max(v.min() / pad, floor)
    ax.set_ylim(bottom, min(1.5, v.max() * pad) if v.max() <= 1 else v.max() * pad)
    return float(bottom)


def below_floor(ax: Any, xs: Sequence[float], ys: Sequence[float | None], bottom: float, color: Any) -> None:
    """Model values below the axis floor: a down triangle on the floor (labelled once per axes)."""
    pts = [(x, y) for x, y in zip(xs, ys, strict=True) if y is not None and 0 <= y < bottom]
    if pts:
        seen = any(t.get_label().startswith("model: below the axis") for t in ax.get_lines())
        ax.plot([x for x, _y in pts], [bottom * 1.15] * len(pts), "v", color=color, ms=6,
                label="_nolegend_" if seen else f"model: below the axis ({bottom:.0e}), drawn at it")


def rate_points(ax: Any, xs: Sequence[float], hits: Sequence[int], trials: Sequence[int], *, color: Any, label: str,
                marker: str = "o") -> list[float]:
    """Measured rates (only those with events: a log axis has no zero) with 3 sd bars that stop
    above zero; returns the values drawn."""
    pts = [(x, h / t, t) for x, h, t in zip(xs, hits, trials, strict=True) if h > 0]
    if not pts:
        return []
    y = np.array([p[1] for p in pts])
    sd = 3 * np.sqrt(y * (1 - y) / np.array([p[2] for p in pts]))
    lower = np.minimum(sd, 0.9 * y)
    ax.errorbar([p[0] for p in pts], y, yerr=[lower, sd], fmt=marker, ms=3.5, capsize=2, color=color, label=label)
    return [float(v) for v in y]
