"""Every reference method and control honours the VCE call contract the suites check."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from cfcheck.kinds import MethodKind, accepts_generator, detect_kinds
from cfcheck.kinds.vce.methods.adversarial import TargetedPGD
from cfcheck.kinds.vce.methods.contract import VisualExplainer
from cfcheck.kinds.vce.methods.controls import ClassMeanImage, IdentityControl, UniformNoiseControl
from cfcheck.kinds.vce.methods.nearest import NearestTargetNeighbour
from cfcheck.kinds.vce.methods.truth import RandomTargetImage
from cfcheck.kinds.vce.methods.wachter import WachterCounterfactual


def _bank_for(classifier: nn.Module) -> NearestTargetNeighbour:
    images = torch.rand(200, 1, 32, 32, generator=torch.Generator().manual_seed(99))
    device = next(classifier.parameters()).device
    with torch.no_grad():  # labels = predictions: every bank image is eligible
        labels = classifier(images.to(device)).argmax(dim=1).cpu()
    return NearestTargetNeighbour(images, labels, batch_size=64)


def _labelled_bank() -> tuple[torch.Tensor, torch.Tensor]:
    """Two random images of each of the ten classes (for the controls that return bank images)."""
    return torch.rand(20, 1, 32, 32, generator=torch.Generator().manual_seed(98)), torch.arange(10).repeat(2)


FACTORIES: dict[str, Callable[[nn.Module], object]] = {
    "identity": lambda classifier: IdentityControl(),
    "class_mean": lambda classifier: ClassMeanImage(*_labelled_bank()),
    "random_target": lambda classifier: RandomTargetImage(*_labelled_bank()),
    "noise": lambda classifier: UniformNoiseControl(),
    "pgd": lambda classifier: TargetedPGD(steps=10),
    "nearest": _bank_for,
    "wachter": lambda classifier: WachterCounterfactual(max_steps=30),
}
RANDOMISED = ("noise", "pgd", "random_target")


def _split(output: object) -> tuple[torch.Tensor, torch.Tensor | None]:
    if isinstance(output, tuple):
        x_cf, valid = output
        return x_cf, valid
    assert isinstance(output, torch.Tensor)
    return output, None


def _call(method: object, x: torch.Tensor, target: torch.Tensor, classifier: nn.Module, seed: int):
    return method.explain(x, target, classifier, generator=torch.Generator().manual_seed(seed))


@pytest.fixture(params=["linear", "cnn"])
def classifier(request: pytest.FixtureRequest, toys) -> nn.Module:
    return toys.linear_classifier() if request.param == "linear" else toys.small_cnn()


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_output_contract(name: str, toys, classifier: nn.Module) -> None:
    method = FACTORIES[name](classifier)
    x = toys.random_images(6, seed=1)
    target = toys.other_targets(classifier(x).argmax(dim=1), seed=2)
    x_before, target_before = x.clone(), target.clone()

    x_cf, valid = _split(_call(method, x, target, classifier, seed=3))

    assert x_cf.shape == x.shape and x_cf.dtype == x.dtype and x_cf.device == x.device
    assert torch.isfinite(x_cf).all()
    assert x_cf.min() >= 0 and x_cf.max() <= 1
    assert x_cf.data_ptr() != x.data_ptr()
    assert torch.equal(x, x_before) and torch.equal(target, target_before)
    if valid is not None:
        assert valid.dtype == torch.bool and valid.shape == (6,) and valid.device == x.device


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_deterministic_under_a_seeded_generator(name: str, toys, classifier: nn.Module) -> None:
    method = FACTORIES[name](classifier)
    x = toys.random_images(5, seed=4)
    target = toys.other_targets(classifier(x).argmax(dim=1), seed=5)
    first, first_valid = _split(_call(method, x, target, classifier, seed=7))
    second, second_valid = _split(_call(method, x, target, classifier, seed=7))
    assert torch.equal(first, second)
    if first_valid is not None:
        assert torch.equal(first_valid, second_valid)


@pytest.mark.parametrize("name", RANDOMISED)
def test_different_seeds_give_different_outputs(name: str, toys, linear_model: nn.Module) -> None:
    method = FACTORIES[name](linear_model)
    x = toys.random_images(4, seed=8)
    target = toys.other_targets(linear_model(x).argmax(dim=1), seed=9)
    first, _ = _split(_call(method, x, target, linear_model, seed=1))
    second, _ = _split(_call(method, x, target, linear_model, seed=2))
    assert not torch.equal(first, second)


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_without_generator_is_deterministic_and_leaves_global_rng_alone(
    name: str, toys, linear_model: nn.Module
) -> None:
    method = FACTORIES[name](linear_model)
    x = toys.random_images(3, seed=10)
    target = toys.other_targets(linear_model(x).argmax(dim=1), seed=11)
    state = torch.get_rng_state()
    first, _ = _split(method.explain(x, target, linear_model))
    assert torch.equal(torch.get_rng_state(), state)
    second, _ = _split(method.explain(x, target, linear_model))
    assert torch.equal(first, second)


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_detected_as_a_vce_that_takes_a_generator(name: str, linear_model: nn.Module) -> None:
    method = FACTORIES[name](linear_model)
    assert detect_kinds(method) == {MethodKind.VCE}
    assert accepts_generator(method.explain)


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_shares_the_one_vce_preamble(name: str, linear_model: nn.Module) -> None:
    # input and classifier checks, the empty batch and the generator are handled once, in the base
    assert isinstance(FACTORIES[name](linear_model), VisualExplainer)


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_empty_batch(name: str, linear_model: nn.Module) -> None:
    method = FACTORIES[name](linear_model)
    x = torch.zeros(0, 1, 32, 32)
    x_cf, valid = _split(method.explain(x, torch.zeros(0, dtype=torch.int64), linear_model))
    assert x_cf.shape == x.shape
    if valid is not None:
        assert valid.shape == (0,)


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_works_under_no_grad(name: str, toys, linear_model: nn.Module) -> None:
    """Callers often wrap evaluation in no_grad; gradient methods must still work."""
    method = FACTORIES[name](linear_model)
    x = toys.random_images(3, seed=12)
    target = toys.other_targets(linear_model(x).argmax(dim=1), seed=13)
    expected, _ = _split(_call(method, x, target, linear_model, seed=0))
    with torch.no_grad():
        got, _ = _split(_call(method, x, target, linear_model, seed=0))
    assert torch.equal(expected, got)


@settings(max_examples=15)
@given(n=st.integers(1, 4), seed=st.integers(0, 2**31 - 1))
def test_uniform_noise_is_exactly_the_generators_draws(toys, n: int, seed: int) -> None:
    classifier = toys.linear_classifier()
    x = toys.random_images(n, seed=seed % 1000)
    target = torch.zeros(n, dtype=torch.int64)
    noise = UniformNoiseControl().explain(x, target, classifier, generator=torch.Generator().manual_seed(seed))
    expected = torch.rand(n, 1, 32, 32, generator=torch.Generator().manual_seed(seed))
    assert torch.equal(noise, expected)  # exactly the generator's draws, whatever x is


def test_identity_returns_an_equal_copy(toys, linear_model: nn.Module) -> None:
    x = toys.random_images(4, seed=14)
    out = IdentityControl().explain(x, torch.zeros(4, dtype=torch.int64), linear_model)
    assert torch.equal(out, x) and out is not x and out.data_ptr() != x.data_ptr()
    out[0].fill_(0.5)
    assert not torch.equal(out, x)  # writing to the output cannot reach x


# -- argument validation: precise errors at the call site --------------------------------------
@pytest.mark.parametrize("name", sorted(FACTORIES))
@pytest.mark.parametrize(
    ("x", "target", "error", "match"),
    [
        ([[0.0]], torch.zeros(1, dtype=torch.int64), TypeError, "torch.Tensor"),
        (torch.zeros(2, 32, 32), torch.zeros(2, dtype=torch.int64), ValueError, "N×C×H×W"),
        (torch.zeros(2, 1, 32, 32, dtype=torch.int64), torch.zeros(2, dtype=torch.int64), TypeError, "floating"),
        (torch.zeros(2, 1, 32, 32), torch.zeros(2, dtype=torch.int32), TypeError, "int64"),
        (torch.zeros(2, 1, 32, 32), torch.zeros(3, dtype=torch.int64), ValueError, r"shape \(2,\)"),
        (torch.full((2, 1, 32, 32), 1.5), torch.zeros(2, dtype=torch.int64), ValueError, r"\[0, 1\]"),
    ],
)
def test_invalid_inputs_are_rejected(name, x, target, error, match, linear_model) -> None:
    method = FACTORIES[name](linear_model)
    with pytest.raises(error, match=match):
        method.explain(x, target, linear_model)


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_classifier_must_be_a_module(name: str, linear_model: nn.Module) -> None:
    method = FACTORIES[name](linear_model)
    with pytest.raises(TypeError, match="torch.nn.Module"):
        method.explain(torch.zeros(1, 1, 32, 32), torch.zeros(1, dtype=torch.int64), lambda x: x)


@pytest.mark.parametrize("name", ["pgd", "nearest", "wachter"])
def test_target_outside_the_classifier_classes_is_rejected(name: str, linear_model: nn.Module) -> None:
    method = FACTORIES[name](linear_model)
    with pytest.raises(ValueError, match=r"\[0, 9\]"):
        method.explain(torch.zeros(1, 1, 32, 32), torch.tensor([10]), linear_model)


@pytest.mark.parametrize("name", RANDOMISED)
def test_generator_must_be_a_generator(name: str, linear_model: nn.Module) -> None:
    method = FACTORIES[name](linear_model)
    with pytest.raises(TypeError, match="torch.Generator"):
        method.explain(torch.zeros(1, 1, 32, 32), torch.zeros(1, dtype=torch.int64), linear_model, generator=3)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_runs_on_the_device_of_x(name: str, toys) -> None:
    device = torch.device("cuda")
    classifier = toys.linear_classifier().to(device)
    method = FACTORIES[name](classifier)
    x = toys.random_images(4, seed=15).to(device)
    target = toys.other_targets(classifier(x).argmax(dim=1), seed=16)
    x_cf, valid = _split(method.explain(x, target, classifier, generator=torch.Generator(device).manual_seed(0)))
    assert x_cf.device == x.device and (valid is None or valid.device == x.device)


def test_the_preamble_is_abstract_without_counterfactuals() -> None:
    class Incomplete(VisualExplainer):
        pass

    with pytest.raises(TypeError, match="abstract"):
        Incomplete()
