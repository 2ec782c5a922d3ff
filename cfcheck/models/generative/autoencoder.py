"""Autoencoders for the IM1 / IM2 interpretability scores (Van Looveren & Klaise 2021).

The architecture is theirs for MNIST (as Hvilshøj et al. reuse it), on 32×32 inputs: encoder
Conv(16, 3×3, ReLU) → Conv(16, 3×3, ReLU) → MaxPool(2) → Conv(1, 3×3), a 16×16×1 code;
decoder Conv(16, 3×3, ReLU) → Upsample(2) → Conv(16, 3×3, ReLU) → Conv(1, 3×3). Trained with
mean squared error and Adam (lr 10⁻³, batch 128; Hvilshøj et al.'s Table 5). A domain trains
one on all of a split and one per class (:class:`AutoencoderRecipe` with ``label``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from cfcheck.core.seeds import SMALL_NET_EPOCH_ORDER
from cfcheck.models.shuffling import epoch_orders

from .base import GenerativeTrainConfig, GenerativeTrainResult, register_generative_architecture

__all__ = ["AutoencoderRecipe", "ConvAutoencoder", "train_autoencoder"]


class ConvAutoencoder(nn.Module):
    """Van Looveren & Klaise's convolutional autoencoder (see the module docstring).

    Args:
        channels: image channels.
        width: convolution channels.

    Example:
        >>> ConvAutoencoder()(torch.zeros(2, 1, 32, 32)).shape
        torch.Size([2, 1, 32, 32])
    """

    def __init__(self, channels: int = 1, width: int = 16) -> None:
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Conv2d(channels, width, 3, padding=1),
            nn.ReLU(),
            nn.Conv2d(width, width, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(width, 1, 3, padding=1),
        )
        self.decoder = nn.Sequential(
            nn.Conv2d(1, width, 3, padding=1),
            nn.ReLU(),
            nn.Upsample(scale_factor=2),
            nn.Conv2d(width, width, 3, padding=1),
            nn.ReLU(),
            nn.Conv2d(width, channels, 3, padding=1),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """The reconstruction of ``x`` (same shape; not clamped, as the original)."""
        return self.decoder(self.encoder(x))


register_generative_architecture(
    "conv_autoencoder", ConvAutoencoder, family="autoencoder", input_shape=None, replace=True
)


def train_autoencoder(
    images: torch.Tensor, arch_kwargs: Mapping[str, Any], config: GenerativeTrainConfig
) -> tuple[dict[str, torch.Tensor], float]:
    """MSE training with Adam; returns the state dict and the last epoch's mean loss."""
    model = ConvAutoencoder(**dict(arch_kwargs))
    optimiser = torch.optim.Adam(model.parameters(), lr=config.lr, eps=1e-7)
    n = images.shape[0]
    loss_sum = 0.0
    for _, order in epoch_orders(n, config.epochs, seed=config.seed, stream=SMALL_NET_EPOCH_ORDER):
        loss_sum = 0.0
        for start in range(0, n, config.batch_size):
            batch = images[order[start : start + config.batch_size]]
            loss = torch.nn.functional.mse_loss(model(batch), batch)
            optimiser.zero_grad(set_to_none=True)
            loss.backward()
            optimiser.step()
            loss_sum += loss.item() * batch.shape[0]
    return {k: v.detach().clone() for k, v in model.state_dict().items()}, loss_sum / max(1, n)


@dataclass(frozen=True)
class AutoencoderRecipe:
    """An IM1/IM2 autoencoder (implements :class:`~cfcheck.models.generative.GenerativeRecipe`).

    Attributes:
        name: model name within its domain.
        label: train on the images of this class only (``None``: all images).
        config: training configuration (the split, epochs, batch size, learning rate).
        smoke: the tiny configuration the tests train.
        quality_bar: bars on ``test_mse`` (reconstruction error on the test images of ``label``).
        purpose: one sentence for the manifest and the model card.
        test_images: ``(label) -> images`` of the held-out split the quality is measured on.
    """

    name: str
    label: int | None
    config: GenerativeTrainConfig
    smoke: GenerativeTrainConfig
    quality_bar: Mapping[str, Mapping[str, float]]
    purpose: str
    test_images: Any
    arch_kwargs: Mapping[str, Any] = None  # type: ignore[assignment]
    role: str = "autoencoder"
    architecture: str = "conv_autoencoder"
    interface: str = "reconstructs images in [0, 1] (N×1×32×32) through a 16×16×1 code; outputs are not clamped."
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.arch_kwargs is None:
            object.__setattr__(self, "arch_kwargs", {"channels": 1, "width": 16})

    @property
    def manifest_fields(self) -> dict[str, Any]:
        """Extra manifest keys: the class the autoencoder reconstructs (``None``: all)."""
        return {"label": self.label}

    def smoke_config(self) -> GenerativeTrainConfig:
        return self.smoke

    def train(self, config: GenerativeTrainConfig, data: Any) -> GenerativeTrainResult:
        images = data.images if self.label is None else data.images[data.labels == self.label]
        state, final_loss = train_autoencoder(images, self.arch_kwargs, config)
        model = ConvAutoencoder(**dict(self.arch_kwargs))
        model.load_state_dict(state)
        model.eval()
        test = self.test_images(self.label)
        with torch.no_grad():
            test_mse = float(torch.nn.functional.mse_loss(model(test), test))
        return GenerativeTrainResult(
            state_dict=state, quality={"train_mse": final_loss, "test_mse": test_mse}, examples=int(images.shape[0])
        )
