"""The metric cards, one module per property family; :data:`ALL_CARDS` collects them.

Every bar's rationale names the controls it sits between and their measured values, from
``cfcheck calibrate`` (quick profile, seed 0 unless the text says otherwise).
"""

from __future__ import annotations

from cfcheck.metrics.definitions.closeness import CLOSENESS_CARDS
from cfcheck.metrics.definitions.realism import REALISM_CARDS
from cfcheck.metrics.definitions.removal import REMOVAL_CARDS
from cfcheck.metrics.definitions.sanity import SANITY_CARDS
from cfcheck.metrics.definitions.scm import SCM_CARDS
from cfcheck.metrics.definitions.scm_models import SCM_MODEL_CARDS
from cfcheck.metrics.definitions.scm_realism import SCM_REALISM_CARDS
from cfcheck.metrics.definitions.synbols import SYNBOLS_CARDS
from cfcheck.metrics.definitions.validity import TRANSITION_CARDS, VALIDITY_CARDS

ALL_CARDS = (*VALIDITY_CARDS, *TRANSITION_CARDS, *CLOSENESS_CARDS, *REALISM_CARDS, *SANITY_CARDS, *SCM_CARDS,
             *SCM_MODEL_CARDS, *SCM_REALISM_CARDS, *REMOVAL_CARDS, *SYNBOLS_CARDS)

__all__ = ["ALL_CARDS"]
