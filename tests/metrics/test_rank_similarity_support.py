"""Rank similarity of saliency maps on their non-zero support (the attribution randomisation
suite's ``_support`` scores), against scipy's Spearman on the masked entries."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.stats import spearmanr

from cfcheck.metrics.sanity import rank_similarity, same_ranking


def _scipy_on_support(first: torch.Tensor, second: torch.Tensor) -> list[float]:
    """Independent reference: per sample, Spearman of |first| and |second| on the entries where
    either is non-zero (NaN below two entries or for a constant side)."""
    expected = []
    for a, b in zip(first.abs().flatten(1).double().numpy(), second.abs().flatten(1).double().numpy()):
        kept = (a != 0) | (b != 0)
        if kept.sum() < 2 or np.ptp(a[kept]) == 0 or np.ptp(b[kept]) == 0:
            expected.append(math.nan)
        else:
            expected.append(spearmanr(a[kept], b[kept])[0])
    return expected


def test_support_variant_matches_scipy_on_the_masked_entries() -> None:
    gen = torch.Generator().manual_seed(0)
    first = torch.randn(6, 1, 8, 8, generator=gen)
    second = torch.randn(6, 1, 8, 8, generator=gen) + 0.5 * first
    # a shared background of exact zeros (as x·∂f/∂x where x = 0), and zeros of one map only
    background = torch.rand(6, 1, 8, 8, generator=gen) < 0.7
    first[background] = 0.0
    second[background] = 0.0
    second[:, :, :2] = 0.0
    first[:, :, -1:] = first[:, :, -1:].round()  # ties inside the support
    result = rank_similarity(first, second, support="nonzero")
    assert result.dtype == torch.float32 and result.shape == (6,)
    np.testing.assert_allclose(result.numpy(), _scipy_on_support(first, second), rtol=1e-5, atol=1e-6)
    # the plain variant correlates every entry, shared zeros included
    plain = [spearmanr(a, b)[0] for a, b in zip(first.abs().flatten(1).double(), second.abs().flatten(1).double())]
    np.testing.assert_allclose(rank_similarity(first, second).numpy(), plain, rtol=1e-5)
    assert bool((rank_similarity(first, second) > result).all())  # the shared zeros pull it towards 1


def test_support_variant_equals_the_plain_one_without_zeros() -> None:
    gen = torch.Generator().manual_seed(1)
    first, second = torch.rand(4, 3, 5, 5, generator=gen) + 0.1, -torch.rand(4, 3, 5, 5, generator=gen) - 0.1
    torch.testing.assert_close(rank_similarity(first, second, support="nonzero"), rank_similarity(first, second))


def test_undefined_cases_are_nan_and_same_ranking_decides_them() -> None:
    first = torch.tensor(
        [
            [0.0, 0.0, 0.0, 0.0],  # both zero: empty support
            [0.0, 2.0, 0.0, 0.0],  # one shared non-zero element
            [0.0, 2.0, 0.0, 0.0],  # one element, non-zero in the first map only
            [1.0, 1.0, 1.0, 0.0],  # constant on the support {0, 1, 2}, where the second varies
            [1.0, 2.0, 3.0, 0.0],  # defined
        ]
    )
    second = torch.tensor(
        [
            [0.0, 0.0, 0.0, 0.0],
            [0.0, -5.0, 0.0, 0.0],
            [0.0, 0.0, 0.0, 0.0],
            [1.0, 2.0, 3.0, 0.0],
            [3.0, 2.0, 1.0, 0.0],
        ]
    )
    result = rank_similarity(first, second, support="nonzero")
    assert torch.isnan(result[:4]).all() and result[4].item() == pytest.approx(-1.0)
    np.testing.assert_allclose(result.numpy(), _scipy_on_support(first, second), equal_nan=True)
    # identical rankings (both zero; the same single element) score 1 in the suite, others 0
    assert same_ranking(first, second).tolist() == [True, True, False, False, False]
    # the plain variant is defined wherever neither whole map is constant
    assert torch.isnan(rank_similarity(first, second)).tolist() == [True, False, True, False, False]


@settings(max_examples=150, deadline=None)
@given(
    arrays(
        np.float64,
        st.tuples(st.integers(1, 3), st.integers(2, 10)),
        elements=st.sampled_from([0.0, 0.25, -1.0, 2.0, 3.5, -7.0]),
    ),
    arrays(
        np.float64,
        st.tuples(st.integers(1, 3), st.integers(2, 10)),
        elements=st.sampled_from([0.0, 0.5, 1.0, -2.0, 4.0]),
    ),
    st.integers(1, 60),
)
def test_appending_shared_zeros_leaves_the_support_variant_unchanged(a: np.ndarray, b: np.ndarray, zeros: int) -> None:
    rows, width = min(len(a), len(b)), min(a.shape[1], b.shape[1])
    first, second = torch.from_numpy(a[:rows, :width]), torch.from_numpy(b[:rows, :width])
    padded_first = torch.cat([first, torch.zeros(rows, zeros, dtype=first.dtype)], dim=1)
    padded_second = torch.cat([second, torch.zeros(rows, zeros, dtype=second.dtype)], dim=1)
    before = rank_similarity(first, second, support="nonzero")
    after = rank_similarity(padded_first, padded_second, support="nonzero")
    torch.testing.assert_close(after, before, equal_nan=True)
    np.testing.assert_allclose(before.numpy(), _scipy_on_support(first, second), atol=1e-6, equal_nan=True)


@settings(max_examples=100, deadline=None)
@given(
    arrays(np.float64, st.integers(2, 10), elements=st.sampled_from([0.25, -1.0, 2.0, 3.5, -7.0])),
    arrays(np.float64, st.integers(2, 10), elements=st.sampled_from([0.5, 1.0, -2.0, 4.0, 9.0])),
    st.integers(1, 20),
)
def test_shared_zeros_move_the_plain_variant_towards_one(a: np.ndarray, b: np.ndarray, zeros: int) -> None:
    # maps without zeros of their own: the appended zeros are the only ones, shared by both
    width = min(len(a), len(b))
    first, second = torch.from_numpy(a[None, :width]), torch.from_numpy(b[None, :width])
    plain = [
        float(
            rank_similarity(
                torch.cat([first, torch.zeros(1, k, dtype=first.dtype)], 1),
                torch.cat([second, torch.zeros(1, k, dtype=second.dtype)], 1),
            )
        )
        for k in (0, zeros, zeros + 1, 100 * width)
    ]
    if math.isnan(plain[0]):  # a constant map: its padded correlation is defined, and positive
        assert all(value > 0 for value in plain[1:])
        return
    assert plain[0] <= plain[1] + 1e-6 <= plain[2] + 2e-6
    assert plain[3] > 0.99
    support = float(rank_similarity(first, second, support="nonzero"))
    assert support == pytest.approx(plain[0], abs=1e-6)


@pytest.mark.parametrize(
    ("first", "second", "support", "error", "match"),
    [
        (np.zeros((2, 3)), torch.zeros(2, 3), "all", TypeError, "two tensors"),
        (torch.zeros(2, 3), torch.zeros(2, 4), "all", ValueError, "one shape"),
        (torch.zeros(3), torch.zeros(3), "all", ValueError, "N×"),
        (torch.zeros(0, 3), torch.zeros(0, 3), "nonzero", ValueError, "non-empty"),
        (torch.zeros(2, 3), torch.zeros(2, 3), "digit", ValueError, "'all', 'nonzero'"),
        (torch.tensor([[0.0, float("nan")]]), torch.zeros(1, 2), "nonzero", ValueError, "NaN"),
    ],
)
def test_arguments_are_validated(first, second, support, error, match) -> None:
    with pytest.raises(error, match=match):
        rank_similarity(first, second, support=support)


def test_same_ranking_validates_and_keeps_the_device() -> None:
    assert same_ranking(torch.tensor([[1.0, -3.0]]), torch.tensor([[0.5, 2.0]])).tolist() == [True]
    with pytest.raises(ValueError, match="one shape"):
        same_ranking(torch.zeros(1, 2), torch.zeros(1, 3))


def test_the_module_examples_run() -> None:
    import doctest

    import cfcheck.metrics.sanity as sanity_module

    assert doctest.testmod(sanity_module).failed == 0
