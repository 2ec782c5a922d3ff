"""CLD minimality and the Gaussian KL against independent computations, properties and
inputs whose answer is known by construction; the composition embedding distance."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from cfcheck.metrics.composition import embedding_l1
from cfcheck.metrics.minimality import CLD_WEIGHTS, counterfactual_latent_divergence, gaussian_kl


def _normal(mean: torch.Tensor, log_var: torch.Tensor) -> torch.distributions.Normal:
    return torch.distributions.Normal(mean.double(), (0.5 * log_var.double()).exp())


def test_gaussian_kl_matches_torch_distributions():
    g = torch.Generator().manual_seed(0)
    mq, lq, mp, lp = (torch.randn(7, 5, generator=g) for _ in range(4))
    expected = torch.distributions.kl_divergence(_normal(mq, lq), _normal(mp, lp)).sum(-1)
    torch.testing.assert_close(gaussian_kl(mq, lq, mp, lp), expected)


def test_gaussian_kl_matches_a_hand_loop_and_uses_the_log_variance():
    mq, lq = torch.tensor([[0.3, -1.0]]), torch.tensor([[0.5, -2.0]])
    mp, lp = torch.tensor([[1.0, 0.0]]), torch.tensor([[-0.5, 1.0]])
    total = 0.0
    for k in range(2):
        vq, vp = math.exp(float(lq[0, k])), math.exp(float(lp[0, k]))
        total += 0.5 * (math.log(vp / vq) + (vq + (float(mq[0, k]) - float(mp[0, k])) ** 2) / vp - 1.0)
    assert float(gaussian_kl(mq, lq, mp, lp)) == pytest.approx(total, rel=1e-9)
    # the reference implementation's mistake (the mean column as the log-scale) gives another number
    assert float(gaussian_kl(mq, mq, mp, mp)) != pytest.approx(total, rel=1e-3)


def test_gaussian_kl_broadcasts_a_pool_against_each_factual():
    g = torch.Generator().manual_seed(1)
    pool_m, pool_l, x_m, x_l = (
        torch.randn(6, 3, generator=g),
        torch.randn(6, 3, generator=g),
        torch.randn(4, 3, generator=g),
        torch.randn(4, 3, generator=g),
    )
    matrix = gaussian_kl(pool_m[None], pool_l[None], x_m[:, None], x_l[:, None])
    assert matrix.shape == (4, 6)
    torch.testing.assert_close(matrix[2, 5], gaussian_kl(pool_m[5:6], pool_l[5:6], x_m[2:3], x_l[2:3])[0])


_vectors = st.lists(st.floats(-3, 3, allow_nan=False), min_size=1, max_size=6)


@settings(max_examples=60, deadline=None)
@given(_vectors, _vectors, _vectors, _vectors)
def test_gaussian_kl_is_non_negative_and_zero_only_for_equal_posteriors(mq, lq, mp, lp):
    k = min(map(len, (mq, lq, mp, lp)))
    q_m, q_l, p_m, p_l = (torch.tensor(v[:k], dtype=torch.float64)[None] for v in (mq, lq, mp, lp))
    kl = float(gaussian_kl(q_m, q_l, p_m, p_l))
    assert kl >= -1e-12
    assert float(gaussian_kl(q_m, q_l, q_m, q_l)) == 0.0
    if not (torch.allclose(q_m, p_m, atol=1e-3) and torch.allclose(q_l, p_l, atol=1e-3)):
        assert kl > 0


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: gaussian_kl(torch.zeros(2, 3), torch.zeros(2, 2), torch.zeros(2, 3), torch.zeros(2, 3)), "same shape"),
        (lambda: gaussian_kl(torch.zeros(2, 3), torch.zeros(2, 3), torch.zeros(4, 3), torch.zeros(4, 3)), "broadcast"),
        (
            lambda: gaussian_kl(
                torch.zeros(2, 3, dtype=torch.long), torch.zeros(2, 3), torch.zeros(2, 3), torch.zeros(2, 3)
            ),
            "floating-point",
        ),
        (
            lambda: gaussian_kl(torch.full((1, 2), math.nan), torch.zeros(1, 2), torch.zeros(1, 2), torch.zeros(1, 2)),
            "NaN",
        ),
    ],
)
def test_gaussian_kl_names_bad_arguments(call, match):
    with pytest.raises((TypeError, ValueError), match=match):
        call()


def _sets(n_rows: int = 1):
    """Real images 0-4 have the factual's value (distances 1..5), 5-9 the counterfactual's (distances 6..10)."""
    distances = torch.arange(1.0, 11.0).repeat(n_rows, 1)
    factual = (torch.arange(10) < 5).repeat(n_rows, 1)
    return distances, factual, ~factual


@pytest.mark.parametrize(
    "div, p_cf, p_f",
    [
        (5.5, 0.0, 0.0),  # between the two sets: the ideal counterfactual
        (0.5, 0.0, 1.0),  # closer than every real image of the factual's value: too small a change
        (10.5, 1.0, 0.0),  # farther than every real image of the new value
        (7.0, 0.4, 0.0),  # 6 and 7 of S_x* are within it (≤ counts ties)
        (3.0, 0.0, 0.6),  # 3, 4, 5 of S_x are beyond it (≥ counts ties)
    ],
)
def test_cld_on_sets_whose_answer_is_known(div, p_cf, p_f):
    distances, factual, counterfactual = _sets()
    cld, got_cf, got_f = counterfactual_latent_divergence(torch.tensor([div]), distances, factual, counterfactual)
    assert float(got_cf) == pytest.approx(p_cf) and float(got_f) == pytest.approx(p_f)
    w1, w2 = CLD_WEIGHTS
    assert float(cld) == pytest.approx(math.log(w1 * math.exp(p_cf) + w2 * math.exp(p_f)))


def test_cld_bounds_and_weights():
    distances, factual, counterfactual = _sets(3)
    div = torch.tensor([5.5, 0.5, 10.5])
    cld, _, _ = counterfactual_latent_divergence(div, distances, factual, counterfactual)
    assert float(cld[0]) == pytest.approx(0.0, abs=1e-12)  # the minimum, log(w1 + w2)
    assert float(cld[2]) == pytest.approx(math.log(0.8 * math.e + 0.2))  # P(S_x*) = 1 weighs w1
    assert float(cld[1]) == pytest.approx(math.log(0.8 + 0.2 * math.e))  # P(S_x) = 1 weighs w2
    assert float(cld[2]) > float(cld[1])
    equal, _, _ = counterfactual_latent_divergence(div, distances, factual, counterfactual, weights=(0.5, 0.5))
    assert float(equal[1]) == pytest.approx(float(equal[2]))


def test_cld_sets_may_overlap_and_rows_are_independent():
    distances = torch.tensor([[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]])
    everyone = torch.ones(2, 3, dtype=torch.bool)
    _, p_cf, p_f = counterfactual_latent_divergence(torch.tensor([2.0, 0.0]), distances, everyone, everyone)
    assert p_cf.tolist() == pytest.approx([2 / 3, 0.0]) and p_f.tolist() == pytest.approx([2 / 3, 1.0])


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"factual_set": torch.zeros(1, 10, dtype=torch.bool)}, "empty in rows"),
        ({"factual_set": torch.ones(1, 10)}, "bool"),
        ({"div": torch.tensor([-1.0])}, "non-negative"),
        ({"div": torch.tensor([1.0, 2.0])}, "one row per counterfactual"),
        ({"weights": (0.0, 0.0)}, "positive sum"),
        ({"weights": (-0.2, 1.0)}, "non-negative"),
        ({"counterfactual_set": torch.ones(1, 9, dtype=torch.bool)}, "same shape"),
    ],
)
def test_cld_names_bad_arguments(kwargs, match):
    distances, factual, counterfactual = _sets()
    arguments = {
        "div": torch.tensor([1.0]),
        "distances": distances,
        "factual_set": factual,
        "counterfactual_set": counterfactual,
        **kwargs,
    }
    with pytest.raises((TypeError, ValueError), match=match):
        counterfactual_latent_divergence(**arguments)


def test_embedding_l1_is_the_mean_absolute_difference_per_row():
    a, b = torch.tensor([[0.0, 2.0], [1.0, 1.0]]), torch.tensor([[1.0, 0.0], [1.0, 1.0]])
    assert embedding_l1(a, b).tolist() == [1.5, 0.0]
    with pytest.raises(ValueError, match="same shape"):
        embedding_l1(a, b[:, :1])
    with pytest.raises(ValueError, match="2-D"):
        embedding_l1(a[0], b[0])
