"""The glyph domain's bundled models: recipes, networks, a smoke training run, and the shipped
weights re-measured against their manifest (accuracies recomputed here, not by the training
code, so a bug there cannot certify itself)."""

from __future__ import annotations

import hashlib
import json

import pytest
import torch

from cfcheck.core.thresholds import Bars
from cfcheck.domains import get_domain
from cfcheck.domains.glyphs import SCENARIOS, GlyphsDomain, load_split, raw_latents
from cfcheck.domains.glyphs.networks import ENCODER_HEADS, GlyphEncoder, GlyphGenerator, StandardisedGenerator
from cfcheck.domains.glyphs.recipes import ENCODER, GENERATOR, GlyphRecipe, classifier_name, glyph_recipes
from cfcheck.domains.glyphs.training import font_swap_fonts, refont, refresh_bars_and_cards, train_glyph_models
from cfcheck.models.model_cards import model_card_markdown
from cfcheck.models.registry import domain_dir, load_manifest, load_model, model_entry

NAMES = list(glyph_recipes())
CLASSIFIERS = [classifier_name(s) for s in SCENARIOS]
TEST_N = 2000

pytestmark = pytest.mark.usefixtures("single_torch_thread")  # as the models are trained


def test_recipes_name_every_model_once_in_training_order():
    assert ["encoder", "generator", *CLASSIFIERS] == NAMES
    assert CLASSIFIERS == [
        "classifier_fonts6_corr50",
        "classifier_fonts6_corr95",
        "classifier_fonts10_corr50",
        "classifier_fonts10_corr95",
    ]
    recipes = glyph_recipes()
    assert {recipes[n].scenario for n in CLASSIFIERS} == set(SCENARIOS)
    assert len({r.seed for r in recipes.values()}) == len(recipes)  # independent initialisations
    with pytest.raises(ValueError, match="unknown scenario"):
        classifier_name("fonts7-corr95")


def test_recipe_validation_and_smoke_budget():
    smoke = GENERATOR.smoke()
    assert (smoke.n, smoke.epochs, smoke.test_n) == (256, 1, 128)
    assert (smoke.architecture, smoke.arch_kwargs, smoke.seed) == (
        GENERATOR.architecture,
        GENERATOR.arch_kwargs,
        GENERATOR.seed,
    )
    with pytest.raises(ValueError, match="kind"):
        GlyphRecipe(**{**ENCODER.__dict__, "kind": "gan"})
    with pytest.raises(ValueError, match="unknown scenario"):
        GlyphRecipe(**{**ENCODER.__dict__, "scenario": "nope"})
    with pytest.raises(ValueError, match="epochs"):
        GlyphRecipe(**{**ENCODER.__dict__, "epochs": 0})


def test_networks_shapes_and_input_checks():
    generator = GlyphGenerator()
    with torch.no_grad():
        images = generator(torch.randn(3, 11))
    assert images.shape == (3, 1, 32, 32) and float(images.min()) >= 0 and float(images.max()) <= 1
    with pytest.raises(ValueError, match="N×11"):
        generator(torch.randn(3, 10))
    with pytest.raises(ValueError, match="three"):
        GlyphGenerator(block_channels=(32, 16))
    with pytest.raises(ValueError, match="latent_mean"):
        GlyphGenerator(latent_mean=[0.0] * 3)
    encoder = GlyphEncoder()
    assert encoder(torch.rand(2, 1, 32, 32)).shape == (2, sum(ENCODER_HEADS.values()))
    assert {k: v.shape[1] for k, v in encoder.heads(torch.rand(2, 1, 32, 32)).items()} == ENCODER_HEADS
    with pytest.raises(ValueError, match="images"):
        encoder(torch.rand(2, 3, 32, 32))


def test_the_standardised_generator_is_the_raw_one_after_unstandardising():
    domain = GlyphsDomain("fonts10-corr50")
    torch.manual_seed(0)
    raw_generator = GlyphGenerator().eval()
    wrapped = StandardisedGenerator(raw_generator, domain.standardiser)
    z = domain.latents("test", 4).requires_grad_(True)
    expected = raw_generator(raw_latents(load_split("fonts10-corr50", "test", 4).factors))
    out = wrapped(z)
    assert torch.allclose(out, expected, atol=1e-5)
    out.sum().backward()  # explainers take gradients through g
    assert z.grad is not None and torch.isfinite(z.grad).all() and float(z.grad.abs().sum()) > 0


def test_font_swaps_take_the_other_labels_spurious_group_or_a_neutral_font():
    scenario = "fonts10-corr95"
    factors = load_split(scenario, "test", 200).factors
    zero, one = SCENARIOS[scenario].spurious_fonts
    spurious = font_swap_fonts(factors, scenario, spurious=True, seed=0)
    for font, label in zip(spurious.tolist(), factors.label.tolist()):
        assert font in (one if label == 0 else zero)
    neutral = font_swap_fonts(factors, scenario, spurious=False, seed=0)
    assert not set(neutral.tolist()) & {*zero, *one}
    swapped = refont(factors, spurious)
    assert torch.equal(swapped.font, spurious) and torch.equal(swapped.character, factors.character)
    assert torch.equal(swapped.rotation, factors.rotation)


def test_smoke_training_writes_verified_loadable_models(tmp_path):
    names = ["encoder", "generator", "classifier_fonts6_corr50"]
    entries = train_glyph_models(names, tmp_path, smoke=True, log=lambda line: None)
    assert sorted(entries) == sorted(f"glyphs/{n}" for n in names)
    manifest = load_manifest(tmp_path / "manifest.json")
    for name in names:
        entry = manifest["models"][f"glyphs/{name}"]
        data = (tmp_path / entry["file"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == entry["sha256"]
        assert (tmp_path / f"glyphs_{name}.md").is_file()
        assert entry["training"]["epochs"] == 1 and entry["data"]["n"] == 256
    # the generator's attribute recovery used the encoder trained beside it
    assert "encoder_character_accuracy" in manifest["models"]["glyphs/generator"]["quality"]
    domain = GlyphsDomain("fonts6-corr50")
    generator = domain.latent_generator(weights_dir=str(tmp_path))
    assert generator(domain.latents("test", 2)).shape == (2, 1, 32, 32)
    assert domain.encode(
        load_split("fonts6-corr50", "test", 3).images, domain.latent_encoder(weights_dir=str(tmp_path))
    ).shape == (3, 11)
    # bars are refreshed from the recipes without retraining: the weights and hashes stay
    manifest["models"]["glyphs/encoder"]["quality_bar"] = {"character_accuracy": {"min": 0.0}}
    (tmp_path / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    assert refresh_bars_and_cards(tmp_path) == sorted(names)
    refreshed = load_manifest(tmp_path / "manifest.json")["models"]["glyphs/encoder"]
    assert refreshed["quality_bar"] == ENCODER.quality_bar
    assert refreshed["sha256"] == manifest["models"]["glyphs/encoder"]["sha256"]
    with pytest.raises(ValueError, match="out_dir"):
        train_glyph_models(names[:1], None, smoke=True)
    with pytest.raises(ValueError, match="unknown glyph model"):
        train_glyph_models(["decoder"], tmp_path, smoke=True)


# -- the shipped weights ----------------------------------------------------------------------------
def _shipped() -> dict:
    return {k.split("/", 1)[1]: v for k, v in load_manifest(domain="glyphs")["models"].items()}


def _check(value: float, bounds: dict) -> None:
    bars = Bars.from_dict(bounds)
    assert bars.passes(value), f"{value:.4f} misses the bar {bars.describe()}"


def test_every_recipe_is_shipped_with_a_card_and_its_hash():
    shipped = _shipped()
    assert sorted(shipped) == sorted(NAMES), "retrain the missing glyph models"
    manifest_text = (domain_dir("glyphs") / "manifest.json").read_text(encoding="utf-8")
    assert manifest_text == json.dumps(load_manifest(domain="glyphs"), indent=2, sort_keys=True) + "\n"
    for name, entry in shipped.items():
        path = domain_dir("glyphs") / entry["file"]
        assert hashlib.sha256(path.read_bytes()).hexdigest() == entry["sha256"]
        assert path.stat().st_size < 5 * 2**20
        card = (domain_dir("glyphs") / f"glyphs_{name}.md").read_text(encoding="utf-8")
        assert card == model_card_markdown({"domain": "glyphs", "name": name, **entry})
        assert entry["quality_bar"] == glyph_recipes()[name].quality_bar  # the recipe's bar is the card's
        assert entry["num_threads"] == 1 and entry["train_seconds"] > 0


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_shipped_classifier_meets_its_bar_on_the_true_parity(scenario):
    domain = GlyphsDomain(scenario)
    entry = model_entry(classifier_name(scenario), domain="glyphs")
    test = load_split(scenario, "test", TEST_N)
    with torch.no_grad():
        predicted = domain.explained_classifier()(test.images).argmax(1)
    accuracy = float((predicted == test.factors.character % 2).double().mean())
    _check(accuracy, entry["quality_bar"]["causal_accuracy"])
    assert accuracy == pytest.approx(entry["quality"]["causal_accuracy"], abs=2e-3)


def test_shipped_encoder_recovers_the_attributes():
    entry = model_entry("encoder", domain="glyphs")
    domain = get_domain("glyphs")
    test = load_split(domain.scenario.name, "test", TEST_N)
    with torch.no_grad():
        heads = domain.latent_encoder().heads(test.images)
    character = float((heads["character"].argmax(1) == test.factors.character).double().mean())
    font = float((heads["font"].argmax(1) == test.factors.font).double().mean())
    _check(character, entry["quality_bar"]["character_accuracy"])
    _check(font, entry["quality_bar"]["font_accuracy"])
    assert character == pytest.approx(entry["quality"]["character_accuracy"], abs=2e-3)
    # encoded latents decode to the right character through the domain's own oracle
    z = domain.encode(test.images[:500])
    assert float((domain.decode_categories(z)["character"] == test.factors.character[:500]).double().mean()) > 0.5


def test_shipped_generator_reconstructs_and_keeps_the_character():
    entry = model_entry("generator", domain="glyphs")
    domain = GlyphsDomain("fonts10-corr95")  # the shared generator serves every scenario
    test = load_split("fonts10-corr95", "test", TEST_N)
    with torch.no_grad():
        fake = domain.latent_generator()(test.latents)
        l1 = float((fake - test.images).abs().mean())
        recovered = domain.latent_encoder()(fake)[:, : ENCODER_HEADS["character"]].argmax(1)
    _check(l1, entry["quality_bar"]["test_l1"])
    _check(
        float((recovered == test.factors.character).double().mean()), entry["quality_bar"]["encoder_character_accuracy"]
    )
    blank = float((test.images - test.images.mean((1, 2, 3), keepdim=True)).abs().mean())
    assert l1 < 0.5 * blank, "no better than a per-image constant"


def test_shipped_models_load_through_the_registry_frozen():
    for name in NAMES:
        model = load_model(name, domain="glyphs")
        assert not model.training and all(not p.requires_grad for p in model.parameters())
        assert sum(p.numel() for p in model.parameters()) == model_entry(name, domain="glyphs")["parameters"]


def test_a_recipe_is_deterministic(tmp_path):
    """Two smoke trainings of one recipe write byte-identical weights (same torch, one thread)."""
    hashes = []
    for run in ("first", "second"):
        entries = train_glyph_models(["classifier_fonts10_corr95"], tmp_path / run, smoke=True, log=lambda line: None)
        hashes.append(entries["glyphs/classifier_fonts10_corr95"]["sha256"])
    assert hashes[0] == hashes[1]
