"""Regression gating against a stored scorecard, direction-aware with per-metric tolerances."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from cfcheck.scorecard import load_scorecard


@dataclass(frozen=True)
class Regression:
    key: str
    value: float
    baseline: float
    tolerance: float
    direction: str

    def describe(self) -> str:
        worse = "lower" if self.direction == "higher" else "higher"
        return (
            f"{self.key} regressed: {self.value:.4g} is {worse} than the baseline "
            f"{self.baseline:.4g} by more than the tolerance {self.tolerance:g}"
        )


class Baseline:
    """Stored scores keyed by ``metric[task]``."""

    def __init__(self, scores: dict[str, float], source: str = "<memory>") -> None:
        self.scores = scores
        self.source = source

    @classmethod
    def load(cls, path: Path) -> Baseline:
        data = load_scorecard(path)
        scores = {
            f"{s['metric']}[{s['task']}]": float(s["value"])
            for s in data["scores"]
            if s.get("value") is not None
        }
        return cls(scores, str(path))

    def get(self, key: str) -> float | None:
        return self.scores.get(key)

    def compare(self, key: str, value: float, direction: str, tolerance: float) -> Regression | None:
        """The regression of ``value`` against the stored one, or None (also when unknown)."""
        stored = self.scores.get(key)
        if stored is None or direction not in ("higher", "lower") or not math.isfinite(value):
            return None
        delta = stored - value if direction == "higher" else value - stored
        if delta > tolerance:
            return Regression(key, value, stored, tolerance, direction)
        return None
