"""Scoring a removal task: the method's and the random attribution's curves over the run's
retraining draws, the areas and gaps a suite records (:func:`score_removal`), and the leakage
diagnostics (:func:`score_leakage`). The curves themselves come from :mod:`cfcheck.kinds.attribution.removal`.

A gap is recorded per input as its mean over the draws; with more than one draw its interval is
:func:`~cfcheck.metrics.stats.crossed_interval` of the draws × inputs table (it covers the
retraining as well as the inputs), with one draw the bootstrap over inputs (models fixed).
"""

from __future__ import annotations

from typing import Any, Protocol

import torch

from cfcheck.core.seeds import seeded
from cfcheck.kinds.attribution.baseline import random_attribution
from cfcheck.kinds.attribution.removal import (
    RETRAINING,
    RemovalCurve,
    RemovalData,
    as_pixel_grid,
    classified_correctly,
    draw_areas,
    missing_for,
    removal_curves,
    removal_gap,
    removal_key,
    retrain,
    run_removal_scale,
)
from cfcheck.kinds.base import Run

__all__ = ["leakage", "mean_heights", "score_leakage", "score_removal", "task_curves", "task_removal_data"]


class _SessionRun(Run, Protocol):
    """The session a suite scores with: a run that also gives the method's outputs for a task."""

    def outputs(self, task: Any, method: Any) -> Any: ...


def task_removal_data(run: Run, result: Any, train: Any, *, random: bool = False) -> RemovalData:
    """The removal data of a removal task's results (``result`` its scored part, ``train`` the
    training part), with the method's attributions or, with ``random``, cfcheck's seeded random
    attribution of the same inputs."""
    for part, name in ((result, "removal_test"), (train, "removal_train")):
        if not bool(part.valid.all()):
            raise ValueError(
                f"the method abstained on {int((~part.valid).sum())} of the {name} inputs: "
                "removal benchmarks need an attribution for every input"
            )
    task = result.task
    a_train, a_test = train.saliency, result.saliency
    if random:  # the training maps first, then the scored ones, from one generator
        generator = torch.Generator().manual_seed(seeded(task.seed, RETRAINING))
        a_train = random_attribution(train.x, generator)
        a_test = random_attribution(result.x, generator)
    return RemovalData(
        task.domain,
        task.model,
        train.x,
        train.inputs.labels["label"],
        a_train,
        result.x,
        result.inputs.labels["label"],
        a_test,
    )


def task_curves(
    run: Run, result: Any, train: Any, strategy: str, order: str
) -> tuple[tuple[RemovalCurve, ...], tuple[RemovalCurve, ...]]:
    """The method's curves and the random attribution's for one removal task, one per retraining
    draw (both memoised: the random attribution's are shared by every method scored on the task)."""
    task = result.task
    method = run.memo(
        ("removal_curves", task, strategy, order, "method"),
        lambda: removal_curves(run, task_removal_data(run, result, train), strategy, order),
    )
    baseline = run.memo(
        ("removal_curves", task, strategy, order, "random"),
        lambda: removal_curves(run, task_removal_data(run, result, train, random=True), strategy, order),
    )
    return method, baseline


def mean_heights(curves: tuple[RemovalCurve, ...]) -> list[float]:
    """The curve's mean height per level, averaged over the draws (one draw: its own heights)."""
    per_draw = [curve.heights for curve in curves]
    return [sum(level) / len(per_draw) for level in zip(*per_draw)]


def score_removal(run: _SessionRun, result: Any, method: Any, score: Any, strategy: str, order: str) -> None:
    """Records ``<strategy>_area:<order>`` and ``<strategy>_gap:<order>`` (GOAR: without the
    order) for one removal task, each curve's levels and mean heights in the record's extra, and
    each draw's mean area where there are several.

    Per input, a score is the mean over the retraining draws; with several draws its interval is
    the crossed t interval of the draws × inputs table (draws and inputs both random), else the
    bootstrap over inputs.
    """
    __tracebackhide__ = True
    import pytest

    reason = missing_for(run, result.task.domain, strategy)
    if reason is not None:
        pytest.skip(reason)

    from cfcheck.kinds.calling import MethodOutputError
    from cfcheck.metrics.stats import crossed_interval

    (needed,) = result.task.needs
    area_key, gap_key = removal_key(strategy, "area", order), removal_key(strategy, "gap", order)
    try:
        train = run.outputs(needed, method)
        curves, baselines = task_curves(run, result, train, strategy, order)
    except MethodOutputError as error:
        pytest.fail(str(error), pytrace=False)
    except ValueError as error:
        score.unavailable(area_key, str(error))
    areas, random_areas = draw_areas(curves), draw_areas(baselines)
    gaps = removal_gap(strategy, order, areas, random_areas)
    extra: dict[str, Any] = {
        "curve": {"levels": list(curves[0].levels), "method": mean_heights(curves), "random": mean_heights(baselines)}
    }
    several = len(curves) > 1  # one draw: the bootstrap over inputs, as before draws existed
    gap_extra = None
    if several:
        extra["draws"] = {"method": areas.mean(1).tolist(), "random": random_areas.mean(1).tolist()}
        gap_extra = {"draws": gaps.mean(1).tolist()}
    labels = result.sample_labels
    score(area_key, areas.mean(0), ci=crossed_interval(areas) if several else None, labels=labels, extra=extra)
    score(gap_key, gaps.mean(0), ci=crossed_interval(gaps) if several else None, labels=labels, extra=gap_extra)


def leakage(run: Run, data: RemovalData, strategy: str) -> torch.Tensor:
    """Per test input, 1 where a model retrained on what removal leaves *besides* the data still
    classifies it (Park et al. §4.1's class-information leakage; Rong et al.'s mask leakage):

    * ``roar``: the masks alone (1 where a pixel was removed, MoRF at the middle fraction);
    * ``goar``: x − s·a/‖a‖ without the projection, at the largest strength.

    High accuracy means the removal itself tells the retrained model the class, so the curve
    understates what was removed.
    """
    from cfcheck.metrics.removal import removal_mask
    from cfcheck.metrics.removal_curves import feature_removal

    section = run.profile.section("attribution")
    shape = data.x_test.shape[1:]
    if strategy == "roar":
        fraction = section.removal_fractions[len(section.removal_fractions) // 2]
        parts = [
            removal_mask(as_pixel_grid(run, data.domain, a), fraction, "morf")
            .to(data.x_train.dtype)
            .reshape(-1, *shape)
            for a in (data.a_train, data.a_test)
        ]
    elif strategy == "goar":
        scale = run_removal_scale(run, data)
        strength = section.goar_levels_for(data.domain)[-1] * scale
        parts = [feature_removal(x, a, strength) for x, a in ((data.x_train, data.a_train), (data.x_test, data.a_test))]
    else:
        raise ValueError(f"leakage is defined for 'roar' and 'goar', got {strategy!r}")
    model = retrain(run, data.domain, parts[0], data.y_train)
    return classified_correctly(model, parts[1], data.y_test)


def score_leakage(run: _SessionRun, result: Any, method: Any, score: Any, strategy: str) -> None:
    """Records ``<strategy>_leakage`` for one removal task (see :func:`leakage`)."""
    __tracebackhide__ = True
    import pytest

    reason = missing_for(run, result.task.domain, strategy)
    if reason is not None:
        pytest.skip(reason)

    from cfcheck.kinds.calling import MethodOutputError

    (needed,) = result.task.needs
    try:
        train = run.outputs(needed, method)
        data = task_removal_data(run, result, train)
    except MethodOutputError as error:
        pytest.fail(str(error), pytrace=False)
    except ValueError as error:
        score.unavailable(f"{strategy}_leakage", str(error))
    score(f"{strategy}_leakage", leakage(run, data, strategy), labels=result.sample_labels)
