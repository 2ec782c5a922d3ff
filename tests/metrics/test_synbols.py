"""Bex et al.'s latent metrics: the flip categories and the greedy orthogonal/complementary set
on hand-built vectors whose answer is known, against an independent brute-force version, and
as properties (hypothesis)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from cfcheck.metrics.synbols import (
    CategoricalGroup,
    LatentLayout,
    category_rates,
    flip_categories,
    greedy_orthogonal_set,
    perturbation_features,
    proximal,
    synbols_scores,
)

CONTINUOUS_3 = LatentLayout((), (0, 3), continuous_radius=100.0)
ALL = torch.ones(1, 1, dtype=torch.bool)


def s_sharp(z_cf: list[list[float]], *, layout: LatentLayout = CONTINUOUS_3, **options) -> torch.Tensor:
    """The greedy set of one input at the origin whose counterfactuals are all candidates."""
    cf = torch.tensor([z_cf], dtype=torch.float64)
    z = torch.zeros(1, cf.shape[2], dtype=torch.float64)
    parts = perturbation_features(z, cf, layout)
    norm = (cf - z[:, None]).abs().sum(-1)
    return greedy_orthogonal_set(parts, norm, torch.ones(cf.shape[:2], dtype=torch.bool), **options)[0]


# -- the set on hand-built vectors ----------------------------------------------------------------


def test_orthogonal_vectors_are_all_kept():
    assert s_sharp([[1, 0, 0], [0, 2, 0], [0, 0, 0.5]]).tolist() == [True, True, True]


def test_an_unmoved_counterfactual_is_never_admitted():
    assert s_sharp([[0, 0, 0], [0, 0, 0], [1, 0, 0]]).tolist() == [False, False, True]


def test_a_duplicate_direction_is_rejected_and_the_most_proximal_one_kept():
    assert s_sharp([[2, 0, 0], [0.5, 0, 0]]).tolist() == [False, True]
    assert s_sharp([[1, 0, 0], [1, 0, 0], [0, 1, 0]]).tolist() == [True, False, True]
    # nearly the same direction (cos 0.995) is a duplicate too
    assert s_sharp([[1, 0, 0], [1, 0.1, 0]]).tolist() == [True, False]


def test_complementary_pairs_are_kept_and_a_repeated_complement_only_by_the_listing_rule():
    assert s_sharp([[1, 0, 0], [-1, 0, 0]]).tolist() == [True, True]
    assert s_sharp([[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0]]).sum() == 4
    repeated = [[1, 0, 0], [-1.5, 0, 0], [-2, 0, 0]]
    assert s_sharp(repeated).tolist() == [True, True, False]
    # Algorithm 1's listing: orthogonal to all, or complementary to ANY member
    assert s_sharp(repeated, admission="algorithm1").tolist() == [True, True, True]


def test_tau_is_a_strict_bound_for_orthogonality_and_complementarity():
    # cos((1, 0), (3, 4)) = 0.6 exactly; cos((1, 0), (-3, 4)) = -0.6
    assert s_sharp([[1, 0, 0], [3, 4, 0]], tau=0.6).tolist() == [True, False]
    assert s_sharp([[1, 0, 0], [3, 4, 0]], tau=0.61).tolist() == [True, True]
    assert s_sharp([[1, 0, 0], [-3, 4, 0]], tau=0.4).tolist() == [True, False]  # cos + 1 = 0.4, not < 0.4
    assert s_sharp([[1, 0, 0], [-3, 4, 0]], tau=0.41).tolist() == [True, True]
    # the default τ = 0.15: cos 0.14 is orthogonal, 0.16 is not
    for cos, kept in ((0.14, True), (0.16, False)):
        other = [cos, math.sqrt(1 - cos**2), 0]
        assert s_sharp([[1, 0, 0], other]).tolist() == [True, kept]


def _layout_with_one_category(radius: float = 100.0) -> LatentLayout:
    table = torch.tensor([[0.0, 0.0], [3.0, 0.0], [0.0, 3.0]], dtype=torch.float64)
    return LatentLayout([CategoricalGroup("shape", (0, 2), table, radius)], (2, 4), continuous_radius=100.0)


def test_categorical_moves_to_different_categories_are_orthogonal_to_the_same_one_not():
    layout = _layout_with_one_category()
    # the input sits on category 0; two counterfactuals move to categories 1 and 2
    assert s_sharp([[3, 0, 0, 0], [0, 3, 0, 0]], layout=layout).tolist() == [True, True]
    assert s_sharp([[3, 0, 0, 0], [3.1, 0, 0, 0]], layout=layout).tolist() == [True, False]
    features = perturbation_features(torch.zeros(1, 4), torch.tensor([[[3.0, 0, 0, 0]]]), layout)
    assert features[0][0, 0, 0] == 0.0  # the input's own category is zeroed (Eq. 13)
    assert float(features[0][0, 0, 1]) > 0.99  # the softmax sits on the new category


def test_summed_cosines_never_see_moves_of_different_continuous_attributes_as_orthogonal():
    layout = _layout_with_one_category()
    moves = [[0, 0, 1, 0], [0, 0, 0, 1]]  # the category is unchanged in both
    assert s_sharp(moves, layout=layout).tolist() == [True, True]
    assert s_sharp(moves, layout=layout, cosine="summed").tolist() == [True, False]


# -- categories and rates -------------------------------------------------------------------------


def test_flip_categories_by_construction():
    prediction, causal = torch.tensor([0, 1]), torch.tensor([1, 1])
    prediction_cf = torch.tensor([[1, 1, 0, 0, 1], [1, 0, 1, 0, 0]])
    causal_cf = torch.tensor([[1, 0, 0, 1, 1], [1, 0, 0, 1, 1]])
    near = torch.tensor([[True, True, True, True, False], [True, True, True, True, True]])
    c = flip_categories(prediction, prediction_cf, causal, causal_cf, near)
    assert c.ef.tolist() == [[True, True, False, False, False], [False, True, False, True, True]]
    assert c.ncf.tolist() == [[True, False, False, False, False], [False, False, False, True, True]]
    assert c.cf.tolist() == [[False, False, True, False, False], [False, False, True, False, False]]
    assert c.trivial.tolist() == [[False, True, False, False, False], [False, True, False, False, False]]
    assert torch.equal(c.sce, c.ncf | c.cf)
    rates = category_rates(c)
    assert rates["ef"].tolist() == [0.4, 0.6] and rates["sce"].tolist() == [0.4, 0.6]
    # an abstention is in no category and still counts in the denominator
    valid = torch.ones(2, 5, dtype=torch.bool)
    valid[0, 0] = False
    abstained = flip_categories(prediction, prediction_cf, causal, causal_cf, near, valid)
    assert not abstained.ef[0, 0] and category_rates(abstained)["ncf"].tolist() == [0.0, 0.4]


def test_proximity_uses_one_l1_radius_per_group():
    layout = _layout_with_one_category(radius=3.0)
    layout = LatentLayout(layout.categorical, (2, 4), continuous_radius=1.0)
    z = torch.zeros(1, 4)
    cf = torch.tensor([[[3.0, 0, 0.5, 0.5], [2.0, 1.5, 0, 0], [0, 0, 0.6, 0.5], [0, 0, 0, 0]]])
    assert proximal(z, cf, layout).tolist() == [[True, False, False, True]]


# -- an independent brute-force version ------------------------------------------------------------


def _brute_force(
    z, z_cf, tables, radii, continuous, prediction, prediction_cf, causal, causal_cf, tau, t, cosine, admission
):
    """S# per input with plain Python loops over numpy rows (no shared code)."""
    results = []
    for n in range(len(z)):
        features, norms, candidates = [], [], []
        for k in range(len(z_cf[n])):
            move = z_cf[n][k] - z[n]
            inside = True
            parts = []
            for (start, stop), table, radius in zip([(0, 2), (2, 4)], tables, radii):
                inside &= float(np.sum(np.abs(move[start:stop]))) <= radius
                own = int(np.argmin([np.linalg.norm(z[n][start:stop] - w) for w in table]))
                logits = [-np.linalg.norm(z_cf[n][k][start:stop] - w) / t for w in table]
                weights = np.exp(np.array(logits) - max(logits))
                weights = weights / weights.sum()
                weights[own] = 0.0
                parts.append(weights)
            inside &= float(np.sum(np.abs(move[4:]))) <= continuous
            parts.append(move[4:])
            flips, causal_flips = prediction_cf[n][k] != prediction[n], causal_cf[n][k] != causal[n]
            candidates.append(inside and (flips != causal_flips))
            features.append(parts)
            norms.append(float(np.sum(np.abs(move))))

        def cos(a, b):
            na, nb = np.linalg.norm(a), np.linalg.norm(b)
            return 0.0 if na == 0 or nb == 0 else float(np.dot(a, b) / (na * nb))

        def similarity(i, j):
            if cosine == "summed":
                return sum(cos(a, b) for a, b in zip(features[i], features[j]))
            return cos(np.concatenate(features[i]), np.concatenate(features[j]))

        members = []
        for k in sorted(range(len(norms)), key=lambda i: norms[i]):
            if not candidates[k] or not np.any(np.concatenate(features[k])):
                continue
            sims = [similarity(k, m) for m in members]
            if admission == "each_member":
                ok = all(abs(s) < tau or s + 1 < tau for s in sims)
            else:
                ok = all(abs(s) < tau for s in sims) or any(s + 1 < tau for s in sims)
            if ok:
                members.append(k)
        results.append(len(members))
    return results


@pytest.mark.parametrize("cosine", ["concatenated", "summed"])
@pytest.mark.parametrize("admission", ["each_member", "algorithm1"])
@pytest.mark.parametrize("seed", range(6))
def test_matches_a_brute_force_implementation(seed, cosine, admission):
    rng = np.random.default_rng(seed)
    tables = [rng.normal(size=(6, 2)), rng.normal(size=(4, 2))]
    radii = [float(np.abs(t[:, None] - t[None]).sum(-1).max()) for t in tables]
    n, k = 8, 10
    z = rng.normal(size=(n, 7))
    z_cf = z[:, None, :] + rng.normal(scale=0.4, size=(n, k, 7)) * (rng.random(size=(n, k, 7)) < 0.4)
    prediction, causal = rng.integers(0, 2, n), rng.integers(0, 2, n)
    prediction_cf, causal_cf = rng.integers(0, 2, (n, k)), rng.integers(0, 2, (n, k))
    tau = float(rng.choice([0.15, 0.3, 0.6]))
    expected = _brute_force(
        z, z_cf, tables, radii, 1.0, prediction, prediction_cf, causal, causal_cf, tau, 0.33, cosine, admission
    )
    groups = [
        CategoricalGroup(name, span, torch.tensor(t), r)
        for name, span, t, r in zip(("a", "b"), [(0, 2), (2, 4)], tables, radii)
    ]
    layout = LatentLayout(groups, (4, 7), continuous_radius=1.0)
    as_long = lambda a: torch.tensor(a, dtype=torch.int64)  # noqa: E731
    scores = synbols_scores(
        torch.tensor(z),
        torch.tensor(z_cf),
        layout,
        as_long(prediction),
        as_long(prediction_cf),
        as_long(causal),
        as_long(causal_cf),
        tau=tau,
        cosine=cosine,
        admission=admission,
    )
    assert scores.s_sharp.tolist() == expected
    assert sum(expected) > n // 2, "the random cases exercise the set"


# -- properties ---------------------------------------------------------------------------------


@st.composite
def cases(draw):
    n, k, d = draw(st.integers(1, 3)), draw(st.integers(1, 6)), draw(st.integers(1, 4))
    values = st.floats(-2.0, 2.0, allow_nan=False, width=64)
    z = torch.tensor(draw(st.lists(values, min_size=n * d, max_size=n * d)), dtype=torch.float64).reshape(n, d)
    moves = draw(st.lists(st.sampled_from([0.0, 0.25, -0.5, 1.0]), min_size=n * k * d, max_size=n * k * d))
    z_cf = z[:, None, :] + torch.tensor(moves, dtype=torch.float64).reshape(n, k, d)

    def labels(shape):
        return torch.tensor(
            draw(
                st.lists(
                    st.integers(0, 1),
                    min_size=math.prod(shape),  # noqa: E731
                    max_size=math.prod(shape),
                )
            )
        ).reshape(shape)

    return z, z_cf, labels((n,)), labels((n, k)), labels((n,)), labels((n, k))


@settings(max_examples=150, deadline=None)
@given(cases(), st.sampled_from(["each_member", "algorithm1"]))
def test_the_set_is_a_subset_of_the_sces_and_nonempty_when_they_are(case, admission):
    z, z_cf, prediction, prediction_cf, causal, causal_cf = case
    layout = LatentLayout((), (0, z.shape[1]), continuous_radius=2.0)
    scores = synbols_scores(z, z_cf, layout, prediction, prediction_cf, causal, causal_cf, admission=admission)
    sce = scores.categories.sce
    assert not bool((scores.orthogonal_set & ~sce).any())
    assert torch.equal(scores.s_sharp, scores.orthogonal_set.sum(1))
    assert bool((scores.s_sharp <= sce.sum(1)).all())
    moved = (z_cf != z[:, None]).any(-1)
    assert torch.equal(scores.s_sharp > 0, (sce & moved).any(1))  # an unmoved "counterfactual" never counts
    c = scores.categories
    assert not bool((c.ncf & c.cf).any()) and torch.equal(c.ncf | c.trivial, c.ef)
    assert not bool((c.ncf & c.trivial).any())


@settings(max_examples=150, deadline=None)
@given(cases(), st.randoms(use_true_random=False))
def test_members_are_pairwise_orthogonal_or_complementary_and_order_does_not_matter(case, random):
    z, z_cf, prediction, prediction_cf, causal, causal_cf = case
    layout = LatentLayout((), (0, z.shape[1]), continuous_radius=2.0)
    scores = synbols_scores(z, z_cf, layout, prediction, prediction_cf, causal, causal_cf)
    moves = z_cf - z[:, None]
    for n in range(len(z)):
        members = moves[n][scores.orthogonal_set[n]]
        unit = members / members.norm(dim=1, keepdim=True)
        cos = unit @ unit.T
        off = ~torch.eye(len(members), dtype=torch.bool)
        assert bool(((cos.abs() < 0.15) | (cos + 1 < 0.15) | ~off).all())
    # permuting the K counterfactuals changes nothing when their L1 norms are distinct (the sort key)
    norms = moves.abs().sum(-1)
    assume(all(len(set(row.tolist())) == len(row) for row in norms))
    perm = list(range(z_cf.shape[1]))
    random.shuffle(perm)
    shuffled = synbols_scores(z, z_cf[:, perm], layout, prediction, prediction_cf[:, perm], causal, causal_cf[:, perm])
    assert torch.equal(shuffled.s_sharp, scores.s_sharp)
    assert torch.equal(shuffled.orthogonal_set, scores.orthogonal_set[:, perm])


# -- validation ---------------------------------------------------------------------------------


def test_arguments_are_validated_with_clear_errors():
    z, cf = torch.zeros(2, 3), torch.zeros(2, 4, 3)
    labels, labels_cf = torch.zeros(2, dtype=torch.int64), torch.zeros(2, 4, dtype=torch.int64)
    with pytest.raises(ValueError, match=r"`z` must be N×3 and `z_cf` N×K×3"):
        synbols_scores(z, torch.zeros(2, 4, 2), CONTINUOUS_3, labels, labels_cf, labels, labels_cf)
    with pytest.raises(ValueError, match="`z_cf` must be 3-D"):
        proximal(z, torch.zeros(2, 3), CONTINUOUS_3)
    with pytest.raises(TypeError, match="`layout` must be a LatentLayout"):
        proximal(z, cf, {"continuous": (0, 3)})
    with pytest.raises(ValueError, match=r"`prediction_cf` must be int64 labels of shape \(2, 4\)"):
        synbols_scores(z, cf, CONTINUOUS_3, labels, labels_cf.float(), labels, labels_cf)
    with pytest.raises(ValueError, match="`tau` must be in"):
        synbols_scores(z, cf, CONTINUOUS_3, labels, labels_cf, labels, labels_cf, tau=0.0)
    with pytest.raises(ValueError, match="`cosine` must be"):
        synbols_scores(z, cf, CONTINUOUS_3, labels, labels_cf, labels, labels_cf, cosine="mean")
    with pytest.raises(ValueError, match="`admission` must be"):
        synbols_scores(z, cf, CONTINUOUS_3, labels, labels_cf, labels, labels_cf, admission="any")
    with pytest.raises(ValueError, match="`valid` must be a bool mask"):
        flip_categories(labels, labels_cf, labels, labels_cf, torch.ones(2, 4, dtype=torch.bool), torch.ones(2, 4))
    with pytest.raises(ValueError, match="cover 0..D−1"):
        LatentLayout((), (1, 3))
    table = torch.zeros(3, 2)
    with pytest.raises(ValueError, match="disjoint"):
        LatentLayout([CategoricalGroup("a", (0, 2), table, 1.0)], (1, 3))
    with pytest.raises(ValueError, match="M ≥ 2 categories"):
        CategoricalGroup("a", (0, 2), torch.zeros(3, 3), 1.0)
    with pytest.raises(ValueError, match="`temperature` must be > 0"):
        LatentLayout((), (0, 3), temperature=0.0)
    with pytest.raises(ValueError, match="finite"):
        proximal(torch.full((2, 3), float("nan")), cf, CONTINUOUS_3)
