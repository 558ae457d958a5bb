# bloomkit: two commands do all set-up on a fresh machine with python3 and make.
#   make demo   creates .venv, installs, runs `bloomkit reproduce --quick` (report in results/)
#   make test   creates .venv, installs with test extras, runs ruff, mypy (strict, src/) and the whole test suite
PYTHON ?= python3
VENV   := .venv
CONSTRAINTS := constraints.txt
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip --disable-pip-version-check -q
GCIDE  := /usr/share/dictd/gcide.dict.dz

.PHONY: demo test test-slow test-latest constraints bench bench-serve lint data browser serve-demo clean

$(VENV)/.created:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -c $(CONSTRAINTS) --upgrade pip
	touch $@

$(VENV)/.installed-demo: $(VENV)/.created pyproject.toml $(CONSTRAINTS)
	$(PIP) install -c $(CONSTRAINTS) -e ".[experiments]"
	touch $@

$(VENV)/.installed-test: $(VENV)/.created pyproject.toml $(CONSTRAINTS)
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

test: $(VENV)/.installed-test browser
	$(VENV)/bin/ruff check -q src tests benchmarks
	$(VENV)/bin/mypy --no-error-summary src/bloomkit
	$(PY) -m pytest -q -n 2 --dist loadfile

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
	(head -2 $(CONSTRAINTS); $(PY) -m pip freeze --all --exclude-editable | grep -v -E '^(bloomkit|setuptools|wheel)==') > $(CONSTRAINTS).new
	mv $(CONSTRAINTS).new $(CONSTRAINTS)

clean:
	rm -rf $(VENV) .venv-latest results benchmarks/results .pytest_cache .mypy_cache
