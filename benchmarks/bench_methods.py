"""Runtime (and headline behaviour) of the reference methods on 160 morpho test images.

Run:  python benchmarks/bench_methods.py [--n-per-class 16] [--repeats 3] [--threads 1]
                                         [--classifier cnn] [--batch-size 128]

The explained classifier is the bundled reference model (``cnn``: ~81k parameters) when it
loads; otherwise a randomly initialised CNN of about 100k parameters stands in (runtime
only: its numbers say nothing about validity). Targets are a seeded random other class.
For each method it prints the median wall time over repeats for all inputs (in batches of
``--batch-size``, as the suites call methods), throughput, and what the outputs look like:
coverage (non-abstained share), target accuracy of f, mean L1 / L2 / L∞ distance to the
input, and the oracle committee's target accuracy (OTA; abstentions count as misses).
The nearest-neighbour bank (10,000 train images) is built once, outside the timing; its
one-off cost of classifying the bank is reported separately. Speed targets are read
from here, never asserted.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
from torch import nn

from cfcheck.domains.morpho import load_split
from cfcheck.methods import (
    IdentityControl,
    NearestTargetNeighbour,
    TargetedPGD,
    UniformNoiseControl,
    WachterCounterfactual,
)


def stand_in_cnn(seed: int = 0) -> nn.Module:
    """A randomly initialised CNN of ~100k parameters, frozen and in eval mode."""
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        model = nn.Sequential(
            nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(64, 64, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(2),
            nn.Flatten(), nn.Linear(256, 64), nn.ReLU(), nn.Linear(64, 10),
        )
    model.eval()
    for parameter in model.parameters():
        parameter.requires_grad_(False)
    return model


def load_classifier(name: str) -> tuple[nn.Module, str]:
    try:
        from cfcheck.models.registry import load_model

        return load_model(name, domain="morpho"), f"reference model {name!r}"
    except Exception as error:  # noqa: BLE001 - any failure falls back to the stand-in
        return stand_in_cnn(), f"randomly initialised stand-in CNN ({type(error).__name__}: {error})"


def load_oracles() -> list[nn.Module]:
    """The bundled oracle committee, or none when the reference models are not available."""
    try:
        from cfcheck.models.registry import available_models, load_model

        return [load_model(name, domain="morpho") for name in available_models("morpho", role="oracle")]
    except Exception:  # noqa: BLE001 - the OTA column is then left out
        return []


def select_inputs(n_per_class: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``n_per_class`` test images of every digit and a random other class as target."""
    test = load_split("test", n=max(2000, 40 * n_per_class))
    rows = torch.cat([(test.labels == c).nonzero().squeeze(1)[:n_per_class] for c in range(10)])
    generator = torch.Generator().manual_seed(seed)
    shift = torch.randint(1, 10, (len(rows),), generator=generator)
    return test.images[rows], (test.labels[rows] + shift) % 10


def run_method(method, x, target, classifier, batch_size: int, seed: int):
    generator = torch.Generator().manual_seed(seed)
    outputs, masks = [], []
    for start in range(0, len(x), batch_size):
        out = method.explain(x[start : start + batch_size], target[start : start + batch_size], classifier,
                             generator=generator)
        x_cf, valid = out if isinstance(out, tuple) else (out, torch.ones(len(out), dtype=torch.bool))
        outputs.append(x_cf)
        masks.append(valid)
    return torch.cat(outputs), torch.cat(masks)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n-per-class", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--classifier", default="cnn")
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    classifier, described = load_classifier(args.classifier)
    parameters = sum(p.numel() for p in classifier.parameters())
    oracles = load_oracles()
    x, target = select_inputs(args.n_per_class, args.seed)
    print(f"oracle committee: {len(oracles)} model(s) (OTA = share of oracle votes for the target)")
    print(f"classifier: {described}, {parameters:,} parameters; {len(x)} inputs; "
          f"torch {torch.__version__}, {torch.get_num_threads()} thread(s), batch {args.batch_size}")

    bank = load_split("train", n=10000)
    nearest = NearestTargetNeighbour(bank.images, bank.labels)
    started = time.perf_counter()
    nearest.bank_predictions(classifier, torch.device("cpu"))
    print(f"nearest: classifying the 10,000-image bank once took {time.perf_counter() - started:.2f} s")

    methods = {
        "identity": IdentityControl(),
        "noise": UniformNoiseControl(),
        "pgd eps.1": TargetedPGD(eps=0.1),
        "pgd eps.15": TargetedPGD(eps=0.15),  # the fixture's setting
        "nearest": nearest,
        "wachter": WachterCounterfactual(),
    }
    header = (f"{'method':<12}{'median s':>10}{'img/s':>9}{'coverage':>10}{'TA(f)':>8}"
              f"{'L1':>9}{'L2':>8}{'Linf':>7}{'OTA':>7}")
    print(header)
    print("-" * len(header))
    for name, method in methods.items():
        times = []
        for _ in range(args.repeats):
            started = time.perf_counter()
            x_cf, valid = run_method(method, x, target, classifier, args.batch_size, args.seed)
            times.append(time.perf_counter() - started)
        with torch.no_grad():
            hits = (classifier(x_cf).argmax(dim=1) == target) & valid
            votes = [(oracle(x_cf).argmax(dim=1) == target) & valid for oracle in oracles]
        ota = torch.stack(votes).float().mean().item() if votes else float("nan")
        delta = (x_cf - x).flatten(1)
        median = statistics.median(times)
        print(f"{name:<12}{median:>10.3f}{len(x) / median:>9.0f}{valid.float().mean():>10.3f}"
              f"{hits.float().mean():>8.3f}{delta.abs().sum(1).mean():>9.2f}"
              f"{delta.norm(dim=1).mean():>8.2f}{delta.abs().amax(1).mean():>7.3f}{ota:>7.3f}")


if __name__ == "__main__":
    main()
