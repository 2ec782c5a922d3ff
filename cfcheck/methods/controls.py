"""Negative controls: deliberately bad "explainers" the suite must fail.

A conformance suite that passes everything proves nothing. Each control is built to break
one property family, so running the suite on it shows that the corresponding tests can
tell a bad method from a good one.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from cfcheck.methods.contract import (
    resolve_generator,
    uniform_like,
    validate_classifier,
    validate_explain_inputs,
)


@dataclass(frozen=True)
class IdentityControl:
    """Returns a copy of its input: perfectly close and realistic, never valid.

    The classifier's decision does not change, so target accuracy is the rate at which
    the target already equals the prediction (zero when targets differ from predictions):
    cfcheck must fail it on validity.
    """

    def explain(
        self,
        x: torch.Tensor,
        target: torch.Tensor,
        classifier: nn.Module,
        *,
        generator: torch.Generator | None = None,
    ) -> torch.Tensor:
        """Return ``x.clone()`` (a copy, so a caller mutating the output cannot alter ``x``)."""
        validate_explain_inputs(x, target)
        validate_classifier(classifier)
        return x.clone()


@dataclass(frozen=True)
class UniformNoiseControl:
    """Returns i.i.d. uniform noise images, ignoring the input entirely.

    Noise is far from every input (closeness fails) and from the data manifold (realism
    fails); whatever the classifier makes of it is luck, not explanation. The noise comes
    from the supplied generator only, so a fixed seed reproduces it exactly.
    """

    def explain(
        self,
        x: torch.Tensor,
        target: torch.Tensor,
        classifier: nn.Module,
        *,
        generator: torch.Generator | None = None,
    ) -> torch.Tensor:
        """Return uniform [0, 1) noise with the shape, dtype and device of ``x``."""
        validate_explain_inputs(x, target)
        validate_classifier(classifier)
        return uniform_like(x, resolve_generator(generator))
