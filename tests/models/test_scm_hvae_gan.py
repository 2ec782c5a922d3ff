"""The conditional hierarchical VAE and the conditional GAN image mechanisms, their training, their smoke
recipes and the SCM adapter driving them (fixtures/scm/hvae.py, fixtures/scm/gan.py)."""

from __future__ import annotations

import pytest
import torch

from cfcheck.domains.morpho.scm import sample_factors
from cfcheck.domains.morpho.scm_mechanisms import MorphoAttributeMechanisms
from cfcheck.kinds.scm.methods.vae import SCMVAE
from cfcheck.models.generative.flow import ScalarSplineFlow
from cfcheck.models.generative.gan import ConditionalGAN, train_cgan
from cfcheck.models.generative.vae import ConditionalHVAE, train_cvae
from cfcheck.models.generative.vae.hierarchical import gaussian_kl

ARCH = {"condition_features": 12, "standardised_columns": 2}


def _hvae(seed: int = 0) -> ConditionalHVAE:
    torch.manual_seed(seed)
    return ConditionalHVAE(**ARCH).eval()


def _gan(seed: int = 0) -> ConditionalGAN:
    torch.manual_seed(seed)
    return ConditionalGAN(**ARCH).eval()


def _toy_data(n: int = 64) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    return torch.rand(n, 1, 32, 32, generator=g), torch.randn(n, 12, generator=g)


# -- the hierarchical VAE -------------------------------------------------------------------------
def test_gaussian_kl_matches_torch_distributions():
    g = torch.Generator().manual_seed(1)
    m, lv, pm, plv = (torch.randn(5, 3, 2, 2, generator=g) for _ in range(4))
    expected = (
        torch.distributions.kl_divergence(
            torch.distributions.Normal(m, (0.5 * lv).exp()), torch.distributions.Normal(pm, (0.5 * plv).exp())
        )
        .flatten(1)
        .sum(1)
    )
    torch.testing.assert_close(gaussian_kl(m, lv, pm, plv), expected, rtol=1e-5, atol=1e-5)


def test_hvae_has_three_latent_levels_and_priors_independent_of_the_parents():
    """Markovian SCM: the priors p(z2 | z1), p(z3 | z1, z2) see the latents only, never the parents."""
    hvae = _hvae()
    x, c = _toy_data(4)
    with torch.no_grad():
        latents, log_vars = hvae.encode(x, c)
        assert [tuple(z.shape[1:]) for z in latents] == [(16,), (8, 4, 4), (4, 8, 8)]
        assert [v.shape for v in log_vars] == [z.shape for z in latents]
        _, _, priors = hvae._inference(x, c, None, sample=False)
        latents_other, _, priors_other = hvae._inference(x, c + 3.0, None, sample=False)
    assert not torch.allclose(latents[1], latents_other[1])  # the posterior does see the parents
    loc, scale = hvae.decode(latents, c)
    assert loc.shape == x.shape and loc.min() >= 0 and loc.max() <= 1 and scale.min() >= hvae.sigma_min
    # the same latents under other parents: identical prior statistics
    with torch.no_grad():
        z1, z2, _ = latents
        s4 = hvae.prior_top(z1).view(-1, hvae.width, 4, 4)
        torch.testing.assert_close(priors[1][0], hvae._split(hvae.p2(s4))[0])
        torch.testing.assert_close(hvae.p3(hvae.prior_up(s4 + hvae.prior_mid(z2))).chunk(2, 1)[0], priors[2][0])
    assert priors_other[0][0].abs().max() == 0  # p(z1) = N(0, I)


def test_hvae_elbo_terms_and_counterfactual_under_the_observed_parents():
    hvae = _hvae()
    x, c = _toy_data(3)
    loss, nll, kl = hvae.negative_elbo(x, c, beta=2.0, generator=torch.Generator().manual_seed(5))
    torch.testing.assert_close(loss, nll + 2.0 * kl)
    assert (kl > 0).all()
    with torch.no_grad():
        torch.testing.assert_close(hvae.counterfactual(x, c, c), x, atol=1e-5, rtol=0)
        assert (hvae.counterfactual(x, c, c + 1.0) - x).abs().max() > 1e-3
        torch.testing.assert_close(
            hvae.counterfactual(x, c, c, abduct_pixel_noise=False), hvae.reconstruct(x, c).clamp(0, 1)
        )


def test_hvae_validates_its_arguments():
    with pytest.raises(ValueError, match="top_dim"):
        ConditionalHVAE(condition_features=12, top_dim=0)
    with pytest.raises(ValueError, match="sigma_min"):
        ConditionalHVAE(condition_features=12, sigma_min=0.0)
    hvae = _hvae()
    with pytest.raises(ValueError, match="latents"):
        hvae.decode([torch.zeros(2, 16), torch.zeros(2, 8, 4, 4), torch.zeros(2, 4, 4, 4)], torch.zeros(2, 12))
    with pytest.raises(ValueError, match="32"):
        hvae.encode(torch.rand(2, 1, 28, 28), torch.zeros(2, 12))


def test_hvae_training_lowers_the_loss_and_resumes_to_the_same_weights(tmp_path):
    images, condition = _toy_data()
    kwargs = dict(
        seed=4, batch_size=32, lr=1e-3, options={"checkpoint_every": 1}, log=lambda line: None, network=ConditionalHVAE
    )
    straight, _ = train_cvae(images, condition, ARCH, epochs=2, **kwargs)
    checkpoint = tmp_path / "run.pt"
    train_cvae(images, condition, ARCH, epochs=1, checkpoint=checkpoint, **kwargs)
    resumed, _ = train_cvae(images, condition, ARCH, epochs=2, checkpoint=checkpoint, **kwargs)
    for key in straight:
        torch.testing.assert_close(resumed[key], straight[key], rtol=0, atol=0)
    models = []
    for epochs in (0, 6):
        model = ConditionalHVAE(**ARCH)
        model.load_state_dict(train_cvae(images, condition, ARCH, epochs=epochs, **kwargs)[0])
        with torch.no_grad():
            models.append(model.negative_elbo(images, condition, generator=torch.Generator().manual_seed(1))[0].mean())
    assert models[1] < models[0]


# -- the GAN ----------------------------------------------------------------------------------------
def test_gan_shapes_range_and_counterfactual():
    gan = _gan()
    x, c = _toy_data(4)
    with torch.no_grad():
        z = gan.encode(x, c)
        assert z.shape == (4, 32)
        out = gan.decode(z, c)
        assert out.shape == x.shape and out.min() >= 0 and out.max() <= 1
        assert gan.discriminate(x, z, c).shape == (4,)
        torch.testing.assert_close(gan.counterfactual(x, c, c), gan.reconstruct(x, c))
        assert (gan.counterfactual(x, c, c + 1.0) - gan.reconstruct(x, c)).abs().max() > 1e-4
    with pytest.raises(ValueError, match="no pixel noise"):
        gan.counterfactual(x, c, c, abduct_pixel_noise=True)
    with pytest.raises(ValueError, match="z must be"):
        gan.decode(torch.zeros(2, 3), c[:2])


def test_gan_training_is_deterministic_and_the_cyclic_fine_tuning_lowers_the_reconstruction_error():
    images, condition = _toy_data(128)
    kwargs = dict(seed=3, epochs=2, batch_size=32, lr=2e-4, log=lambda line: None)
    before, info0 = train_cgan(images, condition, ARCH, options={"finetune_epochs": 0}, **kwargs)
    after, info = train_cgan(images, condition, ARCH, options={"finetune_epochs": 8, "finetune_lr": 1e-3}, **kwargs)
    again, _ = train_cgan(images, condition, ARCH, options={"finetune_epochs": 8, "finetune_lr": 1e-3}, **kwargs)
    assert info0["steps"] == 8 and info["steps"] == 8 + 32
    for key in after:
        torch.testing.assert_close(again[key], after[key], rtol=0, atol=0)
        if not key.startswith("encoder."):  # fine-tuning moves the encoder only
            torch.testing.assert_close(after[key], before[key], rtol=0, atol=0)
    errors = []
    for state in (before, after):
        gan = ConditionalGAN(**ARCH)
        gan.load_state_dict(state)
        with torch.no_grad():
            errors.append(float((gan.eval().reconstruct(images, condition) - images).abs().mean()))
    assert errors[1] < errors[0]
    with pytest.raises(ValueError, match="unknown GAN option"):
        train_cgan(images, condition, ARCH, options={"bogus": 1}, **kwargs)


def test_gan_counterfactual_fine_tuning_is_deterministic_and_moves_encoder_and_generator_only():
    """Phase 3 (the counterfactual fine-tuning, :func:`counterfactual_finetune` with the GAN's cyclic fit term)
    trains the encoder and the generator, never the discriminator's parameters (its spectral-norm power-iteration
    buffers do move: the adversarial term runs D in train mode), and reruns bit for bit."""
    from cfcheck.models.generative.gan.training import cyclic_fit

    images = torch.rand(64, 1, 32, 32, generator=torch.Generator().manual_seed(0))
    condition = torch.cat(
        [torch.randn(64, 2, generator=torch.Generator().manual_seed(1)), torch.eye(10)[torch.arange(64) % 10]], 1
    )
    kwargs = dict(seed=3, epochs=1, batch_size=32, lr=2e-4, log=lambda line: None)
    before, _ = train_cgan(images, condition, ARCH, options={"finetune_epochs": 0}, **kwargs)
    phase = {
        "finetune_epochs": 0,
        "counterfactual_epochs": 2,
        "counterfactual_lr": 1e-3,
        "predictor_epochs": 1,
        "reconstruction_weight": 10.0,
        "adversarial_weight": 0.1,
    }
    after, info = train_cgan(images, condition, ARCH, options=phase, **kwargs)
    again, _ = train_cgan(images, condition, ARCH, options=phase, **kwargs)
    assert info["steps"] == 2 + 4 and {"cf_loss", "cf_nll", "predictor_loss"} <= set(info)
    parameters = {name for name, _ in ConditionalGAN(**ARCH).named_parameters()}  # not D's spectral-norm buffers
    moved = {key.split(".")[0] for key in parameters if not torch.equal(after[key], before[key])}
    assert moved == {"encoder", "generator_input", "generator"}, moved
    for key in after:
        torch.testing.assert_close(again[key], after[key], rtol=0, atol=0)
    with pytest.raises(ValueError, match="reconstruction_weight"):
        cyclic_fit(0.0)
    with pytest.raises(ValueError, match="adversarial_weight"):
        cyclic_fit(1.0, -1.0)


# -- the smoke recipes ---------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["chvae", "cgan"])
def test_recipe_smoke_configuration_trains_into_a_manifest_entry(tmp_path, name):
    from safetensors.torch import load_file

    from cfcheck.domains import get_domain
    from cfcheck.domains.morpho.scm_image import IMAGE_RECIPES
    from cfcheck.models.builders import build_model
    from cfcheck.models.generative import train_generative_model

    recipe = IMAGE_RECIPES[name]
    config = recipe.smoke_config()
    entry = train_generative_model(
        recipe,
        get_domain("morpho").split(config.split, config.n),
        tmp_path,
        domain="morpho",
        smoke=True,
        log=lambda line: None,
    )
    assert entry["family"] == ("vae" if name == "chvae" else "gan") and entry["role"] == "image_mechanism"
    measured = {"test_mse", "thickness_error", "intensity_error", "digit_accuracy", "ground_truth_l1"}
    assert measured <= set(entry["quality"])
    model = build_model(entry["architecture"], **entry["arch_kwargs"])
    model.load_state_dict(load_file(tmp_path / entry["file"]))
    x, c = _toy_data(2)
    assert model.eval().counterfactual(x, c, c, abduct_pixel_noise=False).shape == x.shape


# -- the adapter ---------------------------------------------------------------------------------------
def _mechanisms() -> MorphoAttributeMechanisms:
    factors = sample_factors(500, seed=4)
    thickness, intensity = ScalarSplineFlow(), ScalarSplineFlow(context_features=1)
    thickness.set_standardisation(factors.thickness)
    intensity.set_standardisation(factors.intensity, factors.thickness[:, None])
    return MorphoAttributeMechanisms(thickness, intensity)


def _inputs(n: int = 6):
    from cfcheck.domains.morpho.rendering import render

    factors = sample_factors(n, seed=11)
    return render(factors), {"thickness": factors.thickness, "intensity": factors.intensity, "digit": factors.digit}


@pytest.mark.parametrize("which", ["hvae", "gan"])
def test_adapter_contract_and_null_intervention(which):
    """The HVAE's null intervention returns the input (pixel noise abducted; tolerance 1e-4); the GAN's
    returns its reconstruction G(E(x, c), c)."""
    mechanisms = _mechanisms()
    image_mechanism = _hvae() if which == "hvae" else _gan()
    method = SCMVAE(vae=image_mechanism, mechanisms=mechanisms, abduct_pixel_noise=which == "hvae", batch_size=4)
    x, parents = _inputs()
    x_before = x.clone()
    intervention = {"digit": (parents["digit"] + 3) % 10}
    out = method.counterfactual(x, parents, intervention)
    assert out.shape == x.shape and out.dtype == x.dtype and out.min() >= 0 and out.max() <= 1
    assert torch.equal(out, method.counterfactual(x, parents, intervention)) and torch.equal(x, x_before)
    null = method.counterfactual(x, parents, {"thickness": parents["thickness"].clone()})
    if which == "hvae":
        torch.testing.assert_close(null, x, atol=1e-4, rtol=0)
    else:
        with torch.no_grad():
            expected = image_mechanism.reconstruct(x, mechanisms.condition(parents))
        torch.testing.assert_close(null, expected, atol=1e-4, rtol=0)


# -- counterfactual fine-tuning ------------------------------------------------------------------------
def test_condition_loss_is_mse_on_the_continuous_columns_plus_cross_entropy_of_the_one_hot_block():
    from cfcheck.models.generative.vae.counterfactual_training import condition_loss

    predicted = torch.tensor([[0.5, -1.0, 2.0, 0.0, 0.0]])
    target = torch.tensor([[1.0, -1.0, 0.0, 1.0, 0.0]])
    expected = 0.5 * 0.25 + torch.nn.functional.cross_entropy(predicted[:, 2:], torch.tensor([1]))
    torch.testing.assert_close(condition_loss(predicted, target, 2), expected)


def test_soft_condition_loss_equals_the_hard_one_on_one_hot_rows_and_scores_mixtures():
    from cfcheck.models.generative.vae.counterfactual_training import condition_loss

    predicted = torch.tensor([[0.5, -1.0, 2.0, 0.0, 0.0]])
    one_hot = torch.tensor([[1.0, -1.0, 0.0, 1.0, 0.0]])
    torch.testing.assert_close(condition_loss(predicted, one_hot, 2, soft=True), condition_loss(predicted, one_hot, 2))
    mixed = torch.tensor([[1.0, -1.0, 0.3, 0.7, 0.0]])
    log_p = torch.log_softmax(predicted[:, 2:], 1)
    expected = 0.5 * 0.25 - (0.3 * log_p[0, 0] + 0.7 * log_p[0, 1])
    torch.testing.assert_close(condition_loss(predicted, mixed, 2, soft=True), expected)


@pytest.mark.parametrize("options", [{}, {"abduct_pixel_noise": True, "predictor_mixup": True}])
def test_counterfactual_finetuning_is_deterministic_and_moves_the_weights(options):
    from cfcheck.models.generative.vae.counterfactual_training import counterfactual_finetune

    g = torch.Generator().manual_seed(0)
    images = torch.rand(64, 1, 32, 32, generator=g)
    condition = torch.cat([torch.randn(64, 2, generator=g), torch.eye(10)[torch.arange(64) % 10]], 1)
    states = []
    for _ in range(2):
        model = _hvae()
        model.set_standardisation(condition)
        info = counterfactual_finetune(
            model,
            images,
            condition,
            seed=1,
            epochs=1,
            batch_size=32,
            lr=1e-3,
            weight=1.0,
            predictor_epochs=1,
            log=lambda line: None,
            **options,
        )
        states.append(model.state_dict())
    assert all(v == v and abs(v) < 1e6 for v in info.values())
    untouched = dict(_hvae().named_parameters())
    assert sum(not torch.equal(states[0][k], untouched[k]) for k in untouched) > len(untouched) // 2
    for key in states[0]:
        torch.testing.assert_close(states[0][key], states[1][key], rtol=0, atol=0)


# -- the bundled models ----------------------------------------------------------------------------------
def _bundled(mechanism: str, abduct_pixel_noise: bool) -> SCMVAE:
    from cfcheck.domains import get_domain
    from cfcheck.models.zoo import MethodModels, ModelZoo

    domain = get_domain("morpho")
    models = MethodModels(ModelZoo(get_domain("morpho"), torch.device("cpu")))
    assert mechanism in domain.model_roles["scm_image_mechanisms"]
    return SCMVAE(
        vae=models[mechanism], mechanisms=domain.attribute_mechanisms(models), abduct_pixel_noise=abduct_pixel_noise
    )


def _test_images(n: int):
    from cfcheck.domains import get_domain

    domain = get_domain("morpho")
    return domain, domain.split("test", n).images, domain.parents("test", torch.arange(n))


def test_bundled_hvae_null_intervention_returns_the_input_and_the_gan_its_reconstruction():
    """Abduction then the null intervention: the HVAE returns the test images within 1e-4 (z and the pixel
    noise abducted; the flows round-trip the parents); the GAN returns G(E(x)), measured at a mean |·| of
    0.0248 here (0.070 before its counterfactual fine-tuning), so within 0.035."""
    _, x, parents = _test_images(50)
    null = {"thickness": parents["thickness"].clone()}
    torch.testing.assert_close(_bundled("chvae", True).counterfactual(x, parents, null), x, atol=1e-4, rtol=0)
    gan = _bundled("cgan", False).counterfactual(x, parents, null)
    assert 0.0 < float((gan - x).abs().mean()) < 0.035


@pytest.mark.parametrize("mechanism, noise", [("chvae", True), ("cgan", False)])
def test_bundled_hvae_and_gan_move_the_intervened_parent_the_right_way(mechanism, noise):
    """do(a high value) shows a higher measured value than do(a low value) of the same input, as the VAE's
    test asserts (share >= 0.9 of 100 test images; the GAN, counterfactually fine-tuned, 1.00 for both)."""
    domain, x, parents = _test_images(100)
    method = _bundled(mechanism, noise)
    for factor, low, high in (("thickness", 1.6, 3.6), ("intensity", 90.0, 230.0)):
        lows = method.counterfactual(x, parents, {factor: torch.full((100,), low)})
        highs = method.counterfactual(x, parents, {factor: torch.full((100,), high)})
        share = float((domain.measure_factors(highs)[factor] > domain.measure_factors(lows)[factor]).float().mean())
        assert share >= 0.9, (factor, share)


@pytest.mark.slow
def test_bundled_gan_remeasured_matches_its_card_and_meets_its_bars():
    """The card's four values re-measured on the bundled cgan weights (the recipe's ``measure_quality``,
    1,000 test images): as recorded at training time (test_mse 0.0063, thickness 0.44 sd, intensity
    0.37 sd, do(digit) 0.813) and within the bars, which it meets since its counterfactual fine-tuning."""
    from cfcheck.core.thresholds import Bars
    from cfcheck.domains import get_domain
    from cfcheck.domains.morpho.scm_image import GAN
    from cfcheck.models.registry import model_entry
    from cfcheck.models.zoo import ModelZoo

    entry = model_entry("cgan", domain="morpho")
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with torch.no_grad():
            quality = GAN.measure_quality(
                ModelZoo(get_domain("morpho"), torch.device("cpu"))["cgan"].eval(), GAN.config
            )
    finally:
        torch.set_num_threads(previous)
    for metric, bounds in entry["quality_bar"].items():
        assert quality[metric] == pytest.approx(entry["quality"][metric], abs=1e-4), metric
        assert Bars.from_dict(bounds).passes(quality[metric]), (metric, quality[metric])
