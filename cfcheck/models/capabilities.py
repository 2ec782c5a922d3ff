"""What the model code reads of a domain, and what a domain may offer ``cfcheck retrain`` and the
model code, as typed protocols (the optional ones checked with ``isinstance``, never probed
attribute by attribute).

Model code (recipes, training, the transfer check, the zoo) takes the domain object, never its
name: it sits below the domains layer, so the caller that holds a name resolves it
(:func:`cfcheck.domains.get_domain`) and hands the object down.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable


class ModelDomain(Protocol):
    """What the model code reads of a domain: the part of the Domain protocol
    (:class:`cfcheck.domains.base.Domain`, which every domain implements) that lies below the
    domains layer."""

    name: str
    num_classes: int
    split_roles: Mapping[str, str]
    model_roles: Mapping[str, tuple[str, ...]]

    @property
    def model_store(self) -> Any:
        """The domain's models (a :class:`cfcheck.models.store.ModelStore` or ``ModuleStore``)."""

    def split(self, name: str, n: int | None = None) -> Any:
        """A split (``.images`` N×C×H×W in [0, 1], ``.labels`` int64 N, ``.factors``)."""


@runtime_checkable
class GenerativeRecipes(Protocol):
    """A domain with generative models trained by cfcheck's generative recipes."""

    def generative_recipes(self) -> dict[str, Any]: ...


@runtime_checkable
class ClassifierRecipes(Protocol):
    """A domain whose classifiers (explained, oracles, embedding) cfcheck's recipes train."""

    def model_recipes(self) -> Any: ...


def require_domain_object(domain: object, what: str) -> None:
    """TypeError where ``domain`` is a domain's name rather than the domain object.

    Args:
        domain: what the caller passed.
        what: the function or class that needs the object (for the message).
    """
    if isinstance(domain, str):
        raise TypeError(
            f"{what} takes the domain object, got the name {domain!r}: resolve it first with "
            f"cfcheck.domains.get_domain({domain!r})"
        )
