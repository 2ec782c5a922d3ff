"""Targeted PGD: an adversarial example, not a counterfactual.

Projected gradient descent (Madry et al., 2018) in an L∞ ball drives the classifier to the
target class with a perturbation too small and too unstructured to change what the image
depicts. It flips ``f`` (target accuracy is high) while independent oracles still see the
source digit, which is exactly the failure the oracle-based validity metrics (OS, OTA,
Väth et al. 2023; oracle score, Hvilshøj et al. 2021) exist to catch. cfcheck must fail it
there.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from cfcheck.methods.contract import (
    check_positive,
    input_gradient,
    resolve_generator,
    uniform_like,
    validate_classifier,
    validate_explain_inputs,
    validate_target_range,
)


@dataclass(frozen=True)
class TargetedPGD:
    """Targeted L∞ PGD minimising cross-entropy to the target class.

    Args:
        eps: radius of the L∞ ball around ``x`` (0.1 is a classic MNIST-scale budget that
            fools a standard CNN but leaves the digit recognisable to a human).
        steps: number of signed-gradient steps.
        step_size: size of each step; ``None`` uses ``2.5 * eps / steps`` (Madry et al.),
            enough to cross the ball from the random start and still refine.
        random_start: start from a uniform point in the ball (drawn from the generator),
            which avoids the zero-gradient saddle at ``x`` of saturated classifiers.
    """

    eps: float = 0.1
    steps: int = 40
    step_size: float | None = None
    random_start: bool = True

    def __post_init__(self) -> None:
        check_positive("eps", self.eps)
        check_positive("steps", self.steps, integer=True)
        if self.step_size is not None:
            check_positive("step_size", self.step_size)

    @property
    def effective_step_size(self) -> float:
        """The step size actually used (the default rule applied when none was given)."""
        return self.step_size if self.step_size is not None else 2.5 * self.eps / self.steps

    def explain(
        self,
        x: torch.Tensor,
        target: torch.Tensor,
        classifier: nn.Module,
        *,
        generator: torch.Generator | None = None,
    ) -> torch.Tensor:
        """Return ``x_adv`` with ``‖x_adv − x‖∞ ≤ eps``, values in [0, 1], pushed to ``target``."""
        validate_explain_inputs(x, target)
        validate_classifier(classifier)
        x = x.detach()
        lower = (x - self.eps).clamp(0.0, 1.0)
        upper = (x + self.eps).clamp(0.0, 1.0)
        if self.random_start:
            noise = uniform_like(x, resolve_generator(generator)) * (2 * self.eps) - self.eps
            x_adv = torch.minimum(torch.maximum(x + noise, lower), upper)
        else:
            x_adv = x.clone()

        def loss_fn(logits: torch.Tensor) -> torch.Tensor:
            validate_target_range(target, logits.shape[1])
            # Summed, not averaged: each image's gradient is then independent of batch size.
            return F.cross_entropy(logits, target, reduction="sum")

        step = self.effective_step_size
        for _ in range(self.steps):
            _, grad = input_gradient(classifier, x_adv, loss_fn)
            x_adv = x_adv - step * grad.sign()
            x_adv = torch.minimum(torch.maximum(x_adv, lower), upper)
        return x_adv.detach()
