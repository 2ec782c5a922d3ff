"""Negative controls of the latent kind: what an explainer must beat on Bex et al.'s scores.

* :class:`LatentIdentity` returns the input K times: nothing flips (EF = SCE = S# = 0).
* :class:`LatentNoise` returns K draws z + σ·N(0, I) on every coordinate (σ = 0.5): random
  perturbations, which mostly leave the proximity radii or flip nothing in particular.
* :class:`LatentRepeater` games the diversity measures the way Bex et al. describe (§1): one
  perturbation of the most sensitive coordinate, large enough to flip the classifier (1.5 times
  the first step of a doubling search that flips it), repeated
  K times with small random changes to every other coordinate (σ = a quarter of that move, so
  the move stays the perturbations' main direction). DiCE-style diversity
  rewards it; S# must not (its K perturbations point the same way: at most one is kept).

``explain(z, latent_classifier, generator, *, rng=None) -> z_cf`` (N×K×D) for each, on the kind's
preamble (:class:`cfcheck.kinds.latent.methods.contract.LatentSpaceExplainer`).
"""

from __future__ import annotations

import torch
from torch import nn

from cfcheck.kinds.latent.methods.contract import LatentSpaceExplainer
from cfcheck.kinds.latent.methods.search import two_class_logits
from cfcheck.kinds.method_helpers import check_positive

__all__ = ["LatentIdentity", "LatentNoise", "LatentRepeater"]


class LatentIdentity(LatentSpaceExplainer):
    """The input, K times."""

    def __init__(self, k: int = 10) -> None:
        check_positive("k", k, integer=True)
        self.k = int(k)

    def counterfactuals(
        self, z: torch.Tensor, latent_classifier: nn.Module, generator: nn.Module, rng: torch.Generator
    ) -> torch.Tensor:
        return z.detach()[:, None, :].repeat(1, self.k, 1)


class LatentNoise(LatentSpaceExplainer):
    """K Gaussian perturbations of every coordinate (standard deviation ``spread``)."""

    def __init__(self, k: int = 10, spread: float = 0.5) -> None:
        check_positive("k", k, integer=True)
        check_positive("spread", spread)
        self.k, self.spread = int(k), float(spread)

    def counterfactuals(
        self, z: torch.Tensor, latent_classifier: nn.Module, generator: nn.Module, rng: torch.Generator
    ) -> torch.Tensor:
        noise = torch.randn((z.shape[0], self.k, z.shape[1]), generator=rng, device=rng.device).to(z)
        return z.detach()[:, None, :] + self.spread * noise


class LatentRepeater(LatentSpaceExplainer):
    """One flipping move of the most sensitive coordinate, repeated with small noise elsewhere.

    Args:
        k: counterfactuals per input.
        jitter: standard deviation of the random changes to the other coordinates, as a fraction
            of the sensitive coordinate's move.
        max_step: the largest move tried along the sensitive coordinate (doubling from 1/64).
    """

    def __init__(self, k: int = 10, jitter: float = 0.25, max_step: float = 8.0) -> None:
        check_positive("k", k, integer=True)
        check_positive("jitter", jitter)
        check_positive("max_step", max_step)
        self.k, self.jitter, self.max_step = int(k), float(jitter), float(max_step)

    def counterfactuals(
        self, z: torch.Tensor, latent_classifier: nn.Module, generator: nn.Module, rng: torch.Generator
    ) -> torch.Tensor:
        n, d = z.shape
        point = z.detach().clone().requires_grad_(True)
        logits = two_class_logits(latent_classifier, point, "the repeater control")
        source = logits.argmax(1)
        margin = (logits.gather(1, (1 - source)[:, None]) - logits.gather(1, source[:, None])).sum()
        (gradient,) = torch.autograd.grad(margin, point)
        coordinate = gradient.abs().argmax(1)
        direction = gradient.gather(1, coordinate[:, None]).sign().squeeze(1)
        moved = z.detach().clone()
        with torch.no_grad():
            step = torch.full((n,), 1 / 64, dtype=z.dtype, device=z.device)
            done = torch.zeros(n, dtype=torch.bool, device=z.device)
            while not bool(done.all()) and float(step.max()) <= self.max_step:
                trial = z.detach().clone()
                trial[torch.arange(n), coordinate] += direction * step
                flipped = latent_classifier(trial).argmax(1) != source
                newly = flipped & ~done
                moved[newly] = trial[newly]
                moved[newly, coordinate[newly]] += 0.5 * direction[newly] * step[newly]  # past the boundary
                done |= flipped
                step = torch.where(done, step, step * 2)
            scale = self.jitter * (moved - z.detach()).abs().amax(1, keepdim=True)[:, :, None]
            noise = scale * torch.randn((n, self.k, d), generator=rng, device=rng.device).to(z)
            noise[torch.arange(n), :, coordinate] = 0.0
        return moved[:, None, :] + noise
