"""PGD: the known optimum on a linear model, ball constraints, pixel range, edge cases."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from torch import nn

from cfcheck.models.classifiers.adversarial import pgd_attack, robust_accuracy


class _LinearPair(nn.Module):
    """Logits (w·x, −w·x): the loss-maximising L2 step is exactly −eps·w/‖w‖ for label 0."""

    def __init__(self, w: torch.Tensor) -> None:
        super().__init__()
        self.w = nn.Parameter(w)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        s = (x.flatten(1) * self.w.flatten()).sum(1)
        return torch.stack([s, -s], dim=1)


def _linear_case(seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    w = torch.randn(1, 1, 32, 32, generator=g)
    x = torch.full((3, 1, 32, 32), 0.5)  # far from the pixel bounds: no clamping
    y = torch.zeros(3, dtype=torch.long)
    return _LinearPair(w), x, y, w


def test_l2_pgd_finds_the_analytic_optimum_of_a_linear_model():
    model, x, y, w = _linear_case()
    eps = 0.5
    x_adv = pgd_attack(model, x, y, eps=eps, steps=10)
    expected = x - eps * w / w.norm()
    torch.testing.assert_close(x_adv, expected.expand_as(x), rtol=0, atol=1e-5)


def test_linf_pgd_finds_the_sign_optimum_of_a_linear_model():
    model, x, y, w = _linear_case(1)
    eps = 0.1
    x_adv = pgd_attack(model, x, y, eps=eps, steps=5, norm="linf")
    torch.testing.assert_close(x_adv, (x - eps * w.sign()).expand_as(x), rtol=0, atol=1e-6)


@given(
    eps=st.floats(min_value=0.05, max_value=3.0),
    steps=st.integers(min_value=1, max_value=5),
    norm=st.sampled_from(["l2", "linf"]),
    seed=st.integers(min_value=0, max_value=1000),
    random_start=st.booleans(),
)
def test_pgd_stays_in_the_ball_and_pixel_range(eps, steps, norm, seed, random_start):
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Flatten(), nn.Linear(1024, 10))
    x = torch.rand(4, 1, 32, 32, generator=g)
    y = torch.randint(0, 10, (4,), generator=g)
    x_adv = pgd_attack(model, x, y, eps=eps, steps=steps, norm=norm, random_start=random_start, generator=g)
    delta = (x_adv - x).flatten(1)
    size = delta.norm(dim=1) if norm == "l2" else delta.abs().amax(dim=1)
    assert (size <= eps * (1 + 1e-5) + 1e-6).all()
    assert x_adv.min() >= 0 and x_adv.max() <= 1
    assert not x_adv.requires_grad


def test_pgd_does_not_touch_model_parameters_or_their_grad_flags():
    model, x, y, w = _linear_case()
    before = model.w.detach().clone()
    pgd_attack(model, x, y, eps=1.0, steps=3)
    assert model.w.requires_grad and model.w.grad is None
    assert torch.equal(model.w.detach(), before)


def test_zero_budget_is_the_identity():
    model, x, y, _ = _linear_case()
    assert torch.equal(pgd_attack(model, x, y, eps=0.0, steps=5), x)
    assert torch.equal(pgd_attack(model, x, y, eps=1.0, steps=0), x)


def test_robust_accuracy_counts_points_farther_than_eps_from_the_boundary():
    # a linear pair's decision boundary is w·x = 0; the optimal L2 attack moves eps towards it
    model, _, _, w = _linear_case(2)
    unit = w / w.norm()
    base = 0.5 - 0.5 * unit.sum() * unit  # grey image on the boundary: w·base = 0
    distances = torch.tensor([0.1, 0.2, 0.4, 0.8])
    x = base + distances.view(-1, 1, 1, 1) * unit
    assert x.min() > 0 and x.max() < 1
    y = torch.zeros(4, dtype=torch.long)
    assert robust_accuracy(model, x, y, eps=0.3, steps=20) == pytest.approx(0.5)
    assert robust_accuracy(model, x, y, eps=0.05, steps=20) == pytest.approx(1.0)


def test_argument_validation():
    model, x, y, _ = _linear_case()
    with pytest.raises(ValueError, match="norm must be one of"):
        pgd_attack(model, x, y, eps=1.0, steps=1, norm="l1")
    with pytest.raises(ValueError, match="non-negative"):
        pgd_attack(model, x, y, eps=-1.0, steps=1)
    with pytest.raises(ValueError, match="batch size"):
        pgd_attack(model, x, y[:2], eps=1.0, steps=1)
