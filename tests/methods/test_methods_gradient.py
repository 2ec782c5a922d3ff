"""TargetedPGD and WachterCounterfactual: reach the target, within their distance budgets."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from cfcheck.kinds.vce.methods.adversarial import TargetedPGD
from cfcheck.kinds.vce.methods.wachter import WachterCounterfactual, l1_pseudo_gradient


def _l1(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return (a - b).abs().flatten(1).sum(dim=1)


# -- PGD ----------------------------------------------------------------------------------------
def test_pgd_reaches_every_target_inside_the_eps_ball(toys, linear_model: nn.Module) -> None:
    x = toys.random_images(32, seed=1)
    target = toys.other_targets(linear_model(x).argmax(dim=1), seed=2)
    pgd = TargetedPGD(eps=0.1, steps=40)
    x_adv = pgd.explain(x, target, linear_model, generator=torch.Generator().manual_seed(0))
    assert torch.equal(linear_model(x_adv).argmax(dim=1), target)
    assert (x_adv - x).abs().max() <= 0.1 + 1e-6
    assert x_adv.min() >= 0 and x_adv.max() <= 1


def test_pgd_flips_a_smooth_nonlinear_classifier(toys, mean_model: nn.Module) -> None:
    """Mean intensity can move by at most eps = 0.1, i.e. exactly one class bin of the toy."""
    x = 0.3 + 0.05 * toys.random_images(8, seed=3)  # mean ≈ 0.325: class 3
    assert torch.equal(mean_model(x).argmax(dim=1), torch.full((8,), 3))
    target = torch.tensor([4, 2] * 4)
    x_adv = TargetedPGD().explain(x, target, mean_model, generator=torch.Generator().manual_seed(1))
    assert torch.equal(mean_model(x_adv).argmax(dim=1), target)
    assert (x_adv - x).abs().max() <= 0.1 + 1e-6


def test_pgd_without_random_start_and_zero_gradient_returns_the_input(toys) -> None:
    """A constant classifier gives zero gradient: signed steps are zero, nothing moves."""

    class Constant(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.zeros(x.shape[0], 10) + 0 * x.sum()

    x = toys.random_images(3, seed=4)
    out = TargetedPGD(random_start=False).explain(x, torch.zeros(3, dtype=torch.int64), Constant())
    assert torch.equal(out, x)


def test_pgd_random_start_is_drawn_from_the_generator(toys) -> None:
    """With zero gradient the output is the random start itself: x + U(−eps, eps), clipped."""

    class Constant(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.zeros(x.shape[0], 10) + 0 * x.sum()

    x = toys.random_images(2, seed=5)
    out = TargetedPGD(eps=0.2).explain(
        x, torch.zeros(2, dtype=torch.int64), Constant(), generator=torch.Generator().manual_seed(9)
    )
    noise = torch.rand(x.shape, generator=torch.Generator().manual_seed(9)) * 0.4 - 0.2
    assert torch.allclose(out, (x + noise).clamp(0, 1), atol=1e-6)


def test_pgd_default_step_size_follows_madry() -> None:
    assert TargetedPGD(eps=0.1, steps=40).effective_step_size == pytest.approx(2.5 * 0.1 / 40)
    assert TargetedPGD(step_size=0.01).effective_step_size == 0.01


def test_pgd_gradient_of_one_image_does_not_depend_on_the_batch(toys, linear_model: nn.Module) -> None:
    x = toys.random_images(6, seed=6)
    target = toys.other_targets(linear_model(x).argmax(dim=1), seed=7)
    pgd = TargetedPGD(random_start=False)
    batch = pgd.explain(x, target, linear_model)
    single = torch.cat([pgd.explain(x[i : i + 1], target[i : i + 1], linear_model) for i in range(6)])
    assert torch.allclose(batch, single, atol=1e-6)


def test_pgd_leaves_parameter_gradients_alone(toys) -> None:
    """Gradients are taken w.r.t. the input only, even for a classifier that is not frozen."""
    model = nn.Sequential(nn.Flatten(), nn.Linear(1024, 10))
    x = toys.random_images(2, seed=8)
    TargetedPGD(steps=3).explain(x, torch.tensor([1, 2]), model)
    assert all(p.grad is None for p in model.parameters())


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"eps": 0.0}, ValueError, "eps"),
        ({"eps": -1.0}, ValueError, "eps"),
        ({"steps": 0}, ValueError, "steps"),
        ({"steps": 2.5}, TypeError, "steps"),
        ({"step_size": -0.1}, ValueError, "step_size"),
        ({"eps": "big"}, TypeError, "eps"),
    ],
)
def test_pgd_rejects_bad_hyperparameters(kwargs, error, match) -> None:
    with pytest.raises(error, match=match):
        TargetedPGD(**kwargs)


@settings(max_examples=20)
@given(eps=st.floats(0.01, 0.5), seed=st.integers(0, 10_000))
def test_pgd_stays_in_the_box_and_the_ball(toys, eps: float, seed: int) -> None:
    classifier = toys.linear_classifier(seed=seed % 7)
    x = toys.random_images(3, seed=seed)
    x[0] = 0.0  # saturated images test the [0, 1] clipping at both ends
    x[1] = 1.0
    target = toys.other_targets(classifier(x).argmax(dim=1), seed=seed)
    out = TargetedPGD(eps=eps, steps=5).explain(x, target, classifier, generator=torch.Generator().manual_seed(seed))
    assert (out - x).abs().max() <= eps + 1e-6
    assert out.min() >= 0 and out.max() <= 1


# -- Wachter --------------------------------------------------------------------------------------
def test_wachter_reaches_every_target_with_margin(toys, linear_model: nn.Module) -> None:
    x = toys.random_images(32, seed=10)
    target = toys.other_targets(linear_model(x).argmax(dim=1), seed=11)
    x_cf, valid = WachterCounterfactual().explain(x, target, linear_model)
    assert valid.all()
    probs = linear_model(x_cf).softmax(dim=1).gather(1, target[:, None]).squeeze(1)
    assert (probs >= 0.6 - 1e-4).all()  # the early-stop margin


def test_wachter_is_closer_and_sparser_than_pgd(toys, linear_model: nn.Module) -> None:
    x = toys.random_images(32, seed=12)
    target = toys.other_targets(linear_model(x).argmax(dim=1), seed=13)
    x_adv = TargetedPGD().explain(x, target, linear_model, generator=torch.Generator().manual_seed(0))
    assert torch.equal(linear_model(x_adv).argmax(dim=1), target)  # both succeed...
    x_cf, valid = WachterCounterfactual().explain(x, target, linear_model)
    assert valid.all()
    # ...but the L1 prior finds a much smaller, sparser change than PGD's dense L∞ one.
    assert _l1(x_cf, x).mean() < 0.5 * _l1(x_adv, x).mean()
    changed_cf = ((x_cf - x).abs() > 1e-6).flatten(1).sum(dim=1).float().mean()
    changed_adv = ((x_adv - x).abs() > 1e-6).flatten(1).sum(dim=1).float().mean()
    assert changed_cf < 0.5 * changed_adv


def test_wachter_change_is_close_to_the_minimum_on_the_mean_classifier(toys, mean_model: nn.Module) -> None:
    """Moving the mean from bin 3 to bin 4 needs L1 ≥ 1024·(0.4 − mean); Wachter stays near it."""
    x = torch.full((4, 1, 32, 32), 0.33)
    target = torch.full((4,), 4)
    x_cf, valid = WachterCounterfactual().explain(x, target, mean_model)
    assert valid.all()
    minimum = 1024 * (0.4 - 0.33)
    assert (_l1(x_cf, x) >= minimum - 1e-2).all()
    assert (_l1(x_cf, x) <= 2.0 * minimum).all()


def test_wachter_leaves_inputs_already_at_the_target_unchanged(toys, linear_model: nn.Module) -> None:
    x = toys.random_images(4, seed=14)
    target = linear_model(x).argmax(dim=1)
    target_prob = linear_model(x).softmax(dim=1).max(dim=1).values
    x_cf, valid = WachterCounterfactual(target_prob=0.11).explain(x, target, linear_model)
    assert (target_prob >= 0.11).all()
    assert torch.equal(x_cf, x) and valid.all()


def test_wachter_large_lambda_holds_every_pixel_at_zero(toys, linear_model: nn.Module) -> None:
    """The L1 kink: no pixel moves while λ exceeds every CE gradient (before any halving)."""
    x = toys.random_images(3, seed=15)
    target = toys.other_targets(linear_model(x).argmax(dim=1), seed=16)
    x_cf, valid = WachterCounterfactual(lam=1e6, max_steps=10, halve_every=100).explain(x, target, linear_model)
    assert torch.equal(x_cf, x)
    assert not valid.any()


def test_wachter_validity_mask_is_the_classifiers_decision(toys, cnn_model: nn.Module) -> None:
    """With a tiny budget some samples fail; the mask must be exactly argmax f(x_cf) == target."""
    x = toys.random_images(8, seed=17)
    target = toys.other_targets(cnn_model(x).argmax(dim=1), seed=18)
    x_cf, valid = WachterCounterfactual(max_steps=3).explain(x, target, cnn_model)
    assert torch.equal(valid, cnn_model(x_cf).argmax(dim=1) == target)


def test_wachter_lambda_halving_eventually_makes_it_valid(toys, linear_model: nn.Module) -> None:
    """A λ far too strong still ends valid: halving every step brings it down quickly."""
    x = toys.random_images(4, seed=19)
    target = toys.other_targets(linear_model(x).argmax(dim=1), seed=20)
    _, valid = WachterCounterfactual(lam=1e3, halve_every=1, max_steps=200).explain(x, target, linear_model)
    assert valid.all()


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"lam": 0.0}, ValueError, "lam"),
        ({"learning_rate": -1.0}, ValueError, "learning_rate"),
        ({"max_steps": 0}, ValueError, "max_steps"),
        ({"halve_every": 1.5}, TypeError, "halve_every"),
        ({"target_prob": 1.0}, ValueError, "target_prob"),
        ({"target_prob": 0.0}, ValueError, "target_prob"),
        ({"betas": (0.9, 1.0)}, ValueError, "betas"),
        ({"adam_eps": 0.0}, ValueError, "adam_eps"),
    ],
)
def test_wachter_rejects_bad_hyperparameters(kwargs, error, match) -> None:
    with pytest.raises(error, match=match):
        WachterCounterfactual(**kwargs)


# -- the L1 pseudo-gradient ---------------------------------------------------------------------
_values = st.floats(-3, 3, allow_nan=False, allow_infinity=False, width=32)


@settings(max_examples=100)
@given(delta=_values, grad=_values, lam=st.floats(0, 2, width=32))
def test_pseudo_gradient_matches_the_one_sided_derivatives(delta: float, grad: float, lam: float) -> None:
    """Independent scalar definition: away from 0 the derivative of g·δ + λ|δ|; at 0 the
    minimum-norm element of the subdifferential [g − λ, g + λ]."""
    got = l1_pseudo_gradient(torch.tensor([delta]), torch.tensor([grad]), torch.tensor([lam])).item()
    if delta > 0:
        expected = grad + lam
    elif delta < 0 or grad > lam:
        expected = grad - lam
    elif grad < -lam:
        expected = grad + lam
    else:
        expected = 0.0
    assert got == pytest.approx(expected, abs=1e-5)


def test_pseudo_gradient_is_the_gradient_of_the_objective_away_from_zero() -> None:
    """Autograd of CE + λ‖δ‖₁ agrees wherever δ has no zero entries."""
    generator = torch.Generator().manual_seed(0)
    weight = torch.randn(10, 16, generator=generator)
    delta = torch.randn(2, 16, generator=generator).requires_grad_(True)
    target = torch.tensor([3, 7])
    loss_ce = F.cross_entropy(delta @ weight.T, target, reduction="sum")
    (grad_ce,) = torch.autograd.grad(loss_ce, delta)
    loss = F.cross_entropy(delta @ weight.T, target, reduction="sum") + 0.3 * delta.abs().sum()
    (grad_total,) = torch.autograd.grad(loss, delta)
    assert torch.allclose(l1_pseudo_gradient(delta.detach(), grad_ce, torch.tensor(0.3)), grad_total, atol=1e-6)
