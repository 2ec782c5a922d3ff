"""The SCM suites' evaluation models: anti-causal predictors and the CLD VAE (recipes, smoke
training, determinism, and the bundled weights re-measured against their bars here, directly
from the network outputs and the domain's labels)."""

from __future__ import annotations

import pytest
import torch

from cfcheck.core.thresholds import Bars
from cfcheck.domains import get_domain
from cfcheck.models.generative import train_generative_models
from cfcheck.models.generative.vae import UnconditionalVAE
from cfcheck.models.predictors import AnticausalPredictor, train_predictor
from cfcheck.models.registry import available_models, load_model, model_entry

DOMAIN = "morpho"
NAMES = ("predictor_thickness", "predictor_intensity", "predictor_digit", "cld_vae")


def test_predictor_network_shapes_units_and_validation():
    torch.manual_seed(0)
    regressor = AnticausalPredictor(outputs=1).eval()
    regressor.target_loc.fill_(100.0)
    regressor.target_scale.fill_(20.0)
    x = torch.rand(3, 1, 32, 32)
    torch.testing.assert_close(regressor(x), regressor.standardised(x) * 20.0 + 100.0)
    assert regressor.features(x).shape == (3, 128)
    classifier = AnticausalPredictor(outputs=10).eval()
    assert classifier(x).shape == (3, 10)
    with pytest.raises(ValueError, match="outputs"):
        AnticausalPredictor(outputs=0)
    with pytest.raises(ValueError, match="N×C×32×32"):
        regressor(torch.rand(3, 32, 32))
    with pytest.raises(ValueError, match="targets"):
        train_predictor(
            x,
            torch.rand(2),
            {"outputs": 1},
            get_domain(DOMAIN).generative_recipes()["predictor_thickness"].smoke_config(),
        )


def test_unconditional_vae_validates_and_its_elbo_terms_are_consistent():
    torch.manual_seed(0)
    vae = UnconditionalVAE(latent_dim=4).eval()
    x = torch.rand(2, 1, 32, 32)
    loss, reconstruction, kl = vae.negative_elbo(x, torch.Generator().manual_seed(0))
    mean, log_var = vae.encode(x)
    expected_kl = torch.distributions.kl_divergence(
        torch.distributions.Normal(mean, (0.5 * log_var).exp()), torch.distributions.Normal(0.0, 1.0)
    ).sum(1)
    torch.testing.assert_close(kl, expected_kl, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(loss, reconstruction + kl)
    with pytest.raises(ValueError, match="latent_dim"):
        UnconditionalVAE(latent_dim=0)
    with pytest.raises(ValueError, match="32×32"):
        vae.encode(torch.rand(2, 1, 16, 16))


@pytest.fixture(scope="module")
def smoke_entries(tmp_path_factory):
    folder = tmp_path_factory.mktemp("scm-evaluation-smoke")
    return folder, train_generative_models(get_domain(DOMAIN), list(NAMES), folder, smoke=True, log=lambda _: None)


def test_smoke_training_writes_every_model_with_its_role(smoke_entries):
    folder, entries = smoke_entries
    for name in NAMES:
        entry = entries[f"{DOMAIN}/{name}"]
        assert (folder / entry["file"]).is_file()
        assert entry["data"]["split"] == "oracle"  # evaluation models never see the methods' data
        model = load_model(name, domain=DOMAIN, weights_dir=folder)
        assert model is not None
    roles = {entries[f"{DOMAIN}/{n}"]["role"] for n in NAMES}
    assert roles == {"anticausal_predictor", "minimality_vae"}
    assert {entries[f"{DOMAIN}/predictor_{a}"]["attribute"] for a in ("thickness", "intensity", "digit")} == {
        "thickness",
        "intensity",
        "digit",
    }
    assert set(entries[f"{DOMAIN}/predictor_thickness"]["quality"]) >= {"test_mae_sd"}
    assert set(entries[f"{DOMAIN}/cld_vae"]["quality"]) >= {"test_mse", "test_kl"}


def test_smoke_training_is_deterministic(smoke_entries, tmp_path):
    _, first = smoke_entries
    again = train_generative_models(
        get_domain(DOMAIN), ["predictor_digit", "cld_vae"], tmp_path, smoke=True, log=lambda _: None
    )
    for name in ("predictor_digit", "cld_vae"):
        assert again[f"{DOMAIN}/{name}"]["sha256"] == first[f"{DOMAIN}/{name}"]["sha256"]


def test_the_domain_names_its_evaluation_models_under_their_roles():
    domain = get_domain(DOMAIN)
    assert set(domain.model_roles["anticausal_predictors"]) == set(
        available_models(DOMAIN, role="anticausal_predictor")
    )
    assert domain.model_roles["minimality_vae"] == tuple(available_models(DOMAIN, role="minimality_vae"))


@pytest.fixture(scope="module")
def test_split():
    return get_domain(DOMAIN).split("test")


@pytest.mark.parametrize("parent", ["thickness", "intensity"])
def test_bundled_regressors_meet_their_bar(parent, test_split):
    name = f"predictor_{parent}"
    model = load_model(name, domain=DOMAIN)
    truth = getattr(test_split.factors, parent).double()
    with torch.no_grad():
        predicted = torch.cat([model(test_split.images[i : i + 1000]) for i in range(0, len(truth), 1000)])[:, 0]
    mae_sd = float((predicted.double() - truth).abs().mean() / truth.std())
    assert Bars.from_dict(model_entry(name, domain=DOMAIN)["quality_bar"]["test_mae_sd"]).passes(mae_sd), mae_sd


def test_bundled_digit_classifier_meets_its_bar(test_split):
    model = load_model("predictor_digit", domain=DOMAIN)
    with torch.no_grad():
        logits = torch.cat([model(test_split.images[i : i + 1000]) for i in range(0, len(test_split.labels), 1000)])
    accuracy = float((logits.argmax(1) == test_split.labels).double().mean())
    assert Bars.from_dict(model_entry("predictor_digit", domain=DOMAIN)["quality_bar"]["test_accuracy"]).passes(
        accuracy
    )


def test_bundled_cld_vae_meets_its_bar_and_separates_images(test_split):
    from cfcheck.metrics.minimality import gaussian_kl

    vae = load_model("cld_vae", domain=DOMAIN)
    images = test_split.images[:1000]
    with torch.no_grad():
        mse = float(torch.nn.functional.mse_loss(vae(images), images))
        mean, log_var = vae.encode(images)
    bar = model_entry("cld_vae", domain=DOMAIN)["quality_bar"]
    assert Bars.from_dict(bar["test_mse"]).passes(mse), mse
    # posteriors differ between images: the KL between two different images' posteriors is positive
    kl = gaussian_kl(mean[:500], log_var[:500], mean[500:], log_var[500:])
    assert float(kl.min()) > 0


def test_parent_bins_are_the_ones_interventions_leave():
    domain = get_domain(DOMAIN)
    parents = domain.parents("test", torch.arange(200))
    generator = torch.Generator().manual_seed(0)
    for factor in domain.factor_names:
        new = domain.sample_intervention(factor, parents, generator)
        bins_before, bins_after = domain.parent_bin(factor, parents[factor]), domain.parent_bin(factor, new)
        assert bool((bins_before != bins_after).all()), factor
        assert int(bins_after.min()) >= 0 and int(bins_after.max()) <= 9
    with pytest.raises(ValueError, match="unknown factor"):
        domain.parent_bin("font", torch.zeros(2))


def test_methods_cannot_load_the_models_that_score_them():
    from cfcheck.models.zoo import MethodModels, ModelZoo

    models = MethodModels(ModelZoo(get_domain(DOMAIN), torch.device("cpu")))
    for name in NAMES:
        assert name not in models.names()
        with pytest.raises(KeyError, match="evaluation model"):
            models[name]
