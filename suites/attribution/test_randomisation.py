"""Model-randomisation sanity for attributions (Adebayo et al. 2018): the saliency map of the
trained classifier and of the domain's random classifier, for the same inputs and targets, must
differ. Reported without a verdict until attribution controls calibrate a bar.
"""

from __future__ import annotations

import pytest
import torch

from cfcheck.kinds.base import labels_where
from cfcheck.kinds.calling import MethodOutputError
from cfcheck.metrics.sanity import rank_similarity

pytestmark = pytest.mark.cfcheck_kind("attribution")


@pytest.mark.cfcheck_tasks("random")
def test_saliency_depends_on_model(cfcheck_result, cfcheck_score, cfcheck_session, cfcheck_method, cfcheck_task):
    """Spearman correlation of |saliency| for the random and the trained classifier, per image."""
    (needed,) = cfcheck_task.needs
    try:
        trained = cfcheck_session.outputs(needed, cfcheck_method)
    except MethodOutputError as error:
        pytest.fail(str(error), pytrace=False)
    keep = cfcheck_result.valid & trained.valid
    if not bool(keep.any()):
        cfcheck_score.unavailable("attribution_randomisation_similarity", "no input has both saliency maps")
    first, second = trained.saliency[keep], cfcheck_result.saliency[keep]
    similarity = rank_similarity(first, second)
    # a constant map has no ranking: both constant = the same map (1), one constant = unrelated (0)
    constant_first, constant_second = _constant(first), _constant(second)
    similarity = torch.where(constant_first & constant_second, torch.ones_like(similarity), torch.nan_to_num(similarity, nan=0.0))
    labels = labels_where(cfcheck_result.sample_labels, keep)
    cfcheck_score("attribution_randomisation_similarity", similarity, labels=labels)


def _constant(maps: torch.Tensor) -> torch.Tensor:
    flat = maps.abs().flatten(1)
    return flat.amax(1) == flat.amin(1)
