"""glyphs: Synbols-like characters (32×32, 1 channel) with fonts spuriously correlated with the
label, in the four scenarios of Bex et al. (see ``sampling.py`` for the generative process and
``latent.py`` for the latent space)."""

from __future__ import annotations

from .domain import CONTINUOUS_RADIUS, DEFAULT_SCENARIO, GlyphsDomain
from .fonts import CHARACTERS, FONTS, NUM_CHARACTERS, NUM_FONTS
from .latent import LATENT_DIM, LATENT_NAMES, LatentStandardiser, raw_latents
from .rendering import IMAGE_SHAPE, render
from .sampling import LABEL_NOISE, SCENARIOS, GlyphFactors, Scenario, get_scenario, sample_factors, spurious_correlation
from .splits import SPLIT_SEEDS, SPLIT_SIZES, GlyphImages, load_split

__all__ = [
    "CHARACTERS",
    "CONTINUOUS_RADIUS",
    "DEFAULT_SCENARIO",
    "FONTS",
    "IMAGE_SHAPE",
    "LABEL_NOISE",
    "LATENT_DIM",
    "LATENT_NAMES",
    "NUM_CHARACTERS",
    "NUM_FONTS",
    "SCENARIOS",
    "SPLIT_SEEDS",
    "SPLIT_SIZES",
    "GlyphFactors",
    "GlyphImages",
    "GlyphsDomain",
    "LatentStandardiser",
    "Scenario",
    "get_scenario",
    "load_split",
    "raw_latents",
    "render",
    "sample_factors",
    "spurious_correlation",
]
