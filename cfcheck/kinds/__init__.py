"""Method kinds: what a method under test implements decides which suites apply to it.

Each kind lives in its own folder (listed in :mod:`cfcheck.kinds.registry`): its torch-free
``declaration.py`` declares the kind (call, RNG keyword, detector, fixtures, markers, controls),
its ``spec.py`` defines ``SPEC``, its :class:`cfcheck.kinds.base.KindSpec`, and its torch-free
``section.py`` its part of a run profile. The protocols and detection are in
:mod:`cfcheck.kinds.protocols`; importing this package does not import torch models. Each kind's
calling Protocol (e.g. ``cfcheck.kinds.LatentExplainer``) is importable from here by its name.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from cfcheck.kinds.protocols import (
    CALLS,
    VIEWS,
    MethodKind,
    accepts_generator,
    detect_kinds,
    expected_interface,
    view_as,
    view_source,
)

if TYPE_CHECKING:
    from cfcheck.kinds.base import KindSpec


def kind_spec(kind: MethodKind | str) -> KindSpec[Any, Any]:
    """The engine part of ``kind`` (imported on first use)."""
    kind = MethodKind(kind)
    spec: KindSpec[Any, Any] = importlib.import_module(f"cfcheck.kinds.{kind.value}.spec").SPEC
    return spec


def section_defaults(kind: MethodKind | str) -> dict[str, Any]:
    """Profile name → the default profile section of ``kind`` (no torch import)."""
    kind = MethodKind(kind)
    defaults: dict[str, Any] = importlib.import_module(f"cfcheck.kinds.{kind.value}.section").SECTION_DEFAULTS
    return defaults


def _protocols() -> dict[str, type]:
    return {
        kind.declaration.protocol.__name__: kind.declaration.protocol
        for kind in MethodKind
        if kind.declaration.protocol is not None
    }


def __getattr__(name: str) -> Any:
    """A kind's calling Protocol by its class name (declared in the kind's folder)."""
    found = _protocols().get(name)
    if found is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return found


__all__ = [
    "CALLS",
    "MethodKind",
    "VIEWS",
    "accepts_generator",
    "detect_kinds",
    "expected_interface",
    "kind_spec",
    "section_defaults",
    "view_as",
    "view_source",
    *_protocols(),
]
