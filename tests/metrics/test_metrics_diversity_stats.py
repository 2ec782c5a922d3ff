"""Pairwise diversity against an explicit pair loop; bootstrap CIs by construction and properties."""

from __future__ import annotations

import functools

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binomtest

from cfcheck.metrics.closeness import minkowski_distance
from cfcheck.metrics.diversity import pairwise_diversity
from cfcheck.metrics.realism import fid
from cfcheck.metrics.set_intervals import bootstrap_set_ci
from cfcheck.metrics.stats import Summary, bootstrap_ci, summarize, verdict, wilson_interval

L2 = functools.partial(minkowski_distance, p=2)


def _cfs(n: int, k: int, seed: int = 0) -> torch.Tensor:
    return torch.rand(n, k, 1, 6, 6, generator=torch.Generator().manual_seed(seed))


def test_diversity_matches_pair_loop() -> None:
    cfs = _cfs(5, 4)
    expected = []
    for n in range(5):
        pairs = [
            np.linalg.norm((cfs[n, i] - cfs[n, j]).double().numpy().ravel()) for i in range(4) for j in range(i + 1, 4)
        ]
        assert len(pairs) == 6
        expected.append(np.mean(pairs))
    result = pairwise_diversity(cfs, L2)
    assert result.dtype == torch.float32 and result.shape == (5,)
    np.testing.assert_allclose(result.numpy(), expected, rtol=1e-6)


def test_diversity_of_two_is_their_distance_and_of_copies_is_zero() -> None:
    cfs = _cfs(3, 2, seed=1)
    torch.testing.assert_close(pairwise_diversity(cfs, L2), L2(cfs[:, 0], cfs[:, 1]))
    copies = cfs[:, :1].repeat(1, 3, 1, 1, 1)
    assert pairwise_diversity(copies, L2).abs().max().item() == 0.0


@pytest.mark.parametrize(
    ("cfs", "distance", "error", "match"),
    [
        (_cfs(3, 1), L2, ValueError, "K >= 2"),
        (torch.rand(3, 2, 6, 6), L2, ValueError, "5-D"),
        (_cfs(3, 2), "l2", TypeError, "callable"),
        (_cfs(3, 2), lambda a, b: L2(a, b)[:2], ValueError, "one value per image"),
        (_cfs(3, 2), lambda a, b: [0.0, 0.0, 0.0], TypeError, "torch.Tensor"),
    ],
)
def test_diversity_validation(cfs, distance, error, match) -> None:
    with pytest.raises(error, match=match):
        pairwise_diversity(cfs, distance)


def test_bootstrap_contains_the_mean_and_is_ordered() -> None:
    values = np.random.default_rng(0).exponential(size=200)
    low, high = bootstrap_ci(values)
    assert low < values.mean() < high


def test_bootstrap_shrinks_with_n() -> None:
    rng = np.random.default_rng(1)
    small, large = rng.normal(size=50), rng.normal(size=2000)
    width_small = np.subtract(*bootstrap_ci(small)[::-1])
    width_large = np.subtract(*bootstrap_ci(large)[::-1])
    # Width scales like 1/sqrt(n): expect about sqrt(40) ≈ 6.3 times narrower.
    assert width_large < width_small / 3


def test_bootstrap_is_deterministic_under_seed() -> None:
    values = torch.from_numpy(np.random.default_rng(2).normal(size=100)).float()
    assert bootstrap_ci(values, seed=3) == bootstrap_ci(values, seed=3)
    assert bootstrap_ci(values, seed=3) != bootstrap_ci(values, seed=4)


def test_bootstrap_vectorised_and_generic_statistics_agree() -> None:
    values = np.random.default_rng(5).normal(size=60)
    fast = bootstrap_ci(values, statistic=np.mean, n_resamples=300, seed=1)
    slow = bootstrap_ci(values, statistic=lambda v: float(np.mean(v)), n_resamples=300, seed=1)
    np.testing.assert_allclose(fast, slow, rtol=1e-12)


def test_bootstrap_known_cases() -> None:
    assert bootstrap_ci(np.array([0.25])) == (0.25, 0.25)
    assert bootstrap_ci(np.full(30, 2.0)) == (2.0, 2.0)
    # Percentile interval of the median of {0, 1}-valued data stays within {0, 0.5, 1}.
    low, high = bootstrap_ci(np.array([0.0, 1.0, 1.0, 1.0]), statistic=np.median)
    assert {low, high} <= {0.0, 0.5, 1.0}


@pytest.mark.parametrize(
    ("values", "kwargs", "error", "match"),
    [
        (np.array([1.0, np.nan]), {}, ValueError, "NaN"),
        (np.array([]), {}, ValueError, "empty"),
        (np.zeros((2, 2)), {}, ValueError, "1-D"),
        ([1.0, 2.0], {}, TypeError, "ndarray"),
        (np.zeros(3), {"confidence": 1.0}, ValueError, "confidence"),
        (np.zeros(3), {"n_resamples": 0}, ValueError, "n_resamples"),
    ],
)
def test_bootstrap_validation(values, kwargs, error, match) -> None:
    with pytest.raises(error, match=match):
        bootstrap_ci(values, **kwargs)


def test_set_bootstrap_of_mean_difference_covers_the_truth() -> None:
    rng = np.random.default_rng(6)
    a, b = rng.normal(1.0, 1.0, size=(400, 1)), rng.normal(0.0, 1.0, size=(300, 1))
    low, high = bootstrap_set_ci(a, b, lambda x, y: float(x.mean() - y.mean()), n_resamples=500)
    assert low < 1.0 < high
    assert high - low < 0.5


def test_set_bootstrap_runs_fid_on_tensors_deterministically() -> None:
    gen = torch.Generator().manual_seed(0)
    real, fake = torch.randn(80, 4, generator=gen), torch.randn(60, 4, generator=gen) + 1.0
    ci = bootstrap_set_ci(real, fake, fid, n_resamples=60, seed=2)
    assert ci == bootstrap_set_ci(real, fake, fid, n_resamples=60, seed=2)
    assert 0.0 <= ci[0] < fid(real, fake) < ci[1]


def test_set_bootstrap_validation() -> None:
    with pytest.raises(TypeError, match="callable"):
        bootstrap_set_ci(np.zeros((3, 1)), np.zeros((3, 1)), "fid")
    with pytest.raises(ValueError, match="at least one row"):
        bootstrap_set_ci(np.zeros((0, 1)), np.zeros((3, 1)), fid)
    with pytest.raises(ValueError, match="NaN or infinite"):
        bootstrap_set_ci(np.zeros((3, 1)), np.zeros((3, 1)), lambda a, b: float("nan"), n_resamples=5)


def test_summarize_gives_proportions_a_wilson_interval_and_other_means_a_bootstrap() -> None:
    hits = np.array([1.0] * 119 + [0.0])
    summary = summarize(hits)
    assert isinstance(summary, Summary) and summary.n == 120 and summary.value == pytest.approx(119 / 120)
    low, high = binomtest(119, 120).proportion_ci(0.95, method="wilson")
    assert (summary.ci_low, summary.ci_high) == pytest.approx((low, high), abs=1e-9)
    distances = np.random.default_rng(7).uniform(size=150)
    spread = summarize(distances, seed=1)
    # a bootstrap of the mean of uniforms: half-width ≈ 1.96·sqrt(1/12/150) ≈ 0.046
    assert spread.ci_high - spread.ci_low == pytest.approx(2 * 1.96 * np.sqrt(1 / 12 / 150), rel=0.25)


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 400), st.data())
def test_wilson_matches_scipy(n, data) -> None:
    k = data.draw(st.integers(0, n))
    low, high = wilson_interval(k, n)
    expected = binomtest(k, n).proportion_ci(0.95, method="wilson")
    assert (low, high) == pytest.approx((expected.low, expected.high), abs=1e-9)
    assert 0.0 <= low <= k / n <= high <= 1.0


def test_wilson_keeps_its_coverage_near_one_where_the_percentile_bootstrap_does_not() -> None:
    rng = np.random.default_rng(0)
    p, n, trials = 0.995, 120, 400
    wilson = bootstrap = 0
    for _ in range(trials):
        sample = (rng.uniform(size=n) < p).astype(float)
        low, high = wilson_interval(int(sample.sum()), n)
        wilson += low <= p <= high
        low, high = bootstrap_ci(sample, n_resamples=200, seed=int(rng.integers(1 << 30)))
        bootstrap += low <= p <= high
    assert wilson / trials >= 0.9
    assert bootstrap / trials < 0.7  # all-hit samples give the zero-width interval [1, 1]


@settings(max_examples=200, deadline=None)
@given(st.floats(-5, 5), st.floats(0, 3), st.floats(0, 3), st.floats(-5, 5), st.sampled_from(["min", "max"]))
def test_verdict_against_its_definition(value, below, above, bound, kind) -> None:
    low, high = value - below, value + above
    result = verdict(value, low, high, bound, kind)
    good = (lambda v: v >= bound) if kind == "min" else (lambda v: v <= bound)
    if good(low) and good(high):
        assert result == "pass"
    elif not good(low) and not good(high):
        assert result == "fail"
    else:
        assert result == "inconclusive"


def test_verdict_special_cases() -> None:
    assert verdict(float("nan"), 0.0, 1.0, 0.5, "min") == "error"
    assert verdict(0.7, float("nan"), float("nan"), 0.5, "min") == "pass"  # no interval: the value decides
    with pytest.raises(ValueError, match="kind"):
        verdict(0.7, 0.6, 0.8, 0.5, "above")


def test_stratified_bootstrap_keeps_strata_sizes() -> None:
    rng = np.random.default_rng(4)
    a = (rng.normal(size=(30, 2)), rng.normal(size=(5, 2)))
    b = (rng.normal(size=(12, 2)), rng.normal(size=(3, 2)))
    seen = []

    def statistic(real, fake):
        seen.append(tuple(len(p) for p in (*real, *fake)))
        return float(sum(p.mean() for p in fake))

    bootstrap_set_ci(a, b, statistic, n_resamples=20)
    assert set(seen) == {(30, 5, 12, 3)}


def test_half_sampling_interval_covers_kid_of_identical_distributions() -> None:
    from cfcheck.metrics.set_statistics import kid_all_pairs

    rng = np.random.default_rng(5)
    covered = 0
    for trial in range(40):
        real, fake = rng.normal(size=(200, 4)), rng.normal(size=(60, 4))
        point = kid_all_pairs(real, fake)
        low, high = bootstrap_set_ci(
            real, fake, kid_all_pairs, n_resamples=100, seed=trial, point=point, method="half_sampling"
        )
        covered += low <= 0.0 <= high  # the true MMD² of identical distributions is 0
    assert covered >= 34  # nominal 95%: at least 85% of 40


def test_set_bootstrap_method_validation() -> None:
    with pytest.raises(ValueError, match="needs the full-set value"):
        bootstrap_set_ci(np.zeros((3, 1)), np.zeros((3, 1)), fid, method="half_sampling")
    with pytest.raises(ValueError, match="method"):
        bootstrap_set_ci(np.zeros((3, 1)), np.zeros((3, 1)), fid, method="jackknife")


def test_a_continuous_quantity_of_zeros_and_ones_keeps_the_bootstrap():
    """Distances that are all 0 (a perfect method) are not a proportion: no Wilson width."""
    from cfcheck.metrics.stats import summarize

    zeros = torch.zeros(60)
    assert summarize(zeros).ci_high > 0.05  # read as indicators: Wilson's upper bound at n = 60
    continuous = summarize(zeros, indicators=False)
    assert (continuous.ci_low, continuous.value, continuous.ci_high) == (0.0, 0.0, 0.0)
