"""Bundled procedurally generated domains, looked up by name (see :mod:`cfcheck.domains.base`)."""

from __future__ import annotations

import importlib
from functools import lru_cache

from cfcheck.domains.base import Domain

#: name → "module:class"; imported lazily so unused domains cost nothing
_DOMAINS = {
    "morpho": "cfcheck.domains.morpho:MorphoDomain",
    "gmm": "cfcheck.domains.gmm:GMMDomain",
    "glyphs": "cfcheck.domains.glyphs:GlyphsDomain",
}


def available_domains() -> tuple[str, ...]:
    return tuple(_DOMAINS)


@lru_cache(maxsize=None)
def get_domain(name: str) -> Domain:
    """The domain called ``name`` (one instance per process)."""
    if name not in _DOMAINS:
        raise ValueError(f"unknown domain {name!r}; known domains: {', '.join(_DOMAINS)}")
    module, _, attribute = _DOMAINS[name].partition(":")
    return getattr(importlib.import_module(module), attribute)()


__all__ = ["Domain", "available_domains", "get_domain"]
