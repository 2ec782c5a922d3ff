"""A run's resources: its domains, per-domain model zoos and memo (:class:`RunResources`), what the
session (:class:`cfcheck.session.CfcheckSession`) and the offline runs (e.g.
:class:`cfcheck.kinds.attribution.local_run.LocalRun`) share to be a :class:`cfcheck.kinds.base.Run`."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from typing import TYPE_CHECKING, TypeVar, cast

import torch

if TYPE_CHECKING:
    from cfcheck.domains.base import Domain
    from cfcheck.models.zoo import ModelZoo

T = TypeVar("T")  # what a memo holds


class RunResources:
    """A run's domains, per-domain model zoos and memo: what the session and offline runs
    (e.g. :mod:`cfcheck.kinds.attribution.local_run`) share. Needs ``device``, ``_zoos``
    and ``_memo`` set by the subclass."""

    device: torch.device
    _zoos: dict[str, ModelZoo]
    _memo: dict[tuple[Hashable, ...], object]

    #: the run's domains by name (resolved once, when the run starts; replaced, never mutated)
    _domains: Mapping[str, Domain] = {}

    def domain(self, name: str) -> Domain:
        """The run's domain called ``name`` (a registered domain outside the run's selection is
        resolved by name)."""
        found = self._domains.get(name)
        if found is not None:
            return found
        from cfcheck.domains import get_domain

        return get_domain(name)

    def domain_names(self) -> tuple[str, ...]:
        """Names of the run's domains (every registered one where the run selected none)."""
        if self._domains:
            return tuple(self._domains)
        from cfcheck.domains import available_domains

        return available_domains()

    def zoo(self, domain: Domain) -> ModelZoo:
        """The model zoo of ``domain`` (a domain object; built once per run and domain name)."""
        from cfcheck.models.zoo import ModelZoo

        if isinstance(domain, str):
            raise TypeError(f"zoo() takes the domain object, got the name {domain!r}: pass run.domain({domain!r})")
        if domain.name not in self._zoos:
            self._zoos[domain.name] = ModelZoo(domain, self.device)
        return self._zoos[domain.name]

    def memo(self, key: tuple[Hashable, ...], factory: Callable[[], T]) -> T:
        """The value stored under ``key``, made by ``factory`` on first use (once per run)."""
        if key not in self._memo:
            self._memo[key] = factory()
        return cast(T, self._memo[key])  # stored by the factory of the same key
