"""The denoising network of the bundled DDPMs: a ``diffusers`` ``UNet2DModel`` predicting noise.

Images enter cfcheck in ``[0, 1]``; the diffusion runs in ``[-1, 1]`` (:func:`to_diffusion_space`
and :func:`to_image_space` convert). The network carries its noise schedule, so one manifest
entry (architecture ``"ddpm_unet"`` + ``arch_kwargs``) rebuilds both the UNet and the
schedulers: :meth:`DenoisingUNet.training_scheduler` (``DDPMScheduler``) and
:meth:`DenoisingUNet.sampling_scheduler` (``DDIMScheduler``).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

__all__ = ["DenoisingUNet", "to_diffusion_space", "to_image_space"]


def to_diffusion_space(images: torch.Tensor) -> torch.Tensor:
    """Maps images in ``[0, 1]`` to the diffusion's ``[-1, 1]``."""
    return images * 2.0 - 1.0


def to_image_space(x: torch.Tensor) -> torch.Tensor:
    """Maps diffusion samples back to images, clamped to ``[0, 1]``."""
    return ((x + 1.0) / 2.0).clamp(0.0, 1.0)


class DenoisingUNet(nn.Module):
    """ε-prediction UNet with its noise schedule.

    Args:
        sample_size: image side in pixels.
        channels: image channels.
        block_out_channels: channels per resolution level (each level halves the side).
        layers_per_block: ResNet blocks per down level (up levels get one more).
        norm_num_groups: GroupNorm groups (must divide every entry of ``block_out_channels``).
        num_train_timesteps: T of the forward process.
        beta_schedule: a ``diffusers`` schedule name (``"squaredcos_cap_v2"`` is the cosine
            schedule of Nichol & Dhariwal, kinder to small images than ``"linear"``).

    Example:
        >>> net = DenoisingUNet(block_out_channels=(8, 8), norm_num_groups=4)
        >>> net(torch.zeros(2, 1, 32, 32), torch.tensor([0, 999])).shape
        torch.Size([2, 1, 32, 32])
    """

    alphas_cumprod: torch.Tensor  # a buffer (register_buffer)

    def __init__(
        self,
        sample_size: int = 32,
        channels: int = 1,
        block_out_channels: Sequence[int] = (16, 32, 32),
        layers_per_block: int = 1,
        norm_num_groups: int = 8,
        num_train_timesteps: int = 1000,
        beta_schedule: str = "squaredcos_cap_v2",
    ) -> None:
        super().__init__()
        from diffusers import UNet2DModel

        levels = len(block_out_channels)
        if levels < 1 or any(c % norm_num_groups for c in block_out_channels):
            raise ValueError(
                f"norm_num_groups={norm_num_groups} must divide every entry of "
                f"block_out_channels={tuple(block_out_channels)}"
            )
        self.sample_size = sample_size
        self.channels = channels
        self.num_train_timesteps = num_train_timesteps
        self.beta_schedule = beta_schedule
        self.unet = UNet2DModel(
            sample_size=sample_size,
            in_channels=channels,
            out_channels=channels,
            block_out_channels=tuple(block_out_channels),
            layers_per_block=layers_per_block,
            down_block_types=("DownBlock2D",) * levels,
            up_block_types=("UpBlock2D",) * levels,
            norm_num_groups=norm_num_groups,
        )
        scheduler = self.training_scheduler()
        self.register_buffer("alphas_cumprod", scheduler.alphas_cumprod.clone().float(), persistent=False)

    #: model-space units per image unit (images in [0, 1] live in [-1, 1] here)
    model_space_scale = 2.0

    @staticmethod
    def to_model_space(images: torch.Tensor) -> torch.Tensor:
        return to_diffusion_space(images)

    @staticmethod
    def to_data_space(x: torch.Tensor) -> torch.Tensor:
        return to_image_space(x)

    def forward(self, x_t: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        """The predicted noise ε̂(x_t, t) for a batch of noisy images in diffusion space."""
        if t.dim() == 0:
            t = t.expand(x_t.shape[0])
        # nn.Module.__call__ is there at run time; mypy, reading diffusers 0.42, finds UNet2DModel not callable
        return self.unet(x_t, t).sample  # type: ignore[operator]

    def training_scheduler(self):
        """A fresh ``DDPMScheduler`` with this network's schedule (ε prediction)."""
        from diffusers import DDPMScheduler

        return DDPMScheduler(
            num_train_timesteps=self.num_train_timesteps, beta_schedule=self.beta_schedule, prediction_type="epsilon"
        )

    def sampling_scheduler(self):
        """A fresh ``DDIMScheduler`` with this network's schedule (η = 0, no clipping)."""
        from diffusers import DDIMScheduler

        return DDIMScheduler(
            num_train_timesteps=self.num_train_timesteps,
            beta_schedule=self.beta_schedule,
            prediction_type="epsilon",
            clip_sample=False,
            set_alpha_to_one=True,
        )
