"""Generative models plug in: a dummy architecture registers, trains through the recipe
protocol and round-trips through the registry's save / verify / load path, with an input that
is not the classifiers' N×1×32×32."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import pytest
import torch
from torch import nn

from cfcheck.models import builders, registry
from cfcheck.models.classifiers.architectures import IMAGE_SHAPE
from cfcheck.models.generative import (
    GenerativeRecipe,
    GenerativeTrainConfig,
    GenerativeTrainResult,
    register_generative_architecture,
    train_generative_model,
)

SHAPE = (3, 12, 20)  # three channels, not square: nothing like the classifiers' input


class TinyAutoencoder(nn.Module):
    """Two conv layers: encode to ``latent`` channels at half resolution, decode back."""

    def __init__(self, channels: int = 3, latent: int = 4) -> None:
        super().__init__()
        self.encoder = nn.Conv2d(channels, latent, 4, stride=2, padding=1)
        self.decoder = nn.ConvTranspose2d(latent, channels, 4, stride=2, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(self.decoder(torch.relu(self.encoder(x))))


@dataclass
class TinyAutoencoderRecipe:
    name: str = "tiny_ae"
    role: str = "autoencoder"
    architecture: str = "test_tiny_ae"
    arch_kwargs: dict[str, Any] = field(default_factory=lambda: {"channels": 3, "latent": 4})
    config: GenerativeTrainConfig = field(
        default_factory=lambda: GenerativeTrainConfig(seed=5, epochs=3, batch_size=16, lr=1e-2)
    )
    quality_bar: dict[str, dict[str, float]] = field(default_factory=lambda: {"reconstruction_mse": {"max": 0.5}})
    purpose: str = "test double of a generative reference model"
    interface: str = "reconstructs an image in [0, 1]"

    def smoke_config(self) -> GenerativeTrainConfig:
        return dataclasses.replace(self.config, epochs=1)

    def train(self, config: GenerativeTrainConfig, data: torch.Tensor) -> GenerativeTrainResult:
        model = builders.build_model(self.architecture, **self.arch_kwargs)
        optimiser = torch.optim.Adam(model.parameters(), lr=config.lr)
        order_rng = torch.Generator().manual_seed(config.seed)
        for _ in range(config.epochs):
            for index in torch.randperm(len(data), generator=order_rng).split(config.batch_size):
                loss = nn.functional.mse_loss(model(data[index]), data[index])
                optimiser.zero_grad()
                loss.backward()
                optimiser.step()
        with torch.no_grad():
            mse = float(nn.functional.mse_loss(model(data), data))
        return GenerativeTrainResult(model.state_dict(), {"reconstruction_mse": mse})


@pytest.fixture
def tiny_ae():
    spec = register_generative_architecture("test_tiny_ae", TinyAutoencoder, family="autoencoder", input_shape=SHAPE)
    yield spec
    builders.unregister_architecture("test_tiny_ae")


@pytest.fixture
def data():
    return torch.rand(48, *SHAPE, generator=torch.Generator().manual_seed(0))


def test_registered_generative_architecture_is_buildable(tiny_ae):
    assert tiny_ae.family == "autoencoder" and tiny_ae.input_shape == SHAPE != IMAGE_SHAPE
    assert "test_tiny_ae" in builders.architecture_names("autoencoder")
    assert "test_tiny_ae" not in builders.architecture_names("classifier")
    model = builders.build_model("test_tiny_ae", channels=3, latent=2)
    assert model(torch.rand(2, *SHAPE)).shape == (2, *SHAPE)


def test_recipe_round_trips_through_save_verify_load(tiny_ae, data, tmp_path):
    recipe = TinyAutoencoderRecipe()
    assert isinstance(recipe, GenerativeRecipe)
    folder = tmp_path / "toy"
    logs: list[str] = []
    entry = train_generative_model(recipe, data, folder, domain="toy", log=logs.append)
    assert entry["file"] == "toy_tiny_ae.safetensors" and entry["family"] == "autoencoder"
    assert entry["input_shape"] == list(SHAPE) and entry["training"]["epochs"] == 3
    assert entry["sha256"] == registry.file_sha256(folder / entry["file"])
    assert "meets its quality bar" in logs[0]
    registry.update_manifest(folder, {"toy/tiny_ae": entry})

    model = registry.load_model("tiny_ae", domain="toy", weights_dir=folder)
    assert not model.training and not any(p.requires_grad for p in model.parameters())
    x = data[:5]
    with torch.no_grad():
        assert model(x).shape == x.shape  # 3×12×20 in, 3×12×20 out: no classifier shape check
    again = registry.load_model("tiny_ae", domain="toy", weights_dir=folder)
    torch.testing.assert_close(again(x), model(x), rtol=0, atol=0)

    # the weights are verified against the manifest before they are parsed
    path = folder / entry["file"]
    blob = bytearray(path.read_bytes())
    blob[-1] ^= 0x01
    path.write_bytes(bytes(blob))
    with pytest.raises(registry.ReferenceModelError, match="does not match the manifest"):
        registry.load_model("tiny_ae", domain="toy", weights_dir=folder)


def test_training_is_deterministic_for_a_seed(tiny_ae, data, tmp_path):
    recipe = TinyAutoencoderRecipe()
    a = train_generative_model(recipe, data, tmp_path / "a", domain="toy", smoke=True, log=lambda _: None)
    b = train_generative_model(recipe, data, tmp_path / "b", domain="toy", smoke=True, log=lambda _: None)
    assert a["sha256"] == b["sha256"] and a["training"]["epochs"] == 1


def test_unregistered_architecture_is_a_reference_model_error(tmp_path):
    entry = {
        "file": "toy_x.safetensors",
        "sha256": "0" * 64,
        "architecture": "nope_unet",
        "arch_kwargs": {},
        "role": "diffusion",
    }
    registry.save_state_dict({"w": torch.zeros(1)}, tmp_path / "toy_x.safetensors")
    entry["sha256"] = registry.file_sha256(tmp_path / "toy_x.safetensors")
    registry.update_manifest(tmp_path, {"toy/x": entry})
    with pytest.raises(registry.ReferenceModelError, match=r"toy/x: unknown architecture 'nope_unet'"):
        registry.load_model("x", domain="toy", weights_dir=tmp_path)


def test_plug_in_errors_name_the_problem(tiny_ae, data, tmp_path):
    with pytest.raises(ValueError, match="family must be one of"):
        register_generative_architecture("x", TinyAutoencoder, family="classifier")
    with pytest.raises(ValueError, match="already registered by family 'autoencoder'"):
        register_generative_architecture("test_tiny_ae", nn.Identity, family="vae")
    with pytest.raises(TypeError, match="does not implement GenerativeRecipe"):
        train_generative_model(object(), data, tmp_path, domain="toy")  # type: ignore[arg-type]
    classifier_backed = TinyAutoencoderRecipe(architecture="small_cnn", arch_kwargs={})
    with pytest.raises(ValueError, match="family 'classifier', not a generative one"):
        train_generative_model(classifier_backed, data, tmp_path, domain="toy")
    bad_bar = TinyAutoencoderRecipe(quality_bar={"reconstruction_mse": {"below": 0.5}})
    with pytest.raises(ValueError, match="only 'min' and 'max'"):
        train_generative_model(bad_bar, data, tmp_path, domain="toy")
    with pytest.raises(ValueError, match="finite number"):
        GenerativeTrainResult({}, {"fid": float("nan")})
