"""Fixed data splits, attribute bins and the labelled-image container."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from cfcheck.core.answer_reads import read_answer
from cfcheck.core.cache import file_digest, memoise_on_disk
from cfcheck.domains.base import split_prefix_size

from .fonts import FONT_SOURCES
from .rendering import render
from .scm import MorphoFactors, sample_factors

#: Each split is its own fixed seed, so the splits are disjoint draws of the SCM. Roles: train
#: (explained classifiers), oracle (oracles, attribute oracles, embedding), val (model selection,
#: feature standardisation, the ideal pairs), test (the inputs that are scored), reference (real
#: images for realism references and real-vs-real floors; never trained on, never scored),
#: reference_extra (more such images, for the tasks whose class of counterfactuals outgrows the
#: reference split: the full profile's "ideal" pairs send 300 inputs to one class, which needs
#: 2,100 real images of it where the reference split holds 1,963).
SPLIT_SEEDS = {
    "train": 1_000,
    "val": 2_000,
    "test": 3_000,
    "oracle": 4_000,
    "reference": 5_000,
    "reference_extra": 6_000,
}
SPLIT_SIZES = {
    "train": 30_000,
    "val": 3_000,
    "test": 5_000,
    "oracle": 30_000,
    "reference": 20_000,
    "reference_extra": 20_000,
}

#: the split whose images are scored (``MorphoDomain.split_roles["scored"]``): its factors are the
#: exogenous noise the true counterfactual is computed from, so a method that reads them is noticed
SCORED_SPLIT = "test"
#: what a read of those factors is reported as (:func:`cfcheck.core.answer_reads.read_answer`)
SCORED_FACTORS = "factors of the scored split"

#: Inner edges of 3 equal-mass bins of the SCM marginals (tertiles). Thickness from the Gamma
#: quantile function; intensity from 4·10⁶ Monte-Carlo draws (re-checked in the tests).
THICKNESS_BIN_EDGES = (2.1788, 2.7133)
INTENSITY_BIN_EDGES = (128.80, 182.04)


@dataclass(frozen=True)
class LabeledImages:
    """Images (N×1×32×32), digit labels (N, int64) and the factors that generated them (``split``:
    the split's name; reading the scored split's factors is a read of the answer)."""

    images: torch.Tensor
    labels: torch.Tensor
    factors: MorphoFactors
    split: str | None = field(default=None, compare=False)

    def __getattribute__(self, name: str) -> Any:
        if name == "factors" and object.__getattribute__(self, "split") == SCORED_SPLIT:
            read_answer(SCORED_FACTORS)
        return object.__getattribute__(self, name)

    def __post_init__(self) -> None:
        n = len(object.__getattribute__(self, "factors"))
        if self.images.shape[0] != n or self.labels.shape != (n,):
            raise ValueError(
                f"LabeledImages parts disagree: images {tuple(self.images.shape)}, labels "
                f"{tuple(self.labels.shape)}, factors {n}"
            )

    def __len__(self) -> int:
        return int(self.labels.shape[0])


def _bin(values: object, edges: tuple[float, ...], name: str) -> torch.Tensor:
    tensor = torch.as_tensor(values, dtype=torch.float32)
    if not torch.isfinite(tensor).all():
        raise ValueError(f"{name} values must be finite")
    return torch.bucketize(tensor, torch.tensor(edges, dtype=torch.float32), right=True)


def thickness_bin(t: object) -> torch.Tensor:
    """Thickness → bin index in {0, 1, 2} (thin, medium, thick)."""
    return _bin(t, THICKNESS_BIN_EDGES, "thickness")


def intensity_bin(i: object) -> torch.Tensor:
    """Intensity → bin index in {0, 1, 2} (dark, medium, bright)."""
    return _bin(i, INTENSITY_BIN_EDGES, "intensity")


def split_factors(name: str, n: int | None = None) -> MorphoFactors:
    """The factors of a split (or its first ``n``) without rendering (those of the scored split are
    a read of the answer)."""
    factors = _split_factors(name, n)
    if name == SCORED_SPLIT:
        read_answer(SCORED_FACTORS)
    return factors


def _split_factors(name: str, n: int | None = None) -> MorphoFactors:
    n = split_prefix_size(name, n, SPLIT_SIZES)
    # Sampling the full split is cheap (milliseconds); slicing it makes prefixes exact by design.
    return _all_split_factors(name)[:n]


@functools.lru_cache(maxsize=len(SPLIT_SEEDS))
def _all_split_factors(name: str) -> MorphoFactors:
    return sample_factors(SPLIT_SIZES[name], SPLIT_SEEDS[name])


def load_split(name: str, n: int | None = None) -> LabeledImages:
    """A rendered split, or its first ``n`` images (memoised: treat the tensors as read-only).

    ``n=None`` and ``n=<full size>`` share one cache entry, so the full split is rendered once.
    """
    factors = _split_factors(name, n)  # validates name and n
    return _rendered_split(name, len(factors))


#: Splits (or prefixes) up to this many images are kept on disk once rendered (80 MB at most);
#: larger ones (the training splits, rendered only by the training recipes) are not.
DISK_CACHED_IMAGES = 20_000


@functools.lru_cache(maxsize=8)
def _rendered_split(name: str, n: int) -> LabeledImages:
    factors = _split_factors(name, n)
    if 0 < n <= DISK_CACHED_IMAGES:
        # rendering depends on the domain's code and on the font files
        code = file_digest(*sorted(Path(__file__).parent.glob("*.py")))
        images = memoise_on_disk(
            "morpho.split",
            lambda: {"images": render(factors)},
            split=name,
            n=n,
            code=code,
            font_files=FONT_SOURCES["font_files"],
            seed=SPLIT_SEEDS[name],
        )["images"]
    else:
        images = render(factors)
    return LabeledImages(images=images, labels=factors.digit.clone(), factors=factors, split=name)
