"""The glyph domain (Synbols-like, Bex et al.) behind the :class:`cfcheck.domains.base.Domain`
protocol: one instance per scenario of spurious fonts.

The domain has no structural causal model to intervene on (``factor_names`` is empty, so the
SCM kind skips it). It gives seeded splits, the exact latent z of every sample, the embedding
tables and proximity radii of Bex et al.'s metrics, the causal oracle h_causal on latents, and
its bundled models (``recipes.py``): the scenario's classifier, the generator g(z) and the
encoder q(x). Their roles are ``latent_explained``, ``latent_generator`` and ``latent_encoder``:
deliberately not ``explained``, which would make the VCE and attribution kinds run on glyphs,
whose oracle committee, attribute oracles and embedding network do not exist.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import torch

from cfcheck.domains.base import INTERVENTION_COUNTERFACTUAL, BundledDomain, require
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
from .networks import ENCODER_HEADS, LatentClassifier, StandardisedGenerator
from .recipes import classifier_name
from .rendering import IMAGE_SHAPE
from .sampling import SCENARIOS, Scenario, get_scenario
from .splits import SPLIT_SEEDS, GlyphImages, load_split, split_latents, standardiser

#: The scenario ``get_domain("glyphs")`` serves: few spurious fonts, strongly correlated.
DEFAULT_SCENARIO = "fonts6-corr95"
#: Bex et al.'s proximity radius of the continuous attributes (L1, standardised units).
CONTINUOUS_RADIUS = 1.0


class GlyphsDomain(BundledDomain):
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
    input_shape: tuple[int, ...] = IMAGE_SHAPE
    image_shape = IMAGE_SHAPE
    num_classes = 2
    class_names: tuple[str, ...] = ("even", "odd")
    factor_names: tuple[str, ...] = ()
    categorical_factors: tuple[str, ...] = ()
    split_roles: Mapping[str, str] = {"train": "train", "selection": "val", "scored": "test", "reference": "reference"}
    #: the latent kind's interface (``cfcheck.kinds.latent.spec``): latents, latent_classifier,
    #: latent_generator, latent_layout, causal_oracle, clip_latents, variants/variant
    capabilities: frozenset[str] = frozenset({"latent_space"})
    #: one variant per scenario, each with its own explained classifier
    variants = tuple(SCENARIOS)
    characters = CHARACTERS
    fonts = FONTS
    latent_names = LATENT_NAMES
    latent_dim = LATENT_DIM
    character_slice = CHARACTER_SLICE
    font_slice = FONT_SLICE
    continuous_slice = CONTINUOUS_SLICE

    def __init__(self, scenario: str = DEFAULT_SCENARIO) -> None:
        self.scenario: Scenario = get_scenario(scenario)
        #: role -> bundled model names (``cfcheck.models.registry``, domain "glyphs")
        self.model_roles: Mapping[str, tuple[str, ...]] = {
            "latent_explained": (classifier_name(self.scenario.name),),
            "latent_generator": ("generator",),
            "latent_encoder": ("encoder",),
        }

    def variant(self, name: str) -> GlyphsDomain:
        """The domain of scenario ``name`` (one instance per scenario)."""
        return _scenario_domain(name)

    def clip_latents(self, z: torch.Tensor) -> torch.Tensor:
        """``z`` (..., 11) clipped to the scenario's train box, coordinate by coordinate."""
        return self.standardiser.clip(self._check_latents(z))

    # -- bundled models ------------------------------------------------------------------------
    def _load(self, name: str, weights_dir: str | None = None) -> torch.nn.Module:
        from cfcheck.models.registry import load_model

        return load_model(name, domain=self.name, weights_dir=weights_dir)

    def explained_classifier(self, weights_dir: str | None = None) -> torch.nn.Module:
        """The scenario's bundled classifier f (images -> 2 logits), frozen, verified."""
        return self._load(self.model_roles["latent_explained"][0], weights_dir)

    def latent_generator(self, weights_dir: str | None = None) -> StandardisedGenerator:
        """g(z) on this scenario's standardised latents (N×11 -> N×1×32×32), frozen."""
        raw = self._load(self.model_roles["latent_generator"][0], weights_dir)
        return StandardisedGenerator(raw, self.standardiser).eval()

    def latent_encoder(self, weights_dir: str | None = None) -> torch.nn.Module:
        """q(x): images -> 48 character logits, 22 font logits, 5 raw continuous attributes."""
        return self._load(self.model_roles["latent_encoder"][0], weights_dir)

    def latent_classifier(self, weights_dir: str | None = None) -> LatentClassifier:
        """f(g(z)): the scenario's classifier on generated images, a function of z (differentiable)."""
        return LatentClassifier(self.explained_classifier(weights_dir), self.latent_generator(weights_dir)).eval()

    def encode(self, images: torch.Tensor, encoder: torch.nn.Module | None = None) -> torch.Tensor:
        """Standardised latents (N×11) the encoder reads off ``images``: the embeddings of its
        most likely character and font, and its continuous attributes."""
        from cfcheck.models.inference import batched_apply

        encoder = encoder if encoder is not None else self.latent_encoder()
        character, font, continuous = torch.split(batched_apply(encoder, images), list(ENCODER_HEADS.values()), 1)
        raw = torch.cat([CHARACTER_EMBEDDING[character.argmax(1)], FONT_EMBEDDING[font.argmax(1)], continuous], 1)
        return self.standardiser.standardise(raw)

    def retrain(self, request: Any) -> dict[str, Any]:
        """Trains the glyph models (all, or ``request.only``) with the glyph recipes
        (:func:`~cfcheck.domains.glyphs.training.retrain_glyph_models`)."""
        from .training import retrain_glyph_models

        return retrain_glyph_models(request)

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

    @property
    def neutral_fonts(self) -> tuple[int, ...]:
        """Indices of the fonts in neither spurious group."""
        return self.scenario.neutral_fonts

    @property
    def spurious_categories(self) -> dict[str, tuple[tuple[int, ...], ...]]:
        """The latent groups tied to the label by the scenario: {"font": (label 0's, label 1's)}
        (what an oracle explainer such as informed search may know)."""
        return {"font": self.spurious_fonts}

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
            CategoricalGroup(
                "character", (CHARACTER_SLICE.start, CHARACTER_SLICE.stop), self.character_embedding, radii["character"]
            ),
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

    def sample_intervention(
        self, factor: str, parents: dict[str, torch.Tensor], generator: torch.Generator
    ) -> torch.Tensor:
        raise ValueError(f"unknown factor {factor!r}: the glyphs domain has no structural causal model (no factors)")

    def parent_bin(self, factor: str, values: torch.Tensor) -> torch.Tensor:
        raise ValueError(f"unknown factor {factor!r}: the glyphs domain has no structural causal model (no factors)")

    def intervention_counterfactual(
        self, split: str, index: torch.Tensor, intervention: dict[str, torch.Tensor]
    ) -> torch.Tensor:
        require(self, INTERVENTION_COUNTERFACTUAL)  # always raises MissingCapability
        raise AssertionError("unreachable")

    def __repr__(self) -> str:
        return f"GlyphsDomain({self.scenario.name!r})"


@functools.lru_cache(maxsize=len(SCENARIOS))
def _scenario_domain(name: str) -> GlyphsDomain:
    return GlyphsDomain(name)


__all__ = ["DEFAULT_SCENARIO", "SCENARIOS", "GlyphsDomain"]
