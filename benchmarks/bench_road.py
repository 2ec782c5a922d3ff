"""ROAD noisy linear imputation: the batched solver against a per-image scipy ``spsolve`` loop.

Run:  OMP_NUM_THREADS=1 python benchmarks/bench_road.py [--n 1000] [--fraction 0.5]
                                                       [--loop-n N] [--repeats 3] [--threads 1] [--superlu]

Removes ``fraction`` of the pixels of ``n`` morpho test images (1×32×32 in [0, 1]) by MoRF on a
seeded uniform random attribution and imputes them without noise (noise is the same cheap
step in both), twice: with :func:`cfcheck.metrics.removal.noisy_linear_imputation` for the
whole batch, and image by image, building each image's sparse system with numpy (vectorised
over the 8 neighbour offsets) and solving it with ``scipy.sparse.linalg.spsolve``. Prints the
best of ``repeats`` wall-clock times of each, their ratio (the issue's target is ≥ 20×), the
loop's time without building the systems, and the largest difference between the two results.
morpho images are float32, so the batched solve runs in float32 (to 1e-7 of each plane's
right-hand side); the same images as float64 take the float64 path (to 1e-10), timed on the
side. ``--superlu`` also times one block-diagonal system for the whole batch, assembled in
numpy and factorised once by SuperLU, per column ordering. ``--loop-n`` times the loop on the
first N images only and scales it to ``n`` (said so in the output). The machine's load
average is printed with the figures: other work slows both sides of the comparison, not
always equally.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
import torch

from cfcheck.domains.morpho import load_split
from cfcheck.metrics.removal import NEIGHBOUR_WEIGHTS, noisy_linear_imputation, removal_mask


def assemble(removed: np.ndarray, values: np.ndarray, coords: tuple) -> tuple[sp.csc_matrix, np.ndarray]:
    """:func:`image_system` for a batch: the block-diagonal system over the removed pixels at
    ``coords`` (``np.nonzero`` of N×H×W masks), numbered in that order; b is U×C from
    ``values`` (N×H×W×C, channels last). :func:`image_system` is left as it was, not rebuilt on
    this function, so that the loop timed is the one earlier figures were measured with."""
    *lead, rows, cols = coords
    height, width = removed.shape[-2:]
    index = np.full(removed.shape, -1)
    index[coords] = np.arange(len(rows))
    diagonal = np.zeros(len(rows))
    rhs = np.zeros((len(rows), values.shape[-1]))
    entries_i, entries_j, entries_v = [], [], []
    for (dr, dc), weight in NEIGHBOUR_WEIGHTS.items():
        r, c = rows + dr, cols + dc
        inside = (r >= 0) & (r < height) & (c >= 0) & (c < width)
        diagonal[inside] += weight  # weights of in-image neighbours; the row is divided by their sum
        who = np.nonzero(inside)[0]
        neighbour = (*(axis[inside] for axis in lead), r[inside], c[inside])
        unknown = removed[neighbour]
        entries_i.append(who[unknown])
        entries_j.append(index[tuple(axis[unknown] for axis in neighbour)])
        entries_v.append(np.full(int(unknown.sum()), -weight))
        # a pixel has one neighbour per offset, so `who` has no repeats and += needs no np.add.at
        rhs[who[~unknown]] += weight * values[tuple(axis[~unknown] for axis in neighbour)]
    entries_i.append(np.arange(len(rows)))
    entries_j.append(np.arange(len(rows)))
    entries_v.append(diagonal)
    matrix = sp.csc_matrix(
        (np.concatenate(entries_v), (np.concatenate(entries_i), np.concatenate(entries_j))),
        shape=(len(rows), len(rows)),
    )
    return matrix, rhs


def image_system(removed: np.ndarray, image: np.ndarray) -> tuple[sp.csc_matrix, np.ndarray, tuple]:
    """One image's system A·y = b over its removed pixels (H×W mask, C×H×W values; b is U×C)."""
    height, width = removed.shape
    rows, cols = np.nonzero(removed)
    index = np.full((height, width), -1)
    index[rows, cols] = np.arange(len(rows))
    diagonal = np.zeros(len(rows))
    rhs = np.zeros((len(rows), image.shape[0]))
    entries_i, entries_j, entries_v = [], [], []
    for (dr, dc), weight in NEIGHBOUR_WEIGHTS.items():
        r, c = rows + dr, cols + dc
        inside = (r >= 0) & (r < height) & (c >= 0) & (c < width)
        diagonal[inside] += weight  # weights of in-image neighbours; the row is divided by their sum
        who, r, c = np.nonzero(inside)[0], r[inside], c[inside]
        unknown = removed[r, c]
        entries_i.append(who[unknown])
        entries_j.append(index[r[unknown], c[unknown]])
        entries_v.append(np.full(int(unknown.sum()), -weight))
        np.add.at(rhs, who[~unknown], weight * image[:, r[~unknown], c[~unknown]].T)
    entries_i.append(np.arange(len(rows)))
    entries_j.append(np.arange(len(rows)))
    entries_v.append(diagonal)
    matrix = sp.csc_matrix(
        (np.concatenate(entries_v), (np.concatenate(entries_i), np.concatenate(entries_j))),
        shape=(len(rows), len(rows)),
    )
    return matrix, rhs, (rows, cols)


def impute_loop(images: np.ndarray, removed: np.ndarray) -> np.ndarray:
    out = images.copy()
    for i in range(len(images)):
        matrix, rhs, (rows, cols) = image_system(removed[i], images[i])
        solution = spla.spsolve(matrix, rhs).reshape(len(rows), -1)
        out[i][:, rows, cols] = solution.T
    return out


def impute_block_diagonal(images: np.ndarray, removed: np.ndarray, ordering: str) -> np.ndarray:
    """The issue's other option: one block-diagonal system for the whole batch (N×C×H×W images,
    N×H×W masks), assembled in numpy without a per-image loop, factorised once by SuperLU."""
    coords = np.nonzero(removed)
    matrix, rhs = assemble(removed, np.moveaxis(images, 1, -1), coords)
    out = images.copy()
    out[coords[0], :, coords[1], coords[2]] = spla.splu(matrix, permc_spec=ordering).solve(rhs)
    return out


def best_of(repeats: int, run) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - start)
    return min(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000, help="images (morpho test split)")
    parser.add_argument("--fraction", type=float, default=0.5, help="share of pixels removed (MoRF)")
    parser.add_argument("--loop-n", type=int, default=None, help="time the per-image loop on this many")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--superlu", action="store_true",
                        help="also time one block-diagonal SuperLU solve of the batch, per column ordering")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    images = load_split("test", args.n).images
    attribution = torch.rand(images.shape[0], *images.shape[2:], generator=torch.Generator().manual_seed(args.seed))
    removed = removal_mask(attribution, args.fraction, "morf")
    loop_n = args.n if args.loop_n is None else min(args.loop_n, args.n)
    print(f"{args.n} images {tuple(images.shape[1:])}, {int(removed[0].sum())} of "
          f"{removed[0].numel()} pixels removed per image (MoRF, random attribution), "
          f"{torch.get_num_threads()} thread(s), best of {args.repeats}")

    batched_s, batched = best_of(args.repeats, lambda: noisy_linear_imputation(images, removed, noise_std=0.0))
    doubles = images.double()
    precise_s, precise = best_of(args.repeats, lambda: noisy_linear_imputation(doubles, removed, noise_std=0.0))
    images_np, removed_np = images.double().numpy(), removed.numpy()
    loop_s, looped = best_of(args.repeats, lambda: impute_loop(images_np[:loop_n], removed_np[:loop_n]))
    systems = [image_system(removed_np[i], images_np[i]) for i in range(loop_n)]
    solve_s, _ = best_of(args.repeats, lambda: [spla.spsolve(a, b) for a, b, _ in systems])
    scale = args.n / loop_n
    difference = float(np.abs(batched[:loop_n].double().numpy() - looped).max())
    precise_difference = float(np.abs(precise[:loop_n].numpy() - looped).max())

    print(f"batched noisy_linear_imputation: {batched_s:.3f} s")
    print(f"  the same on float64 images:    {precise_s:.3f} s ({loop_s * scale / precise_s:.1f}x over build + "
          f"spsolve, largest difference {precise_difference:.1e})")
    subset = "" if loop_n == args.n else f" (timed on the first {loop_n}, scaled ×{scale:.1f})"
    print(f"per-image build + spsolve loop:  {loop_s * scale:.3f} s{subset}")
    print(f"per-image spsolve only:          {solve_s * scale:.3f} s{subset}")
    print(f"speed-up: {loop_s * scale / batched_s:.1f}x over build + spsolve, "
          f"{solve_s * scale / batched_s:.1f}x over spsolve alone (target >= 20x)")
    print(f"largest difference batched vs loop: {difference:.2e} (batched output is float32)")
    for ordering in ("NATURAL", "COLAMD", "MMD_AT_PLUS_A", "MMD_ATA") if args.superlu else ():
        block_s, blocked = best_of(args.repeats, lambda: impute_block_diagonal(images_np, removed_np, ordering))
        print(f"block-diagonal SuperLU ({ordering}): {block_s:.3f} s ({loop_s * scale / block_s:.1f}x over build + "
              f"spsolve), largest difference {float(np.abs(blocked[:loop_n] - looped).max()):.1e}")
    print("load average (1, 5, 15 min): " + ", ".join(f"{v:.2f}" for v in os.getloadavg()))


if __name__ == "__main__":
    main()
