"""Static filters: membership built once from a set of keys, near the information bound.

* :class:`BinaryFuseFilter`: binary fuse filters (Graf and Lemire 2022), 3- and 4-wise, 8-, 16-
  or 32-bit fingerprints: 1.13x / 1.08x the bound;
* :class:`RibbonFilter`: a ribbon filter (Dillinger and Walzer 2021), w = 64, bumped (BuRR,
  Dillinger et al. 2022) by default;
* :mod:`bloomkit.static.model`: their space and false positive models.

Key -> value retrieval of the same kind (ribbon) is :class:`bloomkit.lookup.RibbonRetrieval`.
"""

from __future__ import annotations

from .fuse import BinaryFuseFilter
from .model import (
    fuse_bits_per_key,
    fuse_layout,
    fuse_segment_length,
    fuse_size_factor,
    ribbon_slots,
    static_fpr,
)
from .ribbon import RibbonFilter

__all__ = [
    "BinaryFuseFilter",
    "RibbonFilter",
    "fuse_bits_per_key",
    "fuse_layout",
    "fuse_segment_length",
    "fuse_size_factor",
    "ribbon_slots",
    "static_fpr",
]
