"""cfcheck's random attribution: what a removal gap is measured against.

A removal score is the gap between the method's accuracy area and a random attribution's on the
same inputs (:mod:`cfcheck.kinds.attribution.removal`), so the random attribution is part of the
score's definition and lives with the kind. The bundled method
:class:`cfcheck.kinds.attribution.methods.saliency.RandomAttribution` draws through
:func:`random_attribution` too: the same generator gives the same maps either way.
"""

from __future__ import annotations

from typing import Any

import torch

__all__ = ["RandomBaseline", "random_attribution"]


def random_attribution(x: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """Standard normal noise shaped like ``x``, on ``x``'s device and dtype.

    The noise is drawn on the generator's own device and then moved, so a CPU generator gives the
    same numbers whatever device ``x`` is on.

    Example:
        >>> a = random_attribution(torch.zeros(2, 3), torch.Generator().manual_seed(0))
        >>> torch.equal(a, torch.randn(2, 3, generator=torch.Generator().manual_seed(0)))
        True
    """
    return torch.randn(x.shape, generator=generator, device=generator.device).to(x)


class RandomBaseline:
    """:func:`random_attribution` behind the attribution call, for the offline removal engine
    (:func:`cfcheck.kinds.attribution.local_run.removal_data`), which gives each batch a seeded
    ``generator``; the model and the targets are not used."""

    def attribute(
        self, x: torch.Tensor, model: Any, target: torch.Tensor, *, generator: torch.Generator
    ) -> torch.Tensor:
        return random_attribution(x, generator)
