"""A kind declares itself in its own folder: the registry lists folders, and everything the engine
needs before and after loading torch (kind list, calls, RNG keywords, detectors, fixtures,
markers, controls; task and result types) comes from the kind's declaration and spec."""

from __future__ import annotations

import ast
import importlib
import pickle
import re
from pathlib import Path

import pytest

from cfcheck.kinds import MethodKind, kind_spec
from cfcheck.kinds.declaration import KindDeclaration
from cfcheck.kinds.registry import DECLARATIONS, KIND_FOLDERS, kind_fixtures

ROOT = Path(__file__).resolve().parents[2]
#: the fixtures cfcheck itself defines (plugin_fixtures) or parametrises for every kind
ENGINE_FIXTURES = {"cfcheck_task", "cfcheck_contract_kind", "cfcheck_domain_spec"}


def test_the_kind_list_is_the_registry_in_its_order():
    assert [kind.value for kind in MethodKind] == list(KIND_FOLDERS) == list(DECLARATIONS)
    for kind in MethodKind:
        assert MethodKind(kind.value) is kind and kind.declaration is DECLARATIONS[kind.value]
        assert pickle.loads(pickle.dumps(kind)) is kind
    with pytest.raises(ValueError):
        MethodKind("no_such_kind")


@pytest.mark.parametrize("name", KIND_FOLDERS)
def test_each_kind_folder_declares_the_kind_its_spec_implements(name):
    declaration = importlib.import_module(f"cfcheck.kinds.{name}.declaration").DECLARATION
    spec = kind_spec(name)
    assert type(spec).declaration is declaration and spec.kind is MethodKind(name)
    assert spec.call_and_rng == (declaration.call, declaration.rng_keyword)
    assert spec.output.call == declaration.call
    assert importlib.import_module(f"cfcheck.kinds.{name}.section").SECTION_DEFAULTS
    assert isinstance(MethodKind(name).declaration.protocol, type)


def test_a_declaration_needs_a_folder_name_and_a_call():
    with pytest.raises(ValueError, match="lower-case identifier"):
        KindDeclaration(name="My Kind", description="", call="explain", arguments=("x",))
    with pytest.raises(ValueError, match="call must name"):
        KindDeclaration(name="mine", description="", call="explain", arguments=())


def _suite_fixture_names(folder: Path) -> set[str]:
    """The ``cfcheck_*`` arguments of the test functions in a suites folder."""
    names: set[str] = set()
    for path in folder.glob("test_*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                names |= {a.arg for a in node.args.args if a.arg.startswith("cfcheck_")}
    return names


@pytest.mark.parametrize("name", KIND_FOLDERS)
def test_every_fixture_a_kinds_suites_ask_for_is_defined_or_declared(name):
    from cfcheck import plugin_fixtures

    defined = {n for n in dir(plugin_fixtures) if n.startswith("cfcheck_")}
    asked = _suite_fixture_names(ROOT / "suites" / name)
    undeclared = asked - defined - ENGINE_FIXTURES - set(DECLARATIONS[name].fixtures)
    assert not undeclared, f"declare them in cfcheck/kinds/{name}/declaration.py (fixtures=...): {undeclared}"
    assert set(kind_fixtures()) >= set(DECLARATIONS[name].fixtures)


def test_the_generic_engine_names_no_kind():
    """The modules every kind goes through name none (a fifth kind is its folder plus a registry line)."""
    kinds = "|".join(KIND_FOLDERS)
    named = re.compile(rf"""MethodKind\.[A-Z]|["']({kinds})["']""")
    generic = [
        "cfcheck/plugin.py",
        "cfcheck/plugin_fixtures.py",
        "cfcheck/plugin_reporting.py",
        "cfcheck/session.py",
        "cfcheck/kinds/base.py",
        "cfcheck/kinds/contract.py",
        "cfcheck/kinds/__init__.py",
        "suites/test_contract.py",
    ]
    hits = [
        f"{path}:{number}: {line.strip()}"
        for path in generic
        for number, line in enumerate((ROOT / path).read_text().splitlines(), 1)
        if named.search(line)
    ]
    assert not hits, "\n".join(hits)
