"""Regression gating against a stored scorecard, direction-aware with per-metric tolerances."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from cfcheck.core.records import identity_key
from cfcheck.reporting.scorecard import load_scorecard


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
    """Stored scores keyed by record identity (:attr:`cfcheck.core.records.ScoreRecord.key`).

    A scorecard of format 2 or older has no kind or domain on its records; its scores are
    keyed ``metric[task]`` and matched by :attr:`ScoreRecord.legacy_key` (those runs measured
    one kind on one domain), so old baselines keep gating.
    """

    def __init__(self, scores: dict[str, float], source: str = "<memory>") -> None:
        self.scores = scores
        self.source = source

    @classmethod
    def load(cls, path: Path) -> Baseline:
        data = load_scorecard(path)
        legacy = int(data.get("format", 1)) < 3
        scores = {
            (
                f"{s['metric']}[{s['task']}]"
                if legacy
                else identity_key(s["kind"], s["domain"], s["suite"], s["metric"], s["task"])
            ): float(s["value"])
            for s in data["scores"]
            if s.get("value") is not None
        }
        return cls(scores, str(path))

    def get(self, *keys: str) -> float | None:
        """The stored value under the first of ``keys`` that the baseline has."""
        return next((self.scores[k] for k in keys if k in self.scores), None)

    def compare(self, keys: tuple[str, ...], value: float, direction: str, tolerance: float) -> Regression | None:
        """The regression of ``value`` against the stored one, or None (also when unknown)."""
        key = keys[0]
        stored = self.get(*keys)
        if stored is None or direction not in ("higher", "lower") or not math.isfinite(value):
            return None
        delta = stored - value if direction == "higher" else value - stored
        if delta > tolerance:
            return Regression(key, value, stored, tolerance, direction)
        return None
