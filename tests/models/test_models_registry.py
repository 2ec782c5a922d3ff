"""Registry: every shipped model loads verified; tampering, absence and unknown names fail loudly."""

from __future__ import annotations

import hashlib
import json
import os
import shutil

import pytest
import torch

from cfcheck.models import registry
from cfcheck.models.classifiers.recipes import model_specs
from cfcheck.models.registry import (
    ReferenceModelError,
    available_models,
    domain_dir,
    file_sha256,
    load_manifest,
    load_model,
    model_entry,
    weights_dir,
)

MANIFEST = load_manifest(domain="morpho")
SHIPPED = sorted(key.split("/", 1)[1] for key in MANIFEST["models"] if key.startswith("morpho/"))


def _recipes() -> list[str]:
    from cfcheck.domains import get_domain

    return sorted([*model_specs(get_domain("morpho")), *get_domain("morpho").generative_recipes()])


def test_every_recipe_is_shipped():
    assert _recipes() == SHIPPED, "retrain the missing models"


def test_manifest_schema_and_file_sizes():
    assert MANIFEST["format"] == 1
    total = 0
    for key, entry in MANIFEST["models"].items():
        domain, name = key.split("/", 1)
        assert entry["file"] == f"{domain}_{name}.safetensors"
        assert entry["trained_on"] == "cpu"
        for field in (
            "sha256",
            "architecture",
            "arch_kwargs",
            "parameters",
            "training",
            "data",
            "quality",
            "quality_bar",
            "torch_version",
        ):
            assert field in entry, f"{key} lacks {field}"
        if "family" in entry:  # a generative model: its family, and what it trained on
            assert entry["role"] in (
                "diffusion",
                "autoencoder",
                "attribute_mechanism",
                "image_mechanism",
                "anticausal_predictor",
                "minimality_vae",
            )
            assert set(entry["data"]) == {"split", "n"} and entry["interface"]
        else:
            assert entry["role"] in ("classifier", "oracle", "attribute_oracle", "embedding")
            assert "num_classes" in entry
            assert set(entry["data"]) == {"split", "n", "seed"}
        size = (domain_dir("morpho") / entry["file"]).stat().st_size
        assert size < 5 * 2**20, f"{entry['file']} is {size} bytes (limit 5 MB)"
        total += size
    assert total < 20 * 2**20


def test_one_manifest_per_domain_folder():
    assert sorted(registry.available_domains()) == ["glyphs", "gmm", "morpho"]
    assert domain_dir("morpho") == weights_dir() / "morpho"
    assert (domain_dir("morpho") / registry.MANIFEST_NAME).is_file()
    assert not (weights_dir() / registry.MANIFEST_NAME).exists()  # no global manifest any more
    assert all(key.startswith("morpho/") for key in MANIFEST["models"])
    for entry in MANIFEST["models"].values():
        assert (domain_dir("morpho") / entry["file"]).is_file()
        assert (domain_dir("morpho") / entry["file"].replace(".safetensors", ".md")).is_file()
    assert available_models("nonexistent") == []  # a domain without a folder has no models
    with pytest.raises(ValueError, match="plain folder name"):
        domain_dir("../morpho")


def test_manifest_is_sorted_indented_json():
    text = (domain_dir("morpho") / registry.MANIFEST_NAME).read_text(encoding="utf-8")
    assert text == json.dumps(MANIFEST, indent=2, sort_keys=True) + "\n"


@pytest.mark.parametrize("name", SHIPPED)
def test_manifest_hash_equals_file_hash(name):
    entry = MANIFEST["models"][f"morpho/{name}"]
    data = (domain_dir("morpho") / entry["file"]).read_bytes()
    assert hashlib.sha256(data).hexdigest() == entry["sha256"]  # independent of file_sha256
    # safetensors layout (not a pickle): u64 header length, JSON header, raw tensor bytes
    header_len = int.from_bytes(data[:8], "little")
    header = json.loads(data[8 : 8 + header_len])
    assert json.loads(header["__metadata__"]["cfcheck"])["name"] == name


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_model_loads_frozen_in_eval_mode(name):
    model = load_model(name, domain="morpho")
    entry = model_entry(name, domain="morpho")
    assert not model.training
    assert all(not p.requires_grad for p in model.parameters())
    assert sum(p.numel() for p in model.parameters()) == entry["parameters"]
    x = torch.rand(2, 1, 32, 32)
    if entry["role"] == "attribute_mechanism":  # log-density of two values (given a context)
        context = torch.rand(2, model.context_features) + 2.0 if model.context_features else None
        with torch.no_grad():
            out = model(torch.tensor([2.0, 150.0]) if context is None else torch.tensor([120.0, 200.0]), context)
        assert out.shape == (2,) and torch.isfinite(out).all()
        return
    if entry["role"] == "image_mechanism":  # reconstruction given a condition
        with torch.no_grad():
            out = model(x, torch.zeros(2, model.condition_features))
        assert out.shape == x.shape and torch.isfinite(out).all()
        return
    with torch.no_grad():
        out = model(x * 2 - 1, torch.tensor([10, 500])) if entry["role"] == "diffusion" else model(x)
    if entry["role"] in (
        "diffusion",
        "autoencoder",
        "minimality_vae",
    ):  # noise prediction, reconstruction: image-shaped
        assert out.shape == x.shape and torch.isfinite(out).all()
        return
    if entry["role"] == "anticausal_predictor":  # one value per image (regressor) or class logits
        assert out.shape == (2, entry["arch_kwargs"]["outputs"]) and torch.isfinite(out).all()
        return
    width = 64 if entry["role"] == "embedding" else entry["num_classes"]
    assert out.shape == (2, width) and torch.isfinite(out).all()


def test_roles_and_attributes_match_what_the_suites_ask_for():
    assert available_models("morpho", role="oracle") == ["oracle_lenet", "oracle_resnet", "oracle_wide_cnn"]
    assert available_models("morpho", role="embedding") == ["embedding"]
    attributes = {
        model_entry(n, domain="morpho")["attribute"] for n in available_models("morpho", role="attribute_oracle")
    }
    assert attributes == {"digit", "thickness", "intensity"}
    assert set(available_models("morpho", role="classifier")) == {"cnn", "robust_cnn", "mlp", "noise_cnn", "random_net"}
    assert available_models(domain="nonexistent") == []


def test_model_entry_is_a_copy():
    entry = model_entry("cnn", domain="morpho")
    entry["sha256"] = "0" * 64
    assert model_entry("cnn", domain="morpho")["sha256"] != "0" * 64


def test_tampered_copy_is_rejected_naming_the_file(tmp_path):
    entry = MANIFEST["models"]["morpho/cnn"]
    copy = tmp_path / entry["file"]
    shutil.copyfile(domain_dir("morpho") / entry["file"], copy)
    intact = load_model("cnn", domain="morpho", weights_dir=tmp_path)
    assert isinstance(intact, torch.nn.Module)  # intact: loads
    data = bytearray(copy.read_bytes())
    data[len(data) // 2] ^= 0x01
    copy.write_bytes(bytes(data))
    with pytest.raises(ReferenceModelError) as info:
        load_model("cnn", domain="morpho", weights_dir=tmp_path)
    message = str(info.value)
    assert str(copy) in message and entry["sha256"] in message
    assert hashlib.sha256(bytes(data)).hexdigest() in message
    assert "cfcheck retrain --only cnn" in message
    assert isinstance(info.value, RuntimeError)


def test_missing_file_is_an_error_with_the_fix(tmp_path):
    with pytest.raises(ReferenceModelError, match=r"morpho_mlp\.safetensors.*missing.*retrain --only mlp"):
        load_model("mlp", domain="morpho", weights_dir=tmp_path)


def test_unknown_name_lists_the_known_models():
    with pytest.raises(ReferenceModelError, match=r"unknown reference model 'morpho/vgg'.*'cnn'.*'robust_cnn'"):
        load_model("vgg", domain="morpho")


def test_folder_with_its_own_manifest_uses_it(tmp_path):
    entry = dict(MANIFEST["models"]["morpho/cnn"])
    shutil.copyfile(domain_dir("morpho") / entry["file"], tmp_path / "renamed.safetensors")
    entry["file"] = "renamed.safetensors"
    registry.write_manifest({"format": 1, "models": {"morpho/cnn": entry}}, tmp_path / "manifest.json")
    model = load_model("cnn", domain="morpho", weights_dir=tmp_path)
    reference = load_model("cnn", domain="morpho")
    x = torch.rand(3, 1, 32, 32)
    torch.testing.assert_close(model(x), reference(x), rtol=0, atol=0)


def test_verified_hash_is_memoised_per_path_mtime_and_size(tmp_path, monkeypatch):
    entry = MANIFEST["models"]["morpho/mlp"]
    copy = tmp_path / entry["file"]
    shutil.copyfile(domain_dir("morpho") / entry["file"], copy)
    calls = []
    real = registry.file_sha256
    monkeypatch.setattr(registry, "file_sha256", lambda p: calls.append(p) or real(p))
    load_model("mlp", domain="morpho", weights_dir=tmp_path)
    load_model("mlp", domain="morpho", weights_dir=tmp_path)
    assert len(calls) == 1
    os.utime(copy, ns=(copy.stat().st_atime_ns, copy.stat().st_mtime_ns + 10**9))
    load_model("mlp", domain="morpho", weights_dir=tmp_path)
    assert len(calls) == 2  # same bytes, new mtime: hashed again


def test_load_model_honours_device():
    model = load_model("mlp", domain="morpho", device=torch.device("cpu"))
    assert all(p.device.type == "cpu" for p in model.parameters())


def test_bad_manifest_format_is_rejected(tmp_path):
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps({"format": 99, "models": {}}))
    with pytest.raises(ReferenceModelError, match="format 1"):
        load_manifest(path)
    assert load_manifest(tmp_path / "absent.json") == {"format": 1, "models": {}}


def test_file_sha256_matches_hashlib(tmp_path):
    path = tmp_path / "blob"
    payload = bytes(range(256)) * 5000  # > one read chunk
    path.write_bytes(payload)
    assert file_sha256(path) == hashlib.sha256(payload).hexdigest()


def test_the_domain_is_always_named():
    with pytest.raises(TypeError, match="domain"):
        load_model("cnn")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="domain"):
        model_entry("cnn")  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        domain_dir()  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="a path or a domain"):
        load_manifest()


def test_available_models_of_every_domain_are_qualified():
    everything = available_models()
    assert everything == sorted(everything)
    assert everything == [f"{d}/{n}" for d in registry.available_domains() for n in available_models(d)]
    assert available_models(role="oracle") == ["morpho/oracle_lenet", "morpho/oracle_resnet", "morpho/oracle_wide_cnn"]
