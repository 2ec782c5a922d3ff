"""Growing Spheres (Laugel et al. 2017) as Bex et al. run it: random search for the nearest enemy.

For each input z (classified as c by the latent classifier):

1. draw ``candidates`` points uniformly in the L2 ball of radius η around z; while any of them is
   an *enemy* (classified other than c), halve η and draw again;
2. then grow: draw the same number uniformly in the spherical layer a₀ < ‖z′ − z‖ ≤ a₁, starting
   at (η, 2η) and moving out by η per step, until a layer holds an enemy (at most
   ``max_layers`` layers; an input without an enemy by then gets z itself back, which counts as
   no flip);
3. keep that layer's K enemies nearest to z (fewer found: the nearest repeated), and make each
   sparse (Laugel et al.'s feature selection): try the changed coordinates once each, smallest
   change first, putting z's value back wherever the point stays an enemy. Laugel et al. stop
   at the first coordinate that cannot go back; trying the rest too only makes the result
   sparser (on a classifier of one coordinate, every other coordinate returns to z's value).

Bex et al.'s hyperparameters (appendix A.3.2): η = 10, 50 candidates. The points are drawn from
the supplied generator, so a seeded call is reproducible. ``explain(z, latent_classifier,
generator, *, rng=None) -> z_cf`` (N×K×D).
"""

from __future__ import annotations

import torch
from torch import nn

from cfcheck.kinds.latent.methods.contract import LatentSpaceExplainer
from cfcheck.kinds.method_helpers import check_positive

__all__ = ["GrowingSpheres", "sample_spherical_layer"]


def sample_spherical_layer(
    center: torch.Tensor, low: float, high: float, n: int, generator: torch.Generator
) -> torch.Tensor:
    """``n`` points uniform in {x : low < ‖x − center‖₂ ≤ high} (``low`` 0: the ball): a Gaussian
    direction and a radius whose d-th power is uniform between low^d and high^d."""
    d = center.numel()
    # drawn on the generator's device, then moved to the centre's
    direction = torch.randn((n, d), generator=generator, device=generator.device, dtype=torch.float64).to(center.device)
    direction = direction / direction.norm(dim=1, keepdim=True).clamp_min(1e-12)
    u = torch.rand((n, 1), generator=generator, device=generator.device, dtype=torch.float64).to(center.device)
    radius = (u * (high**d - low**d) + low**d) ** (1.0 / d)
    return (center.double()[None] + radius * direction).to(center.dtype)


class GrowingSpheres(LatentSpaceExplainer):
    """Growing Spheres with Bex et al.'s hyperparameters (see the module docstring).

    Args:
        k: counterfactuals per input.
        radius: the first ball's radius η (also the layers' width).
        candidates: points drawn per ball or layer.
        max_layers: layers tried before giving up on an input.
    """

    def __init__(self, k: int = 10, radius: float = 10.0, candidates: int = 50, max_layers: int = 200) -> None:
        check_positive("k", k, integer=True)
        check_positive("radius", radius)
        check_positive("candidates", candidates, integer=True)
        check_positive("max_layers", max_layers, integer=True)
        self.k, self.radius, self.candidates, self.max_layers = int(k), float(radius), int(candidates), int(max_layers)

    def counterfactuals(
        self, z: torch.Tensor, latent_classifier: nn.Module, generator: nn.Module, rng: torch.Generator
    ) -> torch.Tensor:
        with torch.no_grad():
            return torch.stack([self._explain_one(row.detach(), latent_classifier, rng) for row in z])

    def _classes(self, classifier: nn.Module, points: torch.Tensor) -> torch.Tensor:
        return classifier(points).argmax(1)

    def _explain_one(self, z: torch.Tensor, classifier: nn.Module, rng: torch.Generator) -> torch.Tensor:
        own = int(self._classes(classifier, z[None])[0])
        eta = self.radius
        for _ in range(60):  # halve η until the ball holds no enemy (60 halvings: below float precision)
            points = sample_spherical_layer(z, 0.0, eta, self.candidates, rng)
            if not bool((self._classes(classifier, points) != own).any()):
                break
            eta /= 2.0
        low, high = eta, 2.0 * eta
        for _ in range(self.max_layers):
            points = sample_spherical_layer(z, low, high, self.candidates, rng)
            enemies = points[self._classes(classifier, points) != own]
            if len(enemies):
                break
            low, high = high, high + eta
        else:
            return z.expand(self.k, -1).clone()
        nearest = enemies[(enemies - z).norm(dim=1).argsort()[: self.k]]
        nearest = nearest[torch.arange(self.k) % len(nearest)]
        return self._sparsify(z, nearest, classifier, own)

    def _sparsify(self, z: torch.Tensor, enemies: torch.Tensor, classifier: nn.Module, own: int) -> torch.Tensor:
        """Per enemy, try each changed coordinate once, smallest change first, and put z's value
        back where the point stays an enemy."""
        result = enemies.clone()
        tried = result == z
        for _ in range(z.numel()):
            change = (result - z).abs().masked_fill(tried, float("inf"))
            coordinate = change.argmin(dim=1)
            rows = torch.nonzero(torch.isfinite(change.gather(1, coordinate[:, None]).squeeze(1))).flatten()
            if len(rows) == 0:
                break
            trial = result[rows].clone()
            trial[torch.arange(len(rows)), coordinate[rows]] = z[coordinate[rows]]
            keep = self._classes(classifier, trial) != own
            result[rows[keep]] = trial[keep]
            tried[rows, coordinate[rows]] = True
        return result
