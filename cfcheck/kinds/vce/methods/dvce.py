"""Diffusion visual counterfactual explanations (DVCE) as Väth et al. (2023) evaluate them.

Augustin et al.'s DVCE, with the four switches Väth et al. ablate, each on by default:

* **start step**: the input is noised to ``start_fraction``·T (default half the schedule, as
  DVCE and DiME start) and denoised with deterministic DDIM steps of a ``num_steps`` grid;
* **x0-prediction**: the classifiers see the denoiser's estimate x̂_0(x_t, t) of the clean
  image, not the noisy x_t, and the guidance gradient flows back through the denoiser;
* **cone projection**: the gradient of a robust classifier is projected onto the cone of
  ``cone_angle`` degrees around the explained classifier's gradient (Euclidean projection onto
  that convex cone: kept inside it, moved to its boundary otherwise, zero beyond 90° + angle);
* **L1 pull**: ``distance_weight``·sign(x̂_0 − x) is subtracted from the guidance, keeping the
  counterfactual close to the input;
* **rejection**: an input whose final counterfactual the explained classifier does not assign
  to the target is reported as an abstention (Väth et al.'s recommended fix, §5 H2).

Implementation choices (documented so results are comparable): the classifier gradients are
taken with respect to the classifiers' input (x̂_0 in image space), combined there (cone,
L1), and back-propagated through the denoiser in one vector-Jacobian product; the combined
guidance g is rescaled per image to unit root-mean-square and enters the DDIM step as classifier
guidance on the noise, ε' = ε̂ − √(1−ᾱ_t)·s·g (Dhariwal & Nichol's ε form of eq. (1) in Väth
et al.). ``num_counterfactuals`` > 1 runs K independent seeds (the noise of the start step
differs), which the diversity score needs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

import torch
import torch.nn.functional as F
from torch import nn

from cfcheck.kinds.method_helpers import check_positive, predict_logits, seeded_chunks
from cfcheck.kinds.vce.methods.contract import VisualExplainer, validate_target_range

if TYPE_CHECKING:
    from cfcheck.models.generative.diffusion.network import DenoisingUNet

__all__ = ["DiffusionCounterfactual", "cone_projection", "target_log_prob_gradient", "unit_rms"]


def cone_projection(vector: torch.Tensor, axis: torch.Tensor, angle_degrees: float) -> torch.Tensor:
    """Euclidean projection of each row of ``vector`` onto the cone of half-angle α around ``axis``.

    Args:
        vector: N×… vectors to project (the robust classifier's gradients).
        axis: N×… cone axes (the explained classifier's gradients); a zero axis leaves the
            cone undefined and projects to zero.
        angle_degrees: the cone's half-angle α in (0, 90).

    Returns:
        Per row: ``vector`` if its angle θ to the axis is ≤ α; ``‖v‖·cos(θ−α)`` along the cone's
        boundary ray in the plane of ``vector`` and ``axis`` if α < θ < α + 90°; zero otherwise.

    Example:
        >>> cone_projection(torch.tensor([[0.0, 1.0]]), torch.tensor([[1.0, 0.0]]), 45.0)
        tensor([[0.5000, 0.5000]])
    """
    if not 0.0 < angle_degrees < 90.0:
        raise ValueError(f"angle_degrees must be in (0, 90), got {angle_degrees!r}")
    if vector.shape != axis.shape:
        raise ValueError(f"vector and axis must have the same shape, got {tuple(vector.shape)} and {tuple(axis.shape)}")
    v, a = vector.flatten(1), axis.flatten(1)
    alpha = math.radians(angle_degrees)
    a_norm = a.norm(dim=1, keepdim=True)
    unit = a / a_norm.clamp_min(1e-30)
    along = (v * unit).sum(1, keepdim=True)
    across = v - along * unit
    across_norm = across.norm(dim=1, keepdim=True)
    v_norm = v.norm(dim=1, keepdim=True)
    theta = torch.atan2(across_norm, along)
    boundary = math.cos(alpha) * unit + math.sin(alpha) * across / across_norm.clamp_min(1e-30)
    projected = v_norm * torch.cos(theta - alpha).clamp_min(0.0) * boundary
    result = torch.where(theta <= alpha, v, projected)
    result = torch.where(a_norm > 0, result, torch.zeros_like(result))
    return result.view_as(vector)


def unit_rms(g: torch.Tensor) -> torch.Tensor:
    """Each image of ``g`` divided by its root-mean-square (a zero image stays zero)."""
    rms = g.flatten(1).square().mean(1).sqrt().view(-1, *([1] * (g.dim() - 1)))
    return g / rms.clamp_min(1e-12)


def target_log_prob_gradient(classifier: nn.Module, view: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """∇ log p(target | view) of ``classifier`` per image (autograd on even under ``no_grad``)."""
    with torch.enable_grad():
        view = view.detach().requires_grad_(True)
        logits = classifier(view)
        validate_target_range(target, logits.shape[1])
        log_prob = F.log_softmax(logits, dim=1).gather(1, target[:, None]).sum()
        (grad,) = torch.autograd.grad(log_prob, view)
    return grad


@dataclass(frozen=True)
class DiffusionCounterfactual(VisualExplainer):
    """DVCE: classifier-guided DDIM from a partly noised input.

    Args:
        diffusion: the denoiser (a :class:`cfcheck.models.generative.diffusion.DenoisingUNet`).
        robust_classifier: the classifier whose gradients the cone projection uses (``None``
            switches cone projection off).
        guidance_scale: s, the root-mean-square size of the guidance per step in noise units
            (1.0 on the bundled digits: 0.3 reaches the target on under half of the ideal pairs,
            2.0 changes half as much again; ``benchmarks/bench_dvce.py``).
        start_fraction: denoising starts at this fraction of T (0.5 = half the schedule).
        num_steps: DDIM grid size over the whole schedule; about ``num_steps · start_fraction``
            steps are run.
        x0_prediction: guide on x̂_0 (True) or on the noisy x_t itself (False).
        cone_projection: use the robust classifier's gradient projected into the cone.
        cone_angle: the cone's half-angle in degrees (30 in DVCE).
        distance_weight: weight of the L1 pull towards the input, relative to the unit-RMS
            classifier gradient (0 switches it off).
        rejection: abstain where the explained classifier does not predict the target.
        num_counterfactuals: K counterfactuals per input from K seeds.
        batch_size: inputs denoised at once.
    """

    returns_valid: ClassVar[bool] = True

    diffusion: DenoisingUNet
    robust_classifier: nn.Module | None = None
    guidance_scale: float = 1.0
    start_fraction: float = 0.5
    num_steps: int = 40
    x0_prediction: bool = True
    cone_projection: bool = True
    cone_angle: float = 30.0
    distance_weight: float = 0.1
    rejection: bool = True
    num_counterfactuals: int = 1
    batch_size: int = 64
    #: inputs per call the suites make (cfcheck reports progress between calls)
    cfcheck_batch_size: ClassVar[int] = 40

    def __post_init__(self) -> None:
        check_positive("guidance_scale", self.guidance_scale)
        check_positive("num_steps", self.num_steps, integer=True)
        check_positive("num_counterfactuals", self.num_counterfactuals, integer=True)
        check_positive("batch_size", self.batch_size, integer=True)
        if not 0.0 < self.start_fraction <= 1.0:
            raise ValueError(f"Expected `start_fraction` in (0, 1], but got {self.start_fraction}.")
        if self.distance_weight < 0:
            raise ValueError(f"Expected `distance_weight` >= 0, but got {self.distance_weight}.")
        if self.cone_projection and self.robust_classifier is None:
            raise ValueError("cone_projection needs a `robust_classifier`; pass one or set cone_projection=False.")
        if not 0.0 < self.cone_angle < 90.0:
            raise ValueError(f"Expected `cone_angle` in (0, 90) degrees, but got {self.cone_angle}.")

    def counterfactuals(
        self, x: torch.Tensor, target: torch.Tensor, classifier: nn.Module, generator: torch.Generator
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Return ``(x_cf, valid)``: N×C×H×W (K = 1) or N×K×C×H×W, and the kept inputs."""
        from cfcheck.models.generative.diffusion.sampling import encode_decode

        n = x.shape[0]
        network = self.diffusion.to(x.device)
        outputs = []
        for _ in range(self.num_counterfactuals):
            chunks = []
            for part, chunk_generator in seeded_chunks(generator, n, self.batch_size, x.device):
                guide = self._guide(network, x[part].detach(), target[part], classifier)
                chunks.append(
                    encode_decode(
                        network, x[part].detach(), self.start_fraction, self.num_steps, chunk_generator, guide=guide
                    )
                )
            outputs.append(torch.cat(chunks))
        cfs = torch.stack(outputs, dim=1).to(x.dtype)
        hits = torch.stack(
            [predict_logits(classifier, cfs[:, k], 256).argmax(1) == target for k in range(cfs.shape[1])], dim=1
        )
        valid = hits.all(1) if self.rejection else torch.ones(n, dtype=torch.bool, device=x.device)
        return (cfs[:, 0] if self.num_counterfactuals == 1 else cfs), valid

    def _guide(self, network: DenoisingUNet, x: torch.Tensor, target: torch.Tensor, classifier: nn.Module):
        from cfcheck.models.generative.diffusion.sampling import predict_x0, predicted_noise

        x_diffusion = x * 2.0 - 1.0

        def guide(x_t: torch.Tensor, t: int) -> torch.Tensor:
            with torch.enable_grad():
                x_var = x_t.detach().requires_grad_(True)
                if self.x0_prediction:  # one forward pass with a graph serves ε̂ and x̂_0
                    eps = predicted_noise(network, x_var, t)
                    estimate = predict_x0(network, x_var, t, eps)
                else:
                    with torch.no_grad():
                        eps = predicted_noise(network, x_var, t)
                    estimate = x_var
                view = (estimate + 1.0) / 2.0  # the classifiers' input, in image space
                gradient = target_log_prob_gradient(classifier, view, target)
                if self.cone_projection:
                    assert self.robust_classifier is not None  # __post_init__ requires one
                    robust = target_log_prob_gradient(self.robust_classifier, view, target)
                    gradient = cone_projection(robust, gradient, self.cone_angle)
                direction = unit_rms(gradient)
                if self.distance_weight > 0:
                    direction = direction - self.distance_weight * (estimate.detach() - x_diffusion).sign()
                (pulled,) = torch.autograd.grad(view, x_var, grad_outputs=direction)
            alpha = network.alphas_cumprod[t]
            return eps.detach() - (1.0 - alpha).sqrt() * self.guidance_scale * unit_rms(pulled)

        return guide
