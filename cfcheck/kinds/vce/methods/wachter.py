"""Wachter-style gradient counterfactual: the simplest "real" VCE baseline.

Wachter, Mittelstadt & Russell (2017) define a counterfactual as the solution of
``argmin_x' loss(f(x'), y_t) + λ·d(x', x)`` with an L1 distance, which favours changing few
pixels. Applied to raw pixels it is an adversarial-style optimiser with a sparsity prior:
it reaches the target with a much smaller L1 change than PGD, yet (on a non-robust
classifier) it still mostly produces pixel noise rather than a different digit. It is the
baseline every VCE in the papers is compared against.

Optimisation details (choices of this implementation, documented so results are
reproducible and comparable):

* per-image objective ``CE(f(x'), y_t) + λ_i·‖x' − x‖₁`` minimised over ``δ = x' − x``
  with Adam, implemented here with per-sample state so samples can stop independently;
* the L1 term is handled with the OWL-QN pseudo-gradient (a pixel at ``δ = 0`` moves only
  when the CE gradient exceeds λ) and updates may not cross zero (they snap to 0), so the
  result is genuinely sparse rather than dithering around ``x`` by one Adam step size;
* ``x' = x + δ`` is projected onto the box [0, 1] after every step;
* a sample stops as soon as ``p(y_t | x') ≥ target_prob`` (a margin above the decision
  boundary, so the counterfactual does not sit on the boundary);
* every ``halve_every`` steps, λ is halved for the samples that have not stopped, so a
  too-strong distance prior cannot prevent validity forever.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import torch
import torch.nn.functional as F
from torch import nn

from cfcheck.kinds.method_helpers import check_positive, input_gradient, predict_logits
from cfcheck.kinds.vce.methods.contract import VisualExplainer, validate_target_range


def l1_pseudo_gradient(delta: torch.Tensor, grad: torch.Tensor, lam: torch.Tensor) -> torch.Tensor:
    """Pseudo-gradient of ``loss(δ) + λ·‖δ‖₁`` (Andrew & Gao, 2007, OWL-QN).

    Away from zero it is the ordinary gradient ``grad + λ·sign(δ)``. At ``δ = 0`` it is the
    minimum-norm subgradient: zero when ``|grad| ≤ λ`` (the L1 kink holds the pixel at
    zero), otherwise ``grad`` shrunk towards zero by λ. ``lam`` broadcasts against ``delta``.
    """
    shrunk = grad.sign() * (grad.abs() - lam).clamp_min(0.0)
    return torch.where(delta == 0, shrunk, grad + lam * delta.sign())


@dataclass(frozen=True)
class WachterCounterfactual(VisualExplainer):
    """Gradient counterfactual minimising ``CE(f(x'), y_t) + λ·‖x' − x‖₁`` per image.

    Args:
        lam: initial L1 weight λ per image (distance summed over pixels). Larger values
            give sparser, closer counterfactuals but need more λ halvings to become valid.
            The default is of the order of a trained CNN's per-pixel CE gradient, so only
            the most salient pixels move at first (on a bundled domain's ``cnn``, the L1
            distance is about a third of PGD's at eps 0.1, all targets reached:
            ``benchmarks/test_methods.py``).
        learning_rate: Adam step size in pixel units (roughly the largest change of a pixel
            per step).
        max_steps: optimisation budget; samples still short of the target by then keep
            their last iterate and are reported invalid if ``f`` does not predict the target.
        target_prob: early-stop threshold on the target's softmax probability (> 0.5, so a
            stopped sample is always classified as the target).
        halve_every: λ is halved for still-running samples every this many steps.
        betas: Adam's moment decay rates.
        adam_eps: Adam's denominator epsilon.

    ``explain`` returns ``(x_cf, valid)`` with ``valid = argmax f(x_cf) == target``. The
    method is deterministic (no randomness), so ``generator`` is accepted and unused.
    """

    returns_valid: ClassVar[bool] = True

    lam: float = 1.0
    learning_rate: float = 0.05
    max_steps: int = 200
    target_prob: float = 0.6
    halve_every: int = 20
    betas: tuple[float, float] = (0.9, 0.999)
    adam_eps: float = 1e-8

    def __post_init__(self) -> None:
        check_positive("lam", self.lam)
        check_positive("learning_rate", self.learning_rate)
        check_positive("max_steps", self.max_steps, integer=True)
        check_positive("halve_every", self.halve_every, integer=True)
        check_positive("adam_eps", self.adam_eps)
        if not 0.0 < self.target_prob < 1.0:
            raise ValueError(f"Expected `target_prob` in (0, 1), but got {self.target_prob}.")
        if len(self.betas) != 2 or not all(0.0 <= b < 1.0 for b in self.betas):
            raise ValueError(f"Expected `betas` as two numbers in [0, 1), but got {self.betas}.")

    def counterfactuals(
        self, x: torch.Tensor, target: torch.Tensor, classifier: nn.Module, generator: torch.Generator
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Return ``(x_cf, valid)``; ``x_cf`` in [0, 1] with the shape/dtype/device of ``x``."""
        x0 = x.detach()
        n = x0.shape[0]
        beta1, beta2 = self.betas
        delta = torch.zeros_like(x0)
        first_moment = torch.zeros_like(x0)
        second_moment = torch.zeros_like(x0)
        lam = torch.full((n, 1, 1, 1), float(self.lam), dtype=x0.dtype, device=x0.device)
        steps_taken = torch.zeros((n, 1, 1, 1), dtype=x0.dtype, device=x0.device)
        running = torch.ones((n, 1, 1, 1), dtype=torch.bool, device=x0.device)

        def ce_loss(logits: torch.Tensor) -> torch.Tensor:
            validate_target_range(target, logits.shape[1])
            # Summed: each image's gradient is its own CE gradient, whatever the batch size.
            return F.cross_entropy(logits, target, reduction="sum")

        for step in range(self.max_steps):
            logits, grad = input_gradient(classifier, x0 + delta, ce_loss)
            target_prob = logits.softmax(dim=1).gather(1, target[:, None]).squeeze(1)
            running &= (target_prob < self.target_prob).view(n, 1, 1, 1)
            if not bool(running.any()):
                break
            if step > 0 and step % self.halve_every == 0:
                lam = torch.where(running, lam / 2, lam)

            pseudo_grad = l1_pseudo_gradient(delta, grad, lam)
            steps_taken = steps_taken + running.to(x0.dtype)
            new_first = beta1 * first_moment + (1 - beta1) * pseudo_grad
            new_second = beta2 * second_moment + (1 - beta2) * pseudo_grad.square()
            t = steps_taken.clamp_min(1.0)
            update = (new_first / (1 - beta1**t)) / ((new_second / (1 - beta2**t)).sqrt() + self.adam_eps)
            candidate = delta - self.learning_rate * update
            # Orthant constraint: a pixel whose change would flip sign stops at zero instead,
            # and forgets its momentum so it does not immediately cross back.
            crossed = candidate * delta < 0
            candidate = torch.where(crossed, torch.zeros_like(candidate), candidate)
            new_first = torch.where(crossed, torch.zeros_like(new_first), new_first)
            candidate = (x0 + candidate).clamp(0.0, 1.0) - x0

            delta = torch.where(running, candidate, delta)
            first_moment = torch.where(running, new_first, first_moment)
            second_moment = torch.where(running, new_second, second_moment)

        x_cf = (x0 + delta).clamp(0.0, 1.0)
        valid = predict_logits(classifier, x_cf, max(n, 1)).argmax(dim=1) == target
        return x_cf, valid
