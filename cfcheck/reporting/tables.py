"""What every view of a scorecard shares: the table of scores, verdict categories and counts,
grouping and the headline. Pure functions of the scorecard dict; :mod:`.markdown`, :mod:`.html`,
:mod:`.badge` and ``cfcheck summary`` use them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cfcheck.core.answer_reads import ANSWER_READ_HEADLINE, answer_read_of, answer_read_sentence

#: How each verdict reads in a table; "FAIL" and "ERROR" are what `cfcheck summary --failures` keeps.
VERDICT_LABELS = {"pass": "pass", "fail": "FAIL", "inconclusive": "inconclusive", "error": "ERROR"}


def score_rows(scorecard: dict[str, Any]) -> list[list[str]]:
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


def verdict_category(score: dict[str, Any]) -> str:
    """The score's verdict as one of :data:`VERDICT_ORDER`."""
    verdict = score.get("verdict")
    return verdict if verdict in VERDICT_ORDER else "none"


def count_verdicts(scores: Sequence[dict[str, Any]]) -> dict[str, int]:
    """Scores per category of :data:`VERDICT_ORDER` (every category present, zeros included)."""
    counts = dict.fromkeys(VERDICT_ORDER, 0)
    for score in scores:
        counts[verdict_category(score)] += 1
    return counts


def worst_category(counts: dict[str, int]) -> str | None:
    """The most severe category with a score, or None for no scores."""
    return next((name for name in _SEVERITY if counts.get(name)), None)


def is_failing(score: dict[str, Any]) -> bool:
    """A score that fails the run: it failed its bar, could not be computed, or regressed; against a
    baseline, by its status there (a known failure does not fail the run, a strict fix does)."""
    status = score.get("baseline_status")
    if status == KNOWN_FAILURE:
        return False
    failed = score.get("verdict") in ("fail", "error") or bool(score.get("inconclusive_fails"))
    return failed or bool(score.get("regressed")) or status in FAILING_STATUSES


def baseline_note(score: dict[str, Any]) -> str:
    """ " (known failure)", " (regressed)", … after a score's verdict; "" without a baseline or a change."""
    note = STATUS_NOTES.get(str(score.get("baseline_status")))
    if note is None and score.get("regressed"):
        note = STATUS_NOTES[REGRESSED]
    return f" ({note})" if note else ""


def known_failure_count(scorecard: dict[str, Any]) -> int:
    """Scores that missed their bars in the run's baseline too, not worse (they do not fail the run)."""
    return sum(1 for score in scorecard["scores"] if score.get("baseline_status") == KNOWN_FAILURE)


def vanished_count(scorecard: dict[str, Any]) -> int:
    """The baseline's scores that this run's tests did not record (they fail the run)."""
    return len((scorecard.get("baseline") or {}).get("vanished") or [])


def failing_count(scorecard: dict[str, Any]) -> int:
    return sum(1 for score in scorecard["scores"] if is_failing(score))


def task_group(score: dict[str, Any]) -> str:
    """The first part of the task id: the classifier of a VCE task ("cnn/ideal/seed0" → "cnn")."""
    return str(score.get("task", "-")).split("/", 1)[0]


def suite_key(score: dict[str, Any]) -> tuple[str, str]:
    """(kind, suite): suites of different kinds share names ("validity")."""
    return str(score.get("kind", "-")), str(score["suite"])


def group_scores(scores: Sequence[dict[str, Any]], key: Any) -> dict[Any, list[dict[str, Any]]]:
    """Scores grouped by ``key(score)``, groups in order of first appearance."""
    groups: dict[Any, list[dict[str, Any]]] = {}
    for score in scores:
        groups.setdefault(key(score), []).append(score)
    return groups


def headline(scorecard: dict[str, Any]) -> tuple[str, str]:
    """(word, sentence) of the overall verdict: ("FAIL", "FAIL: 3 of 5 suites have failing
    scores"), ("PASS", ...) or ("INCOMPLETE", ...) for a run cut short; ("NOT A VALID SUBMISSION",
    "NOT A VALID SUBMISSION: the method read ...; PASS: ...") where the method read the domain's answer."""
    suites = group_scores(scorecard["scores"], suite_key)
    failing = [key for key, scores in suites.items() if any(is_failing(s) for s in scores)]
    counts = count_verdicts(scorecard["scores"])
    vanished = vanished_count(scorecard)
    if scorecard.get("status") != "complete":
        word = "INCOMPLETE"
        sentence = f"the run was cut short; {len(failing)} of {len(suites)} suites have failing scores so far"
    elif failing:
        word = "FAIL"
        sentence = f"{len(failing)} of {len(suites)} suites have failing scores"
    elif vanished:
        word = "FAIL"
        sentence = f"{vanished} scores of the baseline vanished (their tests ran without recording them)"
    elif not scorecard["scores"]:
        word, sentence = "PASS", "no scores were recorded"
    elif not counts["pass"] and not counts["inconclusive"] and not counts["fail"]:  # (a fail here: a known one)
        word = "REPORTED"
        sentence = f"no bars: reported only ({len(scorecard['scores'])} scores without a verdict)"
    else:
        word = "PASS"
        sentence = f"no score fails ({counts['pass']} pass"
        sentence += f", {counts['inconclusive']} inconclusive)" if counts["inconclusive"] else ")"
    known = known_failure_count(scorecard)
    if known:
        sentence += (
            f"; {known} known failure{'s' if known > 1 else ''} (missed their bars in the baseline too, not worse)"
        )
    gated, reported = kinds_by_judgement(scorecard)
    if reported and word != "REPORTED":
        sentence += f"; judged: {', '.join(gated)}" if gated else ""
        sentence += "; no bars, reported only: " + ", ".join(
            f"{kind} ({count} scores)" for kind, count in reported.items()
        )
    uncalibrated = uncalibrated_domains(scorecard)
    if uncalibrated:
        facts = scorecard.get("profile", {}).get("domains", {})
        commands = " and ".join(
            f"`cfcheck calibrate --domain {facts.get(name, {}).get('spec') or name}`" for name in uncalibrated
        )
        sentence += (
            f"; uncalibrated domain{'s' if len(uncalibrated) > 1 else ''} {', '.join(uncalibrated)}: "
            f"scores without verdicts until {commands} earns {'their' if len(uncalibrated) > 1 else 'its'} bars"
        )
    read = answer_read_of(scorecard)
    if read is not None:  # the method read the domain's answer: whatever its verdicts, no valid submission
        return ANSWER_READ_HEADLINE, f"{ANSWER_READ_HEADLINE}: {answer_read_sentence(read)}; {word}: {sentence}"
    return word, f"{word}: {sentence}"


def kinds_by_judgement(scorecard: dict[str, Any]) -> tuple[list[str], dict[str, int]]:
    """The kinds of ``scorecard`` in score order, split: those with at least one judged score
    (passed, failed or inconclusive), and kind → number of scores for those none of whose scores
    has a bar (reported, not judged)."""
    kinds = group_scores(scorecard["scores"], lambda score: str(score.get("kind", "-")))
    judged = ("pass", "fail", "inconclusive")
    gated = [kind for kind, scores in kinds.items() if any(verdict_category(s) in judged for s in scores)]
    return gated, {kind: len(scores) for kind, scores in kinds.items() if kind not in gated}


def uncalibrated_domains(scorecard: dict[str, Any]) -> list[str]:
    """The domains of ``scorecard`` judged without bars of their own (see :mod:`cfcheck.calibration.bars`)."""
    facts = (scorecard.get("profile") or {}).get("domains") or {}
    return sorted(name for name, fact in facts.items() if isinstance(fact, dict) and fact.get("bars") == "uncalibrated")


def format_value(score: dict[str, Any]) -> str:
    """The value and its 95% CI, e.g. "0.91 [0.85, 0.96]"."""
    value = score.get("value")
    if value is None:
        return "nan"
    low, high = score.get("ci_low"), score.get("ci_high")
    text = f"{value:.4g}"
    if low is not None and high is not None:
        text += f" [{low:.4g}, {high:.4g}]"
    return text


def format_outcomes(outcomes: dict[str, int]) -> str:
    """ "2 failed, 5 passed" (sorted by name), or "none"."""
    return ", ".join(f"{count} {name}" for name, count in sorted(outcomes.items())) or "none"
