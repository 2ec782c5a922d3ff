"""Random-classifier sanity (Väth et al. 2023, hypothesis 2; Adebayo et al. 2018).

Explaining RandomNet — the standard CNN's architecture with random weights, its logits
standardised without labels so its decisions spread over the classes — must not produce
changes the oracle committee reads as the target class: the committee OTA of its
counterfactuals stays near that of the unchanged originals. And the explanation must depend
on the classifier: counterfactuals for RandomNet, and for the trained CNN with its layers
randomised from the top down (cascading model-parameter randomisation), differ from the
counterfactuals for the trained CNN on the same inputs and targets.
"""

from __future__ import annotations

import pytest
import torch

from cfcheck.kinds.calling import MethodOutputError
from cfcheck.metrics.key import MetricKey
from cfcheck.metrics.sanity import ota_gain, randomisation_similarity
from cfcheck.metrics.validity import committee_target_hits

pytestmark = pytest.mark.cfcheck_kind("vce")


@pytest.mark.cfcheck_tasks("random")
def test_ota_gain(cfcheck_result, cfcheck_score, cfcheck_evaluation_models):
    """Committee OTA of RandomNet's counterfactuals minus that of the originals (per image)."""
    oracles = cfcheck_evaluation_models.oracles
    target = cfcheck_result.target
    cf_hits = committee_target_hits([cfcheck_result.predictions(o) for o in oracles], target)
    x_hits = committee_target_hits([cfcheck_result.predictions(o, on="x") for o in oracles], target)
    # an abstention changes nothing the oracles could see
    cf_hits = torch.where(cfcheck_result.valid, cf_hits, x_hits)
    cfcheck_score("ota_gain", ota_gain(cf_hits, x_hits), labels=cfcheck_result.sample_labels)


@pytest.mark.cfcheck_tasks("random")
def test_explanations_depend_on_classifier(
    cfcheck_result, cfcheck_score, cfcheck_session, cfcheck_method, cfcheck_task
):
    """Spearman correlation of |c − x| for RandomNet and for the trained CNN, per image."""
    similarity = _similarity_to_trained(cfcheck_result, cfcheck_session, cfcheck_method, cfcheck_task)
    cfcheck_score("randomisation_similarity", similarity, labels=cfcheck_result.sample_labels)


@pytest.mark.cfcheck_tasks("cascade")
def test_cascading_randomisation(cfcheck_result, cfcheck_score, cfcheck_session, cfcheck_method, cfcheck_task):
    """Similarity to the trained CNN's explanations once its layers down to this one are random."""
    similarity = _similarity_to_trained(cfcheck_result, cfcheck_session, cfcheck_method, cfcheck_task)
    layer = cfcheck_task.classifier.split("~", 1)[1]
    metric = MetricKey("cascading_randomisation_similarity", layer)
    cfcheck_score(metric, similarity, labels=cfcheck_result.sample_labels)


def _similarity_to_trained(result, session, method, task) -> torch.Tensor:
    """Per-image Spearman similarity of the change maps for ``task`` and for the trained
    classifier it needs (its declared dependency, generated on the same worker).

    An abstention counts as returning the input unchanged. Both unchanged: identical
    explanations (1); one unchanged and the other not: unrelated (0).
    """
    __tracebackhide__ = True
    (needed,) = task.needs
    try:
        trained = session.outputs(needed, method)
    except MethodOutputError as error:
        pytest.fail(str(error), pytrace=False)
    x = result.x
    randomised_cf = torch.where(result.valid[:, None, None, None], result.x_cf, x)
    trained_cf = torch.where(trained.valid[:, None, None, None], trained.x_cf, x)
    similarity = randomisation_similarity(x, trained_cf, randomised_cf)
    unchanged_random = (randomised_cf == x).flatten(1).all(1)
    unchanged_trained = (trained_cf == x).flatten(1).all(1)
    similarity = torch.where(unchanged_random & unchanged_trained, torch.ones_like(similarity), similarity)
    return torch.nan_to_num(similarity, nan=0.0)
