"""COUT against a loop written from its definition, and its properties."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from cfcheck.metrics.transition import counterfactual_transition, insertion_path

WEIGHTS = torch.randn(3, 2 * 4 * 4, generator=torch.Generator().manual_seed(0))


def linear_softmax(images: torch.Tensor) -> torch.Tensor:
    return (images.flatten(1) @ WEIGHTS.T).softmax(1)


def loop_cout(x: np.ndarray, c: np.ndarray, source: int, target: int, steps: int) -> float:
    """One input, step by step: rank |c − x| (stable, largest first), insert, classify, integrate."""
    flat_x, flat_c = x.reshape(-1), c.reshape(-1)
    order = sorted(range(flat_x.size), key=lambda i: (-abs(flat_c[i] - flat_x[i]), i))
    gaps = []
    for k in range(steps + 1):
        count = int(np.round(k * flat_x.size / steps))
        image = flat_x.copy()
        image[order[:count]] = flat_c[order[:count]]
        p = linear_softmax(torch.from_numpy(image.reshape(1, *x.shape)).float())[0].double().numpy()
        gaps.append(p[target] - p[source])
    return float(np.trapezoid(gaps, dx=1.0 / steps))


images = st.integers(0, 2**16).map(lambda seed: torch.rand(3, 2, 4, 4, generator=torch.Generator().manual_seed(seed)))


@settings(max_examples=25, deadline=None)
@given(x=images, c=images, steps=st.sampled_from([1, 3, 20]), seed=st.integers(0, 100))
def test_cout_equals_a_loop_over_its_definition(x, c, steps, seed):
    rng = np.random.default_rng(seed)
    source, target = torch.from_numpy(rng.integers(0, 3, 3)), torch.from_numpy(rng.integers(0, 3, 3))
    result = counterfactual_transition(x, c, source, target, linear_softmax, steps=steps)
    expected = [loop_cout(x[i].numpy(), c[i].numpy(), int(source[i]), int(target[i]), steps) for i in range(3)]
    np.testing.assert_allclose(result.numpy(), expected, atol=1e-5)
    assert bool(((result >= -1) & (result <= 1)).all())


def test_cout_of_an_unchanged_input_is_the_constant_gap_and_the_path_ends_at_c():
    x = torch.rand(2, 2, 4, 4, generator=torch.Generator().manual_seed(1))
    p = linear_softmax(x)
    source, target = torch.tensor([0, 1]), torch.tensor([2, 0])
    result = counterfactual_transition(x, x.clone(), source, target, linear_softmax)
    expected = p[torch.arange(2), target] - p[torch.arange(2), source]
    torch.testing.assert_close(result, expected, atol=1e-6, rtol=0)
    c = torch.rand(2, 2, 4, 4, generator=torch.Generator().manual_seed(2))
    path = insertion_path(x, c, steps=5)
    assert path.shape == (2, 6, 2, 4, 4) and torch.equal(path[:, 0], x) and torch.equal(path[:, -1], c)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"source": torch.tensor([0, 5])}, ValueError, "num_classes=3"),
        ({"target": torch.tensor([0])}, ValueError, "N = 2"),
        ({"probabilities": lambda images: torch.ones(3)}, ValueError, "M×K"),
        ({"steps": 0}, ValueError, "steps"),
        ({"c": torch.rand(2, 1, 4, 4)}, ValueError, "same shape"),
    ],
)
def test_cout_validation(kwargs, error, match):
    arguments = {
        "x": torch.rand(2, 2, 4, 4),
        "c": torch.rand(2, 2, 4, 4),
        "source": torch.tensor([0, 1]),
        "target": torch.tensor([1, 0]),
        "probabilities": linear_softmax,
        **kwargs,
    }
    steps = arguments.pop("steps", 20)
    with pytest.raises(error, match=match):
        counterfactual_transition(**arguments, steps=steps)
