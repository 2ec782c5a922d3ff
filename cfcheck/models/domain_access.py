"""How model code (recipes, training, transfer checks) reaches a domain without importing the
domains layer: :mod:`cfcheck.domains` registers its resolver here when it is imported, and the
model code asks :func:`domain_named`. Model code may also be handed the Domain object itself, and
reads it through :class:`ModelDomain`, the part of :class:`cfcheck.domains.base.Domain` it uses.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol


class ModelDomain(Protocol):
    """What the model code reads of a domain: the part of the Domain protocol
    (:class:`cfcheck.domains.base.Domain`, which every domain implements) that lies below the
    domains layer."""

    name: str
    split_roles: Mapping[str, str]
    model_roles: Mapping[str, tuple[str, ...]]

    @property
    def model_store(self) -> Any:
        """The domain's models (a :class:`cfcheck.models.store.ModelStore` or ``ModuleStore``)."""

    def split(self, name: str, n: int | None = None) -> Any:
        """A split (``.images`` N×C×H×W in [0, 1], ``.labels`` int64 N, ``.factors``)."""


_resolver: Callable[[str], Any] | None = None
_names: Callable[[], tuple[str, ...]] | None = None


def register_resolver(resolver: Callable[[str], Any], names: Callable[[], tuple[str, ...]]) -> None:
    """Install the function that turns a domain's name (or spec) into the domain object, and the one
    that lists the registered names."""
    global _resolver, _names
    _resolver, _names = resolver, names


def domain_named(domain: Any) -> Any:
    """The domain object of ``domain`` (a name or spec, resolved by the registered resolver; an
    object passes through).

    Raises:
        LookupError: for a name when no resolver is registered (``cfcheck.domains`` not imported).
    """
    if not isinstance(domain, str):
        return domain
    if _resolver is None:
        raise LookupError(f"cannot resolve domain {domain!r}: import cfcheck.domains first, or pass the Domain object")
    return _resolver(domain)


def registered_names() -> tuple[str, ...]:
    """Names of the registered domains (through the resolver's registry)."""
    if _names is None:
        raise LookupError("no domain resolver registered: import cfcheck.domains first")
    return _names()
