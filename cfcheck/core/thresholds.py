"""Thresholds: the one notion of a pass bar, shared by metric cards and model quality bars.

A :class:`Bar` is one bound (``value >= bound`` or ``value <= bound``), optionally relative to a
real-vs-real floor measured in the same run. Metric cards (:mod:`cfcheck.metrics.cards`) hold
one per profile; a reference model's manifest entry holds, per quality metric, a JSON dict
such as ``{"min": 0.97}`` or ``{"min": 0.1, "max": 0.9}``, which :meth:`Bars.from_dict` parses
into the same :class:`Bar` objects, so a model's bar is checked and described exactly like a
metric's.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["Bar", "Bars", "FloorRule", "bar_violations", "parse_bars"]

FloorRule = Literal["absolute", "times_floor", "plus_floor"]


@dataclass(frozen=True)
class Bar:
    """A pass bar: ``value >= bound`` for ``min``, ``value <= bound`` for ``max``.

    ``relative`` makes the bar relative to the real-vs-real floor of a set metric (measured
    in the same run, at the same n and class mix): ``times_floor`` means ``bound × floor``,
    ``plus_floor`` means ``floor + bound``; ``absolute`` uses ``bound`` as it is.
    """

    bound: float
    kind: str  # "min" or "max"
    relative: FloorRule = "absolute"

    def __post_init__(self) -> None:
        if self.kind not in ("min", "max"):
            raise ValueError(f"bar kind must be 'min' or 'max', got {self.kind!r}")
        if self.relative not in ("absolute", "times_floor", "plus_floor"):
            raise ValueError(f"bar relative must be 'absolute', 'times_floor' or 'plus_floor', got {self.relative!r}")

    def resolve(self, floor: float | None = None) -> float:
        """The effective bound; a floor-relative bar needs the run's ``floor``."""
        if self.relative == "absolute":
            return self.bound
        if floor is None or not math.isfinite(floor):
            raise ValueError(f"a bar relative to the real-vs-real floor ({self.describe()}) needs a finite floor")
        return self.bound * floor if self.relative == "times_floor" else floor + self.bound

    def passes(self, value: float, floor: float | None = None) -> bool:
        bound = self.resolve(floor)
        return value >= bound if self.kind == "min" else value <= bound

    def describe(self, floor: float | None = None) -> str:
        sign = ">=" if self.kind == "min" else "<="
        if self.relative == "absolute":
            return f"{sign} {self.bound:g}"
        rule = f"{self.bound:g} × floor" if self.relative == "times_floor" else f"floor + {self.bound:g}"
        if floor is not None and math.isfinite(floor):
            return f"{sign} {rule} = {self.resolve(floor):.4g}"
        return f"{sign} {rule}"


@dataclass(frozen=True)
class Bars:
    """All bars on one value (a lower and an upper bound make an interval), absolute bounds.

    The manifest form is a dict ``{"min": lower}``, ``{"max": upper}`` or both;
    :meth:`from_dict` and :meth:`to_dict` convert, so the JSON keeps its format.
    """

    bars: tuple[Bar, ...]

    @classmethod
    def from_dict(cls, bounds: Mapping[str, Any]) -> Bars:
        """Parses a manifest bar such as ``{"min": 0.97}`` (keys ``min`` and/or ``max``).

        Raises:
            ValueError: if ``bounds`` is empty, has another key, or a bound is not a number.
        """
        if not isinstance(bounds, Mapping) or not bounds:
            raise ValueError(f"a quality bar must be a dict with 'min' and/or 'max', got {bounds!r}")
        unknown = sorted(set(bounds) - {"min", "max"})
        if unknown:
            raise ValueError(f"a quality bar has only 'min' and 'max' keys, got {unknown} in {dict(bounds)}")
        bars = []
        for kind in ("min", "max"):
            if kind in bounds:
                value = bounds[kind]
                if isinstance(value, bool) or not isinstance(value, (int, float)):
                    raise ValueError(f"the {kind!r} bound must be a number, got {value!r}")
                bars.append(Bar(float(value), kind))
        return cls(tuple(bars))

    def to_dict(self) -> dict[str, float]:
        """The manifest form (absolute bounds only)."""
        if any(bar.relative != "absolute" for bar in self.bars):
            raise ValueError("only absolute bars have a manifest form")
        return {bar.kind: bar.bound for bar in self.bars}

    def __iter__(self) -> Iterator[Bar]:
        return iter(self.bars)

    def passes(self, value: float, floor: float | None = None) -> bool:
        """Whether ``value`` meets every bar."""
        return all(bar.passes(value, floor) for bar in self.bars)

    def failed(self, value: float, floor: float | None = None) -> list[Bar]:
        """The bars ``value`` misses (empty: passes)."""
        return [bar for bar in self.bars if not bar.passes(value, floor)]

    def describe(self, floor: float | None = None) -> str:
        """E.g. ``">= 0.1 and <= 0.9"``."""
        return " and ".join(bar.describe(floor) for bar in self.bars)


def parse_bars(quality_bar: Mapping[str, Mapping[str, Any]]) -> dict[str, Bars]:
    """A manifest ``quality_bar`` (metric -> ``{"min"/"max": bound}``) as :class:`Bars` per metric."""
    parsed = {}
    for metric, bounds in quality_bar.items():
        try:
            parsed[metric] = Bars.from_dict(bounds)
        except ValueError as error:
            raise ValueError(f"quality bar of {metric!r}: {error}") from None
    return parsed


def bar_violations(values: Mapping[str, Any], quality_bar: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Every bar of ``quality_bar`` that ``values`` misses, as readable lines (empty: all pass).

    Args:
        values: measured values by metric (e.g. a manifest entry's ``quality``).
        quality_bar: the manifest bars, metric -> ``{"min": v}`` and/or ``{"max": v}``.

    Returns:
        One line per missed bound (``"chance=0.2500, bar <= 0.2"``) and per metric with a
        bar but no value (``"robust_accuracy: not measured"``), in ``quality_bar`` order.
    """
    problems = []
    for metric, bars in parse_bars(quality_bar).items():
        if metric not in values:
            problems.append(f"{metric}: not measured")
            continue
        value = float(values[metric])
        problems += [f"{metric}={value:.4f}, bar {bar.describe()}" for bar in bars.failed(value)]
    return problems
