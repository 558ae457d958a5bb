# bloomkit: two commands do all set-up on a fresh machine with python3 and make.
#   make demo   creates .venv, installs, runs `bloomkit reproduce --quick` (report in results/)
#   make test   creates .venv, installs with test extras, runs ruff, mypy (strict, src/) and the whole test suite
#               with the C extension (bloomkit._speedups), the forged-file suite again under python -O (the
#               loader's checks must not be asserts), then the tests of hashing, adds, queries and
#               persistence again on numba alone (BLOOMKIT_NO_EXTENSION=1), then the package as it ships:
#               an sdist and a wheel built from it without a C compiler (CC=false: the extension is
#               optional), installed into a fresh venv, smoke-tested (tests/wheel_smoke.py) and tested
PYTHON ?= python3
VENV   := .venv
CONSTRAINTS := constraints.txt
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip --disable-pip-version-check -q
GCIDE  := /usr/share/dictd/gcide.dict.dz

.PHONY: demo test test-types test-optimized test-pure test-no-compiler test-slow test-latest constraints bench bench-serve lint data browser serve-demo clean

$(VENV)/.created:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -c $(CONSTRAINTS) --upgrade pip
	touch $@

$(VENV)/.installed-demo: $(VENV)/.created pyproject.toml $(CONSTRAINTS) setup.py src/bloomkit/_speedups.c
	$(PIP) install -c $(CONSTRAINTS) -e ".[experiments]"
	touch $@

$(VENV)/.installed-test: $(VENV)/.created pyproject.toml $(CONSTRAINTS) setup.py src/bloomkit/_speedups.c
	$(PIP) install -c $(CONSTRAINTS) -e ".[test]"
	touch $@

# Real English text for the n-gram experiments of document 001 (Debian package dict-gcide).
# Best effort: without it the experiments fall back to seeded synthetic data and say so.
data:
	@if [ ! -f $(GCIDE) ] && command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
		(apt-get update -qq && apt-get install -y -qq dict-gcide) >/dev/null 2>&1 \
		|| echo "note: dict-gcide could not be installed; document 001 uses synthetic data"; \
	fi

# Chromium for the browser test of the `bloomkit serve` page (Debian package chromium; Playwright
# drives it, never downloads one). Best effort: without it tests/test_serve_browser.py is skipped, saying why.
browser:
	@if [ ! -x /usr/bin/chromium ] && command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
		(apt-get update -qq && apt-get install -y -qq chromium) >/dev/null 2>&1 \
		|| echo "note: chromium could not be installed; the browser test of bloomkit serve is skipped"; \
	fi

demo: $(VENV)/.installed-demo data
	$(VENV)/bin/bloomkit reproduce --quick --out results

# The second pass of `make test`: on numba alone, the tests of the code that has two paths
# (hashing, single keys and lists of BloomFilter, CountingBloomFilter, SplitBlockBloomFilter and
# their subclasses, ParallelBloomFilter items) and of persistence and threads for those
# structures. The whole suite twice would take CI past 12 minutes on 2 cores; the structures
# left out of the second pass call only the shared hashing, which test_speedups checks equal.
PURE_TESTS := tests/test_speedups.py tests/test_hashing.py tests/test_bloom.py tests/test_splitblock.py \
	tests/test_columns.py tests/test_storage.py tests/test_threads.py tests/test_conformance.py \
	tests/test_scalable.py tests/test_folding.py tests/test_multiattr.py tests/test_parquet.py tests/test_cli.py \
	tests/test_single_items.py
PURE_SKIP := not (Geometric or Bloomier or ShardedLookup or LSBF or MLBF or ProfileIndex or RangeBloomFilter or Fuse or Ribbon)
# CI tests the compiled path: a build that did not produce it fails here, unless
# BLOOMKIT_ALLOW_NUMBA_ONLY=1 (a machine without a C compiler)
CHECK_PATH := import os, bloomkit; p = bloomkit.info()["hash_path"]; print("bloomkit hash path:", p); \
	assert p == "c-extension" or os.environ.get("BLOOMKIT_ALLOW_NUMBA_ONLY") == "1", \
	"bloomkit._speedups was not built (set BLOOMKIT_ALLOW_NUMBA_ONLY=1 to test numba alone)"

# After the main pass, the other four run two at a time (make -j2; each one's output printed
# whole when it ends): mypy, the -O pass and most of test-no-compiler (building and installing
# the package) use one core each, so paired they fill the second core the main pass leaves idle
# between them. Same tests, same checks, about 45 s less on 2 cores.
test: $(VENV)/.installed-test browser
	$(VENV)/bin/ruff check -q src tests benchmarks
	$(PY) -c '$(CHECK_PATH)'
	$(PY) -m pytest -q -n 2 --dist loadfile
	$(MAKE) --no-print-directory -j2 --output-sync=target test-types test-optimized test-pure test-no-compiler

test-types: $(VENV)/.installed-test
	$(VENV)/bin/mypy --no-error-summary src/bloomkit

# the forged-file suite under python -O: the loader's checks must not be asserts
test-optimized: $(VENV)/.installed-test
	$(PY) -O -m pytest -q -p no:cacheprovider tests/test_conformance.py -k forged_files_under_optimize

test-pure: $(VENV)/.installed-test
	BLOOMKIT_NO_EXTENSION=1 $(PY) -m pytest -q -n 2 --dist loadfile -k '$(PURE_SKIP)' $(PURE_TESTS)

# The package as it ships, on a machine without a C compiler (CC=false): an sdist built from
# this tree (what a release uploads: docs, LICENSE, tests; never built files), a wheel built
# from that sdist (the optional extension fails with a warning, the build succeeds), installed
# into a scratch venv (build/nocc) whose dependencies are read from .venv (a .pth file). Both
# builds use the setuptools of .venv (the test extra pins it): nothing is downloaded.
# tests/wheel_smoke.py checks the sdist (every README / docs link resolves inside it), the
# wheel (package data, LICENSE, metadata, the console script) and the installed package (the
# `bloomkit` command builds a file); then bloomkit runs on numba alone (test_speedups: the
# fallback paths; the whole suite on numba alone is test-pure). Part of `make test`.
NOCC := build/nocc
test-no-compiler: $(VENV)/.installed-test
	rm -rf $(NOCC) && $(PYTHON) -m venv --without-pip $(NOCC)/venv
	$(NOCC)/venv/bin/python -c 'import site, sys; open(site.getsitepackages()[0] + "/deps.pth", "w").write(sys.argv[1])' \
		"$$($(PY) -c 'import site; print(site.getsitepackages()[0])')"
	$(PY) -m build --sdist --no-isolation --outdir $(NOCC)/dist . > $(NOCC)/sdist.log 2>&1 || (cat $(NOCC)/sdist.log; exit 1)
	CC=false $(PY) -m pip --disable-pip-version-check -v wheel --no-deps --no-build-isolation --wheel-dir $(NOCC)/dist \
		$(NOCC)/dist/bloomkit-*.tar.gz > $(NOCC)/install.log 2>&1 || (cat $(NOCC)/install.log; exit 1)
	grep -i "speedups.*fail\|fail.*speedups\|optional" $(NOCC)/install.log | head -3
	$(PY) -m pip --disable-pip-version-check -q --python $(NOCC)/venv/bin/python install --no-deps $(NOCC)/dist/bloomkit-*.whl
	cd $(NOCC) && venv/bin/python ../../tests/wheel_smoke.py dist/bloomkit-*.tar.gz dist/bloomkit-*.whl
	cd $(NOCC) && venv/bin/python -c 'import bloomkit, sys; p = bloomkit.info()["hash_path"]; print(p); \
		assert p.startswith("numba (not built"), p; assert bloomkit.__file__.startswith(sys.prefix), bloomkit.__file__'
	cd $(NOCC) && venv/bin/python -m pytest -q -p no:cacheprovider -c ../../pyproject.toml ../../tests/test_speedups.py

test-slow: $(VENV)/.installed-test
	$(PY) -m pytest -q -n 2 --dist loadfile -m slow

bench: $(VENV)/.installed-test
	$(PIP) install -c $(CONSTRAINTS) -e ".[bench]"
	$(PY) benchmarks/bench_bloom.py

# the matching service (issue 16) against a running server; N=1000000 for the issue's targets
N ?= 100000
bench-serve: $(VENV)/.installed-test
	$(PY) benchmarks/bench_serve.py --profiles $(N)

# try the service's page: Table 1 profiles in bloomkit-demo.sqlite, http://127.0.0.1:8000/
serve-demo: $(VENV)/.installed-test
	$(VENV)/bin/bloomkit serve --demo

lint: $(VENV)/.installed-test
	$(VENV)/bin/ruff check src tests benchmarks
	$(VENV)/bin/mypy src/bloomkit

# the newest release of every dependency (no constraints), in a separate environment
test-latest:
	$(PYTHON) -m venv .venv-latest
	.venv-latest/bin/python -m pip --disable-pip-version-check -q install -U pip
	.venv-latest/bin/python -m pip --disable-pip-version-check -q install -U -e ".[test]"
	.venv-latest/bin/python -m pytest -q -n 2 --dist loadfile

# rewrite the constraints from what the test + bench environment holds now
constraints: $(VENV)/.installed-test
	$(PIP) install -c $(CONSTRAINTS) -e ".[test,bench]"
	(head -2 $(CONSTRAINTS); $(PY) -m pip freeze --all --exclude-editable | grep -v -E '^(bloomkit|wheel)==') > $(CONSTRAINTS).new
	mv $(CONSTRAINTS).new $(CONSTRAINTS)

clean:
	rm -rf $(VENV) .venv-latest results benchmarks/results .pytest_cache .mypy_cache
