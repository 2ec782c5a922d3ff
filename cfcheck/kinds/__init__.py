"""Method kinds: what a method under test implements decides which suites apply to it.

Each kind lives in its own folder (``vce/``, ``scm/``, ``attribution/``, ``latent/``): its
``spec.py`` defines ``SPEC``, its :class:`cfcheck.kinds.base.KindSpec`, and its torch-free
``section.py`` its part of a run profile. The protocols and detection are in
:mod:`cfcheck.kinds.protocols`; importing this package does not import torch models.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from cfcheck.kinds.protocols import (
    CALLS,
    FeatureAttribution,
    LatentExplainer,
    VIEWS,
    MethodKind,
    SCMCounterfactualGenerator,
    VisualCounterfactualExplainer,
    accepts_generator,
    detect_kinds,
    expected_interface,
    view_as,
    view_source,
)

if TYPE_CHECKING:
    from cfcheck.kinds.base import KindSpec


def kind_spec(kind: MethodKind | str) -> KindSpec:
    """The engine part of ``kind`` (imported on first use)."""
    kind = MethodKind(kind)
    return importlib.import_module(f"cfcheck.kinds.{kind.value}.spec").SPEC


def section_defaults(kind: MethodKind | str) -> dict:
    """Profile name → the default profile section of ``kind`` (no torch import)."""
    kind = MethodKind(kind)
    return importlib.import_module(f"cfcheck.kinds.{kind.value}.section").SECTION_DEFAULTS


__all__ = [
    "CALLS",
    "FeatureAttribution",
    "LatentExplainer",
    "MethodKind",
    "SCMCounterfactualGenerator",
    "VIEWS",
    "VisualCounterfactualExplainer",
    "accepts_generator",
    "detect_kinds",
    "expected_interface",
    "kind_spec",
    "section_defaults",
    "view_as",
    "view_source",
]
