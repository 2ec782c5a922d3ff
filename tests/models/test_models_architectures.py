"""Architectures: shapes, sizes, internal normalisation, registry of names."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from cfcheck.models.architectures import ARCHITECTURES, EmbeddingNet, build_model, count_parameters
from cfcheck.models.recipes import model_specs

SPECS = model_specs("morpho")


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
    assert SPECS["random_net"].arch_kwargs == SPECS["cnn"].arch_kwargs


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
    for name in ("cnn", "oracle_resnet", "embedding"):
        model = models[name]
        with torch.no_grad():
            batched = model(x)
            single = torch.cat([model(x[i:i + 1]) for i in range(n)])
        torch.testing.assert_close(batched, single, rtol=1e-4, atol=1e-5)
