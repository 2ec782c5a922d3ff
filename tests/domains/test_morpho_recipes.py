"""The morpho reference-model recipes, offered through MorphoDomain.model_recipes()."""

from __future__ import annotations

import pytest
import torch

from cfcheck.domains import get_domain
from cfcheck.domains.base import Domain
from cfcheck.domains.morpho import FONTS, intensity_bin, load_split, thickness_bin
from cfcheck.domains.morpho.recipes import RECIPES, TASKS, attribute_targets, task_targets
from cfcheck.domains.morpho.splits import SPLIT_SEEDS


@pytest.fixture(scope="module")
def data():
    return load_split("val", 64)


def test_the_domain_offers_its_recipes():
    domain = get_domain("morpho")
    assert isinstance(domain, Domain)  # the optional hook changes nothing of the protocol
    recipes = domain.model_recipes()
    assert recipes is RECIPES and recipes.tasks == TASKS
    specs = recipes.specs()
    assert {"cnn", "random_net", "attr_digit", "embedding"} <= set(specs)
    assert all(spec.name == name and spec.task in TASKS for name, spec in specs.items())
    assert {spec.attribute for spec in specs.values() if spec.role == "attribute_oracle"} == {
        "digit",
        "thickness",
        "intensity",
    }
    assert all(spec.recipe.split in SPLIT_SEEDS for spec in specs.values())


def test_split_seeds_are_the_splits_own():
    assert {name: RECIPES.split_seed(name) for name in SPLIT_SEEDS} == SPLIT_SEEDS
    assert RECIPES.split_seed("nowhere") is None


def test_attribute_targets(data):
    assert torch.equal(attribute_targets("digit", data), data.labels)
    assert torch.equal(attribute_targets("thickness", data), thickness_bin(data.factors.thickness))
    assert torch.equal(attribute_targets("intensity", data), intensity_bin(data.factors.intensity))
    fonts = attribute_targets("font", data)
    assert fonts.dtype == torch.int64 and int(fonts.max()) < len(FONTS)
    with pytest.raises(ValueError, match="unknown morpho attribute 'colour'"):
        attribute_targets("colour", data)


def test_task_targets(data):
    single = {"digit": "digit", "thickness_bin": "thickness", "intensity_bin": "intensity", "font": "font"}
    for task, attribute in single.items():
        targets = RECIPES.targets(task, data)
        assert list(targets) == ["label"]
        assert torch.equal(targets["label"], attribute_targets(attribute, data))
    heads = task_targets("multitask", data)
    assert list(heads) == ["digit", "thickness", "intensity", "font"]  # main head first
    with pytest.raises(ValueError, match="unknown task 'colour'"):
        task_targets("colour", data)
