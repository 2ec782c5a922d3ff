"""Method kinds: what a method under test implements decides which suites apply to it.

A kind is a package registered in the ``cfcheck.kinds`` entry-point group
(:mod:`cfcheck.kinds.registry`; cfcheck's own kinds are registered the same way, in its
``pyproject.toml``). The entry point names the kind's torch-free
:class:`~cfcheck.kinds.declaration.KindDeclaration` (call, RNG keyword, detector, fixtures,
markers, controls), which names the rest: its :class:`cfcheck.kinds.base.KindSpec` (the engine
part), its profile section, its adapter template, its suites and adapters. The protocols and
detection are in :mod:`cfcheck.kinds.protocols`; importing this package does not import torch
models. Each kind's calling Protocol (e.g. ``cfcheck.kinds.LatentExplainer``) is importable from
here by its name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cfcheck.kinds.protocols import (
    MethodKind,
    accepts_generator,
    calls,
    detect_kinds,
    expected_interface,
    kind_views,
    view_as,
    view_source,
)

if TYPE_CHECKING:
    from cfcheck.kinds.base import KindSpec


def kind_spec(kind: MethodKind | str) -> KindSpec[Any, Any]:
    """The engine part of ``kind`` (imported on first use)."""
    spec: KindSpec[Any, Any] = MethodKind(kind).declaration.part("spec")
    return spec


def section_defaults(kind: MethodKind | str) -> dict[str, Any]:
    """Profile name → the default profile section of ``kind`` (no torch import)."""
    defaults: dict[str, Any] = MethodKind(kind).declaration.part("section")
    return defaults


def adapter_template(kind: MethodKind | str) -> str:
    """The adapter ``cfcheck new-adapter <kind>`` writes (a ``str.format`` template with ``{name}``)."""
    template: str = MethodKind(kind).declaration.part("template")
    return template


def _protocols() -> dict[str, type]:
    return {
        kind.declaration.protocol.__name__: kind.declaration.protocol
        for kind in MethodKind
        if kind.declaration.protocol is not None
    }


def __getattr__(name: str) -> Any:
    """A kind's calling Protocol by its class name (declared by the kind)."""
    found = _protocols().get(name) if not name.startswith("__") else None
    if found is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return found


def __dir__() -> list[str]:
    return sorted([*globals(), *_protocols()])


__all__ = [
    "MethodKind",
    "accepts_generator",
    "adapter_template",
    "calls",
    "detect_kinds",
    "expected_interface",
    "kind_spec",
    "kind_views",
    "section_defaults",
    "view_as",
    "view_source",
]
