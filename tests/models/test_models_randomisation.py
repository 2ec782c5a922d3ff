"""Cascading model-parameter randomisation: copies only, top-down, seeded, spread, frozen."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from cfcheck.domains.morpho import load_split
from cfcheck.models.classifiers.architectures import StandardisedLogits, build_model
from cfcheck.models.classifiers.randomisation import cascading_randomisation, parametrised_layers, reinitialised
from cfcheck.models.registry import load_model

CNN_LAYERS_TOP_DOWN = ["classifier.3", "classifier.1", "features.6", "features.3", "features.0"]


@pytest.fixture(scope="module")
def cnn():
    return load_model("cnn", domain="morpho")


@pytest.fixture(scope="module")
def calibration():
    return load_split("train", 300).images


@pytest.fixture(scope="module")
def stages(cnn, calibration):
    return cascading_randomisation(cnn, calibration, seed=0)


def _layer_params(model: nn.Module) -> dict[str, dict[str, torch.Tensor]]:
    return {
        name: dict(module.named_parameters(recurse=False))
        for name, module in model.named_modules()
        if isinstance(module, (nn.Conv2d, nn.Linear))
    }


def test_layers_in_forward_order_and_stage_labels(cnn, calibration, stages):
    assert parametrised_layers(cnn, calibration[:1]) == CNN_LAYERS_TOP_DOWN[::-1]
    assert [s.layer for s in stages] == CNN_LAYERS_TOP_DOWN
    assert [s.randomised for s in stages] == [tuple(CNN_LAYERS_TOP_DOWN[:k]) for k in range(1, 6)]


def test_input_model_is_unchanged(calibration):
    model = load_model("cnn", domain="morpho")
    before = {k: v.clone() for k, v in model.state_dict().items()}
    flags = [p.requires_grad for p in model.parameters()]
    cascading_randomisation(model, calibration[:50], seed=1)
    after = model.state_dict()
    assert before.keys() == after.keys()
    assert all(torch.equal(before[k], after[k]) for k in before)
    assert [p.requires_grad for p in model.parameters()] == flags and not model.training
    assert not model._forward_hooks and all(not m._forward_hooks for m in model.modules())


def test_stage_k_differs_exactly_in_the_top_k_layers(cnn, stages):
    trained = _layer_params(cnn)
    for k, stage in enumerate(stages, start=1):
        assert isinstance(stage.model, StandardisedLogits) and stage.network is stage.model.network
        current = _layer_params(stage.network)
        assert current.keys() == trained.keys()
        for name, params in current.items():
            same = all(torch.equal(p, trained[name][key]) for key, p in params.items())
            differs_everywhere = all(not torch.equal(p, trained[name][key]) for key, p in params.items())
            if name in CNN_LAYERS_TOP_DOWN[:k]:
                assert differs_everywhere, f"stage {k}: {name} should be randomised"
            else:
                assert same, f"stage {k}: {name} should keep its trained weights"
        # buffers of the network (none in small_cnn beyond parameters) are untouched
        if k > 1:  # cumulative: a layer keeps the random weights it got at its stage
            previous = _layer_params(stages[k - 2].network)
            for name in CNN_LAYERS_TOP_DOWN[: k - 1]:
                assert all(torch.equal(p, previous[name][key]) for key, p in current[name].items())


def test_reinitialisation_is_pytorch_default_init(stages):
    """Default init of a Linear(in, out): weights and bias within ±1/sqrt(in)."""
    top = stages[0].network.classifier[3]
    bound = 1 / top.in_features**0.5
    assert top.weight.abs().max() <= bound and top.bias.abs().max() <= bound
    assert top.weight.std() > bound / 4  # not zeros or a constant


def test_deterministic_under_the_seed(cnn, calibration, stages):
    again = cascading_randomisation(cnn, calibration, seed=0)
    other = cascading_randomisation(cnn, calibration, seed=1)
    x = load_split("test", 16).images
    for a, b, c in zip(stages, again, other):
        sa, sb = a.model.state_dict(), b.model.state_dict()
        assert all(torch.equal(sa[key], sb[key]) for key in sa)
        with torch.no_grad():
            assert torch.equal(a.model(x), b.model(x))
        top = f"network.{a.layer}.weight"
        assert not torch.equal(sa[top], c.model.state_dict()[top])


def test_fully_randomised_stage_predictions_are_spread(stages):
    test = load_split("test", 400)
    with torch.no_grad():
        predictions = stages[-1].model(test.images).argmax(1)
    shares = torch.bincount(predictions, minlength=10).float() / len(predictions)
    assert shares.max() <= 0.3, shares
    accuracy = float((predictions == test.labels).float().mean())
    assert accuracy < 0.2  # the class information is gone


def test_stages_are_frozen_and_in_eval_mode(stages):
    for stage in stages:
        assert not stage.model.training and all(not m.training for m in stage.model.modules())
        assert all(not p.requires_grad for p in stage.model.parameters())
    # a method can still take input gradients, as with the registry's models
    x = load_split("test", 2).images.clone().requires_grad_(True)
    stages[-1].model(x)[:, 0].sum().backward()
    assert x.grad is not None and torch.isfinite(x.grad).all()


def test_without_standardisation_and_other_architectures(calibration):
    torch.manual_seed(0)
    resnet = build_model("small_resnet", num_classes=10).eval()
    stages = cascading_randomisation(resnet, calibration[:20], seed=0, standardise=False)
    assert not isinstance(stages[0].model, StandardisedLogits)
    assert stages[0].layer == "head.2"  # the output Linear comes first
    assert stages[-1].layer == "stem.0"
    assert len(stages) == 10  # stem, 2 convs per block, 2 projections, head
    assert stages[0].network is stages[0].model


def test_argument_errors(cnn):
    with pytest.raises(ValueError, match="at least 2 images"):
        cascading_randomisation(cnn, torch.rand(1, 1, 32, 32))
    with pytest.raises(ValueError, match="no parameters"):
        cascading_randomisation(nn.Identity(), torch.rand(4, 1, 32, 32))
    with pytest.raises(ValueError, match="Conv1d"):
        cascading_randomisation(cnn, torch.rand(4, 1, 32, 32), layer_types=(nn.Conv1d,))


def test_a_reinitialised_copy_is_the_cascades_last_stage_for_its_seed(cnn, calibration, stages):
    before = {k: v.clone() for k, v in cnn.state_dict().items()}
    draw = reinitialised(cnn, calibration, seed=0)
    expected = stages[-1].model.state_dict()
    assert isinstance(draw, StandardisedLogits) and draw.state_dict().keys() == expected.keys()
    assert all(torch.equal(draw.state_dict()[key], expected[key]) for key in expected)
    assert all(torch.equal(before[k], v) for k, v in cnn.state_dict().items())  # the input is a template only
    assert not draw.training and all(not p.requires_grad for p in draw.parameters())
    other = reinitialised(cnn, calibration, seed=1).state_dict()
    assert all(
        not torch.equal(other[f"network.{name}.weight"], expected[f"network.{name}.weight"])
        for name in CNN_LAYERS_TOP_DOWN
    )
    bare = reinitialised(cnn, calibration, seed=0, standardise=False)
    assert not isinstance(bare, StandardisedLogits)
    assert torch.equal(bare.classifier[3].weight, expected["network.classifier.3.weight"])


def test_reinitialised_argument_errors(cnn):
    with pytest.raises(ValueError, match="at least 2 images"):
        reinitialised(cnn, torch.rand(1, 1, 32, 32))
    with pytest.raises(ValueError, match="seed must be an int >= 0"):
        reinitialised(cnn, torch.rand(4, 1, 32, 32), seed=-2)
    with pytest.raises(ValueError, match="no parameters"):
        reinitialised(nn.Identity(), torch.rand(4, 1, 32, 32))
