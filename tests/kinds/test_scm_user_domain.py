"""The SCM suites' parts on a user's attribute-labelled domain (no true counterfactual, no renderer),
checked on ``scm_shapes``, a domain the project renders itself (:mod:`tests.own_domains.scm_shapes`):
its attributes are known for every image and every counterfactual can be rendered
(:class:`tests.own_domains.scm_methods.ShapeRenderer`), so each answer below is known by construction.

The end-to-end run of the suites (orderings of generators, skips, no verdicts) is
``tests/plugin/test_scm_user_domain_run.py``.
"""

from __future__ import annotations

import math
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from torch import nn

from cfcheck.domains.attributes import Attributes, categorical, continuous
from cfcheck.domains.data import ArraySource, ImageDomain
from cfcheck.kinds.base import EvaluatedOnce
from cfcheck.kinds.scm.effectiveness import image_reading_missing, predictor_agreement
from cfcheck.kinds.scm.minimality import cld_scores
from cfcheck.kinds.scm.realism import scm_realism
from cfcheck.kinds.scm.realism_matching import COPIES, match_reference, reference_shortfall
from cfcheck.kinds.scm.roles import (
    composition_embedding,
    embedding_missing,
    predictor_heads,
    predictor_missing,
    read_parent,
    reading_values,
)
from cfcheck.kinds.scm.spec import SPEC, truth_missing
from cfcheck.metrics.realism import fid
from cfcheck.models.store import ModelStore, ModuleStore
from cfcheck.models.zoo import ModelZoo
from tests.own_domains import scm_shapes
from tests.own_domains.scm_methods import ShapeRenderer
from tests.own_domains.scm_shapes_nets import SizeBrightnessReader, TypeReader, fixed_embedding

pytestmark = pytest.mark.usefixtures("single_torch_thread")

N = 60


@pytest.fixture(scope="module")
def shapes(single_torch_thread):
    """The cached domain, its zoo, N scored inputs (a seeded draw: the split comes in class blocks)."""
    domain = scm_shapes.load(scm_shapes.build())
    index = torch.randperm(len(domain.split("scored")), generator=torch.Generator().manual_seed(3))[:N].sort().values
    return domain, ModelZoo(domain, "cpu"), index


def _declared_domain(store, roles, *, fractions=None):
    """The scm_shapes data as a user would declare it, with another store and role map."""
    folder = scm_shapes.build()
    attributes = Attributes(
        [continuous("size", bins=5), continuous("brightness", bins=5), categorical("type", values=scm_shapes.TYPES)],
        graph={"brightness": ("size",)},
        table=dict(np.load(folder / "attributes.npz")),
        mechanisms={"brightness": scm_shapes.BRIGHTNESS},
    )
    return ImageDomain(
        "shapes_variant",
        ArraySource.from_file(folder / "images.npy"),
        root=Path(folder) / "unused",
        model_roles=roles,
        model_store=store,
        fractions=fractions or scm_shapes.FRACTIONS,
        attributes=attributes,
    )


class _Result(SimpleNamespace, EvaluatedOnce):
    """What the SCM scores read of a task's result."""


def _intervened(shapes, factor, seed=0):
    """(inputs, observed parents, the intervention, the propagated parents, the true counterfactuals)."""
    domain, _, index = shapes
    parents = domain.parents("scored", index)
    new = domain.sample_intervention(factor, parents, torch.Generator().manual_seed(seed))
    targets = domain.counterfactual_parents("scored", index, {factor: new})
    x = domain.split("scored").take(index)
    return x, parents, {factor: new}, targets, ShapeRenderer(domain).counterfactual(x, parents, {factor: new})


def _result(shapes, factor, x, parents, intervention, targets, x_cf):
    return _Result(
        domain=shapes[0],
        task=SimpleNamespace(seed=0, factor=factor),
        x=x,
        parents=parents,
        intervention=intervention,
        target_parents=targets,
        x_cf=x_cf,
        valid=torch.ones(len(x), dtype=torch.bool),
    )


def test_the_kind_takes_an_attribute_domain_and_says_real_data_has_no_true_counterfactual(shapes):
    domain = shapes[0]
    assert SPEC.supports(domain) is None
    assert "real data has no true counterfactual" in truth_missing(domain)
    plain = ImageDomain("plain", domain.split("scored").source, root="unused", model_roles={})
    assert "has no structural causal model to intervene on" in SPEC.supports(plain)


def test_the_predictors_read_each_attribute_off_rendered_images(shapes):
    """One single-attribute predictor and one two-headed one, against the table's values."""
    domain, zoo, index = shapes
    assert predictor_heads(zoo) == {
        "type": ("predictor_type", None),
        "size": ("predictor_continuous", "size"),
        "brightness": ("predictor_continuous", "brightness"),
    }
    images, truth = domain.split("scored").take(index), domain.parents("scored", index)
    assert (read_parent(zoo, "size", images) - truth["size"]).abs().mean() < 0.2  # pixels; sizes span 6
    assert (read_parent(zoo, "brightness", images) - truth["brightness"]).abs().max() < 0.01
    assert torch.equal(read_parent(zoo, "type", images), truth["type"])


def test_a_reading_of_another_shape_is_refused_naming_the_model():
    assert torch.equal(reading_values("b", torch.tensor([[-1.0], [2.0]]), True, "m"), torch.tensor([0, 1]))
    assert torch.equal(reading_values("c", torch.tensor([[1.0, 3.0]]), True, "m"), torch.tensor([1]))
    assert torch.equal(reading_values("v", torch.tensor([[0.5], [1.5]]), False, "m"), torch.tensor([0.5, 1.5]))
    with pytest.raises(ValueError, match=r"predictor 'm' gives a reading of 'v' of shape \(2, 1, 3\)"):
        reading_values("v", torch.zeros(2, 1, 3), False, "m")


def test_a_predictor_entry_that_names_no_or_an_undeclared_attribute_fails_the_load_check():
    store = ModuleStore(
        {"anonymous": TypeReader(), "colour": TypeReader(), "embedding": fixed_embedding()},
        colour={"attributes": ["size", "colour"]},
    )
    domain = _declared_domain(store, {"anticausal_predictors": ("anonymous", "colour"), "embedding": ("embedding",)})
    problems = domain.attribute_problems()
    assert any(
        "model 'anonymous' (anticausal_predictors): its store entry names no attribute it reads" in p for p in problems
    )
    assert any(
        "model 'colour' (anticausal_predictors) reads ['colour'], which the domain does not declare" in p
        for p in problems
    )
    with pytest.raises(ValueError, match="'anonymous' .* must name what it reads"):
        predictor_heads(ModelZoo(domain, "cpu"))


def test_two_predictors_of_one_attribute_are_refused():
    store = ModuleStore({"a": TypeReader(), "b": TypeReader()}, a={"attribute": "type"}, b={"attribute": "type"})
    domain = _declared_domain(store, {"anticausal_predictors": ("a", "b")})
    with pytest.raises(ValueError, match="'type' is read by two anti-causal predictors, 'a' and 'b'"):
        predictor_heads(ModelZoo(domain, "cpu"))


class _WithFeatures(nn.Module):
    """A predictor that also gives a hidden layer (``features``): the brightest pixel and the mean."""

    def features(self, x):
        return torch.stack([x.flatten(1).amax(1), x.flatten(1).mean(1)], 1)

    def forward(self, x):
        return self.features(x)[:, :1]


def test_the_composition_embedding_is_the_predictors_features_else_the_domain_embedding(shapes):
    domain, zoo, index = shapes
    images = domain.split("scored").take(index)
    torch.testing.assert_close(composition_embedding(zoo, images), fixed_embedding()(images).double())
    store = ModuleStore(
        {"p_size": _WithFeatures(), "p_brightness": _WithFeatures()},
        p_size={"attribute": "size"},
        p_brightness={"attribute": "brightness"},
    )
    featured = _declared_domain(store, {"anticausal_predictors": ("p_size", "p_brightness")})
    expected = torch.cat([_WithFeatures().features(images)] * 2, 1).double()  # parent order: brightness, size
    torch.testing.assert_close(composition_embedding(ModelZoo(featured, "cpu"), images), expected)
    bare = _declared_domain(ModuleStore({}), {})
    with pytest.raises(KeyError, match="declares no 'embedding' model"):
        composition_embedding(ModelZoo(bare, "cpu"), images)


def test_a_missing_role_names_the_role_and_what_needs_it():
    zoo = ModelZoo(_declared_domain(ModuleStore({}), {}), "cpu")
    assert "declares no anti-causal predictor of 'size' (role 'anticausal_predictors'" in predictor_missing(zoo, "size")
    assert "declares no 'embedding' model" in embedding_missing(zoo, "realism (FID and KID)")
    with pytest.raises(KeyError, match="declares no minimality VAE"):
        _ = zoo.minimality_vae
    assert "cannot measure 'size' on the image" in image_reading_missing(zoo.domain, zoo, "size")
    assert "declares no attribute oracle of 'type'" in image_reading_missing(zoo.domain, zoo, "type")


@pytest.mark.parametrize("factor", ["size", "type"])
def test_the_rendered_truth_is_effective_and_identity_is_not(shapes, factor):
    x, parents, intervention, targets, truth = _intervened(shapes, factor)
    zoo = shapes[1]
    kind, right = predictor_agreement(_result(shapes, factor, x, parents, intervention, targets, truth), zoo, factor)
    _, unchanged = predictor_agreement(_result(shapes, factor, x, parents, intervention, targets, x), zoo, factor)
    if kind == "accuracy":
        assert float(right.mean()) == 1.0 and float(unchanged.mean()) == 0.0  # every do() asks for another type
    else:
        assert float(right.mean()) < 0.1 < 0.5 < float(unchanged.mean())  # in standard deviations of the parent


@pytest.mark.parametrize("factor", ["size", "brightness", "type"])
def test_matched_real_images_share_the_counterfactuals_class_and_mostly_their_cells(shapes, factor):
    domain = shapes[0]
    targets = _intervened(shapes, factor)[3]
    matched = match_reference(domain, targets, "type", torch.Generator().manual_seed(0))
    pool = domain.parents("reference", torch.arange(len(domain.split("reference"))))
    assert len(set(matched.rows.tolist())) == len(matched.rows)  # each real image once
    assert torch.equal(pool["type"][matched.rows], matched.classes)  # the matched type is never crossed
    for k in range(3):
        n_k, p_k = int((targets["type"] == k).sum()), int((pool["type"] == k).sum())
        assert int((matched.classes == k).sum()) == n_k * min(COPIES, p_k // n_k)
    assert matched.exact > (0.3 if factor == "brightness" else 0.7), matched.exact  # do(brightness) leaves its size


def test_without_a_discrete_attribute_every_counterfactual_is_matched_in_one_class(shapes):
    folder = scm_shapes.build()
    table = {k: v for k, v in np.load(folder / "attributes.npz").items() if k != "type"}
    attributes = Attributes(
        [continuous("size", bins=5), continuous("brightness", bins=5)],
        graph={"brightness": ("size",)},
        table=table,
        mechanisms={"brightness": scm_shapes.BRIGHTNESS},
    )
    domain = ImageDomain(
        "continuous_only",
        ArraySource.from_file(folder / "images.npy"),
        root="unused",
        model_roles={},
        fractions=scm_shapes.FRACTIONS,
        attributes=attributes,
    )
    index = shapes[2]
    parents = domain.parents("scored", index)
    new = domain.sample_intervention("size", parents, torch.Generator().manual_seed(0))
    targets = domain.counterfactual_parents("scored", index, {"size": new})
    matched = match_reference(domain, targets, None, torch.Generator().manual_seed(0))
    assert torch.equal(matched.classes, torch.zeros(N * COPIES, dtype=torch.long))  # 1,100 real images: 13 each
    assert len(set(matched.rows.tolist())) == N * COPIES and matched.exact > 0.7


def test_a_reference_split_too_small_for_realism_says_what_to_change(shapes):
    domain = _declared_domain(
        ModuleStore({}),
        {},
        fractions={"train": 0.4, "oracle_train": 0.1, "selection": 0.1, "scored": 0.3, "reference": 0.1},
    )
    targets = domain.parents("scored", torch.arange(150))
    message = reference_shortfall(domain, targets, "type")
    assert "at least 7 per counterfactual" in message and "[tool.cfcheck.scm] n_inputs" in message
    with pytest.raises(ValueError, match="larger reference fraction"):
        match_reference(domain, targets, "type", torch.Generator().manual_seed(0))


def test_the_rendered_truth_sits_at_the_real_floor_and_a_wrong_type_does_not(shapes):
    x, parents, intervention, targets, truth = _intervened(shapes, "size")
    zoo = shapes[1]
    right = scm_realism(
        _result(shapes, "size", x, parents, intervention, targets, truth),
        zoo,
        fid,
        n_resamples=20,
        ci_method="bootstrap",
    )
    assert right.n == N and len(right.floors) == 5 and right.value <= right.floor_max, right
    claimed = dict(targets, type=(targets["type"] + 1) % 3)  # the images show another type than asked
    wrong = scm_realism(
        _result(shapes, "size", x, parents, intervention, claimed, truth),
        zoo,
        fid,
        n_resamples=20,
        ci_method="bootstrap",
    )
    assert wrong.value > 3 * wrong.floor_max, wrong


def test_cld_runs_on_a_reference_split_smaller_than_its_pool_and_identity_has_its_closed_form(shapes):
    x, parents, intervention, targets, truth = _intervened(shapes, "type")
    zoo = shapes[1]
    assert len(shapes[0].split("reference")) < 5000
    cld, p_counterfactual, p_factual = cld_scores(_result(shapes, "type", x, parents, intervention, targets, x), zoo)
    # identity: div = 0, so no real image is closer (P(S_x* <= 0) = 0) and all are farther (P(S_x >= 0) = 1)
    assert torch.equal(p_counterfactual, torch.zeros(N, dtype=torch.float64))
    assert torch.equal(p_factual, torch.ones(N, dtype=torch.float64))
    torch.testing.assert_close(cld, torch.full((N,), math.log(0.8 + 0.2 * math.e), dtype=torch.float64))
    moved = cld_scores(_result(shapes, "type", x, parents, intervention, targets, truth), zoo)[1]
    assert float(moved.mean()) > 0.0  # the true counterfactuals are farther than some real images


def test_a_model_store_entry_carries_what_a_predictor_reads(tmp_path):
    """The layout a user writes: ModelStore.add(..., attribute=...) or attributes=[...] for a multi-head model."""
    store = ModelStore(tmp_path, "shapes_variant")
    builder = "tests.own_domains.scm_shapes_nets"
    store.add("t", TypeReader(), builder=f"{builder}:type_reader", attribute="type")
    store.add(
        "c", SizeBrightnessReader(), builder=f"{builder}:size_brightness_reader", attributes=["size", "brightness"]
    )
    domain = _declared_domain(store, {"anticausal_predictors": ("t", "c")})
    assert domain.attribute_problems() == []
    assert set(predictor_heads(ModelZoo(domain, "cpu"))) == {"type", "size", "brightness"}
