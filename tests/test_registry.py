"""The one structure registry (bloomkit._registry, issue 21): every list of structures is derived
from it, a structure registered without its pieces fails here, and every constructor refuses a
bad value of each parameter its ``_PARAMS`` declares with InvalidParameterError naming it."""

from __future__ import annotations

import inspect
import math
from pathlib import Path

import pytest
from conformance.examples import EXAMPLES

import bloomkit
from bloomkit import _registry
from bloomkit._format import FORMAT_VERSION, Persistable, registered_structures
from bloomkit._validation import Bool, Constraint, Int, ListOf, Optional, Options, Real, Str
from bloomkit.errors import InvalidParameterError

GOLDEN = Path(__file__).parent / "golden" / f"v{FORMAT_VERSION}"
STRUCTURES = registered_structures()


def registry_problems(entries: tuple[_registry.Entry, ...]) -> list[str]:
    """What is missing for each entry: its class (carrying its tag), its conformance example,
    its golden file, its CLI builder, its Dask and shard lists, its public name."""
    from bloomkit import dask
    from bloomkit._commands import kinds
    from bloomkit._mapped import MAPPABLE
    from bloomkit.dask import sharded

    problems = []
    for e in entries:
        try:
            cls = _registry.load_class(e)
        except (ImportError, AttributeError) as exc:
            problems.append(f"{e.tag}: class {e.module}.{e.name} not found ({exc})")
            cls = None
        if cls is not None and getattr(cls, "_STRUCTURE", None) != e.tag:
            problems.append(f"{e.tag}: {e.name} does not carry its tag (not a Persistable?)")
        if e.family not in _registry.FAMILIES:
            problems.append(f"{e.tag}: unknown family {e.family!r}")
        if not e.capabilities <= set(_registry.CAPABILITIES):
            problems.append(f"{e.tag}: unknown capabilities {sorted(e.capabilities - set(_registry.CAPABILITIES))}")
        if e.tag not in EXAMPLES:
            problems.append(f"{e.tag}: no example in tests/conformance/examples.py")
        if not (GOLDEN / f"{e.tag}.bkf").exists():
            problems.append(f"{e.tag}: no golden file {GOLDEN.name}/{e.tag}.bkf")
        if e.cli is not None:
            try:
                if e.cli not in kinds((e,)):
                    problems.append(f"{e.tag}: missing from the CLI's --kind list")
            except LookupError as exc:
                problems.append(f"{e.tag}: {exc}")
        if "dask" in e.capabilities and (e.cli not in dask.KINDS or not hasattr(cls, "for_requirements")):
            problems.append(f"{e.tag}: missing from bloomkit.dask.KINDS")
        if "shard" in e.capabilities and sharded.KINDS.get(e.cli or "") != e.tag:
            problems.append(f"{e.tag}: missing from bloomkit.dask.sharded.KINDS")
        if "mapped" in e.capabilities and e.tag not in MAPPABLE:
            problems.append(f"{e.tag}: missing from bloomkit._mapped.MAPPABLE")
        if "top-level" in e.capabilities and (e.name not in bloomkit.__all__ or getattr(bloomkit, e.name) is not cls):
            problems.append(f"{e.tag}: not the public name bloomkit.{e.name}")
    return problems


def test_the_registry_is_complete_and_every_list_is_derived_from_it():
    assert registry_problems(_registry.ENTRIES) == []
    assert list(STRUCTURES) == [e.tag for e in _registry.ENTRIES]
    assert len({e.cli for e in _registry.ENTRIES if e.cli}) == sum(1 for e in _registry.ENTRIES if e.cli)


def test_every_persistable_class_with_a_tag_is_registered():
    def walk(cls: type) -> list[type]:
        return [cls, *(c for sub in cls.__subclasses__() for c in walk(sub))]

    tagged = {c for c in walk(Persistable) if c._STRUCTURE and c.__dict__.get("_STRUCTURE")}
    assert {c._STRUCTURE for c in tagged} == set(STRUCTURES)
    assert all(STRUCTURES[c._STRUCTURE] is c for c in tagged)
    with pytest.raises(TypeError, match="declared in bloomkit._registry only"):
        type("Rogue", (Persistable,), {"_STRUCTURE": "rogue.Rogue"})


def test_a_structure_registered_without_its_pieces_fails():
    """A new entry that has no class, no example, no golden file, no CLI builder for its
    family: each missing piece is named (the check above would fail)."""
    fake = _registry.Entry("bloom.NewFilter", "bloomkit.bloom", "NewFilter", "membership", "new",
                           capabilities=frozenset({"dask", "mapped"}))
    problems = registry_problems((fake,))
    for piece in ("class bloomkit.bloom.NewFilter not found", "no example", "no golden file",
                  "bloomkit.dask.KINDS", "MAPPABLE"):
        assert any(piece in p for p in problems), (piece, problems)
    odd = fake._replace(family="telepathy", name="BloomFilter", capabilities=frozenset({"flying"}))
    problems = registry_problems((odd,))
    assert any("no builder for the family 'telepathy'" in p for p in problems), problems
    assert any("unknown capabilities ['flying']" in p for p in problems), problems
    assert any("does not carry its tag" in p for p in problems), problems


# ---------------------------------------------------------------------------------------------
# every _PARAMS constraint, violated through the constructor


def _invalid(c: Constraint, name: str) -> list[object]:
    """Values ``c`` refuses: a wrong type, and the neighbours of its bounds."""
    if isinstance(c, Optional):
        return [v for v in _invalid(c.inner, name) if v is not None]
    if isinstance(c, Int):  # (2.5 hashes are rounded, as DESIGN.md's convention 2 says)
        return ["7", *([] if name == "num_hashes" else [2.5]), *([c.lo - 1] if c.lo is not None else []), *([c.hi + 1] if c.hi is not None else [])]
    if isinstance(c, Real):
        return ["0.5", math.nan, *([c.lo - 1] if c.lo is not None else []), *([c.hi + 1] if c.hi is not None else [])]
    if isinstance(c, Options):
        return ["no-such-option", object()]
    if isinstance(c, Bool):
        return ["yes", 2]
    if isinstance(c, Str):
        return [7]
    if isinstance(c, ListOf):
        return [7, "not a list"]
    return [object()]  # Check and the structures' own constraints: no value of any type they take


def _constructor_cases() -> list[tuple[str, str, object]]:
    cases = []
    for tag, cls in STRUCTURES.items():
        sig = inspect.signature(cls)
        for name, c in (cls._PARAMS or {}).items():
            if name in sig.parameters:
                cases += [(tag, name, v) for v in _invalid(c, name)]
    return cases


CASES = _constructor_cases()


def _valid_arguments(tag: str) -> dict[str, object]:
    """The example's own values of the constructor's required parameters and of its declared
    ones that the example has a value of: arguments that build the example's structure."""
    cls, obj = STRUCTURES[tag], EXAMPLES[tag].make()
    kw: dict[str, object] = {}
    for name, p in inspect.signature(cls).parameters.items():
        if p.default is p.empty:
            kw[name] = getattr(obj, name)
        elif name in (cls._PARAMS or {}) and getattr(obj, name, None) is not None:
            kw[name] = getattr(obj, name)
    return kw


def test_every_declared_parameter_is_covered():
    for tag in STRUCTURES:
        if any(t == tag for t, _, _ in CASES):
            STRUCTURES[tag](**_valid_arguments(tag))._check()  # the base arguments are valid
    assert len(CASES) > 60
    assert {t for t, _, _ in CASES} >= {e.tag for e in _registry.ENTRIES if e.family == "membership"
                                        and "static" not in e.capabilities}  # static: built by build()


@pytest.mark.parametrize(("tag", "name", "bad"), CASES, ids=[f"{t}-{n}-{v!r:.20}" for t, n, v in CASES])
def test_constructor_refuses_an_invalid_parameter_naming_it(tag, name, bad):
    cls = STRUCTURES[tag]
    kw = {**_valid_arguments(tag), name: bad}
    with pytest.raises(InvalidParameterError) as err:
        cls(**kw)
    assert f"'{name}'" in str(err.value), str(err.value)
