"""ROAD noisy linear imputation against a per-pixel-loop sparse system solved by scipy's
spsolve, the noise and kept pixels, removal masks against a sort, validation, properties."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from cfcheck.metrics import removal_solver
from cfcheck.metrics.removal import (
    DEFAULT_NOISE_STD,
    NEIGHBOUR_WEIGHTS,
    noisy_linear_imputation,
    removal_count,
    removal_mask,
)

DIRECT, DIAGONAL = 1 / 6, 1 / 12


def spsolve_imputation(image: np.ndarray, removed: np.ndarray) -> np.ndarray:
    """One C×H×W image, one H×W mask, written from the rule: for every removed pixel,
    (Σ in-image weights)·y_p − Σ removed neighbours w·y_q = Σ kept neighbours w·x_q."""
    channels, height, width = image.shape
    pixels = [(i, j) for i in range(height) for j in range(width) if removed[i, j]]
    number = {pixel: k for k, pixel in enumerate(pixels)}
    matrix = sp.lil_matrix((len(pixels), len(pixels)))
    rhs = np.zeros((len(pixels), channels))
    for k, (i, j) in enumerate(pixels):
        total = 0.0
        for di in (-1, 0, 1):
            for dj in (-1, 0, 1):
                if (di, dj) == (0, 0) or not (0 <= i + di < height and 0 <= j + dj < width):
                    continue
                weight = DIRECT if di == 0 or dj == 0 else DIAGONAL
                total += weight
                if removed[i + di, j + dj]:
                    matrix[k, number[(i + di, j + dj)]] -= weight
                else:
                    rhs[k] += weight * image[:, i + di, j + dj]
        matrix[k, k] = total
    out = image.copy()
    if pixels:
        solution = spla.spsolve(matrix.tocsc(), rhs).reshape(len(pixels), channels)
        for k, (i, j) in enumerate(pixels):
            out[:, i, j] = solution[k]
    return out


def expected_batch(x: torch.Tensor, mask: torch.Tensor) -> np.ndarray:
    """Per image (and per channel when the mask has one per channel)."""
    images, masks = x.double().numpy(), mask.numpy()
    out = np.empty_like(images)
    for n in range(len(images)):
        if masks.ndim == 3:
            out[n] = spsolve_imputation(images[n], masks[n])
        else:
            for c in range(images.shape[1]):
                out[n, c] = spsolve_imputation(images[n, c : c + 1], masks[n, c])[0]
    return out


def random_images(seed: int, shape: tuple[int, ...]) -> torch.Tensor:
    return torch.rand(shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def random_mask(seed: int, shape: tuple[int, ...], density: float) -> torch.Tensor:
    mask = torch.rand(shape, generator=torch.Generator().manual_seed(seed)) < density
    flat = mask.reshape(-1, shape[-2] * shape[-1])
    flat[flat.all(dim=1), 0] = False  # keep a pixel: a fully removed plane is refused
    return mask


def check_against_spsolve(x: torch.Tensor, mask: torch.Tensor, atol: float = 1e-8) -> torch.Tensor:
    result = noisy_linear_imputation(x, mask, noise_std=0.0)
    assert result.shape == x.shape and result.dtype == x.dtype
    np.testing.assert_allclose(result.double().numpy(), expected_batch(x, mask), atol=atol, rtol=0)
    return result


def test_the_rule_has_road_weights():
    assert sorted(NEIGHBOUR_WEIGHTS.values()) == [DIAGONAL] * 4 + [DIRECT] * 4
    assert all(abs(di) + abs(dj) == (1 if w == DIRECT else 2) for (di, dj), w in NEIGHBOUR_WEIGHTS.items())
    assert DEFAULT_NOISE_STD == 0.01


@pytest.mark.parametrize("density", [0.1, 0.5, 0.9])
def test_random_masks_match_spsolve(density):
    x = random_images(0, (5, 1, 9, 11))  # not square: rows and columns must not be swapped
    check_against_spsolve(x, random_mask(1, (5, 9, 11), density))


def test_float32_images_match_to_1e5():
    x = random_images(2, (4, 1, 12, 12)).float()
    check_against_spsolve(x, random_mask(3, (4, 12, 12), 0.5), atol=1e-5)


@pytest.mark.parametrize(("dtype", "atol"), [(torch.float64, 1e-8), (torch.float32, 1e-5)])
def test_masks_on_the_border_and_corners_match_spsolve(dtype, atol):
    x = random_images(4, (4, 1, 8, 10)).to(dtype)
    mask = torch.zeros(4, 8, 10, dtype=torch.bool)
    mask[0, [0, 0, -1, -1], [0, -1, 0, -1]] = True  # the four corners
    mask[1, 0, :] = mask[1, -1, :] = mask[1, :, 0] = mask[1, :, -1] = True  # the whole frame
    mask[2, :3, :3] = True  # a block in a corner
    mask[3] = True  # all but one interior pixel
    mask[3, 4, 5] = False
    check_against_spsolve(x, mask, atol)


def test_a_removed_row_or_column_matches_spsolve():
    x = random_images(5, (3, 1, 7, 9))
    mask = torch.zeros(3, 7, 9, dtype=torch.bool)
    mask[0, 3, :] = True  # every pixel of a row
    mask[1, :, 0] = True  # a border column
    mask[2, 0, :] = True  # the first row and a column: an L touching two borders
    mask[2, :, 4] = True
    check_against_spsolve(x, mask)


@pytest.mark.parametrize(("dtype", "atol"), [(torch.float64, 1e-8), (torch.float32, 1e-5)])
def test_three_channels_share_the_mask_or_have_their_own(dtype, atol):
    x = random_images(6, (3, 3, 8, 8)).to(dtype)
    shared = random_mask(7, (3, 8, 8), 0.6)
    result = check_against_spsolve(x, shared, atol)
    expanded = noisy_linear_imputation(x, shared.unsqueeze(1).expand(3, 3, 8, 8).clone(), noise_std=0.0)
    torch.testing.assert_close(result, expanded, atol=1e-12 if dtype == torch.float64 else 1e-6, rtol=0)
    check_against_spsolve(x, random_mask(8, (3, 3, 8, 8), 0.6), atol)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_large_contiguous_regions_match_spsolve_in_one_chunk_or_many(dtype, monkeypatch):
    """A removed disc and half image (many CG iterations) beside a random mask, in float64 (to
    1e-8) and float32 (to 1e-5); then in chunks of two planes, which must not change the result
    beyond the solver's tolerance."""
    x = random_images(9, (3, 1, 32, 32)).to(dtype)
    rows, cols = torch.meshgrid(torch.arange(32), torch.arange(32), indexing="ij")
    mask = torch.stack([(rows - 16) ** 2 + (cols - 16) ** 2 < 13**2, rows < 16, random_mask(20, (1, 32, 32), 0.5)[0]])
    whole = check_against_spsolve(x, mask, atol=1e-8 if dtype == torch.float64 else 1e-5)
    monkeypatch.setattr(removal_solver, "_CHUNK_PIXELS", 2 * 32 * 32)
    chunked = noisy_linear_imputation(x, mask, noise_std=0.0)
    torch.testing.assert_close(chunked, whole, atol=1e-9 if dtype == torch.float64 else 1e-5, rtol=0)


def test_large_float32_planes_are_solved_in_float64(monkeypatch):
    x = random_images(25, (2, 1, 16, 16))
    rows = torch.arange(16).view(16, 1).expand(16, 16)
    mask = torch.stack([rows < 14, random_mask(26, (1, 16, 16), 0.9)[0]])
    monkeypatch.setattr(removal_solver, "_FLOAT32_MAX_PIXELS", 16 * 16 - 1)
    result = noisy_linear_imputation(x.float(), mask, noise_std=0.0)
    assert result.dtype == torch.float32
    # float64 arithmetic: the float32 rounding of the float64 solve of the float32 values
    expected = noisy_linear_imputation(x.float().double(), mask, noise_std=0.0).float()
    torch.testing.assert_close(result, expected, atol=0, rtol=0)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_images_are_solved_in_float32(dtype):
    x = random_images(23, (2, 1, 8, 8))
    mask = random_mask(24, (2, 8, 8), 0.5)
    result = noisy_linear_imputation(x.to(dtype), mask, noise_std=0.0)
    assert result.dtype == dtype
    expected = noisy_linear_imputation(x.to(dtype).float(), mask, noise_std=0.0)
    torch.testing.assert_close(result, expected.to(dtype), atol=0, rtol=0)


@pytest.mark.parametrize("factor", [1e-200, 1e200])
def test_tiny_and_huge_images_scale_exactly(factor):
    x, mask = random_images(21, (2, 1, 9, 9)), random_mask(22, (2, 9, 9), 0.6)
    expected = noisy_linear_imputation(x, mask, noise_std=0.0) * factor
    torch.testing.assert_close(noisy_linear_imputation(x * factor, mask, noise_std=0.0), expected, atol=0, rtol=1e-9)


def test_kept_pixels_are_returned_untouched_and_noise_only_on_removed():
    x = random_images(10, (4, 3, 16, 16)).float()
    mask = random_mask(11, (4, 16, 16), 0.4)
    result = noisy_linear_imputation(x, mask, generator=torch.Generator().manual_seed(0))
    kept = ~mask.unsqueeze(1).expand_as(x)
    assert torch.equal(result[kept], x[kept])
    assert result.data_ptr() != x.data_ptr()


def test_noise_has_the_stated_standard_deviation():
    x = random_images(12, (8, 1, 32, 32))
    mask = random_mask(13, (8, 32, 32), 0.9)
    clean = noisy_linear_imputation(x, mask, noise_std=0.0)
    for std in (DEFAULT_NOISE_STD, 0.1):
        kwargs = {} if std == DEFAULT_NOISE_STD else {"noise_std": std}
        noisy = noisy_linear_imputation(x, mask, generator=torch.Generator().manual_seed(1), **kwargs)
        noise = (noisy - clean)[mask.unsqueeze(1)].numpy()
        count = noise.size  # ≈ 7,400: the sample std is within 3 % of std with ≫ 5σ margin
        assert count > 7000
        assert abs(noise.std() / std - 1) < 0.03
        assert abs(noise.mean()) < 5 * std / np.sqrt(count)


def test_the_generator_makes_the_noise_reproducible():
    x, mask = random_images(14, (2, 1, 6, 6)), random_mask(15, (2, 6, 6), 0.5)
    first = noisy_linear_imputation(x, mask, generator=torch.Generator().manual_seed(3))
    again = noisy_linear_imputation(x, mask, generator=torch.Generator().manual_seed(3))
    other = noisy_linear_imputation(x, mask, generator=torch.Generator().manual_seed(4))
    assert torch.equal(first, again) and not torch.equal(first, other)


def test_a_mask_without_removed_pixels_returns_the_images():
    x = random_images(16, (2, 2, 5, 5))
    result = noisy_linear_imputation(x, torch.zeros(2, 5, 5, dtype=torch.bool))
    assert torch.equal(result, x)


# -- removal masks --------------------------------------------------------------------------


def sorted_mask(scores: np.ndarray, count: int, order: str) -> np.ndarray:
    """Rank by value (descending for MoRF), ties by raster index, with numpy's lexsort."""
    out = np.zeros(scores.shape, dtype=bool)
    for n, plane in enumerate(scores.reshape(len(scores), -1)):
        key = -plane if order == "morf" else plane
        chosen = np.lexsort((np.arange(plane.size), key))[:count]
        out[n].reshape(-1)[chosen] = True
    return out


@pytest.mark.parametrize("order", ["morf", "lerf"])
@pytest.mark.parametrize("fraction", [0.0, 0.1, 0.25, 0.5, 0.77, 1.0])
def test_removal_mask_picks_the_sorted_pixels(order, fraction):
    # integer values give many ties, so the raster-order tie-break is exercised
    attribution = torch.randint(0, 5, (6, 7, 9), generator=torch.Generator().manual_seed(17)).double()
    mask = removal_mask(attribution, fraction, order)
    count = round(fraction * 63)
    assert mask.dtype == torch.bool and mask.shape == (6, 7, 9)
    assert (mask.flatten(1).sum(dim=1) == count).all()
    np.testing.assert_array_equal(mask.numpy(), sorted_mask(attribution.numpy(), count, order))


def test_removal_mask_sums_channels_and_accepts_upper_case():
    attribution = torch.randn(3, 3, 8, 8, generator=torch.Generator().manual_seed(18))
    summed = removal_mask(attribution.sum(dim=1), 0.3, "morf")
    assert torch.equal(removal_mask(attribution, 0.3, "MoRF"), summed)
    assert removal_count(0.3, 64) == 19 and removal_count(0.5, 3) == 2 and removal_count(0.5, 5) == 2


def test_morf_and_lerf_are_complements_without_ties():
    attribution = torch.randn(4, 10, 10, generator=torch.Generator().manual_seed(19))
    assert torch.equal(removal_mask(attribution, 0.3, "morf"), ~removal_mask(attribution, 0.7, "lerf"))


# -- the random tie-break (ROAD's) ----------------------------------------------------------


def ties_attribution(seed: int) -> torch.Tensor:
    """Like integrated gradients on a digit: most values exactly 0, a few distinct non-zero."""
    generator = torch.Generator().manual_seed(seed)
    values = torch.randn(5, 8, 8, generator=generator, dtype=torch.float64)
    return torch.where(torch.rand(5, 8, 8, generator=generator) < 0.8, torch.zeros_like(values), values)


@pytest.mark.parametrize("order", ["morf", "lerf"])
@pytest.mark.parametrize("fraction", [0.1, 0.5, 0.9])
def test_random_ties_keep_the_ranking_between_distinct_values(order, fraction):
    attribution = ties_attribution(21)
    mask = removal_mask(attribution, fraction, order, tie_seed=3)
    count = round(fraction * 64)
    assert (mask.flatten(1).sum(dim=1) == count).all()
    for plane, removed in zip(attribution.flatten(1), mask.flatten(1)):
        key = plane if order == "morf" else -plane
        # every removed value ranks at least as high as every kept one; only exact ties are reordered
        assert key[removed].min() >= key[~removed].max()


def test_random_ties_are_reproducible_nested_and_change_with_the_seed():
    attribution = ties_attribution(22)
    masks = [removal_mask(attribution, f, "lerf", tie_seed=5) for f in (0.2, 0.4, 0.6)]
    assert torch.equal(masks[1], removal_mask(attribution, 0.4, "lerf", tie_seed=5))
    assert bool((masks[0] <= masks[1]).all() and (masks[1] <= masks[2]).all())  # nested across fractions
    assert not torch.equal(masks[1], removal_mask(attribution, 0.4, "lerf", tie_seed=6))
    # without ties the seed changes nothing: the tie-break is all it does
    distinct = torch.randn(4, 9, 9, generator=torch.Generator().manual_seed(23), dtype=torch.float64)
    assert torch.equal(removal_mask(distinct, 0.3, "morf", tie_seed=1), removal_mask(distinct, 0.3, "morf"))


def test_random_ties_remove_every_tied_pixel_equally_often():
    # one image whose 64 values all tie: a quarter removed per seed; over 400 seeds each pixel's
    # count is Binomial(400, 1/4) if the order is uniform (the raster tie-break removes the first
    # 16 pixels every time); Pearson's χ² over the 64 counts against scipy's 64 − 1 d.o.f.
    from scipy import stats

    flat = torch.zeros(1, 8, 8, dtype=torch.float64)
    counts = sum(removal_mask(flat, 0.25, "morf", tie_seed=seed).double() for seed in range(400)).flatten()
    expected = 400 * 0.25
    chi2 = float(((counts - expected) ** 2 / expected).sum())
    assert stats.chi2.sf(chi2, df=63) > 1e-3, counts
    assert float(removal_mask(flat, 0.25, "morf").flatten()[:16].sum()) == 16  # raster: the top two rows


@pytest.mark.parametrize("tie_seed", [1.5, "3", True])
def test_tie_seed_must_be_an_int(tie_seed):
    with pytest.raises(TypeError, match="`tie_seed` must be an int or None"):
        removal_mask(torch.rand(1, 4, 4), 0.5, "morf", tie_seed=tie_seed)


# -- validation -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("x", "mask", "kwargs", "error", "match"),
    [
        (torch.rand(2, 5, 5), torch.zeros(2, 5, 5, dtype=torch.bool), {}, ValueError, "`x` must be 4-D"),
        (
            torch.ones(1, 1, 3, 3, dtype=torch.int64),
            torch.zeros(1, 3, 3, dtype=torch.bool),
            {},
            TypeError,
            "floating-point",
        ),
        (torch.full((1, 1, 3, 3), float("nan")), torch.zeros(1, 3, 3, dtype=torch.bool), {}, ValueError, "NaN"),
        (torch.rand(1, 1, 3, 3), torch.zeros(1, 3, 3), {}, TypeError, "mask == 0"),
        (torch.rand(2, 1, 3, 3), torch.zeros(1, 3, 3, dtype=torch.bool), {}, ValueError, r"N×H×W \(2, 3, 3\)"),
        (torch.rand(1, 1, 3, 3), torch.zeros(1, 3, 3, dtype=torch.bool), {"noise_std": -0.1}, ValueError, "noise_std"),
        (
            torch.rand(1, 1, 3, 3),
            torch.zeros(1, 3, 3, dtype=torch.bool),
            {"generator": 0},
            TypeError,
            "torch.Generator",
        ),
        (
            torch.rand(3, 1, 3, 3),
            torch.tensor([[[False] * 3] * 3, [[True] * 3] * 3, [[False] * 3] * 3]),
            {},
            ValueError,
            r"every pixel of image\(s\) \[1\]",
        ),
    ],
)
def test_imputation_arguments_are_validated(x, mask, kwargs, error, match):
    with pytest.raises(error, match=match):
        noisy_linear_imputation(x, mask, **kwargs)


@pytest.mark.parametrize(
    ("attribution", "fraction", "order", "error", "match"),
    [
        (torch.rand(4, 4), 0.5, "morf", ValueError, "N×H×W or N×C×H×W"),
        (torch.rand(1, 4, 4), 1.5, "morf", ValueError, r"`fraction` must lie in \[0, 1\]"),
        (torch.rand(1, 4, 4), -0.1, "morf", ValueError, "`fraction` must be >= 0"),
        (torch.rand(1, 4, 4), 0.5, "random", ValueError, "'morf' or 'lerf'"),
        (torch.full((1, 4, 4), float("nan")), 0.5, "morf", ValueError, "NaN"),
        (torch.ones(1, 4, 4, dtype=torch.int64), 0.5, "morf", TypeError, "floating-point"),
    ],
)
def test_removal_mask_arguments_are_validated(attribution, fraction, order, error, match):
    with pytest.raises(error, match=match):
        removal_mask(attribution, fraction, order)


# -- properties -----------------------------------------------------------------------------

cases = st.tuples(
    st.integers(1, 3),
    st.integers(1, 2),
    st.integers(1, 7),
    st.integers(1, 7),
    st.floats(0.0, 1.0),
    st.integers(0, 2**16),
)


def draw(case):
    n, channels, height, width, density, seed = case
    return random_images(seed, (n, channels, height, width)), random_mask(seed + 1, (n, height, width), density)


@settings(max_examples=40, deadline=None)
@given(case=cases, level=st.floats(-5, 5))
def test_a_constant_image_stays_constant(case, level):
    x, mask = draw(case)
    result = noisy_linear_imputation(torch.full_like(x, level), mask, noise_std=0.0)
    torch.testing.assert_close(result, torch.full_like(x, level), atol=1e-9, rtol=0)


@settings(max_examples=40, deadline=None)
@given(case=cases, a=st.floats(-3, 3), b=st.floats(-3, 3))
def test_imputation_is_linear_in_the_image_and_within_the_kept_range(case, a, b):
    x, mask = draw(case)
    other = random_images(case[-1] + 2, tuple(x.shape))
    result = noisy_linear_imputation(x, mask, noise_std=0.0)
    combined = noisy_linear_imputation(a * x + b * other, mask, noise_std=0.0)
    expected = a * result + b * noisy_linear_imputation(other, mask, noise_std=0.0)
    torch.testing.assert_close(combined, expected, atol=1e-8, rtol=0)
    # each imputed value is a convex combination of kept values (discrete maximum principle)
    for n in range(x.shape[0]):
        kept = x[n][:, ~mask[n]]
        low, high = kept.min(dim=1).values, kept.max(dim=1).values
        assert bool((result[n] >= low[:, None, None] - 1e-9).all() and (result[n] <= high[:, None, None] + 1e-9).all())


@settings(max_examples=25, deadline=None)
@given(case=cases)
def test_each_image_is_imputed_on_its_own(case):
    x, mask = draw(case)
    batched = noisy_linear_imputation(x, mask, noise_std=0.0)
    single = torch.cat([noisy_linear_imputation(x[i : i + 1], mask[i : i + 1], noise_std=0.0) for i in range(len(x))])
    torch.testing.assert_close(batched, single, atol=1e-9, rtol=0)


@settings(max_examples=40, deadline=None)
@given(case=cases, channels=st.integers(1, 3), per_channel=st.booleans(), single=st.booleans())
def test_random_masks_match_spsolve_property(case, channels, per_channel, single):
    """Any shape (1×1 to 7×7, so masks touch the border), 1–3 channels sharing a mask or each
    with its own, float64 to 1e-8 and float32 to 1e-5."""
    n, _, height, width, density, seed = case
    x = random_images(seed, (n, channels, height, width))
    mask = random_mask(seed + 1, (n, channels, height, width) if per_channel else (n, height, width), density)
    if single:
        check_against_spsolve(x.float(), mask, atol=1e-5)
    else:
        check_against_spsolve(x, mask)
