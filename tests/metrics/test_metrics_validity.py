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
    committee_vote,
    js_divergence,
    label_variation,
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


def test_committee_soft_vote_differs_from_majority_vote() -> None:
    confident = torch.tensor([[0.90, 0.05, 0.05]])
    unsure = torch.tensor([[0.30, 0.40, 0.30]])
    # Hard majority would pick class 1 (two votes); the mean probability favours class 0.
    assert committee_vote([confident, unsure, unsure]).tolist() == [0]


def test_committee_resolves_a_three_way_hard_tie() -> None:
    members = [
        torch.tensor([[0.50, 0.30, 0.20]]),
        torch.tensor([[0.10, 0.60, 0.30]]),
        torch.tensor([[0.05, 0.25, 0.70]]),
    ]
    # Each member votes differently (1-1-1); means are 0.217, 0.383, 0.4 → class 2.
    assert committee_vote(members).tolist() == [2]


def test_committee_matches_numpy_mean_argmax_and_accepts_stacked_tensor() -> None:
    rng = np.random.default_rng(0)
    members = [_dirichlet(rng, 50, 10) for _ in range(4)]
    expected = np.stack([m.numpy() for m in members]).astype(np.float64).mean(axis=0).argmax(axis=1)
    result = committee_vote(members)
    assert result.dtype == torch.int64
    assert result.tolist() == expected.tolist()
    assert committee_vote(torch.stack(members)).tolist() == expected.tolist()
    assert committee_vote(members[:1]).tolist() == members[0].argmax(dim=1).tolist()


@pytest.mark.parametrize(
    ("members", "error", "match"),
    [
        ([], ValueError, "at least one"),
        ([torch.tensor([[2.0, -1.0]])], ValueError, "non-negative"),
        ([torch.tensor([[2.0, 1.0]])], ValueError, "sum to 1"),
        ([torch.ones(2, 2) / 2, torch.ones(3, 2) / 2], ValueError, "same shape"),
        ([torch.ones(2) / 2], ValueError, "2-D"),
        (torch.ones(2, 2) / 2, ValueError, "M×N×K"),
        ("probs", TypeError, "sequence"),
    ],
)
def test_committee_validation(members, error, match) -> None:
    with pytest.raises(error, match=match):
        committee_vote(members)


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
    torch.testing.assert_close(label_variation(p, q), js_divergence(p, q))
    with pytest.raises(ValueError, match="oracle_probs_cf"):
        label_variation(p, q[:5])
    with pytest.raises(ValueError, match="sum to 1"):
        label_variation(p * 3, q)
