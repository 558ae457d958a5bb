"""Key -> value lookup tables with bounded error (document 001: the Geometric filter).

* :class:`GeometricFilter`: a geometric series of hash tables + an exact overflow table
  (Zhao 2009, Section 3.2), updatable after encoding (``set`` / ``update`` / ``insert`` /
  ``remove``);
* :class:`BloomierFilter`: the baseline of Section 2.2 (k = 3, M = 1.23 |S|, peeling, XOR
  encoding), static;
* :class:`RibbonRetrieval`: standard ribbon retrieval (w = 64), static, near the bound;
  ``GeometricFilter.to_static(keys)`` freezes an updatable table into one;
* :func:`geometric_parameters` and the rest of :mod:`bloomkit.lookup.params`: Lemma 3.5.1
  (Lambert W), Lemma 3.5.2, Eqs. 3.11-3.26, Algorithms 6 and 7;
* :class:`ValueCodec`: labels <-> value ids (the tables number str values with one and save it);
* :mod:`bloomkit.lookup.data`: the GCIDE trigram table and a seeded Zipf generator.
"""

from __future__ import annotations

from .bloomier import BloomierFilter, UpdateNotSupportedError
from .codec import ValueCodec
from .geometric import GeometricFilter
from .params import GeometricParameters, geometric_parameters
from .ribbon import RibbonRetrieval

__all__ = [
    "BloomierFilter",
    "GeometricFilter",
    "GeometricParameters",
    "RibbonRetrieval",
    "UpdateNotSupportedError",
    "ValueCodec",
    "geometric_parameters",
]
