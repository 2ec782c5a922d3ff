"""The models of the ``scm_colour`` test domain (:mod:`tests.own_domains.scm_colour`), as a user's model
store names them (``tests.own_domains.scm_colour_nets:<builder>``). Every reading is in closed form:

* the shape's **coverage** of each pixel: the background is the top-left pixel (no shape reaches a
  corner), the shape's colour the pixel farthest from it (a fully covered one), and a pixel's coverage
  its projection on the segment between them (an anti-aliased pixel is their blend);
* :class:`ShapeReader` — ``shape``'s anti-causal predictor (4 logits): the coverage's fill of its
  bounding box (disc π/4, square 1, triangle and diamond 1/2) and the offset of its centroid below the
  box's centre in half heights (the apex-up triangle 1/3, the others 0), nearest prototype first;
* :class:`SizeHueReader` — two heads, ``{"size": N, "hue": N}`` (:func:`read`): the size from the
  covered area and the read shape's fill (area = fill · (2·size)²), the hue of the shape's colour;
* :func:`fixed_embedding` — those readings and a seeded random convolutional block
  (:class:`tests.own_domains.scm_shapes_nets.Embedding` on three channels).

The minimality VAE is :class:`tests.own_domains.scm_shapes_nets.VAE` on 3·32·32 values.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from .scm_shapes_nets import Embedding

#: each shape's fill of its bounding box and its centroid's offset below the box centre (half heights)
PROTOTYPES = ((math.pi / 4, 0.0), (1.0, 0.0), (0.5, 1.0 / 3.0), (0.5, 0.0))


def coverage(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(coverage N×H×W in [0, 1], the shape's colour N×3) of N×3×H×W images (module docstring)."""
    x = x.float()
    background = x[:, :, 0, 0]
    apart = x - background[:, :, None, None]
    farthest = apart.pow(2).sum(1).flatten(1).argmax(1)
    colour = x.flatten(2).gather(2, farthest[:, None, None].expand(-1, x.shape[1], 1))[:, :, 0]
    axis = colour - background
    share = (apart * axis[:, :, None, None]).sum(1) / axis.pow(2).sum(1).clamp_min(1e-6)[:, None, None]
    return share.clamp(0.0, 1.0), colour


def rgb_to_hue(colour: torch.Tensor) -> torch.Tensor:
    """The hue in [0, 1) of N×3 RGB colours (HSV's)."""
    r, g, b = colour.unbind(1)
    top, bottom = colour.amax(1), colour.amin(1)
    spread = (top - bottom).clamp_min(1e-6)
    sector = torch.where(
        top == r,
        torch.remainder((g - b) / spread, 6.0),
        torch.where(top == g, (b - r) / spread + 2, (r - g) / spread + 4),
    )
    return sector / 6.0


def shape_features(alpha: torch.Tensor) -> torch.Tensor:
    """N×3: the covered area, the fill of the bounding box, the centroid's offset below the box centre."""
    columns, rows = alpha.amax(1), alpha.amax(2)  # N×W, N×H: the extents' profiles
    width, height = columns.sum(1), rows.sum(1)
    area = alpha.sum((1, 2))
    ys = torch.arange(alpha.shape[1], dtype=alpha.dtype)
    centroid = (alpha.sum(2) * ys).sum(1) / area.clamp_min(1e-6)
    centre = (rows * ys).sum(1) / height.clamp_min(1e-6)
    offset = (centroid - centre) / (height / 2).clamp_min(1e-3)
    return torch.stack([area, area / (width * height).clamp_min(1e-3), offset], 1)


def shape_logits(features: torch.Tensor, prototypes: torch.Tensor) -> torch.Tensor:
    """−50 × the L1 distance of (fill, offset) to each shape's prototype."""
    return -50.0 * (features[:, None, 1:] - prototypes[None]).abs().sum(2)


def read(x: torch.Tensor, prototypes: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(size N, hue N, :func:`shape_features` N×3) of N×3×H×W images: the size from the covered area and
    the fill of the read shape (``area = fill·(2·size)²``), the hue of the shape's colour."""
    alpha, colour = coverage(x)
    features = shape_features(alpha)
    fill = shape_logits(features, prototypes).softmax(1) @ prototypes[:, 0]
    return (features[:, 0] / (4 * fill)).sqrt(), rgb_to_hue(colour), features


class ShapeReader(nn.Module):
    """Reads ``shape`` off an image: 4 logits (module docstring)."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("prototypes", torch.tensor(PROTOTYPES))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return shape_logits(shape_features(coverage(x)[0]), self.prototypes)


class SizeHueReader(nn.Module):
    """Reads ``size`` and ``hue`` off an image (a two-headed predictor)."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("prototypes", torch.tensor(PROTOTYPES))

    def forward(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        size, hue, _ = read(x, self.prototypes)
        return {"size": size, "hue": hue}


class ColourEmbedding(Embedding):
    """:class:`~tests.own_domains.scm_shapes_nets.Embedding` on RGB, its readings size, hue, fill and offset."""

    def __init__(self, width: int = 4) -> None:
        super().__init__(width, channels=3)
        self.register_buffer("prototypes", torch.tensor(PROTOTYPES))

    def readings(self, x: torch.Tensor) -> torch.Tensor:
        size, hue, features = read(x, self.prototypes)
        return torch.stack([size, hue, features[:, 1], features[:, 2]], 1)


def shape_reader() -> nn.Module:
    return ShapeReader()


def size_hue_reader() -> nn.Module:
    return SizeHueReader()


def fixed_embedding() -> nn.Module:
    torch.manual_seed(0)
    return ColourEmbedding()
