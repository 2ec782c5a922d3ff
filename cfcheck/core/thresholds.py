"""Thresholds: the one notion of a pass bar, shared by metric cards and model quality bars.

A :class:`Bar` is one bound (``value >= bound`` or ``value <= bound``), optionally relative to a
real-vs-real floor measured in the same run. Metric cards (:mod:`cfcheck.metrics.cards`) hold
one per profile; a reference model's manifest entry holds, per quality metric, a JSON dict
such as ``{"min": 0.97}`` or ``{"min": 0.1, "max": 0.9}``, which :meth:`Bars.from_dict` parses
into the same :class:`Bar` objects, so a model's bar is checked and described exactly like a
metric's. A score's record keeps the bar it was judged against as a :class:`RecordedBar` (the bar and
the run's floor), from which its text is derived for display.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["Bar", "Bars", "FloorRule", "RecordedBar", "bar_violations", "parse_bars"]

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
class RecordedBar:
    """The bar a score was judged against, as its record keeps it: the bar as data and, for a bar relative
    to the real-vs-real floor, the floor the run measured (the bound it resolved to is :attr:`value`).

    A scorecard writes it as a small object (:meth:`to_dict`): ``{"kind": "max", "bound": 2.0, "relative":
    "times_floor", "floor": 9.61, "value": 19.22}``; its text (``"<= 2 × floor = 19.22"``) is
    :meth:`describe`, the text :meth:`Bar.describe` gives.

    Example:
        >>> bar = RecordedBar.of(Bar(2.0, "max", "times_floor"), floor=9.61)
        >>> bar.value, bar.describe(), RecordedBar.from_dict(bar.to_dict()) == bar
        (19.22, '<= 2 × floor = 19.22', True)
    """

    kind: str  # "min" (value >= bound) or "max" (value <= bound)
    bound: float
    relative: FloorRule = "absolute"
    #: the floor a floor-relative bar was resolved with (None: an absolute bar, or none measured)
    floor: float | None = None

    def __post_init__(self) -> None:
        Bar(self.bound, self.kind, self.relative)  # the same checks as a bar's
        if not _finite_number(self.bound):
            raise ValueError(f"a recorded bar's bound must be a finite number, got {self.bound!r}")
        if self.floor is not None:
            if not _finite_number(self.floor):
                raise ValueError(f"a recorded bar's floor must be a finite number or None, got {self.floor!r}")
            if self.relative == "absolute":
                raise ValueError(f"an absolute bar ({self.bar.describe()}) is not resolved with a floor")

    @classmethod
    def of(cls, bar: Bar, floor: float | None = None) -> RecordedBar:
        """``bar`` as a record keeps it; ``floor`` is kept for a floor-relative bar where it is finite."""
        kept = floor if bar.relative != "absolute" and floor is not None and math.isfinite(floor) else None
        return cls(bar.kind, float(bar.bound), bar.relative, None if kept is None else float(kept))

    @property
    def bar(self) -> Bar:
        return Bar(self.bound, self.kind, self.relative)

    @property
    def value(self) -> float | None:
        """The bound the score was held to; None for a floor-relative bar without a floor."""
        if self.relative != "absolute" and self.floor is None:
            return None
        return self.bar.resolve(self.floor)

    def describe(self) -> str:
        """The bar's text (``">= 0.8"``, ``"<= floor + 0.2 = 0.3237"``): what pages show."""
        return self.bar.describe(self.floor)

    def to_dict(self) -> dict[str, Any]:
        """The scorecard's form; ``value`` is derived (written for readers that draw or filter by it)."""
        return {
            "kind": self.kind,
            "bound": self.bound,
            "relative": self.relative,
            "floor": self.floor,
            "value": self.value,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RecordedBar:
        """The bar :meth:`to_dict` wrote (its ``value`` is derived again, not read).

        Raises:
            ValueError: not such an object (the message names what is wrong and what was expected).
        """
        if not isinstance(data, Mapping) or "kind" not in data or "bound" not in data:
            raise ValueError(
                f"a recorded bar is an object with 'kind' ('min' or 'max'), 'bound', 'relative' and 'floor', got {data!r}"
            )
        floor = data.get("floor")
        return cls(data["kind"], data["bound"], data.get("relative", "absolute"), floor)


def _finite_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


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
