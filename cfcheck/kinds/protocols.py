"""The four method kinds' calling protocols, and detecting which a method implements.

A method is any object; its kind is read from the methods it defines (duck typing), so a
researcher never subclasses anything from cfcheck. ``cfcheck_kind = "vce"`` (or a tuple) on the
object overrides detection when two kinds share a method name (``explain``).

Every call may take an optional ``generator=`` keyword (a seeded ``torch.Generator``: cfcheck
passes one when the signature accepts it) and may return ``(output, valid)``, where ``valid``
is a bool N-vector that is False where the method abstained. The latent kind receives the
domain's decoder as ``generator`` (the papers' name for it), so its random-number generator is
passed as ``rng=`` instead.
"""

from __future__ import annotations

import enum
import inspect
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    import torch


class MethodKind(str, enum.Enum):
    VCE = "vce"
    SCM = "scm"
    LATENT = "latent"
    ATTRIBUTION = "attribution"

    @property
    def description(self) -> str:
        return _DESCRIPTIONS[self]


_DESCRIPTIONS = {
    MethodKind.VCE: "visual counterfactual explainer: explain(x, target, classifier) -> x_cf",
    MethodKind.SCM: "SCM counterfactual generator: counterfactual(x, parents, intervention) -> x_cf",
    MethodKind.LATENT: "latent explainer: explain(z, latent_classifier, generator) -> z_cf",
    MethodKind.ATTRIBUTION: "feature attribution: attribute(x, model, target) -> saliency",
}

_LATENT_PARAMETERS = {"z", "latent_classifier"}


@runtime_checkable
class VisualCounterfactualExplainer(Protocol):
    def explain(self, x: torch.Tensor, target: torch.Tensor, classifier: torch.nn.Module) -> Any: ...


@runtime_checkable
class SCMCounterfactualGenerator(Protocol):
    def counterfactual(self, x: torch.Tensor, parents: Any, intervention: Any) -> Any: ...


@runtime_checkable
class FeatureAttribution(Protocol):
    def attribute(self, x: torch.Tensor, model: torch.nn.Module, target: torch.Tensor) -> Any: ...


@runtime_checkable
class LatentExplainer(Protocol):
    def explain(self, z: torch.Tensor, latent_classifier: torch.nn.Module, generator: torch.nn.Module) -> Any: ...


#: the method each kind calls, and the keyword that carries cfcheck's seeded RNG
CALLS = {
    MethodKind.VCE: ("explain", "generator"),
    MethodKind.SCM: ("counterfactual", "generator"),
    MethodKind.ATTRIBUTION: ("attribute", "generator"),
    MethodKind.LATENT: ("explain", "rng"),
}


#: Views: a method of one kind seen as another, so that kind's suites can score it (opt-in with
#: ``--cfcheck-view``). (source, target) -> (the view class as "module:Class", what it computes).
VIEWS: dict[tuple[MethodKind, MethodKind], tuple[str, str]] = {
    (MethodKind.VCE, MethodKind.ATTRIBUTION): (
        "cfcheck.methods.attributions:CounterfactualDirection",
        "the counterfactual direction v = x − c towards the class the model ranks second",
    ),
}


def view_source(kinds: frozenset[MethodKind], target: MethodKind) -> MethodKind | None:
    """The kind among ``kinds`` that has a view as ``target`` (None if none has)."""
    return next((source for source in sorted(kinds) if (source, target) in VIEWS), None)


def view_as(method: object, target: MethodKind) -> object:
    """``method`` wrapped in its view as ``target`` (see :data:`VIEWS`).

    Raises:
        ValueError: when no kind ``method`` implements has a view as ``target``.
    """
    source = view_source(detect_kinds(method), target)
    if source is None:
        views = ", ".join(f"{a.value} -> {b.value}" for a, b in VIEWS) or "none"
        raise ValueError(f"{type(method).__name__} implements no kind with a view as {target.value} "
                         f"(views: {views})")
    module_name, _, class_name = VIEWS[source, target][0].partition(":")
    import importlib

    return getattr(importlib.import_module(module_name), class_name)(method)


def detect_kinds(method: object) -> frozenset[MethodKind]:
    """All kinds ``method`` implements (possibly none)."""
    declared = getattr(method, "cfcheck_kind", None)
    if declared is not None:
        values = (declared,) if isinstance(declared, (str, MethodKind)) else tuple(declared)
        try:
            return frozenset(MethodKind(v) for v in values)
        except ValueError:
            raise ValueError(
                f"cfcheck_kind={declared!r} on {type(method).__name__}; expected any of "
                f"{[k.value for k in MethodKind]}"
            ) from None
    kinds = set()
    explain = getattr(method, "explain", None)
    if callable(explain):
        kinds.add(MethodKind.LATENT if _parameter_names(explain) & _LATENT_PARAMETERS else MethodKind.VCE)
    if callable(getattr(method, "counterfactual", None)):
        kinds.add(MethodKind.SCM)
    if callable(getattr(method, "attribute", None)):
        kinds.add(MethodKind.ATTRIBUTION)
    return frozenset(kinds)


def accepts_generator(function: Any, keyword: str = "generator") -> bool:
    """Whether ``function`` takes the RNG keyword ``keyword`` (so cfcheck can seed it)."""
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.name == keyword or p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)


def names_parameter(function: Any, keyword: str) -> bool:
    """Whether ``function``'s signature names ``keyword`` itself (``**kwargs`` does not count)."""
    return keyword in _parameter_names(function)


def expected_interface() -> str:
    """The sentence every 'implements no kind' error ends with."""
    lines = "\n".join(f"  - {kind.description}" for kind in MethodKind)
    return f"a method object implementing one of:\n{lines}"


def _parameter_names(function: Any) -> set[str]:
    try:
        return set(inspect.signature(function).parameters)
    except (TypeError, ValueError):
        return set()
