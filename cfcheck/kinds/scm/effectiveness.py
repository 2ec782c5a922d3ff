"""How well an SCM counterfactual shows each parent the intervention implies, read off the image.

Continuous parents are measured on the image by the domain (``measure_factors``, capability
``factor_measurement``) and compared with the SCM's counterfactual value in units of the
parent's standard deviation on the scored split; categorical parents are read by the domain's
attribute oracle for that parent. Or every parent is read by its anti-causal predictor
(:mod:`cfcheck.kinds.scm.roles`), the only reading real data offers. The intervened parent is the
effectiveness suite's; the others (which the causal graph says to move, a descendant of the
intervened parent, or to keep, a non-descendant) are the causal-graph suite's. What a domain cannot
read (no measurement on the image, no attribute oracle, no predictor) is skipped with the reason.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import torch

from cfcheck.domains.base import FACTOR_MEASUREMENT, require
from cfcheck.kinds.scm.roles import predictor_missing, read_parent
from cfcheck.metrics.effectiveness import categorical_hits, standardised_error
from cfcheck.metrics.key import MetricKey

__all__ = ["image_reading_missing", "parent_agreement", "predictor_agreement", "score_parent"]


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
        KeyError: when the domain declares no predictor of ``parent``.
    """
    domain = result.domain
    keep = result.valid
    wanted = result.target_parents[parent][keep]
    read = read_parent(zoo, parent, result.x_cf[keep])
    if parent in domain.categorical_factors:
        return "accuracy", categorical_hits(read, wanted.long())
    return "error", standardised_error(read, wanted.float(), _scale(domain, parent))


def image_reading_missing(domain: Any, zoo: Any, parent: str) -> str | None:
    """Why ``parent`` cannot be read off the image itself (None: it can): a categorical parent
    needs the domain's attribute oracle of it, a continuous one the domain's measurement
    (capability ``factor_measurement``, which only a known renderer gives)."""
    if parent in domain.categorical_factors:
        if parent in zoo.attribute_oracles:
            return None
        return (
            f"domain {domain.name!r} declares no attribute oracle of {parent!r} (role 'attribute_oracles') to read it "
            "off the image; its anti-causal predictor's reading is the predictor test's"
        )
    if FACTOR_MEASUREMENT in domain.capabilities:
        return None
    return (
        f"domain {domain.name!r} cannot measure {parent!r} on the image (no known process renders its images); "
        "its anti-causal predictor's reading is the predictor test's"
    )


def score_parent(result: Any, score: Any, zoo: Any, parent: str, prefix: str, *, by_predictor: bool) -> None:
    """Records ``<prefix>_error:<parent>`` (continuous) or ``<prefix>_accuracy:<parent>``
    (categorical) over the non-abstained counterfactuals, read off the image
    (:func:`parent_agreement`; skipped where the domain cannot, :func:`image_reading_missing`) or by
    the domain's anti-causal predictor (:func:`predictor_agreement`; skipped where the domain
    declares none for ``parent``, :func:`~cfcheck.kinds.scm.roles.predictor_missing`)."""
    __tracebackhide__ = True
    import pytest

    from cfcheck.kinds.base import labels_where

    keep = result.valid
    if int(keep.sum()) == 0:
        score.unavailable(MetricKey(f"{prefix}_error", parent), "the method abstained on every input")
    reason = predictor_missing(zoo, parent) if by_predictor else image_reading_missing(result.domain, zoo, parent)
    if reason is not None:
        pytest.skip(reason)
    kind, values = (predictor_agreement if by_predictor else parent_agreement)(result, zoo, parent)
    score(MetricKey(f"{prefix}_{kind}", parent), values, labels=labels_where(result.sample_labels, keep))
