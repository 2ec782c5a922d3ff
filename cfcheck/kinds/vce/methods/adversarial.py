"""Targeted PGD: an adversarial example, not a counterfactual.

Projected gradient descent (Madry et al., 2018) in an L∞ ball drives the classifier to the
target class with a perturbation too small and too unstructured to change what the image
depicts. It flips ``f`` (target accuracy is high) while independent oracles still see the
source digit, which is exactly the failure the oracle-based validity metrics (OS, OTA,
Väth et al. 2023; oracle score, Hvilshøj et al. 2021) exist to catch. cfcheck must fail it
there.

:class:`SizedPGD` is the same attack at a budget found for a user's domain (``cfcheck calibrate
--domain`` searches the smallest one that reaches the target on 90 % of the selection split's
inputs); its adapter, ``cfcheck.fixtures.vce.pgd_sized``, reads the budget from the environment
variable :data:`PGD_EPS_VARIABLE` (:func:`budget_from_environment`).
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass

import torch
from torch import nn

from cfcheck.kinds.method_helpers import check_positive
from cfcheck.kinds.vce.methods.contract import VisualExplainer, validate_target_range
from cfcheck.models.classifiers.adversarial import pgd_attack


@dataclass(frozen=True)
class TargetedPGD(VisualExplainer):
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

    def counterfactuals(
        self, x: torch.Tensor, target: torch.Tensor, classifier: nn.Module, generator: torch.Generator
    ) -> torch.Tensor:
        """Return ``x_adv`` with ``‖x_adv − x‖∞ ≤ eps``, values in [0, 1], pushed to ``target``."""
        with torch.no_grad():
            validate_target_range(target, classifier(x[:1]).shape[1])
        return pgd_attack(
            classifier,
            x,
            target,
            eps=self.eps,
            steps=self.steps,
            norm="linf",
            step_size=self.effective_step_size,
            random_start=self.random_start,
            generator=generator,
            targeted=True,
        )


#: the environment variable the sized adversarial control reads its L∞ budget from
#: (``cfcheck calibrate --domain`` sets it to the budget its search found)
PGD_EPS_VARIABLE = "CFCHECK_PGD_EPS"


def budget_from_environment(environ: Mapping[str, str] | None = None) -> float:
    """The L∞ budget in :data:`PGD_EPS_VARIABLE` (a number in (0, 1]).

    Args:
        environ: the environment to read (default ``os.environ``).

    Raises:
        ValueError: naming the variable, where it is unset or not a number in (0, 1].
    """
    text = (os.environ if environ is None else environ).get(PGD_EPS_VARIABLE)
    if text is None:
        raise ValueError(
            f"the sized adversarial control reads its L∞ budget from {PGD_EPS_VARIABLE}, which is not set: "
            "`cfcheck calibrate --domain` sets it to the budget it found (the bars file's "
            "controls.vce.pgd.eps); set it yourself to run the control, e.g. "
            f"{PGD_EPS_VARIABLE}=0.0157 for 4/255"
        )
    try:
        eps = float(text)
    except ValueError:
        eps = math.nan
    if not (math.isfinite(eps) and 0.0 < eps <= 1.0):
        raise ValueError(f"{PGD_EPS_VARIABLE} must be a number in (0, 1] (an L∞ budget on [0, 1] pixels), got {text!r}")
    return eps


@dataclass(frozen=True)
class SizedPGD(TargetedPGD):
    """:class:`TargetedPGD` at a budget found for a domain: its cached outputs are keyed by the
    budget too (a cached attack at another budget is never reused).

    Example:
        >>> SizedPGD(eps=4 / 255).cfcheck_version.endswith("eps=0.01568627450980392 steps=40")
        True
    """

    @property
    def cfcheck_version(self) -> str:
        from cfcheck.core.cache import method_fingerprint

        code = method_fingerprint(TargetedPGD(), sys.modules[__name__])
        return f"{code} eps={self.eps!r} steps={self.steps}"
