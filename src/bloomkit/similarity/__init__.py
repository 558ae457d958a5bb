"""Approximate membership "is q near some stored object?" at several distances (document 002).

* :class:`MLBF` -- multi-granularity locality-sensitive Bloom filter: BMLBF + MVBF, levels
  theta = 0..S-1 answer at distance scales 2^theta w from one structure.
* :class:`MLBFStar` -- the MLBF* variant: the multi-granularity verification filter alone.
* :class:`LSBF` -- the single-distance baseline (Hua et al.).
* :mod:`bloomkit.similarity.theory` -- Theorems 1-12; :mod:`bloomkit.similarity.params` --
  parameter selection of Section 6.4; :mod:`bloomkit.similarity.lsh` -- the alignable LSH.
"""

from __future__ import annotations

from . import theory
from .lsbf import LSBF
from .lsh import AlignableLSH
from .mlbf import MLBF, MLBFStar
from .params import SimilarityParameters, select_parameters, width_for_probability

__all__ = [
    "LSBF",
    "MLBF",
    "AlignableLSH",
    "MLBFStar",
    "SimilarityParameters",
    "select_parameters",
    "theory",
    "width_for_probability",
]
