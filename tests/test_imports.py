"""The import graph of bloomkit has no cycles (issue 21): every ``import`` of a bloomkit module
counts, at the top of a module or inside a function (a deferred import hides a cycle, it does
not remove it); only ``if TYPE_CHECKING:`` blocks are left out (never executed). An edge goes
to the module a statement names: ``from . import x`` to the submodule x when there is one,
``from .a import b`` to ``a`` (or to ``a.b`` when that is a module)."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"
PACKAGE = "bloomkit"


def _modules() -> dict[str, Path]:
    out = {}
    for p in sorted((SRC / PACKAGE).rglob("*.py")):
        parts = list(p.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = p
    return out


def _type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id in ("TYPE_CHECKING", "_TYPE_CHECKING")) or \
        (isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    out: list[ast.Import | ast.ImportFrom] = []
    stack = [tree]
    while stack:
        node = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _type_checking(child):
                stack.extend(child.orelse)
                continue
            if isinstance(child, ast.Import | ast.ImportFrom):
                out.append(child)
            stack.append(child)
    return out


def import_graph() -> dict[str, set[str]]:
    mods = _modules()
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for name, path in mods.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in _imports(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base_name = ".".join(base + ([node.module] if node.module else []))
                else:
                    base_name = node.module or ""
                targets = [f"{base_name}.{a.name}" if f"{base_name}.{a.name}" in mods else base_name
                           for a in node.names]
            for t in targets:
                while t and t not in mods and "." in t:
                    t = t.rpartition(".")[0]
                if t in mods and t != name:
                    graph[name].add(t)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_checker_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles():
    graph = import_graph()
    assert len(graph) > 100 and graph["bloomkit.bloom"]
    found = cycles(graph)
    assert not found, "import cycles (each a set of modules importing each other):\n" + "\n".join(
        " <-> ".join(c) for c in found)


MAX_LINES = 800


def test_no_module_is_over_800_lines():
    """Issue 21's architecture check: a module over 800 lines holds more than one concept
    (split it: a private module beside it, as ranges/_index_state.py or _engine/counters.py)."""
    sizes = {str(p.relative_to(SRC)): len(p.read_text().splitlines()) for p in (SRC / PACKAGE).rglob("*.py")}
    assert len(sizes) > 100
    over = {name: n for name, n in sizes.items() if n > MAX_LINES}
    assert over == {}, f"modules over {MAX_LINES} lines: {over}"


def test_the_search_modes_are_spelled_once():
    """ProfileIndex, the CLI, the service's API and its page take the modes from
    bloomkit._search_mode (the page: one radio button per mode, nothing else)."""
    import re

    from bloomkit._search_mode import SEARCH_MODES

    quoted = re.compile(r"""["'](subset|intersect)["']\s*,\s*["'](subset|intersect)["']""")
    spelled = [str(p.relative_to(SRC)) for p in sorted((SRC / PACKAGE).rglob("*.py"))
               if p.name != "_search_mode.py" and quoted.search(p.read_text())]
    assert spelled == [], f"modes spelled outside bloomkit._search_mode: {spelled}"
    page = (SRC / PACKAGE / "serve" / "static" / "index.html").read_text()
    assert tuple(re.findall(r'name="mode" id="mode-(\w+)" value="\1"', page)) == SEARCH_MODES
