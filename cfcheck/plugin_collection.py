"""The plugin's collection work: the suite folders a run collects (cfcheck's own and each kind's), the
per-suite markers, the skipped test of an unusable domain in every suite, and which pairs of the domain
parametrisation a run keeps (the hooks in :mod:`cfcheck.plugin`)."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import pytest

from cfcheck.kinds.registry import DECLARATIONS
from cfcheck.plugin_fixtures import DOMAIN_FIXTURE

__all__ = [
    "UnusableDomain",
    "WithUnusableDomains",
    "domain_matches_task",
    "suite_marker",
    "suite_markers",
    "suite_roots",
]


@cache
def suite_roots() -> tuple[Path, ...]:
    """The folders a run collects: cfcheck's own suites (every kind's, such as the contract, and the
    bundled kinds' ``suites/<kind>/`` inside it) and each registered kind's suites folder that lies
    outside them (a kind from another package ships its suites in its own package)."""
    import cfcheck.suites

    roots = [Path(cfcheck.suites.__file__).resolve().parent]
    for declaration in DECLARATIONS.values():
        folder = declaration.suite_folder()
        if not any(folder.is_relative_to(root) for root in roots):
            roots.append(folder)
    return tuple(roots)


def _suite_files() -> list[tuple[Path, str]]:
    """(file, whose) of every suite file, ``whose`` the kind folder it lies in ("every kind" at the
    top of cfcheck's own suites, the kind's name in a kind's own folder)."""
    own, *others = suite_roots()
    found = [
        (path, "every kind" if path.parent == own else path.parent.relative_to(own).as_posix())
        for path in sorted(own.rglob("test_*.py"))
    ]
    kinds = {declaration.suite_folder(): name for name, declaration in DECLARATIONS.items()}
    return found + [(path, kinds.get(root, root.name)) for root in others for path in sorted(root.rglob("test_*.py"))]


def suite_markers() -> dict[str, str]:
    """Marker name → help: one per suite of cfcheck's and the kinds' suite folders, named as its scores'
    ``suite`` (``test_<name>.py``), saying which kinds' suites it marks (``contract`` and ``domains`` are
    every kind's)."""
    kinds: dict[str, list[str]] = {}
    for path, whose in _suite_files():
        kinds.setdefault(path.stem.removeprefix("test_"), []).append(whose)
    return {name: f"cfcheck's {name} suite ({', '.join(where)})" for name, where in sorted(kinds.items())}


def suite_marker(path: Path) -> str | None:
    """The suite marker of a test file in one of :func:`suite_roots` (None for any other file)."""
    if not path.stem.startswith("test_") or not any(path.is_relative_to(root) for root in suite_roots()):
        return None
    return path.stem.removeprefix("test_")


class UnusableDomain(str):
    """The ``cfcheck_task`` parameter of a suite's skipped test for a domain that fails its load check:
    the domain's name."""


class WithUnusableDomains:
    """``metafunc`` for a kind's parametrisation, adding to the task parameters one skipped parameter per
    domain that fails its load check, so each of its suites says, in one line, why it did not run."""

    def __init__(self, metafunc: pytest.Metafunc, unusable: dict[str, str]) -> None:
        self._metafunc, self._unusable = metafunc, unusable

    def __getattr__(self, name: str) -> Any:
        return getattr(self._metafunc, name)

    def parametrize(self, argnames: Any, argvalues: Any, **kwargs: Any) -> None:
        names = [n.strip() for n in argnames.split(",")] if isinstance(argnames, str) else list(argnames)
        values = list(argvalues)
        if "cfcheck_task" in names:
            values += [
                pytest.param(
                    *(UnusableDomain(name) if arg == "cfcheck_task" else None for arg in names),
                    id=f"{name}-unusable",
                    marks=pytest.mark.skip(reason=f"domain {name!r} cannot be used: see test_domain_loads[{name}]"),
                )
                for name in self._unusable
            ]
        self._metafunc.parametrize(argnames, values, **kwargs)


def domain_matches_task(item: pytest.Item) -> bool:
    """False for the pairs of the domain parametrisation that give a task another domain's method, and
    for all but the first copy of an unusable domain's skipped test."""
    callspec = getattr(item, "callspec", None)
    if callspec is None or DOMAIN_FIXTURE not in callspec.params:
        return True
    params = callspec.params
    task = params.get("cfcheck_task")
    if isinstance(task, UnusableDomain):
        return bool(callspec.indices.get(DOMAIN_FIXTURE, 0) == 0)
    task_domain = getattr(task, "domain_name", None)  # None, or pytest's NOTSET of an empty parameter set
    return task_domain is None or bool(params[DOMAIN_FIXTURE].name == task_domain)
