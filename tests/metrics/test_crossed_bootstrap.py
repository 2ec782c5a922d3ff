"""The crossed (draws × inputs) bootstrap: one draw is the plain input bootstrap, several match a
brute-force loop and the pigeonhole variance, and simulated experiments with a random effect per
draw are covered at about the nominal level, where resampling inputs alone is not."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from cfcheck.metrics.stats import _DRAW_STREAM, bootstrap_ci, crossed_bootstrap_ci


@pytest.mark.parametrize(("n", "seed"), [(2, 0), (37, 3), (500, 11)])
def test_one_draw_is_the_plain_input_bootstrap(n, seed) -> None:
    row = np.random.default_rng(n).normal(size=n)
    assert crossed_bootstrap_ci(row[None], seed=seed) == bootstrap_ci(row, seed=seed)
    assert crossed_bootstrap_ci(torch.from_numpy(row)[None], seed=seed, confidence=0.8) == bootstrap_ci(
        row, seed=seed, confidence=0.8)


def test_several_draws_match_a_brute_force_loop() -> None:
    table = np.random.default_rng(5).normal(size=(4, 9))
    resamples, seed = 300, 2
    inputs = np.random.default_rng(seed).integers(0, 9, size=(resamples, 9))  # one block at this size
    draws = np.random.default_rng([seed, _DRAW_STREAM]).integers(0, 4, size=(resamples, 4))
    # each input's mean over the resampled draws, its difference from the mean over all draws
    # widened by √(R/(R−1)), then the mean over the resampled inputs
    widen = np.sqrt(4 / 3)
    stats = []
    for r in range(resamples):
        per_input = [np.mean(table[:, i]) + widen * (np.mean([table[d, i] for d in draws[r]]) - np.mean(table[:, i]))
                     for i in range(9)]
        stats.append(np.mean([per_input[i] for i in inputs[r]]))
    expected = tuple(np.percentile(stats, [2.5, 97.5]))
    assert crossed_bootstrap_ci(table, n_resamples=resamples, seed=seed) == pytest.approx(expected, abs=1e-12)


def test_the_spread_is_the_pigeonhole_variance() -> None:
    # Var* of the pigeonhole mean of a table, from the plug-in variances of its row means, column
    # means and cells: ((N−1) v_row + (R−1) v_col + v_cell) / (R·N); here of the table whose cells
    # are moved from their column's mean by √(R/(R−1)) times their difference
    rng = np.random.default_rng(8)
    table = rng.normal(size=(6, 1)) + rng.normal(size=(1, 40)) + 0.5 * rng.normal(size=(6, 40))
    rows, cols = table.shape
    widened = table.mean(0) + np.sqrt(rows / (rows - 1)) * (table - table.mean(0))
    variance = ((cols - 1) * widened.mean(1).var() + (rows - 1) * widened.mean(0).var() + widened.var()) / (rows * cols)
    low, high = crossed_bootstrap_ci(table, n_resamples=20_000, confidence=0.6827, seed=1)
    assert (high - low) / 2 == pytest.approx(np.sqrt(variance), rel=0.05)


def _coverage(experiments: int, draws: int, seed: int) -> tuple[float, float, float]:
    """Share of simulated experiments whose interval covers the grand mean μ: the crossed
    bootstrap, the input bootstrap of the per-input means over the draws, and the input bootstrap
    of one draw (the interval the randomisation similarity had with one random network)."""
    rng = np.random.default_rng(seed)
    mu, hits = 0.3, np.zeros(3)
    for experiment in range(experiments):
        table = (mu + rng.normal(0, 0.06, size=(draws, 1)) + rng.normal(0, 0.1, size=(1, 50))
                 + rng.normal(0, 0.1, size=(draws, 50)))
        intervals = (crossed_bootstrap_ci(table, n_resamples=400, seed=experiment),
                     bootstrap_ci(table.mean(0), n_resamples=400, seed=experiment),
                     bootstrap_ci(table[0], n_resamples=400, seed=experiment))
        hits += [low <= mu <= high for low, high in intervals]
    return tuple(hits / experiments)


def test_draws_with_their_own_mean_are_covered_only_when_the_draws_are_resampled() -> None:
    crossed, inputs_only, one_draw = _coverage(400, draws=5, seed=0)  # 0.91, 0.66, 0.49
    assert crossed >= 0.9, crossed
    assert inputs_only <= crossed - 0.1 and one_draw <= 0.6, (inputs_only, one_draw)


@settings(max_examples=30, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(1, 5), st.integers(1, 8)),
              elements=st.floats(-10, 10, allow_nan=False)), st.floats(-5, 5), st.floats(0.1, 10),
       st.integers(0, 2**31))
def test_the_interval_stays_near_the_cells_and_follows_an_affine_map(table, shift, factor, seed) -> None:
    low, high = crossed_bootstrap_ci(table, n_resamples=200, seed=seed)
    # a resampled cell moves from its input's mean by at most √(R/(R−1)) times the cells' range
    reach = (np.sqrt(2.0) - 1.0) * (table.max() - table.min()) + 1e-9
    assert table.min() - reach <= low <= high <= table.max() + reach
    moved = crossed_bootstrap_ci(factor * table + shift, n_resamples=200, seed=seed)
    assert moved == pytest.approx((factor * low + shift, factor * high + shift), abs=1e-8)
    if table.shape[0] == 1:
        assert (low, high) == bootstrap_ci(table[0], n_resamples=200, seed=seed)


def test_a_constant_table_and_a_single_cell_give_a_point() -> None:
    assert crossed_bootstrap_ci(np.full((3, 4), 0.25)) == pytest.approx((0.25, 0.25))
    assert crossed_bootstrap_ci(np.array([[0.7]])) == (0.7, 0.7)


@pytest.mark.parametrize(
    ("values", "kwargs", "error", "match"),
    [
        ([[0.1, 0.2]], {}, TypeError, "torch.Tensor or numpy.ndarray"),
        (np.zeros(4), {}, ValueError, "2-D table"),
        (np.zeros((2, 0)), {}, ValueError, "non-empty"),
        (np.array([[0.1, np.nan]]), {}, ValueError, "NaN"),
        (np.zeros((2, 2)), {"confidence": 1.0}, ValueError, "strictly between 0 and 1"),
        (np.zeros((2, 2)), {"n_resamples": 0}, ValueError, "n_resamples"),
        (np.zeros((2, 2)), {"seed": -1}, ValueError, "seed"),
    ],
)
def test_crossed_bootstrap_validation(values, kwargs, error, match) -> None:
    with pytest.raises(error, match=match):
        crossed_bootstrap_ci(values, **kwargs)
