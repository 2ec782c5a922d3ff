"""A paper's number from cfcheck's, through the conversion its card states (cfcheck and the papers' code).

Each test computes cfcheck's value with cfcheck's own function, applies the conversion the card gives,
and compares with the paper's definition computed independently: scipy, torch.norm over a whole batch
as Väth et al.'s code takes it, plain numpy, torchmetrics' MMD, or a brute-force loop. Where a card
says no conversion exists, a test shows the two numbers differ on an input built for it.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.distance import jensenshannon
from torchmetrics.image.kid import poly_mmd

from cfcheck.metrics.cards import CARDS
from cfcheck.metrics.closeness import minkowski_distance
from cfcheck.metrics.effectiveness import standardised_error
from cfcheck.metrics.interpretability import im2
from cfcheck.metrics.manifold import density_coverage
from cfcheck.metrics.orthogonal_set import greedy_orthogonal_set
from cfcheck.metrics.set_statistics import kid_all_pairs
from cfcheck.metrics.synbols import (
    CategoricalGroup,
    LatentLayout,
    category_rates,
    flip_categories,
    perturbation_features,
    synbols_scores,
)
from cfcheck.metrics.validity import label_variation


def _conversion(key: str) -> str:
    """The conversions a card states (the tests below follow them)."""
    return " ".join(d.conversion for d in CARDS[key].differences)


# -- LVS: bits → nats (× ln 2), Hvilshøj et al. -----------------------------------------------------------


def _probabilities(rng: np.random.Generator, n: int, k: int) -> np.ndarray:
    p = rng.dirichlet(np.full(k, 0.5), size=n)
    p[rng.random(size=(n, k)) < 0.2] = 0.0  # zero entries: 0 · log 0
    p[p.sum(1) == 0, 0] = 1.0
    return p / p.sum(1, keepdims=True)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), k=st.integers(2, 10))
def test_lvs_times_ln2_is_the_js_divergence_in_nats(seed: int, k: int) -> None:
    assert "ln 2" in _conversion("lvs_target") and "ln 2" in _conversion("lvs_unrelated")
    rng = np.random.default_rng(seed)
    p, q = _probabilities(rng, 6, k), _probabilities(rng, 6, k)
    bits = label_variation(torch.tensor(p, dtype=torch.float32), torch.tensor(q, dtype=torch.float32))
    nats = np.array([jensenshannon(p[i], q[i], base=math.e) ** 2 for i in range(len(p))])  # scipy: the sqrt
    np.testing.assert_allclose(bits.double().numpy() * math.log(2.0), nats, rtol=1e-5, atol=1e-7)


def test_lvs_of_disjoint_distributions_is_one_bit_and_ln2_nats() -> None:
    bits = label_variation(torch.tensor([[1.0, 0.0]]), torch.tensor([[0.0, 1.0]]))
    assert bits.item() == pytest.approx(1.0)
    assert bits.item() * math.log(2.0) == pytest.approx(jensenshannon([1, 0], [0, 1], base=math.e) ** 2)


# -- composition: [0, 1] → grey levels (× 255), Melistas et al. -------------------------------------------


def test_composition_l1_times_255_is_the_mean_grey_level_difference() -> None:
    assert "255" in _conversion("composition_l1")
    rng = np.random.default_rng(0)
    x = torch.tensor(rng.random((5, 1, 8, 8)), dtype=torch.float32)
    composed = (x + torch.tensor(rng.normal(scale=0.1, size=x.shape), dtype=torch.float32)).clamp(0, 1)
    ours = minkowski_distance(x, composed, 1) / x[0].numel()  # as suites/scm/test_composition.py scores it
    # Melistas et al.'s code: images normalised to [-1, 1], un-normalised to [0, 255], mean |difference|
    grey = [((2 * t.double().numpy() - 1) + 1) / 2 * 255.0 for t in (composed, x)]
    theirs = np.mean(np.abs(grey[0] - grey[1]), axis=(1, 2, 3))
    np.testing.assert_allclose(ours.double().numpy() * 255.0, theirs, rtol=1e-6)
    assert not np.allclose(ours.double().numpy(), theirs)  # unconverted, the units differ


# -- D_p: per-image mean → one norm over the batch, Väth et al. -------------------------------------------


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(1, 12), p=st.sampled_from([1.0, 1.5, 2.0]))
def test_the_batch_norm_is_the_p_norm_of_the_per_image_values(seed: int, n: int, p: float) -> None:
    rng = np.random.default_rng(seed)
    x = torch.tensor(rng.random((n, 3, 6, 6)))
    c = torch.tensor(rng.random((n, 3, 6, 6)))
    per_image = minkowski_distance(x, c, p).double()
    batch = torch.norm(c - x, p=p).item()  # Väth et al.'s code: th.norm(sample - init_images, p=i)
    assert batch == pytest.approx(float(per_image.pow(p).sum() ** (1 / p)), rel=1e-5)
    if p == 1.0:
        assert batch == pytest.approx(n * float(per_image.mean()), rel=1e-5)


def test_d1_is_exactly_n_times_and_d2_is_not() -> None:
    assert "n · mean" in _conversion("d1") and "(Σ_i d_i^2)^(1/2)" in _conversion("d2")
    x = torch.zeros(4, 1, 2, 2)
    c = x.clone()
    for i, value in enumerate([0.1, 0.2, 0.4, 0.8]):  # per-image L1 = 4·value, L2 = 2·value
        c[i] = value
    d1, d2 = minkowski_distance(x, c, 1).double(), minkowski_distance(x, c, 2).double()
    assert torch.norm(c - x, p=1).item() == pytest.approx(4 * float(d1.mean()))
    batch_l2 = torch.norm(c - x, p=2).item()
    assert batch_l2 == pytest.approx(math.sqrt(float((d2**2).sum())))
    assert batch_l2 != pytest.approx(4 * float(d2.mean()))
    assert batch_l2 != pytest.approx(2 * float(d2.mean()))  # nor n^(1/2) · mean: the d_i differ


# -- continuous effectiveness: standard deviations → raw units, Melistas et al. ---------------------------


def test_effectiveness_times_the_standard_deviation_is_the_raw_mean_absolute_error() -> None:
    assert "standard deviation" in _conversion("effectiveness_error")
    low, high = 0.87598526, 6.255515  # Melistas et al.'s thickness range
    rng = np.random.default_rng(1)
    target_norm, predicted_norm = rng.uniform(-1, 1, 50), rng.uniform(-1, 1, 50)
    raw = [(v + 1) / 2 * (high - low) + low for v in (target_norm, predicted_norm)]  # their un-normalisation
    theirs = float(np.abs(raw[0] - raw[1]).mean())
    sd = float(np.std(raw[0]))
    ours = standardised_error(torch.tensor(raw[1]), torch.tensor(raw[0]), sd).double()
    assert float(ours.mean()) * sd == pytest.approx(theirs, rel=1e-6)


# -- IM2: ε = 1e-8 against 1e-5, Hvilshøj et al. ----------------------------------------------------------


def test_im2_of_a_blank_image_is_a_thousand_times_larger_with_cfchecks_epsilon() -> None:
    blank = torch.zeros(1, 1, 4, 4)
    target, full = torch.full_like(blank, 0.3), torch.full_like(blank, 0.1)
    closed_form = 16 * 0.2**2  # ‖AE_q(0) − AE(0)‖², over ε
    ours, theirs = im2(blank, target, full).item(), im2(blank, target, full, eps=1e-5).item()
    assert ours == pytest.approx(closed_form / 1e-8, rel=1e-6)
    assert theirs == pytest.approx(closed_form / 1e-5, rel=1e-6)
    assert ours == pytest.approx(1000 * theirs, rel=1e-6)


def test_im2_conversion_between_the_epsilons_uses_the_denominator() -> None:
    rng = np.random.default_rng(2)
    c = torch.tensor(rng.random((4, 1, 5, 5)) * 1e-4, dtype=torch.float32)  # faint: ε matters
    target = torch.tensor(rng.random((4, 1, 5, 5)), dtype=torch.float32)
    full = torch.tensor(rng.random((4, 1, 5, 5)), dtype=torch.float32)
    ours = im2(c, target, full).double().numpy()
    denominator = c.double().abs().flatten(1).sum(1).numpy()
    converted = ours * (denominator + 1e-8) / (denominator + 1e-5)
    # Hvilshøj et al.'s IM2, with numpy: ‖to_rec − rec‖² / (‖xcf‖₁ + 1e-5)
    theirs = [
        np.linalg.norm(target[i].double().numpy().ravel() - full[i].double().numpy().ravel()) ** 2
        / (np.linalg.norm(c[i].double().numpy().ravel(), ord=1) + 1e-5)
        for i in range(4)
    ]
    np.testing.assert_allclose(converted, theirs, rtol=1e-6)
    assert not np.allclose(ours, theirs, rtol=1e-3)


# -- density and coverage: closed against open balls (prdc) -----------------------------------------------


def _open_ball_prdc(real: np.ndarray, fake: np.ndarray, k: int) -> tuple[float, float]:
    """Density and coverage as prdc counts them (distance strictly below the radius), by loops."""
    radii = [sorted(np.linalg.norm(real - r, axis=1))[k] for r in real]
    inside = [[np.linalg.norm(f - r) < radius for f in fake] for r, radius in zip(real, radii)]
    density = sum(map(sum, inside)) / (k * len(fake))
    coverage = sum(any(row) for row in inside) / len(real)
    return density, coverage


def test_density_and_coverage_agree_with_open_balls_without_ties_and_not_with_them() -> None:
    real = np.arange(8, dtype=np.float64)[:, None]
    rng = np.random.default_rng(3)
    continuous = rng.uniform(0, 7, size=(6, 1))
    ours = density_coverage(torch.tensor(real), torch.tensor(continuous), k=2)
    assert ours == pytest.approx(_open_ball_prdc(real, continuous, 2))
    tied = np.array([[-2.0], [9.0]])  # exactly at the radius (2) of the end points' balls
    closed, open_ = density_coverage(torch.tensor(real), torch.tensor(tied), k=2), _open_ball_prdc(real, tied, 2)
    assert open_ == (0.0, 0.0) and closed[0] > 0 and closed[1] > 0


# -- KID: all pairs against torchmetrics' subsets ---------------------------------------------------------


def test_kid_all_pairs_is_torchmetrics_mmd_on_one_subset_holding_every_sample() -> None:
    rng = np.random.default_rng(4)
    real, fake = torch.tensor(rng.normal(size=(30, 5))), torch.tensor(rng.normal(0.3, 1.0, size=(30, 5)))
    assert kid_all_pairs(real, fake) == pytest.approx(float(poly_mmd(real, fake)), rel=1e-9)
    smaller = fake[:11]  # sizes differ: a brute-force unbiased MMD² over all pairs
    kernel = lambda a, b: (float(a @ b) / 5 + 1.0) ** 3  # noqa: E731
    within = lambda s: sum(kernel(s[i], s[j]) for i in range(len(s)) for j in range(len(s)) if i != j)  # noqa: E731
    cross = sum(kernel(r, f) for r in real for f in smaller)
    expected = within(real) / (30 * 29) + within(smaller) / (11 * 10) - 2 * cross / (30 * 11)
    assert kid_all_pairs(real, smaller) == pytest.approx(expected, rel=1e-9)


# -- Bex et al.: NCF / CF per success, S# over inputs with a success, the two-part cosine -----------------


def _bex_batch_rates(prediction, prediction_cf, causal, causal_cf) -> tuple[float, float]:
    """NCF and CF as shares of the batch's successes, by the code's rule (loops; binary labels)."""
    ncf = cf = successes = 0
    for i in range(len(prediction)):
        for j in range(len(prediction_cf[i])):
            flips = prediction_cf[i][j] != prediction[i]
            causal_only = not flips and causal_cf[i][j] != causal[i]
            agree = prediction[i] == causal[i] and prediction_cf[i][j] == causal_cf[i][j]
            ncf += flips and not agree
            cf += causal_only and not agree
            successes += (flips or causal_only) and not agree
    return ncf / successes, cf / successes


def test_bex_ncf_and_cf_per_success_from_cfchecks_rates() -> None:
    assert "mean ncf_rate / mean sce_rate" in _conversion("synbols_ncf_rate")
    rng = np.random.default_rng(5)
    n, k = 12, 6
    prediction = rng.integers(0, 2, n)
    causal = prediction.copy()  # every input labelled as the causal oracle labels it
    prediction_cf, causal_cf = rng.integers(0, 2, (n, k)), rng.integers(0, 2, (n, k))
    rates = category_rates(
        flip_categories(
            torch.tensor(prediction),
            torch.tensor(prediction_cf),
            torch.tensor(causal),
            torch.tensor(causal_cf),
            torch.ones(n, k, dtype=torch.bool),
        )
    )
    ncf, cf = _bex_batch_rates(prediction, prediction_cf, causal, causal_cf)
    assert float(rates["ncf"].mean() / rates["sce"].mean()) == pytest.approx(ncf)
    assert float(rates["cf"].mean() / rates["sce"].mean()) == pytest.approx(cf)


def test_bex_counts_a_double_flip_on_a_misclassified_input_as_non_causal() -> None:
    # the classifier says 0, the causal oracle 1; the counterfactual flips both
    ncf, _ = _bex_batch_rates([0], [[1]], [1], [[0]])
    ours = flip_categories(
        torch.tensor([0]),
        torch.tensor([[1]]),
        torch.tensor([1]),
        torch.tensor([[0]]),
        torch.ones(1, 1, dtype=torch.bool),
    )
    assert ncf == 1.0 and not ours.ncf.any() and ours.trivial.all()


def test_bex_s_sharp_over_inputs_with_a_success() -> None:
    assert "S# ≥ 1" in _conversion("synbols_s_sharp")
    rng = np.random.default_rng(6)
    layout = LatentLayout((), (0, 3), continuous_radius=10.0)
    n, k = 20, 5
    z = torch.tensor(rng.normal(size=(n, 3)))
    z_cf = z[:, None] + torch.tensor(rng.normal(size=(n, k, 3)))
    prediction, causal = torch.zeros(n, dtype=torch.int64), torch.zeros(n, dtype=torch.int64)
    prediction_cf = torch.tensor(rng.random((n, k)) < 0.15, dtype=torch.int64)
    s = synbols_scores(z, z_cf, layout, prediction, prediction_cf, causal, torch.zeros(n, k, dtype=torch.int64))
    succeeded = s.categories.sce.any(1)
    assert torch.equal(s.s_sharp >= 1, succeeded) and 0 < int(succeeded.sum()) < n
    theirs = float(s.s_sharp[succeeded].double().mean())  # the code's loop skips inputs with no success
    assert float(s.s_sharp.double().mean()) / float(succeeded.double().mean()) == pytest.approx(theirs)


def test_cfchecks_summed_cosine_is_not_the_reference_codes_two_part_sum() -> None:
    table = torch.tensor([[0.0, 0.0], [3.0, 0.0], [0.0, 3.0]], dtype=torch.float64)
    groups = [CategoricalGroup("character", (0, 2), table, 100.0), CategoricalGroup("font", (2, 4), table, 100.0)]
    layout = LatentLayout(groups, (4, 6), continuous_radius=100.0)
    z = torch.zeros(1, 6, dtype=torch.float64)
    z_cf = torch.zeros(1, 2, 6, dtype=torch.float64)
    z_cf[0, 0, 0], z_cf[0, 1, 2] = 3.0, 3.0  # one changes the character, the other the font
    parts = perturbation_features(z, z_cf, layout)
    order, every = torch.tensor([[1.0, 2.0]]), torch.ones(1, 2, dtype=torch.bool)

    def s_sharp(feature_parts, cosine):
        return int(greedy_orthogonal_set(feature_parts, order, every, cosine=cosine).sum())

    two_parts = [torch.cat(parts[:2], dim=-1), parts[2]]  # the code: all categorical together, continuous
    assert s_sharp(two_parts, "summed") == 2
    assert s_sharp(parts, "summed") == 1  # cfcheck's "summed": one cosine per attribute, three parts
    assert s_sharp(parts, "concatenated") == 2
