"""Throughput of the image metrics on 1000 morpho-sized images (N×1×32×32) on CPU.

Run:  python benchmarks/bench_metrics.py [--n 1000] [--repeats 5] [--threads 2]

Uses a small stand-in conv feature network (16/32/64 channels, three layers) so the
numbers do not depend on trained weights; the bundled domain network has a similar
size. Reports the median over repeats; speed targets are read from here, never asserted.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

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


def _median_seconds(fn: Callable[[], object], repeats: int) -> float:
    fn()  # warm-up (allocations, lazy imports)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=1000, help="images per set")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=None, help="torch.set_num_threads (default: torch's)")
    parser.add_argument("--bootstrap", type=int, default=200, help="resamples for the FID bootstrap timing")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)

    torch.manual_seed(0)
    net = SmallConvFeatures().eval()
    gen = torch.Generator().manual_seed(0)
    x = torch.rand(args.n, 1, 32, 32, generator=gen)
    c = (x + 0.1 * torch.randn(args.n, 1, 32, 32, generator=gen)).clamp(0, 1)
    cfs = torch.rand(args.n, 3, 1, 32, 32, generator=gen)
    with torch.no_grad():
        feats_x, feats_c = net(x).numpy(), net(c).numpy()

    def perceptual() -> object:
        with torch.no_grad():
            return perceptual_distance(x, c, net.feature_maps)

    def diversity() -> object:
        with torch.no_grad():
            return pairwise_diversity(cfs, lambda a, b: perceptual_distance(a, b, net.feature_maps))

    def forward_only() -> object:
        with torch.no_grad():
            return net.feature_maps(x), net.feature_maps(c)

    cases: list[tuple[str, Callable[[], object], int]] = [
        ("(reference) feature_maps forward on x and c", forward_only, args.n),
        ("minkowski_distance p=1.5", lambda: minkowski_distance(x, c, 1.5), args.n),
        ("elastic_net_distance", lambda: elastic_net_distance(x, c), args.n),
        ("perceptual_distance (3 layers)", perceptual, args.n),
        ("pairwise_diversity K=3 (perceptual)", diversity, args.n),
        ("fid_torchmetrics (embed 2×n + FID)", lambda: fid_torchmetrics(x, c, net), 2 * args.n),
        ("fid on 64-d features", lambda: fid(feats_x, feats_c), 2 * args.n),
        ("kid on 64-d features (100 subsets)", lambda: kid(feats_x, feats_c), 2 * args.n),
    ]
    print(f"torch {torch.__version__}, threads={torch.get_num_threads()}, n={args.n}, repeats={args.repeats}")
    print(f"{'metric':44s} {'median s':>10s} {'images/s':>12s}")
    for name, fn, images in cases:
        seconds = _median_seconds(fn, args.repeats)
        print(f"{name:44s} {seconds:10.4f} {images / seconds:12.0f}")

    start = time.perf_counter()
    low, high = bootstrap_set_ci(feats_x, feats_c, fid, n_resamples=args.bootstrap)
    seconds = time.perf_counter() - start
    point = fid(feats_x, feats_c)
    print(
        f"bootstrap_set_ci(fid), {args.bootstrap} resamples: {seconds:.3f} s "
        f"({1000 * seconds / args.bootstrap:.2f} ms/resample); FID {point:.4g} [{low:.4g}, {high:.4g}]"
    )


if __name__ == "__main__":
    main()
