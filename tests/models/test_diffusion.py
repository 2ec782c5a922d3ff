"""The diffusion model's parts against closed forms: the cosine schedule, q(x_t | x_0), one DDIM
step, the start step of DVCE-style denoising, and resumable deterministic training."""

from __future__ import annotations

import math

import pytest
import torch

from cfcheck.models.generative.diffusion import DenoisingUNet
from cfcheck.models.generative.diffusion.sampling import (
    ddim_timesteps,
    denoise,
    noise_to,
    predict_x0,
    sample_images,
)
from cfcheck.models.generative.diffusion.training import train_denoiser

TINY = {"block_out_channels": (8, 8), "norm_num_groups": 4}


class LinearNoise(DenoisingUNet):
    """A denoiser whose prediction is known: ε̂(x_t, t) = 0.5·x_t (for closed-form checks)."""

    def forward(self, x_t, t):
        return 0.5 * x_t


def cosine_alpha_bar(t: int, T: int = 1000, s: float = 0.008) -> float:
    """ᾱ_t of Nichol & Dhariwal's cosine schedule, built from clipped β as diffusers does."""
    f = lambda u: math.cos((u / T + s) / (1 + s) * math.pi / 2) ** 2  # noqa: E731
    product = 1.0
    for i in range(t + 1):
        product *= 1 - min(1 - f(i + 1) / f(i), 0.999)
    return product


@pytest.fixture(scope="module")
def tiny() -> DenoisingUNet:
    torch.manual_seed(0)
    return DenoisingUNet(**TINY).eval()


@pytest.mark.parametrize("t", [0, 1, 250, 499, 900, 999])
def test_schedule_is_the_cosine_schedule(tiny, t):
    assert float(tiny.alphas_cumprod[t]) == pytest.approx(cosine_alpha_bar(t), rel=1e-5, abs=1e-7)


def test_noise_to_draws_from_q_of_x_t_given_x_0(tiny):
    t = 300
    x0 = torch.full((20_000, 1, 1, 1), 0.6)
    a = cosine_alpha_bar(t)
    x_t = noise_to(tiny, x0, t, torch.Generator().manual_seed(1))
    assert float(x_t.mean()) == pytest.approx(math.sqrt(a) * 0.6, abs=0.02)
    assert float(x_t.var()) == pytest.approx(1 - a, rel=0.05)


def test_predict_x0_inverts_the_noising_when_the_noise_is_known(tiny):
    g = torch.Generator().manual_seed(2)
    x0, noise, t = torch.rand(4, 1, 8, 8) * 2 - 1, torch.randn(4, 1, 8, 8, generator=g), 640
    a = tiny.alphas_cumprod[t]
    x_t = a.sqrt() * x0 + (1 - a).sqrt() * noise
    torch.testing.assert_close(predict_x0(tiny, x_t, t, noise), x0, atol=1e-5, rtol=1e-5)


def test_ddim_timesteps_start_at_the_requested_fraction(tiny):
    assert ddim_timesteps(tiny, 10) == [900, 800, 700, 600, 500, 400, 300, 200, 100, 0]
    assert ddim_timesteps(tiny, 10, 0.5) == [400, 300, 200, 100, 0]
    assert max(ddim_timesteps(tiny, 50, 0.5)) <= 500
    with pytest.raises(ValueError, match="start_fraction"):
        ddim_timesteps(tiny, 10, 0.0)
    with pytest.raises(ValueError, match="num_steps"):
        ddim_timesteps(tiny, 0)


def test_each_ddim_step_follows_the_eta_zero_update():
    net = LinearNoise(**TINY).eval()
    x = torch.randn(3, 1, 32, 32, generator=torch.Generator().manual_seed(3))
    timesteps = ddim_timesteps(net, 5, 0.7)  # [600, 400, 200, 0]
    expected = x.clone()
    for i, t in enumerate(timesteps):
        a = cosine_alpha_bar(t)
        a_prev = cosine_alpha_bar(timesteps[i + 1]) if i + 1 < len(timesteps) else 1.0
        eps = 0.5 * expected
        x0 = (expected - math.sqrt(1 - a) * eps) / math.sqrt(a)
        expected = math.sqrt(a_prev) * x0 + math.sqrt(1 - a_prev) * eps
    torch.testing.assert_close(denoise(net, x, timesteps, num_steps=5), expected, atol=1e-4, rtol=1e-4)


def test_a_guide_replaces_the_noise_prediction():
    net = LinearNoise(**TINY).eval()
    x = torch.randn(2, 1, 32, 32, generator=torch.Generator().manual_seed(4))
    timesteps = ddim_timesteps(net, 5, 0.7)
    seen = []

    def guide(x_t, t):
        seen.append(t)
        return 0.5 * x_t  # the network's own prediction: the result must not change

    torch.testing.assert_close(
        denoise(net, x, timesteps, guide=guide, num_steps=5), denoise(net, x, timesteps, num_steps=5)
    )
    assert seen == timesteps


def test_samples_are_images_and_reproducible(tiny):
    a = sample_images(tiny, 5, num_steps=3, generator=torch.Generator().manual_seed(5), batch_size=2)
    b = sample_images(tiny, 5, num_steps=3, generator=torch.Generator().manual_seed(5), batch_size=2)
    assert a.shape == (5, 1, 32, 32) and float(a.min()) >= 0 and float(a.max()) <= 1
    torch.testing.assert_close(a, b)


def test_unit_and_group_mismatch_is_a_clear_error():
    with pytest.raises(ValueError, match="norm_num_groups=8 must divide"):
        DenoisingUNet(block_out_channels=(12, 16), norm_num_groups=8)


class Interrupted(Exception):
    pass


def test_training_resumes_to_the_same_weights(tmp_path):
    images = torch.rand(96, 1, 32, 32, generator=torch.Generator().manual_seed(6))
    settings = dict(
        seed=3, epochs=1, batch_size=16, lr=1e-3, options={"steps": 9, "warmup_steps": 2, "checkpoint_every": 4}
    )
    straight, info = train_denoiser(images, TINY, **settings, log=lambda _: None)

    def stop_after_first_checkpoint(line: str) -> None:
        if line.startswith("step 8/"):
            raise Interrupted

    path = tmp_path / "run.pt"
    with pytest.raises(Interrupted):
        train_denoiser(images, TINY, **settings, checkpoint=path, log=stop_after_first_checkpoint)
    assert torch.load(path, weights_only=True)["step"] == 8
    lines = []
    resumed, _ = train_denoiser(images, TINY, **settings, checkpoint=path, log=lines.append)
    assert lines[0].startswith("resumed from") and "step 8/9" in lines[0]
    assert straight.keys() == resumed.keys()
    for key in straight:
        torch.testing.assert_close(straight[key], resumed[key], rtol=0, atol=0, msg=key)
    assert info["steps"] == 9 and math.isfinite(info["final_loss"])


def test_unknown_training_option_is_named():
    with pytest.raises(ValueError, match=r"unknown diffusion option\(s\) \['stepz'\]"):
        train_denoiser(torch.rand(4, 1, 32, 32), TINY, seed=0, epochs=1, batch_size=2, lr=1e-3, options={"stepz": 3})
