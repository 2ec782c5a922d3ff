"""The SCM kind's one preamble (:mod:`cfcheck.kinds.scm.methods.contract`): what every bundled SCM
generator's ``counterfactual(x, parents, intervention[, generator=])`` checks before its mechanism runs."""

from __future__ import annotations

import inspect

import pytest
import torch

from cfcheck.kinds.scm.methods.contract import SCMGenerator, StochasticSCMGenerator
from cfcheck.kinds.scm.methods.controls import SCMIdentity, SCMNoise, SCMResample, SCMTruth
from cfcheck.kinds.scm.methods.vae import SCMVAE


class _Raises:
    """A mechanism (image or attribute) that fails the test if anything calls it."""

    condition_features = 3

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)

        def called(*args, **kwargs):
            raise AssertionError(f"the mechanism's {name}() was called")

        return called


class _Uniform(StochasticSCMGenerator):
    """Uniform noise from the generator it is handed (what it received is kept)."""

    def counterfactuals(self, x, parents, intervention, generator):
        self.received = generator
        return torch.rand(x.shape, generator=generator)


class _Copy(SCMGenerator):
    def counterfactuals(self, x, parents, intervention, generator):
        self.received = generator
        return x.clone()


def _inputs(n: int = 2):
    x = torch.linspace(0, 1, n * 16).reshape(n, 1, 4, 4)
    return x, {"a": torch.zeros(n), "b": torch.arange(n)}, {"a": torch.ones(n)}


# -- the bundled generators are on the preamble, with the signatures they were published with ----------
@pytest.mark.parametrize(
    ("cls", "takes_generator"),
    [(SCMIdentity, False), (SCMNoise, True), (SCMTruth, False), (SCMResample, True), (SCMVAE, False)],
)
def test_every_bundled_generator_is_an_scm_generator_with_its_published_signature(cls, takes_generator):
    assert issubclass(cls, SCMGenerator) and issubclass(cls, StochasticSCMGenerator) == takes_generator
    parameters = list(inspect.signature(cls.counterfactual).parameters)
    assert parameters[:4] == ["self", "x", "parents", "intervention"]
    assert ("generator" in parameters) == takes_generator


# -- validation: each error names the argument, what was expected and what came --------------------
@pytest.mark.parametrize(
    ("change", "error", "message"),
    [
        ({"x": [[0.0]]}, TypeError, "Expected `x` to be a torch.Tensor, but got list"),
        ({"x": torch.zeros(2, 4, 4)}, ValueError, r"`x` to have shape N×C×H×W, but got shape \(2, 4, 4\)"),
        (
            {"x": torch.zeros(2, 1, 4, 4, dtype=torch.int64)},
            TypeError,
            "floating-point tensor, but got dtype torch.int64",
        ),
        ({"x": torch.full((2, 1, 4, 4), 1.5)}, ValueError, r"`x` in \[0, 1\], but got values in \[1.5, 1.5\]"),
        ({"parents": [0.0, 1.0]}, TypeError, "Expected `parents` to be a dict of N-tensors by name, but got list"),
        ({"intervention": {"a": 1.0}}, TypeError, r"`intervention\['a'\]` to be an N-tensor, but got float"),
        (
            {"intervention": {"a": torch.ones(3)}},
            ValueError,
            r"`intervention\['a'\]` to be an N-tensor of shape \(2,\) to match `x`, but got shape \(3,\)",
        ),
        ({"parents": {"b": torch.zeros(2, 1)}}, ValueError, r"`parents\['b'\]`.*but got shape \(2, 1\)"),
    ],
)
@pytest.mark.parametrize("method", [_Copy(), _Uniform(), SCMIdentity(), SCMNoise()], ids=lambda m: type(m).__name__)
def test_bad_inputs_are_refused_with_what_was_expected_and_what_came(method, change, error, message):
    x, parents, intervention = _inputs()
    arguments = {"x": x, "parents": parents, "intervention": intervention} | change
    with pytest.raises(error, match=message):
        method.counterfactual(arguments["x"], arguments["parents"], arguments["intervention"])


def test_the_vae_adapter_keeps_its_published_errors():
    """The errors the SCM VAE adapter raised before the preamble (its tests match these words)."""
    method = SCMVAE(vae=_Raises(), mechanisms=_Raises())
    x, parents, _ = _inputs()
    with pytest.raises(ValueError, match="N-tensor"):
        method.counterfactual(x, parents, {"a": torch.tensor([1.0, 2.0, 3.0])})
    with pytest.raises(ValueError, match="N×C×H×W"):
        method.counterfactual(x[0], parents, {})


def test_a_generator_that_is_not_one_is_refused():
    x, parents, intervention = _inputs()
    with pytest.raises(TypeError, match="Expected `generator` to be a torch.Generator or None, but got int"):
        SCMNoise().counterfactual(x, parents, intervention, generator=3)


# -- an empty batch: an empty answer, and no mechanism runs -------------------------------------------
@pytest.mark.parametrize(
    "method",
    [_Copy(), _Uniform(), SCMIdentity(), SCMNoise(), SCMVAE(vae=_Raises(), mechanisms=_Raises())],
    ids=lambda m: type(m).__name__,
)
def test_an_empty_batch_returns_an_empty_one_without_calling_a_mechanism(method):
    x, parents, intervention = _inputs(0)
    out = method.counterfactual(x, parents, intervention)
    assert out.shape == (0, 1, 4, 4) and out.dtype == torch.float32
    assert not hasattr(method, "received")  # the method's own code never ran


# -- the generator: the caller's, or a fresh one seeded 0 --------------------------------------------
def test_no_generator_means_a_fresh_one_seeded_zero():
    x, parents, intervention = _inputs()
    expected = torch.rand(x.shape, generator=torch.Generator().manual_seed(0))
    method = _Uniform()
    assert torch.equal(method.counterfactual(x, parents, intervention), expected)
    assert torch.equal(method.counterfactual(x, parents, intervention), expected)  # not the global RNG's draw
    assert torch.equal(SCMNoise().counterfactual(x, parents, intervention), expected)


def test_the_callers_generator_is_the_one_drawn_from():
    x, parents, intervention = _inputs()
    generator = torch.Generator().manual_seed(5)
    method = _Uniform()
    out = method.counterfactual(x, parents, intervention, generator=generator)
    assert method.received is generator
    assert torch.equal(out, torch.rand(x.shape, generator=torch.Generator().manual_seed(5)))


def test_a_deterministic_generator_is_handed_a_seeded_one_it_may_ignore():
    x, parents, intervention = _inputs()
    method = _Copy()
    assert torch.equal(method.counterfactual(x, parents, intervention), x)
    assert torch.equal(method.received.get_state(), torch.Generator().manual_seed(0).get_state())


# -- the hook is required ---------------------------------------------------------------------------
@pytest.mark.parametrize("base", [SCMGenerator, StochasticSCMGenerator])
def test_a_generator_without_counterfactuals_cannot_be_built(base):
    incomplete = type("Incomplete", (base,), {})
    with pytest.raises(TypeError, match="abstract"):
        incomplete()
