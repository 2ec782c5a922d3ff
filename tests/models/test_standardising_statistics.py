"""Embedding features are standardised by real data's spread; a feature real data barely moves is
scaled by the typical spread instead, so a counterfactual that activates it does not score 1e8."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from cfcheck.models.zoo import SPREAD_FLOOR, standardising_statistics


@settings(max_examples=60, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(2, 12), st.integers(1, 6)), elements=st.integers(-50, 50).map(float)))
def test_every_feature_with_a_spread_of_its_own_keeps_its_standard_deviation(values):
    features = torch.from_numpy(values)
    mean, scale = standardising_statistics(features)
    spread = values.std(axis=0, ddof=1)  # numpy's, independently of torch
    typical = np.median(spread)
    np.testing.assert_allclose(mean.numpy(), values.mean(axis=0), rtol=1e-12, atol=1e-9)
    for j, s in enumerate(spread):
        if typical > 0 and s >= SPREAD_FLOOR * typical:
            assert scale[j].item() == pytest.approx(s, rel=1e-9)
        elif typical > 0:
            assert scale[j].item() == pytest.approx(typical, rel=1e-9)
        else:
            assert scale[j].item() == 1.0
    assert bool((scale > 0).all())


def test_a_dead_unit_of_real_data_does_not_blow_up_a_counterfactual():
    real = torch.tensor([[1.0, 0.0, 2.0], [3.0, 0.0, 4.0], [5.0, 0.0, 6.0]])  # the middle unit never fires
    mean, scale = standardising_statistics(real)
    counterfactual = torch.tensor([[3.0, 4.0, 4.0]])
    standardised = (counterfactual - mean) / scale
    assert standardised.tolist() == [[0.0, 2.0, 0.0]]  # 4 / the typical spread 2, not 4 / 1e-8


def test_bad_shapes_are_refused():
    with pytest.raises(ValueError, match="N×D with N >= 2"):
        standardising_statistics(torch.zeros(1, 3))
