"""Scores against the true counterfactual, for every kind whose results carry one.

A result qualifies when it is a :class:`cfcheck.kinds.base.CounterfactualResult`: ``x`` and
``x_cf`` (N×C×H×W), ``true_cf`` (the same shape, or None where the domain cannot compute it),
``valid`` (N bools) and ``sample_labels``; abstentions are left out, as in the closeness scores.
"""

from __future__ import annotations

from typing import Any

import torch

from cfcheck.kinds.base import CounterfactualResult, labels_where
from cfcheck.metrics.closeness import ground_truth_error, ground_truth_relative_error, perceptual_distance

__all__ = ["score_ground_truth_error", "score_ground_truth_perceptual", "score_ground_truth_relative_error"]


def _truth(result: CounterfactualResult) -> torch.Tensor:
    """The result's true counterfactuals; skips the test where the domain cannot compute them."""
    __tracebackhide__ = True
    if result.true_cf is None:  # a capability only a known generative process has: skipped, not failed
        import pytest

        pytest.skip(f"domain {result.task.domain_name!r} cannot compute true counterfactuals")
    return result.true_cf


def _produced(
    result: CounterfactualResult, score: Any, metric: str
) -> tuple[torch.Tensor, torch.Tensor, dict[str, list[Any]]]:
    __tracebackhide__ = True
    truth = _truth(result)
    keep = result.valid
    if not bool(keep.any()):
        score.unavailable(metric, "the method abstained on every input; nothing to measure")
    return result.x_cf[keep], truth[keep], labels_where(result.sample_labels, keep)


def score_ground_truth_error(result: CounterfactualResult, score: Any) -> None:
    """Record ``ground_truth_error``: mean absolute pixel difference to the true counterfactual."""
    __tracebackhide__ = True
    x_cf, truth, labels = _produced(result, score, "ground_truth_error")
    score("ground_truth_error", ground_truth_error(x_cf, truth), labels=labels)


def score_ground_truth_perceptual(result: CounterfactualResult, score: Any, zoo: Any) -> None:
    """Record ``ground_truth_perceptual``: the perceptual distance to the true counterfactual on the
    domain embedding network (the same construction as ``perceptual_distance``)."""
    __tracebackhide__ = True
    x_cf, truth, labels = _produced(result, score, "ground_truth_perceptual")
    distances = perceptual_distance(truth.to(zoo.device), x_cf.to(zoo.device), zoo.feature_maps)
    score("ground_truth_perceptual", distances.cpu(), labels=labels)


def score_ground_truth_relative_error(result: CounterfactualResult, score: Any) -> None:
    """Record ``ground_truth_relative_error``: d(c, truth) / d(x, truth) per input, an abstention
    counted as the unchanged input (1: it is not a right counterfactual); inputs equal to their
    truth (nothing to move) are left out."""
    __tracebackhide__ = True
    truth = _truth(result)
    x = result.x
    produced = torch.where(result.valid.reshape(-1, *([1] * (x.dim() - 1))), result.x_cf, x)
    relative = ground_truth_relative_error(produced, truth, x)
    defined = ~torch.isnan(relative)
    if not bool(defined.any()):
        score.unavailable("ground_truth_relative_error", "every input equals its true counterfactual")
    score("ground_truth_relative_error", relative[defined], labels=labels_where(result.sample_labels, defined))
