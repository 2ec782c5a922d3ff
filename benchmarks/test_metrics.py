"""Throughput of the image metrics on morpho-sized images (N×1×32×32, 1,000 by default).

    OMP_NUM_THREADS=1 pytest benchmarks/test_metrics.py --benchmark-only

A small stand-in conv feature network (16/32/64 channels, three layers) keeps the figures
independent of trained weights; the bundled domain network has a similar size. Each metric is
timed over 5 rounds after one warm-up round and its images per second are those of the median
round; the FID bootstrap CI (200 resamples) over 3 rounds. Speed targets are read from here,
never asserted.
"""

from __future__ import annotations

import pytest
import torch
from torch import nn

from cfcheck.metrics import (
    bootstrap_set_ci,
    elastic_net_distance,
    fid,
    fid_torchmetrics,
    kid,
    minkowski_distance,
    pairwise_diversity,
    perceptual_distance,
)

RESAMPLES = 200


class SmallConvFeatures(nn.Module):
    """Three conv layers; ``feature_maps`` for perceptual distance, ``forward`` = 64-d embedding."""

    num_features = 64

    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.ModuleList(
            [
                nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU()),
                nn.Sequential(nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.ReLU()),
                nn.Sequential(nn.Conv2d(32, 64, 3, stride=2, padding=1), nn.ReLU()),
            ]
        )

    def feature_maps(self, x: torch.Tensor) -> list[torch.Tensor]:
        maps = []
        for layer in self.layers:
            x = layer(x)
            maps.append(x)
        return maps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.feature_maps(x)[-1].mean(dim=(2, 3))


@pytest.fixture(scope="module")
def data(size):
    n = size(1000)
    torch.manual_seed(0)
    net = SmallConvFeatures().eval()
    gen = torch.Generator().manual_seed(0)
    x = torch.rand(n, 1, 32, 32, generator=gen)
    c = (x + 0.1 * torch.randn(n, 1, 32, 32, generator=gen)).clamp(0, 1)
    cfs = torch.rand(n, 3, 1, 32, 32, generator=gen)
    with torch.no_grad():
        feats_x, feats_c = net(x).numpy(), net(c).numpy()
    return n, net, x, c, cfs, feats_x, feats_c


def cases(n, net, x, c, cfs, feats_x, feats_c):
    """name: (function, images it handles)."""

    def perceptual():
        with torch.no_grad():
            return perceptual_distance(x, c, net.feature_maps)

    def diversity():
        with torch.no_grad():
            return pairwise_diversity(cfs, lambda a, b: perceptual_distance(a, b, net.feature_maps))

    def forward_only():
        with torch.no_grad():
            return net.feature_maps(x), net.feature_maps(c)

    return {
        "feature_maps forward on x and c (reference)": (forward_only, n),
        "minkowski_distance p=1.5": (lambda: minkowski_distance(x, c, 1.5), n),
        "elastic_net_distance": (lambda: elastic_net_distance(x, c), n),
        "perceptual_distance (3 layers)": (perceptual, n),
        "pairwise_diversity K=3 (perceptual)": (diversity, n),
        "fid_torchmetrics (embed 2n + FID)": (lambda: fid_torchmetrics(x, c, net), 2 * n),
        "fid on 64-d features": (lambda: fid(feats_x, feats_c), 2 * n),
        "kid on 64-d features (100 subsets)": (lambda: kid(feats_x, feats_c), 2 * n),
    }


NAMES = list(cases(0, *[None] * 6))


@pytest.mark.parametrize("name", NAMES)
def test_metric(benchmark, figures, data, name):
    work, images = cases(*data)[name]
    benchmark.group = "metrics"
    benchmark.pedantic(work, rounds=5, iterations=1, warmup_rounds=1)
    figures.rate("img_per_s", images, statistic="median")
    seconds = figures.seconds("median")
    if name.startswith("fid on") and seconds is not None:
        figures.record("ms_per_call", 1000 * seconds, "ms")


def test_fid_bootstrap_ci(benchmark, figures, data):
    *_, feats_x, feats_c = data
    benchmark.group = "metrics"
    low, high = benchmark.pedantic(
        lambda: bootstrap_set_ci(feats_x, feats_c, fid, n_resamples=RESAMPLES), rounds=3, iterations=1
    )
    assert low <= high
    seconds = figures.seconds("median")
    if seconds is not None:
        figures.record(f"seconds_{RESAMPLES}_resamples", seconds, "s")
        figures.record("ms_per_resample", 1000 * seconds / RESAMPLES, "ms")
