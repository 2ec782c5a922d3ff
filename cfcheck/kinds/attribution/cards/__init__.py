"""The attribution kind's own metric cards (its declaration's ``own_cards``): model-randomisation
sanity (:mod:`~cfcheck.kinds.attribution.cards.randomisation`) and the removal benchmarks
(:mod:`~cfcheck.kinds.attribution.cards.removal`).

They reach the card registry (:data:`cfcheck.metrics.cards.CARDS`) when the kinds load, as another
package's kind's cards do.
"""

from __future__ import annotations

from cfcheck.kinds.attribution.cards.randomisation import ATTRIBUTION_RANDOMISATION_CARDS
from cfcheck.kinds.attribution.cards.removal import REMOVAL_CARDS
from cfcheck.metrics.definitions import with_own_paper_differences

#: the kind's own cards, each with its differences from the papers' code
CARDS = with_own_paper_differences((*ATTRIBUTION_RANDOMISATION_CARDS, *REMOVAL_CARDS))

__all__ = ["CARDS"]
