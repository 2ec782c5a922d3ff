"""Anti-causal predictors: small CNNs that read one parent of an SCM off an image.

Melistas et al. 2024 (§3.2, appendix 0.A.5) score effectiveness with a regressor per continuous
parent and a classifier per categorical one, trained on real data; they score composition in
the space of the predictors' last hidden layers too. :class:`AnticausalPredictor` is one such
network: four 3×3 convolutions (16, 32, 64, 64 channels; strides 1, 2, 2, 2; BatchNorm,
LeakyReLU 0.01, as their Table 17 but narrower for the CPU) → a 128-d hidden layer (the
embedding, :meth:`AnticausalPredictor.features`) → ``outputs`` values. A regressor
(``outputs=1``) stores the target's location and scale and returns values in the parent's own
units; a classifier returns logits.

:class:`PredictorRecipe` trains one (AdamW, linear warm-up then cosine decay; MSE on the
standardised target or cross-entropy) and plugs into the reference-model publishing of
:mod:`cfcheck.models.generative` (family ``"predictor"``). Nothing here names a domain: the
domain gives the data columns and measures the quality.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from cfcheck.core.seeds import SMALL_NET_EPOCH_ORDER
from cfcheck.models.shuffling import epoch_orders

from .generative.base import (
    GenerativeTrainConfig,
    GenerativeTrainResult,
    RecipeFields,
    register_generative_architecture,
)

__all__ = ["AnticausalPredictor", "PredictorRecipe", "train_predictor"]

EMBEDDING_DIM = 128


class AnticausalPredictor(nn.Module):
    """q(parent | x) for N×C×32×32 images (see the module docstring).

    Args:
        outputs: 1 for a regressor, the number of classes for a classifier.
        channels: image channels.
        width: channels of the first convolution (then 2×, 4×, 4×).

    Example:
        >>> AnticausalPredictor(outputs=1)(torch.zeros(2, 1, 32, 32)).shape
        torch.Size([2, 1])
        >>> AnticausalPredictor(outputs=10).features(torch.zeros(2, 1, 32, 32)).shape
        torch.Size([2, 128])
    """

    target_loc: torch.Tensor  # a buffer (register_buffer)
    target_scale: torch.Tensor  # a buffer (register_buffer)

    def __init__(self, outputs: int, channels: int = 1, width: int = 16) -> None:
        super().__init__()
        for name, value in (("outputs", outputs), ("channels", channels), ("width", width)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be an int >= 1, got {value!r}")
        self.outputs = outputs
        widths = (width, 2 * width, 4 * width, 4 * width)
        layers: list[nn.Module] = []
        previous = channels
        for index, out in enumerate(widths):
            layers += [
                nn.Conv2d(previous, out, 3, 1 if index == 0 else 2, 1, bias=False),
                nn.BatchNorm2d(out),
                nn.LeakyReLU(0.01),
            ]
            previous = out
        self.body = nn.Sequential(*layers, nn.Flatten())
        self.hidden = nn.Sequential(
            nn.Linear(previous * 4 * 4, EMBEDDING_DIM), nn.BatchNorm1d(EMBEDDING_DIM), nn.LeakyReLU(0.01)
        )
        self.head = nn.Linear(EMBEDDING_DIM, outputs)
        # a regressor's target statistics (set before training): outputs are in the parent's units
        self.register_buffer("target_loc", torch.zeros(()))
        self.register_buffer("target_scale", torch.ones(()))

    def _check(self, x: torch.Tensor) -> torch.Tensor:
        if not isinstance(x, torch.Tensor) or x.ndim != 4 or tuple(x.shape[2:]) != (32, 32):
            raise ValueError(f"x must be an N×C×32×32 tensor, got {getattr(x, 'shape', type(x).__name__)}")
        return x

    def features(self, x: torch.Tensor) -> torch.Tensor:
        """The 128-d last hidden layer (the embedding Melistas et al. compose on), N×128."""
        return self.hidden(self.body(self._check(x)))

    def standardised(self, x: torch.Tensor) -> torch.Tensor:
        """The head's raw output: standardised values (regressor) or logits (classifier)."""
        return self.head(self.features(x))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """N×1 predicted values in the parent's units (regressor) or N×classes logits (classifier)."""
        out = self.standardised(x)
        return out * self.target_scale + self.target_loc if self.outputs == 1 else out


register_generative_architecture("anticausal_predictor", AnticausalPredictor, family="predictor", replace=True)


def train_predictor(
    images: torch.Tensor,
    targets: torch.Tensor,
    arch_kwargs: Mapping[str, Any],
    config: GenerativeTrainConfig,
    log: Callable[[str], None] = print,
) -> dict[str, torch.Tensor]:
    """Trains an :class:`AnticausalPredictor` on ``images`` and ``targets``; returns its state dict.

    Args:
        images: N×C×32×32 in [0, 1].
        targets: N floats (a regressor: ``arch_kwargs["outputs"] == 1``) or N class indices.
        arch_kwargs: keyword arguments of :class:`AnticausalPredictor`.
        config: seed, epochs, batch size, peak learning rate; ``options`` may set
            ``weight_decay`` (default 1e-4) and ``warmup_steps`` (default 100).

    Raises:
        ValueError: for mismatched or empty inputs or unknown options.
    """
    unknown = sorted(set(config.options) - {"weight_decay", "warmup_steps"})
    if unknown:
        raise ValueError(f"unknown predictor option(s) {unknown}; expected weight_decay, warmup_steps")
    if images.ndim != 4 or targets.ndim != 1 or len(images) != len(targets) or len(images) < 2:
        raise ValueError(
            f"images must be N×C×H×W and targets N (N >= 2), got {tuple(images.shape)} and {tuple(targets.shape)}"
        )
    torch.manual_seed(config.seed)
    model = AnticausalPredictor(**dict(arch_kwargs))
    regression = model.outputs == 1
    if regression:
        model.target_loc.fill_(float(targets.double().mean()))
        model.target_scale.fill_(float(targets.double().std().clamp_min(1e-8)))
        goal = (targets.float() - model.target_loc) / model.target_scale
    else:
        goal = targets.long()
    optimiser = torch.optim.AdamW(
        model.parameters(), lr=config.lr, weight_decay=float(config.options.get("weight_decay", 1e-4))
    )
    n = len(images)
    per_epoch = max(1, n // config.batch_size)
    total, warmup = config.epochs * per_epoch, int(config.options.get("warmup_steps", 100))
    step = 0
    model.train()
    for epoch, order in epoch_orders(n, config.epochs, seed=config.seed, stream=SMALL_NET_EPOCH_ORDER):
        running = 0.0
        for position in range(per_epoch):
            rows = order[position * config.batch_size : (position + 1) * config.batch_size]
            out = model.standardised(images[rows])
            loss = F.mse_loss(out[:, 0], goal[rows]) if regression else F.cross_entropy(out, goal[rows])
            factor = min(1.0, (step + 1) / max(1, warmup)) * 0.5 * (1 + math.cos(math.pi * step / max(1, total)))
            for group in optimiser.param_groups:
                group["lr"] = config.lr * factor
            optimiser.zero_grad(set_to_none=True)
            loss.backward()
            optimiser.step()
            running += loss.item()
            step += 1
        log(f"epoch {epoch + 1}/{config.epochs} loss {running / per_epoch:.4f}")
    return {k: v.detach().clone() for k, v in model.eval().state_dict().items()}


@dataclass(frozen=True, kw_only=True)
class PredictorRecipe(RecipeFields):
    """An anti-causal predictor (implements :class:`~cfcheck.models.generative.GenerativeRecipe`).

    Attributes:
        name: model name within its domain.
        attribute: the parent it predicts (recorded in the manifest; the suites look it up by it).
        arch_kwargs: keyword arguments of :class:`AnticausalPredictor`.
        config: the training configuration (the split is the domain's evaluation-model split).
        smoke: the tiny configuration the tests train.
        quality_bar: metric -> ``{"min"/"max": v}`` over what ``measure_quality`` returns.
        purpose: one sentence for the manifest and the model card.
        columns: ``(data) -> (images, targets)``.
        measure_quality: ``(model in eval mode, config) -> {metric: value}``.
        notes: lines for the card.
    """

    attribute: str
    columns: Callable[[Any], tuple[torch.Tensor, torch.Tensor]] = field(compare=False)
    role: str = "anticausal_predictor"
    architecture: str = "anticausal_predictor"
    interface: str = (
        "forward(x) -> N×1 values of the parent in its own units (regressor) or N×K logits "
        "(classifier); features(x) -> the N×128 last hidden layer (the composition embedding)."
    )

    @property
    def manifest_fields(self) -> dict[str, Any]:
        """Extra manifest keys: the parent the predictor reads."""
        return {"attribute": self.attribute}

    def train(self, config: GenerativeTrainConfig, data: Any) -> GenerativeTrainResult:
        images, targets = self.columns(data)
        if config.n is not None:
            images, targets = images[: config.n], targets[: config.n]
        state = train_predictor(images, targets, self.arch_kwargs, config)
        model = AnticausalPredictor(**dict(self.arch_kwargs))
        model.load_state_dict(state)
        model.eval()
        with torch.no_grad():
            quality = dict(self.measure_quality(model, config))
        return GenerativeTrainResult(state_dict=state, quality=quality, examples=int(images.shape[0]))
