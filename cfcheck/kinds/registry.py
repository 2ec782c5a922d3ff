"""The registered method kinds: one line per kind, naming its folder under ``cfcheck/kinds/``.

A kind's folder holds ``declaration.py`` (``DECLARATION``: name, call, RNG keyword, detector,
fixtures, markers, controls; torch-free), ``spec.py`` (``SPEC``: its
:class:`cfcheck.kinds.base.KindSpec`) and ``section.py`` (its profile section); its suites live in
``suites/<kind>/``. Adding a kind is a new folder, its suites and one line in :data:`KIND_FOLDERS`;
the order here is the order runs list kinds in.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping

from cfcheck.kinds.declaration import KindDeclaration

KIND_FOLDERS: tuple[str, ...] = (
    "vce",
    "scm",
    "latent",
    "attribution",
)


def _declarations() -> dict[str, KindDeclaration]:
    found: dict[str, KindDeclaration] = {}
    for folder in KIND_FOLDERS:
        declaration = importlib.import_module(f"cfcheck.kinds.{folder}.declaration").DECLARATION
        if not isinstance(declaration, KindDeclaration) or declaration.name != folder:
            raise TypeError(
                f"cfcheck/kinds/{folder}/declaration.py must define DECLARATION, a KindDeclaration "
                f"named {folder!r}; got {declaration!r}"
            )
        found[folder] = declaration
    return found


#: kind name → its declaration, in :data:`KIND_FOLDERS` order
DECLARATIONS: Mapping[str, KindDeclaration] = _declarations()


def kind_fixtures() -> tuple[str, ...]:
    """The fixtures the kinds' ``parametrize`` give their suites besides ``cfcheck_task``."""
    return tuple(dict.fromkeys(name for declaration in DECLARATIONS.values() for name in declaration.fixtures))


def kind_markers() -> dict[str, str]:
    """Marker signature → help, of every kind's own markers."""
    return {signature: text for declaration in DECLARATIONS.values() for signature, text in declaration.markers.items()}


def task_sets() -> tuple[str, ...]:
    """Every value ``cfcheck_tasks(which)`` takes in some kind's suites, first-declared first."""
    return tuple(dict.fromkeys(which for declaration in DECLARATIONS.values() for which in declaration.task_sets))
