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


def legend(ax: Any, *, outside: bool = False, ncol: int = 1, loc: str = "best") -> None:
    """A legible legend; ``outside`` puts it under the axes (for crowded panels)."""
    if outside:
        ax.legend(fontsize=LEGEND_SIZE, ncol=ncol, loc="upper center", bbox_to_anchor=(0.5, -0.18), frameon=False)
    else:
        ax.legend(fontsize=LEGEND_SIZE, ncol=ncol, loc=loc)


def log_limits(ax: Any, values: Iterable[Any], pad: float = 2.0) -> None:
    """Limits of a log y axis that show every positive value drawn (none clipped)."""
    v = np.array([float(x) for x in values if x is not None and np.isfinite(float(x)) and float(x) > 0])
    if v.size:
        ax.set_ylim(v.min() / pad, min(1.5, v.max() * pad) if v.max() <= 1 else v.max() * pad)
