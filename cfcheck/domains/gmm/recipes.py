"""The gmm reference model: the 3-layer MLP Park et al. (2023, §5.1) explain on the toy.

Found by the generic training code (:mod:`cfcheck.models.classifiers.training`) through
:meth:`cfcheck.domains.gmm.domain.GMMDomain.model_recipes`. The classes overlap little (the
means are 2·√64 = 16 apart, the noise has standard deviation √0.3 per coordinate), so the
Bayes accuracy is Φ(8/√0.3) ≈ 1 and the MLP must reach ≥ 0.99 on the test split.
"""

from __future__ import annotations

from typing import Any

import torch

from cfcheck.models.classifiers.recipes import ModelSpec, TrainingRecipe

from .mixture import DIM, SPLIT_SEEDS

__all__ = ["GMM_RECIPES", "MLP_SPEC", "GMMRecipes"]

#: what a gmm model predicts: the mixture component
TASKS = ("label",)

MLP_SPEC = ModelSpec(
    "mlp",
    "classifier",
    "label",
    "vector_mlp",
    {"in_features": DIM, "num_classes": 2, "hidden": 64},
    TrainingRecipe(
        seed=71,
        split="train",
        n=None,
        epochs=3,
        batch_size=256,
        lr=3e-4,
        select_on="last",
        selection_split="val",
        selection_n=2000,
    ),
    {"test_accuracy": {"min": 0.99}},
    "classifier to explain on the Gaussian-mixture toy (Park et al. 2023 §5.1): 64 → 64 → 64 → 2, ReLU",
)


class GMMRecipes:
    """The gmm recipe table behind the generic ``ModelRecipes`` protocol."""

    tasks = TASKS

    def specs(self) -> dict[str, ModelSpec]:
        return {MLP_SPEC.name: MLP_SPEC}

    def targets(self, task: str, data: Any) -> dict[str, torch.Tensor]:
        if task != "label":
            raise ValueError(f"unknown task {task!r}; expected one of {TASKS}")
        return {"label": data.labels}

    def split_seed(self, split: str) -> int | None:
        return SPLIT_SEEDS.get(split)

    def __repr__(self) -> str:
        return "GMMRecipes()"


GMM_RECIPES = GMMRecipes()
