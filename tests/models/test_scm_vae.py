"""The conditional VAE image mechanism, its resumable training and the SCM VAE adapter."""

from __future__ import annotations

import pytest
import torch

from cfcheck.domains.morpho.scm import sample_factors
from cfcheck.domains.morpho.scm_mechanisms import MorphoAttributeMechanisms
from cfcheck.kinds.scm.methods.vae import SCMVAE
from cfcheck.models.generative.flow import ScalarSplineFlow
from cfcheck.models.generative.vae import ConditionalVAE, train_cvae


def _vae(seed: int = 0) -> ConditionalVAE:
    torch.manual_seed(seed)
    return ConditionalVAE(condition_features=12, standardised_columns=2).eval()


def test_elbo_terms_match_torch_distributions():
    """NLL and KL against torch.distributions on the same z sample (closed-form Gaussian KL)."""
    vae = _vae()
    x, c = torch.rand(3, 1, 32, 32), torch.randn(3, 12)
    loss, nll, kl = vae.negative_elbo(x, c, beta=2.0, generator=torch.Generator().manual_seed(5))
    mean, log_var = vae.encode(x, c)
    z = mean + (0.5 * log_var).exp() * torch.randn(mean.shape, generator=torch.Generator().manual_seed(5))
    loc, scale = vae.decode(z, c)
    expected_nll = -torch.distributions.Normal(loc, scale).log_prob(x).flatten(1).sum(1)
    q = torch.distributions.Normal(mean, (0.5 * log_var).exp())
    expected_kl = torch.distributions.kl_divergence(q, torch.distributions.Normal(0.0, 1.0)).sum(1)
    torch.testing.assert_close(nll, expected_nll, rtol=1e-4, atol=1e-3)
    torch.testing.assert_close(kl, expected_kl, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(loss, nll + 2.0 * kl)


def test_decoder_outputs_are_bounded_and_standardisation_touches_only_leading_columns():
    vae = _vae()
    c = torch.cat([torch.randn(50, 2) * 10 + 5, torch.eye(10)[torch.arange(50) % 10]], 1)
    vae.set_standardisation(c)
    torch.testing.assert_close(vae.condition_loc[:2], c[:, :2].mean(0))
    assert torch.equal(vae.condition_loc[2:], torch.zeros(10)) and torch.equal(vae.condition_scale[2:], torch.ones(10))
    loc, scale = vae.decode(torch.randn(4, 16) * 5, c[:4])
    assert loc.min() >= 0 and loc.max() <= 1 and scale.min() >= vae.sigma_min


def test_counterfactual_under_the_observed_condition_returns_the_input():
    """Abducting the pixel noise and predicting under the same parents is the identity."""
    vae = _vae()
    x, c = torch.rand(4, 1, 32, 32), torch.randn(4, 12)
    with torch.no_grad():
        torch.testing.assert_close(vae.counterfactual(x, c, c), x, atol=1e-5, rtol=0)
        changed = vae.counterfactual(x, c, c + 1.0)
        mean_only = vae.counterfactual(x, c, c, abduct_pixel_noise=False)
    assert (changed - x).abs().max() > 1e-3
    torch.testing.assert_close(mean_only, vae.reconstruct(x, c).clamp(0, 1))


def test_vae_validates_its_arguments():
    with pytest.raises(ValueError, match="condition_features"):
        ConditionalVAE(condition_features=0)
    with pytest.raises(ValueError, match="standardised_columns"):
        ConditionalVAE(condition_features=2, standardised_columns=3)
    vae = _vae()
    with pytest.raises(ValueError, match="32"):
        vae.encode(torch.rand(2, 1, 28, 28), torch.zeros(2, 12))
    with pytest.raises(ValueError, match="condition"):
        vae.encode(torch.rand(2, 1, 32, 32), torch.zeros(2, 11))
    with pytest.raises(ValueError, match="rows"):
        vae.decode(torch.zeros(3, 16), torch.zeros(2, 12))


def _toy_data(n: int = 64) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    return torch.rand(n, 1, 32, 32, generator=g), torch.randn(n, 12, generator=g)


def test_training_lowers_the_loss_and_resumes_to_the_same_weights(tmp_path):
    images, condition = _toy_data()
    kwargs = dict(seed=4, batch_size=32, lr=1e-3, options={"checkpoint_every": 1}, log=lambda line: None)
    arch = {"condition_features": 12, "standardised_columns": 2}
    straight, info = train_cvae(images, condition, arch, epochs=2, **kwargs)
    checkpoint = tmp_path / "run.pt"
    train_cvae(images, condition, arch, epochs=1, checkpoint=checkpoint, **kwargs)  # "interrupted" after 2 steps
    resumed, _ = train_cvae(images, condition, arch, epochs=2, checkpoint=checkpoint, **kwargs)
    assert info["steps"] == 4
    for key in straight:
        torch.testing.assert_close(resumed[key], straight[key], rtol=0, atol=0)
    untrained = ConditionalVAE(**arch)
    untrained.load_state_dict(train_cvae(images, condition, arch, epochs=0, **kwargs)[0])
    trained = ConditionalVAE(**arch)
    trained.load_state_dict(train_cvae(images, condition, arch, epochs=6, **kwargs)[0])
    with torch.no_grad():
        before = untrained.negative_elbo(images, condition, generator=torch.Generator().manual_seed(1))[0].mean()
        after = trained.negative_elbo(images, condition, generator=torch.Generator().manual_seed(1))[0].mean()
    assert after < before


def test_training_rejects_unknown_options():
    images, condition = _toy_data(8)
    with pytest.raises(ValueError, match="unknown VAE option"):
        train_cvae(
            images, condition, {"condition_features": 12}, seed=0, epochs=1, batch_size=4, lr=1e-3, options={"bogus": 1}
        )


def test_cvae_recipe_smoke_configuration_trains_into_a_manifest_entry(tmp_path):
    from cfcheck.domains import get_domain
    from cfcheck.domains.morpho.scm_image import CVAE
    from cfcheck.models.generative import train_generative_model

    config = CVAE.smoke_config()
    entry = train_generative_model(
        CVAE,
        get_domain("morpho").split(config.split, config.n),
        tmp_path,
        domain="morpho",
        smoke=True,
        log=lambda line: None,
    )
    assert entry["family"] == "vae" and entry["role"] == "image_mechanism"
    assert {"test_mse", "thickness_error", "intensity_error", "digit_accuracy", "ground_truth_l1"} <= set(
        entry["quality"]
    )
    assert (tmp_path / entry["file"]).exists()


# -- the adapter ------------------------------------------------------------------------------
def _method(**kwargs) -> SCMVAE:
    factors = sample_factors(500, seed=4)
    thickness, intensity = ScalarSplineFlow(), ScalarSplineFlow(context_features=1)
    thickness.set_standardisation(factors.thickness)
    intensity.set_standardisation(factors.intensity, factors.thickness[:, None])
    return SCMVAE(vae=_vae(), mechanisms=MorphoAttributeMechanisms(thickness, intensity), **kwargs)


def _inputs(n: int = 6):
    from cfcheck.domains.morpho.rendering import render

    factors = sample_factors(n, seed=11)
    parents = {"thickness": factors.thickness, "intensity": factors.intensity, "digit": factors.digit}
    return render(factors), parents


def test_adapter_contract_shape_range_determinism_and_no_mutation():
    method = _method(batch_size=4)
    x, parents = _inputs()
    x_before, parents_before = x.clone(), {k: v.clone() for k, v in parents.items()}
    intervention = {"digit": (parents["digit"] + 3) % 10}
    out = method.counterfactual(x, parents, intervention)
    assert out.shape == x.shape and out.dtype == x.dtype and out.min() >= 0 and out.max() <= 1
    assert torch.equal(out, method.counterfactual(x, parents, intervention))
    assert torch.equal(x, x_before) and all(torch.equal(parents[k], parents_before[k]) for k in parents)
    assert (out - x).abs().max() > 1e-3  # the intervention changed the image


def test_adapter_null_intervention_returns_the_input_with_pixel_noise_and_the_reconstruction_without():
    """With the abducted pixel noise, composition holds by construction (the flows round-trip the
    parents); without it, the null intervention gives the VAE's reconstruction."""
    x, parents = _inputs()
    null = {"thickness": parents["thickness"].clone()}
    with_noise = _method()
    torch.testing.assert_close(with_noise.counterfactual(x, parents, null), x, atol=1e-4, rtol=0)
    mean_only = _method(abduct_pixel_noise=False)
    expected = mean_only.vae.reconstruct(x, mean_only.mechanisms.condition(parents)).clamp(0, 1)
    torch.testing.assert_close(mean_only.counterfactual(x, parents, null), expected, atol=1e-5, rtol=0)


def test_adapter_validates_its_arguments():
    with pytest.raises(TypeError, match="ConditionalVAE"):
        SCMVAE(vae=torch.nn.Linear(2, 2), mechanisms=_method().mechanisms)
    with pytest.raises(TypeError, match="propagate"):
        SCMVAE(vae=_vae(), mechanisms=object())
    method = _method()
    x, parents = _inputs()
    with pytest.raises(ValueError, match="N-tensor"):
        method.counterfactual(x, parents, {"digit": torch.tensor([1, 2])})
    with pytest.raises(ValueError, match="N×C×H×W"):
        method.counterfactual(x[0], parents, {})


def test_fixture_builds_the_adapter_from_the_bundled_models():
    """fixtures/scm/vae.py's recipe: the domain's attribute mechanisms and image mechanism, through
    what a method may load."""
    from cfcheck.domains import get_domain
    from cfcheck.models.zoo import MethodModels, ModelZoo

    domain = get_domain("morpho")
    models = MethodModels(ModelZoo(get_domain("morpho"), torch.device("cpu")))
    assert "cvae" in domain.model_roles["scm_image_mechanisms"]
    method = SCMVAE(vae=models["cvae"], mechanisms=domain.attribute_mechanisms(models))
    x, parents = _inputs(8)
    out = method.counterfactual(x, parents, {"intensity": torch.full((8,), 90.0)})
    assert out.shape == x.shape
    with pytest.raises(KeyError, match="evaluation model"):
        models["oracle_lenet"]


def test_bundled_generator_moves_the_intervened_parent_the_right_way():
    """On test images: do(a high value) shows a higher measured value than do(a low value) of the same
    input, for thickness and intensity (the image measurements need no model)."""
    from cfcheck.domains import get_domain
    from cfcheck.models.zoo import MethodModels, ModelZoo

    domain = get_domain("morpho")
    models = MethodModels(ModelZoo(get_domain("morpho"), torch.device("cpu")))
    method = SCMVAE(vae=models["cvae"], mechanisms=domain.attribute_mechanisms(models))
    n = 100
    x = domain.split("test", n).images
    parents = domain.parents("test", torch.arange(n))
    for factor, low, high in (("thickness", 1.6, 3.6), ("intensity", 90.0, 230.0)):
        lows = method.counterfactual(x, parents, {factor: torch.full((n,), low)})
        highs = method.counterfactual(x, parents, {factor: torch.full((n,), high)})
        measured = {k: domain.measure_factors(v)[factor] for k, v in (("low", lows), ("high", highs))}
        share = float((measured["high"] > measured["low"]).float().mean())
        assert share >= 0.9, (factor, share)
