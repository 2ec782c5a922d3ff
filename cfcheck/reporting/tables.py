"""What every format of a scorecard shares: the table of scores, verdict categories and counts, a
score's statuses against a baseline. Pure functions of a score as the scorecard JSON writes it (the
typed model, :mod:`cfcheck.reporting.model`, and the comparison and baseline modules use them); the
grouping and the headline are the model's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

#: How each verdict reads in a table; "FAIL" and "ERROR" are what `cfcheck summary --failures` keeps.
VERDICT_LABELS = {"pass": "pass", "fail": "FAIL", "inconclusive": "inconclusive", "error": "ERROR"}


def score_rows(scorecard: Mapping[str, Any]) -> list[list[str]]:
    """Rows of the full table of scores (Markdown, HTML and ``cfcheck summary``)."""
    rows = []
    for score in scorecard["scores"]:
        verdict = VERDICT_LABELS.get(score.get("verdict"), "-")
        if score.get("reason"):
            verdict += f": {score['reason']}"
        verdict += baseline_note(score)
        rows.append(
            [
                score.get("kind", "-"),
                score.get("domain", "-"),
                score["suite"],
                score["metric"],
                score["task"],
                format_value(score),
                str(score["n"]),
                score.get("threshold") or "-",
                verdict,
            ]
        )
    return rows


# What a score is against the run's baseline (its ``baseline_status``); :mod:`cfcheck.baseline.store`
# says how each is decided.
NEW = "new"
UNCHANGED = "unchanged"
IMPROVED = "improved"
REGRESSED = "regressed"
NEW_FAILURE = "new_failure"
KNOWN_FAILURE = "known_failure"
STILL_FAILING = "still_failing"
FIXED = "fixed"
FIXED_STRICT = "fixed_strict"
ERROR = "error"
#: every ``baseline_status`` a score can have
STATUSES = (NEW, UNCHANGED, IMPROVED, REGRESSED, NEW_FAILURE, KNOWN_FAILURE, STILL_FAILING, FIXED, FIXED_STRICT, ERROR)
#: the statuses that fail the run
FAILING_STATUSES = frozenset({REGRESSED, NEW_FAILURE, STILL_FAILING, FIXED_STRICT, ERROR})
#: how each status reads after a score's verdict in the scorecard's tables
STATUS_NOTES = {
    REGRESSED: "regressed",
    NEW_FAILURE: "new failure",
    KNOWN_FAILURE: "known failure",
    STILL_FAILING: "known failure, failing",
    FIXED: "fixed",
    FIXED_STRICT: "fixed: refresh the baseline",
}

HEADER = ["kind", "domain", "suite", "metric", "task", "value [95% CI]", "n", "threshold", "verdict"]


#: verdict categories of the headline counts, in display order (None: no bar → "none")
VERDICT_ORDER = ("pass", "fail", "inconclusive", "error", "none")
#: what each category is called in the views
CATEGORY_NAMES = {"pass": "pass", "fail": "fail", "inconclusive": "inconclusive", "error": "error", "none": "no bar"}
#: worst first: the category a group of scores is coloured by
_SEVERITY = ("error", "fail", "inconclusive", "pass", "none")


def verdict_category(score: Mapping[str, Any]) -> str:
    """The score's verdict as one of :data:`VERDICT_ORDER`."""
    verdict = score.get("verdict")
    return verdict if verdict in VERDICT_ORDER else "none"


def count_verdicts(scores: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """Scores per category of :data:`VERDICT_ORDER` (every category present, zeros included)."""
    counts = dict.fromkeys(VERDICT_ORDER, 0)
    for score in scores:
        counts[verdict_category(score)] += 1
    return counts


def worst_category(counts: Mapping[str, int]) -> str | None:
    """The most severe category with a score, or None for no scores."""
    return next((name for name in _SEVERITY if counts.get(name)), None)


def is_failing(score: Mapping[str, Any]) -> bool:
    """A score that fails the run: it failed its bar, could not be computed, or regressed; against a
    baseline, by its status there (a known failure does not fail the run, a strict fix does)."""
    status = score.get("baseline_status")
    if status == KNOWN_FAILURE:
        return False
    failed = score.get("verdict") in ("fail", "error") or bool(score.get("inconclusive_fails"))
    return failed or bool(score.get("regressed")) or status in FAILING_STATUSES


def baseline_note(score: Mapping[str, Any]) -> str:
    """ " (known failure)", " (regressed)", … after a score's verdict; "" without a baseline or a change."""
    note = STATUS_NOTES.get(str(score.get("baseline_status")))
    if note is None and score.get("regressed"):
        note = STATUS_NOTES[REGRESSED]
    return f" ({note})" if note else ""


def task_group(score: Mapping[str, Any]) -> str:
    """The first part of the task id: the classifier of a VCE task ("cnn/ideal/seed0" → "cnn")."""
    return str(score.get("task", "-")).split("/", 1)[0]


def format_value(score: Mapping[str, Any]) -> str:
    """The value and its 95% CI, e.g. "0.91 [0.85, 0.96]"."""
    value = score.get("value")
    if value is None:
        return "nan"
    low, high = score.get("ci_low"), score.get("ci_high")
    text = f"{value:.4g}"
    if low is not None and high is not None:
        text += f" [{low:.4g}, {high:.4g}]"
    return text


def format_outcomes(outcomes: Mapping[str, int]) -> str:
    """ "2 failed, 5 passed" (sorted by name), or "none"."""
    return ", ".join(f"{count} {name}" for name, count in sorted(outcomes.items())) or "none"
