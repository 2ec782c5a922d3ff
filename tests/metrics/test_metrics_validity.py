"""Validity metrics against plain-Python loops, scipy's JS divergence and constructed votes."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.distance import jensenshannon

from cfcheck.metrics.validity import (
    class_changes,
    committee_target_hits,
    js_divergence,
    label_variation,
    label_variation_toward,
    oracle_agreement,
    oracle_target_hits,
    original_hits,
    target_hits,
)

PAIRWISE = [
    (target_hits, lambda a, b: a == b),
    (original_hits, lambda a, b: a == b),
    (class_changes, lambda a, b: a != b),
    (oracle_agreement, lambda a, b: a == b),
    (oracle_target_hits, lambda a, b: a == b),
]


def _dirichlet(rng: np.random.Generator, n: int, k: int, sparsity: float = 0.0) -> torch.Tensor:
    probs = rng.dirichlet(np.ones(k), size=n)
    if sparsity:
        probs[rng.random((n, k)) < sparsity] = 0.0
        probs[:, 0] += probs.sum(axis=1) == 0  # keep every row a distribution
        probs /= probs.sum(axis=1, keepdims=True)
    return torch.from_numpy(probs).float()


@pytest.mark.parametrize(("metric", "rule"), PAIRWISE)
@settings(max_examples=40, deadline=None)
@given(pairs=st.lists(st.tuples(st.integers(0, 9), st.integers(0, 9)), min_size=0, max_size=40))
def test_indicators_match_python_loop(metric, rule, pairs) -> None:
    a = torch.tensor([p[0] for p in pairs], dtype=torch.int64)
    b = torch.tensor([p[1] for p in pairs], dtype=torch.int64)
    expected = [1.0 if rule(x, y) else 0.0 for x, y in pairs]
    result = metric(a, b, num_classes=10)
    assert result.dtype == torch.float32
    assert result.shape == (len(pairs),)
    assert result.tolist() == expected


def test_ta_oa_and_third_class_partition_the_inputs() -> None:
    target = torch.tensor([1, 1, 2, 2, 0])
    original = torch.tensor([0, 0, 0, 1, 1])
    cf = torch.tensor([1, 0, 3, 2, 1])
    ta, oa = target_hits(cf, target), original_hits(cf, original)
    assert ta.tolist() == [1, 0, 0, 1, 0]
    assert oa.tolist() == [0, 1, 0, 0, 1]
    assert float((1 - ta - oa).mean()) == pytest.approx(1 / 5)  # the one flip to class 3
    assert class_changes(cf, original).tolist() == [1, 0, 1, 1, 0]


@pytest.mark.parametrize(
    ("a", "b", "kwargs", "error", "match"),
    [
        (torch.tensor([0.0, 1.0]), torch.tensor([0, 1]), {}, TypeError, "int64"),
        (torch.tensor([0, 1], dtype=torch.int32), torch.tensor([0, 1]), {}, TypeError, "int64"),
        (torch.tensor([[0, 1]]), torch.tensor([0, 1]), {}, ValueError, "1-D"),
        (torch.tensor([0, 1, 2]), torch.tensor([0, 1]), {}, ValueError, "same length"),
        (torch.tensor([0, 10]), torch.tensor([0, 1]), {"num_classes": 10}, ValueError, "num_classes=10"),
        (torch.tensor([0, -1]), torch.tensor([0, 1]), {}, ValueError, "non-negative"),
        ([0, 1], torch.tensor([0, 1]), {}, TypeError, "torch.Tensor"),
        (torch.tensor([0, 1]), torch.tensor([0, 1]), {"num_classes": 0}, ValueError, "num_classes"),
    ],
)
def test_prediction_validation(a, b, kwargs, error, match) -> None:
    with pytest.raises(error, match=match):
        target_hits(a, b, **kwargs)


def test_one_fooled_member_cannot_decide_the_committee() -> None:
    target = torch.tensor([3, 3, 3, 3])
    members = [torch.tensor([3, 3, 3, 1]), torch.tensor([1, 3, 2, 1]), torch.tensor([1, 1, 3, 3])]
    # votes for the target: 1, 2, 2, 1 of 3 -> only a strict majority (2 of 3) counts
    assert committee_target_hits(members, target).tolist() == [0.0, 1.0, 1.0, 0.0]


def test_committee_ties_are_misses() -> None:
    target = torch.tensor([0, 0])
    members = [torch.tensor([0, 0]), torch.tensor([0, 0]), torch.tensor([1, 0]), torch.tensor([2, 1])]
    # 2 of 4 is a tie (miss); 3 of 4 is a majority
    assert committee_target_hits(members, target).tolist() == [0.0, 1.0]


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 6), st.integers(1, 30), st.integers(0, 2**31 - 1))
def test_committee_matches_a_counting_loop(m, n, seed) -> None:
    rng = np.random.default_rng(seed)
    preds = rng.integers(0, 4, size=(m, n))
    target = rng.integers(0, 4, size=n)
    expected = [1.0 if sum(preds[j, i] == target[i] for j in range(m)) * 2 > m else 0.0 for i in range(n)]
    result = committee_target_hits([torch.from_numpy(p) for p in preds], torch.from_numpy(target))
    assert result.tolist() == expected
    assert committee_target_hits(torch.from_numpy(preds), torch.from_numpy(target)).tolist() == expected


@pytest.mark.parametrize(
    ("members", "error", "match"),
    [
        ([], ValueError, "at least one"),
        ([torch.tensor([0, -1])], ValueError, "non-negative"),
        ([torch.tensor([0, 1]), torch.tensor([0])], ValueError, "length"),
        (torch.zeros(2, 2, 2, dtype=torch.int64), ValueError, "M×N"),
        ([torch.tensor([0.0, 1.0])], TypeError, "int64"),
    ],
)
def test_committee_validation(members, error, match) -> None:
    with pytest.raises(error, match=match):
        committee_target_hits(members, torch.tensor([0, 1]))


def test_js_matches_scipy_including_zeros() -> None:
    rng = np.random.default_rng(1)
    p = _dirichlet(rng, 64, 6, sparsity=0.4)
    q = _dirichlet(rng, 64, 6, sparsity=0.4)
    expected = [jensenshannon(a, b, base=2) ** 2 for a, b in zip(p.double().numpy(), q.double().numpy())]
    result = js_divergence(p, q)
    assert result.dtype == torch.float32
    np.testing.assert_allclose(result.numpy(), expected, atol=1e-6)


def test_js_known_values() -> None:
    disjoint = js_divergence(torch.tensor([[1.0, 0.0]]), torch.tensor([[0.0, 1.0]]))
    assert disjoint.item() == pytest.approx(1.0)
    half = js_divergence(torch.tensor([[1.0, 0.0]]), torch.tensor([[0.5, 0.5]]))
    # ½·log2(4/3) + ½·(½·log2(2/3) + ½·log2(2)) — worked by hand.
    expected = 0.5 * np.log2(4 / 3) + 0.25 * np.log2(2 / 3) + 0.25
    assert half.item() == pytest.approx(expected, abs=1e-6)


probability_rows = st.integers(2, 6).flatmap(
    lambda k: st.lists(
        st.lists(st.floats(0.0, 1.0, allow_nan=False), min_size=k, max_size=k).filter(lambda r: sum(r) > 1e-3),
        min_size=1,
        max_size=8,
    )
)


@settings(max_examples=60, deadline=None)
@given(rows=probability_rows, data=st.data())
def test_js_properties(rows, data) -> None:
    p = torch.tensor(rows, dtype=torch.float64)
    p = p / p.sum(dim=1, keepdim=True)
    q_rows = data.draw(
        st.lists(
            st.lists(st.floats(0.0, 1.0), min_size=p.shape[1], max_size=p.shape[1]).filter(lambda r: sum(r) > 1e-3),
            min_size=p.shape[0],
            max_size=p.shape[0],
        )
    )
    q = torch.tensor(q_rows, dtype=torch.float64)
    q = q / q.sum(dim=1, keepdim=True)
    forward, backward = js_divergence(p, q), js_divergence(q, p)
    torch.testing.assert_close(forward, backward, atol=1e-6, rtol=0)
    assert bool(((forward >= 0) & (forward <= 1)).all())
    assert js_divergence(p, p).abs().max().item() <= 1e-6


def test_label_variation_is_per_sample_js_and_validates() -> None:
    rng = np.random.default_rng(2)
    p, q = _dirichlet(rng, 10, 3), _dirichlet(rng, 10, 3)
    # against scipy (base 2: jensenshannon returns the square root of the divergence)
    expected = [jensenshannon(a, b, base=2) ** 2 for a, b in zip(p.double().numpy(), q.double().numpy())]
    np.testing.assert_allclose(label_variation(p, q).numpy(), expected, atol=1e-6)
    with pytest.raises(ValueError, match="oracle_probs_cf"):
        label_variation(p, q[:5])
    with pytest.raises(ValueError, match="sum to 1"):
        label_variation(p * 3, q)


def test_label_variation_toward_counts_the_change_only_where_the_oracle_reads_the_target() -> None:
    rng = np.random.default_rng(3)
    p, q = _dirichlet(rng, 40, 4), _dirichlet(rng, 40, 4)
    target = torch.from_numpy(rng.integers(0, 4, size=40)).long()
    got = label_variation_toward(p, q, target).numpy()
    # an independent loop: scipy's JS (base 2, squared) where the oracle's argmax is the target, else 0
    for i in range(40):
        reached = int(np.argmax(q[i].double().numpy())) == int(target[i])
        expected = jensenshannon(p[i].double().numpy(), q[i].double().numpy(), base=2) ** 2 if reached else 0.0
        assert got[i] == pytest.approx(expected, abs=1e-6), i
    # noise-like counterfactuals: the belief moves (LVS high) but to a class other than the target
    source = torch.eye(4)[torch.zeros(4, dtype=torch.long)]
    elsewhere = torch.eye(4)[torch.tensor([1, 2, 3, 1])]
    assert float(label_variation(source, elsewhere).min()) == pytest.approx(1.0)
    assert label_variation_toward(source, elsewhere, torch.tensor([2, 3, 1, 3])).tolist() == [0.0, 0.0, 0.0, 0.0]
    with pytest.raises(ValueError, match="num_classes=4"):
        label_variation_toward(p, q, torch.full((40,), 4))
    with pytest.raises(ValueError, match="same length"):
        label_variation_toward(p, q, target[:5])
    with pytest.raises(TypeError, match="int64"):
        label_variation_toward(p, q, target.float())


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 30), st.integers(2, 6), st.integers(0, 2**31 - 1))
def test_label_variation_toward_is_the_plain_lvs_or_zero(n, k, seed) -> None:
    rng = np.random.default_rng(seed)
    p, q = _dirichlet(rng, n, k), _dirichlet(rng, n, k)
    target = torch.from_numpy(rng.integers(0, k, size=n)).long()
    plain, toward = label_variation(p, q), label_variation_toward(p, q, target)
    reached = q.argmax(1) == target
    assert torch.equal(toward[~reached], torch.zeros(int((~reached).sum())))
    assert torch.equal(toward[reached], plain[reached])
