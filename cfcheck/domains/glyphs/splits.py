"""Fixed, seeded splits of each scenario, their latents, and the labelled-image container."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import torch

from cfcheck.core.cache import file_digest, memoise_on_disk
from cfcheck.domains.base import split_prefix_size

from .fonts import FONT_SOURCES
from .latent import LatentStandardiser, raw_latents
from .rendering import render
from .sampling import SCENARIOS, GlyphFactors, get_scenario, sample_factors

#: Each split is its own fixed seed (plus 100 × the scenario's position in ``SCENARIOS``), so
#: splits and scenarios are independent draws. Roles as in the other domains: train (explained
#: classifiers, latent standardisation), val (model selection), test (the inputs that are
#: scored), reference (real images for realism references; never trained on, never scored).
SPLIT_SEEDS = {"train": 71_000, "val": 72_000, "test": 73_000, "reference": 75_000}
SPLIT_SIZES = {"train": 30_000, "val": 3_000, "test": 5_000, "reference": 10_000}
#: Splits (or prefixes) up to this many images are kept on disk once rendered (80 MB at most).
DISK_CACHED_IMAGES = 20_000


def split_seed(scenario: str, split: str) -> int:
    """The seed of ``split`` in ``scenario``."""
    return SPLIT_SEEDS[split] + 100 * list(SCENARIOS).index(get_scenario(scenario).name)


@dataclass(frozen=True)
class GlyphImages:
    """Images, labels, generative factors and standardised latents of N samples.

    Attributes:
        images: float32 N×1×32×32 in [0, 1].
        labels: int64 N, the observed labels (parity with 5% label noise): what classifiers learn.
        factors: the :class:`GlyphFactors` that generated the images.
        latents: float32 N×11, the standardised latent z of every image (see ``latent.py``).
    """

    images: torch.Tensor
    labels: torch.Tensor
    factors: GlyphFactors
    latents: torch.Tensor

    def __post_init__(self) -> None:
        n = len(self.factors)
        if self.images.shape[0] != n or self.labels.shape != (n,) or self.latents.shape[0] != n:
            raise ValueError(
                f"GlyphImages parts disagree: images {tuple(self.images.shape)}, labels "
                f"{tuple(self.labels.shape)}, latents {tuple(self.latents.shape)}, factors {n}"
            )

    def __len__(self) -> int:
        return int(self.labels.shape[0])

    @property
    def causal_labels(self) -> torch.Tensor:
        """h_causal of every sample: the parity of its character (int64 N)."""
        return self.factors.parity


@functools.lru_cache(maxsize=4 * len(SPLIT_SEEDS))
def _all_split_factors(scenario: str, split: str) -> GlyphFactors:
    return sample_factors(SPLIT_SIZES[split], split_seed(scenario, split), get_scenario(scenario))


def split_factors(scenario: str, split: str, n: int | None = None) -> GlyphFactors:
    """The factors of a split (or its first ``n``) without rendering (milliseconds)."""
    get_scenario(scenario)
    n = split_prefix_size(split, n, SPLIT_SIZES)
    return _all_split_factors(scenario, split)[:n]


@functools.lru_cache(maxsize=len(SCENARIOS))
def standardiser(scenario: str) -> LatentStandardiser:
    """The latent standardisation of ``scenario``: its train split's statistics."""
    return LatentStandardiser.fit(raw_latents(split_factors(scenario, "train")))


def split_latents(scenario: str, split: str, n: int | None = None) -> torch.Tensor:
    """Standardised latents (float32 n×11) of a split or its first ``n`` samples."""
    return standardiser(scenario).standardise(raw_latents(split_factors(scenario, split, n)))


def load_split(scenario: str, split: str, n: int | None = None) -> GlyphImages:
    """A rendered split of ``scenario``, or its first ``n`` images (memoised: treat the tensors
    as read-only). ``n=None`` and ``n=<full size>`` share one cache entry."""
    factors = split_factors(scenario, split, n)  # validates the names and n
    return _rendered_split(scenario, split, len(factors))


@functools.lru_cache(maxsize=8)
def _rendered_split(scenario: str, split: str, n: int) -> GlyphImages:
    factors = split_factors(scenario, split, n)
    if 0 < n <= DISK_CACHED_IMAGES:
        code = file_digest(*sorted(Path(__file__).parent.glob("*.py")))
        images = memoise_on_disk(
            "glyphs.split",
            lambda: {"images": render(factors)},
            scenario=scenario,
            split=split,
            n=n,
            code=code,
            font_files=FONT_SOURCES["font_files"],
            seed=split_seed(scenario, split),
        )["images"]
    else:
        images = render(factors)
    return GlyphImages(
        images=images, labels=factors.label.clone(), factors=factors, latents=split_latents(scenario, split, n)
    )
