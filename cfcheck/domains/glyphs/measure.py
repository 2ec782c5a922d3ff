"""Measure the glyph domain against its stated generative process, per scenario.

``python -m cfcheck.domains.glyphs.measure`` prints, for each scenario's train split (30k
draws): the label noise, the spurious-font correlation with its count and binomial standard
error, and the nuisances' sample moments; then the rendering speed (images per second, no
disk cache) on this machine.
"""

from __future__ import annotations

import math
import time

import torch

from .rendering import render
from .sampling import SCENARIOS, spurious_correlation
from .splits import split_factors


def scenario_rows() -> list[dict[str, float | int | str]]:
    """One row of measurements per scenario (train split)."""
    rows: list[dict[str, float | int | str]] = []
    for name, scenario in SCENARIOS.items():
        factors = split_factors(name, "train")
        correlation, count = spurious_correlation(factors, scenario)
        rows.append(
            {
                "scenario": name,
                "n": len(factors),
                "label_noise": float((factors.label != factors.parity).double().mean()),
                "correlation": correlation,
                "spurious_images": count,
                "correlation_se": math.sqrt(scenario.correlation * (1 - scenario.correlation) / count),
                "inverse_rate": float(factors.inverse.mean()),
                "rotation_sd": float(factors.rotation.std()),
                "log_scale_sd": float(torch.log(factors.scale / 0.6).std()),
                "shift_range": float(torch.stack([factors.shift_x, factors.shift_y]).abs().max()),
            }
        )
    return rows


def rendering_speed(n: int = 10_000, repeats: int = 3) -> float:
    """Best-of-``repeats`` images per second of :func:`render` on ``n`` train factors."""
    factors = split_factors(next(iter(SCENARIOS)), "train", n)
    render(factors[:64])  # the glyph bank is loaded outside the timing
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        render(factors)
        best = min(best, time.perf_counter() - start)
    return n / best


def main() -> None:
    for row in scenario_rows():
        print("  ".join(f"{k}={v:.4f}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items()))
    print(f"rendering: {rendering_speed():.0f} images/s with {torch.get_num_threads()} thread(s)")


if __name__ == "__main__":
    main()
