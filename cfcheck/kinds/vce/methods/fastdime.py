"""FastDiME: diffusion counterfactuals guided on x̂_0 with a self-optimised inpainting mask.

Weng, Pegios, Feragen, Petersen & Bigdeli (2024), "Fast Diffusion-Based Counterfactuals for
Shortcut Removal and Generation" (ECCV), a faster DiME (Jeanneret et al. 2022). Another family
than DVCE: no gradient flows through the denoiser, and the edit is confined to a mask the method
finds itself.

Each DDIM step (η = 0) from ``start_fraction``·T:

1. x̂_0 = the denoiser's estimate of the clean image (no graph through the denoiser);
2. the guidance is the explained classifier's target log-probability gradient **at x̂_0** (in
   image space), rescaled to unit root-mean-square per image, minus ``distance_weight`` ·
   sign(x̂_0 − x) (DiME's L1 term); it shifts the noise as ε' = ε̂ − √(1−ᾱ_t)·s·g;
3. after ``mask_after`` of the steps, the mask M = dilation of {|x̂_0 − x| > ``mask_threshold``}
   (a (2·``dilation``+1)² max-filter) is recomputed, and outside it the step's result is
   replaced by the input noised to the next timestep with the step's own noise (inpainting):
   pixels the counterfactual has no reason to change come back as they were.

The final counterfactual keeps the input outside the last mask. ``rejection`` abstains where the
explained classifier does not predict the target. Settings here are this implementation's,
sized for 32×32 images (the paper's are for 128–256 px): ``mask_threshold`` 0.15,
``dilation`` 1, masks from 30% of the steps on, guidance scale 2 (at 1, the CNN's
counterfactuals reach the target on 82% of ideal pairs, at 2 on all; measured with an
intermediate checkpoint of the DDPM).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

import torch
import torch.nn.functional as F
from torch import nn

from cfcheck.kinds.method_helpers import check_positive, predict_logits, seeded_chunks
from cfcheck.kinds.vce.methods.contract import VisualExplainer
from cfcheck.kinds.vce.methods.dvce import target_log_prob_gradient, unit_rms

if TYPE_CHECKING:
    from cfcheck.models.generative.diffusion.network import DenoisingUNet

__all__ = ["FastDiME", "dilate"]


def dilate(mask: torch.Tensor, radius: int) -> torch.Tensor:
    """Binary dilation of an N×C×H×W mask by a (2·radius+1)² square (a max-filter)."""
    if radius <= 0:
        return mask
    return F.max_pool2d(mask.float(), 2 * radius + 1, stride=1, padding=radius) > 0.5


@dataclass(frozen=True)
class FastDiME(VisualExplainer):
    """FastDiME: DDIM guided on x̂_0, edits confined to a self-optimised mask.

    Args:
        diffusion: the denoiser (a :class:`cfcheck.models.generative.diffusion.DenoisingUNet`).
        guidance_scale: s, the root-mean-square size of the guidance per step in noise units.
        start_fraction: denoising starts at this fraction of T.
        num_steps: DDIM grid size over the whole schedule.
        distance_weight: weight of DiME's L1 term relative to the unit-RMS classifier gradient.
        mask_threshold: |x̂_0 − x| (image units) above which a pixel joins the mask.
        dilation: radius in pixels of the mask's dilation.
        mask_after: fraction of the steps run before the mask is first applied.
        rejection: abstain where the explained classifier does not predict the target.
        batch_size: inputs denoised at once.
    """

    returns_valid: ClassVar[bool] = True

    diffusion: DenoisingUNet
    guidance_scale: float = 2.0
    start_fraction: float = 0.5
    num_steps: int = 40
    distance_weight: float = 0.1
    mask_threshold: float = 0.15
    dilation: int = 1
    mask_after: float = 0.3
    rejection: bool = True
    batch_size: int = 128
    #: inputs per call the suites make (cfcheck reports progress between calls)
    cfcheck_batch_size: ClassVar[int] = 40

    def __post_init__(self) -> None:
        check_positive("guidance_scale", self.guidance_scale)
        check_positive("num_steps", self.num_steps, integer=True)
        check_positive("batch_size", self.batch_size, integer=True)
        if not 0.0 < self.start_fraction <= 1.0:
            raise ValueError(f"Expected `start_fraction` in (0, 1], but got {self.start_fraction}.")
        if self.distance_weight < 0 or self.dilation < 0:
            raise ValueError(
                f"Expected `distance_weight` and `dilation` >= 0, but got {self.distance_weight} and {self.dilation}."
            )
        if not 0.0 < self.mask_threshold < 1.0 or not 0.0 <= self.mask_after <= 1.0:
            raise ValueError(
                f"Expected `mask_threshold` in (0, 1) and `mask_after` in [0, 1], but got "
                f"{self.mask_threshold} and {self.mask_after}."
            )

    def counterfactuals(
        self, x: torch.Tensor, target: torch.Tensor, classifier: nn.Module, generator: torch.Generator
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Return ``(x_cf, valid)``: N×C×H×W in [0, 1] and the kept inputs."""
        n = x.shape[0]
        network = self.diffusion.to(x.device)
        cfs = torch.cat(
            [
                self._counterfactual(network, x[part].detach(), target[part], classifier, chunk_generator)
                for part, chunk_generator in seeded_chunks(generator, n, self.batch_size, x.device)
            ]
        )
        hits = predict_logits(classifier, cfs, 256).argmax(1) == target
        valid = hits if self.rejection else torch.ones(n, dtype=torch.bool, device=x.device)
        return cfs.to(x.dtype), valid

    def _counterfactual(
        self,
        network: DenoisingUNet,
        x: torch.Tensor,
        target: torch.Tensor,
        classifier: nn.Module,
        generator: torch.Generator,
    ) -> torch.Tensor:
        from cfcheck.models.generative.diffusion.sampling import (
            ddim_timesteps,
            denoise,
            noise_to,
            predict_x0,
            predicted_noise,
        )

        timesteps = ddim_timesteps(network, self.num_steps, self.start_fraction)
        clean = x * 2.0 - 1.0
        alphas = network.alphas_cumprod.to(x.device, x.dtype)
        first_masked = int(self.mask_after * len(timesteps))
        state = {"mask": torch.ones_like(x, dtype=torch.bool)}

        def guide(x_t: torch.Tensor, t: int) -> torch.Tensor:
            with torch.no_grad():  # FastDiME: no graph through the denoiser
                eps = predicted_noise(network, x_t, t)
                estimate = predict_x0(network, x_t, t, eps)
            view = ((estimate + 1.0) / 2.0).clamp(0.0, 1.0)
            direction = unit_rms(target_log_prob_gradient(classifier, view, target))
            if self.distance_weight > 0:
                direction = direction - self.distance_weight * (estimate - clean).sign()
            guided = eps - (1 - alphas[t]).sqrt() * self.guidance_scale * unit_rms(direction)
            state["estimate"], state["eps"] = predict_x0(network, x_t, t, guided), guided
            return guided

        def inpaint(x_next: torch.Tensor, i: int) -> torch.Tensor:
            if i < first_masked:
                return x_next
            a_next = alphas[timesteps[i + 1]] if i + 1 < len(timesteps) else torch.ones((), dtype=x.dtype)
            state["mask"] = dilate((state["estimate"] - clean).abs() / 2.0 > self.mask_threshold, self.dilation)
            known = a_next.sqrt() * clean + (1 - a_next).sqrt() * state["eps"]
            return torch.where(state["mask"], x_next, known)

        x_t = noise_to(network, clean, timesteps[0], generator)
        x_0 = denoise(network, x_t, timesteps, guide=guide, after_step=inpaint, num_steps=self.num_steps)
        return ((torch.where(state["mask"], x_0, clean) + 1.0) / 2.0).clamp(0.0, 1.0)
