"""What a domain must offer the SCM kind: a structural causal model over its factors, as a typed
protocol checked with ``isinstance`` (a domain without one never reaches the SCM suites).

``intervention_counterfactual`` is part of the protocol, but only a domain with the capability of that
name computes it; a user's domain of real images raises
:class:`~cfcheck.domains.base.MissingCapability` ("real data has no true counterfactual"), and the
suites that need it are skipped with that reason."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import torch


@runtime_checkable
class StructuralCausalModel(Protocol):
    """A domain with an SCM over ``factor_names`` (what the SCM kind intervenes on)."""

    def parents(self, split: str, index: torch.Tensor) -> dict[str, torch.Tensor]:
        """The observed factors of the split's images at ``index``, keyed by factor name."""

    def sample_intervention(
        self, factor: str, parents: dict[str, torch.Tensor], generator: torch.Generator
    ) -> torch.Tensor:
        """New values of ``factor``, each in another bin than the observed value."""

    def parent_bin(self, factor: str, values: torch.Tensor) -> torch.Tensor:
        """The bin (int64) of each value of ``factor``: a categorical factor's value itself, a continuous
        factor's intervention bin (the bins :meth:`sample_intervention` moves a value out of)."""

    def intervention_counterfactual(
        self, split: str, index: torch.Tensor, intervention: dict[str, torch.Tensor]
    ) -> torch.Tensor:
        """The true counterfactual images under ``intervention`` (capability
        ``intervention_counterfactual``)."""


@runtime_checkable
class CounterfactualParents(Protocol):
    """A domain that propagates an intervention through its SCM to every parent: a procedural domain
    by its known equations, a user's domain of attribute-labelled images by its attribute mechanisms
    (which need no true counterfactual image)."""

    def counterfactual_parents(
        self, split: str, index: torch.Tensor, intervention: dict[str, torch.Tensor]
    ) -> dict[str, torch.Tensor]:
        """Every parent after ``intervention``, propagated by the domain's SCM."""
