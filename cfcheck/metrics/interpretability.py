"""IM1 and IM2: autoencoder-based interpretability of counterfactuals (Van Looveren & Klaise
2021, eqs. (9)–(10); Hvilshøj et al. 2021, eqs. (2)–(3)).

Both take reconstructions rather than autoencoders, so they are pure functions of tensors; the
suites pass the bundled autoencoders' outputs. Images are in [0, 1] (Hvilshøj et al. show that
IM2 changes by an order of magnitude with the normalisation, so one range is fixed).
"""

from __future__ import annotations

import torch  # noqa: F401  (the doctest examples)
from torch import Tensor

from cfcheck.metrics._validation import check_image_pair, check_range

__all__ = ["im1", "im2"]


def _squared_error(a: Tensor, b: Tensor) -> Tensor:
    return (a.double() - b.double()).square().flatten(1).sum(1)


def im1(c: Tensor, target_reconstruction: Tensor, source_reconstruction: Tensor, eps: float = 1e-8) -> Tensor:
    """IM1 per counterfactual: ‖c − AE_q(c)‖² / (‖c − AE_p(c)‖² + ε).

    Args:
        c: N×C×H×W counterfactuals in [0, 1].
        target_reconstruction: AE_q(c), the reconstruction by the autoencoder of each target class q.
        source_reconstruction: AE_p(c), the reconstruction by the autoencoder of each input's class p.
        eps: ε of the denominator.

    Returns:
        float32 N, in [0, ∞); below 1 when the target-class autoencoder reconstructs c better than
        the source-class one (lower is better).

    Example:
        >>> c = torch.full((1, 1, 2, 2), 0.5)
        >>> im1(c, c + 0.1, c + 0.2)
        tensor([0.2500])
    """
    check_image_pair(c, target_reconstruction, names=("c", "target_reconstruction"), value_range=None)
    check_image_pair(c, source_reconstruction, names=("c", "source_reconstruction"), value_range=None)
    check_range("c", c, (0.0, 1.0))
    if not eps >= 0:
        raise ValueError(f"eps must be >= 0, got {eps!r}")
    return (_squared_error(c, target_reconstruction) / (_squared_error(c, source_reconstruction) + eps)).float()


def im2(c: Tensor, target_reconstruction: Tensor, full_reconstruction: Tensor, eps: float = 1e-8) -> Tensor:
    """IM2 per counterfactual: ‖AE_q(c) − AE(c)‖² / (‖c‖₁ + ε).

    Args:
        c: N×C×H×W counterfactuals in [0, 1].
        target_reconstruction: AE_q(c), by the autoencoder of each target class.
        full_reconstruction: AE(c), by the autoencoder trained on every class.
        eps: ε of the denominator.

    Returns:
        float32 N, in [0, ∞) (lower is better).

    Example:
        >>> c = torch.full((1, 1, 2, 2), 0.5)
        >>> im2(c, c + 0.1, c)
        tensor([0.0200])
    """
    check_image_pair(c, target_reconstruction, names=("c", "target_reconstruction"), value_range=None)
    check_image_pair(c, full_reconstruction, names=("c", "full_reconstruction"), value_range=None)
    check_range("c", c, (0.0, 1.0))
    if not eps >= 0:
        raise ValueError(f"eps must be >= 0, got {eps!r}")
    l1 = c.double().abs().flatten(1).sum(1)
    return (_squared_error(target_reconstruction, full_reconstruction) / (l1 + eps)).float()
