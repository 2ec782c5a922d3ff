"""Effectiveness metrics against direct computations and properties."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from cfcheck.metrics.effectiveness import categorical_hits, standardised_error


def test_standardised_error_matches_numpy():
    rng = np.random.default_rng(0)
    measured, wanted = rng.normal(size=50), rng.normal(size=50)
    np.testing.assert_allclose(
        standardised_error(torch.tensor(measured), torch.tensor(wanted), 0.7).numpy(),
        np.abs(measured - wanted) / 0.7,
        rtol=1e-6,
    )


def test_categorical_hits_count_matches():
    hits = categorical_hits(torch.tensor([0, 1, 2, 3]), torch.tensor([0, 2, 2, 1]))
    assert hits.tolist() == [1.0, 0.0, 1.0, 0.0]


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: standardised_error(torch.zeros(3), torch.zeros(4), 1.0), "shape"),
        (lambda: standardised_error(torch.zeros(3), torch.zeros(3), 0.0), "scale must be > 0"),
        (lambda: categorical_hits(torch.zeros(3), torch.zeros(3, dtype=torch.long)), "integer"),
        (lambda: categorical_hits(torch.zeros(3, dtype=torch.long), torch.zeros(2, dtype=torch.long)), "one length"),
    ],
)
def test_bad_arguments_are_named(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(-100, 100), min_size=1, max_size=20), st.floats(0.01, 10), st.floats(-5, 5))
def test_standardised_error_is_shift_invariant_and_scales_inversely(values, scale, shift):
    a = torch.tensor(values, dtype=torch.float64)
    b = a.flip(0)
    base = standardised_error(a, b, scale)
    torch.testing.assert_close(standardised_error(a + shift, b + shift, scale), base, atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(standardised_error(a, b, 2 * scale) * 2, base, atol=1e-4, rtol=1e-4)
    assert bool((base >= 0).all())
