"""The glyph domain (Synbols-like, Bex et al.) behind the :class:`cfcheck.domains.base.Domain`
protocol: one instance per scenario of spurious fonts.

The domain has no structural causal model to intervene on (``factor_names`` is empty, so the
SCM kind skips it) and, until its generator, encoder and classifiers are bundled, no reference
models (``model_roles`` is empty, so the VCE and attribution kinds skip it too). What it gives
now: seeded splits, the exact latent z of every sample, the embedding tables and proximity
radii of Bex et al.'s metrics, and the causal oracle h_causal on latents.
"""

from __future__ import annotations

import torch

from cfcheck.domains.base import INTERVENTION_COUNTERFACTUAL, require
from cfcheck.metrics.synbols import CategoricalGroup, LatentLayout

from .fonts import CHARACTERS, FONTS
from .latent import (
    CHARACTER_EMBEDDING,
    CHARACTER_SLICE,
    CONTINUOUS_SLICE,
    FONT_EMBEDDING,
    FONT_SLICE,
    LATENT_DIM,
    LATENT_NAMES,
    LatentStandardiser,
    nearest_category,
    proximity_radius,
)
from .rendering import IMAGE_SHAPE
from .sampling import SCENARIOS, Scenario, get_scenario
from .splits import SPLIT_SEEDS, GlyphImages, load_split, split_latents, standardiser

#: The scenario ``get_domain("glyphs")`` serves: few spurious fonts, strongly correlated.
DEFAULT_SCENARIO = "fonts6-corr95"
#: Bex et al.'s proximity radius of the continuous attributes (L1, standardised units).
CONTINUOUS_RADIUS = 1.0


class GlyphsDomain:
    """48 characters in 22 fonts with spurious font–label correlations (see the module docstring).

    Args:
        scenario: one of ``SCENARIOS`` ("fonts6-corr50", "fonts6-corr95", "fonts10-corr50",
            "fonts10-corr95"); default ``DEFAULT_SCENARIO``.

    Example:
        >>> domain = GlyphsDomain("fonts10-corr50")
        >>> domain.latents("test", 2).shape
        torch.Size([2, 11])
    """

    name = "glyphs"
    input_shape = IMAGE_SHAPE
    image_shape = IMAGE_SHAPE
    num_classes = 2
    class_names = ("even", "odd")
    factor_names: tuple[str, ...] = ()
    categorical_factors: tuple[str, ...] = ()
    split_roles = {"train": "train", "selection": "val", "scored": "test", "reference": "reference"}
    model_roles: dict[str, tuple[str, ...]] = {}
    capabilities: frozenset[str] = frozenset()
    characters = CHARACTERS
    fonts = FONTS
    latent_names = LATENT_NAMES
    latent_dim = LATENT_DIM
    character_slice = CHARACTER_SLICE
    font_slice = FONT_SLICE
    continuous_slice = CONTINUOUS_SLICE

    def __init__(self, scenario: str = DEFAULT_SCENARIO) -> None:
        self.scenario: Scenario = get_scenario(scenario)

    # -- data ----------------------------------------------------------------------------------
    def split(self, name: str, n: int | None = None) -> GlyphImages:
        """A split of the scenario, or its first ``n`` samples (deterministic, memoised)."""
        return load_split(self.scenario.name, name, n)

    def latents(self, split: str, n: int | None = None) -> torch.Tensor:
        """The standardised latents z (float32 n×11) of a split, without rendering it."""
        return split_latents(self.scenario.name, split, n)

    @property
    def standardiser(self) -> LatentStandardiser:
        """The scenario's latent standardisation and clipping box (its train split's statistics)."""
        return standardiser(self.scenario.name)

    @property
    def spurious_fonts(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """Indices of the fonts correlated with label 0 and with label 1."""
        return self.scenario.spurious_fonts

    # -- the latent space's categories, radii and the causal oracle --------------------------
    @property
    def character_embedding(self) -> torch.Tensor:
        """48×3, character k's embedding in standardised latent coordinates."""
        return self.standardiser.embedding(CHARACTER_EMBEDDING, CHARACTER_SLICE)

    @property
    def font_embedding(self) -> torch.Tensor:
        """22×3, font k's embedding in standardised latent coordinates."""
        return self.standardiser.embedding(FONT_EMBEDDING, FONT_SLICE)

    def proximity_radii(self) -> dict[str, float]:
        """Bex et al.'s per-group L1 radii: the largest pairwise distance between embeddings of
        the characters and of the fonts, and 1 for the continuous attributes."""
        return {
            "character": proximity_radius(self.character_embedding),
            "font": proximity_radius(self.font_embedding),
            "continuous": CONTINUOUS_RADIUS,
        }

    def latent_layout(self) -> LatentLayout:
        """The latent space's groups for Bex et al.'s metrics (:mod:`cfcheck.metrics.synbols`):
        the character and font embeddings with their radii, then the continuous attributes."""
        radii = self.proximity_radii()
        groups = [
            CategoricalGroup("character", (CHARACTER_SLICE.start, CHARACTER_SLICE.stop), self.character_embedding,
                             radii["character"]),
            CategoricalGroup("font", (FONT_SLICE.start, FONT_SLICE.stop), self.font_embedding, radii["font"]),
        ]
        continuous = (CONTINUOUS_SLICE.start, CONTINUOUS_SLICE.stop)
        return LatentLayout(groups, continuous, continuous_radius=radii["continuous"])

    def _check_latents(self, z: torch.Tensor) -> torch.Tensor:
        z = torch.as_tensor(z)
        if not z.is_floating_point() or z.ndim < 1 or z.shape[-1] != LATENT_DIM:
            raise ValueError(f"latents must be a float tensor of shape (..., {LATENT_DIM}), got {tuple(z.shape)}")
        if not bool(torch.isfinite(z).all()):
            raise ValueError("latents must be finite")
        return z

    def decode_categories(self, z: torch.Tensor) -> dict[str, torch.Tensor]:
        """The character and font of latents ``z`` (..., 11): the nearest embedding of each."""
        z = self._check_latents(z)
        return {
            "character": nearest_category(z[..., CHARACTER_SLICE], self.character_embedding),
            "font": nearest_category(z[..., FONT_SLICE], self.font_embedding),
        }

    def causal_oracle(self, z: torch.Tensor) -> torch.Tensor:
        """h_causal(z) (int64, shape z.shape[:-1]): the parity of the decoded character."""
        return self.decode_categories(z)["character"] % 2

    # -- the Domain protocol's SCM part: there is no SCM to intervene on -----------------------
    def parents(self, split: str, index: torch.Tensor) -> dict[str, torch.Tensor]:
        """No SCM parents: always an empty dict (after checking the split name)."""
        if split not in SPLIT_SEEDS:
            raise ValueError(f"unknown split {split!r}; expected one of {sorted(SPLIT_SEEDS)}")
        return {}

    def sample_intervention(self, factor: str, parents: dict[str, torch.Tensor], generator: torch.Generator
                            ) -> torch.Tensor:
        raise ValueError(f"unknown factor {factor!r}: the glyphs domain has no structural causal model (no factors)")

    def intervention_counterfactual(self, split: str, index: torch.Tensor, intervention: dict[str, torch.Tensor]
                                    ) -> torch.Tensor:
        require(self, INTERVENTION_COUNTERFACTUAL)  # always raises MissingCapability
        raise AssertionError("unreachable")

    def __repr__(self) -> str:
        return f"GlyphsDomain({self.scenario.name!r})"


__all__ = ["DEFAULT_SCENARIO", "SCENARIOS", "GlyphsDomain"]
