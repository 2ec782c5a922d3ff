"""Architectures: shapes, sizes, internal normalisation, registry of names."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from cfcheck.domains import get_domain
from cfcheck.models.classifiers.architectures import (
    ARCHITECTURES,
    EmbeddingNet,
    StandardisedLogits,
    build_model,
    calibrate_logits,
    count_parameters,
)
from cfcheck.models.classifiers.recipes import model_specs

SPECS = model_specs(get_domain("morpho"))


@pytest.fixture(scope="module")
def models() -> dict[str, torch.nn.Module]:
    torch.manual_seed(0)
    return {name: build_model(s.architecture, **s.arch_kwargs).eval() for name, s in SPECS.items()}


@pytest.mark.parametrize("name", sorted(SPECS))
def test_output_shape_and_size(models, name):
    model, spec = models[name], SPECS[name]
    out = model(torch.rand(5, 1, 32, 32))
    expected = 64 if spec.role == "embedding" else spec.arch_kwargs["num_classes"]
    assert out.shape == (5, expected)
    assert out.dtype == torch.float32
    # the brief's size window: small enough for CPU training, big enough to be accurate
    assert 50_000 <= count_parameters(model) <= 500_000


def test_count_parameters_matches_manual_sum():
    layer = torch.nn.Linear(7, 3)  # 7·3 weights + 3 biases
    assert count_parameters(layer) == 24


def test_oracle_committee_architectures_differ():
    archs = {SPECS[n].architecture for n in SPECS if SPECS[n].role == "oracle"}
    assert len(archs) >= 3
    assert not archs & {SPECS["cnn"].architecture, SPECS["mlp"].architecture}
    seeds = [SPECS[n].recipe.seed for n in SPECS]
    assert len(seeds) == len(set(seeds)), "every model has its own seed"


def test_random_net_shares_the_cnn_architecture():
    assert SPECS["random_net"].architecture == SPECS["cnn"].architecture
    # the same network plus the label-free logit standardisation (buffers, no parameters)
    assert SPECS["random_net"].arch_kwargs == {**SPECS["cnn"].arch_kwargs, "standardise_logits": True}


def test_digit_attribute_oracle_architecture_is_used_by_no_classifier_or_oracle():
    others = {s.architecture for s in SPECS.values() if s.role in ("classifier", "oracle")}
    assert SPECS["attr_digit"].architecture not in others


def test_standardise_logits_adds_buffers_only_and_keeps_the_weights():
    torch.manual_seed(3)
    plain = build_model("small_cnn", num_classes=10)
    torch.manual_seed(3)
    standardised = build_model("small_cnn", num_classes=10, standardise_logits=True)
    extra = set(standardised.state_dict()) - set(plain.state_dict())
    assert extra == {f"logit_standardisation.{b}" for b in ("mean", "std", "bias")}
    assert count_parameters(plain) == count_parameters(standardised)
    for key, value in plain.state_dict().items():
        assert torch.equal(value, standardised.state_dict()[key])  # same RNG draws
    x = torch.rand(4, 1, 32, 32)
    torch.testing.assert_close(standardised(x), plain(x))  # identity until calibrated


def test_calibrated_logits_are_standardised_and_balanced():
    torch.manual_seed(15)
    model = build_model("small_cnn", num_classes=10, standardise_logits=True).eval()
    x = torch.rand(400, 1, 32, 32, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        raw = model(x)
    calibrate_logits(model, x)  # no balance: plain z-scores of each logit
    with torch.no_grad():
        z = model(x)
    torch.testing.assert_close(z.mean(0), torch.zeros(10), atol=1e-3, rtol=0)
    torch.testing.assert_close(z.std(0, unbiased=False), torch.ones(10), atol=1e-3, rtol=0)
    calibrate_logits(model, x, balance=True)
    with torch.no_grad():
        balanced = model(x)
    shares = torch.bincount(balanced.argmax(1), minlength=10) / 400
    assert shares.max() <= 0.11 and shares.min() >= 0.09
    # recalibrating starts from the raw logits, not from the previous affine
    affine = model.logit_standardisation
    torch.testing.assert_close((raw - affine.mean) / affine.std + affine.bias, balanced)
    with pytest.raises(ValueError, match="no logit_standardisation"):
        calibrate_logits(build_model("mlp"), x)


def test_standardised_logits_wrapper():
    torch.manual_seed(0)
    net = build_model("lenet", num_classes=10).eval()
    wrapped = StandardisedLogits(net, 10)
    x = torch.rand(50, 1, 32, 32)
    with torch.no_grad():
        torch.testing.assert_close(wrapped(x), net(x))
        calibrate_logits(wrapped, x)
        torch.testing.assert_close(wrapped(x).mean(0), torch.zeros(10), atol=1e-4, rtol=0)
    assert set(wrapped.state_dict()) - {"network." + k for k in net.state_dict()} == {
        "logit_standardisation.mean",
        "logit_standardisation.std",
        "logit_standardisation.bias",
    }


def test_embedding_feature_maps_and_heads():
    torch.manual_seed(0)
    net = EmbeddingNet({"digit": 10, "thickness": 3, "font": 22}).eval()
    x = torch.rand(4, 1, 32, 32)
    maps = net.feature_maps(x)
    assert [m.shape[-1] for m in maps] == [32, 16, 8, 4]
    assert all(m.shape[0] == 4 for m in maps)
    assert net.num_features == 64 and net(x).shape == (4, 64)
    heads = net.head_logits(x)
    assert {k: v.shape[1] for k, v in heads.items()} == {"digit": 10, "thickness": 3, "font": 22}
    # forward is the projection of the last feature map: the same numbers either way
    torch.testing.assert_close(net(x), net.project(maps[-1]))


def test_embedding_rejects_degenerate_heads():
    with pytest.raises(ValueError, match="head"):
        EmbeddingNet({"digit": 1})
    with pytest.raises(ValueError, match="head"):
        EmbeddingNet({})


def test_build_model_errors_name_what_was_expected():
    with pytest.raises(ValueError, match="unknown architecture 'resnet50'.*small_cnn"):
        build_model("resnet50")
    with pytest.raises(TypeError, match="str"):
        build_model(3)  # type: ignore[arg-type]


def test_json_lists_become_tuples():
    # the manifest stores tuples as JSON lists; they must rebuild the same module
    a = build_model("lenet", num_classes=10, channels=[8, 16])
    b = build_model("lenet", num_classes=10, channels=(8, 16))
    assert count_parameters(a) == count_parameters(b)


def test_wrong_input_shape_is_rejected(models):
    with pytest.raises(ValueError, match=r"N×1×32×32.*\(2, 3, 32, 32\)"):
        models["cnn"](torch.rand(2, 3, 32, 32))


def test_every_registered_architecture_builds():
    assert set(ARCHITECTURES) >= {s.architecture for s in SPECS.values()}
    for name in ARCHITECTURES:
        assert isinstance(build_model(name), torch.nn.Module)


@settings(max_examples=12)  # three forward passes per example; a dozen batches suffice
@given(st.integers(min_value=1, max_value=6), st.integers(min_value=0, max_value=2**16))
def test_outputs_are_per_sample(models, n, seed):
    """Eval-mode outputs of a batch equal the outputs of each image alone (no batch leakage)."""
    x = torch.rand(n, 1, 32, 32, generator=torch.Generator().manual_seed(seed))
    for name in ("cnn", "oracle_resnet", "embedding", "attr_digit"):
        model = models[name]
        with torch.no_grad():
            batched = model(x)
            single = torch.cat([model(x[i : i + 1]) for i in range(n)])
        torch.testing.assert_close(batched, single, rtol=1e-4, atol=1e-5)
