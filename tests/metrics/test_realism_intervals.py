"""What the realism CIs estimate, checked by simulation on the bundled morpho embeddings.

A realism score is a statistic of two sets: the counterfactuals and a reference drawn from the
real pool. Both are random, so the CI is meant to cover the *expected* score of a set of this
size and class mix against a fresh reference draw. Here real images stand in for the
counterfactuals (drawn from half of the reference split; the reference from the other half), so
that expectation can be estimated by averaging the score over many independent draws, and the
suites' own CI (score_realism, 200 resamples, quick-profile sizes) is checked against it:

- coverage: the interval holds the expected score in nearly every trial (nominal 95%);
- it stays informative: no wider than 2.5× the spread of the score over fresh draws (the
  central 95% of the draws), so coverage is not bought with an unbounded interval.

Measured when written (README "What the realism intervals estimate"): FID intervals cover 79–80
of 80 and are ~1.7× wider than that spread (conservative); KID 76–79 of 80, ~1.25×.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from cfcheck.metrics.realism import fid
from cfcheck.metrics.set_statistics import kid_all_pairs
from cfcheck.reference_sets import score_realism
from cfcheck.zoo import ModelZoo

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("realism-intervals")]

PER_CLASS = 12  # the quick profile: 120 counterfactuals over 10 target classes
TRIALS = 40
DRAWS = 200


@pytest.fixture(scope="module")
def halves() -> tuple[tuple[torch.Tensor, torch.Tensor], tuple[torch.Tensor, torch.Tensor]]:
    features, labels = ModelZoo("morpho", torch.device("cpu")).realism_pool
    return (features[0::2], labels[0::2]), (features[1::2], labels[1::2])


def _score(halves, metric: str, seed: int, resamples: int, shift: torch.Tensor):
    (reference, reference_labels), (source, source_labels) = halves
    picker = torch.Generator().manual_seed(100_000 + seed)
    parts = []
    for k in range(10):
        rows = torch.nonzero(source_labels == k).flatten()
        parts.append(source[rows[torch.randperm(len(rows), generator=picker)[:PER_CLASS]]])
    fakes = torch.cat(parts) + shift
    classes = torch.arange(10).repeat_interleave(PER_CLASS)
    return score_realism(
        fid if metric.startswith("fid") else kid_all_pairs, reference, reference_labels, fakes, classes,
        conditional=metric.endswith("_target"), generator=torch.Generator().manual_seed(seed),
        n_resamples=resamples, seed=seed, ci_method="half_sampling" if metric.startswith("kid") else "bootstrap")


@pytest.mark.parametrize(("metric", "shift_size"), [
    ("fid_target", 0.0), ("fid_domain", 0.0), ("kid_target", 0.0), ("kid_domain", 0.0),
    ("fid_domain", 1.5),  # sets that differ from the reference: the expected FID is twice the floor's
])
def test_the_realism_interval_covers_the_expected_score_and_stays_informative(halves, metric, shift_size):
    direction = torch.from_numpy(np.random.default_rng(0).normal(size=halves[0][0].shape[1])).float()
    shift = shift_size * direction / direction.norm()
    draws = np.array([_score(halves, metric, seed, 1, shift).value for seed in range(10_000, 10_000 + DRAWS)])
    expected = float(draws.mean())
    spread = float(np.subtract(*np.percentile(draws, [97.5, 2.5])))
    intervals = [_score(halves, metric, seed, 200, shift).ci for seed in range(TRIALS)]
    covered = sum(low <= expected <= high for low, high in intervals)
    width = float(np.mean([high - low for low, high in intervals]))
    # 95% nominal: 34 of 40 is 3.6 standard deviations below the 38 a calibrated interval gives
    assert covered >= 34, f"{metric}: {covered}/{TRIALS} intervals hold the expected score {expected:.4g}"
    assert width <= 2.5 * spread, f"{metric}: mean width {width:.3g} against a spread of the draws of {spread:.3g}"
