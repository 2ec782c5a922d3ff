"""The VCE kind's own metric cards (its declaration's ``own_cards``): validity, closeness, realism
and randomisation sanity, one module per property family.

They reach the card registry (:data:`cfcheck.metrics.cards.CARDS`) when the kinds load, as another
package's kind's cards do; the cards the kind shares with others (coverage, the ground-truth
errors) stay in :mod:`cfcheck.metrics.definitions`.
"""

from __future__ import annotations

from cfcheck.kinds.vce.cards.closeness import CLOSENESS_CARDS
from cfcheck.kinds.vce.cards.realism import REALISM_CARDS
from cfcheck.kinds.vce.cards.sanity import SANITY_CARDS
from cfcheck.kinds.vce.cards.validity import TRANSITION_CARDS, VALIDITY_CARDS
from cfcheck.metrics.definitions import with_own_paper_differences

#: the kind's own cards, each with its differences from the papers' code
CARDS = with_own_paper_differences(
    (*VALIDITY_CARDS, *TRANSITION_CARDS, *CLOSENESS_CARDS, *REALISM_CARDS, *SANITY_CARDS)
)

__all__ = ["CARDS"]
