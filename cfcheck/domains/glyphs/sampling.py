"""The generative process of the glyph domain: scenarios, factors and their sampling.

Per image, in this order (Bex et al. §4.1, on Synbols):

1. character c uniform over the 48 characters; the causal label is its parity, c mod 2;
2. label y = parity, flipped with probability ``LABEL_NOISE`` (5%, so that a classifier also
   has a reason to rely on the font);
3. font: with probability n_spurious / n_fonts a *spurious* font, otherwise one of the others
   (uniform). The spurious fonts are split into two equal groups, one per label (the heaviest
   fonts for label 0, the lightest for label 1, so that the shortcut is learnable); a spurious
   image takes a font of its label's group with probability ``correlation`` and of the other
   group otherwise (uniform within the group). The font marginal stays uniform over all fonts;
   ``correlation`` is the share of spurious-font images whose font belongs to their label
   (0.5: no correlation, 0.95: strong);
4. nuisances, independent of everything: inverse colour ~ Bernoulli(0.5), rotation ~ N(0, 0.3²)
   radians, scale = 0.6·exp(0.2·N(0, 1)) (the glyph's longer side as a fraction of the canvas),
   translation x, y ~ U(−5, 5) pixels each.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import cast

import torch

from .fonts import FONTS, NUM_CHARACTERS, NUM_FONTS

LABEL_NOISE = 0.05
INVERSE_PROBABILITY = 0.5
ROTATION_SD = 0.3  # radians
SCALE_MEDIAN = 0.6
SCALE_LOG_SD = 0.2
MAX_SHIFT = 5.0  # pixels
#: The spurious fonts, in the order they are taken: label 0's group from the heaviest fonts (ink
#: over the glyph bank's canvas 9.2–11.5%), label 1's from the lightest (5.1–6.1%; the neutral fonts
#: 6.3–9.4%). A scenario with k spurious fonts per label takes the first k of each (so the 6
#: spurious fonts are among the 10). Stroke weight is a shortcut a small CNN learns within a few
#: epochs; a seeded random choice made groups that mixed weights and styles, which the bundled
#: classifiers could not tell apart at 32×32 (spurious and neutral font swaps flipped them equally
#: often), so no explainer could find a reliance to report.
SPURIOUS_FONT_ORDER: tuple[tuple[str, ...], tuple[str, ...]] = (
    (
        "DejaVuSans-Bold.ttf",
        "DejaVuSerif-Bold.ttf",
        "DejaVuSansMono-Bold.ttf",
        "DejaVuSans-BoldOblique.ttf",
        "DejaVuSerif-BoldItalic.ttf",
    ),
    ("cmr10.ttf", "cmti10.ttf", "cmmi10.ttf", "STIXGeneralItalic.ttf", "STIXGeneral.ttf"),
)


@dataclass(frozen=True)
class Scenario:
    """One of Bex et al.'s four data sets: how many fonts are spuriously correlated with the
    label, and how strongly (see the module docstring)."""

    name: str
    n_spurious: int
    correlation: float

    @property
    def spurious_fonts(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """(fonts of label 0, fonts of label 1): the first ``n_spurious / 2`` fonts of each group
        of ``SPURIOUS_FONT_ORDER`` (heavy fonts for label 0, light ones for label 1), as indices
        into ``FONTS``."""
        per_label = self.n_spurious // 2
        missing = [name for group in SPURIOUS_FONT_ORDER for name in group[:per_label] if name not in FONTS]
        if missing:
            raise RuntimeError(
                f"spurious font(s) {missing} are not among the usable fonts {FONTS}; the glyph "
                "scenarios need matplotlib's bundled DejaVu, STIX and Computer Modern fonts"
            )
        fonts = tuple(tuple(sorted(FONTS.index(name) for name in group[:per_label])) for group in SPURIOUS_FONT_ORDER)
        return cast(tuple[tuple[int, ...], tuple[int, ...]], fonts)  # SPURIOUS_FONT_ORDER holds two groups

    @property
    def neutral_fonts(self) -> tuple[int, ...]:
        """The fonts of neither spurious group, ascending (independent of the label)."""
        spurious = {*self.spurious_fonts[0], *self.spurious_fonts[1]}
        return tuple(f for f in range(NUM_FONTS) if f not in spurious)


SCENARIOS = {
    s.name: s
    for s in (
        Scenario("fonts6-corr50", 6, 0.50),
        Scenario("fonts6-corr95", 6, 0.95),
        Scenario("fonts10-corr50", 10, 0.50),
        Scenario("fonts10-corr95", 10, 0.95),
    )
}


def get_scenario(name: str) -> Scenario:
    """The scenario called ``name`` (a ValueError lists the four)."""
    if name not in SCENARIOS:
        raise ValueError(f"unknown glyph scenario {name!r}; expected one of {', '.join(SCENARIOS)}")
    return SCENARIOS[name]


@dataclass(frozen=True)
class GlyphFactors:
    """The generative factors of N images (all tensors of length N).

    Attributes:
        character: int64 index into ``CHARACTERS``.
        font: int64 index into ``FONTS``.
        label: int64 observed label (the parity, with label noise).
        inverse: float32 1.0 for a dark glyph on a light background, 0.0 otherwise.
        rotation: float32 radians (counter-clockwise on screen).
        scale: float32 the glyph's longer side as a fraction of the canvas side.
        shift_x, shift_y: float32 translation of the glyph's centre in pixels (right, down).
    """

    character: torch.Tensor
    font: torch.Tensor
    label: torch.Tensor
    inverse: torch.Tensor
    rotation: torch.Tensor
    scale: torch.Tensor
    shift_x: torch.Tensor
    shift_y: torch.Tensor

    def __post_init__(self) -> None:
        n = self.character.shape[0]
        for field in fields(self):
            value = getattr(self, field.name)
            if not isinstance(value, torch.Tensor) or value.shape != (n,):
                raise ValueError(f"GlyphFactors.{field.name} must be a tensor of shape ({n},)")

    def __len__(self) -> int:
        return int(self.character.shape[0])

    def __getitem__(self, index: object) -> GlyphFactors:
        return GlyphFactors(**{f.name: getattr(self, f.name)[index] for f in fields(self)})

    @property
    def parity(self) -> torch.Tensor:
        """The causal label: character index mod 2 (int64)."""
        return self.character % 2


def sample_factors(n: int, seed: int, scenario: Scenario) -> GlyphFactors:
    """``n`` draws of the generative process of ``scenario`` from ``seed`` (deterministic).

    Args:
        n: number of images (≥ 0).
        seed: the seed of a fresh ``torch.Generator``.
        scenario: which fonts are spurious and how strongly they follow the label.

    Returns:
        The factors; every draw is made for all N images at once, in a fixed order, so a
        prefix of a larger draw is *not* the same as a smaller draw (splits slice full draws).

    Example:
        >>> f = sample_factors(4, 0, SCENARIOS["fonts6-corr95"])
        >>> len(f), f.character.dtype
        (4, torch.int64)
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"n must be a non-negative int, got {n!r}")
    if not isinstance(scenario, Scenario):
        raise TypeError(f"scenario must be a Scenario, got {type(scenario).__name__}")
    g = torch.Generator().manual_seed(seed)
    character = torch.randint(0, NUM_CHARACTERS, (n,), generator=g)
    flip = torch.rand(n, generator=g) < LABEL_NOISE
    label = torch.where(flip, 1 - character % 2, character % 2)

    groups = scenario.spurious_fonts
    others = torch.tensor(scenario.neutral_fonts, dtype=torch.int64)
    group_table = torch.tensor(groups, dtype=torch.int64)  # 2 × n_spurious/2
    is_spurious = torch.rand(n, generator=g) < scenario.n_spurious / NUM_FONTS
    follows_label = torch.rand(n, generator=g) < scenario.correlation
    group = torch.where(follows_label, label, 1 - label)
    within = torch.randint(0, group_table.shape[1], (n,), generator=g)
    other = others[torch.randint(0, len(others), (n,), generator=g)]
    font = torch.where(is_spurious, group_table[group, within], other)

    inverse = (torch.rand(n, generator=g) < INVERSE_PROBABILITY).float()
    rotation = ROTATION_SD * torch.randn(n, generator=g)
    scale = SCALE_MEDIAN * torch.exp(SCALE_LOG_SD * torch.randn(n, generator=g))
    shift = (torch.rand(2, n, generator=g) * 2.0 - 1.0) * MAX_SHIFT
    return GlyphFactors(
        character=character,
        font=font,
        label=label,
        inverse=inverse,
        rotation=rotation,
        scale=scale,
        shift_x=shift[0].clone(),
        shift_y=shift[1].clone(),
    )


def spurious_correlation(factors: GlyphFactors, scenario: Scenario) -> tuple[float, int]:
    """The measured correlation: the share of spurious-font images whose font belongs to their
    label's group, and how many spurious-font images there are."""
    zero, one = (torch.tensor(group, dtype=torch.int64) for group in scenario.spurious_fonts)
    in_zero, in_one = torch.isin(factors.font, zero), torch.isin(factors.font, one)
    spurious = in_zero | in_one
    matches = (in_zero & (factors.label == 0)) | (in_one & (factors.label == 1))
    count = int(spurious.sum())
    return (float(matches.sum()) / count if count else float("nan")), count
