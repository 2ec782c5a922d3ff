"""Controls of the SCM suites: generators whose verdicts are known before the run.

* :class:`SCMIdentity` returns its input: perfect composition and no change at all, so it must
  fail effectiveness (the intervened parent stays as observed);
* :class:`SCMTruth` returns the domain's true counterfactual (abduction is exact: the input's
  exogenous noise is looked up; action and prediction by the domain's SCM): it must pass every
  SCM suite;
* :class:`SCMResample` renders a new image with the counterfactual parents and a fresh style:
  effective and realistic, but not a counterfactual of *this* input, so it must fail
  composition and the ground-truth error;
* :class:`SCMNoise` returns uniform noise: it must fail everything.

Each is an :class:`~cfcheck.kinds.scm.methods.contract.SCMGenerator` (the noise and the resampler a
:class:`~cfcheck.kinds.scm.methods.contract.StochasticSCMGenerator`: their call takes ``generator=``).
The truth finds each input in the domain's scored split by its pixels, as the VCE truth control
does (:class:`cfcheck.kinds.method_helpers.SplitLookup`); the resampler needs only the parents.
"""

from __future__ import annotations

from typing import Any

import torch

from cfcheck.kinds.method_helpers import SplitLookup, uniform_like
from cfcheck.kinds.scm.methods.contract import SCMGenerator, StochasticSCMGenerator

__all__ = ["SCMIdentity", "SCMNoise", "SCMResample", "SCMTruth"]


class SCMIdentity(SCMGenerator):
    """Returns a copy of the input, whatever the intervention."""

    def counterfactuals(
        self, x: torch.Tensor, parents: dict, intervention: dict, generator: torch.Generator
    ) -> torch.Tensor:
        return x.clone()


class SCMNoise(StochasticSCMGenerator):
    """Uniform noise images from the supplied generator."""

    def counterfactuals(
        self, x: torch.Tensor, parents: dict, intervention: dict, generator: torch.Generator
    ) -> torch.Tensor:
        return uniform_like(x, generator)


class _KnowsTheInputs:
    def __init__(self, domain: Any, split: str | None = None) -> None:
        from cfcheck.domains.base import INTERVENTION_COUNTERFACTUAL, require

        require(domain, INTERVENTION_COUNTERFACTUAL)
        self._domain = domain
        self._lookup = SplitLookup(domain, split if split is not None else domain.split_roles["scored"])

    def _intervention(self, intervention: dict) -> dict[str, torch.Tensor]:
        return {name: value.detach().cpu() for name, value in intervention.items()}


class SCMTruth(_KnowsTheInputs, SCMGenerator):
    """The domain's true counterfactual of each input under the intervention."""

    def counterfactuals(
        self, x: torch.Tensor, parents: dict, intervention: dict, generator: torch.Generator
    ) -> torch.Tensor:
        index = self._lookup.indices(x)
        cf = self._domain.intervention_counterfactual(self._lookup.split, index, self._intervention(intervention))
        return cf.to(device=x.device, dtype=x.dtype)


class SCMResample(StochasticSCMGenerator):
    """A new image with the counterfactual parents and a fresh style. The parents come from the
    observed ones by the domain's attribute mechanisms (abduction, action, prediction), as an SCM
    method would compute them; the image ignores the input."""

    def __init__(self, domain: Any) -> None:
        from cfcheck.domains.base import PARENT_RESAMPLING, require

        require(domain, PARENT_RESAMPLING)
        self._domain = domain

    def counterfactuals(
        self, x: torch.Tensor, parents: dict, intervention: dict, generator: torch.Generator
    ) -> torch.Tensor:
        observed = {name: value.detach().cpu() for name, value in parents.items()}
        action = {name: value.detach().cpu() for name, value in intervention.items()}
        new_parents = self._domain.propagate_parents(observed, action)
        # on the generator's device (the run's): the draw is made there
        seed = int(torch.randint(0, 2**31 - 1, (1,), generator=generator, device=generator.device))
        return self._domain.resample_with_parents(new_parents, seed).to(device=x.device, dtype=x.dtype)
