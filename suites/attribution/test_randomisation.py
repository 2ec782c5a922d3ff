"""Model-randomisation sanity for attributions (Adebayo et al. 2018): the saliency map of the
trained classifier and of a randomised one, for the same inputs and targets, must differ. The
randomised classifiers are the profile's random draws (the domain's random classifier and
re-initialisations of the trained one; the interval covers both the draws and the inputs), and
(cascading randomisation, as Quantus' MPRT, one draw) the trained classifier with its layers
re-initialised from the top down.

Each comparison is recorded twice: over every input element, and over the elements where either
map is non-zero (the "_support" scores), because elements both maps leave at exactly 0 (under a
zero baseline, every pixel where the input is 0) tie in both rankings whatever the model and pull
the plain correlation towards 1. Reported without a verdict until attribution controls calibrate
a bar.
"""

from __future__ import annotations

import pytest

from cfcheck.kinds.attribution.randomisation import similarity_table
from cfcheck.kinds.base import labels_where
from cfcheck.kinds.calling import MethodOutputError
from cfcheck.metrics.key import MetricKey
from cfcheck.metrics.sanity import SUPPORTS
from cfcheck.metrics.stats import crossed_interval

pytestmark = pytest.mark.cfcheck_kind("attribution")


@pytest.mark.cfcheck_tasks("random")
def test_saliency_depends_on_model(cfcheck_result, cfcheck_score, cfcheck_session, cfcheck_method, cfcheck_task):
    """Spearman correlation of |saliency| for each random draw and the trained classifier, per image."""
    _score_similarity_to_trained(
        ("attribution_randomisation_similarity", "attribution_randomisation_similarity_support"),
        None,
        cfcheck_result,
        cfcheck_score,
        cfcheck_session,
        cfcheck_method,
        cfcheck_task,
    )


@pytest.mark.cfcheck_tasks("cascade")
def test_cascading_randomisation(cfcheck_result, cfcheck_score, cfcheck_session, cfcheck_method, cfcheck_task):
    """The same correlation once the trained classifier's layers down to this one are random."""
    layer = cfcheck_task.model.split("~", 1)[1]
    _score_similarity_to_trained(
        ("attribution_cascading_randomisation_similarity", "attribution_cascading_randomisation_similarity_support"),
        layer,
        cfcheck_result,
        cfcheck_score,
        cfcheck_session,
        cfcheck_method,
        cfcheck_task,
    )


def _score_similarity_to_trained(cards, variant, result, score, session, method, task) -> None:
    """Record the two ``cards`` (over every element, over the maps' support), with ``variant``: the mean, over the
    random draws (``task``'s classifier, then the tasks it needs after the trained one) and the
    inputs, of the rank similarity of |saliency| for that draw and for the trained classifier
    (``task``'s first dependency), over every element and over the maps' non-zero support.

    The interval is :func:`~cfcheck.metrics.stats.crossed_interval` over draws and inputs
    (with one draw, the t interval over inputs); the samples are each input's mean over the draws, and ``extra["draws"]`` holds
    each draw's model and mean. Inputs where any call abstained are left out. Where a
    correlation is undefined (a map constant on the elements compared, a support of fewer than
    two elements) the pair scores 1 if both maps rank the elements identically (e.g. both zero)
    and 0 otherwise.
    """
    __tracebackhide__ = True
    needed, *other_draws = task.needs
    try:
        trained = session.outputs(needed, method)
        draws = [result, *(session.outputs(t, method) for t in other_draws)]
    except MethodOutputError as error:
        pytest.fail(str(error), pytrace=False)
    keep = trained.valid.clone()
    for draw in draws:
        keep &= draw.valid
    names = tuple(MetricKey(card, variant) for card in cards)
    if not bool(keep.any()):
        score.error(names[1], "no input has every saliency map")
        score.unavailable(names[0], "no input has every saliency map")
    labels = labels_where(result.sample_labels, keep)
    models = [draw.task.model for draw in draws]
    for name, support in zip(names, SUPPORTS):
        table = similarity_table(trained.saliency[keep], [draw.saliency[keep] for draw in draws], support=support)
        ci = crossed_interval(table)
        score(
            name,
            table.mean(0),
            ci=ci,
            labels=labels,
            extra={"draws": {"models": models, "means": table.mean(1).tolist()}},
        )
