"""The attribution calibration's controls, whose answer is known by construction: the domain's
reference attributions and a noisy ladder of its signal (positive), and random attributions drawn
independently of cfcheck's own baseline (negative). See :mod:`cfcheck.kinds.attribution.calibration`.

The positive controls are bundled attributions: the table names them, and :func:`attribution_controls`
builds them by name from the module the kind's declaration names as its reference methods
(``methods``, reached through :meth:`~cfcheck.kinds.declaration.KindDeclaration.part`), so the
kind's engine never imports a bundled method (methods sit above kinds)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch

from cfcheck.kinds.attribution.baseline import random_attribution
from cfcheck.kinds.attribution.declaration import DECLARATION

if TYPE_CHECKING:
    from cfcheck.kinds.attribution.declaration import FeatureAttribution

__all__ = [
    "NOISE_LADDER",
    "OTHER_RANDOM_SEEDS",
    "REFERENCE_ATTRIBUTIONS",
    "attribution_controls",
    "bundled_attribution",
]

#: noise ratios of the positive ladder, ‖noise‖ / ‖signal‖
NOISE_LADDER = (0.5, 1.0, 2.0, 4.0, 8.0)
#: the negative controls' seeds: independent random attributions (the suites' own baseline uses
#: REMOVAL_SEED + the task's seed); several, so a bar clears their spread over the retraining draws
OTHER_RANDOM_SEEDS = (991, 992, 993, 994, 995)
#: a domain's reference attributions when it has no true feature: control name -> bundled class
REFERENCE_ATTRIBUTIONS = {
    "gradient": "Gradient",
    "input×gradient": "InputTimesGradient",
    "smoothgrad": "SmoothGrad",
    "integrated gradients": "IntegratedGradients",
}


class _OtherRandom:
    """A random attribution drawn independently of cfcheck's baseline (a negative control)."""

    def __init__(self, seed: int) -> None:
        self.generator = torch.Generator().manual_seed(seed)

    def attribute(self, x: torch.Tensor, model: Any, target: torch.Tensor) -> torch.Tensor:
        return random_attribution(x, self.generator)


def bundled_attribution(name: str, *args: Any) -> FeatureAttribution:
    """The bundled attribution class ``name`` (of the kind's declared reference ``methods``), built with ``args``."""
    method: FeatureAttribution = DECLARATION.part("methods", name)(*args)
    return method


def attribution_controls(domain: Any) -> dict[str, tuple[str, Any]]:
    """Control name → (role, attribution method); role is "+", "-" or "ladder:<ratio>"."""
    from cfcheck.kinds.attribution.capabilities import ClassFeature

    signal: FeatureAttribution
    reference: dict[str, FeatureAttribution]
    if isinstance(domain, ClassFeature):
        signal = bundled_attribution("TrueFeature", domain)
        reference = {"true feature": bundled_attribution("TrueFeature", domain)}
    else:
        reference = {name: bundled_attribution(cls) for name, cls in REFERENCE_ATTRIBUTIONS.items()}
        signal = reference["gradient"]
    controls: dict[str, tuple[str, Any]] = {name: ("+", method) for name, method in reference.items()}
    controls.update(
        {
            f"{'true feature' if isinstance(domain, ClassFeature) else 'gradient'} + noise {r:g}": (
                f"ladder:{r:g}",
                bundled_attribution("NoisyAttribution", signal, r),
            )
            for r in NOISE_LADDER
        }
    )
    controls.update({f"random (seed {seed})": ("-", _OtherRandom(seed)) for seed in OTHER_RANDOM_SEEDS})
    return controls
