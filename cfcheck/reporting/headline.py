"""A scorecard's overall verdict in one sentence (:attr:`cfcheck.reporting.model.Scorecard.headline`):
what the Markdown and HTML pages open with; the terminal's last line and the badge agree with it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from cfcheck.core.answer_reads import ANSWER_READ_HEADLINE, answer_read_sentence
from cfcheck.reporting.scores import ScoreGroup
from cfcheck.reporting.tables import KNOWN_FAILURE

__all__ = ["Headline", "headline_of", "kinds_by_judgement", "uncalibrated_domains"]


class Headline(NamedTuple):
    """The overall verdict: ``word`` ("PASS", "FAIL", "INCOMPLETE", "REPORTED" or "NOT A VALID
    SUBMISSION") and the sentence that starts with it."""

    word: str
    sentence: str


def kinds_by_judgement(scores: ScoreGroup) -> tuple[list[str], dict[str, int]]:
    """The kinds of ``scores`` in score order, split: those with a judged score (pass, fail or
    inconclusive), and kind → number of scores for those none of whose scores has a bar (reported, not
    judged)."""
    kinds = scores.by_kind()
    judged = ("pass", "fail", "inconclusive")
    gated = [kind for kind, group in kinds.items() if any(s.category in judged for s in group)]
    return gated, {kind: len(group) for kind, group in kinds.items() if kind not in gated}


def uncalibrated_domains(domain_facts: Mapping[str, Any]) -> list[str]:
    """The domains judged without bars of their own (:mod:`cfcheck.calibration.bars`), by name."""
    return sorted(
        name for name, fact in domain_facts.items() if isinstance(fact, Mapping) and fact.get("bars") == "uncalibrated"
    )


def headline_of(
    scores: ScoreGroup,
    *,
    status: str,
    vanished: int = 0,
    domain_facts: Mapping[str, Any] | None = None,
    answer_read: Mapping[str, Any] | None = None,
) -> Headline:
    """The headline of a run: ("FAIL", "FAIL: 3 of 5 suites have failing scores"), ("PASS", …),
    ("INCOMPLETE", …) for a run cut short, ("REPORTED", …) where no score had a bar; ("NOT A VALID
    SUBMISSION", "NOT A VALID SUBMISSION: the method read …; PASS: …") where the method read the
    domain's answer, whatever its verdicts.

    Args:
        scores: the run's scores.
        status: the run's status ("complete", or "incomplete" for a run cut short).
        vanished: the baseline's scores the run's tests did not record (they fail the run).
        domain_facts: domain name → what the run recorded of it (``profile.domains``).
        answer_read: what the method read of the domain's answer (None: nothing).
    """
    facts = domain_facts or {}
    suites = scores.by_kind_suite()
    failing = [key for key, group in suites.items() if group.any_failing]
    counts = scores.counts
    total = len(scores)
    if status != "complete":
        word = "INCOMPLETE"
        sentence = f"the run was cut short; {len(failing)} of {len(suites)} suites have failing scores so far"
    elif failing:
        word = "FAIL"
        sentence = f"{len(failing)} of {len(suites)} suites have failing scores"
    elif vanished:
        word = "FAIL"
        sentence = f"{vanished} scores of the baseline vanished (their tests ran without recording them)"
    elif not total:
        word, sentence = "PASS", "no scores were recorded"
    elif not counts["pass"] and not counts["inconclusive"] and not counts["fail"]:  # (a fail here: a known one)
        word = "REPORTED"
        sentence = f"no bars: reported only ({total} scores without a verdict)"
    else:
        word = "PASS"
        sentence = f"no score fails ({counts['pass']} pass"
        sentence += f", {counts['inconclusive']} inconclusive)" if counts["inconclusive"] else ")"
    known = sum(1 for score in scores if score.baseline_status == KNOWN_FAILURE)
    if known:
        sentence += (
            f"; {known} known failure{'s' if known > 1 else ''} (missed their bars in the baseline too, not worse)"
        )
    gated, reported = kinds_by_judgement(scores)
    if reported and word != "REPORTED":
        sentence += f"; judged: {', '.join(gated)}" if gated else ""
        sentence += "; no bars, reported only: " + ", ".join(
            f"{kind} ({count} scores)" for kind, count in reported.items()
        )
    uncalibrated = uncalibrated_domains(facts)
    if uncalibrated:
        commands = " and ".join(
            f"`cfcheck calibrate --domain {_spec(facts.get(name)) or name}`" for name in uncalibrated
        )
        sentence += (
            f"; uncalibrated domain{'s' if len(uncalibrated) > 1 else ''} {', '.join(uncalibrated)}: "
            f"scores without verdicts until {commands} earns {'their' if len(uncalibrated) > 1 else 'its'} bars"
        )
    if answer_read is not None:  # the method read the domain's answer: whatever its verdicts, no valid submission
        head = f"{ANSWER_READ_HEADLINE}: {answer_read_sentence(answer_read)}; {word}: {sentence}"
        return Headline(ANSWER_READ_HEADLINE, head)
    return Headline(word, f"{word}: {sentence}")


def _spec(facts: object) -> object:
    return facts.get("spec") if isinstance(facts, Mapping) else None
