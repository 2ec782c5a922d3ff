"""What a domain may offer the attribution kind beyond the Domain protocol, as typed protocols
(checked with ``isinstance``; a domain without one gets the documented default or a skip)."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import torch


@runtime_checkable
class ExactDenoiser(Protocol):
    """The domain's diffusion denoiser in closed form (GOAR projects with it instead of a trained model)."""

    def exact_denoiser(self) -> Any: ...


@runtime_checkable
class PixelGrid(Protocol):
    """Vector inputs laid out on a grid (removal ranks and imputes their coordinates as pixels)."""

    pixel_grid: tuple[int, ...]


@runtime_checkable
class GoarLevels(Protocol):
    """GOAR strengths the domain needs (multiples of the removal scale) when the profile sets none."""

    goar_levels: tuple[float, ...]


@runtime_checkable
class ClassFeature(Protocol):
    """The domain knows each input's class-relevant feature (a true attribution to compare with)."""

    def class_feature(self, target: torch.Tensor) -> torch.Tensor: ...
