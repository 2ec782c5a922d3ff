"""DiCE, xGEM and DiVE on a latent space, with Bex et al.'s hyperparameters (appendix A.3.2).

All three are objectives of :class:`cfcheck.kinds.latent.methods.search.LatentGradientSearch` (Adam on
z′ from K starts z + 0.1·N(0, I), learning rate 0.1, at most 50 steps):

* **DiCE** (Mothilal et al. 2020, Eq. 8 of Bex et al.): hinge loss on the target's log-odds
  (margin 1, as DiCE's ``hinge_loss``) + λ₁ · mean |z′ − z| − λ₂ · det(K) with the DPP kernel
  K_ij = 1 / (1 + Σ_d |z′_i − z′_j|) (+10⁻⁴ on the diagonal), the K counterfactuals of an input
  optimised jointly and frozen together once all of them reach p(target) > 0.5 (DiCE's
  convergence test). λ₁ = λ₂ = 1.
* **xGEM** (Joshi et al. 2018): DiCE without the diversity term, with the proximity measured on
  the image (mean |g(z′) − g(z)|, weight 10⁻³) and the cross-entropy of the target class; each
  counterfactual is frozen once it flips the classifier (p(target) > 0.5).
* **DiVE** (Rodríguez et al. 2021): the cross-entropy of the target + 10⁻⁴ · mean |g(z′) − g(z)|
  + γ · mean |z′ − z| (γ = 0.1, the sparsity of the perturbation) + 10⁻³ · the mean |cosine|
  between the input's K perturbations (their diversity); the coordinates with the largest
  Fisher information of the classifier at z (E_y∼p[(∂ log p(y|z)/∂z_d)²], per input) are
  masked: they stay at z's value, so the search looks beyond the most influential attributes.
  How many to mask is not given by Bex et al.; cfcheck masks 3 (one embedding's worth). The K
  of an input are optimised jointly and frozen together once all of them flip the classifier.

Bex et al. give 50 as the *maximum* number of iterations for each of the three, so each stops
earlier once it has converged; cfcheck takes the flip of the classifier as convergence. Without
it the cross-entropy keeps pushing every coordinate for 50 steps of 0.1, far beyond Bex et
al.'s proximity radii (measured: xGEM's estimator flips fell to 5–12% of its counterfactuals,
against 66–76% in the paper's Table 4).

``explain(z, latent_classifier, generator, *, rng=None) -> z_cf`` (N×K×D) for each.
"""

from __future__ import annotations

import torch
from torch import nn

from cfcheck.kinds.latent.methods.search import LatentGradientSearch, SearchState
from cfcheck.kinds.method_helpers import check_positive

__all__ = ["DiCE", "DiVE", "XGEM", "fisher_information"]


def _non_negative(name: str, value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
        raise ValueError(f"Expected `{name}` to be a number >= 0, but got {value!r}.")
    return float(value)


def _cross_entropy(state: SearchState) -> torch.Tensor:
    return (
        -torch.log_softmax(state.logits, -1)
        .gather(-1, state.target[:, None, None].expand(-1, state.logits.shape[1], 1))
        .squeeze(-1)
    )


class DiCE(LatentGradientSearch):
    """DiCE in the latent space (see the module docstring).

    Args:
        k, lr, max_iterations, start_spread: the search (:class:`LatentGradientSearch`).
        proximity_weight: λ₁. diversity_weight: λ₂. margin: the hinge's margin on the log-odds.
    """

    name = "DiCE"
    stop_probability = 0.5
    stop_when_all = True

    def __init__(
        self,
        k: int = 10,
        lr: float = 0.1,
        max_iterations: int = 50,
        start_spread: float = 0.1,
        proximity_weight: float = 1.0,
        diversity_weight: float = 1.0,
        margin: float = 1.0,
    ) -> None:
        super().__init__(k=k, lr=lr, max_iterations=max_iterations, start_spread=start_spread)
        self.proximity_weight = _non_negative("proximity_weight", proximity_weight)
        self.diversity_weight = _non_negative("diversity_weight", diversity_weight)
        check_positive("margin", margin)
        self.margin = float(margin)

    @staticmethod
    def dpp_diversity(z_cf: torch.Tensor) -> torch.Tensor:
        """N determinants of the K×K kernel 1 / (1 + L1 distance), +10⁻⁴ on the diagonal."""
        distance = torch.cdist(z_cf, z_cf, p=1)
        kernel = 1.0 / (1.0 + distance) + 1e-4 * torch.eye(z_cf.shape[1], dtype=z_cf.dtype, device=z_cf.device)
        return torch.linalg.det(kernel)

    def objective(self, state: SearchState) -> torch.Tensor:
        hinge = torch.relu(self.margin - state.target_margin())
        diversity = self.dpp_diversity(state.z_cf)[:, None] / state.z_cf.shape[1]
        return hinge + self.proximity_weight * state.l1_distance() - self.diversity_weight * diversity


class XGEM(LatentGradientSearch):
    """xGEM in the latent space (see the module docstring).

    Args:
        k, lr, max_iterations, start_spread: the search (:class:`LatentGradientSearch`).
        proximity_weight: weight of the image-space L1 proximity.
    """

    name = "xGEM"
    stop_probability = 0.5

    def __init__(
        self,
        k: int = 10,
        lr: float = 0.1,
        max_iterations: int = 50,
        start_spread: float = 0.1,
        proximity_weight: float = 1e-3,
    ) -> None:
        super().__init__(k=k, lr=lr, max_iterations=max_iterations, start_spread=start_spread)
        self.proximity_weight = _non_negative("proximity_weight", proximity_weight)

    def objective(self, state: SearchState) -> torch.Tensor:
        return _cross_entropy(state) + self.proximity_weight * state.image_distance()


def fisher_information(latent_classifier: nn.Module, z: torch.Tensor) -> torch.Tensor:
    """N×D diagonal Fisher information of the classifier's p(y | z) at each input:
    Σ_y p(y|z) · (∂ log p(y|z) / ∂z_d)²."""
    point = z.detach().clone().requires_grad_(True)
    log_p = torch.log_softmax(latent_classifier(point), -1)
    information = torch.zeros_like(point)
    for y in range(log_p.shape[1]):
        (gradient,) = torch.autograd.grad(log_p[:, y].sum(), point, retain_graph=y + 1 < log_p.shape[1])
        information += log_p[:, y].detach().exp()[:, None] * gradient**2
    return information


class DiVE(LatentGradientSearch):
    """DiVE in the latent space (see the module docstring).

    Args:
        k, lr, max_iterations, start_spread: the search (:class:`LatentGradientSearch`).
        proximity_weight: weight of the image-space L1 proximity.
        sparsity_weight: γ, weight of the perturbation's L1 norm.
        diversity_weight: weight of the mean |cosine| between an input's perturbations.
        masked: how many coordinates (largest Fisher information first) stay fixed.
    """

    name = "DiVE"
    stop_probability = 0.5
    stop_when_all = True

    def __init__(
        self,
        k: int = 10,
        lr: float = 0.1,
        max_iterations: int = 50,
        start_spread: float = 0.1,
        proximity_weight: float = 1e-4,
        sparsity_weight: float = 0.1,
        diversity_weight: float = 1e-3,
        masked: int = 3,
    ) -> None:
        super().__init__(k=k, lr=lr, max_iterations=max_iterations, start_spread=start_spread)
        self.proximity_weight = _non_negative("proximity_weight", proximity_weight)
        self.sparsity_weight = _non_negative("sparsity_weight", sparsity_weight)
        self.diversity_weight = _non_negative("diversity_weight", diversity_weight)
        if isinstance(masked, bool) or not isinstance(masked, int) or masked < 0:
            raise ValueError(f"Expected `masked` to be an int >= 0, but got {masked!r}.")
        self.masked = masked

    def movable(self, z: torch.Tensor, latent_classifier: nn.Module, source: torch.Tensor) -> torch.Tensor:
        if self.masked >= z.shape[1]:
            raise ValueError(f"masked = {self.masked} would fix all {z.shape[1]} coordinates")
        keep = torch.ones_like(z, dtype=torch.bool)
        if self.masked:
            top = fisher_information(latent_classifier, z).topk(self.masked, dim=1).indices
            keep.scatter_(1, top, False)
        return keep

    @staticmethod
    def perturbation_similarity(z: torch.Tensor, z_cf: torch.Tensor) -> torch.Tensor:
        """N×K mean |cosine| between each perturbation z′_i − z and the input's other K − 1."""
        k = z_cf.shape[1]
        if k < 2:
            return torch.zeros(z_cf.shape[:2], dtype=z_cf.dtype, device=z_cf.device)
        direction = z_cf - z[:, None]
        direction = direction / direction.norm(dim=-1, keepdim=True).clamp_min(1e-8)
        cosine = (direction @ direction.transpose(1, 2)).abs()
        off_diagonal = cosine * (1 - torch.eye(k, dtype=z_cf.dtype, device=z_cf.device))
        return off_diagonal.sum(-1) / (k - 1)

    def objective(self, state: SearchState) -> torch.Tensor:
        return (
            _cross_entropy(state)
            + self.proximity_weight * state.image_distance()
            + self.sparsity_weight * state.l1_distance()
            + self.diversity_weight * self.perturbation_similarity(state.z, state.z_cf)
        )
