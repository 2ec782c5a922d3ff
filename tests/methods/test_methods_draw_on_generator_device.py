"""The bundled methods draw from cfcheck's generator on the generator's own device.

On a GPU run cfcheck hands a method a CUDA ``torch.Generator``; a draw from it that makes a CPU
tensor (``torch.randn(shape, generator=g)`` without ``device=``) raises there. No GPU is needed
to find such a draw: a torch function mode watches every random factory call that uses the
generator the test passed and records the ones that name no device.
"""

from __future__ import annotations

import pytest
import torch
from torch.overrides import TorchFunctionMode

from cfcheck.kinds.attribution.methods.saliency import NoisyAttribution, RandomAttribution, SmoothGrad
from cfcheck.kinds.latent.methods.controls import LatentNoise, LatentRepeater
from cfcheck.kinds.latent.methods.gradient_explainers import DiCE
from cfcheck.kinds.latent.methods.growing_spheres import GrowingSpheres, sample_spherical_layer
from cfcheck.kinds.method_helpers import seeded_chunks
from cfcheck.kinds.vce.methods.adversarial import TargetedPGD
from cfcheck.kinds.vce.methods.controls import UniformNoiseControl
from cfcheck.kinds.vce.methods.dvce import DiffusionCounterfactual
from cfcheck.kinds.vce.methods.fastdime import FastDiME
from cfcheck.models.generative.diffusion import DenoisingUNet

#: the factories whose output device is the ``device`` argument, not a tensor argument's
FACTORIES = {torch.randn, torch.rand, torch.randint, torch.randperm}


class DrawsWithoutDevice(TorchFunctionMode):
    """Records each random factory call that uses ``generator`` and names no device."""

    def __init__(self, generator: torch.Generator) -> None:
        super().__init__()
        self.generator, self.found = generator, []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in FACTORIES and kwargs.get("generator") is self.generator and kwargs.get("device") is None:
            self.found.append(func.__name__)
        return func(*args, **kwargs)


def draws_without_device(call) -> list[str]:
    generator = torch.Generator().manual_seed(0)
    with DrawsWithoutDevice(generator) as mode:
        call(generator)
    return mode.found


@pytest.fixture(scope="module")
def denoiser() -> DenoisingUNet:
    torch.manual_seed(0)
    return DenoisingUNet(block_out_channels=(8, 8), norm_num_groups=4).eval().requires_grad_(False)


def test_the_mode_finds_a_draw_without_a_device():
    assert draws_without_device(lambda g: torch.randn(3, generator=g)) == ["randn"]
    assert draws_without_device(lambda g: torch.randn(3, generator=g, device=g.device)) == []


def test_shared_helpers(toys):
    assert draws_without_device(lambda g: seeded_chunks(g, 10, 4, torch.device("cpu"))) == []
    assert draws_without_device(lambda g: sample_spherical_layer(torch.zeros(4), 0.0, 1.0, 5, g)) == []


def test_visual_explainers(toys, denoiser):
    classifier = toys.small_cnn(1)
    x = toys.random_images(3, seed=2)
    target = toys.other_targets(classifier(x).argmax(1), seed=3)
    methods = {
        "dvce": DiffusionCounterfactual(denoiser, toys.small_cnn(2), num_steps=3, batch_size=2),
        "fastdime": FastDiME(denoiser, num_steps=3, batch_size=2),
        "pgd": TargetedPGD(random_start=True),
        "noise": UniformNoiseControl(),
    }
    found = {
        name: draws_without_device(lambda g, m=m: m.explain(x, target, classifier, generator=g))
        for name, m in methods.items()
    }
    assert found == {name: [] for name in methods}


def test_latent_explainers(toys):
    classifier = toys.Halfspace([1.0, -0.5, 0.25, 0.0])
    z = torch.randn(3, 4, generator=torch.Generator().manual_seed(1))
    identity = torch.nn.Identity()
    methods = {
        "growing_spheres": GrowingSpheres(k=2, candidates=8),
        "dice": DiCE(k=2, max_iterations=3),
        "noise": LatentNoise(k=2),
        "repeater": LatentRepeater(k=2),
    }
    found = {
        name: draws_without_device(lambda g, m=m: m.explain(z, classifier, identity, rng=g))
        for name, m in methods.items()
    }
    assert found == {name: [] for name in methods}


def test_attributions(toys):
    model = toys.small_cnn(1)
    x = toys.random_images(2, seed=4)
    target = model(x).argmax(1)
    methods = {
        "smoothgrad": SmoothGrad(samples=2),
        "random": RandomAttribution(),
        "noisy": NoisyAttribution(RandomAttribution(), 0.5),
    }
    found = {
        name: draws_without_device(lambda g, m=m: m.attribute(x, model, target, generator=g))
        for name, m in methods.items()
    }
    assert found == {name: [] for name in methods}


def test_scm_resampling_control():
    from cfcheck.domains import get_domain
    from cfcheck.kinds.scm.methods.controls import SCMResample

    method = SCMResample(get_domain("morpho"))
    parents = {
        "thickness": torch.tensor([2.0, 3.0]),
        "intensity": torch.tensor([150.0, 200.0]),
        "digit": torch.tensor([1, 7]),
    }
    x = torch.zeros(2, 1, 32, 32)
    found = draws_without_device(
        lambda g: method.counterfactual(x, parents, {"thickness": torch.tensor([2.5, 2.5])}, generator=g)
    )
    assert found == []
