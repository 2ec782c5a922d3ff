"""The scalar spline flow (normflows) and the morpho attribute mechanisms, against the known SCM."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from cfcheck.domains.morpho.scm import intensity_mechanism, sample_factors
from cfcheck.domains.morpho.scm_mechanisms import (
    FLOW_RECIPES,
    MorphoAttributeMechanisms,
    parent_condition,
    true_intensity_cdf,
    true_thickness_cdf,
)
from cfcheck.models.generative import GenerativeTrainConfig, train_generative_model
from cfcheck.models.generative.flow import ScalarSplineFlow, train_flow


def test_log_prob_of_an_untrained_flow_is_the_standardised_gaussian():
    """Splines start as the identity: log p(v) is N(mean, std) of the standardisation data (scipy)."""
    flow = ScalarSplineFlow(context_features=0)
    data = torch.tensor([1.0, 2.0, 4.0, 7.0])
    flow.set_standardisation(data)
    v = torch.tensor([-1.0, 0.5, 3.0, 9.0])
    expected = stats.norm.logpdf(v.numpy(), loc=data.mean().item(), scale=data.std().item())
    np.testing.assert_allclose(flow.log_prob(v).detach().numpy(), expected, rtol=1e-5)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(-8.0, 8.0), min_size=1, max_size=16), st.integers(0, 2**16))
def test_abduction_then_prediction_is_the_identity(values, seed):
    torch.manual_seed(seed)
    flow = ScalarSplineFlow(context_features=1, num_layers=2)
    with torch.no_grad():  # random (not identity) splines
        for p in flow.parameters():
            p.add_(0.1 * torch.randn_like(p))
    v = torch.tensor(values)
    c = torch.randn(len(values), 1)
    with torch.no_grad():
        back = flow.predict(flow.abduct(v, c), c)
    torch.testing.assert_close(back, v, atol=1e-3, rtol=1e-4)


def test_flow_validates_its_arguments():
    with pytest.raises(ValueError, match="context_features"):
        ScalarSplineFlow(context_features=-1)
    with pytest.raises(ValueError, match="tail_bound"):
        ScalarSplineFlow(tail_bound=0.0)
    conditional, plain = ScalarSplineFlow(context_features=1), ScalarSplineFlow()
    with pytest.raises(ValueError, match="conditional"):
        conditional.abduct(torch.zeros(3))
    with pytest.raises(ValueError, match="unconditional"):
        plain.abduct(torch.zeros(3), torch.zeros(3, 1))
    with pytest.raises(ValueError, match="shape"):
        conditional.abduct(torch.zeros(3), torch.zeros(2, 1))
    with pytest.raises(ValueError, match="finite"):
        plain.abduct(torch.tensor([float("nan")]))


def test_true_cdfs_match_the_scm_by_monte_carlo():
    """The closed forms the quality bars use agree with draws of the SCM itself."""
    factors = sample_factors(20_000, seed=7)
    assert stats.kstest(factors.thickness.double().numpy(), true_thickness_cdf).statistic < 0.015
    pit = true_intensity_cdf(factors.intensity.double().numpy(), factors.thickness.double().numpy())
    assert stats.kstest(pit, "uniform").statistic < 0.015
    # a wrong conditional (thickness shifted) is detected
    shifted = true_intensity_cdf(factors.intensity.double().numpy(), factors.thickness.double().numpy() + 0.3)
    assert stats.kstest(shifted, "uniform").statistic > 0.1


def test_a_flow_trained_on_scm_draws_learns_the_true_conditional():
    """Maximum likelihood on 6,000 SCM draws: the learned p(i | t) is the SCM's (PIT uniform), and
    counterfactual intensities under do(t) track the SCM's with the same ε.

    One training run's KS statistic depends on the CPU's float kernels as much as on the fit: after
    30 epochs training seeds 3–6 gave 0.045, 0.035, 0.016, 0.039 on one CPU and 0.062, 0.023, 0.021,
    0.036 on another (an AVX-512 Xeon), where seed 3 alone crossed 0.06. So three training seeds are
    judged together: their median must be below 0.06 and each below 0.08 (an untrained flow, and a
    conditional shifted by 0.3, are above 0.1)."""
    torch.manual_seed(0)
    train, test = sample_factors(6000, seed=1), sample_factors(2000, seed=2)
    statistics = []
    for seed in (3, 4, 5):
        config = GenerativeTrainConfig(seed=seed, epochs=30, batch_size=128, lr=3e-3)
        flow, _ = train_flow(
            train.intensity, train.thickness[:, None], {"context_features": 1, "num_bins": 16, "hidden": 32}, config
        )
        with torch.no_grad():
            drawn = flow.sample(len(test), test.thickness[:, None], generator=torch.Generator().manual_seed(0))
            new_t = test.thickness.flip(0)
            cf = flow.predict(flow.abduct(test.intensity, test.thickness[:, None]), new_t[:, None])
        pit = true_intensity_cdf(drawn.double().numpy(), test.thickness.double().numpy())
        statistics.append(stats.kstest(pit, "uniform").statistic)
        error = (cf - intensity_mechanism(new_t, test.eps)).abs().mean()
        assert error < 4.0, (seed, error)
    assert sorted(statistics)[1] < 0.06 and max(statistics) < 0.08, statistics
    # an untrained flow is far from it (the test can fail)
    untrained = ScalarSplineFlow(context_features=1)
    untrained.set_standardisation(train.intensity, train.thickness[:, None])
    with torch.no_grad():
        raw = untrained.sample(len(test), test.thickness[:, None], generator=torch.Generator().manual_seed(0))
    assert (
        stats.kstest(true_intensity_cdf(raw.double().numpy(), test.thickness.double().numpy()), "uniform").statistic
        > 0.1
    )


@pytest.mark.parametrize("name", sorted(FLOW_RECIPES))
def test_flow_recipe_smoke_configuration_trains_into_a_manifest_entry(tmp_path, name):
    from cfcheck.domains import get_domain

    recipe = FLOW_RECIPES[name]
    config = recipe.smoke_config()
    entry = train_generative_model(
        recipe,
        get_domain("morpho").split(config.split, config.n),
        tmp_path,
        domain="morpho",
        smoke=True,
        log=lambda line: None,
    )
    assert entry["family"] == "flow" and entry["role"] == "attribute_mechanism"
    assert (tmp_path / entry["file"]).exists() and set(recipe.quality_bar) <= set(entry["quality"])
    assert entry["quality"]["roundtrip_max_error"] < 1e-2


def _mechanisms(trained: bool) -> MorphoAttributeMechanisms:
    if trained:
        from cfcheck.models import registry

        return MorphoAttributeMechanisms(
            registry.load_model("thickness_flow", domain="morpho"),
            registry.load_model("intensity_flow", domain="morpho"),
        )
    thickness, intensity = ScalarSplineFlow(), ScalarSplineFlow(context_features=1)
    factors = sample_factors(500, seed=4)
    thickness.set_standardisation(factors.thickness)
    intensity.set_standardisation(factors.intensity, factors.thickness[:, None])
    return MorphoAttributeMechanisms(thickness, intensity)


@pytest.mark.parametrize("trained", [False, True], ids=["untrained", "bundled"])
def test_propagation_follows_the_causal_graph(trained):
    mechanisms = _mechanisms(trained)
    factors = sample_factors(300, seed=9)
    parents = {"thickness": factors.thickness, "intensity": factors.intensity, "digit": factors.digit}
    null = mechanisms.propagate(parents, {})
    torch.testing.assert_close(null["thickness"], parents["thickness"], atol=1e-4, rtol=0)
    torch.testing.assert_close(null["intensity"], parents["intensity"], atol=0.05, rtol=0)
    new_i = torch.full((300,), 100.0)
    do_i = mechanisms.propagate(parents, {"intensity": new_i})
    assert torch.equal(do_i["intensity"], new_i)
    torch.testing.assert_close(do_i["thickness"], parents["thickness"], atol=1e-4, rtol=0)
    do_d = mechanisms.propagate(parents, {"digit": (factors.digit + 1) % 10})
    assert torch.equal(do_d["digit"], (factors.digit + 1) % 10)
    new_t = factors.thickness.flip(0)
    do_t = mechanisms.propagate(parents, {"thickness": new_t})
    assert torch.equal(do_t["thickness"], new_t)
    if trained:  # the learned intensity mechanism reproduces the SCM's counterfactual (same ε)
        error = (do_t["intensity"] - intensity_mechanism(new_t, factors.eps)).abs().mean()
        assert error < 3.0, error


def test_parent_condition_is_thickness_intensity_and_one_hot_digit():
    parents = {
        "thickness": torch.tensor([1.5, 3.0]),
        "intensity": torch.tensor([70.0, 200.0]),
        "digit": torch.tensor([0, 9]),
    }
    c = parent_condition(parents)
    assert c.shape == (2, 12)
    assert torch.equal(c[:, :2], torch.tensor([[1.5, 70.0], [3.0, 200.0]]))
    assert torch.equal(c[:, 2:].argmax(1), parents["digit"]) and torch.equal(c[:, 2:].sum(1), torch.ones(2))
    with pytest.raises(KeyError, match="digit"):
        parent_condition({"thickness": parents["thickness"], "intensity": parents["intensity"]})
    with pytest.raises(ValueError, match="digit"):
        parent_condition({**parents, "digit": torch.tensor([0, 10])})


@pytest.mark.parametrize("name", sorted(FLOW_RECIPES))
def test_bundled_flows_meet_their_bars_remeasured(name):
    """Re-measured here with scipy from the SCM's own draws (not the recipe's code), on the test split."""
    from cfcheck.core.thresholds import Bars
    from cfcheck.domains.morpho.splits import split_factors
    from cfcheck.models.registry import load_model, model_entry

    flow, entry = load_model(name, domain="morpho"), model_entry(name, domain="morpho")
    test = split_factors("test")
    with torch.no_grad():
        if name == "thickness_flow":
            drawn = flow.sample(5000, generator=torch.Generator().manual_seed(12)).double().numpy()
            statistic = stats.ks_2samp(drawn, sample_factors(20_000, seed=99).thickness.double().numpy()).statistic
            key = "ks"
        else:
            drawn = flow.sample(len(test), test.thickness[:, None], generator=torch.Generator().manual_seed(12))
            twin = intensity_mechanism(
                test.thickness, torch.randn(len(test), generator=torch.Generator().manual_seed(1))
            )
            statistic = stats.ks_2samp(drawn.double().numpy(), twin.double().numpy()).statistic
            key = "conditional_ks"
    # a two-sample statistic carries the second sample's noise too: allow its 95% quantile on top
    assert statistic <= entry["quality_bar"][key]["max"] + 0.025, statistic
    assert all(Bars.from_dict(bar).passes(entry["quality"][metric]) for metric, bar in entry["quality_bar"].items())
