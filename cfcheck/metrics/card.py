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

Where cfcheck's number differs from the one a paper's own code computes, the card says so in
``differences`` (:class:`PaperDifference`): which code, read at which commit, what differs, how to
convert, and whether the paper's code has a bug there that cfcheck avoids.
:mod:`cfcheck.reporting.papers_code` lists them all on one page.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from cfcheck.core.thresholds import Bar  # noqa: F401  (re-exported: Bar lives in cfcheck.core.thresholds)

__all__ = [
    "DIFFERENCES_HEADING",
    "PROPORTION_UNITS",
    "Bar",
    "Direction",
    "MetricCard",
    "PaperCode",
    "PaperDifference",
    "card_markdown",
    "difference_lines",
    "format_card",
    "markdown_escape",
]

Direction = Literal["higher", "lower", "none"]


#: the units of a card whose per-sample values are {0, 1} indicators (a proportion: Wilson CI)
PROPORTION_UNITS = "fraction of inputs"

#: the heading of a card's differences from the papers' code, in every rendering
DIFFERENCES_HEADING = "Where it differs from the papers' code"

_COMMIT = re.compile(r"[0-9a-f]{40}")


@dataclass(frozen=True)
class PaperCode:
    """One paper's published code, as cfcheck's authors read it.

    Attributes:
        paper: the paper, as its cards cite it ("Hvilshøj et al. 2021").
        repository: where the code lives (a URL, or a package release such as "PyPI: bex 0.5.2").
        commit: the full 40-digit commit the cited lines were read from, or None where no commit
            could be checked.
        unchecked: why there is no commit (required exactly when ``commit`` is None).
    """

    paper: str
    repository: str
    commit: str | None
    unchecked: str = ""

    def __post_init__(self) -> None:
        if not self.paper or not self.repository:
            raise ValueError("a paper's code needs its paper and repository")
        if self.commit is not None and not _COMMIT.fullmatch(self.commit):
            raise ValueError(
                f"{self.repository}: `commit` must be 40 lower-case hex digits or None, got {self.commit!r}"
            )
        if (self.commit is None) != bool(self.unchecked):
            raise ValueError(f"{self.repository}: say why there is no commit (`unchecked`) exactly when commit is None")

    def version(self, short: bool = False) -> str:
        """The commit (its first 12 digits when ``short``), or why none was checked (only that none
        was, when ``short``)."""
        if self.commit is None:
            return "no commit checked" if short else f"commit not checked: {self.unchecked}"
        return f"commit {self.commit[:12] if short else self.commit}"


@dataclass(frozen=True)
class PaperDifference:
    """Where cfcheck's number differs from the one a paper's code computes for the same metric.

    Attributes:
        code: the paper's code it was read from.
        where: file and line(s) in that code (``path:line``, with the function).
        difference: what the paper's code does and what cfcheck does instead.
        conversion: how to get the paper's number from cfcheck's, or "" where none exists (then
            ``difference`` says why).
        bug: True where the paper's code is wrong there (against its own paper or docstring) and
            cfcheck does not repeat the mistake.
    """

    code: PaperCode
    where: str
    difference: str
    conversion: str = ""
    bug: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.code, PaperCode):
            raise TypeError(f"`code` must be a PaperCode, got {type(self.code).__name__}")
        if not self.where or not self.difference:
            raise ValueError("a difference needs the place in the paper's code and what differs")

    def describe(self, short: bool = False) -> str:
        """One paragraph: what differs, where (code, commit, file), and the conversion.

        Args:
            short: abbreviate the commit to 12 digits (the cards; the page gives it in full).
        """
        kind = "Bug in the paper's code, avoided" if self.bug else "Differs"
        conversion = f" Conversion: {self.conversion}" if self.conversion else " Conversion: none."
        return (
            f"{kind} ({self.code.paper}: {self.code.repository}, {self.code.version(short)}, {self.where}): "
            f"{self.difference}{conversion}"
        )


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
    #: where and how the number differs from each paper's own code (see :class:`PaperDifference`)
    differences: tuple[PaperDifference, ...] = ()
    #: the definition's revision, bumped by hand whenever what the number means changes (formula,
    #: normalisation, what counts as an abstention, the functions' behaviour), not its prose; it is
    #: part of every protocol's identity (:mod:`cfcheck.core.protocol`)
    revision: int = 1

    def __post_init__(self) -> None:
        if isinstance(self.revision, bool) or not isinstance(self.revision, int) or self.revision < 1:
            raise ValueError(f"card {self.key!r}: `revision` must be an integer >= 1, got {self.revision!r}")
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
        if not isinstance(self.differences, tuple) or not all(isinstance(d, PaperDifference) for d in self.differences):
            raise TypeError(f"card {self.key!r}: `differences` must be a tuple of PaperDifference")

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


def difference_lines(card: MetricCard) -> list[str]:
    """One paragraph per difference of ``card`` from a paper's code (empty when it has none).

    Args:
        card: the metric card.

    Returns:
        :meth:`PaperDifference.describe` of each, the commit shortened to 12 digits.
    """
    return [difference.describe(short=True) for difference in card.differences]


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
    lines = [title] + [
        f"  {label + ':':<14} {text}" if len(label) < 14 else f"  {label}: {text}" for label, text in rows
    ]
    differences = difference_lines(card)
    if differences:
        lines += [f"  {DIFFERENCES_HEADING}:"] + [f"    - {text}" for text in differences]
    return "\n".join(lines)


def card_markdown(card: MetricCard, measured: Sequence[str] = (), heading: str = "###") -> str:
    """The same card as a Markdown section (the documentation's metric reference): a heading with the
    key as its anchor, then one bullet per row of :func:`format_card`."""
    title, rows = _card_fields(card, measured)
    lines = [f"{heading} {card.name} {{#{card.key}}}", "", f"`{card.key}`", ""]
    lines += [f"- **{label}**: {markdown_escape(text)}" for label, text in rows]
    differences = difference_lines(card)
    if differences:
        lines.append(f"- **{DIFFERENCES_HEADING}** ([all of them](papers-code.md)):")
        lines += [f"    - {markdown_escape(text)}" for text in differences]
    return "\n".join(lines)


def markdown_escape(text: str) -> str:
    """Keep card prose literal in Markdown: no emphasis from ``*`` or ``_``, no HTML from ``<``."""
    for char, escaped in (("\\", "\\\\"), ("*", "\\*"), ("_", "\\_"), ("<", "&lt;"), ("`", "\\`")):
        text = text.replace(char, escaped)
    return text
