"""StylEx's attribute finding (AttFind, Lang et al. 2021) on a latent space, as Bex et al. run it.

Bex et al. keep only AttFind, since their latent coordinates are already interpretable, with
the "Independent" selection strategy and a shift of 0.8 per coordinate (appendix A.3.2). Here,
for each input z with predicted class s:

1. every coordinate d is shifted on its own by ±``shift_size`` (standardised units: z′ = z ±
   0.8·e_d), 2·D candidate attributes;
2. each is scored independently (the "Independent" strategy) by how much it raises the latent
   classifier's probability of the other class over its value at z;
3. the K counterfactuals are the K best single shifts, best first (cycling when K > 2·D).

Bex et al.'s threshold t = 0.3 belongs to AttFind's dataset-level loop, which picks a class's
attributes over many images and drops an image once its probability has moved by t; with each
input's attributes ranked on their own it would change no ranking, so it is not a parameter here.
The method is deterministic (``rng`` is accepted and unused).

``explain(z, latent_classifier, generator, *, rng=None) -> z_cf`` (N×K×D).
"""

from __future__ import annotations

import torch
from torch import nn

from cfcheck.kinds.latent.methods.contract import LatentSpaceExplainer
from cfcheck.kinds.latent.methods.search import two_class_logits
from cfcheck.kinds.method_helpers import check_positive

__all__ = ["StylExAttFind"]


class StylExAttFind(LatentSpaceExplainer):
    """AttFind's single-coordinate shifts, ranked per input (see the module docstring).

    Args:
        k: counterfactuals per input.
        shift_size: the shift applied to one coordinate (standardised units).
    """

    def __init__(self, k: int = 10, shift_size: float = 0.8) -> None:
        check_positive("k", k, integer=True)
        check_positive("shift_size", shift_size)
        self.k, self.shift_size = int(k), float(shift_size)

    @torch.no_grad()
    def counterfactuals(
        self, z: torch.Tensor, latent_classifier: nn.Module, generator: nn.Module, rng: torch.Generator
    ) -> torch.Tensor:
        n, d = z.shape
        z = z.detach()
        logits = two_class_logits(latent_classifier, z, "StylEx-AttFind")
        other = 1 - logits.argmax(1)
        before = torch.softmax(logits, 1).gather(1, other[:, None])
        steps = torch.cat([torch.eye(d), -torch.eye(d)]).to(z) * self.shift_size  # 2D×D
        candidates = z[:, None, :] + steps[None]  # N×2D×D
        probability = torch.softmax(latent_classifier(candidates.reshape(n * 2 * d, d)), 1).reshape(n, 2 * d, 2)
        gain = probability.gather(2, other[:, None, None].expand(-1, 2 * d, 1)).squeeze(2) - before
        order = gain.argsort(dim=1, descending=True, stable=True)
        chosen = order[:, torch.arange(self.k) % (2 * d)]
        return candidates.gather(1, chosen[:, :, None].expand(-1, -1, d))
