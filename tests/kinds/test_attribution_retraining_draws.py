"""ROAR and GOAR over several retraining draws: the draws' seeds, what a draw changes (the
retrained models only), and the crossed interval a gap is recorded with."""

from __future__ import annotations

import dataclasses
import math
from types import SimpleNamespace

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import t as student_t

from cfcheck.kinds.attribution import removal, removal_scoring
from cfcheck.kinds.attribution.local_run import LocalRun, removal_data
from cfcheck.kinds.attribution.removal import RemovalCurve, removal_curve, removal_curves, retraining_seed
from cfcheck.kinds.attribution.section import MAX_RETRAINING_DRAWS, SECTION_DEFAULTS, AttributionSection


@settings(max_examples=200, deadline=None)
@given(
    st.tuples(st.integers(0, 999), st.integers(0, MAX_RETRAINING_DRAWS - 1)),
    st.tuples(st.integers(0, 999), st.integers(0, MAX_RETRAINING_DRAWS - 1)),
)
def test_distinct_seed_and_draw_pairs_retrain_with_distinct_seeds(a, b):
    assert (retraining_seed(*a) == retraining_seed(*b)) == (a == b)


def test_draw_zero_is_the_runs_own_retraining_seed_and_bad_draws_are_refused():
    assert [retraining_seed(s, 0) for s in (0, 1, 7)] == [20_231, 20_232, 20_238]
    for seed, draw in ((0, -1), (-1, 0), (0, MAX_RETRAINING_DRAWS), (0, 1.0), (True, 0)):
        with pytest.raises(ValueError, match="must be"):
            retraining_seed(seed, draw)


def test_the_section_refuses_fewer_than_one_or_too_many_draws():
    AttributionSection(n_inputs=1, retraining_draws=1).validate()
    for bad in (0, MAX_RETRAINING_DRAWS):
        with pytest.raises(ValueError, match="retraining_draws must be"):
            AttributionSection(n_inputs=1, retraining_draws=bad).validate()
    assert all(section.retraining_draws >= 3 for section in SECTION_DEFAULTS.values())


#: gmm at a size a test affords: its retraining and exact-denoiser projection take milliseconds
SMALL = dataclasses.replace(
    SECTION_DEFAULTS["quick"],
    removal_train=200,
    removal_test=60,
    removal_fractions=(0.5,),
    goar_levels=(0.5, 1.0),
    retrain_epochs=2,
    retraining_draws=3,
)


@pytest.fixture(scope="module")
def gmm_data():
    from cfcheck.kinds.attribution.baseline import RandomBaseline

    run = LocalRun(SMALL, seed=0)
    domain = run.domain("gmm")
    return run, removal_data(run, domain, "mlp", RandomBaseline(), seed=0)


@pytest.mark.parametrize("strategy", ["roar", "goar"])
def test_adding_draws_keeps_draw_zero_and_the_draws_retrain_differently(gmm_data, strategy, monkeypatch):
    run, data = gmm_data
    one = LocalRun(dataclasses.replace(SMALL, retraining_draws=1), seed=0)
    order = "morf"
    single = removal_curve(one, dataclasses.replace(data, domain=one.domain("gmm")), strategy, order)
    seeds = []
    real_retrain = removal.retrain
    monkeypatch.setattr(
        removal,
        "retrain",
        lambda r, d, x, y, draw=0: seeds.append(retraining_seed(r.seed, draw)) or real_retrain(r, d, x, y, draw),
    )
    curves = removal_curves(run, data, strategy, order)
    assert len(curves) == 3 and torch.equal(curves[0].outcomes, single.outcomes)
    # every retraining used one of the three draws' seeds, and each draw retrained
    assert set(seeds) == {retraining_seed(0, k) for k in range(3)}
    assert not all(torch.equal(curves[0].outcomes, c.outcomes) for c in curves[1:])


def test_goar_projects_each_level_once_whatever_the_draws(gmm_data, monkeypatch):
    run, data = gmm_data
    from cfcheck.models.generative.diffusion import projection

    calls = []
    real = projection.manifold_projection
    monkeypatch.setattr(projection, "manifold_projection", lambda *a, **k: calls.append(1) or real(*a, **k))
    removal_curves(run, data, "goar", "morf")
    assert len(calls) == 2 * len(SMALL.goar_levels)  # the training and the scored inputs, per level


def test_road_retrains_nothing_and_has_one_curve(gmm_data):
    run, data = gmm_data
    assert len(removal_curves(run, data, "road", "morf")) == 1


class _Recorder:
    def __init__(self):
        self.records = {}

    def __call__(self, key, samples, **kwargs):
        self.records[str(key)] = (torch.as_tensor(samples, dtype=torch.float64), kwargs)

    def unavailable(self, key, why):  # pragma: no cover - not reached
        raise AssertionError(why)


def test_a_gap_over_draws_gets_the_t_interval_of_its_draw_means_when_the_inputs_agree(monkeypatch):
    """Built so that every input scores alike within a draw: the crossed interval is then the t
    interval over the R draw means (closed form, scipy's quantile), whatever the inputs."""
    levels = (0.0, 1.0)
    # per draw, every input has the same outcome at level 1: the draws differ, the inputs agree
    method_heights, random_heights = [1.0, 1.0, 0.0], [0.0, 1.0, 1.0]
    n = 5

    def curves(heights):
        return tuple(
            RemovalCurve("roar", "lerf", levels, torch.tensor([[1.0] * n, [h] * n], dtype=torch.float64))
            for h in heights
        )

    monkeypatch.setattr(removal_scoring, "task_curves", lambda *a: (curves(method_heights), curves(random_heights)))
    from cfcheck.domains import get_domain

    task = SimpleNamespace(domain=get_domain("gmm"), needs=("train",))
    result = SimpleNamespace(task=task, sample_labels={})
    run = SimpleNamespace(outputs=lambda task, method: None)
    score = _Recorder()
    removal_scoring.score_removal(run, result, None, score, "roar", "lerf")
    samples, kwargs = score.records["roar_gap:lerf"]
    # area over levels (0, 1) = (1 + h)/2; the LeRF gap is method − random per draw: +0.5, 0, −0.5
    gaps = [(m - r) / 2 for m, r in zip(method_heights, random_heights)]
    assert samples.tolist() == pytest.approx([sum(gaps) / 3] * n)
    mean, sd = sum(gaps) / 3, math.sqrt(sum((g - sum(gaps) / 3) ** 2 for g in gaps) / 2)
    half = student_t.ppf(0.975, 2) * sd / math.sqrt(3)
    assert kwargs["ci"] == pytest.approx((mean - half, mean + half))
    assert kwargs["extra"]["draws"] == pytest.approx(gaps)
    area_samples, area_kwargs = score.records["roar_area:lerf"]
    assert area_kwargs["extra"]["curve"]["method"] == pytest.approx([1.0, 2 / 3])
    assert area_kwargs["extra"]["draws"]["random"] == pytest.approx([0.5, 1.0, 1.0])
