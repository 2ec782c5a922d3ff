"""The house keeps its floors: cfcheck's top-level groups (``cfcheck/<group>/`` or
``cfcheck/<group>.py``) import one another one way only, from a higher floor to a lower one, and
nothing outside a kind's folder picks behaviour by that kind's name.

Every ``import`` of every ``cfcheck/**/*.py`` counts, a function's (lazy) import and one under
``TYPE_CHECKING`` too: an import made later is still a tie. Dynamic imports count as well
(:func:`dynamic_imports`): ``importlib.import_module`` (or ``find_spec``, ``__import__``) of a
literal or f-string name, a ``"package.module:attribute"`` reference in a string (what a kind's
declaration names and :func:`cfcheck.kinds.declaration.resolve` imports), and the entry points
``pyproject.toml`` declares, as imports by the module that reads their group. The module circle
check leaves out the plugin references (declared references and entry points): a registry that
finds its plugins, whose modules import the registry's engine, is an inversion, not a circle."""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from functools import cache
from pathlib import Path

import tomllib

import cfcheck

PACKAGE = Path(cfcheck.__file__).resolve().parent
PYPROJECT = PACKAGE.parent / "pyproject.toml"

#: The floors, lowest first: a group may import its own floor's groups and those of the floors
#: below, never one above. A new group takes its place here.
FLOORS: tuple[tuple[str, ...], ...] = (
    ("core", "hookspecs", "__init__"),  # the leaf parts; the package's face holds its version only
    ("metrics",),  # pure metric functions and their cards
    ("models",),  # reference models by role
    ("domains",),  # the Domain protocol, the registry and the bundled domains
    ("calibration",),  # calibration's files: bars, the controls' values, a control's run
    ("kinds",),  # the method kinds: engine, per-kind folders (contracts, capabilities, reference methods)
    ("controls", "profiles", "adapter", "results"),  # what gathers the kinds: control tables, profiles,
    # --method; scorecards as data (a score's direction is its card's, a kind's own card included)
    ("reporting", "options"),  # scorecards, views, comparison, the cards' evidence; every option
    ("baseline",),  # regression gating
    ("session_outputs",),  # the session's outputs: generation per task, example grids, the scorecard
    ("session", "cli"),  # the session; the `cfcheck` command (`cfcheck calibrate` too: runs controls)
    ("scoring",),
    ("faults",),
    ("plugin_fixtures", "plugin_reporting"),  # the plugin's fixtures; its reporting hooks' work
    ("plugin_collection",),  # the plugin's collection work: suite markers, unusable domains' skips
    ("plugin",),
)
#: Two-way ties allowed while being undone (none: add one only with the change that removes it);
#: each must still exist, so that the allowance goes when the tie does.
PENDING_TIES: set[frozenset[str]] = set()
#: Groups that must import none of these (the design's rule: models, metrics and core never import
#: the kinds (their reference methods with them), the reporting, the controls, the command (whose
#: `cfcheck calibrate` runs them) or a domain's folder).
FOUNDATIONS = ("core", "metrics", "models")
ABOVE_FOUNDATIONS = ("kinds", "reporting", "controls", "cli")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _exists(module: str) -> bool:
    base = PACKAGE.parent.joinpath(*module.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


#: a string naming a cfcheck module, or an attribute of one ("pkg.mod:attr"), as a reference does
REFERENCE = re.compile(r"^(cfcheck(?:\.\w+)+)(?::[\w.]+)?$")
#: the calls that import a module named by their first argument
IMPORTERS = {"import_module", "find_spec", "__import__"}


def _referenced_module(text: str) -> str | None:
    """The cfcheck module a reference string names (``pkg.mod:attr``, or ``pkg.mod`` where that is a
    module), or None. A dotted path to a function (a metric card's ``computed_by``) is documentation,
    resolved by whoever shows it, and is not a reference."""
    match = REFERENCE.match(text)
    if match is None or (":" not in text and not _exists(match.group(1))):
        return None
    return match.group(1)


def _called_name(node: ast.Call) -> str:
    return node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")


def _literal_prefix(node: ast.JoinedStr) -> str:
    """The module an f-string import names at least: its literal head up to the last whole name
    (``f"cfcheck.kinds.{k}.spec"`` → ``cfcheck.kinds``)."""
    head = ""
    for part in node.values:
        if not isinstance(part, ast.Constant):
            break
        head += str(part.value)
    return head.rpartition(".")[0] if not head.endswith(".") else head.rstrip(".")


@cache
def dynamic_imports() -> tuple[tuple[Path, int, str, str], ...]:
    """(file, line, imported module, how) of every dynamic import of a cfcheck module: ``how`` is
    "import_module" (a call with a literal name), "f-string" (a call with an f-string name: its
    literal head counts), "reference" (a ``pkg.mod[:attr]`` string) or "entry point"."""
    found: list[tuple[Path, int, str, str]] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and _called_name(node) in IMPORTERS and node.args:
                name = node.args[0]
                if isinstance(name, ast.Constant) and isinstance(name.value, str):
                    found.append((path, node.lineno, name.value, "import_module"))
                elif isinstance(name, ast.JoinedStr):
                    found.append((path, node.lineno, _literal_prefix(name), "f-string"))
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                module = _referenced_module(node.value)
                if module is not None:
                    found.append((path, node.lineno, module, "reference"))
    readers = {
        node.value.value: path
        for path in sorted(PACKAGE.rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "ENTRY_POINT_GROUP" for t in node.targets)
        and isinstance(node.value, ast.Constant)
    }
    groups = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"].get("entry-points", {})
    for group_name, points in groups.items():
        reader = readers.get(group_name)  # pytest's own groups are read by pytest, not by cfcheck
        found += [(reader, 0, value.partition(":")[0], "entry point") for value in points.values() if reader]
    return tuple((path, line, module, how) for path, line, module, how in found if module.split(".")[0] == "cfcheck")


@cache
def imports() -> tuple[tuple[Path, int, str], ...]:
    """(file, line, imported module) of every import of a cfcheck module by a cfcheck module, the
    dynamic ones (:func:`dynamic_imports`) too; ``from pkg import name`` imports ``pkg.name`` where
    that is a module, else ``pkg``."""
    return (*static_imports(), *((path, line, target) for path, line, target, _ in dynamic_imports()))


@cache
def static_imports() -> tuple[tuple[Path, int, str], ...]:
    """(file, line, imported module) of every ``import`` statement of a cfcheck module by a cfcheck module."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module_name(path)
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    base = ".".join(anchor + ([node.module] if node.module else []))
                targets = [f"{base}.{a.name}" if _exists(f"{base}.{a.name}") else base for a in node.names]
            else:
                continue
            found += [(path, node.lineno, t) for t in dict.fromkeys(targets) if t.split(".")[0] == "cfcheck"]
    return tuple(found)


def group(module: str) -> str:
    """The top-level group of a cfcheck module: ``cfcheck.kinds.vce.spec`` → ``kinds``; the package
    itself → ``__init__``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def group_ties() -> dict[tuple[str, str], list[str]]:
    """(importing group, imported group) → "file:line module" of each such import."""
    ties: dict[tuple[str, str], list[str]] = defaultdict(list)
    for path, line, target in imports():
        if _exists(target) or target == "cfcheck":  # a mapped package (cfcheck.fixtures) is no group here
            importer, imported = group(_module_name(path)), group(target)
            if importer != imported:
                ties[importer, imported].append(f"{path.relative_to(PACKAGE.parent)}:{line} {target}")
    return ties


def test_every_group_stands_on_a_floor():
    groups = {
        path.stem if path.suffix == ".py" else path.name
        for path in PACKAGE.iterdir()
        if (path.suffix == ".py" and path.stem != "__init__") or (path / "__init__.py").is_file()
    }
    placed = {name for floor in FLOORS for name in floor}
    assert groups - placed == set(), "place each new group on a floor of FLOORS"
    assert placed - groups - {"__init__"} == set(), "a group of FLOORS no longer exists"


def test_no_two_groups_import_each_other():
    ties = group_ties()
    both = {frozenset(pair) for pair in ties if (pair[1], pair[0]) in ties}
    found = {
        " <-> ".join(sorted(pair)): [*ties[tuple(sorted(pair))], *ties[tuple(sorted(pair, reverse=True))]]
        for pair in both - PENDING_TIES
    }
    assert found == {}
    assert both >= PENDING_TIES, "a pending tie is undone: take it out of PENDING_TIES"


def test_imports_run_down_the_floors_only():
    floor = {name: level for level, names in enumerate(FLOORS) for name in names}
    upward = {
        f"{importer} (floor {floor.get(importer)}) -> {imported} (floor {floor.get(imported)})": where
        for (importer, imported), where in group_ties().items()
        if frozenset({importer, imported}) not in PENDING_TIES
        and floor.get(importer, len(FLOORS)) < floor.get(imported, len(FLOORS))
    }
    assert upward == {}


def test_the_foundations_import_no_kind_method_reporting_runner_or_domain_folder():
    folders = {
        f"cfcheck.domains.{path.name}" for path in (PACKAGE / "domains").iterdir() if (path / "__init__.py").is_file()
    }
    found = [
        f"{path.relative_to(PACKAGE.parent)}:{line} {target}"
        for path, line, target in imports()
        if group(_module_name(path)) in FOUNDATIONS
        and (
            group(target) in ABOVE_FOUNDATIONS
            or any(target == folder or target.startswith(f"{folder}.") for folder in folders)
        )
    ]
    assert found == []


def _kind_names() -> tuple[str, ...]:
    return tuple(path.name for path in (PACKAGE / "kinds").iterdir() if (path / "declaration.py").is_file())


def _selections(tree: ast.AST, kinds: tuple[str, ...]) -> list[tuple[int, str]]:
    """(line, how) where the code selects by a kind's name: ``x["vce"]``, ``== "scm"`` / ``in``,
    ``.get("latent")``, a dict key, a parameter's default."""

    def named(node: ast.AST | None) -> bool:
        return isinstance(node, ast.Constant) and node.value in kinds

    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and named(node.slice):
            found.append((node.lineno, f"[{node.slice.value!r}]"))  # type: ignore[attr-defined]
        elif isinstance(node, ast.Compare):
            found += [(node.lineno, "a comparison") for side in [node.left, *node.comparators] if named(side)]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
            if node.func.attr in ("get", "pop", "setdefault") and named(node.args[0]):
                found.append((node.lineno, f".{node.func.attr}({node.args[0].value!r})"))  # type: ignore[attr-defined]
        elif isinstance(node, ast.Dict):
            found += [(node.lineno, f"the key {key.value!r}") for key in node.keys if named(key)]  # type: ignore[union-attr]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            defaults = [*node.args.defaults, *node.args.kw_defaults]
            found += [(node.lineno, f"the default {d.value!r}") for d in defaults if named(d)]  # type: ignore[union-attr]
    return sorted(found)


def test_nothing_outside_a_kinds_folder_selects_by_its_name():
    kinds = _kind_names()
    assert kinds, "no kind folder found"
    own = {PACKAGE / "kinds" / kind for kind in kinds}
    found = {
        f"{path.relative_to(PACKAGE.parent)}:{line}": how
        for path in sorted(PACKAGE.rglob("*.py"))
        if not own & set(path.parents)
        for line, how in _selections(ast.parse(path.read_text(encoding="utf-8")), kinds)
    }
    assert found == {}


def test_the_kind_check_finds_what_it_looks_for():
    code = 'tables["vce"]\nif kind == "scm": pass\nx = d.get("latent")\ny = {"attribution": 1}\ndef f(k="vce"): pass\n'
    assert [how for _, how in _selections(ast.parse(code), ("vce", "scm", "latent", "attribution"))] == [
        "['vce']",
        "a comparison",
        ".get('latent')",
        "the key 'attribution'",
        "the default 'vce'",
    ]


def module_circles() -> list[list[str]]:
    """The import circles between cfcheck's modules (every import counts, lazy and TYPE_CHECKING
    ones too, and dynamic imports by name; not the plugin references, see the module docstring; a
    package's ``__init__`` only hands names on and is left out, as farm-studio does): the strongly
    connected components of more than one module, by Tarjan's algorithm."""
    edges: dict[str, set[str]] = defaultdict(set)
    named = [
        (path, line, target) for path, line, target, how in dynamic_imports() if how in ("import_module", "f-string")
    ]
    for path, _, target in (*static_imports(), *named):
        importer = _module_name(path)
        if path.name == "__init__.py" or not _exists(target) or (PACKAGE.parent / Path(*target.split("."))).is_dir():
            continue
        if importer != target:
            edges[importer].add(target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(edges.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return circles


def test_no_two_modules_import_each_other_in_a_circle():
    assert module_circles() == []


def test_the_circle_finder_finds_a_circle():
    """The finder itself, on a circle made by hand: a module importing its importer is found."""
    planted = (PACKAGE / "models" / "zoo.py", 1, "cfcheck.models.randomised_copies")
    back = (PACKAGE / "models" / "randomised_copies.py", 1, "cfcheck.models.zoo")
    original = static_imports
    try:
        globals()["static_imports"] = lambda: (*original(), planted, back)
        assert ["cfcheck.models.randomised_copies", "cfcheck.models.zoo"] in module_circles()
    finally:
        globals()["static_imports"] = original


def test_dynamic_imports_are_counted():
    """The references a kind's declaration resolves and the entry points are ties like any import."""
    found = {(_module_name(path), target, how) for path, _, target, how in dynamic_imports()}
    assert ("cfcheck.kinds.vce.declaration", "cfcheck.kinds.vce.spec", "reference") in found
    assert ("cfcheck.kinds.registry", "cfcheck.kinds.scm.declaration", "entry point") in found
    assert ("cfcheck.domains.registry", "cfcheck.domains.gmm", "entry point") in found
    # the finder reads an import_module call and an f-string one
    code = 'import importlib\nimportlib.import_module("cfcheck.metrics.cards")\nimportlib.import_module(f"cfcheck.kinds.{k}.spec")\n'
    calls = [(_called_name(n), n.args[0]) for n in ast.walk(ast.parse(code)) if isinstance(n, ast.Call) and n.args]
    assert [(name, arg.value if isinstance(arg, ast.Constant) else _literal_prefix(arg)) for name, arg in calls] == [
        ("import_module", "cfcheck.metrics.cards"),
        ("import_module", "cfcheck.kinds"),
    ]


def test_no_module_imports_a_cfcheck_module_by_an_f_string_name():
    """A module chosen by a name built at run time hides what it imports: kinds and domains are
    reached through their registries and the references they declare instead."""
    found = [
        f"{path.relative_to(PACKAGE.parent)}:{line} {target}"
        for path, line, target, how in dynamic_imports()
        if how == "f-string"
    ]
    assert found == []
