"""The plugin's collection work: the per-suite markers, the skipped test of an unusable domain in every
suite, and which pairs of the domain parametrisation a run keeps (the hooks in :mod:`cfcheck.plugin`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cfcheck.plugin_fixtures import DOMAIN_FIXTURE

__all__ = ["UnusableDomain", "WithUnusableDomains", "domain_matches_task", "suite_markers"]


def suite_markers() -> dict[str, str]:
    """Marker name → help: one per bundled suite, named as its scores' ``suite`` (``suites/**/test_<name>.py``),
    saying which kinds' suites it marks (``contract`` and ``domains`` are every kind's)."""
    import cfcheck.suites

    root = Path(cfcheck.suites.__file__).parent
    kinds: dict[str, list[str]] = {}
    for path in sorted(root.rglob("test_*.py")):
        folder = path.parent.relative_to(root).as_posix()
        kinds.setdefault(path.stem.removeprefix("test_"), []).append("every kind" if folder == "." else folder)
    return {name: f"cfcheck's {name} suite ({', '.join(where)})" for name, where in sorted(kinds.items())}


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
