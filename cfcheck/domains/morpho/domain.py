"""The morpho domain behind the :class:`cfcheck.domains.base.Domain` protocol."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from typing import TYPE_CHECKING, Any

import torch

from cfcheck.core.answer_reads import reads_answer
from cfcheck.domains.base import (
    CLASS_COUNTERFACTUAL,
    FACTOR_MEASUREMENT,
    INTERVENTION_COUNTERFACTUAL,
    PARENT_RESAMPLING,
    BundledDomain,
)

from .rendering import IMAGE_SHAPE, render
from .scm import NUM_CLASSES, MorphoFactors, abduct_intensity_noise, intensity_mechanism, intervene, sample_factors
from .splits import SCORED_SPLIT, LabeledImages, load_split, split_factors

if TYPE_CHECKING:  # imported when called: the recipes need cfcheck.models
    from .recipes import MorphoRecipes

#: Bins of a continuous parent for interventions: Melistas et al. draw each do() value in
#: another of 10 bins; ours are the deciles of the train split.
INTERVENTION_BINS = 10


@reads_answer("true_counterfactual")  # the answer: a method that calls it is noticed
def true_counterfactual(factors: MorphoFactors, **intervention: object) -> torch.Tensor:
    """Abduction is free (factors hold the exogenous noise): intervene, propagate, re-render."""
    return render(intervene(factors, **intervention))


class MorphoDomain(BundledDomain):
    """Morpho-MNIST-like digits with a known SCM and computable true counterfactuals."""

    name = "morpho"
    input_shape = IMAGE_SHAPE
    image_shape = IMAGE_SHAPE
    num_classes = NUM_CLASSES
    class_names = tuple(str(d) for d in range(NUM_CLASSES))
    factor_names = ("thickness", "intensity", "digit")
    categorical_factors = ("digit",)
    split_roles = {
        "train": "train",
        "selection": "val",
        "scored": SCORED_SPLIT,
        "reference": "reference",
        "reference_extra": "reference_extra",
    }
    model_roles: Mapping[str, tuple[str, ...]] = {
        "explained": ("cnn", "robust_cnn", "mlp", "noise_cnn"),
        "random": ("random_net",),
        "randomisation_counterpart": ("cnn",),
        "robust": ("robust_cnn",),
        "diffusion": ("ddpm",),
        "retrained": ("cnn",),  # ROAR and GOAR retrain the CNN's recipe on removed images
        "attribute_mechanisms": ("thickness_flow", "intensity_flow"),
        "scm_image_mechanisms": ("cvae", "chvae", "cgan"),  # conditional VAE, hierarchical VAE, GAN
        "anticausal_predictors": ("predictor_thickness", "predictor_intensity", "predictor_digit"),
        "minimality_vae": ("cld_vae",),
        "oracles": ("oracle_lenet", "oracle_resnet", "oracle_wide_cnn"),
        "attribute_oracles": ("attr_digit", "attr_intensity", "attr_thickness"),
        "class_attribute_oracle": ("attr_digit",),
        "embedding": ("embedding",),
        "autoencoders": ("ae_all", *(f"ae_class{digit}" for digit in range(NUM_CLASSES))),
    }
    capabilities = frozenset({CLASS_COUNTERFACTUAL, INTERVENTION_COUNTERFACTUAL, FACTOR_MEASUREMENT, PARENT_RESAMPLING})

    def split(self, name: str, n: int | None = None) -> LabeledImages:
        return load_split(name, n)

    def true_counterfactual(self, factors: MorphoFactors, **intervention: object) -> torch.Tensor:
        return true_counterfactual(factors, **intervention)

    @reads_answer("class_counterfactual")
    def class_counterfactual(self, factors: MorphoFactors, target: torch.Tensor) -> torch.Tensor:
        """The true counterfactual under do(class = target): same style, thickness, intensity."""
        return true_counterfactual(factors, digit=target)

    # -- the SCM's parents and interventions ----------------------------------------------
    def parents(self, split: str, index: torch.Tensor) -> dict[str, torch.Tensor]:
        factors = split_factors(split)
        return {
            "thickness": factors.thickness[index].clone(),
            "intensity": factors.intensity[index].clone(),
            "digit": factors.digit[index].clone(),
        }

    @cached_property
    def _bin_edges(self) -> dict[str, torch.Tensor]:
        factors = split_factors(self.split_roles["train"])
        levels = torch.linspace(0, 1, INTERVENTION_BINS + 1, dtype=torch.float64)
        return {
            name: torch.quantile(getattr(factors, name).double(), levels).float() for name in ("thickness", "intensity")
        }

    def sample_intervention(
        self, factor: str, parents: dict[str, torch.Tensor], generator: torch.Generator
    ) -> torch.Tensor:
        """do() values: digit → a uniformly drawn other digit; thickness, intensity → uniform in
        a uniformly drawn other decile bin of the train split."""
        current = parents[factor]
        n = len(current)
        if factor == "digit":
            shift = torch.randint(1, NUM_CLASSES, (n,), generator=generator)
            return (current + shift) % NUM_CLASSES
        edges = self._edges(factor)
        observed = self.parent_bin(factor, current)
        shift = torch.randint(1, INTERVENTION_BINS, (n,), generator=generator)
        chosen = (observed + shift) % INTERVENTION_BINS
        low, high = edges[chosen], edges[chosen + 1]
        return low + (high - low) * torch.rand(n, generator=generator)

    def _edges(self, factor: str) -> torch.Tensor:
        if factor not in self._bin_edges:
            raise ValueError(f"unknown factor {factor!r}; morpho factors: {self.factor_names}")
        return self._bin_edges[factor]

    def parent_bin(self, factor: str, values: torch.Tensor) -> torch.Tensor:
        """Digit → the digit; thickness, intensity → their decile bin of the train split (0–9), the
        bins interventions move a value out of (Melistas et al.'s 10 bins, also CLD's)."""
        if factor == "digit":
            return values.long()
        return torch.bucketize(values.float(), self._edges(factor)[1:-1], right=True)

    @reads_answer("intervention_counterfactual")
    def intervention_counterfactual(
        self, split: str, index: torch.Tensor, intervention: dict[str, torch.Tensor]
    ) -> torch.Tensor:
        factors = split_factors(split)[index]
        return true_counterfactual(factors, **intervention)

    @reads_answer("counterfactual_parents")
    def counterfactual_parents(
        self, split: str, index: torch.Tensor, intervention: dict[str, torch.Tensor]
    ) -> dict[str, torch.Tensor]:
        """The parents after the intervention, propagated by the SCM (do(t) moves the intensity)."""
        factors = intervene(split_factors(split)[index], **intervention)
        return {name: getattr(factors, name).clone() for name in self.factor_names}

    def propagate_parents(
        self, parents: dict[str, torch.Tensor], intervention: dict[str, torch.Tensor]
    ) -> dict[str, torch.Tensor]:
        """Counterfactual parents from the observed ones alone (abduction of the intensity noise ε
        from thickness and intensity, action, prediction): what an SCM method can compute."""
        new = {name: parents[name].clone() for name in self.factor_names}
        if "thickness" in intervention and "intensity" not in intervention:
            eps = abduct_intensity_noise(parents["thickness"], parents["intensity"])
            new["intensity"] = intensity_mechanism(intervention["thickness"].float(), eps)
        new.update({name: value.clone() for name, value in intervention.items()})
        return new

    def measure_factors(self, images: torch.Tensor) -> dict[str, torch.Tensor]:
        """The continuous factors read off the images: stroke thickness (px) and intensity (grey level)."""
        from .measure import measure_intensity, measure_thickness

        return {"thickness": measure_thickness(images), "intensity": measure_intensity(images)}

    def resample_with_parents(self, parents: dict[str, torch.Tensor], seed: int) -> torch.Tensor:
        """New images with exactly these parents and a fresh style (font, pose) drawn from ``seed``."""
        style = sample_factors(len(parents["digit"]), seed)
        factors = intervene(
            style, digit=parents["digit"], thickness=parents["thickness"], intensity=parents["intensity"]
        )
        return render(factors)

    # -- reference models --------------------------------------------------------------
    def model_recipes(self) -> MorphoRecipes:
        """The recipes of the morpho reference models (the optional ``model_recipes`` hook)."""
        from .recipes import RECIPES

        return RECIPES

    def attribute_mechanisms(self, models: Mapping[str, Any]) -> object:
        """The learned attribute mechanisms (thickness and intensity flows) of the bundled SCM
        generators, from ``models`` (name -> module, e.g. a method's ``cfcheck_models``)."""
        from .scm_mechanisms import MorphoAttributeMechanisms

        thickness, intensity = self.model_roles["attribute_mechanisms"]
        return MorphoAttributeMechanisms(models[thickness], models[intensity])

    def generative_recipes(self) -> dict[str, object]:
        """The recipes of the morpho generative models (the optional ``generative_recipes`` hook)."""
        from .generative import GENERATIVE_RECIPES

        return dict(GENERATIVE_RECIPES)

    def __repr__(self) -> str:
        return "MorphoDomain()"
