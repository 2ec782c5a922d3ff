"""Domains: the :class:`Domain` protocol and how a run finds them (:mod:`cfcheck.domains.registry`).

The bundled domains (morpho, gmm, glyphs) register through the ``cfcheck.domains`` entry-point
group like any installed package's; a user's domain is named by ``pkg.module:factory`` or a
file path, or built from their own data with :class:`cfcheck.domains.data.ImageDomain`.
"""

from __future__ import annotations

from cfcheck.domains.base import Domain
from cfcheck.domains.registry import DomainError, registered_domains, resolve_domain


def available_domains() -> tuple[str, ...]:
    """Names of the registered domains (entry points of installed packages), sorted."""
    return registered_domains()


def get_domain(spec: object) -> Domain:
    """The domain ``spec`` names: a registered name, ``pkg.module:factory``, a file path, or a
    domain object already resolved in this process (one instance per spec)."""
    return resolve_domain(spec)


__all__ = ["Domain", "DomainError", "available_domains", "get_domain"]
