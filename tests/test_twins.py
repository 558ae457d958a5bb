"""Every C path of ``_speedups.c`` names its numba (or Python) twins and the tests that keep the
two equal, and every twin names its C section back (issue 21: the C file stays one file, as the
brief asks, so the pairs are tied by name instead of by place). Reads the sources only: no
import, no JIT."""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
C_FILE = ROOT / "src" / "bloomkit" / "_speedups.c"
RULE = "/* " + "-" * 90 + " */"


def sections() -> dict[str, str]:
    """Section title (up to its first ':') -> the text of its header comment box."""
    out = {}
    lines = C_FILE.read_text().splitlines()
    for i, line in enumerate(lines):
        if line != RULE or not lines[i + 1].startswith("/* ") or not lines[i + 1][3:].strip(" */"):
            continue
        box = []
        for row in lines[i + 1:]:
            if not (row.startswith("/*") and row.endswith("*/")):
                break
            box.append(row[2:-2].strip())
        out[box[0].split(":")[0].strip()] = " ".join(b for b in box[1:] if b)
    return out


@cache
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), str(path))


def _find(tree: ast.AST, dotted: str) -> ast.AST | None:
    node: ast.AST | None = tree
    for part in dotted.split("."):
        body = getattr(node, "body", [])
        node = next((n for n in body if isinstance(n, ast.FunctionDef | ast.ClassDef) and n.name == part), None)
        if node is None:
            return None
    return node


def twins(text: str) -> list[tuple[str, str]]:
    """(module, function) pairs of a header's "Twins" part; ``:name`` continues the last module."""
    part = text.split("Twins", 1)[1].split("Tests:", 1)[0]
    out, module = [], None
    for m in re.finditer(r"(bloomkit(?:\.\w+)+):\s*([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)|(?<![\w:]):([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)", part):
        module = m.group(1) or module
        out.append((module, m.group(2) or m.group(3)))
    return out


def named_tests(text: str) -> list[tuple[str, str]]:
    part = text.split("Tests:", 1)[1]
    out, file = [], None
    for m in re.finditer(r"(tests/\w+\.py)::\s*(\w+)|(?<![\w:])::(\w+)", part):
        file = m.group(1) or file
        out.append((file, m.group(2) or m.group(3)))
    return out


def test_every_c_section_names_its_twins_and_their_tests() -> None:
    found = sections()
    assert {"XXH64, SplitMix64, exact reduction", "FilterCore", "ItemCore", "PointTest"} <= set(found)
    for title, text in found.items():
        assert "Twins" in text and "Tests:" in text, f"section {title!r} of _speedups.c names no twins / tests"
        pairs, tests = twins(text), named_tests(text)
        assert pairs and tests, title
        for file, name in tests:
            assert _find(_tree(ROOT / file), name) is not None, f"{title}: no test {file}::{name}"
        for module, name in pairs:
            path = ROOT / "src" / Path(*module.split("."))
            path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
            node = _find(_tree(path), name)
            assert node is not None, f"{title}: no {module}:{name}"
            doc = ast.get_docstring(node) or ""
            assert "_speedups.c" in doc and f'section "{title}"' in doc, \
                f'{module}:{name} does not name its C twin (section "{title}" of _speedups.c) in its docstring'


def test_the_parser_reads_continuations() -> None:
    text = "Twins: bloomkit.a.b:f, :g; bloomkit.c: K.m. Tests: tests/t.py::one, ::two; tests/u.py:: three."
    assert twins(text) == [("bloomkit.a.b", "f"), ("bloomkit.a.b", "g"), ("bloomkit.c", "K.m")]
    assert named_tests(text) == [("tests/t.py", "one"), ("tests/t.py", "two"), ("tests/u.py", "three")]
