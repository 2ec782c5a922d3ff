"""The SCM kind's own metric cards (its declaration's ``own_cards``): effectiveness and
causal-graph compliance read off the image (:mod:`~cfcheck.kinds.scm.cards.image`), those that need
the domain's evaluation models (:mod:`~cfcheck.kinds.scm.cards.models`) and realism
(:mod:`~cfcheck.kinds.scm.cards.realism`).

They reach the card registry (:data:`cfcheck.metrics.cards.CARDS`) when the kinds load, as another
package's kind's cards do; the cards the kind shares with others (coverage, the ground-truth
errors) stay in :mod:`cfcheck.metrics.definitions`.
"""

from __future__ import annotations

from cfcheck.kinds.scm.cards.image import SCM_CARDS
from cfcheck.kinds.scm.cards.models import SCM_MODEL_CARDS
from cfcheck.kinds.scm.cards.realism import SCM_REALISM_CARDS
from cfcheck.metrics.definitions import with_own_paper_differences

#: the kind's own cards, each with its differences from the papers' code
CARDS = with_own_paper_differences((*SCM_CARDS, *SCM_MODEL_CARDS, *SCM_REALISM_CARDS))

__all__ = ["CARDS"]
