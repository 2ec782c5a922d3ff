"""A whole scorecard against a baseline: every score's status (:func:`cfcheck.baseline.store.classify`),
the baseline's scores that vanished, as :class:`cfcheck.reporting.changes.Changes` to render."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from cfcheck.baseline.protocol import protocol_change_lines
from cfcheck.baseline.store import Baseline, StoredScore
from cfcheck.core.keys import ScoreId
from cfcheck.metrics.key import MetricKey
from cfcheck.reporting.changes import Changes, ScoreChange
from cfcheck.reporting.tables import format_value

#: the ``inconclusive`` setting under which an inconclusive score misses its bar
INCONCLUSIVE_FAILS = "fail"


def score_keys(score: Mapping[str, Any]) -> tuple[str, str]:
    """(identity key, legacy key) of a scorecard's score, as :class:`cfcheck.core.records.ScoreRecord` has them."""
    identity = ScoreId.from_score(score)
    return identity.serialise(), identity.legacy()


def tolerance_of(metric: str, tolerances: Mapping[str, float]) -> float:
    """The tolerance of ``metric`` (``card`` or ``card:variant``): its own, else its card's, else 0."""
    try:
        key = MetricKey.parse(metric)
    except ValueError:
        return float(tolerances.get(metric, 0.0))
    return float(tolerances.get(str(key), tolerances.get(key.card, 0.0)))


def compare_scorecard(
    scorecard: Mapping[str, Any],
    baseline: Baseline,
    *,
    tolerances: Mapping[str, float],
    inconclusive: str = INCONCLUSIVE_FAILS,
    known_failures: str = "xfail",
    ran: Iterable[str] | None = None,
) -> Changes:
    """Every score of ``scorecard`` against ``baseline``.

    Args:
        scorecard: a run's scorecard (the dict of ``scorecard.json``).
        baseline: the baseline to compare with.
        tolerances: metric key → tolerance (the profile's: the cards', with ``[tool.cfcheck.tolerances]``).
        inconclusive: the run's ``inconclusive`` setting; "fail" counts an inconclusive score as missing its bar.
        known_failures: the run's ``--cfcheck-known-failures`` ("xfail", "strict" or "fail").
        ran: node ids of every test that ran; None: those that recorded a score, plus the scores the
            scorecard's own ``baseline`` section lists as vanished.

    Returns:
        The :class:`~cfcheck.reporting.changes.Changes`.
    """
    scores = list(scorecard.get("scores") or [])
    changes = Changes(
        method=str(scorecard.get("method", "?")),
        source=baseline.source,
        baseline_method=baseline.method,
        known_failures=known_failures,
        notes=[
            *protocol_change_lines(baseline.protocols, scorecard.get("protocols") or {}, baseline.source),
            *(change.describe() for change in baseline.bar_changes),
        ],
    )
    recorded = [score_keys(s) for s in scores]
    for score, keys in zip(scores, recorded):
        value = score.get("value")
        judgement = baseline.judge(
            keys,
            value=float(value) if isinstance(value, (int, float)) else math.nan,
            verdict=score.get("verdict"),
            direction=str(score.get("direction", "none")),
            tolerance=tolerance_of(str(score["metric"]), tolerances),
            failing=score.get("verdict") == "fail"
            or (score.get("verdict") == "inconclusive" and inconclusive == INCONCLUSIVE_FAILS),
            known_failures=known_failures,
        )
        changes.scores.append(
            _change(judgement.status, score, judgement.stored, tolerance_of(str(score["metric"]), tolerances))
        )
    if ran is None:
        listed = {v.get("key") for v in (scorecard.get("baseline") or {}).get("vanished") or []}
        ran_ids = {str(s.get("nodeid")) for s in scores} | {
            e.nodeid for key, e in baseline.entries.items() if key in listed and e.nodeid
        }
    else:
        ran_ids = set(ran)
    vanished = baseline.vanished_among(recorded, ran_ids)
    changes.vanished = [_vanished(entry) for entry in vanished]
    seen = {k for pair in recorded for k in pair}
    changes.not_run = sum(1 for key in baseline.entries if key not in seen) - len(vanished)
    return changes


def _change(status: str, score: Mapping[str, Any], stored: StoredScore | None, tolerance: float) -> ScoreChange:
    now = score.get("value")
    before = stored.value if stored is not None else None
    moved = f"{float(now) - before:+.4g}" if isinstance(now, (int, float)) and before is not None else ""
    return ScoreChange(
        status=status,
        score=f"{score['suite']}/{score['metric']}",
        where=f"{score.get('kind', '-')}/{score.get('domain', '-')}/{score['task']}",
        now=f"{format_value(dict(score))}, {score.get('verdict') or 'no bar'}",
        baseline=stored.describe() if stored is not None else "-",
        bar=str(score.get("threshold") or (stored.threshold if stored is not None else None) or "-"),
        change=moved,
        tolerance=f"{tolerance:g}" if moved else "",
    )


def _vanished(entry: StoredScore) -> ScoreChange:
    return ScoreChange(
        status="vanished",
        score=entry.score,
        where=entry.where,
        now="not recorded",
        baseline=entry.describe(),
        bar=entry.threshold or "-",
    )
