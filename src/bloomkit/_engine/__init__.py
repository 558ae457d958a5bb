"""bloomkit's engine (private): what every structure builds on, apart from the products.

``hashing`` (canonical key encoding, XXH64, probe positions), ``kernels`` (the shared numba
kernels), ``jit`` (the numba decorators and intrinsics every ``_kernels.py`` uses), ``lazy``
(deferred imports of the kernels and of the extras), ``storage`` (aligned bit / counter arrays,
the load budget), ``boundary`` (the optional compiled boundary ``bloomkit._speedups``, built
from ``src/bloomkit/_speedups.c``), ``parallel`` (chunked multi-threaded passes) and
``columns`` (the data front door). This package imports nothing; import its modules.
"""
