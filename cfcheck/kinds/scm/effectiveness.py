"""How well an SCM counterfactual shows each parent the intervention implies, read off the image.

Continuous parents are measured on the image by the domain (``measure_factors``, capability
``factor_measurement``) and compared with the SCM's counterfactual value in units of the
parent's standard deviation on the scored split; categorical parents are read by the domain's
attribute oracle for that parent. The intervened parent is the effectiveness suite's; the
others (which the causal graph says to move, a child of the intervened parent, or to
keep) are the causal-graph suite's.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import torch

from cfcheck.domains.base import FACTOR_MEASUREMENT, require
from cfcheck.metrics.effectiveness import categorical_hits, standardised_error
from cfcheck.metrics.key import MetricKey

__all__ = ["parent_agreement", "predictor_agreement"]


@cache
def _scale(domain: Any, parent: str) -> float:
    scored = domain.split_roles["scored"]
    values = domain.parents(scored, torch.arange(len(domain.split(scored).labels)))[parent]
    return float(values.double().std())


def parent_agreement(result: Any, zoo: Any, parent: str) -> tuple[str, torch.Tensor]:
    """``("accuracy", hits)`` for a categorical parent, ``("error", standardised errors)`` for a
    continuous one, over the counterfactuals the method did not abstain on."""
    domain = result.domain
    keep = result.valid
    cfs = result.x_cf[keep]
    wanted = result.target_parents[parent][keep]
    if parent in domain.categorical_factors:
        if parent not in zoo.attribute_oracles:
            raise KeyError(f"{domain.name} has no attribute oracle for the categorical parent {parent!r}")
        predicted = zoo.logits(zoo.attribute_oracles[parent], cfs).argmax(1).cpu()
        return "accuracy", categorical_hits(predicted, wanted.long())
    require(domain, FACTOR_MEASUREMENT)
    return "error", standardised_error(domain.measure_factors(cfs)[parent], wanted.float(), _scale(domain, parent))


def predictor_agreement(result: Any, zoo: Any, parent: str) -> tuple[str, torch.Tensor]:
    """As :func:`parent_agreement`, with the parent read by its anti-causal predictor: ``("accuracy",
    hits)`` for a categorical parent, ``("error", |prediction − SCM value| / sd)`` for a continuous one.

    Raises:
        KeyError: when the domain bundles no predictor of ``parent``.
    """
    domain = result.domain
    if parent not in zoo.anticausal_predictors:
        raise KeyError(f"{domain.name} bundles no anti-causal predictor of {parent!r}")
    keep = result.valid
    cfs = result.x_cf[keep]
    wanted = result.target_parents[parent][keep]
    out = zoo.logits(zoo.anticausal_predictors[parent], cfs).cpu()
    if parent in domain.categorical_factors:
        return "accuracy", categorical_hits(out.argmax(1), wanted.long())
    return "error", standardised_error(out[:, 0].float(), wanted.float(), _scale(domain, parent))


def score_parent(result: Any, score: Any, zoo: Any, parent: str, prefix: str, *, by_predictor: bool) -> None:
    """Records ``<prefix>_error:<parent>`` (continuous) or ``<prefix>_accuracy:<parent>``
    (categorical) over the non-abstained counterfactuals, read off the image
    (:func:`parent_agreement`) or by the domain's anti-causal predictor
    (:func:`predictor_agreement`; skipped where the domain bundles none for ``parent``)."""
    __tracebackhide__ = True
    import pytest

    from cfcheck.kinds.base import labels_where

    keep = result.valid
    if int(keep.sum()) == 0:
        score.unavailable(MetricKey(f"{prefix}_error", parent), "the method abstained on every input")
    if by_predictor and parent not in zoo.anticausal_predictors:
        pytest.skip(f"{result.domain.name} bundles no anti-causal predictor of {parent}")
    kind, values = (predictor_agreement if by_predictor else parent_agreement)(result, zoo, parent)
    score(MetricKey(f"{prefix}_{kind}", parent), values, labels=labels_where(result.sample_labels, keep))
