"""The attribution kind's one preamble (:mod:`cfcheck.kinds.attribution.methods.contract`): what every
bundled attribution's ``attribute(x, model, target[, generator=])`` checks before the model runs."""

from __future__ import annotations

import inspect

import pytest
import torch
from torch import nn

from cfcheck.kinds.attribution.methods.captum_adapter import CaptumAttribution
from cfcheck.kinds.attribution.methods.contract import AttributionMethod, StochasticAttributionMethod
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


class _Raises(nn.Module):
    """A model that fails the test if it is called."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        raise AssertionError("the model was called")


class _Normal(StochasticAttributionMethod):
    """Standard normal maps from the generator it is handed (what it received is kept)."""

    def attributions(self, x, model, target, generator):
        self.received = generator
        return torch.randn(x.shape, generator=generator)


class _Ones(AttributionMethod):
    def attributions(self, x, model, target, generator):
        self.received = generator
        return torch.ones_like(x)


class _Algorithm:
    """A captum-like algorithm class (the adapter builds it around the model)."""

    def __init__(self, model):
        self.model = model

    def attribute(self, inputs, target):
        return self.model(inputs)


def _inputs(n: int = 3):
    return torch.linspace(-1, 1, n * 6).reshape(n, 6), nn.Linear(6, 2), torch.zeros(n, dtype=torch.int64)


# -- the bundled attributions are on the preamble, with the signatures they were published with -------
@pytest.mark.parametrize(
    ("cls", "takes_generator"),
    [
        (Gradient, False),
        (InputTimesGradient, False),
        (SmoothGrad, True),
        (IntegratedGradients, False),
        (RandomAttribution, True),
        (NoisyAttribution, True),
        (TrueFeature, False),
        (CounterfactualDirection, True),
        (CaptumAttribution, False),
    ],
)
def test_every_bundled_attribution_is_an_attribution_method_with_its_published_signature(cls, takes_generator):
    assert issubclass(cls, AttributionMethod) and issubclass(cls, StochasticAttributionMethod) == takes_generator
    parameters = list(inspect.signature(cls.attribute).parameters)
    assert parameters[:4] == ["self", "x", "model", "target"]
    assert ("generator" in parameters) == takes_generator


# -- validation: each error names the argument, what was expected and what came --------------------
@pytest.mark.parametrize(
    ("change", "error", "message"),
    [
        ({"x": [[0.0]]}, TypeError, "Expected `x` to be a floating-point torch.Tensor, but got list"),
        ({"x": torch.zeros(3, 6, dtype=torch.int64)}, TypeError, "but got a torch.int64 tensor"),
        ({"x": torch.zeros(3)}, ValueError, r"batch dimension \(N×…\), but got shape \(3,\)"),
        ({"model": "a model"}, TypeError, "Expected `model` to be a torch.nn.Module, but got str"),
        (
            {"target": torch.zeros(3)},
            TypeError,
            "Expected `target` to be an int64 torch.Tensor, but got a torch.float32",
        ),
        ({"target": [0, 0, 0]}, TypeError, "int64 torch.Tensor, but got list"),
        (
            {"target": torch.zeros(2, dtype=torch.int64)},
            ValueError,
            r"`target` to have shape \(3,\) to match `x`, but got \(2,\)",
        ),
    ],
)
@pytest.mark.parametrize(
    "method",
    [_Ones(), _Normal(), Gradient(), SmoothGrad(samples=1), RandomAttribution(), NoisyAttribution(_Ones(), 1.0)],
    ids=lambda m: type(m).__name__,
)
def test_bad_inputs_are_refused_with_what_was_expected_and_what_came(method, change, error, message):
    x, model, target = _inputs()
    arguments = {"x": x, "model": model, "target": target} | change
    with pytest.raises(error, match=message):
        method.attribute(arguments["x"], arguments["model"], arguments["target"])


def test_a_generator_that_is_not_one_is_refused():
    x, model, target = _inputs()
    with pytest.raises(TypeError, match="Expected `generator` to be a torch.Generator or None, but got int"):
        RandomAttribution().attribute(x, model, target, generator=3)


# -- an empty batch: an empty map, and the model is never called --------------------------------------
@pytest.mark.parametrize(
    "method",
    [
        _Ones(),
        _Normal(),
        Gradient(),
        InputTimesGradient(),
        SmoothGrad(),
        IntegratedGradients(),
        RandomAttribution(),
        NoisyAttribution(Gradient(), 2.0),
        CaptumAttribution(_Algorithm),
    ],
    ids=lambda m: type(m).__name__,
)
@pytest.mark.parametrize("shape", [(0, 6), (0, 1, 4, 4)])
def test_an_empty_batch_returns_an_empty_map_without_calling_the_model(method, shape):
    out = method.attribute(torch.zeros(shape), _Raises(), torch.zeros(0, dtype=torch.int64))
    assert out.shape == shape and out.dtype == torch.float32
    assert not hasattr(method, "received")  # the method's own code never ran


# -- the generator: the caller's, or a fresh one seeded 0 --------------------------------------------
def test_no_generator_means_a_fresh_one_seeded_zero():
    x, model, target = _inputs()
    expected = torch.randn(x.shape, generator=torch.Generator().manual_seed(0))
    assert torch.equal(_Normal().attribute(x, model, target), expected)
    assert torch.equal(_Normal().attribute(x, model, target), expected)  # not the global RNG's draw
    assert torch.equal(RandomAttribution().attribute(x, model, target), expected)


def test_the_callers_generator_is_the_one_drawn_from():
    x, model, target = _inputs()
    generator = torch.Generator().manual_seed(5)
    method = _Normal()
    out = method.attribute(x, model, target, generator=generator)
    assert method.received is generator
    assert torch.equal(out, torch.randn(x.shape, generator=torch.Generator().manual_seed(5)))


def test_a_deterministic_attribution_is_handed_a_seeded_generator_it_may_ignore():
    x, model, target = _inputs()
    method = _Ones()
    assert torch.equal(method.attribute(x, model, target), torch.ones(3, 6))
    assert torch.equal(method.received.get_state(), torch.Generator().manual_seed(0).get_state())


# -- the hook is required ---------------------------------------------------------------------------
@pytest.mark.parametrize("base", [AttributionMethod, StochasticAttributionMethod])
def test_an_attribution_without_attributions_cannot_be_built(base):
    incomplete = type("Incomplete", (base,), {})
    with pytest.raises(TypeError, match="abstract"):
        incomplete()
