"""The attribution calibration's control table: the bundled attributions it names are the ones it
builds, and its negative controls and the removal baseline draw what they always drew."""

from __future__ import annotations

import torch

from cfcheck.domains import get_domain
from cfcheck.kinds.attribution.baseline import RandomBaseline, random_attribution
from cfcheck.kinds.attribution.controls import NOISE_LADDER, OTHER_RANDOM_SEEDS, attribution_controls
from cfcheck.kinds.attribution.methods.saliency import (
    Gradient,
    InputTimesGradient,
    IntegratedGradients,
    NoisyAttribution,
    SmoothGrad,
    TrueFeature,
)


def test_a_domain_without_a_true_feature_is_calibrated_on_the_four_gradients_and_the_gradients_ladder():
    controls = attribution_controls(get_domain("morpho"))
    assert {name: type(method) for name, (role, method) in controls.items() if role == "+"} == {
        "gradient": Gradient,
        "input×gradient": InputTimesGradient,
        "smoothgrad": SmoothGrad,
        "integrated gradients": IntegratedGradients,
    }
    ladder = {name: method for name, (role, method) in controls.items() if role.startswith("ladder:")}
    assert list(ladder) == [f"gradient + noise {r:g}" for r in NOISE_LADDER]
    assert [method.ratio for method in ladder.values()] == list(NOISE_LADDER)
    assert all(isinstance(method, NoisyAttribution) and type(method.base) is Gradient for method in ladder.values())
    assert [name for name, (role, _) in controls.items() if role == "-"] == [
        f"random (seed {seed})" for seed in OTHER_RANDOM_SEEDS
    ]


def test_a_domain_with_a_true_feature_is_calibrated_on_it_and_its_ladder():
    gmm = get_domain("gmm")
    controls = attribution_controls(gmm)
    positives = {name: method for name, (role, method) in controls.items() if role == "+"}
    assert list(positives) == ["true feature"] and type(positives["true feature"]) is TrueFeature
    ladder = [method for role, method in controls.values() if role.startswith("ladder:")]
    assert [type(method.base) for method in ladder] == [TrueFeature] * len(NOISE_LADDER)
    assert all(method.base.domain is gmm for method in ladder)


def test_the_negative_controls_draw_standard_normal_noise_from_their_own_seeds_call_after_call():
    controls = attribution_controls(get_domain("gmm"))
    x, target = torch.zeros(4, 64), torch.zeros(4, dtype=torch.int64)
    for seed in OTHER_RANDOM_SEEDS:
        method = controls[f"random (seed {seed})"][1]
        generator = torch.Generator().manual_seed(seed)
        first, second = torch.randn(4, 64, generator=generator), torch.randn(4, 64, generator=generator)
        assert torch.equal(method.attribute(x, None, target), first)
        assert torch.equal(method.attribute(x, None, target), second)


def test_the_removal_baseline_is_standard_normal_noise_like_the_input_from_the_generator_given():
    x = torch.zeros(3, 1, 4, 4, dtype=torch.float64)
    maps = random_attribution(x, torch.Generator().manual_seed(7))
    assert maps.dtype == torch.float64 and maps.shape == x.shape
    assert torch.equal(maps, torch.randn(3, 1, 4, 4, generator=torch.Generator().manual_seed(7)).double())
    again = RandomBaseline().attribute(x.float(), None, torch.zeros(3), generator=torch.Generator().manual_seed(7))
    assert torch.equal(again, maps.float())
