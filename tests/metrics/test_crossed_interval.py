"""The crossed (draws × inputs) t interval: it matches a two-way ANOVA written out by hand, one
draw or one input reduce it to scipy's t interval, and simulated experiments with a random effect
per draw are covered at about the nominal level even with few draws, where a percentile bootstrap
of the same tables and an interval over the inputs alone are not."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy import stats

from cfcheck.metrics.stats import crossed_interval


def _by_hand(table: np.ndarray, confidence: float = 0.95) -> tuple[float, float]:
    """The same interval from loops over the cells: sums of squares, mean squares, Satterthwaite."""
    rows, cols = table.shape
    grand = sum(sum(row) for row in table) / (rows * cols)
    row_means = [sum(table[i][j] for j in range(cols)) / cols for i in range(rows)]
    col_means = [sum(table[i][j] for i in range(rows)) / rows for j in range(cols)]
    ms_draws = cols * sum((m - grand) ** 2 for m in row_means) / (rows - 1)
    ms_inputs = rows * sum((m - grand) ** 2 for m in col_means) / (cols - 1)
    variance = (ms_draws + ms_inputs) / (rows * cols)
    freedom = (ms_draws + ms_inputs) ** 2 / (ms_draws**2 / (rows - 1) + ms_inputs**2 / (cols - 1))
    half = stats.t.ppf((1 + confidence) / 2, freedom) * variance**0.5
    return grand - half, grand + half


@pytest.mark.parametrize(("shape", "confidence"), [((2, 2), 0.95), ((5, 50), 0.95), ((3, 17), 0.8)])
def test_it_is_the_two_way_anova_interval(shape, confidence) -> None:
    rng = np.random.default_rng(sum(shape))
    table = rng.normal(size=(shape[0], 1)) + rng.normal(size=(1, shape[1])) + rng.normal(size=shape)
    assert crossed_interval(table, confidence=confidence) == pytest.approx(_by_hand(table, confidence), abs=1e-12)
    assert crossed_interval(torch.from_numpy(table)) == pytest.approx(_by_hand(table), abs=1e-9)


def test_one_draw_or_one_input_is_scipys_t_interval() -> None:
    row = np.random.default_rng(3).normal(size=40)
    expected = stats.t.interval(0.95, 39, loc=row.mean(), scale=stats.sem(row))
    assert crossed_interval(row[None]) == pytest.approx(expected, abs=1e-12)
    assert crossed_interval(row[:7, None]) == pytest.approx(
        stats.t.interval(0.95, 6, loc=row[:7].mean(), scale=stats.sem(row[:7])), abs=1e-12
    )


def _pigeonhole_bootstrap(table: np.ndarray, rng: np.random.Generator, resamples: int = 300) -> tuple[float, float]:
    """Percentile bootstrap resampling draws and inputs independently (Owen 2007), for comparison."""
    rows, cols = table.shape
    picked_rows = rng.integers(0, rows, size=(resamples, rows, 1))
    picked_cols = rng.integers(0, cols, size=(resamples, 1, cols))
    means = table[picked_rows, picked_cols].mean(axis=(1, 2))
    return tuple(np.percentile(means, [2.5, 97.5]))


def _coverage(experiments: int, draws: int, draw_sd: float, input_sd: float, seed: int) -> dict[str, float]:
    """Share of simulated experiments whose interval covers the grand mean μ."""
    rng = np.random.default_rng(seed)
    mu, hits = 0.3, {"crossed": 0, "bootstrap": 0, "inputs only": 0}
    for _ in range(experiments):
        table = (
            mu
            + rng.normal(0, draw_sd, size=(draws, 1))
            + rng.normal(0, input_sd, size=(1, 50))
            + rng.normal(0, input_sd, size=(draws, 50))
        )
        per_input = table.mean(axis=0)
        intervals = {
            "crossed": crossed_interval(table),
            "bootstrap": _pigeonhole_bootstrap(table, rng),
            "inputs only": stats.t.interval(0.95, 49, loc=per_input.mean(), scale=stats.sem(per_input)),
        }
        for name, (low, high) in intervals.items():
            hits[name] += low <= mu <= high
    return {name: count / experiments for name, count in hits.items()}


@pytest.mark.parametrize(("draws", "least"), [(5, 0.93), (3, 0.91)])
def test_few_draws_that_dominate_are_covered_at_about_the_nominal_level(draws, least) -> None:
    # a draw effect twice the input effect; measured (1,000 experiments): 5 draws 0.954, the
    # pigeonhole bootstrap 0.85, inputs only 0.25; 3 draws 0.93 / 0.72 / 0.21
    covered = _coverage(1000, draws, draw_sd=0.1, input_sd=0.05, seed=draws)
    assert covered["crossed"] >= least, covered
    assert covered["bootstrap"] <= covered["crossed"] - 0.04, covered
    assert covered["inputs only"] <= 0.6, covered


def test_without_a_draw_effect_it_is_not_much_wider_than_needed() -> None:
    covered = _coverage(1000, 5, draw_sd=0.0, input_sd=0.1, seed=11)  # measured: 0.951 (bootstrap 0.95)
    assert 0.94 <= covered["crossed"] <= 0.995, covered


@settings(max_examples=40, deadline=None)
@given(
    arrays(np.float64, st.tuples(st.integers(1, 5), st.integers(1, 8)), elements=st.floats(-10, 10, allow_nan=False)),
    st.floats(-5, 5),
    st.floats(0.1, 10),
)
def test_the_interval_is_centred_and_follows_an_affine_map(table, shift, factor) -> None:
    low, high = crossed_interval(table)
    assert low <= table.mean() + 1e-9 and table.mean() - 1e-9 <= high
    assert (low + high) / 2 == pytest.approx(table.mean(), abs=1e-9)
    moved = crossed_interval(factor * table + shift)
    assert moved == pytest.approx((factor * low + shift, factor * high + shift), abs=1e-7)


def test_a_constant_table_and_a_single_cell_give_a_point() -> None:
    assert crossed_interval(np.full((3, 4), 0.25)) == pytest.approx((0.25, 0.25))
    assert crossed_interval(np.array([[0.7]])) == (0.7, 0.7)


@pytest.mark.parametrize(
    ("values", "kwargs", "error", "match"),
    [
        ([[0.1, 0.2]], {}, TypeError, "torch.Tensor or numpy.ndarray"),
        (np.zeros(4), {}, ValueError, "2-D table"),
        (np.zeros((2, 0)), {}, ValueError, "non-empty"),
        (np.array([[0.1, np.nan]]), {}, ValueError, "NaN"),
        (np.zeros((2, 2)), {"confidence": 1.0}, ValueError, "strictly between 0 and 1"),
    ],
)
def test_crossed_interval_validation(values, kwargs, error, match) -> None:
    with pytest.raises(error, match=match):
        crossed_interval(values, **kwargs)


def test_tiny_values_give_the_scaled_interval_of_their_scaled_table():
    """Mean squares whose squares underflow (hypothesis found [[3.8e-137, 0]] raising
    ZeroDivisionError): the interval is the scaled interval of the same table at ordinary size."""
    ordinary = np.array([[3.83959193, 0.0], [1.5, 2.25]])
    for table in (ordinary[:1], ordinary):
        low, high = crossed_interval(table * 1e-137)
        expected_low, expected_high = crossed_interval(table)
        assert low == pytest.approx(expected_low * 1e-137, rel=1e-9)
        assert high == pytest.approx(expected_high * 1e-137, rel=1e-9)
