"""The metric card type: the one definition of a metric — meaning, bar, tolerance, rationale.

Hvilshøj et al. 2021 show that scores computed under different normalisations or
evaluation models are not comparable; a card pins those choices down next to the
formula, the direction, the range and how abstentions count. It also holds the metric's
pass bar (per profile where they differ), the regression tolerance and the calibration
rationale: which positive and negative controls the bar sits between and why. What the controls
measured is data, not prose: ``cfcheck calibrate`` writes it to each domain's calibration file and
:mod:`cfcheck.reporting.evidence` summarises it beside the card. A metric with no bar that
separates its controls has ``bar=None`` and is reported without a verdict. The cards
themselves live in :mod:`cfcheck.metrics.definitions`, one module per property family, and
:mod:`cfcheck.metrics.cards` collects them; ``cfcheck cards`` prints them with :func:`format_card`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from cfcheck.core.thresholds import Bar  # noqa: F401  (re-exported: Bar lives in cfcheck.core.thresholds)

__all__ = ["PROPORTION_UNITS", "Bar", "Direction", "MetricCard", "card_markdown", "format_card"]

Direction = Literal["higher", "lower", "none"]


#: the units of a card whose per-sample values are {0, 1} indicators (a proportion: Wilson CI)
PROPORTION_UNITS = "fraction of inputs"


@dataclass(frozen=True)
class MetricCard:
    """Everything a reader needs to interpret one score."""

    key: str
    name: str
    formula: str
    direction: Direction
    range: tuple[float, float]
    units: str
    normalisation: str
    abstentions: str
    citation: str
    per_sample: bool
    notes: str = ""
    #: pass bar of every profile, or None: reported without a verdict (see ``rationale``)
    bar: Bar | None = None
    #: profile name → bar, where a profile's sample size earns a different bar
    profile_bars: Mapping[str, Bar] = field(default_factory=dict)
    #: allowed regression against a stored baseline, in the metric's own units
    tolerance: float = 0.0
    #: why the bar sits where it does: the controls on either side (their measured values are in the
    #: domains' calibration files; numbers from other measurements name the command that made them)
    rationale: str = ""
    #: what a failure means in the user's terms, appended to the failure message
    failure_hint: str = ""
    #: what the 95% interval resamples, where it is not the default of its kind (per-sample: the
    #: inputs; set-level: both sets), e.g. "random draws and inputs, crossed"
    interval: str = ""
    #: the functions that compute it, as ``package.module.function`` (the metric's pure function and,
    #: where a kind assembles its inputs, the kind's); ``cfcheck cards KEY`` shows where each is defined
    computed_by: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.direction not in ("higher", "lower", "none"):
            raise ValueError(f"`direction` must be 'higher', 'lower' or 'none', got {self.direction!r}")
        low, high = self.range
        if not low <= high:
            raise ValueError(f"`range` must be (low, high) with low <= high, got {self.range}")
        if self.tolerance < 0:
            raise ValueError(f"`tolerance` must be >= 0, got {self.tolerance}")
        if (self.bar is not None or self.profile_bars) and not self.rationale:
            raise ValueError(f"card {self.key!r}: a bar needs its calibration rationale")
        bad = [name for name in self.computed_by if not isinstance(name, str) or name.count(".") < 2]
        if bad or isinstance(self.computed_by, str):
            raise ValueError(
                f"card {self.key!r}: `computed_by` names functions as 'package.module.function', "
                f"got {self.computed_by!r}"
            )

    def bar_for(self, profile: str) -> Bar | None:
        """The bar of ``profile`` (its override, else the common bar)."""
        return self.profile_bars.get(profile, self.bar)


def _format_bound(value: float) -> str:
    if math.isinf(value):
        return "∞" if value > 0 else "−∞"
    return f"{value:g}"


def _interval(card: MetricCard) -> str:
    if card.per_sample:
        return f"yes (bootstrap over {card.interval or 'inputs'})"
    return f"no (set-level; bootstrap over {card.interval or 'both sets'})"


def _card_fields(
    card: MetricCard,
    measured: Sequence[str] = (),
    sources: Mapping[str, str] | None = None,
) -> tuple[str, list[tuple[str, str]]]:
    """The title and the (label, text) rows every rendering of a card shows, in order."""
    low, high = card.range
    open_low = "(" if math.isinf(low) else "["
    open_high = ")" if math.isinf(high) else "]"
    rows = [
        ("formula", card.formula),
        ("direction", f"{card.direction} is better" if card.direction != "none" else "none (see notes)"),
        ("range", f"{open_low}{_format_bound(low)}, {_format_bound(high)}{open_high}"),
        ("units", card.units),
        ("normalisation", card.normalisation),
        ("abstentions", card.abstentions),
        ("per sample", _interval(card)),
        ("citation", card.citation),
    ]
    for name in card.computed_by:
        where = (sources or {}).get(name)
        rows.append(("computed by", name + (f" ({where})" if where else "")))
    if card.notes:
        rows.append(("notes", card.notes))
    bars = {"all profiles": card.bar} if card.bar is not None else {}
    bars.update({f"{name} profile": bar for name, bar in card.profile_bars.items()})
    if bars:
        rows += [(f"bar ({scope})", bar.describe()) for scope, bar in bars.items()]
    else:
        rows.append(("bar", "none (reported without a verdict)"))
    if card.rationale:
        rows.append(("rationale", card.rationale))
    rows += [("measured", sentence) for sentence in measured]
    rows.append(("tolerance", f"{card.tolerance:g} (regression against a baseline)"))
    return f"{card.name} [{card.key}]", rows


def format_card(card: MetricCard, measured: Sequence[str] = (), sources: Mapping[str, str] | None = None) -> str:
    """Multi-line plain-text rendering of a card, as ``cfcheck cards`` prints it.

    Args:
        card: the metric card.
        measured: sentences of what the controls reached on a domain
            (:func:`cfcheck.reporting.evidence.measured_evidence`), one line each after the rationale.
        sources: function name (of ``card.computed_by``) → where it is defined (``path:line``), shown
            beside the name.
    """
    title, rows = _card_fields(card, measured, sources)
    return "\n".join(
        [title] + [f"  {label + ':':<14} {text}" if len(label) < 14 else f"  {label}: {text}" for label, text in rows]
    )


def card_markdown(card: MetricCard, measured: Sequence[str] = (), heading: str = "###") -> str:
    """The same card as a Markdown section (the documentation's metric reference): a heading with the
    key as its anchor, then one bullet per row of :func:`format_card`."""
    title, rows = _card_fields(card, measured)
    lines = [f"{heading} {card.name} {{#{card.key}}}", "", f"`{card.key}`", ""]
    lines += [f"- **{label}**: {_markdown_escape(text)}" for label, text in rows]
    return "\n".join(lines)


def _markdown_escape(text: str) -> str:
    """Keep card prose literal in Markdown: no emphasis from ``*`` or ``_``, no HTML from ``<``."""
    for char, escaped in (("\\", "\\\\"), ("*", "\\*"), ("_", "\\_"), ("<", "&lt;"), ("`", "\\`")):
        text = text.replace(char, escaped)
    return text
