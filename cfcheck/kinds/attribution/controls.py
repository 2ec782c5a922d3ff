"""The attribution calibration's controls, whose answer is known by construction: the domain's
reference attributions and a noisy ladder of its signal (positive), and random attributions drawn
independently of cfcheck's own baseline (negative). See :mod:`cfcheck.kinds.attribution.calibration`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch

if TYPE_CHECKING:
    from cfcheck.kinds.attribution.declaration import FeatureAttribution

__all__ = ["NOISE_LADDER", "OTHER_RANDOM_SEEDS", "attribution_controls"]

#: noise ratios of the positive ladder, ‖noise‖ / ‖signal‖
NOISE_LADDER = (0.5, 1.0, 2.0, 4.0, 8.0)
#: the negative controls' seeds: independent random attributions (the suites' own baseline uses
#: REMOVAL_SEED + the task's seed); several, so a bar clears their spread over the retraining draws
OTHER_RANDOM_SEEDS = (991, 992, 993)


class _OtherRandom:
    """A random attribution drawn independently of cfcheck's baseline (a negative control)."""

    def __init__(self, seed: int) -> None:
        self.generator = torch.Generator().manual_seed(seed)

    def attribute(self, x: torch.Tensor, model: Any, target: torch.Tensor) -> torch.Tensor:
        return torch.randn(x.shape, generator=self.generator).to(x)


def attribution_controls(domain: Any) -> dict[str, tuple[str, Any]]:
    """Control name → (role, attribution method); role is "+", "-" or "ladder:<ratio>"."""
    from cfcheck.kinds.attribution.capabilities import ClassFeature
    from cfcheck.methods.attribution import saliency as A

    signal: FeatureAttribution
    reference: dict[str, FeatureAttribution]
    if isinstance(domain, ClassFeature):
        signal, reference = A.TrueFeature(domain), {"true feature": A.TrueFeature(domain)}
    else:
        signal = A.Gradient()
        reference = {
            "gradient": signal,
            "input×gradient": A.InputTimesGradient(),
            "smoothgrad": A.SmoothGrad(),
            "integrated gradients": A.IntegratedGradients(),
        }
    controls: dict[str, tuple[str, Any]] = {name: ("+", method) for name, method in reference.items()}
    controls.update(
        {
            f"{'true feature' if isinstance(domain, ClassFeature) else 'gradient'} + noise {r:g}": (
                f"ladder:{r:g}",
                A.NoisyAttribution(signal, r),
            )
            for r in NOISE_LADDER
        }
    )
    controls.update({f"random (seed {seed})": ("-", _OtherRandom(seed)) for seed in OTHER_RANDOM_SEEDS})
    return controls
