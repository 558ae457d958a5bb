"""Build of bloomkit's optional C extension (everything else is in pyproject.toml).

``bloomkit._speedups`` (src/bloomkit/_speedups.c) is the compiled boundary for single keys and
Python lists. It is optional: without a C compiler or the Python headers the build prints a
warning, the install succeeds, and bloomkit runs on its numba kernels alone (``make
test-no-compiler`` checks this). ``BLOOMKIT_NO_EXTENSION=1`` turns a built extension off at
run time; ``bloomkit.info()["hash_path"]`` says which path is active.
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("bloomkit._speedups", ["src/bloomkit/_speedups.c"], optional=True)])
