"""Architectures of the bundled reference models (small, CPU-trainable, 32×32 grey images).

Every module takes images in [0, 1] shaped N×1×32×32 and does its own input normalisation,
so callers (counterfactual methods, metrics) never need to know how a network was trained.
Classifiers return logits N×K. The embedding network returns its 64-d features instead; its
training heads stay inside the module so the shipped weights are complete.

Architectures are looked up by name through :func:`build_model`, which is what the
manifest records (``architecture`` + ``arch_kwargs``), so a weight file can always be
re-instantiated from its manifest entry alone.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

from ..builders import register_architecture
from .logit_standardisation import LogitStandardisation, StandardisedLogits, calibrate_logits

__all__ = [
    "ARCHITECTURES",
    "IMAGE_SHAPE",
    "AllConvNet",
    "EmbeddingNet",
    "LogitStandardisation",
    "StandardisedLogits",
    "build_model",
    "calibrate_logits",
    "count_parameters",
]

IMAGE_SHAPE = (1, 32, 32)


class _Standardise(nn.Module):
    """Maps [0, 1] pixels to roughly zero-mean, unit-scale inputs inside the network."""

    def __init__(self, mean: float = 0.5, std: float = 0.5) -> None:
        super().__init__()
        self.mean = mean
        self.std = std

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x - self.mean) / self.std


def _check_images(x: torch.Tensor) -> None:
    if x.ndim != 4 or tuple(x.shape[1:]) != IMAGE_SHAPE:
        raise ValueError(
            f"expected images shaped N×{IMAGE_SHAPE[0]}×{IMAGE_SHAPE[1]}×{IMAGE_SHAPE[2]}, got {tuple(x.shape)}"
        )


class SmallCNN(nn.Module):
    """The explained classifier family (``cnn``, ``robust_cnn``, ``noise_cnn``, ``random_net``).

    Three 3×3 conv + max-pool stages and one hidden dense layer: accurate on 32×32 digits
    yet small enough that PGD adversarial training fits the CPU budget. Sharing one
    architecture across the four explained CNNs isolates the effect of training.
    ``standardise_logits=True`` appends a :class:`LogitStandardisation` (buffers
    ``logit_standardisation.mean``/``.std``/``.bias``), used by the untrained ``random_net``; the default
    adds nothing, so the trained models' state dicts are unchanged.
    """

    def __init__(
        self,
        num_classes: int = 10,
        width: int = 16,
        hidden: int = 128,
        standardise_logits: bool = False,
    ) -> None:
        super().__init__()
        self.num_classes = num_classes
        self.standardise = _Standardise()
        self.features = nn.Sequential(
            nn.Conv2d(1, width, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(width, 2 * width, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(2 * width, 2 * width, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
        )
        self.classifier = nn.Sequential(
            nn.Flatten(),
            nn.Linear(2 * width * 4 * 4, hidden),
            nn.ReLU(),
            nn.Linear(hidden, num_classes),
        )
        # registered last: the buffers draw no random numbers, so weights stay seed-identical
        self.logit_standardisation = LogitStandardisation(num_classes) if standardise_logits else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _check_images(x)
        logits = self.classifier(self.features(self.standardise(x)))
        if self.logit_standardisation is not None:
            logits = self.logit_standardisation(logits)
        return logits


class MLP(nn.Module):
    """Low-capacity classifier: one hidden layer on raw pixels, no spatial prior."""

    def __init__(self, num_classes: int = 10, hidden: int = 128) -> None:
        super().__init__()
        self.num_classes = num_classes
        self.standardise = _Standardise()
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(32 * 32, hidden), nn.ReLU(), nn.Linear(hidden, num_classes))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _check_images(x)
        return self.net(self.standardise(x))


class _BasicBlock(nn.Module):
    """ResNet basic block (post-activation) with a 1×1 projection when the shape changes."""

    def __init__(self, in_channels: int, out_channels: int, stride: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, out_channels, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(out_channels)
        self.conv2 = nn.Conv2d(out_channels, out_channels, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(out_channels)
        self.shortcut: nn.Module = nn.Identity()
        if stride != 1 or in_channels != out_channels:
            self.shortcut = nn.Sequential(
                nn.Conv2d(in_channels, out_channels, 1, stride, bias=False),
                nn.BatchNorm2d(out_channels),
            )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return torch.relu(out + self.shortcut(x))


class SmallResNet(nn.Module):
    """Oracle committee member: residual blocks, batch norm, global average pooling."""

    def __init__(self, num_classes: int = 10, width: int = 16) -> None:
        super().__init__()
        self.num_classes = num_classes
        self.standardise = _Standardise()
        self.stem = nn.Sequential(  # stride 2: 16×16 feature maps keep it CPU-cheap
            nn.Conv2d(1, width, 3, stride=2, padding=1, bias=False),
            nn.BatchNorm2d(width),
            nn.ReLU(),
        )
        self.stages = nn.Sequential(
            _BasicBlock(width, width, 1),
            _BasicBlock(width, 2 * width, 2),
            _BasicBlock(2 * width, 4 * width, 2),
        )
        self.head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4 * width, num_classes))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _check_images(x)
        return self.head(self.stages(self.stem(self.standardise(x))))


class WideCNN(nn.Module):
    """Oracle committee member: deeper plain CNN, 5×5 first kernel, wide dense layer, dropout."""

    def __init__(
        self,
        num_classes: int = 10,
        channels: tuple[int, int, int, int] = (24, 32, 48, 48),
        hidden: int = 256,
        dropout: float = 0.3,
    ) -> None:
        super().__init__()
        self.num_classes = num_classes
        self.standardise = _Standardise()
        c1, c2, c3, c4 = channels
        self.features = nn.Sequential(
            nn.Conv2d(1, c1, 5, padding=2),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(c1, c2, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(c2, c3, 3, padding=1),
            nn.ReLU(),
            nn.Conv2d(c3, c4, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
        )
        self.classifier = nn.Sequential(
            nn.Flatten(),
            nn.Dropout(dropout),
            nn.Linear(c4 * 4 * 4, hidden),
            nn.ReLU(),
            nn.Dropout(dropout),
            nn.Linear(hidden, num_classes),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _check_images(x)
        return self.classifier(self.features(self.standardise(x)))


class LeNet(nn.Module):
    """Oracle committee member: LeNet-5 style, tanh activations and average pooling."""

    def __init__(self, num_classes: int = 10, channels: tuple[int, int] = (16, 32)) -> None:
        super().__init__()
        self.num_classes = num_classes
        self.standardise = _Standardise()
        c1, c2 = channels
        self.features = nn.Sequential(
            nn.Conv2d(1, c1, 5),
            nn.Tanh(),
            nn.AvgPool2d(2),  # 32 -> 28 -> 14
            nn.Conv2d(c1, c2, 5),
            nn.Tanh(),
            nn.AvgPool2d(2),  # 14 -> 10 -> 5
        )
        self.classifier = nn.Sequential(
            nn.Flatten(),
            nn.Linear(c2 * 5 * 5, 120),
            nn.Tanh(),
            nn.Linear(120, 84),
            nn.Tanh(),
            nn.Linear(84, num_classes),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _check_images(x)
        return self.classifier(self.features(self.standardise(x)))


class AllConvNet(nn.Module):
    """Strided all-convolutional net: no pooling layers, GroupNorm, SiLU, global average pool.

    Down-sampling by stride-2 convolutions (Springenberg et al. 2015), a 1×1 convolution as
    classifier and global average pooling: no max-pooling, no dense layer on a flattened map,
    no ReLU and no batch statistics, unlike every explained classifier and committee member.
    """

    def __init__(
        self,
        num_classes: int = 10,
        channels: tuple[int, int, int] = (32, 64, 96),
        groups: int = 8,
    ) -> None:
        super().__init__()
        self.num_classes = num_classes
        self.standardise = _Standardise()
        c1, c2, c3 = channels

        def block(cin: int, cout: int, stride: int) -> list[nn.Module]:
            return [nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.GroupNorm(groups, cout), nn.SiLU()]

        self.features = nn.Sequential(
            *block(1, c1, 1),
            *block(c1, c1, 2),  # 32² -> 16²
            *block(c1, c2, 1),
            *block(c2, c2, 2),  # 16² -> 8²
            *block(c2, c3, 1),
            *block(c3, c3, 2),  # 8² -> 4²
        )
        self.classifier = nn.Sequential(nn.Conv2d(c3, num_classes, 1), nn.AdaptiveAvgPool2d(1), nn.Flatten())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _check_images(x)
        return self.classifier(self.features(self.standardise(x)))


class EmbeddingNet(nn.Module):
    """Domain embedding for FID / KID / perceptual distance.

    Trained multi-task, one head per labelled factor of the domain (``head_classes``: factor →
    number of values; default one 10-way ``"class"`` head), so its features encode every factor,
    not only the class. ``forward`` returns the 64-d features
    (``num_features``); ``feature_maps`` returns the intermediate conv activations that the
    LPIPS formula compares; ``head_logits`` exposes the training heads.
    """

    num_features = 64

    def __init__(self, head_classes: dict[str, int] | None = None, width: int = 16) -> None:
        super().__init__()
        if head_classes is None:
            head_classes = {"class": 10}
        if not head_classes or any(int(k) < 2 for k in head_classes.values()):
            raise ValueError(f"head_classes needs ≥1 head with ≥2 classes each, got {head_classes}")
        self.head_classes = dict(head_classes)
        self.standardise = _Standardise()
        w = width
        self.blocks = nn.ModuleList(
            [
                nn.Sequential(nn.Conv2d(1, w, 3, padding=1), nn.ReLU()),  # 32²
                nn.Sequential(nn.MaxPool2d(2), nn.Conv2d(w, 2 * w, 3, padding=1), nn.ReLU()),  # 16²
                nn.Sequential(nn.MaxPool2d(2), nn.Conv2d(2 * w, 4 * w, 3, padding=1), nn.ReLU()),  # 8²
                nn.Sequential(nn.MaxPool2d(2), nn.Conv2d(4 * w, 4 * w, 3, padding=1), nn.ReLU()),  # 4²
            ]
        )
        self.project = nn.Sequential(
            nn.Flatten(),
            nn.Linear(4 * w * 4 * 4, 128),
            nn.ReLU(),
            nn.Linear(128, self.num_features),
        )
        self.heads = nn.ModuleDict(
            {name: nn.Linear(self.num_features, int(k)) for name, k in self.head_classes.items()}
        )

    def feature_maps(self, x: torch.Tensor) -> list[torch.Tensor]:
        """Activations after each of the four conv blocks (32², 16², 8², 4² resolution)."""
        _check_images(x)
        h = self.standardise(x)
        maps = []
        for block in self.blocks:
            h = block(h)
            maps.append(h)
        return maps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.project(self.feature_maps(x)[-1])

    def head_logits(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        """Logits of every training head (the class and each attribute the recipe names)."""
        features = self.forward(x)
        return {name: head(features) for name, head in self.heads.items()}


ARCHITECTURES: dict[str, Callable[..., nn.Module]] = {
    "small_cnn": SmallCNN,
    "mlp": MLP,
    "small_resnet": SmallResNet,
    "wide_cnn": WideCNN,
    "lenet": LeNet,
    "allconv": AllConvNet,
    "embedding_net": EmbeddingNet,
}


for _name, _factory in ARCHITECTURES.items():
    # the registry builds them through cfcheck.models.builders, which knows every family
    register_architecture(_name, _factory, family="classifier", input_shape=IMAGE_SHAPE)


def build_model(architecture: str, **kwargs: object) -> nn.Module:
    """Instantiates a classifier architecture; unknown names list the known ones.

    Only the networks of this module (32×32 grey images); the registry builds every family
    through :func:`cfcheck.models.builders.build_model`.
    """
    if not isinstance(architecture, str):
        raise TypeError(f"architecture must be a str, got {type(architecture).__name__}")
    try:
        factory = ARCHITECTURES[architecture]
    except KeyError:
        raise ValueError(f"unknown architecture {architecture!r}; expected one of {sorted(ARCHITECTURES)}") from None
    channels = kwargs.get("channels")
    if isinstance(channels, list):
        kwargs["channels"] = tuple(channels)  # JSON round-trip turns tuples to lists
    return factory(**kwargs)


def count_parameters(model: nn.Module) -> int:
    """Number of scalar parameters (trainable or frozen) in ``model``."""
    return sum(p.numel() for p in model.parameters())
