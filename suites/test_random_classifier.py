"""Random-classifier sanity (Väth et al. 2023, hypothesis 2; Adebayo et al. 2018).

Explaining RandomNet — the standard CNN's architecture with random weights — must not produce
changes the oracle committee reads as the target class: the OTA of its counterfactuals stays
near the OTA of the unchanged originals. And the explanation must depend on the classifier:
counterfactuals for RandomNet and for the trained CNN, on the same inputs and targets, differ.
"""

from __future__ import annotations

import pytest
import torch

from cfcheck.generation import MethodOutputError
from cfcheck.metrics.sanity import ota_gain, randomisation_similarity
from cfcheck.metrics.validity import committee_vote
from cfcheck.tasks import TRAINED_COUNTERPART

pytestmark = [pytest.mark.cfcheck_kind("vce"), pytest.mark.cfcheck_tasks("random")]


def test_ota_gain(cfcheck_vce, cfcheck_score, cfcheck_models):
    """Committee OTA of RandomNet's counterfactuals minus that of the originals (per image)."""
    probs_cf = [cfcheck_vce.probabilities(o) for o in cfcheck_models.oracles]
    probs_x = [cfcheck_vce.probabilities(o, on="x") for o in cfcheck_models.oracles]
    gain = ota_gain(committee_vote(probs_cf), committee_vote(probs_x), cfcheck_vce.target)
    # an abstention changes nothing the oracles could see
    gain = torch.where(cfcheck_vce.valid, gain, torch.zeros_like(gain))
    cfcheck_score("ota_gain", gain, labels=cfcheck_vce.sample_labels)


def test_explanations_depend_on_classifier(cfcheck_vce, cfcheck_score, cfcheck_session, cfcheck_method, cfcheck_task):
    """Spearman correlation of |c − x| for RandomNet and for the trained CNN, per image.

    Both unchanged (e.g. an identity method) counts as identical explanations (1); one
    unchanged and the other not counts as unrelated (0).
    """
    try:
        trained = cfcheck_session.counterfactuals(cfcheck_task.with_classifier(TRAINED_COUNTERPART), cfcheck_method)
    except MethodOutputError as error:
        pytest.fail(str(error), pytrace=False)
    random_cf, trained_cf, x = cfcheck_vce.x_cf, trained.x_cf, cfcheck_vce.x
    similarity = randomisation_similarity(x, trained_cf, random_cf)
    unchanged_random = (random_cf == x).flatten(1).all(1)
    unchanged_trained = (trained_cf == x).flatten(1).all(1)
    similarity = torch.where(unchanged_random & unchanged_trained, torch.ones_like(similarity), similarity)
    similarity = torch.nan_to_num(similarity, nan=0.0)
    cfcheck_score("randomisation_similarity", similarity, labels=cfcheck_vce.sample_labels)
