"""Model cards (generated from the manifest) and the recipe/spec definitions."""

from __future__ import annotations

import dataclasses

import pytest

from cfcheck.domains import get_domain
from cfcheck.models.classifiers.evaluation import bar_violations
from cfcheck.models.classifiers.recipes import ModelSpec, model_specs, smoke_spec
from cfcheck.models.model_cards import model_card_markdown
from cfcheck.models.registry import domain_dir, load_manifest

MORPHO = get_domain("morpho")
SPECS = model_specs(MORPHO)


def test_shipped_cards_are_generated_from_the_manifest():
    manifest = load_manifest(domain="morpho")
    for key, entry in manifest["models"].items():
        domain, name = key.split("/", 1)
        card = (domain_dir("morpho") / f"{domain}_{name}.md").read_text(encoding="utf-8")
        assert card == model_card_markdown({"domain": domain, "name": name, **entry})


def test_card_mentions_purpose_hash_quality_bar_and_retrain_command():
    entry = load_manifest(domain="morpho")["models"]["morpho/robust_cnn"]
    card = model_card_markdown({"domain": "morpho", "name": "robust_cnn", **entry})
    assert card.startswith("# morpho/robust_cnn\n")
    assert entry["sha256"] in card and entry["purpose"] in card
    assert "cfcheck retrain --domain morpho --only robust_cnn" in card
    assert f"| robust_accuracy | {entry['quality']['robust_accuracy']:.4f} | >= " in card
    assert "| eps" not in card  # the recipe's augmentation is one JSON cell, not split up
    assert '"eps": 1.5' in card


def test_card_rejects_incomplete_entries():
    with pytest.raises(ValueError, match=r"lacks \['sha256'"):
        model_card_markdown({"file": "x.safetensors"})


def test_specs_are_consistent():
    assert set(SPECS) == {
        "cnn",
        "robust_cnn",
        "mlp",
        "noise_cnn",
        "random_net",
        "oracle_resnet",
        "oracle_wide_cnn",
        "oracle_lenet",
        "attr_digit",
        "attr_thickness",
        "attr_intensity",
        "embedding",
    }
    for name, spec in SPECS.items():
        assert spec.name == name
        split = spec.recipe.split
        assert split == ("train" if spec.role == "classifier" else "oracle"), name
        assert "test_accuracy" in spec.quality_bar
    assert SPECS["random_net"].recipe.epochs == 0
    assert SPECS["robust_cnn"].recipe.augmentation["norm"] == "l2"


def test_smoke_spec_only_shrinks_the_budget():
    for spec in SPECS.values():
        tiny = smoke_spec(spec)
        assert tiny.recipe.n == 192 and tiny.recipe.epochs <= 1 and tiny.test_n == 128
        same = dataclasses.replace(
            tiny.recipe,
            n=spec.recipe.n,
            epochs=spec.recipe.epochs,
            batch_size=spec.recipe.batch_size,
            selection_n=spec.recipe.selection_n,
        )
        assert same == spec.recipe  # seed, optimiser, augmentation untouched


def test_spec_validation():
    base = SPECS["cnn"]
    with pytest.raises(ValueError, match="role must be one of"):
        dataclasses.replace(base, role="teacher")
    with pytest.raises(ValueError, match="task must be one of"):
        dataclasses.replace(base, task="colour")
    with pytest.raises(ValueError, match="attribute"):
        dataclasses.replace(base, attribute="digit")
    with pytest.raises(ValueError, match="'glyphs'"):
        model_specs(get_domain("glyphs"))
    with pytest.raises(TypeError, match=r"takes the domain object, got the name 'morpho'"):
        model_specs("morpho")  # type: ignore[arg-type]
    assert isinstance(base, ModelSpec)


def test_bar_violations():
    bar = {"test_accuracy": {"min": 0.9}, "chance": {"max": 0.2}, "robust_accuracy": {"min": 0.5}}
    quality = {"test_accuracy": 0.95, "chance": 0.25}
    assert bar_violations(quality, bar) == ["chance=0.2500, bar <= 0.2", "robust_accuracy: not measured"]
    assert bar_violations({"test_accuracy": 0.9}, {"test_accuracy": {"min": 0.9, "max": 0.9}}) == []


def test_specs_are_bound_to_their_domain():
    assert all(spec.domain is MORPHO for spec in SPECS.values())
    assert all(smoke_spec(spec).domain is MORPHO for spec in SPECS.values())


def test_a_domain_without_the_recipes_hook_has_no_models(monkeypatch):
    class Bare:
        name = "bare"

    with pytest.raises(ValueError, match=r"domain 'bare' has no reference-model recipes"):
        model_specs(Bare())  # type: ignore[arg-type]


def test_unbound_specs_accept_any_task_but_have_no_targets():
    from cfcheck.domains.morpho import load_split
    from cfcheck.models.classifiers.evaluation import main_head, task_targets

    free = dataclasses.replace(SPECS["cnn"], domain=None, task="colour")  # no domain: no check
    assert free.task == "colour"
    with pytest.raises(ValueError, match="names no domain"):
        task_targets(free.task, load_split("val", 4), domain=free.domain)
    with pytest.raises(ValueError, match="non-empty string"):
        dataclasses.replace(free, task="")
    assert main_head(["label"]) == "label" and main_head(["digit", "font"]) == "digit"


def test_card_takes_domain_and_name_from_the_file_name():
    entry = dict(load_manifest(domain="morpho")["models"]["morpho/mlp"])
    assert model_card_markdown(entry) == model_card_markdown({"domain": "morpho", "name": "mlp", **entry})
