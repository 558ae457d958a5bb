"""Docs are tests: every code block of README.md and docs/*.md runs as written.

Each fenced block says what it is by its language:

* ``python`` runs in an empty temporary folder (it makes its own input). A block holding
  ``if __name__ == "__main__":`` runs as a script in a child process (it starts worker
  processes, which import the script again); the others run in this process.
* ``sh`` runs with bash (``-e -u -o pipefail``) in an empty temporary folder, with the
  installed ``bloomkit`` command (and this environment's ``python``) first on PATH.
* ``json`` is data (a schema file, a body): it must parse.
* ``text`` is not a command: a usage synopsis, printed output, an error message, a byte
  layout. Skipped on purpose.

A ``python`` or ``sh`` block may be left out only with an HTML comment on the line before it,
``<!-- docs-test: not run (why) -->``, and only for commands the suite cannot run as part of
itself: ``make ...`` (make test is this suite), ``pip install ...`` (needs an index; the wheel
smoke test of ``make test`` installs the package), and the long-running ``bloomkit reproduce`` /
``bloomkit serve`` (tests/test_report.py, tests/test_serve*.py run them). Any other language,
or a bare fence, fails :func:`test_every_block_says_what_it_is`.

The module doctests of ``src/bloomkit`` run here too (:func:`test_module_doctests`).
"""

from __future__ import annotations

import doctest
import importlib
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

import bloomkit

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
RUN = ("python", "sh")
KINDS = (*RUN, "json", "text")
NOT_RUN = re.compile(r"<!--\s*docs-test:\s*not run\s*\((?P<why>[^)]+)\)\s*-->\s*$")
# what a not-run block may hold (the rule in the module docstring)
NOT_RUN_COMMANDS = re.compile(r"(make |pip install |bloomkit reproduce\b|bloomkit serve\b)")
FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>```+|~~~+)(?P<info>.*)$")


@dataclass(frozen=True)
class Block:
    page: Path
    line: int  # 1-based line of the opening fence
    lang: str
    code: str
    not_run: str | None  # the reason, when marked

    @property
    def id(self) -> str:
        return f"{self.page.name}:{self.line}"

    @property
    def runs(self) -> bool:
        return self.lang in RUN and self.not_run is None


def parse(page: Path) -> list[Block]:
    """Every fenced block of a markdown page (CommonMark fences, not nested)."""
    lines = page.read_text(encoding="utf-8").splitlines()
    blocks, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, start = m["fence"], i
        j = i + 1
        while j < len(lines) and not re.match(rf"^ {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}\s*$", lines[j]):
            j += 1
        assert j < len(lines), f"{page.name}:{start + 1}: unclosed code block"
        marker = NOT_RUN.search(lines[start - 1]) if start else None
        blocks.append(Block(page, start + 1, m["info"].strip().split(" ")[0] if m["info"].strip() else "",
                            "\n".join(lines[start + 1:j]) + "\n", marker["why"] if marker else None))
        i = j + 1
    return blocks


BLOCKS = [b for page in PAGES for b in parse(page)]
RUNNABLE = [b for b in BLOCKS if b.runs]


def test_every_block_says_what_it_is():
    """Each block is one of the kinds above, and each python / sh block is run unless marked."""
    assert len(PAGES) > 10
    fences = sum(1 for page in PAGES for ln in page.read_text(encoding="utf-8").splitlines() if FENCE.match(ln))
    assert fences == 2 * len(BLOCKS) and len(BLOCKS) > 25  # the parser saw every block
    unknown = [f"{b.id} ({b.lang or 'no language'})" for b in BLOCKS if b.lang not in KINDS]
    assert not unknown, f"fence language not one of {KINDS}: {unknown}"
    for b in BLOCKS:
        if b.not_run is not None:
            assert b.lang in RUN, f"{b.id}: only python / sh blocks can be marked not run"
            cmds = [ln for ln in b.code.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
            bad = [ln for ln in cmds if not NOT_RUN_COMMANDS.match(ln.strip())]
            assert not bad, f"{b.id}: a not-run block may hold only make / pip install / reproduce / serve: {bad}"
    # every runnable block is a test case below (and the README's examples are among them)
    assert {b.id for b in RUNNABLE} == {b.id for b in BLOCKS if b.lang in RUN and b.not_run is None}
    readme = "\n".join(b.code for b in RUNNABLE if b.page.name == "README.md" and b.lang == "python")
    for name in ("BloomFilter", "CountingBloomFilter", "RangeBloomFilter", "GeometricFilter",
                 "BloomierFilter", "MLBF", "FoldableBloomFilter", "ParallelBloomFilter"):
        assert name in readme


@pytest.mark.parametrize("block", [b for b in BLOCKS if b.lang == "json"], ids=lambda b: b.id)
def test_json_block_parses(block):
    json.loads(block.code)


def _env() -> dict[str, str]:
    bin_dir = str(Path(sys.executable).parent)
    return {**os.environ, "PATH": bin_dir + os.pathsep + os.environ.get("PATH", ""), "PYTHONWARNINGS": "default"}


@pytest.mark.parametrize("block", RUNNABLE, ids=lambda b: b.id)
def test_block_runs(block, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    where = f"{block.page.relative_to(ROOT)}:{block.line}"
    if block.lang == "sh":
        proc = subprocess.run(["bash", "-e", "-u", "-o", "pipefail", "-c", block.code], cwd=tmp_path,
                              env=_env(), capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, f"{where} failed (exit {proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    elif 'if __name__ == "__main__":' in block.code:
        script = tmp_path / "example.py"
        script.write_text(block.code, encoding="utf-8")
        proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=_env(), capture_output=True,
                              text=True, timeout=300)
        assert proc.returncode == 0, f"{where} failed (exit {proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    else:
        # line numbers of tracebacks point into the page
        code = compile("\n" * block.line + block.code, str(block.page), "exec")
        exec(code, {"__name__": "__main__"})


def test_blocks_that_start_processes_run_as_scripts():
    """A block that starts worker processes needs the ``__main__`` guard (spawned workers import
    the script again), and then runs as a script above."""
    for b in RUNNABLE:
        if b.lang == "python" and re.search(r"LocalCluster\(|multiprocessing|ProcessPool", b.code):
            assert 'if __name__ == "__main__":' in b.code, f"{b.id} starts processes without the __main__ guard"


# -- doctests of every module ------------------------------------------------------------------

def _modules() -> list[str]:
    """Every module of the installed package, found by its files (nothing imported to list them)."""
    pkg = Path(bloomkit.__file__).parent
    names = []
    for path in sorted(pkg.rglob("*.py")):
        parts = path.relative_to(pkg.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if parts[-1] != "__main__":
            names.append(".".join(parts))
    return names


MODULES = _modules()


@pytest.mark.parametrize("module", MODULES)
def test_module_doctests(module):
    """Every docstring example of every module runs (src/ as a whole, not a hand-kept list)."""
    mod = importlib.import_module(module)
    res = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert res.failed == 0, f"{res.failed} of {res.attempted} examples of {module} failed (output above)"


def test_doctests_are_found():
    """The finder sees the examples (a module whose docstrings moved elsewhere would pass above)."""
    finder = doctest.DocTestFinder()
    count = {m: sum(len(t.examples) for t in finder.find(importlib.import_module(m))) for m in MODULES}
    assert sum(count.values()) > 200
    for m in ("bloomkit.lookup.params", "bloomkit.multiattr.model", "bloomkit.folding.numbers",
              "bloomkit.folding.planner", "bloomkit.theory"):
        assert count[m] >= 5, (m, count[m])


# -- API names in the pages ---------------------------------------------------------------------

# where the pages' bare class and function names are looked up (first definition wins)
API_PACKAGES = ("bloomkit", "bloomkit.lookup", "bloomkit.static", "bloomkit.similarity", "bloomkit.multiattr",
                "bloomkit.ranges", "bloomkit.folding", "bloomkit.splitblock", "bloomkit.parquet", "bloomkit.theory")
DOTTED = re.compile(r"`(bloomkit(?:\.\w+)+)")
ATTRIBUTE = re.compile(r"`(?:bloomkit\.)?([A-Z]\w+)\.([a-z_]\w*)")
CALL = re.compile(r"`([A-Z]\w+)\(([^`()]*)\)")


def _public_api() -> dict[str, object]:
    import inspect

    names: dict[str, object] = {}
    for package in API_PACKAGES:
        mod = importlib.import_module(package)
        for name in getattr(mod, "__all__", dir(mod)):
            obj = getattr(mod, name, None)
            if inspect.isclass(obj) or inspect.isfunction(obj):
                names.setdefault(name, obj)
    return names


def _resolve(dotted: str) -> bool:
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


def api_drift(text: str, api: dict[str, object]) -> list[str]:
    """The API names of a page that the code does not have: ``bloomkit.a.b`` paths,
    ``Class.attribute`` of a bloomkit class, keyword names in ``Class(a, b=...)`` signatures."""
    import inspect

    out = [m.group(1) for m in DOTTED.finditer(text) if not _resolve(m.group(1))]
    for m in ATTRIBUTE.finditer(text):
        cls = api.get(m.group(1))
        if inspect.isclass(cls) and not hasattr(cls, m.group(2)):
            out.append(f"{m.group(1)}.{m.group(2)}")
    for m in CALL.finditer(text):
        cls = api.get(m.group(1))
        if cls is None:
            continue
        params = inspect.signature(cls).parameters  # type: ignore[arg-type]
        if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
            continue
        for arg in m.group(2).split(","):
            name = arg.split("=")[0].strip()
            if re.fullmatch(r"[a-z_]\w*", name) and name not in params:
                out.append(f"{m.group(1)}({name}=)")
    return out


def test_api_names_in_the_pages_exist():
    """The pages' API tables and prose repeat names and signatures by hand: every
    ``bloomkit.x.y`` path resolves, every ``Class.attr`` exists, every parameter named in a
    ``Class(...)`` signature is one of its parameters (issue 21: nothing else checks the drift)."""
    api = _public_api()
    assert len(api) > 100 and "BloomFilter" in api
    drift = {page.name: found for page in PAGES if (found := api_drift(page.read_text(), api))}
    assert drift == {}, f"names in the docs the code does not have: {drift}"


def test_the_drift_check_finds_drift():
    api = _public_api()
    assert api_drift("`bloomkit.lookup.NoSuchThing` and `bloomkit.theory.double_hashing_fpr`", api) == \
        ["bloomkit.lookup.NoSuchThing"]
    assert api_drift("`BloomFilter.add_many`, `BloomFilter.add_lots`", api) == ["BloomFilter.add_lots"]
    assert api_drift("`BloomFilter(capacity, fpr=0.01)`, `BloomFilter(size, fpr)`", api) == ["BloomFilter(size=)"]


def test_the_readme_lists_every_cli_kind():
    """The README's sentence of CLI kinds names every kind the registry gives the CLI, in its order."""
    from bloomkit._commands import KINDS

    text = (ROOT / "README.md").read_text()
    sentence = text[text.index("Kinds: "):].split(" from a table")[0]
    assert re.findall(r"`([a-z-]+)`", sentence) == list(KINDS)


def test_the_readme_links_every_docs_page():
    """Every page of docs/ is reachable from the README's Documentation section."""
    text = (ROOT / "README.md").read_text()
    section = text[text.index("## Documentation"):].split("\n## ", 1)[0]
    linked = set(re.findall(r"\(docs/([\w-]+\.md)\)", section))
    assert linked == {p.name for p in (ROOT / "docs").glob("*.md")}
