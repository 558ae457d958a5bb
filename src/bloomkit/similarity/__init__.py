"""Approximate membership "is q near some stored object?" at several distances (document 002).

* :class:`MLBF` -- multi-granularity locality-sensitive Bloom filter: BMLBF + MVBF, levels
  theta = 0..S-1 answer at distance scales 2^theta w from one structure.
* :class:`MLBFStar` -- the MLBF* variant: the multi-granularity verification filter alone.
* :class:`LSBF` -- the single-distance baseline (Hua et al.).
* :class:`MVBF` -- the multi-granularity verification filter on raw elements (Section 5.2, Fig 7).
* :class:`JaccardMLBF`, :class:`JaccardMLBFStar`, :class:`JaccardLSBF` -- the same structures
  with the MinHash family (issue 24): near-duplicate texts at one or several Jaccard thresholds;
  :class:`MinHasher` -- batch MinHash signatures (:mod:`bloomkit.similarity.minhash`);
  :mod:`bloomkit.similarity.jaccard`; :func:`select_jaccard_parameters`; :class:`BBitIndex` --
  band candidates verified by b-bit MinHash (:mod:`bloomkit.similarity.minhash_bbit`), the
  default of :func:`bloomkit.similarity.dedup.dedup`; :func:`select_bbit_parameters`.
* :mod:`bloomkit.similarity.theory` -- Theorems 1-12; :mod:`bloomkit.similarity.params` --
  parameter selection of Section 6.4; :mod:`bloomkit.similarity.lsh` -- the alignable LSH;
  :mod:`bloomkit.similarity.spec` -- the parameters as constraints (constructors and loader).

All three filters implement the similarity-filter protocol of :mod:`bloomkit._protocols`:
``add``, ``add_many``, ``query(point, level=0)``,
``query_many(points, level=0)``, ``clear``, ``copy``, exact ``len``, ``size_in_bits``,
``predicted_fpr()``, ``info()``.
"""

from __future__ import annotations

from . import theory
from .jaccard import JaccardLSBF, JaccardMLBF, JaccardMLBFStar
from .lsbf import LSBF
from .lsh import AlignableLSH
from .minhash import MinHasher
from .minhash_bbit import BBitIndex, select_bbit_parameters
from .mlbf import MLBF, MLBFStar
from .mvbf import MVBF
from .params import (
    JaccardParameters,
    SimilarityParameters,
    select_jaccard_parameters,
    select_parameters,
    width_for_probability,
)

__all__ = [
    "BBitIndex",
    "JaccardLSBF",
    "JaccardMLBF",
    "JaccardMLBFStar",
    "JaccardParameters",
    "LSBF",
    "MLBF",
    "MVBF",
    "AlignableLSH",
    "MLBFStar",
    "MinHasher",
    "SimilarityParameters",
    "select_bbit_parameters",
    "select_jaccard_parameters",
    "select_parameters",
    "theory",
    "width_for_probability",
]
