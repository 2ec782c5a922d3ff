"""Microseconds per image of every bundled morpho model that maps images alone to outputs (the
evaluation and explained models; not the generators, flows or the DDPM, which also take parents
or timesteps): the model called as loaded (NCHW weights, 512 images per chunk, the previous
default) against ``batched_logits`` (a channels-last copy, 128 per chunk).

Run:  python benchmarks/bench_inference.py [--threads 2] [--images 4096]
"""

from __future__ import annotations

import argparse
import time

import torch

from cfcheck.models.inference import batched_logits
from cfcheck.models.registry import available_models, load_model, model_entry

#: roles whose models are called as model(images)
IMAGE_ROLES = {"autoencoder", "attribute_oracle", "classifier", "embedding", "oracle", "anticausal_predictor"}


def per_image(fn, images: torch.Tensor, repeats: int = 2) -> float:
    fn(images[:256])  # warm-up
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn(images)
        best = min(best, time.perf_counter() - start)
    return best / len(images) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--images", type=int, default=4096)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    images = torch.rand(args.images, 1, 32, 32, generator=torch.Generator().manual_seed(0))

    def plain(model: torch.nn.Module):
        def run(x: torch.Tensor) -> None:
            with torch.no_grad():
                for start in range(0, len(x), 512):
                    model(x[start : start + 512])
        return run

    print(f"{args.threads} torch threads, {args.images} images; µs per image")
    print(f"{'model':<18} {'as loaded, 512':>15} {'batched_logits':>15} {'speed-up':>9}")
    totals = [0.0, 0.0]
    for name in [n for n in available_models("morpho") if model_entry(n, domain="morpho")["role"] in IMAGE_ROLES]:
        model = load_model(name, domain="morpho")
        before = per_image(plain(model), images)
        after = per_image(lambda x: batched_logits(model, x), images)
        totals[0] += before
        totals[1] += after
        print(f"{name:<18} {before:15.0f} {after:15.0f} {before / after:8.1f}x")
    print(f"{'all':<18} {totals[0]:15.0f} {totals[1]:15.0f} {totals[0] / totals[1]:8.1f}x")


if __name__ == "__main__":
    main()
