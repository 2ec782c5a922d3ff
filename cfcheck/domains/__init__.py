"""Bundled procedurally generated domains, looked up by name."""

from __future__ import annotations

_KNOWN_DOMAINS = ("morpho",)


def get_domain(name: str):
    """The domain facade called ``name`` (imported lazily so unused domains cost nothing)."""
    if name == "morpho":
        from .morpho import MorphoDomain

        return MorphoDomain()
    raise ValueError(f"unknown domain {name!r}; known domains: {', '.join(_KNOWN_DOMAINS)}")


__all__ = ["get_domain"]
