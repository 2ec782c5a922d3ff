"""Microseconds per image of every bundled morpho model that maps images alone to outputs (the
evaluation and explained models; not the generators, flows or the DDPM, which also take parents
or timesteps): the model called as loaded (NCHW weights, 512 images per chunk) against
``batched_logits`` (a channels-last copy, 128 per chunk).

    OMP_NUM_THREADS=1 pytest benchmarks/test_inference.py --benchmark-only [--bench-threads 2]

4,096 random images by default (``--bench-n``), best of 2 rounds after a warm-up on 256. Each
model is a benchmark group of the two ways; the ``batched_logits`` benchmark records the
speed-up over the model as loaded, and the last one the sums over all models.
"""

from __future__ import annotations

import pytest
import torch

from cfcheck.models.inference import batched_logits
from cfcheck.models.registry import available_models, load_model, model_entry

#: roles whose models are called as model(images)
IMAGE_ROLES = {"autoencoder", "attribute_oracle", "classifier", "embedding", "oracle", "anticausal_predictor"}
MODELS = [n for n in available_models("morpho") if model_entry(n, domain="morpho")["role"] in IMAGE_ROLES]
WAYS = ["as loaded, 512", "batched_logits"]
#: µs per image by way, summed over the models timed so far
_TOTALS = dict.fromkeys(WAYS, 0.0)


def as_loaded(model: torch.nn.Module, x: torch.Tensor) -> None:
    with torch.no_grad():
        for start in range(0, len(x), 512):
            model(x[start : start + 512])


@pytest.fixture(scope="module")
def images(size):
    return torch.rand(size(4096), 1, 32, 32, generator=torch.Generator().manual_seed(0))


@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize("name", MODELS)
def test_inference(benchmark, figures, images, name, way):
    model = load_model(name, domain="morpho")
    run = as_loaded if way == WAYS[0] else batched_logits
    run(model, images[:256])  # warm-up
    benchmark.group = f"inference: {name}"
    benchmark.pedantic(run, args=(model, images), rounds=2, iterations=1)
    seconds = figures.keep(f"inference:{name}:{way}")
    if seconds is None:
        return
    per_image = seconds / len(images) * 1e6
    _TOTALS[way] += per_image
    figures.record("us_per_image", per_image, "µs")
    if way == WAYS[1]:
        figures.ratio("speedup", f"inference:{name}:{WAYS[0]}", f"inference:{name}:{way}")
        if name == MODELS[-1] and _TOTALS[WAYS[0]]:
            figures.record("all_models_us_per_image_as_loaded", _TOTALS[WAYS[0]], "µs")
            figures.record("all_models_us_per_image_batched", _TOTALS[WAYS[1]], "µs")
            figures.record("all_models_speedup", _TOTALS[WAYS[0]] / _TOTALS[WAYS[1]], "x")
