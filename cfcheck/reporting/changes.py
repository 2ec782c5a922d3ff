"""What changed against a baseline, as a short Markdown summary for a pull request.

:func:`cfcheck.baseline.compare.compare_scorecard` fills a :class:`Changes` (one
:class:`ScoreChange` per score of the run, plus the baseline's scores that vanished);
:func:`render_changes` writes it as Markdown: a verdict line, then tables of the new failures,
regressions, scores that could not be computed, vanished scores, fixes and scores that moved beyond
their tolerance, each with values and 95% intervals, at most ``max_rows`` rows per table (the rest
counted). It is written as ``changes.md`` beside the scorecard and printed by
``cfcheck summary RUN --against BASELINE``.

The statuses a score can have against a baseline (the scorecard records them as ``baseline_status``)
are :mod:`cfcheck.reporting.tables`'; :mod:`cfcheck.baseline` says how each is decided.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from cfcheck.reporting.markdown import md
from cfcheck.reporting.tables import (
    ERROR,
    FAILING_STATUSES,
    FIXED,
    FIXED_STRICT,
    IMPROVED,
    KNOWN_FAILURE,
    NEW,
    NEW_FAILURE,
    REGRESSED,
    STILL_FAILING,
    UNCHANGED,
)

#: rows per table of :func:`render_changes` unless told otherwise
DEFAULT_MAX_ROWS = 10


@dataclass(frozen=True)
class ScoreChange:
    """One score against the baseline, ready to print.

    Attributes:
        status: one of :data:`STATUSES` ("vanished" for a baseline score the run did not record).
        score: ``suite/metric``.
        where: ``kind/domain/task``.
        now: the run's value, interval and verdict ("0.75 [0.66, 0.82] fail"), or "-".
        baseline: the baseline's, or "-" (not in the baseline).
        bar: the bar now (else the baseline's), or "-".
        change: the signed difference now − baseline, or "" when either has no value.
        tolerance: the tolerance it was judged with ("" without a value).
    """

    status: str
    score: str
    where: str
    now: str
    baseline: str
    bar: str
    change: str = ""
    tolerance: str = ""


@dataclass
class Changes:
    """A run against a baseline.

    Attributes:
        method: the run's method.
        source: where the baseline was read from.
        baseline_method: the method the baseline recorded.
        known_failures: the run's ``--cfcheck-known-failures`` setting.
        scores: every score of the run, compared.
        vanished: the baseline's scores whose test ran without recording them.
        not_run: how many baseline scores the run neither recorded nor ran a test for (deselected, or
            not collected); they are not compared.
        notes: how the run's protocols differ from the baseline's, and each bar that changed since it
            (:mod:`cfcheck.baseline.protocol`), one line each.
    """

    method: str
    source: str
    baseline_method: str | None
    known_failures: str
    scores: list[ScoreChange] = field(default_factory=list)
    vanished: list[ScoreChange] = field(default_factory=list)
    not_run: int = 0
    notes: list[str] = field(default_factory=list)

    def with_status(self, *statuses: str) -> list[ScoreChange]:
        return [s for s in self.scores if s.status in statuses]

    def count(self, status: str) -> int:
        return len(self.vanished) if status == "vanished" else len(self.with_status(status))

    @property
    def worse(self) -> int:
        """How many scores fail the run: new failures, regressions, errors, vanished, strict fixes …"""
        return len(self.with_status(*FAILING_STATUSES)) + len(self.vanished)

    @property
    def matched(self) -> int:
        """How many of the run's scores the baseline has."""
        return sum(1 for s in self.scores if s.baseline != "-")

    @property
    def failed(self) -> bool:
        """Whether the run fails against the baseline (something got worse, or nothing was compared)."""
        return self.worse > 0 or (bool(self.scores) and self.matched == 0)


#: the tables of :func:`render_changes`, in order: (statuses, title, what the title adds)
SECTIONS: tuple[tuple[tuple[str, ...], str, str], ...] = (
    ((NEW_FAILURE,), "New failures", "miss their bars now, not in the baseline"),
    ((REGRESSED,), "Regressed", "worse than the baseline beyond their tolerance"),
    ((ERROR,), "Could not be computed", ""),
    (("vanished",), "Vanished", "in the baseline, not recorded although their tests ran"),
    ((STILL_FAILING,), "Known failures, failing", "--cfcheck-known-failures=fail"),
    ((FIXED, FIXED_STRICT), "Fixed", "missed their bars in the baseline, pass now"),
    ((IMPROVED,), "Improved", "better than the baseline beyond their tolerance"),
    ((KNOWN_FAILURE,), "Known failures", "missed their bars in the baseline too, not worse beyond their tolerance"),
)


def verdict_line(changes: Changes) -> str:
    """ "**FAIL**: 2 scores got worse …" or "**PASS**: nothing got worse …", with the counts."""
    counts = [
        (changes.count(NEW_FAILURE), "new failure", "new failures"),
        (changes.count(REGRESSED), "regressed", "regressed"),
        (changes.count(ERROR), "could not be computed", "could not be computed"),
        (changes.count("vanished"), "vanished", "vanished"),
        (changes.count(STILL_FAILING), "known failure failing", "known failures failing"),
        (changes.count(FIXED_STRICT), "fix not in the baseline", "fixes not in the baseline"),
    ]
    worse = ", ".join(f"{n} {one if n == 1 else many}" for n, one, many in counts if n)
    rest = [
        f"{changes.count(FIXED) + changes.count(FIXED_STRICT)} fixed",
        f"{changes.count(KNOWN_FAILURE)} known failures",
        f"{changes.count(IMPROVED)} improved",
        f"{changes.count(UNCHANGED)} unchanged",
        f"{changes.count(NEW) + changes.count(NEW_FAILURE)} not in the baseline",
    ]
    if changes.worse:
        head = f"**FAIL**: {changes.worse} score{'s' if changes.worse > 1 else ''} got worse ({worse})"
    elif changes.failed:
        head = "**FAIL**: no score of this run is in the baseline (another seed, profile or selection?)"
    else:
        head = "**PASS**: nothing got worse"
    return f"{head} · {' · '.join(rest)}"


def render_changes(changes: Changes, max_rows: int = DEFAULT_MAX_ROWS) -> str:
    """The Markdown summary of ``changes``.

    Args:
        changes: the run against its baseline.
        max_rows: rows per table at most (0: every row); the rest are counted below the table.

    Returns:
        The Markdown text, ending in a newline.
    """
    if max_rows < 0:
        raise ValueError(f"max_rows must be >= 0 (0: every row), got {max_rows}")
    baseline_of = f" of {md(changes.baseline_method)}" if changes.baseline_method not in (None, changes.method) else ""
    lines = [
        f"### cfcheck: {md(changes.method)} against the baseline",
        "",
        verdict_line(changes),
        "",
        f"Baseline `{changes.source}`{baseline_of}: {changes.matched} of {len(changes.scores)} scores compared"
        + (f"; {changes.not_run} of its scores not run here (not compared)" if changes.not_run else "")
        + f"; known failures: {changes.known_failures}.",
        "",
    ]
    if changes.notes:  # made under another protocol: what differs, before what it did to the scores
        lines += [f"- {md(note)}" for note in changes.notes] + [""]
    for statuses, title, note in SECTIONS:
        rows = changes.vanished if statuses == ("vanished",) else changes.with_status(*statuses)
        if rows:
            lines += _table(rows, f"{title} ({len(rows)})" + (f": {note}" if note else ""), max_rows)
    return "\n".join(lines) + "\n"


def _table(rows: Sequence[ScoreChange], title: str, max_rows: int) -> list[str]:
    shown = rows if max_rows == 0 else rows[:max_rows]
    lines = [
        f"#### {title}",
        "",
        "| score | task | now [95% CI] | baseline [95% CI] | change (tolerance) | bar |",
        "|---|---|---|---|---|---|",
    ]
    for row in shown:
        change = f"{row.change} ({row.tolerance})" if row.change else "-"
        cells = [row.score, row.where, row.now, row.baseline, change, row.bar]
        lines.append("| " + " | ".join(md(cell) for cell in cells) + " |")
    if len(rows) > len(shown):
        lines.append(f"\n… and {len(rows) - len(shown)} more (`cfcheck summary RUN --against BASELINE --max-rows 0`)")
    return lines + [""]
