"""The metric cards, one module per property family; :data:`ALL_CARDS` collects them.

Every bar's rationale names the controls it sits between and why. What the controls reached on a
bundled domain is not quoted there: ``cfcheck calibrate`` writes it to the domain's calibration
file and :mod:`cfcheck.reporting.evidence` shows it beside the card. Numbers from other
measurements (floors, baselines, other scripts) name the command that measured them.
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

ALL_CARDS = (
    *VALIDITY_CARDS,
    *TRANSITION_CARDS,
    *CLOSENESS_CARDS,
    *REALISM_CARDS,
    *SANITY_CARDS,
    *SCM_CARDS,
    *SCM_MODEL_CARDS,
    *SCM_REALISM_CARDS,
    *REMOVAL_CARDS,
    *SYNBOLS_CARDS,
)

__all__ = ["ALL_CARDS"]
