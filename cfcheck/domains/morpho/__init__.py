"""morpho: Morpho-MNIST-like digits (32×32, 1 channel) from a known structural causal model."""

from __future__ import annotations

from .domain import MorphoDomain, true_counterfactual
from .fonts import FONTS
from .measure import measure_intensity, measure_thickness
from .rendering import IMAGE_SHAPE, render
from .scm import NUM_CLASSES, MorphoFactors, intervene, sample_factors
from .splits import (
    INTENSITY_BIN_EDGES,
    SPLIT_SIZES,
    THICKNESS_BIN_EDGES,
    LabeledImages,
    intensity_bin,
    load_split,
    thickness_bin,
)

__all__ = [
    "FONTS",
    "IMAGE_SHAPE",
    "INTENSITY_BIN_EDGES",
    "NUM_CLASSES",
    "SPLIT_SIZES",
    "THICKNESS_BIN_EDGES",
    "LabeledImages",
    "MorphoDomain",
    "MorphoFactors",
    "intensity_bin",
    "intervene",
    "load_split",
    "measure_intensity",
    "measure_thickness",
    "render",
    "sample_factors",
    "thickness_bin",
    "true_counterfactual",
]
