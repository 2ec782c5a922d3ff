"""Runtime (and headline behaviour) of the reference methods on morpho test images.

    OMP_NUM_THREADS=1 pytest benchmarks/test_methods.py --benchmark-only

16 test images of every digit by default (``--bench-n N``: N/10 per digit), a seeded random
other class as target, in batches of 128 as the suites call methods. The explained classifier is
the bundled reference model ``cnn`` (~81k parameters) when it loads; otherwise a randomly
initialised CNN of about 100k parameters stands in (runtime only: its behaviour figures then say
nothing about validity). Each method is timed over 3 rounds; images per second are those of the
median round. Recorded beside them: coverage (non-abstained share), the target accuracy of f,
mean L1 / L2 / L∞ distance to the input and the oracle committee's target accuracy (OTA;
abstentions count as misses). The nearest-neighbour bank (10,000 train images; max(500, N)
with ``--bench-n``) is classified once outside the timing; that one-off cost is recorded as
``bank_seconds``.
"""

from __future__ import annotations

import time

import pytest
import torch
from torch import nn

from cfcheck.domains.morpho import load_split
from cfcheck.kinds.vce.methods.adversarial import TargetedPGD
from cfcheck.kinds.vce.methods.controls import IdentityControl, UniformNoiseControl
from cfcheck.kinds.vce.methods.nearest import NearestTargetNeighbour
from cfcheck.kinds.vce.methods.wachter import WachterCounterfactual

BATCH_SIZE = 128
SEED = 0


def stand_in_cnn(seed: int = 0) -> nn.Module:
    """A randomly initialised CNN of ~100k parameters, frozen and in eval mode."""
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        model = nn.Sequential(
            nn.Conv2d(1, 32, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(64, 64, 3, padding=1),
            nn.ReLU(),
            nn.AdaptiveAvgPool2d(2),
            nn.Flatten(),
            nn.Linear(256, 64),
            nn.ReLU(),
            nn.Linear(64, 10),
        )
    model.eval()
    for parameter in model.parameters():
        parameter.requires_grad_(False)
    return model


def load_models() -> tuple[nn.Module, list[nn.Module]]:
    """The reference classifier and oracle committee, or the stand-in and no oracles."""
    try:
        from cfcheck.models.registry import available_models, load_model

        oracles = [load_model(name, domain="morpho") for name in available_models("morpho", role="oracle")]
        return load_model("cnn", domain="morpho"), oracles
    except Exception as error:  # noqa: BLE001 - any failure falls back to the stand-in
        print(f"reference models unavailable ({type(error).__name__}: {error}): a random stand-in CNN")
        return stand_in_cnn(), []


def select_inputs(n_per_class: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``n_per_class`` test images of every digit and a random other class as target."""
    test = load_split("test", n=max(2000, 40 * n_per_class))
    rows = torch.cat([(test.labels == c).nonzero().squeeze(1)[:n_per_class] for c in range(10)])
    generator = torch.Generator().manual_seed(seed)
    shift = torch.randint(1, 10, (len(rows),), generator=generator)
    return test.images[rows], (test.labels[rows] + shift) % 10


def run_method(method, x, target, classifier):
    generator = torch.Generator().manual_seed(SEED)
    outputs, masks = [], []
    for start in range(0, len(x), BATCH_SIZE):
        out = method.explain(
            x[start : start + BATCH_SIZE], target[start : start + BATCH_SIZE], classifier, generator=generator
        )
        x_cf, valid = out if isinstance(out, tuple) else (out, torch.ones(len(out), dtype=torch.bool))
        outputs.append(x_cf)
        masks.append(valid)
    return torch.cat(outputs), torch.cat(masks)


@pytest.fixture(scope="module")
def setting(size):
    classifier, oracles = load_models()
    x, target = select_inputs(max(1, size(160) // 10), SEED)
    bank = load_split("train", n=max(500, size(10_000)))
    nearest = NearestTargetNeighbour(bank.images, bank.labels)
    started = time.perf_counter()
    nearest.bank_predictions(classifier, torch.device("cpu"))
    methods = {
        "identity": IdentityControl(),
        "noise": UniformNoiseControl(),
        "pgd eps.1": TargetedPGD(eps=0.1),
        "pgd eps.15": TargetedPGD(eps=0.15),  # the fixture's setting
        "nearest": nearest,
        "wachter": WachterCounterfactual(),
    }
    return classifier, oracles, x, target, methods, time.perf_counter() - started


@pytest.mark.parametrize("name", ["identity", "noise", "pgd eps.1", "pgd eps.15", "nearest", "wachter"])
def test_method(benchmark, figures, setting, name):
    classifier, oracles, x, target, methods, bank_seconds = setting
    benchmark.group = "methods"
    x_cf, valid = benchmark.pedantic(run_method, args=(methods[name], x, target, classifier), rounds=3, iterations=1)
    figures.rate("img_per_s", len(x), statistic="median")
    with torch.no_grad():
        hits = (classifier(x_cf).argmax(dim=1) == target) & valid
        votes = [(oracle(x_cf).argmax(dim=1) == target) & valid for oracle in oracles]
    delta = (x_cf - x).flatten(1)
    figures.record("coverage", valid.float().mean().item())
    figures.record("target_accuracy_f", hits.float().mean().item())
    if votes:
        figures.record("ota", torch.stack(votes).float().mean().item())
    figures.record("mean_l1", delta.abs().sum(1).mean().item())
    figures.record("mean_l2", delta.norm(dim=1).mean().item())
    figures.record("mean_linf", delta.abs().amax(1).mean().item())
    if name == "nearest":
        figures.record("bank_seconds", bank_seconds, "s (classifying the 10,000-image bank once)")
