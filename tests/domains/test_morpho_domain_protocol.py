"""Morpho's SCM capabilities the SCM suites and controls use: counterfactual parents, their
propagation from observed parents alone, image measurements and resampling with given parents."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from cfcheck.domains import get_domain
from cfcheck.domains.morpho.scm import abduct_intensity_noise, intensity_mechanism


@settings(max_examples=60, deadline=None)
@given(st.floats(0.6, 6.0), st.floats(-3.0, 3.0))
def test_intensity_noise_abduction_inverts_the_mechanism(thickness, eps):
    t, e = torch.tensor([thickness]), torch.tensor([eps])
    recovered = abduct_intensity_noise(t, intensity_mechanism(t, e))
    assert float(recovered) == pytest.approx(eps, abs=2e-3)


@pytest.mark.parametrize(
    "intervention",
    [
        {"thickness": torch.full((300,), 3.3)},
        {"intensity": torch.full((300,), 120.0)},
        {"digit": torch.full((300,), 7, dtype=torch.long)},
    ],
)
def test_parents_propagated_from_observed_ones_match_the_scm(intervention):
    domain = get_domain("morpho")
    index = torch.arange(300)
    propagated = domain.propagate_parents(domain.parents("test", index), intervention)
    truth = domain.counterfactual_parents("test", index, intervention)
    for name in domain.factor_names:
        torch.testing.assert_close(propagated[name].double(), truth[name].double(), atol=1e-3, rtol=0, msg=name)
    if "thickness" in intervention:  # intensity is thickness's child: it moved
        assert float((truth["intensity"] - domain.parents("test", index)["intensity"]).abs().mean()) > 1.0


def test_resampled_images_show_the_given_parents():
    domain = get_domain("morpho")
    parents = domain.counterfactual_parents("test", torch.arange(100), {"thickness": torch.full((100,), 4.0)})
    images = domain.resample_with_parents(parents, seed=5)
    measured = domain.measure_factors(images)
    assert float((measured["thickness"] - 4.0).abs().mean()) < 0.3
    torch.testing.assert_close(measured["intensity"], parents["intensity"], atol=1.0, rtol=0)
    assert not torch.equal(images, domain.resample_with_parents(parents, seed=6))
