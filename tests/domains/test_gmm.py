"""The gmm domain: splits against the definition, and the closed-form denoiser against
numerical quadrature (1-D and 2-D), Monte-Carlo regression (64-D), Tweedie's formula
through autograd, its limits and properties."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate

from cfcheck.domains.base import SPLIT_ROLES, Domain
from cfcheck.domains.gmm import (
    SPLIT_SIZES,
    GMMDomain,
    LabeledPoints,
    posterior_mean,
    predicted_noise,
)
from cfcheck.kinds.scm.capabilities import StructuralCausalModel
from cfcheck.kinds.scm.spec import SCMSpec

ALPHAS = [0.05, 0.3, 0.7, 0.95, 0.999]


# -- the domain and its splits ------------------------------------------------------------


def test_the_domain_protocol_and_its_declared_absences():
    domain = GMMDomain()
    assert isinstance(domain, Domain)
    assert (domain.name, domain.input_shape, domain.num_classes) == ("gmm", (64,), 2)
    assert len(domain.class_names) == 2 and domain.factor_names == () and domain.categorical_factors == ()
    assert set(domain.split_roles) == set(SPLIT_ROLES) and set(domain.split_roles.values()) <= set(SPLIT_SIZES)
    assert dict(domain.model_roles) == {"explained": ("mlp",), "retrained": ("mlp",)}
    assert domain.capabilities == frozenset()
    # no structural causal model: not even stubs, so the SCM kind's isinstance check turns it away
    assert not isinstance(domain, StructuralCausalModel)
    assert not any(
        hasattr(domain, m) for m in ("parents", "sample_intervention", "parent_bin", "intervention_counterfactual")
    )
    assert SCMSpec().supports(domain) == "domain 'gmm' has no structural causal model to intervene on"


def test_splits_have_their_sizes_types_and_are_deterministic():
    first, second = GMMDomain(), GMMDomain()
    for name, size in {"train": 20_000, "val": 2_000, "test": 2_000, "reference": 5_000}.items():
        split = first.split(name)
        assert isinstance(split, LabeledPoints) and len(split) == size
        assert split.x.shape == (size, 64) and split.x.dtype == torch.float32 and split.labels.dtype == torch.int64
        assert set(split.labels.unique().tolist()) == {0, 1}
        again = second.split(name)
        assert torch.equal(split.x, again.x) and torch.equal(split.labels, again.labels)
        prefix = second.split(name, 17)
        assert torch.equal(prefix.x, split.x[:17]) and torch.equal(prefix.labels, split.labels[:17])
    assert not torch.equal(first.split("val").x, first.split("test").x)


def test_split_arguments_are_validated():
    domain = GMMDomain()
    with pytest.raises(ValueError, match="unknown split 'oracle'"):
        domain.split("oracle")
    with pytest.raises(ValueError, match=r"n must be an int in \[0, 2000\]"):
        domain.split("test", 2001)
    with pytest.raises(ValueError, match="`variance` must be a positive"):
        GMMDomain(variance=0.0)
    with pytest.raises(ValueError, match=r"`means` must be 2×3"):
        GMMDomain(3, means=torch.zeros(2, 4))
    with pytest.raises(ValueError, match="`dim` must be a positive int"):
        GMMDomain(0)


def test_train_split_statistics_match_the_definition():
    """Class balance, class means ±(1, …, 1) and within-class covariance 0.3·I, each within
    6 standard errors (the split is fixed, so this is a deterministic check of the sampler)."""
    split = GMMDomain().split("train")
    x, labels = split.x.double(), split.labels
    n = len(labels)
    assert abs(float(labels.double().mean()) - 0.5) < 6 * math.sqrt(0.25 / n)
    centred = torch.empty_like(x)
    for label, sign in ((0, 1.0), (1, -1.0)):
        members = x[labels == label]
        error = members.mean(dim=0) - sign
        assert float(error.abs().max()) < 6 * math.sqrt(0.3 / len(members))
        centred[labels == label] = members - members.mean(dim=0)
    covariance = centred.T @ centred / (n - 2)
    off_diagonal = covariance - torch.diag(torch.diagonal(covariance))
    assert float((torch.diagonal(covariance) - 0.3).abs().max()) < 6 * 0.3 * math.sqrt(2 / n)
    assert float(off_diagonal.abs().max()) < 6 * 0.3 / math.sqrt(n)


def test_custom_dimension_variance_and_means():
    means = [[0.5, -2.0, 1.0], [-1.0, 0.0, 3.0]]
    domain = GMMDomain(variance=2.0, means=means)
    assert domain.input_shape == (3,)
    torch.testing.assert_close(domain.feature_direction(), torch.tensor([1.5, -2.0, -2.0]))
    split = domain.split("train")
    for label in (0, 1):
        members = split.x[split.labels == label].double()
        assert float((members.mean(dim=0) - torch.tensor(means[label])).abs().max()) < 6 * math.sqrt(2.0 / len(members))
        assert float((members.var(dim=0) - 2.0).abs().max()) < 6 * 2.0 * math.sqrt(2 / len(members))


def test_feature_direction_points_from_class_1_to_class_0():
    domain = GMMDomain()
    direction = domain.feature_direction()
    torch.testing.assert_close(direction, torch.full((64,), 2.0))
    split = domain.split("test")
    projection = split.x @ direction
    assert bool((projection[split.labels == 0].mean() > 0) and (projection[split.labels == 1].mean() < 0))


# -- the denoiser against independent computations ----------------------------------------


def quadrature_1d(x_t: float, alpha: float, means: tuple[float, float], variance: float) -> tuple[float, float]:
    """E[x₀ | x_t] and E[ε | x_t] in 1-D by integrating over x₀ with scipy's quad."""

    def joint(x0: float) -> float:
        prior = sum(math.exp(-((x0 - m) ** 2) / (2 * variance)) for m in means) / (
            2 * math.sqrt(2 * math.pi * variance)
        )
        return prior * math.exp(-((x_t - math.sqrt(alpha) * x0) ** 2) / (2 * (1 - alpha)))

    peak = x_t / math.sqrt(alpha)
    points = sorted({peak, *means})
    mass = integrate.quad(joint, -12, 12, points=points, epsabs=0, epsrel=1e-12, limit=400)[0]
    first = integrate.quad(lambda x0: x0 * joint(x0), -12, 12, points=points, epsabs=0, epsrel=1e-12, limit=400)[0]
    mean = first / mass
    return mean, (x_t - math.sqrt(alpha) * mean) / math.sqrt(1 - alpha)


@pytest.mark.parametrize("alpha", ALPHAS)
def test_posterior_mean_and_noise_match_quadrature_in_1d(alpha):
    means, variance = (0.7, -1.2), 0.3  # asymmetric, so a sign or component mix-up shows
    domain = GMMDomain(variance=variance, means=[[means[0]], [means[1]]])
    x_t = torch.tensor([[-3.0], [-1.0], [-0.2], [0.0], [0.4], [1.5], [4.0]], dtype=torch.float64)
    expected = np.array([quadrature_1d(float(v), alpha, means, variance) for v in x_t[:, 0]])
    np.testing.assert_allclose(domain.posterior_mean(x_t, alpha)[:, 0].numpy(), expected[:, 0], rtol=0, atol=1e-8)
    np.testing.assert_allclose(domain.predicted_noise(x_t, alpha)[:, 0].numpy(), expected[:, 1], rtol=0, atol=1e-6)


@pytest.mark.parametrize("alpha", [0.2, 0.6, 0.9])
def test_posterior_mean_matches_grid_quadrature_in_2d(alpha):
    """The 2-D posterior p(x₀ | x_t) ∝ p(x₀)·p(x_t | x₀) on a 801×801 grid over [−5, 5]²,
    integrated with scipy's Simpson rule."""
    means, variance = np.array([[1.0, -0.5], [-0.8, 0.9]]), 0.3
    domain = GMMDomain(variance=variance, means=means)
    axis = np.linspace(-5, 5, 801)
    g0, g1 = np.meshgrid(axis, axis, indexing="ij")
    prior = sum(np.exp(-((g0 - m[0]) ** 2 + (g1 - m[1]) ** 2) / (2 * variance)) for m in means)
    x_t = np.array([[0.0, 0.0], [1.2, -0.3], [-0.5, 1.5], [2.0, 2.0]])
    result = domain.posterior_mean(torch.from_numpy(x_t), alpha).numpy()
    for point, value in zip(x_t, result):
        likelihood = np.exp(
            -((point[0] - math.sqrt(alpha) * g0) ** 2 + (point[1] - math.sqrt(alpha) * g1) ** 2) / (2 * (1 - alpha))
        )
        weight = prior * likelihood

        def integral(f):
            return integrate.simpson(integrate.simpson(f, x=axis, axis=1), x=axis)

        expected = [integral(weight * g0) / integral(weight), integral(weight * g1) / integral(weight)]
        np.testing.assert_allclose(value, expected, rtol=0, atol=1e-6)


@pytest.mark.parametrize("alpha", [0.1, 0.5, 0.9])
def test_posterior_mean_is_the_regression_of_x0_on_xt_in_64d(alpha):
    """Monte-Carlo with the paper's mixture: the errors x₀ − E[x₀|x_t] and ε − E[ε|x_t] have mean
    0 and are uncorrelated with x_t and with the estimate itself (the defining orthogonality of
    a conditional expectation); each within 5 standard errors, over 60,000 draws × 64 coordinates."""
    domain = GMMDomain()
    generator = torch.Generator().manual_seed(123)
    n = 60_000
    labels = torch.randint(0, 2, (n,), generator=generator)
    x0 = domain.means[labels] + math.sqrt(0.3) * torch.randn(n, 64, generator=generator, dtype=torch.float64)
    noise = torch.randn(n, 64, generator=generator, dtype=torch.float64)
    x_t = math.sqrt(alpha) * x0 + math.sqrt(1 - alpha) * noise
    for target, estimate in ((x0, domain.posterior_mean(x_t, alpha)), (noise, domain.predicted_noise(x_t, alpha))):
        error = target - estimate
        for g in (torch.ones_like(x_t), x_t, estimate):
            product = error * g  # per coordinate: E[error·g] = 0
            bound = 5 * product.std(dim=0) / math.sqrt(n)
            assert bool((product.mean(dim=0).abs() < bound).all()), float((product.mean(0).abs() / bound).max())


@pytest.mark.parametrize("alpha", [0.05, 0.5, 0.95])
def test_predicted_noise_is_tweedies_score_by_autograd(alpha):
    """E[ε | x_t] = −√(1 − ᾱ)·∇ log p(x_t), with log p(x_t) from torch.distributions."""
    means, variance = torch.tensor([[0.3, -1.0, 2.0], [-1.5, 0.5, 0.0]], dtype=torch.float64), 0.7
    domain = GMMDomain(variance=variance, means=means)
    components = torch.distributions.Independent(
        torch.distributions.Normal(math.sqrt(alpha) * means, math.sqrt(alpha * variance + 1 - alpha)), 1
    )
    mixture = torch.distributions.MixtureSameFamily(
        torch.distributions.Categorical(torch.tensor([0.5, 0.5], dtype=torch.float64)), components
    )
    x_t = torch.randn(20, 3, generator=torch.Generator().manual_seed(5), dtype=torch.float64).mul(2).requires_grad_()
    (score,) = torch.autograd.grad(mixture.log_prob(x_t).sum(), x_t)
    torch.testing.assert_close(
        domain.predicted_noise(x_t.detach(), alpha), -math.sqrt(1 - alpha) * score, atol=1e-10, rtol=1e-10
    )


def test_limits_of_alpha_bar():
    domain = GMMDomain(variance=0.3, means=[[1.0, 2.0], [-3.0, 0.5]])
    x_t = torch.randn(6, 2, generator=torch.Generator().manual_seed(6), dtype=torch.float64) * 3
    prior_mean = torch.tensor([[-1.0, 1.25]], dtype=torch.float64).expand(6, 2)
    torch.testing.assert_close(domain.posterior_mean(x_t, 1.0), x_t, atol=1e-12, rtol=0)
    torch.testing.assert_close(domain.posterior_mean(x_t, 1 - 1e-12), x_t, atol=1e-5, rtol=0)
    torch.testing.assert_close(domain.posterior_mean(x_t, 0.0), prior_mean, atol=1e-12, rtol=0)
    torch.testing.assert_close(domain.posterior_mean(x_t, 1e-14), prior_mean, atol=1e-5, rtol=0)  # O(√ᾱ) away
    torch.testing.assert_close(domain.predicted_noise(x_t, 0.0), x_t, atol=1e-12, rtol=0)
    torch.testing.assert_close(domain.predicted_noise(x_t, 1.0), torch.zeros_like(x_t), atol=0, rtol=0)
    symmetric = GMMDomain(dim=64)
    points = symmetric.split("test", 8).x
    assert float(symmetric.posterior_mean(points, 1e-14).abs().max()) < 1e-5  # the prior mean 0


def test_alpha_bar_per_row_and_far_points_are_stable():
    domain = GMMDomain(dim=8)
    x_t = torch.randn(5, 8, generator=torch.Generator().manual_seed(7))
    alphas = torch.tensor([0.0, 0.1, 0.5, 0.9, 1.0])
    rowwise = torch.cat([domain.posterior_mean(x_t[i : i + 1], float(alphas[i])) for i in range(5)])
    torch.testing.assert_close(domain.posterior_mean(x_t, alphas), rowwise)
    assert domain.posterior_mean(x_t, alphas).dtype == torch.float32
    far = torch.full((2, 8), 1e4, dtype=torch.float64) * torch.tensor([[1.0], [-1.0]], dtype=torch.float64)
    responsibilities = domain.responsibilities(far, 0.5)
    assert bool(torch.isfinite(domain.posterior_mean(far, 0.5)).all())
    torch.testing.assert_close(responsibilities, torch.eye(2, dtype=torch.float64))
    torch.testing.assert_close(domain.class_posterior(far), torch.eye(2, dtype=torch.float64))


@pytest.mark.parametrize(
    ("x_t", "alpha", "error", "match"),
    [
        (torch.zeros(3, 5), 0.5, ValueError, r"`x_t` must be N×4"),
        (torch.zeros(4), 0.5, ValueError, "`x_t` must be 2-D"),
        (torch.zeros(3, 4), 1.5, ValueError, r"must lie in \[0, 1\]"),
        (torch.zeros(3, 4), float("nan"), ValueError, r"must lie in \[0, 1\]"),
        (torch.zeros(3, 4), torch.full((2,), 0.5), ValueError, "one value per row"),
        (torch.zeros(3, 4), "0.5", TypeError, "`alpha_bar` must be a number"),
        (torch.zeros(3, 4, dtype=torch.int64), 0.5, TypeError, "floating-point"),
    ],
)
def test_denoiser_arguments_are_validated(x_t, alpha, error, match):
    with pytest.raises(error, match=match):
        GMMDomain(dim=4).posterior_mean(x_t, alpha)


# -- properties -----------------------------------------------------------------------------

points = st.tuples(st.integers(1, 6), st.integers(1, 5), st.integers(0, 2**16), st.floats(0.05, 3.0))


def draw(case):
    n, dim, seed, spread = case
    generator = torch.Generator().manual_seed(seed)
    means = torch.randn(2, dim, generator=generator, dtype=torch.float64)
    x_t = spread * torch.randn(n, dim, generator=generator, dtype=torch.float64)
    return means, x_t


@settings(max_examples=60, deadline=None)
@given(case=points, alpha=st.floats(0.0, 0.999), variance=st.floats(0.05, 3.0))
def test_the_denoiser_reassembles_x_t(case, alpha, variance):
    """√ᾱ·E[x₀|x_t] + √(1 − ᾱ)·E[ε|x_t] = x_t (the two predictions are one parametrisation)."""
    means, x_t = draw(case)
    rebuilt = math.sqrt(alpha) * posterior_mean(x_t, alpha, means, variance) + math.sqrt(1 - alpha) * predicted_noise(
        x_t, alpha, means, variance
    )
    torch.testing.assert_close(rebuilt, x_t, atol=1e-10, rtol=1e-10)


@settings(max_examples=60, deadline=None)
@given(case=points, alpha=st.floats(0.0, 1.0), variance=st.floats(0.05, 3.0))
def test_symmetric_means_make_the_posterior_mean_odd(case, alpha, variance):
    means, x_t = draw(case)
    symmetric = torch.stack([means[0], -means[0]])
    forward = posterior_mean(x_t, alpha, symmetric, variance)
    torch.testing.assert_close(posterior_mean(-x_t, alpha, symmetric, variance), -forward, atol=1e-12, rtol=0)


@settings(max_examples=60, deadline=None)
@given(case=points, alpha=st.floats(0.0, 1.0), variance=st.floats(0.05, 3.0))
def test_the_posterior_mean_lies_between_the_component_posteriors(case, alpha, variance):
    """E[x₀|x_t] is a convex combination of E[x₀|x_t, k] = μ_k + c·(x_t − √ᾱ·μ_k)."""
    means, x_t = draw(case)
    result = posterior_mean(x_t, alpha, means, variance)
    c = math.sqrt(alpha) * variance / (alpha * variance + 1 - alpha)
    per_component = [means[k] + c * (x_t - math.sqrt(alpha) * means[k]) for k in (0, 1)]
    low, high = torch.minimum(*per_component), torch.maximum(*per_component)
    assert bool(((result >= low - 1e-12) & (result <= high + 1e-12)).all())
