"""Scorecards: the publishable result of a run (JSON and per-sample CSV, plus the views of
:mod:`cfcheck.reporting`: Markdown, HTML and a badge).

Every file is written to a temporary name and moved into place, so a crash or an interrupt
never leaves a half-written scorecard; an interrupted run is written with ``"status":
"incomplete"``.
"""

from __future__ import annotations

import csv
import io
import json
import math
import platform
import subprocess
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from cfcheck import __version__
from cfcheck.records import ScoreRecord

#: 2: records carry a three-valued verdict and a reason; 3: records carry their kind and domain
SCORECARD_FORMAT = 3

#: How each verdict reads in a table; "FAIL" and "ERROR" are what `cfcheck summary --failures` keeps.
VERDICT_LABELS = {"pass": "pass", "fail": "FAIL", "inconclusive": "inconclusive", "error": "ERROR"}


def build_scorecard(
    records: Sequence[ScoreRecord],
    *,
    method: str,
    profile: dict[str, Any],
    status: str,
    seeds: Sequence[int],
    device: str,
    models: dict[str, str],
    outcomes: dict[str, int],
    started: datetime,
    generation: dict[str, Any] | None = None,
    costs: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The scorecard as a JSON-ready dict (records without per-sample values)."""
    import torch

    return {
        "format": SCORECARD_FORMAT,
        "status": status,
        "method": method,
        "profile": profile,
        "outcomes": outcomes,
        "provenance": {
            "cfcheck_version": __version__,
            "cfcheck_commit": _git_commit(),
            "torch_version": torch.__version__,
            "python_version": platform.python_version(),
            "platform": platform.platform(),
            "device": device,
            "seeds": list(seeds),
            "reference_models": models,
            "generation": generation or {},
            "started": started.isoformat(timespec="seconds"),
            "finished": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        },
        "costs": costs or {},
        "scores": [r.to_dict(with_samples=False) for r in sorted(records, key=_order)],
    }


def write_scorecard(directory: Path, scorecard: dict[str, Any], records: Sequence[ScoreRecord]) -> Path:
    """Write scorecard.{json,md,html}, badge.svg and samples.csv into ``directory``; returns the
    JSON path. The views (:mod:`cfcheck.reporting`) read the example grids already in ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    ordered = sorted(records, key=_order)
    atomic_write(directory / "samples.csv", _samples_csv(ordered))
    write_views(directory, scorecard)
    json_path = directory / "scorecard.json"
    atomic_write(json_path, json.dumps(scorecard, indent=2, sort_keys=True) + "\n")
    return json_path


def write_views(directory: Path, scorecard: dict[str, Any]) -> None:
    """scorecard.md, scorecard.html (with the bundled controls' calibration values as they are
    now) and badge.svg of ``scorecard`` in ``directory``, beside its example grids."""
    from cfcheck.calibration import load_calibration_values
    from cfcheck.reporting.badge import render_badge
    from cfcheck.reporting.html import render_html
    from cfcheck.reporting.markdown import render_markdown

    atomic_write(directory / "scorecard.md", render_markdown(scorecard, directory))
    atomic_write(directory / "scorecard.html", render_html(scorecard, directory, load_calibration_values(scorecard)))
    atomic_write(directory / "badge.svg", render_badge(scorecard, directory))


def load_scorecard(path: Path) -> dict[str, Any]:
    """Read a scorecard JSON written by :func:`write_scorecard`, with a clear error otherwise."""
    path = Path(path)
    if path.is_dir():
        path = path / "scorecard.json"
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise FileNotFoundError(f"no cfcheck scorecard at {path}") from None
    except json.JSONDecodeError as error:
        raise ValueError(f"{path} is not a valid scorecard JSON file: {error}") from None
    if not isinstance(data, dict) or "scores" not in data:
        raise ValueError(f"{path} is JSON but not a cfcheck scorecard (no 'scores' list)")
    return data


def score_rows(scorecard: dict[str, Any]) -> list[list[str]]:
    """Rows of the full table of scores (Markdown, HTML and ``cfcheck summary``)."""
    rows = []
    for score in scorecard["scores"]:
        verdict = VERDICT_LABELS.get(score.get("verdict"), "-")
        if score.get("reason"):
            verdict += f": {score['reason']}"
        if score.get("regressed"):
            verdict += " (regressed)"
        rows.append(
            [
                score.get("kind", "-"),
                score.get("domain", "-"),
                score["suite"],
                score["metric"],
                score["task"],
                _format_value(score),
                str(score["n"]),
                score.get("threshold") or "-",
                verdict,
            ]
        )
    return rows


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
    """A score that fails the run: it failed its bar, could not be computed, or regressed."""
    return score.get("verdict") in ("fail", "error") or bool(score.get("regressed"))


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
    scores"), ("PASS", ...) or ("INCOMPLETE", ...) for a run cut short."""
    suites = group_scores(scorecard["scores"], suite_key)
    failing = [key for key, scores in suites.items() if any(is_failing(s) for s in scores)]
    counts = count_verdicts(scorecard["scores"])
    if scorecard.get("status") != "complete":
        word = "INCOMPLETE"
        sentence = f"the run was cut short; {len(failing)} of {len(suites)} suites have failing scores so far"
    elif failing:
        word = "FAIL"
        sentence = f"{len(failing)} of {len(suites)} suites have failing scores"
    elif not scorecard["scores"]:
        word, sentence = "PASS", "no scores were recorded"
    elif not counts["pass"] and not counts["inconclusive"]:
        word = "REPORTED"
        sentence = f"no bars: reported only ({len(scorecard['scores'])} scores without a verdict)"
    else:
        word = "PASS"
        sentence = f"no score fails ({counts['pass']} pass"
        sentence += f", {counts['inconclusive']} inconclusive)" if counts["inconclusive"] else ")"
    gated, reported = kinds_by_judgement(scorecard)
    if reported and word != "REPORTED":
        sentence += f"; judged: {', '.join(gated)}" if gated else ""
        sentence += "; no bars, reported only: " + ", ".join(f"{kind} ({count} scores)" for kind, count in reported.items())
    uncalibrated = uncalibrated_domains(scorecard)
    if uncalibrated:
        sentence += (f"; uncalibrated domain{'s' if len(uncalibrated) > 1 else ''} {', '.join(uncalibrated)}: "
                     "scores without verdicts until `cfcheck calibrate --domain SPEC` earns its bars")
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
    """The domains of ``scorecard`` judged without bars of their own (see :mod:`cfcheck.domain_bars`)."""
    facts = (scorecard.get("profile") or {}).get("domains") or {}
    return sorted(name for name, fact in facts.items() if isinstance(fact, dict) and fact.get("bars") == "uncalibrated")


def format_value(score: dict[str, Any]) -> str:
    """The value and its 95% CI, e.g. "0.91 [0.85, 0.96]"."""
    return _format_value(score)


def format_outcomes(outcomes: dict[str, int]) -> str:
    return _format_outcomes(outcomes)


def _samples_csv(records: Sequence[ScoreRecord]) -> str:
    """One row per sample; the label columns are the tasks' own (VCE: source, target; SCM:
    the intervened parent's old and new value; …), in order of first appearance."""
    label_columns: list[str] = []
    for record in records:
        label_columns += [name for name in record.sample_labels if name not in label_columns]
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["kind", "domain", "suite", "metric", "task", "sample", "value", *label_columns])
    for record in records:
        for i, value in enumerate(record.samples):
            labels = [record.sample_labels.get(name, []) for name in label_columns]
            writer.writerow(
                [
                    record.kind,
                    record.domain,
                    record.suite,
                    record.metric,
                    record.task,
                    i,
                    "" if value is None or (isinstance(value, float) and math.isnan(value)) else repr(value),
                    *(column[i] if i < len(column) else "" for column in labels),
                ]
            )
    return buffer.getvalue()


from cfcheck.io import atomic_write_text as atomic_write  # noqa: E402  (re-export: one atomic write)


def _format_value(score: dict[str, Any]) -> str:
    value = score.get("value")
    if value is None:
        return "nan"
    low, high = score.get("ci_low"), score.get("ci_high")
    text = f"{value:.4g}"
    if low is not None and high is not None:
        text += f" [{low:.4g}, {high:.4g}]"
    return text


def _format_outcomes(outcomes: dict[str, int]) -> str:
    return ", ".join(f"{count} {name}" for name, count in sorted(outcomes.items())) or "none"


def _order(record: Any) -> tuple[str, ...]:
    fields = ("kind", "domain", "suite", "task", "metric")
    if isinstance(record, dict):
        return tuple(str(record.get(f, "-")) for f in fields)
    return tuple(str(getattr(record, f)) for f in fields)


def _git_commit() -> str | None:
    """The commit of the cfcheck checkout, when it runs from one."""
    here = Path(__file__).resolve().parent
    try:
        result = subprocess.run(
            ["git", "-C", str(here), "rev-parse", "--short=12", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return result.stdout.strip() or None
