"""ROAD noisy linear imputation: the batched solver against a per-image scipy ``spsolve`` loop.

    OMP_NUM_THREADS=1 pytest benchmarks/test_road.py --benchmark-only [--bench-superlu]

Removes half the pixels of 1,000 morpho test images (``--bench-n``; 1×32×32 in [0, 1]) by MoRF
on a seeded uniform random attribution and imputes them without noise (noise is the same cheap
step in both), with :func:`cfcheck.metrics.removal.noisy_linear_imputation` for the whole batch
and image by image, building each image's sparse system with numpy (vectorised over the 8
neighbour offsets) and solving it with ``scipy.sparse.linalg.spsolve``. All of them are one
benchmark group, best of 3 rounds each; the batched benchmarks record their speed-up over the
loop with and without building the systems (the issue's target is ≥ 20×) and the largest
difference from the loop's result. morpho images are float32, so the batched solve runs in
float32 (to 1e-7 of each plane's right-hand side); the same images as float64 take the float64
path (to 1e-10). ``--bench-superlu`` adds one block-diagonal system for the whole batch,
assembled in numpy and factorised once by SuperLU, per column ordering. Other work on the
machine slows both sides of the comparison, not always equally: the load average is printed.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla
import torch

from cfcheck.domains.morpho import load_split
from cfcheck.metrics.removal import NEIGHBOUR_WEIGHTS, noisy_linear_imputation, removal_mask

FRACTION = 0.5
ORDERINGS = ("NATURAL", "COLAMD", "MMD_AT_PLUS_A", "MMD_ATA")
WAYS = [
    "build + spsolve loop",
    "spsolve loop only",
    "batched float32",
    "batched float64",
    *(f"block-diagonal SuperLU {ordering}" for ordering in ORDERINGS),
]


def _with_diagonal(
    entries_i: list[np.ndarray], entries_j: list[np.ndarray], entries_v: list[np.ndarray], diagonal: np.ndarray
) -> sp.csc_matrix:
    """The sparse system of the off-diagonal entries gathered per neighbour offset, plus the diagonal."""
    size = len(diagonal)
    rows = np.concatenate([*entries_i, np.arange(size)])
    cols = np.concatenate([*entries_j, np.arange(size)])
    return sp.csc_matrix((np.concatenate([*entries_v, diagonal]), (rows, cols)), shape=(size, size))


def assemble(removed: np.ndarray, values: np.ndarray, coords: tuple) -> tuple[sp.csc_matrix, np.ndarray]:
    """:func:`image_system` for a batch: the block-diagonal system over the removed pixels at
    ``coords`` (``np.nonzero`` of N×H×W masks), numbered in that order; b is U×C from
    ``values`` (N×H×W×C, channels last). :func:`image_system` is kept as it is, not rebuilt on
    this function, so that the loop timed stays the one earlier figures were measured with."""
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
    matrix = _with_diagonal(entries_i, entries_j, entries_v, diagonal)
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
    matrix = _with_diagonal(entries_i, entries_j, entries_v, diagonal)
    return matrix, rhs, (rows, cols)


def impute_loop(images: np.ndarray, removed: np.ndarray) -> np.ndarray:
    out = images.copy()
    for i in range(len(images)):
        matrix, rhs, (rows, cols) = image_system(removed[i], images[i])
        solution = spla.spsolve(matrix, rhs).reshape(len(rows), -1)
        out[i][:, rows, cols] = solution.T
    return out


def impute_block_diagonal(images: np.ndarray, removed: np.ndarray, ordering: str) -> np.ndarray:
    """One block-diagonal system for the whole batch (N×C×H×W images, N×H×W masks), assembled
    in numpy without a per-image loop, factorised once by SuperLU."""
    coords = np.nonzero(removed)
    matrix, rhs = assemble(removed, np.moveaxis(images, 1, -1), coords)
    out = images.copy()
    out[coords[0], :, coords[1], coords[2]] = spla.splu(matrix, permc_spec=ordering).solve(rhs)
    return out


@pytest.fixture(scope="module")
def problem(size):
    images = load_split("test", size(1000)).images
    attribution = torch.rand(images.shape[0], *images.shape[2:], generator=torch.Generator().manual_seed(0))
    removed = removal_mask(attribution, FRACTION, "morf")
    images_np, removed_np = images.double().numpy(), removed.numpy()
    systems = [image_system(removed_np[i], images_np[i]) for i in range(len(images_np))]
    return images, removed, images_np, removed_np, systems, impute_loop(images_np, removed_np)


@pytest.mark.parametrize("way", WAYS)
def test_road_imputation(benchmark, figures, problem, way, request):
    images, removed, images_np, removed_np, systems, looped = problem
    if way.startswith("block-diagonal") and not request.config.getoption("--bench-superlu"):
        pytest.skip("the SuperLU variants run with --bench-superlu")
    work = {
        WAYS[0]: lambda: impute_loop(images_np, removed_np),
        WAYS[1]: lambda: [spla.spsolve(a, b) for a, b, _ in systems],
        WAYS[2]: lambda: noisy_linear_imputation(images, removed, noise_std=0.0),
        WAYS[3]: lambda: noisy_linear_imputation(images.double(), removed, noise_std=0.0),
    }.get(way) or (lambda: impute_block_diagonal(images_np, removed_np, way.rsplit(" ", 1)[-1]))
    benchmark.group = f"ROAD imputation, {len(images)} images"
    result = benchmark.pedantic(work, rounds=3, iterations=1)
    figures.keep(f"road:{way}")
    if way in WAYS[:2]:
        return
    if way == WAYS[2]:
        figures.record("removed_pixels_per_image", int(removed[0].sum()))
    result = result.double().numpy() if isinstance(result, torch.Tensor) else result
    figures.ratio("speedup_over_build_and_spsolve", f"road:{WAYS[0]}", f"road:{way}")
    if way.startswith("batched"):
        figures.ratio("speedup_over_spsolve_alone", f"road:{WAYS[1]}", f"road:{way}")
    figures.record("largest_difference_from_loop", float(np.abs(result - looped).max()))
