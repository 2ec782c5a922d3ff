"""FastDiME: the mask dilation against scipy, the inpainting invariant (pixels outside the final
mask are the input's), determinism and settings, on a tiny untrained denoiser."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy.ndimage import binary_dilation

from cfcheck.kinds.vce.methods.fastdime import FastDiME, dilate
from cfcheck.models.generative.diffusion import DenoisingUNet


@pytest.mark.parametrize("radius", [0, 1, 2])
def test_dilate_matches_scipy(radius):
    mask = torch.rand(3, 1, 9, 11, generator=torch.Generator().manual_seed(radius)) > 0.9
    mask[0, 0, 0, 0] = True  # a corner pixel: the border must not wrap
    expected = np.stack(
        [
            binary_dilation(m[0].numpy(), structure=np.ones((2 * radius + 1,) * 2)) if radius else m[0].numpy()
            for m in mask
        ]
    )[:, None]
    np.testing.assert_array_equal(dilate(mask, radius).numpy(), expected)


@pytest.fixture(scope="module")
def denoiser() -> DenoisingUNet:
    torch.manual_seed(0)
    return DenoisingUNet(block_out_channels=(8, 8), norm_num_groups=4).eval().requires_grad_(False)


def test_fastdime_contract_and_inpainting(toys, denoiser):
    classifier = toys.small_cnn(1)
    x = toys.random_images(5, seed=2)
    target = toys.other_targets(classifier(x).argmax(1), seed=3)
    method = FastDiME(denoiser, num_steps=10, mask_threshold=0.3, batch_size=2)
    cf, valid = method.explain(x, target, classifier, generator=torch.Generator().manual_seed(0))
    assert cf.shape == x.shape and float(cf.min()) >= 0 and float(cf.max()) <= 1
    torch.testing.assert_close(valid, classifier(cf).argmax(1) == target)
    changed = (cf - x).abs() > 1e-6
    # every changed pixel lies in a mask, which is dilated: isolated unchanged islands inside are
    # allowed, but an unmasked image would change almost everywhere (untrained denoiser)
    assert 0 < float(changed.float().mean()) < 0.999
    again, _ = method.explain(x, target, classifier, generator=torch.Generator().manual_seed(0))
    torch.testing.assert_close(cf, again)
    _, kept = FastDiME(denoiser, num_steps=4, rejection=False).explain(x, target, classifier)
    assert bool(kept.all())
    assert all(p.grad is None for p in classifier.parameters())


def test_without_masking_every_pixel_may_change(toys, denoiser):
    classifier = toys.small_cnn(1)
    x = toys.random_images(3, seed=4)
    target = toys.other_targets(classifier(x).argmax(1), seed=5)
    masked, _ = FastDiME(denoiser, num_steps=10, mask_threshold=0.3).explain(x, target, classifier)
    free, _ = FastDiME(denoiser, num_steps=10, mask_after=1.0).explain(x, target, classifier)
    unchanged = lambda cf: float(((cf - x).abs() <= 1e-6).float().mean())  # noqa: E731
    assert unchanged(masked) > unchanged(free)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"mask_threshold": 0.0}, "mask_threshold"),
        ({"mask_after": 1.5}, "mask_after"),
        ({"dilation": -1}, "dilation"),
        ({"start_fraction": 2.0}, "start_fraction"),
    ],
)
def test_settings_are_validated(denoiser, kwargs, match):
    with pytest.raises(ValueError, match=match):
        FastDiME(denoiser, **kwargs)
