"""Split-block Bloom filters: every key's bits in one cache line, bit-exact with Parquet's.

A *blocked* Bloom filter (Putze, Sanders, Singler, "Cache-, Hash- and Space-Efficient Bloom
Filters", WEA 2007 / JEA 14, 2009, Section 3) is an array of B small Bloom filters (blocks);
a key's first hash picks one block and all its bits go there, so an insert or a query touches
one cache line instead of k. Inside a block we use the *split* filter of Parquet (Broder and
Mitzenmacher, "Network Applications of Bloom Filters: A Survey", Section 2.1): k = 8 lanes of
w bits, one bit per lane.

* **native mode** (:class:`SplitBlockBloomFilter` ``(capacity, fpr)``): 512-bit blocks (one
  64-byte line, storage 64-byte aligned), w = 64, block ``h mod B`` of bloomkit's key hash h
  (so folding by a divisor of B equals rebuilding at that size), lane bits from
  ``splitmix64(h + golden)``.
* **Parquet mode** (:meth:`SplitBlockBloomFilter.from_parquet_values`,
  :meth:`~SplitBlockBloomFilter.for_parquet`): the format's SBBF, bit for bit: 256-bit blocks
  of eight 32-bit words (w = 32), XXH64 with seed 0 of the PLAIN-encoded value, block
  ``((h >> 32) * z) >> 32``, lane j's bit ``(uint32(h) * SALT[j]) >> 27``.

The false positive model is :func:`split_block_fpr` (:mod:`.model`) (Putze et al.'s sum over block loads);
sizing (:func:`split_block_num_blocks`) inverts it, so ``capacity, fpr`` gives ``fpr``.
"""

from .filter import HASH_PARQUET, SplitBlockBloomFilter
from .model import split_block_fill, split_block_fpr, split_block_fpr_sd, split_block_num_blocks

__all__ = [
    "HASH_PARQUET",
    "SplitBlockBloomFilter",
    "split_block_fill",
    "split_block_fpr",
    "split_block_fpr_sd",
    "split_block_num_blocks",
]
