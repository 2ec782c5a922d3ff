"""Model-randomisation sanity for attributions (Adebayo et al. 2018): the saliency map of the
trained classifier and of a randomised one, for the same inputs and targets, must differ. The
randomised classifier is the domain's random classifier, and (cascading randomisation, as
Quantus' MPRT) the trained classifier with its layers re-initialised from the top down.

Each comparison is recorded twice: over every input element, and over the elements where either
map is non-zero (the "_support" scores), because elements both maps leave at exactly 0 (under a
zero baseline, every pixel where the input is 0) tie in both rankings whatever the model and pull
the plain correlation towards 1. Reported without a verdict until attribution controls calibrate
a bar.
"""

from __future__ import annotations

import pytest
import torch

from cfcheck.kinds.base import labels_where
from cfcheck.kinds.calling import MethodOutputError
from cfcheck.metrics.sanity import rank_similarity, same_ranking

pytestmark = pytest.mark.cfcheck_kind("attribution")


@pytest.mark.cfcheck_tasks("random")
def test_saliency_depends_on_model(cfcheck_result, cfcheck_score, cfcheck_session, cfcheck_method, cfcheck_task):
    """Spearman correlation of |saliency| for the random and the trained classifier, per image."""
    _score_similarity_to_trained("attribution_randomisation_similarity", "", cfcheck_result, cfcheck_score,
                                 cfcheck_session, cfcheck_method, cfcheck_task)


@pytest.mark.cfcheck_tasks("cascade")
def test_cascading_randomisation(cfcheck_result, cfcheck_score, cfcheck_session, cfcheck_method, cfcheck_task):
    """The same correlation once the trained classifier's layers down to this one are random."""
    layer = cfcheck_task.model.split("~", 1)[1]
    _score_similarity_to_trained("attribution_cascading_randomisation_similarity", f":{layer}", cfcheck_result,
                                 cfcheck_score, cfcheck_session, cfcheck_method, cfcheck_task)


def _score_similarity_to_trained(metric, suffix, result, score, session, method, task) -> None:
    """Record ``metric`` and ``metric_support`` (each followed by ``suffix``): per image, the
    rank similarity of |saliency| for ``task``'s classifier and for the trained classifier it
    needs (its declared dependency), over every element and over the maps' non-zero support.

    Images where either call abstained are left out. Where a correlation is undefined (a map
    constant on the elements compared, a support of fewer than two elements) the pair scores 1
    if both maps rank the elements identically (e.g. both zero) and 0 otherwise.
    """
    __tracebackhide__ = True
    (needed,) = task.needs
    try:
        trained = session.outputs(needed, method)
    except MethodOutputError as error:
        pytest.fail(str(error), pytrace=False)
    keep = result.valid & trained.valid
    names = (f"{metric}{suffix}", f"{metric}_support{suffix}")
    if not bool(keep.any()):
        score.error(names[1], "no input has both saliency maps")
        score.unavailable(names[0], "no input has both saliency maps")
    first, second = trained.saliency[keep], result.saliency[keep]
    undefined_value = same_ranking(first, second).to(torch.float32)
    labels = labels_where(result.sample_labels, keep)
    for name, support in zip(names, ("all", "nonzero")):
        similarity = rank_similarity(first, second, support=support)
        similarity = torch.where(torch.isnan(similarity), undefined_value, similarity)
        score(name, similarity, labels=labels)
