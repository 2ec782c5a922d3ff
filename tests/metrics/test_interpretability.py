"""IM1 and IM2 against a per-image numpy loop, closed cases and hypothesis properties."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from cfcheck.metrics.interpretability import im1, im2


def _loop_im1(c, rq, rp, eps=1e-8):
    return np.array([((ci - qi) ** 2).sum() / (((ci - pi) ** 2).sum() + eps) for ci, qi, pi in zip(c, rq, rp)])


def _loop_im2(c, rq, r, eps=1e-8):
    return np.array([((qi - ri) ** 2).sum() / (np.abs(ci).sum() + eps) for ci, qi, ri in zip(c, rq, r)])


@pytest.mark.parametrize("seed", range(5))
def test_im1_and_im2_match_a_per_image_loop(seed):
    g = torch.Generator().manual_seed(seed)
    c = torch.rand(7, 1, 6, 5, generator=g)
    rq, rp = c + 0.1 * torch.randn(c.shape, generator=g), c + 0.2 * torch.randn(c.shape, generator=g)
    np.testing.assert_allclose(
        im1(c, rq, rp).numpy(), _loop_im1(c.double().numpy(), rq.double().numpy(), rp.double().numpy()), rtol=1e-6
    )
    np.testing.assert_allclose(
        im2(c, rq, rp).numpy(), _loop_im2(c.double().numpy(), rq.double().numpy(), rp.double().numpy()), rtol=1e-6
    )


def test_closed_cases():
    c = torch.zeros(2, 1, 2, 2)
    c[1] = 1.0
    same = c + 0.5
    torch.testing.assert_close(im1(c, same, same, eps=0.0), torch.ones(2))  # equal reconstructions: ratio 1
    torch.testing.assert_close(im2(c, same, same), torch.zeros(2))  # the two autoencoders agree
    # image 1: ‖AE_q − AE‖² = 4·0.25 = 1 over ‖c‖₁ = 4
    torch.testing.assert_close(im2(c, c + 0.5, c)[1], torch.tensor(0.25))


def test_inputs_are_validated():
    c = torch.rand(2, 1, 4, 4)
    with pytest.raises(ValueError, match="c"):
        im1(c * 3, c, c)
    with pytest.raises(ValueError, match="shape"):
        im2(c, c[:1], c)
    with pytest.raises(ValueError, match="eps"):
        im1(c, c, c, eps=-1.0)


images = st.integers(1, 4).flatmap(
    lambda n: st.tuples(
        st.lists(st.floats(0, 1), min_size=n * 4, max_size=n * 4),
        st.lists(st.floats(-1, 2), min_size=n * 4, max_size=n * 4),
        st.lists(st.floats(-1, 2), min_size=n * 4, max_size=n * 4),
    )
)


@settings(max_examples=80, deadline=None)
@given(images, st.floats(0.1, 10.0))
def test_properties(data, k):
    c, a, b = (torch.tensor(v, dtype=torch.float64).view(-1, 1, 2, 2) for v in data)
    one, two = im1(c, a, b), im2(c, a, b)
    assert bool((one >= 0).all()) and bool((two >= 0).all())
    # IM1 with the reconstructions swapped is the reciprocal (where both errors are non-zero)
    swapped = im1(c, b, a)
    both = (((c - a) ** 2).flatten(1).sum(1) > 1e-3) & (((c - b) ** 2).flatten(1).sum(1) > 1e-3)
    torch.testing.assert_close(
        (one * swapped)[both].double(), torch.ones(int(both.sum()), dtype=torch.float64), rtol=1e-4, atol=1e-4
    )
    # IM2 scales with the square of the reconstructions' difference
    torch.testing.assert_close(
        im2(c, c + k * (a - c), c + k * (b - c)).double(), (k**2 * im2(c, a, b)).double(), rtol=1e-4, atol=1e-6
    )
