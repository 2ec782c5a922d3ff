"""Reference feature attributions: ``attribute(x, model, target) -> saliency`` shaped like ``x``.

The five methods Park et al. (2023, §5) compare, with the hyperparameters stated here because
the paper does not give them:

* :class:`Gradient`: ∂ logit_target / ∂x (Simonyan et al. 2014), signed;
* :class:`InputTimesGradient`: x ⊙ ∂ logit_target / ∂x (Shrikumar et al. 2016);
* :class:`SmoothGrad`: the mean gradient at ``samples`` = 20 points x + N(0, σ²), σ = 0.15 ×
  (max − min of the input), Smilkov et al. (2017)'s recommended 10–20 % noise level;
* :class:`IntegratedGradients`: (x − x') ⊙ the trapezoid-rule mean gradient on ``steps`` = 32
  intervals of the straight path from the all-zeros baseline x' (Sundararajan et al. 2017);
* :class:`RandomAttribution`: seeded standard normal noise, the lower bound.

Two controls degrade or replace a feature, as in Park et al.'s Fig. 3:

* :class:`NoisyAttribution` wraps any attribution a and returns a + r·‖a‖·ε/‖ε‖ per input (ε
  standard normal): noise whose norm is ``ratio`` times the feature's;
* :class:`TrueFeature` returns the ground-truth feature direction of a domain that knows it
  (μ_target − μ_other for a Gaussian mixture), which a perfect attribution would return.

:class:`CounterfactualDirection` turns any visual counterfactual explainer into an attribution:
v = x − c, with c its counterfactual towards the model's runner-up class (Park et al.: a
counterfactual's direction is a feature the removal benchmarks can score).

Every method works on a batch at once, takes inputs of any shape N×… (vectors or images), and
returns float32 maps on the input's device. None needs the input in [0, 1]. Each is an
:class:`~cfcheck.kinds.attribution.methods.contract.AttributionMethod` (those that draw random numbers a
:class:`~cfcheck.kinds.attribution.methods.contract.StochasticAttributionMethod`, whose call takes
``generator=``): the kind's preamble checks the inputs once for all of them.
"""

from __future__ import annotations

import inspect
from typing import Any

import torch
from torch import nn

from cfcheck.kinds.attribution.baseline import random_attribution
from cfcheck.kinds.attribution.capabilities import ClassFeature
from cfcheck.kinds.attribution.methods.contract import (
    AttributionMethod,
    StochasticAttributionMethod,
    validate_attribution_inputs,
)
from cfcheck.kinds.method_helpers import check_positive, input_gradient

__all__ = [
    "Gradient",
    "InputTimesGradient",
    "IntegratedGradients",
    "NoisyAttribution",
    "RandomAttribution",
    "SmoothGrad",
    "CounterfactualDirection",
    "TrueFeature",
    "validate_attribution_inputs",
]


def target_gradient(model: nn.Module, x: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """∂ logit_target / ∂x for every row (the rows do not interact: one backward pass)."""
    rows = torch.arange(x.shape[0], device=x.device)
    _, grad = input_gradient(model, x, lambda logits: logits[rows, target].sum())
    return grad


class Gradient(AttributionMethod):
    """The input gradient of the target logit."""

    def attributions(
        self, x: torch.Tensor, model: nn.Module, target: torch.Tensor, generator: torch.Generator
    ) -> torch.Tensor:
        return target_gradient(model, x, target)


class InputTimesGradient(AttributionMethod):
    """The input times its gradient."""

    def attributions(
        self, x: torch.Tensor, model: nn.Module, target: torch.Tensor, generator: torch.Generator
    ) -> torch.Tensor:
        return x * target_gradient(model, x, target)


class SmoothGrad(StochasticAttributionMethod):
    """The gradient averaged over Gaussian perturbations of the input.

    Args:
        samples: perturbed copies per input (default 20).
        noise_level: σ as a fraction of each input's value range (default 0.15).
    """

    def __init__(self, samples: int = 20, noise_level: float = 0.15) -> None:
        check_positive("samples", samples, integer=True)
        check_positive("noise_level", noise_level)
        self.samples, self.noise_level = samples, float(noise_level)

    def attributions(
        self, x: torch.Tensor, model: nn.Module, target: torch.Tensor, generator: torch.Generator
    ) -> torch.Tensor:
        flat = x.flatten(1)
        sigma = self.noise_level * (flat.amax(1) - flat.amin(1)).clamp_min(1e-12)
        sigma = sigma.view(-1, *([1] * (x.dim() - 1)))
        total = torch.zeros_like(x)
        for _ in range(self.samples):
            noise = torch.randn(x.shape, generator=generator, device=generator.device).to(x)
            total += target_gradient(model, x + sigma * noise, target)
        return total / self.samples


class IntegratedGradients(AttributionMethod):
    """Integrated gradients from the all-zeros baseline, trapezoid rule on ``steps`` intervals.

    Args:
        steps: intervals of the path (``steps + 1`` gradient evaluations; default 32).
    """

    def __init__(self, steps: int = 32) -> None:
        check_positive("steps", steps, integer=True)
        self.steps = steps

    def attributions(
        self, x: torch.Tensor, model: nn.Module, target: torch.Tensor, generator: torch.Generator
    ) -> torch.Tensor:
        total = torch.zeros_like(x)
        for k in range(self.steps + 1):
            weight = 0.5 if k in (0, self.steps) else 1.0
            total += weight * target_gradient(model, x * (k / self.steps), target)
        return x * total / self.steps


class RandomAttribution(StochasticAttributionMethod):
    """Standard normal noise shaped like the input, from the supplied generator: the attribution
    kind's removal baseline (:func:`cfcheck.kinds.attribution.baseline.random_attribution`)."""

    def attributions(
        self, x: torch.Tensor, model: nn.Module, target: torch.Tensor, generator: torch.Generator
    ) -> torch.Tensor:
        return random_attribution(x, generator)


class NoisyAttribution(StochasticAttributionMethod):
    """Another attribution plus noise of ``ratio`` times its norm (per input).

    Args:
        base: any object with ``attribute(x, model, target)``.
        ratio: ‖noise‖ / ‖feature‖ (≥ 0; 0 returns the base attribution).
    """

    def __init__(self, base: Any, ratio: float) -> None:
        if not callable(getattr(base, "attribute", None)):
            raise TypeError(
                f"Expected `base` to have an attribute(x, model, target) method, got {type(base).__name__}."
            )
        if isinstance(ratio, bool) or not isinstance(ratio, (int, float)) or not 0 <= ratio < float("inf"):
            raise ValueError(f"Expected `ratio` to be a finite number ≥ 0, but got {ratio!r}.")
        self.base, self.ratio = base, float(ratio)

    def attributions(
        self, x: torch.Tensor, model: nn.Module, target: torch.Tensor, generator: torch.Generator
    ) -> torch.Tensor:
        feature = self.base.attribute(x, model, target)
        noise = torch.randn(x.shape, generator=generator, device=generator.device).to(feature)
        scale = self.ratio * _norms(feature) / _norms(noise).clamp_min(1e-12)
        return feature + scale * noise


def _norms(v: torch.Tensor) -> torch.Tensor:
    return v.flatten(1).norm(dim=1).view(-1, *([1] * (v.dim() - 1)))


class TrueFeature(AttributionMethod):
    """The domain's ground-truth feature direction for each target class.

    Args:
        domain: a domain with ``class_feature(target) -> N×…`` (the direction that increases
            the target class's evidence; μ_target − μ_other for a Gaussian mixture).
    """

    def __init__(self, domain: Any) -> None:
        if not isinstance(domain, ClassFeature):
            raise ValueError(
                f"domain {getattr(domain, 'name', domain)!r} has no ground-truth feature direction "
                "(class_feature); TrueFeature needs one"
            )
        self.domain = domain

    def attributions(
        self, x: torch.Tensor, model: nn.Module, target: torch.Tensor, generator: torch.Generator
    ) -> torch.Tensor:
        return self.domain.class_feature(target.cpu()).to(x).reshape(x.shape)


class CounterfactualDirection(StochasticAttributionMethod):
    """x − c for a visual counterfactual explainer's c = ``explain(x, runner_up, model)``.

    The counterfactual's target is the class the model ranks second on x (the nearest decision
    boundary); the direction from c back to x is what makes x look like the explained class, so
    removing it (GOAR's x − s·v/‖v‖) moves x towards c. Abstentions are ignored: the explainer's
    returned image is used either way. Needs image inputs in [0, 1], as the explainer does.

    Args:
        explainer: an object with ``explain(x, target, classifier[, generator=])`` returning
            ``x_cf`` or ``(x_cf, valid)``.
    """

    def __init__(self, explainer: Any) -> None:
        if not callable(getattr(explainer, "explain", None)):
            raise TypeError(
                f"Expected a visual counterfactual explainer with explain(x, target, classifier), "
                f"got {type(explainer).__name__}."
            )
        self.explainer = explainer

    def attributions(
        self, x: torch.Tensor, model: nn.Module, target: torch.Tensor, generator: torch.Generator
    ) -> torch.Tensor:
        with torch.no_grad():
            logits = model(x)
        runner_up = logits.scatter(1, target[:, None], float("-inf")).argmax(1)
        kwargs = {"generator": generator} if "generator" in inspect.signature(self.explainer.explain).parameters else {}
        output = self.explainer.explain(x, runner_up, model, **kwargs)
        counterfactual = output[0] if isinstance(output, tuple) else output
        return (x - counterfactual).detach()
