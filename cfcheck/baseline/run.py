"""What a run does with baselines once its scorecard is built: record how it compared (the
scorecard's ``baseline`` section), write ``changes.md`` beside the scorecard, and store the run as a
baseline when asked (``--cfcheck-save-baseline``)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cfcheck.baseline.compare import compare_scorecard
from cfcheck.baseline.protocol import protocol_change_lines
from cfcheck.baseline.store import Baseline
from cfcheck.core.io import atomic_write_text
from cfcheck.profiles import Profile
from cfcheck.reporting.changes import render_changes

#: the Markdown summary against the baseline, beside the scorecard
CHANGES_FILE = "changes.md"


def baseline_section(
    baseline: Baseline,
    scores: list[dict[str, Any]],
    profile: Profile,
    protocols: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The scorecard's ``baseline`` section: where the baseline came from, the run's setting, each
    status's count, the baseline's scores that vanished (:attr:`Baseline.vanished`) and, where the
    baseline was made under another protocol, what differs (the parts, and each bar that changed:
    :attr:`Baseline.bar_changes`); ``protocols`` are the run's (the lines are kept on the baseline
    for the terminal too)."""
    baseline.protocol_changes = protocol_change_lines(baseline.protocols, protocols or {}, baseline.source)
    return {
        "source": baseline.source,
        "method": baseline.method,
        "profile": baseline.profile,
        "known_failures": profile.known_failures,
        "statuses": dict(Counter(str(s.get("baseline_status")) for s in scores if s.get("baseline_status"))),
        "vanished": [
            {"key": e.key, "nodeid": e.nodeid, "value": e.value, "verdict": e.verdict} for e in baseline.vanished
        ],
        "protocol_changes": list(baseline.protocol_changes),
        "bar_changes": [change.describe() for change in baseline.bar_changes],
    }


def finish_baseline_run(
    run_dir: Path,
    scorecard: Mapping[str, Any],
    baseline: Baseline | None,
    profile: Profile,
    *,
    save_to: Path | None,
    complete: bool,
) -> list[str]:
    """Write ``changes.md`` (against ``baseline``; an old one goes when the run has none) and store the run
    at ``save_to``.

    Args:
        run_dir: the run folder, holding ``scorecard.json`` already.
        scorecard: the scorecard just written.
        baseline: the run's baseline, or None.
        profile: the run's profile (tolerances, ``inconclusive`` and ``known_failures``).
        save_to: ``--cfcheck-save-baseline``, or None.
        complete: whether the run ran to its end (an incomplete one is not stored).

    Returns:
        What was done, one line each, for the terminal report.
    """
    notes = []
    changes_path = run_dir / CHANGES_FILE
    if baseline is not None:
        changes = compare_scorecard(
            scorecard,
            baseline,
            tolerances=profile.tolerances,
            inconclusive=profile.inconclusive,
            known_failures=profile.known_failures,
        )
        atomic_write_text(changes_path, render_changes(changes))
        notes.append(f"changes against the baseline: {changes_path}")
    elif changes_path.exists():  # another run's: it would describe this one wrongly
        changes_path.unlink()
    if save_to is not None:
        notes.append(save_baseline(save_to, run_dir / "scorecard.json", scorecard, complete=complete))
    return notes


def save_baseline(path: Path, scorecard_path: Path, scorecard: Mapping[str, Any], *, complete: bool) -> str:
    """Store the scorecard at ``scorecard_path`` as the baseline ``path``, failures included; an
    incomplete run, or one without scores, is not stored.

    Returns:
        What was stored (how many scores, how many missed their bars), or why nothing was.
    """
    if not complete:
        return (
            f"baseline NOT saved to {path}: the run is incomplete (interrupted, or stopped early by -x or "
            "--maxfail); a baseline records a complete run: rerun it to the end"
        )
    scores = list(scorecard.get("scores") or [])
    if not scores:
        return f"baseline NOT saved to {path}: the run recorded no score"
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, scorecard_path.read_text())
    verdicts = Counter(s.get("verdict") or "none" for s in scores)
    missed = verdicts["fail"] + verdicts["inconclusive"] + verdicts["error"]
    return (
        f"baseline saved to {path}: {len(scores)} scores, {missed} missing their bars ({verdicts['fail']} failed, "
        f"{verdicts['inconclusive']} inconclusive, {verdicts['error']} could not be computed), "
        f"{verdicts['pass']} passed, {verdicts['none']} without a bar"
    )
