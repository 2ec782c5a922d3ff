"""How much a scenario's classifier relies on the spurious fonts, measured where the latent
explainers look: through the generator, f(g(z)).

For test latents z, the font embedding is swapped for a seeded random font from one of three pools
(the spurious group of the *other* predicted label, the spurious group of the predicted label, or
the non-spurious fonts) and the share of predictions that change is counted. A classifier that has
learnt the spurious correlation flips more often towards the other label's group than towards a
neutral font, and less often towards its own label's group. The image-space counterpart (each
sample re-rendered with another font) is on every classifier's card
(``training.classifier_quality``).

    python -m cfcheck.domains.glyphs.reliance
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, cast

import torch

from .latent import FONT_SLICE
from .sampling import SCENARIOS

if TYPE_CHECKING:
    from .domain import GlyphsDomain

POOLS = ("other_label_spurious", "own_label_spurious", "neutral")


def latent_font_swap_flip_rates(domain, n: int = 2000, seed: int = 0) -> dict[str, float]:
    """The flip rate of ``domain``'s latent classifier under a font swap from each of ``POOLS``.

    Args:
        domain: a ``GlyphsDomain`` (one scenario's variant).
        n: number of test latents (≥ 1).
        seed: seed of the font draws.

    Returns:
        ``{pool: flip rate}`` for the three pools, plus ``n``.

    Example:
        >>> from cfcheck.domains import get_domain
        >>> rates = latent_font_swap_flip_rates(get_domain("glyphs").variant("fonts6-corr95"), n=64)
        >>> sorted(rates)
        ['n', 'neutral', 'other_label_spurious', 'own_label_spurious']
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a positive int, got {n!r}")
    classifier = domain.latent_classifier()
    z = domain.latents("test", n)
    embedding = domain.font_embedding.to(z.dtype)
    groups = [torch.tensor(group, dtype=torch.int64) for group in domain.spurious_fonts]
    neutral = torch.tensor(domain.neutral_fonts, dtype=torch.int64)
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        predicted = classifier(z).argmax(1)

        def flip_rate(pool_of_label: dict[int, torch.Tensor]) -> float:
            swapped = z.clone()
            for label, pool in pool_of_label.items():
                rows = (predicted == label).nonzero().flatten()
                fonts = pool[torch.randint(0, len(pool), (len(rows),), generator=generator)]
                swapped[rows, FONT_SLICE] = embedding[fonts]
            return float((classifier(swapped).argmax(1) != predicted).double().mean())

        rates = {
            "other_label_spurious": flip_rate({0: groups[1], 1: groups[0]}),
            "own_label_spurious": flip_rate({0: groups[0], 1: groups[1]}),
            "neutral": flip_rate({0: neutral, 1: neutral}),
        }
    return {**rates, "n": float(n)}


def main(argv: Sequence[str] | None = None) -> int:
    from cfcheck.domains import get_domain

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    print("| scenario | other label's spurious fonts | own label's | neutral fonts | other − neutral (± 1.96 s.e.) |")
    print("|---|---|---|---|---|")
    for name in SCENARIOS:
        domain = cast("GlyphsDomain", get_domain("glyphs"))  # the name registers GlyphsDomain
        r = latent_font_swap_flip_rates(domain.variant(name), args.n, args.seed)
        other, neutral = r["other_label_spurious"], r["neutral"]
        se = math.sqrt((other * (1 - other) + neutral * (1 - neutral)) / args.n)
        print(
            f"| {name} | {other:.3f} | {r['own_label_spurious']:.3f} | {neutral:.3f} | "
            f"{other - neutral:+.3f} (± {1.96 * se:.3f}) |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
