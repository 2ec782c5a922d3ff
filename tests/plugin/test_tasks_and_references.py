"""Task construction (ideal pairs, input selection) and realism references, by construction."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from cfcheck.kinds.vce.tasks import ideal_targets, select_inputs
from cfcheck.metrics.realism import fid
from cfcheck.metrics.reference_sets import draw_reference, pool_suffices, score_realism


def test_ideal_targets_pick_the_most_confused_other_class():
    labels = torch.tensor([0, 0, 1, 1, 2, 2])
    probs = torch.tensor(
        [
            [0.7, 0.1, 0.2],
            [0.6, 0.1, 0.3],  # class 0 confused with 2
            [0.1, 0.5, 0.4],
            [0.3, 0.6, 0.1],  # class 1: means 0.2 / 0.25 -> 2
            [0.5, 0.1, 0.4],
            [0.1, 0.1, 0.8],  # class 2: means 0.3 / 0.1 -> 0
        ]
    )
    assert ideal_targets(probs, labels, 3) == {0: 2, 1: 2, 2: 0}
    with pytest.raises(ValueError, match="no images of class 2"):
        ideal_targets(probs[:4], labels[:4], 3)
    with pytest.raises(ValueError, match="N×4"):
        ideal_targets(probs, labels, 4)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 50), st.integers(1, 5), st.sampled_from(["ideal", "other"]))
def test_select_inputs_by_construction(seed, n_per_source, pair_set):
    gen = torch.Generator().manual_seed(123)
    labels = torch.randint(4, (80,), generator=gen)
    labels[:20] = torch.arange(4).repeat(5)  # every class has at least 5 images
    images = torch.rand(80, 1, 4, 4, generator=gen)
    ideal = {0: 1, 1: 0, 2: 3, 3: 2}
    inputs = select_inputs(
        images, labels, pair_set=pair_set, seed=seed, n_per_source=n_per_source, ideal=ideal, num_classes=4
    )
    assert len(inputs) == 4 * n_per_source
    assert torch.equal(inputs.x, images[inputs.index])
    assert torch.equal(inputs.source, labels[inputs.index])
    assert len(set(inputs.index.tolist())) == len(inputs)  # no image twice
    assert torch.bincount(inputs.source, minlength=4).tolist() == [n_per_source] * 4
    for source, target in zip(inputs.source.tolist(), inputs.target.tolist()):
        if pair_set == "ideal":
            assert target == ideal[source]
        else:
            assert target not in (source, ideal[source])
    again = select_inputs(
        images, labels, pair_set=pair_set, seed=seed, n_per_source=n_per_source, ideal=ideal, num_classes=4
    )
    assert torch.equal(again.index, inputs.index) and torch.equal(again.target, inputs.target)


def test_select_inputs_errors():
    labels = torch.tensor([0, 0, 1])
    with pytest.raises(ValueError, match="only 1 images of class 1"):
        select_inputs(
            torch.rand(3, 1, 2, 2), labels, pair_set="ideal", seed=0, n_per_source=2, ideal={0: 1, 1: 0}, num_classes=2
        )


def test_reference_draws_are_class_matched_disjoint_and_without_replacement():
    labels = torch.arange(3).repeat_interleave(100)
    counts = {0: 5, 2: 10}
    draw = draw_reference(
        labels, counts, generator=torch.Generator().manual_seed(0), reference_per_sample=8, floor_draws=4
    )
    assert set(draw.reference) == {0, 2}
    for cls, n_k in counts.items():
        sets = [draw.reference[cls], *(floor[cls] for floor in draw.floors)]
        assert len(draw.reference[cls]) == min(8 * n_k, 100 - 4 * n_k)
        assert all(len(f[cls]) == n_k for f in draw.floors)
        everything = torch.cat(sets)
        assert len(set(everything.tolist())) == len(everything)  # disjoint, no repeats
        assert bool((labels[everything] == cls).all())
    # 17 counterfactuals need 4 floors of 17 plus a reference of 34: 102 > the 100 images of class 1
    with pytest.raises(ValueError, match="100 images of class 1; 17 counterfactuals .* at least 102"):
        draw_reference(labels, {1: 17}, generator=torch.Generator(), floor_draws=4, reference_per_sample=8)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(0, 3), min_size=1, max_size=60),
    st.lists(st.integers(0, 3), min_size=1, max_size=12),
    st.integers(1, 5),
)
def test_pool_suffices_exactly_when_a_reference_and_floors_can_be_drawn(pool, wanted, floor_draws):
    pool_labels, classes = torch.tensor(pool), torch.tensor(wanted)
    counts = {int(c): int((classes == c).sum()) for c in classes.unique()}
    # by hand: floor_draws disjoint floor sets of n_k and a reference of >= 2 n_k, so (floor_draws + 2) n_k images
    enough = all(int((pool_labels == c).sum()) >= (floor_draws + 2) * n for c, n in counts.items())
    assert pool_suffices(pool_labels, classes, floor_draws) == enough
    try:
        draw_reference(pool_labels, counts, generator=torch.Generator().manual_seed(0), floor_draws=floor_draws)
        drawn = True
    except ValueError:
        drawn = False
    assert drawn == enough


def test_a_class_the_reference_split_cannot_serve_is_scored_against_the_extra_split():
    """The full profile's ideal pairs send 300 inputs (three source digits) to digit 5; the
    reference split holds 1,963 fives, fewer than the 2,100 a reference and five floors need.
    The pool then gains the reference_extra split, and the true counterfactuals pass."""
    pytest.importorskip("safetensors")
    from cfcheck.domains import get_domain
    from cfcheck.models.zoo import ModelZoo

    zoo, domain = ModelZoo(get_domain("morpho"), torch.device("cpu")), get_domain("morpho")
    base_features, base_labels = zoo.realism_pool
    assert int((base_labels == 5).sum()) == 1963
    small = torch.full((100,), 5)
    assert zoo.realism_pool_for(small) is zoo.realism_pool
    large = torch.full((300,), 5)
    features, labels = zoo.realism_pool_for(large)
    extra = domain.split("reference_extra")
    assert len(labels) == len(base_labels) + len(extra) == 40_000
    assert torch.equal(features[: len(base_labels)], base_features)  # the reference split first, unchanged
    assert torch.equal(labels[len(base_labels) :], extra.labels)
    with pytest.raises(ValueError, match="1963 images of class 5; 300 counterfactuals"):
        score_realism(
            fid,
            base_features,
            base_labels,
            base_features[:300],
            large,
            conditional=True,
            generator=torch.Generator().manual_seed(1),
            n_resamples=10,
            seed=0,
        )
    inputs = domain.split("test")
    sources = torch.nonzero(inputs.labels != 5).flatten()[:300]
    truth = domain.class_counterfactual(inputs.factors[sources], large)
    score = score_realism(
        fid,
        features,
        labels,
        zoo.embed(truth),
        large,
        conditional=True,
        generator=torch.Generator().manual_seed(1),
        n_resamples=20,
        seed=0,
    )
    assert score.n == 300 and score.value <= 2 * score.floor_max  # the fid_target bar


def _gaussian_pool(per_class: int, classes: int, dim: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    labels = torch.arange(classes).repeat_interleave(per_class)
    means = torch.eye(classes, dim) * 4.0  # well separated classes
    return means[labels] + torch.randn(len(labels), dim, generator=gen, dtype=torch.float64), labels


def test_class_conditional_score_sees_wrong_classes_the_class_matched_one_does_not():
    pool, pool_labels = _gaussian_pool(600, 4, 6, seed=0)
    fakes, fake_labels = _gaussian_pool(30, 4, 6, seed=1)
    shuffled = (fake_labels + 1) % 4  # right images, labelled with the wrong target class
    kwargs = dict(n_resamples=20, seed=0)

    def score(labels, conditional):
        return score_realism(
            fid,
            pool,
            pool_labels,
            fakes,
            labels,
            conditional=conditional,
            generator=torch.Generator().manual_seed(3),
            **kwargs,
        )

    right, wrong = score(fake_labels, True), score(shuffled, True)
    assert right.value <= 1.5 * right.floor_max  # real images of the right classes sit at the floor
    assert wrong.value > 5 * wrong.floor_max  # each class compared with another class's images
    # the class mix is the same (uniform), so the class-matched domain score cannot tell
    domain = score(shuffled, False)
    assert domain.value <= 1.5 * domain.floor_max
    assert len(right.floors) == 5 and right.n == 120 and right.classes_skipped == []


def test_class_conditional_score_skips_singleton_classes():
    pool, pool_labels = _gaussian_pool(200, 3, 4, seed=2)
    fakes = pool[:5]
    labels = torch.tensor([0, 0, 0, 1, 2])
    result = score_realism(
        fid,
        pool,
        pool_labels,
        fakes,
        labels,
        conditional=True,
        generator=torch.Generator().manual_seed(0),
        n_resamples=10,
        seed=0,
    )
    assert result.classes_skipped == [1, 2] and result.n == 3


def test_embedding_features_are_standardised_with_validation_statistics():
    pytest.importorskip("safetensors")
    from cfcheck.domains import get_domain
    from cfcheck.models.zoo import ModelZoo

    zoo = ModelZoo(get_domain("morpho"), torch.device("cpu"))
    domain = get_domain("morpho")
    val = zoo.features(domain.split("val").images).numpy()
    test_images = domain.split("test", n=64).images
    raw = zoo.features(test_images).numpy()
    expected = (raw - val.mean(axis=0)) / val.std(axis=0, ddof=1)

    got = zoo.embed(test_images).numpy()
    assert abs(got - expected).max() < 1e-6


def test_split_logits_are_the_models_outputs_and_come_back_from_disk(tmp_path, monkeypatch):
    from cfcheck.domains import get_domain
    from cfcheck.models.zoo import ModelZoo

    monkeypatch.setenv("CFCHECK_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("CFCHECK_NO_DERIVED_CACHE", raising=False)
    zoo = ModelZoo(get_domain("morpho"), torch.device("cpu"))
    first = zoo.split_logits("oracle_lenet", "val")
    assert torch.equal(first, zoo.logits("oracle_lenet", get_domain("morpho").split("val").images))

    def no_forward_passes(*args, **kwargs):
        raise AssertionError("the second call must read the stored outputs")

    other = ModelZoo(get_domain("morpho"), torch.device("cpu"))
    monkeypatch.setattr(other, "logits", no_forward_passes)
    assert torch.equal(other.split_logits("oracle_lenet", "val"), first)


@pytest.mark.parametrize("profile", ["quick", "standard", "full"])
def test_every_bundled_profile_s_tasks_get_realism_references(profile):
    """No task of a bundled profile may leave realism uncomputable for want of real images:
    the pool a task gets holds a reference and five floor sets for each of its target classes."""
    pytest.importorskip("safetensors")
    from cfcheck.domains import get_domain
    from cfcheck.kinds.vce.section import PAIR_SETS, SECTION_DEFAULTS
    from cfcheck.kinds.vce.spec import committee_ideal_targets
    from cfcheck.models.zoo import ModelZoo

    zoo, domain = ModelZoo(get_domain("morpho"), torch.device("cpu")), get_domain("morpho")
    scored = domain.split(domain.split_roles["scored"])
    ideal = committee_ideal_targets(zoo, domain)
    short = []
    for pair_set in PAIR_SETS:
        for seed in range(3):
            inputs = select_inputs(
                scored.images,
                scored.labels,
                pair_set=pair_set,
                seed=seed,
                n_per_source=SECTION_DEFAULTS[profile].n_per_source,
                ideal=ideal,
                num_classes=domain.num_classes,
            )
            assert pool_suffices(zoo.realism_pool_for(inputs.target)[1], inputs.target)
            if not pool_suffices(zoo.realism_pool[1], inputs.target):
                short.append((pair_set, seed))
    # only the full profile's ideal pairs outgrow the reference split (three digits map to 5)
    assert short == ([("ideal", s) for s in range(3)] if profile == "full" else [])
