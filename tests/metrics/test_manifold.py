"""k-NN density and coverage (Naeem et al. 2020) against a brute-force double loop, inputs with
known answers, properties, argument checks, and the class-mean collapse through score_realism."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.spatial.distance import cdist

from cfcheck.metrics.manifold import coverage, density, density_coverage
from cfcheck.metrics.reference_sets import score_realism
from cfcheck.metrics.set_statistics import set_statistic_engine


def brute_density_coverage(real: np.ndarray, fake: np.ndarray, k: int) -> tuple[float, float]:
    """The paper's sums, written out: one loop over real samples, one over fake samples."""
    real_distances = cdist(real, real)
    radii = []
    for i in range(len(real)):
        others = sorted(real_distances[i, j] for j in range(len(real)) if j != i)
        radii.append(others[k - 1])
    inside_count, covered = 0, 0
    for i in range(len(real)):
        hit = False
        for j in range(len(fake)):
            if np.sqrt(np.sum((fake[j] - real[i]) ** 2)) <= radii[i] + 1e-12:
                inside_count += 1
                hit = True
        covered += hit
    return inside_count / (k * len(fake)), covered / len(real)


def _gaussian(rows: int, dim: int, seed: int, shift: float = 0.0) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=(rows, dim)) + shift


@pytest.mark.parametrize(("n", "m", "dim", "k"), [(20, 15, 3, 5), (40, 7, 8, 1), (9, 30, 2, 8)])
def test_density_and_coverage_equal_the_brute_force_sums(n, m, dim, k):
    real, fake = _gaussian(n, dim, n), _gaussian(m, dim, m + 1, shift=0.4)
    got = density_coverage(real, fake, k=k)
    assert got == pytest.approx(brute_density_coverage(real, fake, k), abs=1e-12)
    assert (density(real, fake, k=k), coverage(real, fake, k=k)) == got


def test_the_real_set_itself_covers_every_ball_and_lies_in_k_plus_one_each():
    real = _gaussian(50, 4, 0)
    # each real point lies in its own ball and in those of the real points it is among the k nearest of:
    # summed over balls, every ball holds itself and its k nearest others (no ties in continuous data)
    assert density_coverage(real, real, k=5) == pytest.approx((6 / 5, 1.0))


def test_fresh_samples_of_the_real_distribution_have_density_one_on_average():
    # P(a fresh sample lies in real ball i) = k / N by exchangeability, so E[density] = 1 exactly
    values = [density(_gaussian(60, 3, seed), _gaussian(60, 3, 1000 + seed)) for seed in range(200)]
    assert np.mean(values) == pytest.approx(1.0, abs=0.03)
    coverages = [coverage(_gaussian(60, 3, seed), _gaussian(60, 3, 1000 + seed)) for seed in range(50)]
    assert 0.5 < np.mean(coverages) < 1.0  # a fresh real set misses some balls


def test_a_fake_set_far_away_scores_zero():
    real = _gaussian(30, 5, 1)
    assert density_coverage(real, _gaussian(10, 5, 2, shift=100.0)) == (0.0, 0.0)


def test_a_set_collapsed_onto_one_real_point_covers_about_k_plus_one_balls():
    n, k = 100, 5
    values = []
    for seed in range(100):
        real = _gaussian(n, 3, seed)
        collapsed = np.repeat(real[:1], 20, axis=0)
        values.append(coverage(real, collapsed, k=k))
        assert values[-1] <= 0.15
    # its own ball plus, on average, the k balls of the points it is a k-nearest neighbour of
    assert np.mean(values) == pytest.approx((k + 1) / n, abs=0.01)


finite = st.floats(-10, 10, allow_nan=False, width=64)


@settings(max_examples=40, deadline=None)
@given(
    arrays(np.float64, st.tuples(st.integers(7, 20), st.just(3)), elements=finite),
    arrays(np.float64, st.tuples(st.integers(2, 12), st.just(3)), elements=finite),
    st.integers(1, 5),
    st.randoms(use_true_random=False),
)
def test_properties(real, fake, k, random):
    got_density, got_coverage = density_coverage(real, fake, k=k)
    assert 0.0 <= got_coverage <= 1.0 and got_density >= 0.0
    # every fake lies in at most N balls: density ≤ N / k
    assert got_density <= len(real) / k + 1e-12
    order = list(range(len(fake)))
    random.shuffle(order)
    assert density_coverage(real, fake[order], k=k) == (got_density, got_coverage)
    # density is a mean over fakes: a union's density is the size-weighted mean of its parts'
    other = fake[::-1] * 0.5
    union = density(real, np.vstack([fake, other]), k=k)
    expected = (len(fake) * got_density + len(other) * density(real, other, k=k)) / (len(fake) + len(other))
    assert union == pytest.approx(expected, abs=1e-12)
    # coverage cannot fall when fakes are added
    assert coverage(real, np.vstack([fake, other]), k=k) >= got_coverage


@pytest.mark.parametrize(
    ("real", "fake", "k", "error", "message"),
    [
        (np.zeros((5, 2)), np.zeros((3, 2)), 5, ValueError, "smaller than the number of real samples"),
        (np.zeros((5, 2)), np.zeros((3, 2)), 0, ValueError, "`k` must be an int >= 1"),
        (np.zeros((5, 2)), np.zeros((3, 2)), True, ValueError, "`k` must be an int >= 1"),
        (np.zeros((5, 2)), np.zeros((3, 2)), 2.0, ValueError, "`k` must be an int >= 1"),
        (np.zeros((5, 2)), np.zeros((3, 3)), 2, ValueError, "same feature dimension"),
        (np.zeros(5), np.zeros((3, 2)), 2, ValueError, "real_features"),
        (np.zeros((5, 2)), np.zeros((1, 2)), 2, ValueError, "fake_features"),
        (np.full((5, 2), np.nan), np.zeros((3, 2)), 2, ValueError, "real_features"),
        ("real", np.zeros((3, 2)), 2, TypeError, "real_features"),
    ],
)
def test_arguments_are_checked(real, fake, k, error, message):
    with pytest.raises(error, match=message):
        density_coverage(real, fake, k=k)


def test_coverage_fails_a_class_mean_that_fid_like_realism_cannot_tell_by_density_alone():
    """Per class, a cluster of real features; counterfactuals: fresh members of the cluster, or the
    cluster's mean repeated (a prototype per class). Coverage separates them by far; the prototype
    still lies where the class is dense, so its density stays near the real sets'."""
    gen = torch.Generator().manual_seed(0)
    classes, per_class, dim = 4, 12, 6
    centres = torch.randn(classes, dim, generator=gen, dtype=torch.float64) * 6
    pool_labels = torch.arange(classes).repeat_interleave(150)
    pool = centres[pool_labels] + torch.randn(len(pool_labels), dim, generator=gen, dtype=torch.float64)
    fake_classes = torch.arange(classes).repeat_interleave(per_class)
    fresh = centres[fake_classes] + torch.randn(len(fake_classes), dim, generator=gen, dtype=torch.float64)
    prototype = centres[fake_classes].clone()

    def score(statistic, fakes):
        return score_realism(
            statistic,
            pool,
            pool_labels,
            fakes,
            fake_classes,
            conditional=True,
            generator=torch.Generator().manual_seed(1),
            n_resamples=50,
            seed=0,
            ci_method="centred_half_sampling",
        )

    real_like, collapsed = score(coverage, fresh), score(coverage, prototype)
    assert collapsed.ci[1] < 0.5 * min(real_like.floors) < real_like.ci[0]
    assert real_like.ci[0] <= real_like.value <= real_like.ci[1]
    assert collapsed.ci[0] <= collapsed.value <= collapsed.ci[1]
    assert score(density, prototype).value > 0.5 * min(score(density, fresh).floors)


@pytest.mark.parametrize("statistic", [density, coverage], ids=["density", "coverage"])
def test_the_engine_equals_the_statistic_on_gathered_rows(statistic):
    real, fake = torch.from_numpy(_gaussian(30, 4, 3)), torch.from_numpy(_gaussian(12, 4, 4, shift=0.3))
    engine = set_statistic_engine(statistic)
    sets = engine(real)
    assert sets(fake) == statistic(real, fake)
    rng = np.random.default_rng(0)
    half = (
        np.stack([rng.permutation(30)[:15] for _ in range(4)]),
        np.stack([rng.permutation(12)[:6] for _ in range(4)]),
    )
    bootstrap = (rng.integers(0, 30, (4, 30)), rng.integers(0, 12, (4, 12)))  # repeated rows
    for index_real, index_fake in (half, bootstrap):
        expected = [
            statistic(real[torch.from_numpy(i)], fake[torch.from_numpy(j)]) for i, j in zip(index_real, index_fake)
        ]
        assert sets.resampled(fake, index_real, index_fake).tolist() == pytest.approx(expected, abs=1e-12)
    with pytest.raises(ValueError, match="needs more than k"):
        sets.resampled(fake, half[0][:, :5], half[1])


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n_real=st.integers(12, 120),
    keep=st.floats(0.1, 0.9),
    repeats=st.booleans(),
    k=st.integers(1, 6),
)
def test_the_engine_ranks_every_kind_of_subset_like_the_gathered_rows(seed, n_real, keep, repeats, k):
    """Small subsets leave rows with fewer than k members among their first shortlist candidates
    (ranked over the whole shortlist) or in the whole shortlist (ranked over the subset's own
    distances), and repeated rows take the subset's distances too: every path must give the
    statistic of the gathered rows."""
    rng = np.random.default_rng(seed)
    real = torch.from_numpy(rng.normal(size=(n_real, 3)))
    fake = torch.from_numpy(rng.normal(size=(9, 3)) * 1.3)
    size = max(k + 1, int(keep * n_real))
    rows = (
        rng.integers(0, n_real, (6, size)) if repeats else np.stack([rng.permutation(n_real)[:size] for _ in range(6)])
    )
    cols = np.stack([rng.permutation(9)[:5] for _ in range(6)])
    for statistic in (density, coverage):
        engine = set_statistic_engine(statistic)(real, k=k)
        got = engine.resampled(fake, rows, cols)
        for r in range(6):
            expected = brute_density_coverage(real[rows[r]].numpy(), fake[cols[r]].numpy(), k)
            assert got[r] == pytest.approx(expected[statistic is coverage], abs=1e-12)


@pytest.mark.parametrize("conditional", [True, False], ids=["target", "domain"])
def test_score_realism_gives_the_same_numbers_through_the_engine(conditional):
    gen = torch.Generator().manual_seed(5)
    pool_labels = torch.arange(3).repeat_interleave(120)
    pool = torch.randn(len(pool_labels), 5, generator=gen, dtype=torch.float64) + pool_labels[:, None]
    fake_classes = torch.tensor([0] * 10 + [1] * 6 + [2] * 8)
    fakes = torch.randn(len(fake_classes), 5, generator=gen, dtype=torch.float64) + fake_classes[:, None] + 0.2
    for statistic in (density, coverage):
        kwargs = dict(conditional=conditional, n_resamples=30, seed=2, ci_method="centred_half_sampling")
        fast = score_realism(
            statistic, pool, pool_labels, fakes, fake_classes, generator=torch.Generator().manual_seed(3), **kwargs
        )
        slow = score_realism(
            lambda a, b: statistic(a, b),
            pool,
            pool_labels,
            fakes,
            fake_classes,  # no engine
            generator=torch.Generator().manual_seed(3),
            **kwargs,
        )
        assert fast.value == pytest.approx(slow.value, abs=1e-12)
        assert fast.floors == pytest.approx(slow.floors, abs=1e-12)
        assert fast.ci == pytest.approx(slow.ci, abs=1e-12)
