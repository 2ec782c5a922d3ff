"""What the realism CIs estimate, checked by simulation on the bundled morpho embeddings.

A realism score is a statistic of two sets: the counterfactuals and a reference drawn from the
real pool. Both are random, so the CI is meant to cover the *expected* score of a set of this
size and class mix against a fresh reference draw. Here real images stand in for the
counterfactuals (drawn from half of the reference split; the reference from the other half), so
that expectation can be estimated by averaging the score over many independent draws, and the
suites' own CI (score_realism, 200 resamples, quick-profile sizes) is checked against it:

- coverage: the interval holds the expected score in nearly every trial (nominal 95%);
- its mean width lies between 0.95× and 2.5× the spread of the score over fresh draws (the
  central 95% of the draws): narrower cannot cover, wider buys coverage with an uninformative
  interval.

Sets of real images (the counterfactuals' distribution equals the reference's), sets with a
shifted mean, sets with a wider covariance (KID's non-degenerate case) and, for FID, a narrower
one are checked. The
figures are in docs/statistics.md.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from cfcheck.domains import get_domain
from cfcheck.metrics.manifold import coverage, density
from cfcheck.metrics.realism import fid
from cfcheck.metrics.reference_sets import score_realism
from cfcheck.metrics.set_statistics import kid_all_pairs
from cfcheck.models.zoo import ModelZoo

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("realism-intervals")]

#: statistic and CI method of each realism score, as suites/vce/test_realism.py uses them
STATISTICS = {
    "fid": (fid, "bootstrap"),
    "kid": (kid_all_pairs, "half_sampling"),
    "density": (density, "centred_half_sampling"),
    "coverage": (coverage, "centred_half_sampling"),
}
PER_CLASS = 12  # the quick profile: 120 counterfactuals over 10 target classes
TRIALS = 40
DRAWS = 200


@pytest.fixture(scope="module")
def halves() -> tuple[tuple[torch.Tensor, torch.Tensor], tuple[torch.Tensor, torch.Tensor]]:
    features, labels = ModelZoo(get_domain("morpho"), torch.device("cpu")).realism_pool
    return (features[0::2], labels[0::2]), (features[1::2], labels[1::2])


def _score(halves, metric: str, seed: int, resamples: int, shift: torch.Tensor, spread_factor: float):
    (reference, reference_labels), (source, source_labels) = halves
    picker = torch.Generator().manual_seed(100_000 + seed)
    parts = []
    for k in range(10):
        rows = torch.nonzero(source_labels == k).flatten()
        parts.append(source[rows[torch.randperm(len(rows), generator=picker)[:PER_CLASS]]])
    fakes = torch.cat(parts) * spread_factor + shift
    classes = torch.arange(10).repeat_interleave(PER_CLASS)
    statistic, ci_method = STATISTICS[metric.split("_")[0]]
    return score_realism(
        statistic,
        reference,
        reference_labels,
        fakes,
        classes,
        conditional=metric.endswith("_target"),
        generator=torch.Generator().manual_seed(seed),
        n_resamples=resamples,
        seed=seed,
        ci_method=ci_method,
    )


@pytest.mark.parametrize(
    ("metric", "shift_size", "spread_factor"),
    [
        ("fid_target", 0.0, 1.0),
        ("fid_domain", 0.0, 1.0),
        ("kid_target", 0.0, 1.0),
        ("kid_domain", 0.0, 1.0),
        ("fid_domain", 1.5, 1.0),  # a shifted mean: the expected FID is twice the floor's
        # a wider covariance (features × 1.3): KID is no longer degenerate, and √½-scaled half-sampling
        # gave kid_domain intervals 0.72× the draws' spread here (37 of 40 covered)
        ("kid_domain", 0.0, 1.3),
        ("kid_target", 0.0, 1.3),
        ("fid_domain", 0.0, 1.3),
        # a narrower covariance (features × 0.77, counterfactuals less varied than real images): a permutation-null
        # correction of FID's half-sampling held 32 of 40 here (benchmarks/fid_intervals.py)
        ("fid_domain", 0.0, 0.77),
        # k-NN density and coverage: real sets, a shifted mean and a wider spread
        ("density_target", 0.0, 1.0),
        ("coverage_target", 0.0, 1.0),
        ("density_domain", 0.0, 1.0),
        ("coverage_domain", 0.0, 1.0),
        ("coverage_target", 1.5, 1.0),
        ("density_domain", 0.0, 1.3),
    ],
)
def test_the_realism_interval_covers_the_expected_score_and_stays_informative(
    halves, metric, shift_size, spread_factor
):
    direction = torch.from_numpy(np.random.default_rng(0).normal(size=halves[0][0].shape[1])).float()
    shift = shift_size * direction / direction.norm()
    draws = np.array(
        [_score(halves, metric, seed, 1, shift, spread_factor).value for seed in range(10_000, 10_000 + DRAWS)]
    )
    expected = float(draws.mean())
    spread = float(np.subtract(*np.percentile(draws, [97.5, 2.5])))
    intervals = [_score(halves, metric, seed, 200, shift, spread_factor).ci for seed in range(TRIALS)]
    covered = sum(low <= expected <= high for low, high in intervals)
    width = float(np.mean([high - low for low, high in intervals]))
    print(
        f"{metric} (shift {shift_size}, spread × {spread_factor}): {covered}/{TRIALS} covered, "
        f"mean width {width / spread:.2f}× the draws' spread"
    )  # docs/statistics.md's figures: pytest -s
    # 95% nominal: 34 of 40 is 3.6 standard deviations below the 38 a calibrated interval gives
    assert covered >= 34, f"{metric}: {covered}/{TRIALS} intervals hold the expected score {expected:.4g}"
    # an interval narrower on average than the draws' central 95% cannot hold them 95% of the time
    assert 0.95 * spread <= width <= 2.5 * spread, f"{metric}: mean width {width:.3g}, draws' spread {spread:.3g}"
