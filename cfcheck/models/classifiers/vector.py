"""Classifiers of vectors (N×D inputs), for domains whose points are not images.

Park et al. (2023, §5.1) explain "a simple 3-layer MLP" on their Gaussian-mixture toy; this is
that network: two hidden ReLU layers and a linear output (three linear layers in all).
"""

from __future__ import annotations

import torch
from torch import nn

from ..builders import register_architecture

__all__ = ["VectorMLP"]


class VectorMLP(nn.Module):
    """``in_features → hidden → hidden → num_classes`` with ReLU between the linear layers.

    Args:
        in_features: the input dimension D.
        num_classes: the number of outputs.
        hidden: the width of both hidden layers.
    """

    def __init__(self, in_features: int, num_classes: int = 2, hidden: int = 64) -> None:
        super().__init__()
        for name, value in (("in_features", in_features), ("num_classes", num_classes), ("hidden", hidden)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive int, got {value!r}")
        self.in_features, self.num_classes = in_features, num_classes
        self.net = nn.Sequential(
            nn.Linear(in_features, hidden),
            nn.ReLU(),
            nn.Linear(hidden, hidden),
            nn.ReLU(),
            nn.Linear(hidden, num_classes),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.ndim != 2 or x.shape[1] != self.in_features:
            raise ValueError(f"expected N×{self.in_features} inputs, got shape {tuple(x.shape)}")
        return self.net(x)


register_architecture("vector_mlp", VectorMLP, family="classifier")
