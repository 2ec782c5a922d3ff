"""The glyph domain's own networks: the generator g(z) and the encoder q(x).

Both work on *raw* latents (``latent.raw_latents``: the two embedding tables and x, y, rotation,
scale, inverse in their natural units). Raw latents describe an image whatever the scenario:
the scenarios differ in how often a font goes with a label, never in what a (character, font,
nuisances) tuple looks like. So one generator and one encoder serve all four scenarios; the
per-scenario standardisation of z is applied outside the weights by :class:`StandardisedGenerator`
(see ``GlyphsDomain.latent_generator``). Each network carries the fixed affine that maps raw
latents to roughly unit scale as buffers (the default scenario's train statistics, recorded at
construction from ``latent_mean``/``latent_std`` arguments), so nothing about a scenario is
hidden in its weights.

Importing this module registers the architectures ``glyph_generator`` and ``glyph_encoder`` with
the model registry.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import nn

from cfcheck.models.builders import register_architecture
from cfcheck.models.generative.base import register_generative_architecture

from .fonts import CANVAS, NUM_CHARACTERS, NUM_FONTS
from .latent import CONTINUOUS_SLICE, LATENT_DIM, LatentStandardiser
from .rendering import SUPERSAMPLE

#: the glyph's longer side as a fraction of the generator's canonical canvas
CANONICAL_FRACTION = 0.9
#: scales below this are treated as this (an explainer's z may leave the data's range mid-search)
MIN_SCALE = 0.05

#: encoder heads: character logits, font logits, continuous attributes (raw units)
ENCODER_HEADS = {
    "character": NUM_CHARACTERS,
    "font": NUM_FONTS,
    "continuous": CONTINUOUS_SLICE.stop - CONTINUOUS_SLICE.start,
}


def _vector(values: Sequence[float] | None, default: float, name: str) -> torch.Tensor:
    if values is None:
        return torch.full((LATENT_DIM,), default)
    tensor = torch.as_tensor(values, dtype=torch.float32)
    if tensor.shape != (LATENT_DIM,):
        raise ValueError(f"{name} must have {LATENT_DIM} entries, got shape {tuple(tensor.shape)}")
    return tensor


def _check_latents(z: torch.Tensor) -> None:
    if not isinstance(z, torch.Tensor) or z.ndim != 2 or z.shape[1] != LATENT_DIM:
        raise ValueError(
            f"expected raw latents shaped N×{LATENT_DIM}, got "
            f"{tuple(z.shape) if isinstance(z, torch.Tensor) else type(z).__name__}"
        )


class GlyphGenerator(nn.Module):
    """g(raw z) -> N×1×32×32 in [0, 1], built like the domain's renderer.

    The glyph's shape comes from the categorical part: an MLP maps the character and font
    embeddings to 128×4×4, three upsampling conv blocks to 32×32 and a sigmoid give the ink
    coverage in a *canonical* frame (glyph centred, longer side ``CANONICAL_FRACTION`` of the
    canvas). The continuous part acts through a differentiable affine warp of that coverage
    (rotation, scale, x, y, with the renderer's conventions, sampled at twice the resolution and
    average-pooled as the renderer does) and the inverse-colour mix
    ``inverse · (1 − c) + (1 − inverse) · c``. Every step is differentiable in z.

    Args:
        width: channels of the 4×4 map.
        hidden: width of the MLP's hidden layer.
        block_channels: output channels of the three upsampling blocks.
        latent_mean, latent_std: the raw-latent affine applied to the embeddings first (11 values each).
    """

    latent_mean: torch.Tensor  # a buffer (register_buffer)
    latent_std: torch.Tensor  # a buffer (register_buffer)

    def __init__(
        self,
        width: int = 128,
        hidden: int = 256,
        block_channels: Sequence[int] = (32, 16, 8),
        latent_mean: Sequence[float] | None = None,
        latent_std: Sequence[float] | None = None,
    ) -> None:
        super().__init__()
        if width < 1:
            raise ValueError(f"width must be positive, got {width}")
        if len(block_channels) != 3 or any(c < 4 or c % 4 for c in block_channels):
            raise ValueError(f"block_channels must be three multiples of 4, got {tuple(block_channels)}")
        self.width = width
        self.register_buffer("latent_mean", _vector(latent_mean, 0.0, "latent_mean"))
        self.register_buffer("latent_std", _vector(latent_std, 1.0, "latent_std"))
        categorical = CONTINUOUS_SLICE.start
        self.mlp = nn.Sequential(nn.Linear(categorical, hidden), nn.SiLU(), nn.Linear(hidden, width * 4 * 4), nn.SiLU())
        blocks: list[nn.Module] = []
        channels = width
        for out in block_channels:  # 4 -> 8 -> 16 -> 32; convolving before upsampling keeps the CPU cost low
            blocks += [
                nn.Conv2d(channels, out, 3, padding=1),
                nn.GroupNorm(4, out),
                nn.SiLU(),
                nn.Upsample(scale_factor=2, mode="nearest"),
            ]
            channels = out
        self.upsample = nn.Sequential(*blocks)
        self.to_image = nn.Conv2d(channels, 1, 3, padding=1)

    def canonical(self, raw_latents: torch.Tensor) -> torch.Tensor:
        """The glyph's coverage N×1×32×32 in the canonical frame, from character and font only."""
        _check_latents(raw_latents)
        part = slice(0, CONTINUOUS_SLICE.start)
        h = self.mlp((raw_latents[:, part] - self.latent_mean[part]) / self.latent_std[part])
        return torch.sigmoid(self.to_image(self.upsample(h.view(-1, self.width, 4, 4))))

    def forward(self, raw_latents: torch.Tensor) -> torch.Tensor:
        coverage = self.canonical(raw_latents)
        shift_x, shift_y, rotation, scale, inverse = raw_latents[:, CONTINUOUS_SLICE].unbind(1)
        cos, sin = torch.cos(rotation), torch.sin(rotation)
        # output coordinates -> canonical coordinates (normalised), as rendering.inverse_affine
        inverse_rotation = torch.stack([torch.stack([cos, -sin], -1), torch.stack([sin, cos], -1)], -2)
        linear = inverse_rotation * (CANONICAL_FRACTION / scale.clamp(min=MIN_SCALE))[:, None, None]
        offset = -(linear @ (torch.stack([shift_x, shift_y], -1) * (2.0 / CANVAS)).unsqueeze(-1))
        theta = torch.cat([linear, offset], -1)
        side = CANVAS * SUPERSAMPLE
        grid = F.affine_grid(theta, [len(theta), 1, side, side], align_corners=False)
        warped = F.avg_pool2d(
            F.grid_sample(coverage, grid, mode="bilinear", padding_mode="zeros", align_corners=False), SUPERSAMPLE
        )
        mix = inverse.clamp(0.0, 1.0)[:, None, None, None]
        return mix * (1.0 - warped) + (1.0 - mix) * warped


def _strided_features(channels: Sequence[int]) -> nn.Sequential:
    """Four 3×3 conv stages with GroupNorm and SiLU; the last three halve the resolution (32 -> 4)."""
    if len(channels) != 4:
        raise ValueError(f"channels must list four stages, got {tuple(channels)}")
    layers: list[nn.Module] = []
    previous = 1
    for index, out in enumerate(channels):
        layers += [
            nn.Conv2d(previous, out, 3, padding=1, stride=1 if index == 0 else 2),
            nn.GroupNorm(8, out),
            nn.SiLU(),
        ]
        previous = out
    return nn.Sequential(*layers, nn.Flatten())


def _check_images(x: torch.Tensor) -> None:
    if x.ndim != 4 or tuple(x.shape[1:]) != (1, CANVAS, CANVAS):
        raise ValueError(f"expected images shaped N×1×{CANVAS}×{CANVAS}, got {tuple(x.shape)}")


class GlyphClassifier(nn.Module):
    """The classifier explained on glyphs: the encoder's strided CNN with a dense layer and
    ``num_classes`` logits. Input: images in [0, 1], N×1×32×32."""

    def __init__(self, num_classes: int = 2, channels: Sequence[int] = (16, 32, 64, 96), hidden: int = 128) -> None:
        super().__init__()
        self.num_classes = num_classes
        self.features = _strided_features(channels)
        side = CANVAS // 8
        self.classifier = nn.Sequential(
            nn.Linear(channels[-1] * side * side, hidden), nn.SiLU(), nn.Linear(hidden, num_classes)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _check_images(x)
        return self.classifier(self.features(x * 2.0 - 1.0))


class GlyphEncoder(nn.Module):
    """q(x): a CNN whose output concatenates character logits (48), font logits (22) and the
    five continuous attributes (raw units: x, y, rotation, scale, inverse), in that order.

    Args:
        channels: channels of the four conv stages (each halves the resolution from the second).
        hidden: width of the dense layer before the heads.
        latent_mean, latent_std: the raw-latent affine the continuous head is trained in.
    """

    latent_mean: torch.Tensor  # a buffer (register_buffer)
    latent_std: torch.Tensor  # a buffer (register_buffer)

    def __init__(
        self,
        channels: Sequence[int] = (16, 32, 64, 96),
        hidden: int = 256,
        latent_mean: Sequence[float] | None = None,
        latent_std: Sequence[float] | None = None,
    ) -> None:
        super().__init__()
        self.register_buffer("latent_mean", _vector(latent_mean, 0.0, "latent_mean"))
        self.register_buffer("latent_std", _vector(latent_std, 1.0, "latent_std"))
        self.features = _strided_features(channels)
        side = CANVAS // 8
        self.body = nn.Sequential(nn.Linear(channels[-1] * side * side, hidden), nn.SiLU())
        self.head = nn.Linear(hidden, sum(ENCODER_HEADS.values()))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _check_images(x)
        out = self.head(self.body(self.features(x * 2.0 - 1.0)))
        continuous = out[:, -ENCODER_HEADS["continuous"] :]
        scale = self.latent_std[CONTINUOUS_SLICE]
        return torch.cat(
            [out[:, : -ENCODER_HEADS["continuous"]], continuous * scale + self.latent_mean[CONTINUOUS_SLICE]], 1
        )

    def heads(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        """The output split by head: character logits, font logits, continuous (raw units)."""
        out = self(x)
        parts = torch.split(out, list(ENCODER_HEADS.values()), dim=1)
        return dict(zip(ENCODER_HEADS, parts))


class StandardisedGenerator(nn.Module):
    """g(z) on one scenario's standardised latents: unstandardise, then the raw-latent generator.

    Differentiable in z (explainers take gradients through it); its parameters are the frozen
    generator's.
    """

    mean: torch.Tensor  # a buffer (register_buffer)
    std: torch.Tensor  # a buffer (register_buffer)

    def __init__(self, generator: nn.Module, standardiser: LatentStandardiser) -> None:
        super().__init__()
        self.generator = generator
        self.register_buffer("mean", standardiser.mean.clone())
        self.register_buffer("std", standardiser.std.clone())

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        _check_latents(z)
        return self.generator(z * self.std + self.mean)


class LatentClassifier(nn.Module):
    """f(g(z)): a classifier of images composed with a (standardised-latent) generator."""

    def __init__(self, classifier: nn.Module, generator: nn.Module) -> None:
        super().__init__()
        self.classifier = classifier
        self.generator = generator

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.generator(z))


register_generative_architecture("glyph_generator", GlyphGenerator, family="autoencoder", input_shape=(LATENT_DIM,))
register_architecture("glyph_encoder", GlyphEncoder, family="classifier", input_shape=(1, CANVAS, CANVAS))
register_architecture("glyph_classifier", GlyphClassifier, family="classifier", input_shape=(1, CANVAS, CANVAS))

__all__ = [
    "ENCODER_HEADS",
    "GlyphClassifier",
    "GlyphEncoder",
    "GlyphGenerator",
    "LatentClassifier",
    "StandardisedGenerator",
]
