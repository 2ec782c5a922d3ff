"""Bars per (metric, domain): which bars judge a score depends on the domain it was measured on.

- A domain the metric cards were calibrated on (``domain.card_calibrated``: the bundled ones)
  is judged by the cards' bars for the profile, with the user's ``[tool.cfcheck.thresholds]``,
  and by the bars its own bars file adds for scores whose cards have none (a bar that holds on
  one bundled domain and not another: ROAD's gap to random separates one domain's controls and
  not another's).
- Any other domain is judged only by bars earned on its own controls: ``cfcheck calibrate
  --domain`` writes them to ``<calibration_dir>/bars-<profile>.json``
  (:func:`write_domain_bars`), and by thresholds the user set explicitly. A domain without
  either is **uncalibrated**: its scores are reported with their intervals and no verdict, and
  the scorecard says so and how to calibrate it.

A bars file holds, per metric key (``card`` or ``card:variant``; a file written before that one spelling
has ``card_variant``, translated on read against the card keys the caller passes: the kinds' own
cards included, which only a caller above the kinds has), ``{"kind": "min"|"max", "bound": x, "relative": "absolute"|
"times_floor"|"plus_floor", "rationale": "...", "method_kind": <the kind that earned it>}`` (a kind
may add fields, such as how the bar was placed: ``"basis"``); the rationale quotes what the controls
reached on that domain. Beside the bars, per kind: ``controls.<kind>`` (each control, what it is
expected to do and how it ran) and ``without_bar.<kind>`` (each score left without a bar, and why).
Each kind's calibration replaces its own entries and keeps the other kinds'.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cfcheck.core.keys import MetricKey, read_keyed
from cfcheck.core.thresholds import Bar

if TYPE_CHECKING:
    from cfcheck.metrics.card import MetricCard

__all__ = ["DomainBars", "bars_path", "domain_bars", "read_bars_file", "render_domain_bars", "write_domain_bars"]

BARS_FORMAT = 1


def bars_path(calibration_dir: Path, profile: str) -> Path:
    return Path(calibration_dir) / f"bars-{profile}.json"


@dataclass(frozen=True)
class DomainBars:
    """The bars that judge one domain's scores at one profile, and where they come from."""

    bars: Mapping[str, Bar]
    #: "cards" (the metric cards, calibrated on this domain), "calibrated" (its own bars file),
    #: or "uncalibrated" (no bars but the user's explicit thresholds)
    source: str
    path: str | None = None
    rationales: Mapping[str, str] = field(default_factory=dict)

    def get(self, metric: str | MetricKey, card_key: str | None = None) -> Bar | None:
        """The bar of ``metric``: its own (``card:variant``) first, then ``card_key``'s (default: its card's)."""
        key = MetricKey.parse(metric)
        return self.bars.get(str(key)) or self.bars.get(card_key or key.card)

    def describe(self) -> dict[str, Any]:
        """For the scorecard: where the bars come from and, for a domain's own bars, each bar with the
        rationale that quotes its controls' values on that domain."""
        facts: dict[str, Any] = {"bars": self.source, "bars_file": self.path, "bar_count": len(self.bars)}
        if self.source != "cards" or self.rationales:  # a bundled domain's own bars are listed too
            facts["domain_bars"] = {
                key: {"bar": bar.describe(), "rationale": self.rationales.get(key, "")}
                for key, bar in sorted(self.bars.items())
                if self.source != "cards" or key in self.rationales
            }
        return facts


def read_bars_file(path: Path, *, cards: Mapping[str, MetricCard]) -> tuple[dict[str, Bar], dict[str, str]]:
    """Bars and rationales of a bars file.

    Args:
        path: the bars file.
        cards: every metric card, the kinds' own included (``cfcheck.kinds.registry.loaded_cards()``):
            an older ``card_variant`` key is read against their keys.

    Returns:
        Metric key → bar, and metric key → rationale.

    Raises:
        ValueError: naming the file and the bad entry.
    """
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise ValueError(f"{path}: not a readable bars file: {error}") from error
    if not isinstance(data, dict) or data.get("format") != BARS_FORMAT or not isinstance(data.get("bars"), dict):
        raise ValueError(f"{path}: expected {{'format': {BARS_FORMAT}, 'bars': {{metric: bar}}}}")
    bars, rationales = {}, {}
    try:
        entries = read_keyed(data["bars"], cards)
    except ValueError as error:
        raise ValueError(f"{path}: {error}") from None
    for metric, entry in entries.items():
        try:
            bars[metric] = Bar(float(entry["bound"]), entry["kind"], entry.get("relative", "absolute"))
        except (KeyError, TypeError, ValueError) as error:
            raise ValueError(f"{path}: bar of {metric!r} is malformed ({error}): {entry!r}") from error
        rationales[metric] = str(entry.get("rationale", ""))
    return bars, rationales


def domain_bars(
    domain: Any, profile: Any, explicit: Mapping[str, Bar], *, cards: Mapping[str, MetricCard]
) -> DomainBars:
    """The bars of ``domain`` at ``profile`` (see the module docstring).

    Args:
        domain: the domain object.
        profile: the run's profile (its ``thresholds`` are the cards' bars merged with the user's).
        explicit: the thresholds the user set in ``[tool.cfcheck.thresholds]``.
        cards: every metric card, the kinds' own included (:func:`read_bars_file`).

    Returns:
        The bars that judge the domain's scores, and where they come from.
    """
    folder = domain.calibration_dir
    path = bars_path(folder, profile.name) if folder is not None else None
    own, rationales = read_bars_file(path, cards=cards) if path is not None and path.is_file() else ({}, {})
    if domain.card_calibrated:
        card_bars = dict(profile.thresholds)
        added = {key: bar for key, bar in own.items() if key not in card_bars}
        return DomainBars(
            {**added, **card_bars}, "cards", str(path) if added else None, {key: rationales[key] for key in added}
        )
    if own:
        return DomainBars({**own, **explicit}, "calibrated", str(path), rationales)
    return DomainBars(dict(explicit), "uncalibrated", str(path) if path else None)


def write_domain_bars(
    path: Path,
    bars: Mapping[str, tuple[Bar, str]],
    *,
    domain: str,
    profile: str,
    controls: Mapping[str, Any],
    method_kind: str,
    cards: Mapping[str, MetricCard],
    without_bar: Mapping[str, str] | None = None,
    details: Mapping[str, Mapping[str, Any]] | None = None,
) -> Path:
    """Write ``method_kind``'s bars into a bars file atomically, keeping the other kinds' entries of
    an existing file (an entry without ``method_kind``, of a file written before bars named their
    kind, is kept: no kind's calibration replaces it).

    Args:
        path: the bars file.
        bars: metric → (bar, rationale).
        domain: the domain's name.
        profile: the profile the bars hold at.
        controls: control → what it is expected to do, and how it was run (a string, or a dict such
            as the adversarial control's budget), under ``controls.<method_kind>``.
        method_kind: the kind whose calibration earned the bars.
        cards: every metric card, the kinds' own included (:func:`read_bars_file`).
        without_bar: score → why it has no bar (``without_bar.<method_kind>``).
        details: metric → more fields of its entry (e.g. ``{"basis": "comparison", "baseline": ...}``).

    Returns:
        The file's path.
    """
    from cfcheck.core.io import atomic_write_text

    path = Path(path)
    kept: dict[str, Any] = {}
    recorded: dict[str, dict[str, Any]] = {"controls": {}, "without_bar": {}}
    if path.is_file():
        read_bars_file(path, cards=cards)  # refuses a malformed file instead of overwriting it
        old = json.loads(path.read_text(encoding="utf-8"))
        kept = {k: v for k, v in read_keyed(old["bars"], cards).items() if v.get("method_kind") != method_kind}
        for section, by_kind in recorded.items():
            by_kind.update({k: v for k, v in (old.get(section) or {}).items() if isinstance(v, dict)})
    entries = {
        metric: {
            **dict((details or {}).get(metric, {})),
            "kind": bar.kind,
            "bound": bar.bound,
            "relative": bar.relative,
            "rationale": why,
            "method_kind": method_kind,
        }
        for metric, (bar, why) in sorted(read_keyed(bars, cards).items())
        if math.isfinite(bar.bound)
    }
    recorded["controls"][method_kind] = dict(controls)
    recorded["without_bar"][method_kind] = read_keyed(without_bar or {}, cards)
    text = (
        json.dumps(
            {
                "format": BARS_FORMAT,
                "domain": domain,
                "profile": profile,
                **recorded,
                "bars": {**kept, **entries},
            },
            indent=1,
            sort_keys=True,
        )
        + "\n"
    )
    atomic_write_text(path, text)
    return Path(path)


def render_domain_bars(derived: Mapping[str, tuple[Bar | None, str]]) -> str:
    """A Markdown table of derived bars: score, bar (or none) and the rationale."""
    lines = ["| score | bar | rationale |", "|---|---|---|"]
    for key, (bar, why) in sorted(derived.items()):
        lines.append(f"| {key} | {bar.describe() if bar else 'none'} | {why} |")
    return "\n".join(lines) + "\n"
