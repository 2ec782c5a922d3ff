"""A kind declares itself: the registry reads the ``cfcheck.kinds`` entry points (cfcheck's own kinds
are registered there too), and everything the engine needs before and after loading torch (kind
list, calls, RNG keywords, detectors, fixtures, markers, controls; task and result types) comes
from the kind's declaration and the parts it names."""

from __future__ import annotations

import ast
import pickle
import re
from importlib.metadata import distributions
from pathlib import Path

import pytest
import tomllib

from cfcheck.kinds import MethodKind, kind_spec
from cfcheck.kinds.declaration import Control, Expectation, KindDeclaration, KindError, resolve
from cfcheck.kinds.registry import DECLARATIONS, ENTRY_POINT_GROUP, kind_fixtures

ROOT = Path(__file__).resolve().parents[2]
#: the fixtures cfcheck itself defines (plugin_fixtures) or parametrises for every kind
ENGINE_FIXTURES = {"cfcheck_task", "cfcheck_contract_kind", "cfcheck_domain_spec"}


#: the bundled kinds, in the order every listing shows them (their declarations' ``order``)
BUNDLED = ("vce", "scm", "latent", "attribution")
PARTS = dict(spec="pkg.spec:SPEC", section="pkg.section:SECTION", template="pkg.template:ADAPTER", suites="pkg.suites")


def test_the_bundled_kinds_are_entry_points_of_cfchecks_own_pyproject():
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"][ENTRY_POINT_GROUP]
    assert sorted(declared) == sorted(BUNDLED)
    installed = {  # every copy of the metadata on the path (a checkout may hold a stale egg-info too)
        point.name: point.value
        for distribution in distributions()
        for point in distribution.entry_points
        if point.group == ENTRY_POINT_GROUP and distribution.metadata["Name"] == "cfcheck"
    }
    assert {name: installed.get(name) for name in declared} == declared  # the installed metadata is current
    for name, value in declared.items():
        assert resolve(value) is DECLARATIONS[name]


def test_the_kind_list_is_the_registry_in_the_declared_order():
    assert [kind.value for kind in MethodKind] == list(DECLARATIONS) == list(BUNDLED)
    orders = [declaration.order for declaration in DECLARATIONS.values()]
    assert orders == sorted(orders) and len(set(orders)) == len(orders)
    for kind in MethodKind:
        assert MethodKind(kind.value) is kind and kind.declaration is DECLARATIONS[kind.value]
        assert pickle.loads(pickle.dumps(kind)) is kind
        assert kind == kind.value and isinstance(kind, str) and kind in MethodKind
        assert getattr(MethodKind, kind.value.upper()) is kind
    assert len(MethodKind) == len(BUNDLED) and "no_such_kind" not in MethodKind
    with pytest.raises(ValueError, match="not a registered method kind"):
        MethodKind("no_such_kind")
    with pytest.raises(AttributeError):
        MethodKind.NO_SUCH_KIND  # noqa: B018 - the lookup is the test


@pytest.mark.parametrize("name", BUNDLED)
def test_each_kind_declares_the_parts_its_spec_implements(name):
    declaration = DECLARATIONS[name]
    spec = kind_spec(name)
    assert type(spec).declaration is declaration and spec.kind is MethodKind(name)
    assert spec.call_and_rng == (declaration.call, declaration.rng_keyword)
    assert spec.output.call == declaration.call
    assert declaration.part("section") is type(spec).section_defaults
    assert "{name}" in declaration.part("template")
    assert declaration.suite_folder() == ROOT / "suites" / name
    assert isinstance(MethodKind(name).declaration.protocol, type)


def test_a_declaration_needs_a_lower_case_name_a_call_and_parts_named_as_module_references():
    with pytest.raises(ValueError, match="lower-case identifier"):
        KindDeclaration(name="My Kind", description="", call="explain", arguments=("x",), **PARTS)
    with pytest.raises(ValueError, match="call must name"):
        KindDeclaration(name="mine", description="", call="explain", arguments=(), **PARTS)
    with pytest.raises(TypeError, match="spec"):
        KindDeclaration(name="mine", description="", call="explain", arguments=("x",))
    with pytest.raises(KindError, match=r"suites is 'pkg.suites:X'; expected 'package.module'"):
        KindDeclaration(
            name="mine", description="", call="explain", arguments=("x",), **{**PARTS, "suites": "pkg.suites:X"}
        )
    with pytest.raises(KindError, match="template is 'a template'"):
        KindDeclaration(
            name="mine", description="", call="explain", arguments=("x",), **{**PARTS, "template": "a template"}
        )
    with pytest.raises(KindError, match=r"controls \['truth'\] must be Control rows"):
        KindDeclaration(
            name="mine", description="", call="explain", arguments=("x",), controls={"truth": "+validity"}, **PARTS
        )


def test_the_one_resolver_names_what_it_cannot_reach():
    assert resolve("cfcheck.kinds.declaration:KindDeclaration.part") is KindDeclaration.part
    assert resolve("cfcheck.kinds.registry").ENTRY_POINT_GROUP == ENTRY_POINT_GROUP
    with pytest.raises(
        KindError, match=r"kind 'mine' \(spec\) names 'no_such_module:SPEC', whose module cannot be imported"
    ):
        resolve("no_such_module:SPEC", "kind 'mine' (spec)")
    with pytest.raises(KindError, match="cfcheck.kinds.registry has no attribute 'NOPE'"):
        resolve("cfcheck.kinds.registry:NOPE")
    with pytest.raises(KindError, match="declares no methods"):
        DECLARATIONS["vce"].part("methods")


def test_control_rows_are_typed_and_print_as_the_tables_did():
    row = Control.expecting(validity=Expectation.PASS, closeness=Expectation.FAIL)
    assert row.describe() == "+validity \N{MINUS SIGN}closeness" and row.is_control
    assert row.on("validity") is Expectation.PASS and row.on("realism") is None
    assert Expectation.FAIL == "-" and str(Expectation.FAIL) == "-" and Expectation.FAIL.symbol == "\N{MINUS SIGN}"
    baseline = Control(note="(baseline)")
    assert baseline.describe() == "(baseline)" and not baseline.is_control
    with pytest.raises(KindError, match="Expectation values"):
        Control(expects={"validity": "+"})
    with pytest.raises(KindError, match="needs expectations, or a note"):
        Control()


def _suite_fixture_names(folder: Path) -> set[str]:
    """The ``cfcheck_*`` arguments of the test functions in a suites folder."""
    names: set[str] = set()
    for path in folder.glob("test_*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                names |= {a.arg for a in node.args.args if a.arg.startswith("cfcheck_")}
    return names


@pytest.mark.parametrize("name", BUNDLED)
def test_every_fixture_a_kinds_suites_ask_for_is_defined_or_declared(name):
    from cfcheck import plugin_fixtures

    defined = {n for n in dir(plugin_fixtures) if n.startswith("cfcheck_")}
    asked = _suite_fixture_names(DECLARATIONS[name].suite_folder())
    undeclared = asked - defined - ENGINE_FIXTURES - set(DECLARATIONS[name].fixtures)
    assert not undeclared, f"declare them in the kind's declaration (fixtures=...): {undeclared}"
    assert set(kind_fixtures()) >= set(DECLARATIONS[name].fixtures)


def test_the_generic_engine_names_no_kind():
    """The modules every kind goes through name none (a fifth kind is a package with an entry point)."""
    kinds = "|".join(BUNDLED)
    named = re.compile(rf"""MethodKind\.[A-Z]|["']({kinds})["']""")
    generic = [
        "cfcheck/plugin.py",
        "cfcheck/plugin_fixtures.py",
        "cfcheck/plugin_reporting.py",
        "cfcheck/session.py",
        "cfcheck/session_outputs.py",
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
