"""The facade the pytest plugin hands to users as the ``morpho`` domain."""

from __future__ import annotations

import torch

from .rendering import IMAGE_SHAPE, render
from .scm import NUM_CLASSES, MorphoFactors, intervene
from .splits import LabeledImages, load_split


def true_counterfactual(factors: MorphoFactors, **intervention: object) -> torch.Tensor:
    """Abduction is free (factors hold the exogenous noise): intervene, propagate, re-render."""
    return render(intervene(factors, **intervention))


class MorphoDomain:
    """Morpho-MNIST-like digits with a known SCM and computable true counterfactuals."""

    name = "morpho"
    image_shape = IMAGE_SHAPE
    num_classes = NUM_CLASSES
    class_names = tuple(str(d) for d in range(NUM_CLASSES))

    def split(self, name: str, n: int | None = None) -> LabeledImages:
        return load_split(name, n)

    def true_counterfactual(self, factors: MorphoFactors, **intervention: object) -> torch.Tensor:
        return true_counterfactual(factors, **intervention)

    def class_counterfactual(self, factors: MorphoFactors, target: torch.Tensor) -> torch.Tensor:
        """The true counterfactual under do(class = target): same style, thickness, intensity."""
        return true_counterfactual(factors, digit=target)

    def __repr__(self) -> str:
        return "MorphoDomain()"
