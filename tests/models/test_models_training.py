"""Smoke training of every recipe, determinism, manifest and cards written beside the weights."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from cfcheck.domains import get_domain
from cfcheck.models.classifiers import training
from cfcheck.models.classifiers.recipes import model_specs, smoke_spec
from cfcheck.models.classifiers.training import fit, train_reference_models
from cfcheck.models.registry import file_sha256, load_manifest, load_model

MORPHO = get_domain("morpho")
SPECS = model_specs(MORPHO)
# one of each kind of training: plain, PGD, noise, multi-head, untrained, BatchNorm
DETERMINISM_SAMPLE = ["cnn", "robust_cnn", "noise_cnn", "embedding", "random_net", "oracle_resnet"]


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("smoke")
    logs: list[str] = []
    entries = train_reference_models(MORPHO, out_dir=out, smoke=True, log=logs.append)
    return out, entries, logs


def test_smoke_training_writes_every_model(smoke_run):
    out, entries, logs = smoke_run
    assert sorted(entries) == sorted(f"morpho/{name}" for name in SPECS)
    manifest = load_manifest(out / "manifest.json")
    assert manifest["models"] == entries
    for key, entry in entries.items():
        name = key.split("/", 1)[1]
        assert (out / entry["file"]).is_file() and (out / f"morpho_{name}.md").is_file()
        assert file_sha256(out / entry["file"]) == entry["sha256"]
        assert entry["training"] == smoke_spec(SPECS[name]).recipe.to_dict()
        assert entry["data"]["n"] == 192 and entry["quality"]["test_n"] == 128
        model = load_model(name, domain="morpho", weights_dir=out)  # verified against the tmp manifest
        assert not model.training
    assert any("BELOW BAR" in line for line in logs), "tiny budgets are reported, not hidden"


def test_smoke_robust_entry_records_the_attack(smoke_run):
    quality = smoke_run[1]["morpho/robust_cnn"]["quality"]
    assert quality["robust_norm"] == "l2" and quality["robust_eps"] == 1.5
    assert 0.0 <= quality["robust_accuracy"] <= 1.0


def test_same_seed_gives_identical_weights(smoke_run, tmp_path):
    out, first, _ = smoke_run
    again = train_reference_models(MORPHO, names=DETERMINISM_SAMPLE, out_dir=tmp_path, smoke=True, log=lambda _: None)
    for name in DETERMINISM_SAMPLE:
        key = f"morpho/{name}"
        assert again[key]["sha256"] == first[key]["sha256"], f"{name} is not deterministic"
        assert again[key]["quality"] == first[key]["quality"]


def test_saved_bytes_do_not_depend_on_the_call(tmp_path):
    """Identical weights + metadata must give identical files (the manifest pins the hash)."""
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 2)
    metadata = {"domain": "morpho", "name": "x", "architecture": "y", "extra": "z"}
    hashes = {training.save_weights(model, tmp_path / f"w{i}.safetensors", metadata) for i in range(8)}
    assert len(hashes) == 1


def test_a_different_seed_gives_different_weights(smoke_run):
    _, first, _ = smoke_run
    spec = smoke_spec(SPECS["cnn"])
    spec = dataclasses.replace(spec, recipe=dataclasses.replace(spec.recipe, seed=999))
    from cfcheck.domains.morpho import load_split

    model = fit(spec, load_split("train", 192), None, log=lambda _: None)
    reference = load_model("cnn", domain="morpho", weights_dir=smoke_run[0])
    assert not torch.equal(model.classifier[-1].weight, reference.classifier[-1].weight)


def test_training_leaves_the_global_rng_alone():
    from cfcheck.domains.morpho import load_split

    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    fit(smoke_spec(SPECS["mlp"]), load_split("train", 64), None, log=lambda _: None)
    assert torch.equal(torch.rand(3), expected)


def test_training_updates_an_existing_manifest_without_dropping_entries(tmp_path):
    train_reference_models(MORPHO, names=["random_net"], out_dir=tmp_path, smoke=True, log=lambda _: None)
    train_reference_models(MORPHO, names=["mlp"], out_dir=tmp_path, smoke=True, log=lambda _: None)
    assert set(load_manifest(tmp_path / "manifest.json")["models"]) == {"morpho/random_net", "morpho/mlp"}


def test_argument_errors():
    with pytest.raises(ValueError, match=r"unknown reference model\(s\) \['vgg'\]"):
        train_reference_models(MORPHO, names=["vgg"], smoke=True, out_dir="unused")
    with pytest.raises(ValueError, match="explicit out_dir"):
        train_reference_models(MORPHO, names=["mlp"], smoke=True)
    with pytest.raises(ValueError, match="domain 'glyphs'"):
        train_reference_models(domain=get_domain("glyphs"), out_dir="unused")
    with pytest.raises(TypeError, match=r"takes the domain object, got the name 'morpho'"):
        train_reference_models(domain="morpho", out_dir="unused")  # type: ignore[arg-type]


def test_lr_schedule_warms_up_then_decays_to_zero():
    factor = training._lr_factor("cosine", 1000)
    values = [factor(step) for step in range(1001)]
    assert values[0] < values[49] <= 1.0  # warm-up over 50 steps
    assert values[1000] == pytest.approx(0.0, abs=1e-12)
    assert all(a >= b for a, b in zip(values[49:], values[50:]))  # monotone decay after warm-up
    assert training._lr_factor("constant", 1000)(500) == 1.0
    with pytest.raises(ValueError, match="schedule"):
        training._lr_factor("step", 10)


def test_noise_augmentation_matches_its_definition():
    """x + σ·N(0,1) with σ ~ U(0, σ_max), clamped: reproduce it with the same generator."""
    x = torch.full((6, 1, 32, 32), 0.5)
    aug = {"kind": "gaussian_noise", "sigma_max": 0.5}
    out = training._augment(torch.nn.Identity(), x, {}, aug, 0.0, torch.Generator().manual_seed(4))
    g = torch.Generator().manual_seed(4)
    sigma = torch.rand(6, 1, 1, 1, generator=g) * 0.5
    expected = (x + sigma * torch.randn(x.shape, generator=g)).clamp(0, 1)
    torch.testing.assert_close(out, expected, rtol=0, atol=0)
    with pytest.raises(ValueError, match="augmentation kind"):
        training._augment(torch.nn.Identity(), x, {}, {"kind": "mixup"}, 0.0, g)


def test_train_model_needs_the_spec_domain(tmp_path):
    unbound = dataclasses.replace(smoke_spec(SPECS["random_net"]), domain=None)
    with pytest.raises(ValueError, match="give the domain it is trained for"):
        training.train_model(unbound, tmp_path, log=lambda _: None)
    with pytest.raises(ValueError, match="give the domain it is trained for"):
        training.train_model(smoke_spec(SPECS["random_net"]), tmp_path, domain=get_domain("gmm"), log=lambda _: None)
    with pytest.raises(TypeError, match="takes the domain object"):
        training.train_model(unbound, tmp_path, domain="morpho", log=lambda _: None)  # type: ignore[arg-type]
