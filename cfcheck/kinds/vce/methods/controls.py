"""Negative controls: deliberately bad "explainers" the suite must fail.

A conformance suite that passes everything proves nothing. Each control is built to break
one property family, so running the suite on it shows that the corresponding tests can
tell a bad method from a good one.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from cfcheck.kinds.method_helpers import uniform_like
from cfcheck.kinds.vce.methods.contract import VisualExplainer, validate_explain_inputs


@dataclass(frozen=True)
class IdentityControl(VisualExplainer):
    """Returns a copy of its input: perfectly close and realistic, never valid.

    The classifier's decision does not change, so target accuracy is the rate at which
    the target already equals the prediction (zero when targets differ from predictions):
    cfcheck must fail it on validity.
    """

    def counterfactuals(
        self, x: torch.Tensor, target: torch.Tensor, classifier: nn.Module, generator: torch.Generator
    ) -> torch.Tensor:
        """Return ``x.clone()`` (a copy, so a caller mutating the output cannot alter ``x``)."""
        return x.clone()


@dataclass(frozen=True)
class UniformNoiseControl(VisualExplainer):
    """Returns i.i.d. uniform noise images, ignoring the input entirely.

    Noise is far from every input (closeness fails) and from the data manifold (realism
    fails); whatever the classifier makes of it is luck, not explanation. The noise comes
    from the supplied generator only, so a fixed seed reproduces it exactly.
    """

    def counterfactuals(
        self, x: torch.Tensor, target: torch.Tensor, classifier: nn.Module, generator: torch.Generator
    ) -> torch.Tensor:
        """Return uniform [0, 1) noise with the shape, dtype and device of ``x``."""
        return uniform_like(x, generator)


class ClassMeanImage(VisualExplainer):
    """Returns the mean image of the target class for every input: one prototype per class.

    Its outputs sit near the middle of each class but have no variety at all: every
    counterfactual of a target class is the same image, and an average of many shapes is
    blurred where they disagree. A realism score that rewards variety (coverage) must fail it.

    Args:
        images: a bank of real images (N×C×H×W in [0, 1]), e.g. the domain's train split;
            use one that does not also score realism.
        labels: their classes (int64 N).

    Example:
        >>> bank = torch.stack([torch.zeros(1, 2, 2), torch.ones(1, 2, 2)])
        >>> method = ClassMeanImage(bank, torch.tensor([0, 0]))
        >>> method.explain(torch.rand(1, 1, 2, 2), torch.tensor([0]), nn.Identity()).flatten().tolist()
        [0.5, 0.5, 0.5, 0.5]
    """

    def __init__(self, images: torch.Tensor, labels: torch.Tensor) -> None:
        validate_explain_inputs(images, labels, x_name="bank_images", target_name="bank_labels")
        self._means = {int(c): images[labels == c].double().mean(0).to(images.dtype) for c in labels.unique()}

    def counterfactuals(
        self, x: torch.Tensor, target: torch.Tensor, classifier: nn.Module, generator: torch.Generator
    ) -> torch.Tensor:
        """The bank's mean image of each input's target class (``generator`` is not used)."""
        missing = sorted({int(t) for t in target.tolist()} - set(self._means))
        if missing:
            raise ValueError(
                f"the image bank has no image of target class(es) {missing}; it holds {sorted(self._means)}"
            )
        means = torch.stack([self._means[int(t)] for t in target.tolist()])
        return means.to(device=x.device, dtype=x.dtype)
