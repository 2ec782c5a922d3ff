"""Deterministic training of a test domain's models (one CPU thread, fixed seeds), saved into the
domain's :class:`~cfcheck.models.store.ModelStore` with the builder that rebuilds each network.

The explained classifier learns from the ``train`` split; the oracles and the embedding from
``oracle_train`` (so no scoring model learnt what the explained one did). Each split is topped up with
freshly rendered images of the same scene (``Scene.extra_per_class`` per class, from a seed of the
split's own, never part of the domain's data): a user with a generator would do the same, and the
few hundred images of a split alone leave the networks short of the 95% accuracy bar. Each model's
accuracy on the ``scored`` and ``selection`` splits goes into its manifest entry (``quality``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn

from cfcheck.models.store import ModelStore

from . import nets
from .scenes import Scene

#: the module the manifest's builders name (importable with the repository root on sys.path)
BATCH = 64
BUILDER_MODULE = "tests.own_domains.nets"


@dataclass(frozen=True)
class Recipe:
    """How one model is built and trained."""

    builder: str
    split: str
    epochs: int
    kwargs: dict[str, int] = field(default_factory=dict)
    lr: float = 3e-3


#: model name → recipe; the role map of every test domain names these models
RECIPES: dict[str, Recipe] = {
    "cnn": Recipe("explained_cnn", "train", epochs=6, kwargs={"width": 16}),
    "oracle_lenet": Recipe("lenet_oracle", "oracle_train", epochs=5, kwargs={"width": 12}),
    "oracle_strided": Recipe("strided_oracle", "oracle_train", epochs=5, kwargs={"width": 16}),
    "oracle_wide": Recipe("wide_shallow_oracle", "oracle_train", epochs=6, kwargs={"width": 16}),
    "embedding": Recipe("embedding", "oracle_train", epochs=6, kwargs={"width": 16, "dim": 32}),
}
#: the seed of each split's top-up images (the domain's own data uses seed 0)
EXTRA_SEEDS = {"train": 101, "oracle_train": 202}
MODEL_ROLES: dict[str, tuple[str, ...]] = {
    "explained": ("cnn",),
    "oracles": ("oracle_lenet", "oracle_strided", "oracle_wide"),
    "embedding": ("embedding",),
}


def logits_of(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """Class logits (the embedding network classifies through ``classify``)."""
    classify = getattr(model, "classify", None)
    return classify(x) if callable(classify) else model(x)


def fit(model: nn.Module, images: torch.Tensor, labels: torch.Tensor, recipe: Recipe, seed: int) -> nn.Module:
    """Adam on cross-entropy, batches of 32 in a seeded order; returns the model in eval mode."""
    generator = torch.Generator().manual_seed(seed)
    optimiser = torch.optim.Adam(model.parameters(), lr=recipe.lr)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimiser, T_max=recipe.epochs)
    model.train()
    for _ in range(recipe.epochs):
        order = torch.randperm(len(labels), generator=generator)
        for start in range(0, len(order), BATCH):
            rows = order[start : start + BATCH]
            optimiser.zero_grad()
            nn.functional.cross_entropy(logits_of(model, images[rows]), labels[rows]).backward()
            optimiser.step()
        schedule.step()
    return model.eval()


def accuracy(model: nn.Module, images: torch.Tensor, labels: torch.Tensor) -> float:
    """Share of ``images`` the model assigns their label."""
    with torch.no_grad():
        predicted = torch.cat([logits_of(model, chunk).argmax(1) for chunk in images.split(512)])
    return float((predicted == labels).float().mean())


def training_data(domain: Any, scene: Scene, split: str) -> tuple[torch.Tensor, torch.Tensor]:
    """A split's images and labels, topped up with the scene's freshly rendered extra images."""
    data = domain.split(split)
    extra, labels, _ = scene.dataset(EXTRA_SEEDS[split], per_class=scene.extra_per_class)
    images = torch.cat([data.images, torch.from_numpy(extra).float().div_(255.0)])
    return images, torch.cat([data.labels, torch.from_numpy(labels)])


def train_all(domain: Any, scene: Scene, store: ModelStore) -> dict[str, float]:
    """Train every model of :data:`RECIPES` on ``domain``'s splits (topped up from ``scene``), add it
    to ``store``; returns each model's accuracy on the scored split."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        shape = {"channels": int(domain.input_shape[0]), "classes": int(domain.num_classes)}
        scored, selection = domain.split("scored"), domain.split("selection")
        quality = {}
        data = {split: training_data(domain, scene, split) for split in EXTRA_SEEDS}
        for seed, (name, recipe) in enumerate(RECIPES.items()):
            kwargs = {**shape, **recipe.kwargs}
            torch.manual_seed(seed)
            model = getattr(nets, recipe.builder)(**kwargs)
            fit(model, *data[recipe.split], recipe, seed)
            quality[name] = accuracy(model, scored.images, scored.labels)
            store.add(
                name,
                model,
                builder=f"{BUILDER_MODULE}:{recipe.builder}",
                arch_kwargs=kwargs,
                trained_on=recipe.split,
                quality={
                    "scored_accuracy": round(quality[name], 4),
                    "selection_accuracy": round(accuracy(model, selection.images, selection.labels), 4),
                },
            )
        return quality
    finally:
        torch.set_num_threads(previous)
