"""Throughput of the morpho domain: factor sampling, rendering and measurement (images/s).

    OMP_NUM_THREADS=1 pytest benchmarks/test_morpho.py --benchmark-only

10,000 images by default (``--bench-n``), best of 3 rounds (other processes on a shared machine
only slow a round down). Loading the glyph bank, which every process pays once, is recorded
apart (``glyph_bank_s``).
"""

from __future__ import annotations

import time

import pytest

from cfcheck.domains.morpho import measure_intensity, measure_thickness, render, sample_factors
from cfcheck.domains.morpho.fonts import glyph_bank


@pytest.fixture(scope="module")
def images(size):
    glyph_bank.cache_clear()
    start = time.perf_counter()
    glyph_bank()
    bank_seconds = time.perf_counter() - start
    n = size(10_000)
    factors = sample_factors(n, 0)
    return n, factors, render(factors), bank_seconds


@pytest.mark.parametrize("stage", ["sample_factors", "render", "measure_thickness", "measure_intensity"])
def test_morpho(benchmark, figures, images, stage):
    n, factors, rendered, bank_seconds = images
    work = {
        "sample_factors": lambda: sample_factors(n, 0),
        "render": lambda: render(factors),
        "measure_thickness": lambda: measure_thickness(rendered),
        "measure_intensity": lambda: measure_intensity(rendered),
    }[stage]
    benchmark.group = "morpho domain"
    benchmark.pedantic(work, rounds=3, iterations=1)
    figures.rate("img_per_s", n, key=f"morpho:{stage}")
    if stage == "render":
        figures.record("glyph_bank_s", bank_seconds, "s (once per process)")
