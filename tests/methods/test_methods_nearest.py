"""NearestTargetNeighbour: a real bank image of the target class that f also calls the target."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from cfcheck.kinds.vce.methods.nearest import NearestTargetNeighbour


class CountingClassifier(nn.Module):
    """Wraps a classifier and counts images it has classified (to observe the cache)."""

    def __init__(self, inner: nn.Module) -> None:
        super().__init__()
        self.inner = inner
        self.images_seen = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.images_seen += x.shape[0]
        return self.inner(x)


def _constant_bank(levels: list[float], labels: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
    """Bank of constant images; under the mean classifier, level ∈ [k/10, (k+1)/10) → class k."""
    images = torch.tensor(levels).view(-1, 1, 1, 1).expand(-1, 1, 32, 32).clone()
    return images, torch.tensor(labels)


def test_returns_the_nearest_eligible_bank_image(toys, mean_model: nn.Module) -> None:
    generator = torch.Generator().manual_seed(0)
    bank = torch.rand(300, 1, 32, 32, generator=generator)
    bank = bank * torch.rand(300, 1, 1, 1, generator=generator)  # means spread over many bins
    predictions = mean_model(bank).argmax(dim=1)
    # True labels agree with f on two thirds of the bank: the rest must never be returned.
    labels = torch.where(torch.arange(300) % 3 == 0, (predictions + 1) % 10, predictions)
    method = NearestTargetNeighbour(bank, labels, batch_size=7)
    x = toys.random_images(20, seed=1) * 0.5
    target = predictions[torch.randint(0, 300, (20,), generator=generator)]

    x_cf, valid = method.explain(x, target, mean_model)

    assert valid.all()
    for i in range(20):  # independent brute force, one input at a time
        eligible = [j for j in range(300) if labels[j] == target[i] and predictions[j] == target[i]]
        distances = torch.stack([(bank[j] - x[i]).norm() for j in eligible])
        returned = [j for j in eligible if torch.equal(bank[j], x_cf[i])]
        assert returned, "the output must be an eligible bank image"
        assert (x_cf[i] - x[i]).norm() == pytest.approx(distances.min().item(), rel=1e-5)
    assert torch.equal(mean_model(x_cf).argmax(dim=1), target)


def test_abstains_when_no_bank_image_is_eligible(mean_model: nn.Module) -> None:
    # class 2 exists only with a label the classifier disagrees with; class 5 not at all
    images, labels = _constant_bank([0.15, 0.25, 0.45, 0.75], [1, 3, 4, 7])
    method = NearestTargetNeighbour(images, labels)
    x = torch.full((4, 1, 32, 32), 0.5)
    target = torch.tensor([1, 2, 5, 7])

    x_cf, valid = method.explain(x, target, mean_model)

    assert valid.tolist() == [True, False, False, True]
    assert torch.equal(x_cf[1:3], x[1:3])  # abstentions return the input
    assert torch.equal(x_cf[0], images[0]) and torch.equal(x_cf[3], images[3])


def test_bank_predictions_are_cached_per_classifier(toys, mean_model: nn.Module) -> None:
    images, labels = _constant_bank([0.15, 0.25, 0.35], [1, 2, 3])
    method = NearestTargetNeighbour(images, labels, batch_size=2)
    counting = CountingClassifier(mean_model)
    x = toys.random_images(2, seed=2)
    method.explain(x, torch.tensor([1, 2]), counting)
    assert counting.images_seen == 3
    method.explain(x, torch.tensor([3, 3]), counting)
    assert counting.images_seen == 3  # the bank is not classified again

    other = CountingClassifier(mean_model)
    method.explain(x, torch.tensor([1, 2]), other)
    assert other.images_seen == 3  # a different classifier object has its own predictions


def test_cache_is_refreshed_when_weights_change_in_place(toys, linear_model: nn.Module) -> None:
    bank = toys.random_images(50, seed=3)
    method = NearestTargetNeighbour(bank, linear_model(bank).argmax(dim=1))
    before, _ = method.bank_predictions(linear_model, torch.device("cpu"))
    with torch.no_grad():
        linear_model[1].weight.neg_()  # e.g. a sanity check re-randomising the model in place
    after, _ = method.bank_predictions(linear_model, torch.device("cpu"))
    assert torch.equal(after, linear_model(bank).argmax(dim=1))
    assert not torch.equal(before, after)


def test_does_not_keep_classifiers_alive(mean_model: nn.Module) -> None:
    import gc
    import weakref

    images, labels = _constant_bank([0.15], [1])
    method = NearestTargetNeighbour(images, labels)
    classifier = CountingClassifier(mean_model)
    method.explain(torch.zeros(1, 1, 32, 32), torch.tensor([1]), classifier)
    reference = weakref.ref(classifier)
    del classifier
    gc.collect()
    assert reference() is None


def test_input_shape_must_match_the_bank(mean_model: nn.Module) -> None:
    images, labels = _constant_bank([0.15], [1])
    method = NearestTargetNeighbour(images, labels)
    with pytest.raises(ValueError, match=r"\(1, 32, 32\)"):
        method.explain(torch.zeros(1, 1, 28, 28), torch.tensor([1]), mean_model)


@pytest.mark.parametrize(
    ("images", "labels", "kwargs", "error", "match"),
    [
        (torch.zeros(0, 1, 32, 32), torch.zeros(0, dtype=torch.int64), {}, ValueError, "non-empty"),
        (torch.zeros(2, 1, 32, 32), torch.zeros(3, dtype=torch.int64), {}, ValueError, "`bank_labels` to have shape"),
        (torch.zeros(2, 1, 32, 32), torch.zeros(2), {}, TypeError, "`bank_labels` to have dtype torch.int64"),
        (
            torch.full((2, 1, 32, 32), 2.0),
            torch.zeros(2, dtype=torch.int64),
            {},
            ValueError,
            r"`bank_images` in \[0, 1\]",
        ),
        (torch.zeros(2, 1, 32, 32), torch.zeros(2, dtype=torch.int64), {"batch_size": 0}, ValueError, "batch_size"),
    ],
)
def test_rejects_a_bad_bank(images, labels, kwargs, error, match) -> None:
    with pytest.raises(error, match=match):
        NearestTargetNeighbour(images, labels, **kwargs)
