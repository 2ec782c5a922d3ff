"""The reference attributions against closed forms: on a linear model f(x) = W x + b every
method has an exact answer (gradient W_t, input×gradient x⊙W_t, SmoothGrad W_t, integrated
gradients x⊙W_t); on a quadratic one, integrated gradients' completeness and its trapezoid
error; captum's adapter against the same closed forms."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from cfcheck.domains import get_domain
from cfcheck.kinds.attribution.methods.saliency import (
    CounterfactualDirection,
    Gradient,
    InputTimesGradient,
    IntegratedGradients,
    NoisyAttribution,
    RandomAttribution,
    SmoothGrad,
    TrueFeature,
)


def _linear(d: int = 6, k: int = 3, seed: int = 0) -> nn.Linear:
    torch.manual_seed(seed)
    return nn.Linear(d, k)


@pytest.mark.parametrize(
    "method, closed_form",
    [
        (Gradient(), lambda x, w: w.expand_as(x)),
        (InputTimesGradient(), lambda x, w: x * w),
        (SmoothGrad(samples=5), lambda x, w: w.expand_as(x)),
        (IntegratedGradients(steps=4), lambda x, w: x * w),
    ],
)
def test_linear_model_closed_forms(method, closed_form):
    model = _linear()
    x = torch.randn(8, 6, generator=torch.Generator().manual_seed(1))
    target = torch.tensor([0, 1, 2, 0, 1, 2, 0, 1])
    expected = closed_form(x, model.weight.detach()[target])
    torch.testing.assert_close(method.attribute(x, model, target), expected, rtol=1e-5, atol=1e-6)


class _Quadratic(nn.Module):
    """f_0(x) = Σ x², f_1(x) = Σ x: IG of f_0 from 0 is x² exactly in the limit."""

    def forward(self, x):
        return torch.stack([(x**2).sum(1), x.sum(1)], dim=1)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(-3, 3), min_size=4, max_size=4), st.integers(1, 64))
def test_integrated_gradients_trapezoid_is_exact_for_a_quadratic(values, steps):
    # the path gradient 2·α·x is linear in α, so the trapezoid rule integrates it exactly
    x = torch.tensor([values], dtype=torch.float64)
    ig = IntegratedGradients(steps=steps).attribute(x, _Quadratic(), torch.tensor([0]))
    torch.testing.assert_close(ig, x**2)
    assert float(ig.sum()) == pytest.approx(float((x**2).sum()), rel=1e-9, abs=1e-9)  # completeness


def test_random_attribution_is_seeded_and_shaped_like_the_input():
    model, x, t = _linear(), torch.zeros(5, 6), torch.zeros(5, dtype=torch.long)
    first = RandomAttribution().attribute(x, model, t, generator=torch.Generator().manual_seed(3))
    again = RandomAttribution().attribute(x, model, t, generator=torch.Generator().manual_seed(3))
    other = RandomAttribution().attribute(x, model, t, generator=torch.Generator().manual_seed(4))
    assert first.shape == x.shape and torch.equal(first, again) and not torch.equal(first, other)


@settings(max_examples=25, deadline=None)
@given(st.floats(0, 10), st.integers(0, 1000))
def test_noisy_attribution_adds_noise_of_the_stated_ratio(ratio, seed):
    model = _linear()
    x = torch.randn(4, 6, generator=torch.Generator().manual_seed(seed))
    target = torch.tensor([0, 1, 2, 1])
    base = Gradient().attribute(x, model, target)
    noisy = NoisyAttribution(Gradient(), ratio).attribute(
        x, model, target, generator=torch.Generator().manual_seed(seed)
    )
    noise_norm = (noisy - base).norm(dim=1)
    torch.testing.assert_close(noise_norm, ratio * base.norm(dim=1), rtol=1e-4, atol=1e-5)


def test_true_feature_on_the_toy_points_to_the_target_mean():
    domain = get_domain("gmm")
    x = domain.split("test", 4).x
    target = torch.tensor([0, 1, 1, 0])
    feature = TrueFeature(domain).attribute(x, nn.Linear(64, 2), target)
    expected = domain.means[target] - domain.means[1 - target]
    torch.testing.assert_close(feature, expected.to(torch.float32))
    with pytest.raises(ValueError, match="ground-truth feature"):
        TrueFeature(get_domain("morpho"))


@pytest.mark.parametrize(
    "bad, message",
    [
        (dict(x=torch.zeros(3)), "batch dimension"),
        (dict(x=torch.zeros(3, 6, dtype=torch.long)), "floating-point"),
        (dict(target=torch.zeros(3)), "int64"),
        (dict(target=torch.zeros(2, dtype=torch.long)), r"shape \(3,\)"),
        (dict(model="not a model"), "nn.Module"),
    ],
)
def test_bad_inputs_are_named(bad, message):
    args = dict(x=torch.zeros(3, 6), model=_linear(), target=torch.zeros(3, dtype=torch.long)) | bad
    with pytest.raises((TypeError, ValueError), match=message):
        Gradient().attribute(args["x"], args["model"], args["target"])


def test_hyperparameters_are_validated():
    with pytest.raises(ValueError, match="samples"):
        SmoothGrad(samples=0)
    with pytest.raises(ValueError, match="ratio"):
        NoisyAttribution(Gradient(), -1.0)
    with pytest.raises(TypeError, match="attribute"):
        NoisyAttribution(object(), 1.0)


def test_captum_adapter_matches_the_closed_forms():
    attr = pytest.importorskip("captum.attr", reason="captum is an optional extra (pip install 'cfcheck[captum]')")
    from cfcheck.kinds.attribution.methods.captum_adapter import captum_method

    model = _linear()
    x = torch.randn(8, 6, generator=torch.Generator().manual_seed(2))
    target = torch.tensor([0, 1, 2, 0, 1, 2, 0, 1])
    w = model.weight.detach()[target]
    torch.testing.assert_close(
        captum_method(attr.IntegratedGradients, n_steps=16).attribute(x, model, target), x * w, rtol=1e-4, atol=1e-5
    )
    torch.testing.assert_close(captum_method(attr.Saliency, abs=False).attribute(x, model, target), w)
    with pytest.raises(ValueError, match="target"):
        captum_method(attr.Saliency, target=0)


def test_captum_missing_gives_install_advice(monkeypatch):
    import builtins

    from cfcheck.kinds.attribution.methods import captum_adapter
    from cfcheck.metrics._optional import OptionalDependencyError

    real_import = builtins.__import__

    def no_captum(name, *args, **kwargs):
        if name.startswith("captum"):
            raise ImportError("No module named 'captum'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_captum)
    monkeypatch.delitem(__import__("sys").modules, "captum.attr", raising=False)
    with pytest.raises(OptionalDependencyError, match=r'pip install "cfcheck\[captum\]"'):
        captum_adapter.require_captum()


def test_counterfactual_direction_points_from_the_counterfactual_to_the_input():
    class HalfWay:  # "explains" by moving half-way to a fixed image, recording the targets it got
        def explain(self, x, target, classifier):
            self.target = target
            return x / 2

    model = _linear(4, 3)
    x = torch.rand(5, 4)
    explainer = HalfWay()
    direction = CounterfactualDirection(explainer).attribute(x, model, torch.zeros(5, dtype=torch.long))
    torch.testing.assert_close(direction, x / 2)
    logits = model(x).detach()
    logits[:, 0] = float("-inf")
    assert torch.equal(explainer.target, logits.argmax(1))  # the runner-up once class 0 is excluded
    with pytest.raises(TypeError, match="explain"):
        CounterfactualDirection(object())


def test_randomisation_similarity_of_the_bundled_attributions_as_readme_reports():
    """The attribution table of docs/findings/attribution.md: model-dependent maps change with random weights, the input-
    multiplied ones and the seeded random map barely do (Adebayo et al.'s observation)."""
    from cfcheck.metrics.sanity import rank_similarity
    from cfcheck.models.zoo import ModelZoo

    domain, zoo = get_domain("morpho"), ModelZoo(get_domain("morpho"), "cpu")
    x = domain.split("test", 40).images
    target = zoo.logits("cnn", x).argmax(1)

    def similarity(method, support="all"):
        maps = [
            method.attribute(
                x,
                zoo[m],
                target,
                **({"generator": torch.Generator().manual_seed(0)} if isinstance(method, RandomAttribution) else {}),
            )
            for m in ("cnn", "random_net")
        ]
        return float(rank_similarity(maps[0], maps[1], support=support).mean())

    assert (
        similarity(Gradient()) < 0.4
    )  # 0.19 against random_net alone (docs/findings/attribution.md: 0.171 over five draws)
    assert similarity(Gradient(), "nonzero") == pytest.approx(similarity(Gradient()))  # no exact zeros
    assert similarity(InputTimesGradient()) > 0.9 and similarity(IntegratedGradients(steps=8)) > 0.9  # 0.995
    # on the pixels where either map is non-zero (the digit), the input factor's shared zeros are gone: 0.43-0.46
    assert similarity(InputTimesGradient(), "nonzero") < 0.7
    assert similarity(IntegratedGradients(steps=8), "nonzero") < 0.7
    assert similarity(RandomAttribution()) == pytest.approx(1.0)
    assert similarity(RandomAttribution(), "nonzero") == pytest.approx(1.0)
