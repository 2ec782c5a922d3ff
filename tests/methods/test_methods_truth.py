"""Positive controls: the true counterfactual (with and without rejection) and a random target image."""

from __future__ import annotations

import pytest
import torch

from cfcheck.domains import get_domain
from cfcheck.kinds.vce.methods.truth import RandomTargetImage, TrueCounterfactual, TruthMixture, input_share


@pytest.fixture(scope="module")
def domain():
    return get_domain("morpho")


@pytest.fixture(scope="module")
def truth(domain):
    return TrueCounterfactual(domain)


class _Fixed(torch.nn.Module):
    """A classifier that predicts a fixed class for every image."""

    def __init__(self, cls: int) -> None:
        super().__init__()
        self.cls = cls

    def forward(self, x):
        logits = torch.zeros(len(x), 10)
        logits[:, self.cls] = 1.0
        return logits


def test_truth_rerenders_the_same_style_with_the_target_digit(domain, truth):
    test = domain.split("test")
    index = torch.tensor([3, 17, 256, 4999])
    target = (test.labels[index] + 1) % 10
    x_cf = truth.explain(test.images[index].clone(), target, _Fixed(0))
    factors = test.factors[index]
    # independent path: the SCM itself, with the digit replaced and every other factor kept
    expected = domain.true_counterfactual(factors, digit=target)
    assert torch.equal(x_cf, expected)
    # the target equal to the source digit reproduces the input exactly
    same = truth.explain(test.images[index].clone(), test.labels[index], _Fixed(0))
    assert torch.equal(same, test.images[index])


def test_truth_refuses_inputs_it_cannot_abduct(truth):
    with pytest.raises(ValueError, match="2 of 2 inputs are not test-split images"):
        truth.explain(torch.rand(2, 1, 32, 32), torch.tensor([1, 2]), _Fixed(0))


def test_truth_rejecting_abstains_exactly_where_the_classifier_disagrees(domain):
    test = domain.split("test")
    rejecting = TrueCounterfactual(domain, reject=True)
    index = torch.arange(20)
    target = torch.tensor([3, 5] * 10)
    x_cf, valid = rejecting.explain(test.images[index].clone(), target, _Fixed(3))
    assert valid.tolist() == (target == 3).tolist()
    assert x_cf.shape == (20, 1, 32, 32)


def test_random_target_draws_bank_images_of_the_target_class():
    gen = torch.Generator().manual_seed(0)
    bank = torch.rand(30, 1, 4, 4, generator=gen)
    labels = torch.arange(30) % 3
    method = RandomTargetImage(bank, labels)
    target = torch.tensor([0, 1, 2, 2, 1])
    out = method.explain(torch.rand(5, 1, 4, 4), target, _Fixed(0), generator=torch.Generator().manual_seed(1))
    for image, t in zip(out, target.tolist()):
        matches = [i for i in range(30) if torch.equal(bank[i], image)]
        assert matches and all(labels[i] == t for i in matches)
    again = method.explain(torch.rand(5, 1, 4, 4), target, _Fixed(0), generator=torch.Generator().manual_seed(1))
    assert torch.equal(out, again)
    with pytest.raises(ValueError, match="no image of target class 5"):
        RandomTargetImage(bank, labels).explain(torch.rand(1, 1, 4, 4), torch.tensor([5]), _Fixed(0))


def test_the_truth_mixture_gives_the_truth_for_its_share_of_inputs_whatever_the_batching(domain, truth):
    test = domain.split("test")
    x = test.images[:600].clone()
    target = (test.labels[:600] + 3) % 10
    full = truth.explain(x, target, _Fixed(0))
    for share in (0.0, 0.5, 0.8, 1.0):
        mixture = TruthMixture(domain, share)
        out = mixture.explain(x, target, _Fixed(0))
        right = (out == full).flatten(1).all(1)
        unchanged = (out == x).flatten(1).all(1)
        assert bool((right | unchanged).all())  # each input gets the truth or itself, nothing else
        # the share is a binomial draw over 600 inputs: within 4 standard deviations
        assert abs(float(right.double().mean()) - share) <= 4 * (share * (1 - share) / 600) ** 0.5 + 1e-9
        # one input at a time, or reversed: the same choice
        reversed_out = mixture.explain(x.flip(0), target.flip(0), _Fixed(0)).flip(0)
        assert torch.equal(out, reversed_out)
        assert torch.equal(
            out[:7], torch.cat([mixture.explain(x[i : i + 1], target[i : i + 1], _Fixed(0)) for i in range(7)])
        )
    # nested: an input chosen at 50 % is chosen at 80 %
    assert bool((input_share(x, 0.5) <= input_share(x, 0.8)).all())
    for bad in (-0.1, 1.5, True, "0.5"):
        with pytest.raises(ValueError, match="share"):
            TruthMixture(domain, bad)
