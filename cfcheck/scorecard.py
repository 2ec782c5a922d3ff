"""Scorecards: the publishable result of a run (JSON, Markdown, HTML and per-sample CSV).

Every file is written to a temporary name and moved into place, so a crash or an interrupt
never leaves a half-written scorecard; an interrupted run is written with ``"status":
"incomplete"``.
"""

from __future__ import annotations

import csv
import html
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
    """Write scorecard.{json,md,html} and samples.csv into ``directory``; returns the JSON path."""
    directory.mkdir(parents=True, exist_ok=True)
    ordered = sorted(records, key=_order)
    atomic_write(directory / "samples.csv", _samples_csv(ordered))
    atomic_write(directory / "scorecard.md", render_markdown(scorecard))
    atomic_write(directory / "scorecard.html", render_html(scorecard))
    json_path = directory / "scorecard.json"
    atomic_write(json_path, json.dumps(scorecard, indent=2, sort_keys=True) + "\n")
    return json_path


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
    """Table rows shared by the Markdown, HTML and CLI summaries."""
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


def render_markdown(scorecard: dict[str, Any]) -> str:
    prov = scorecard["provenance"]
    lines = [
        f"# cfcheck scorecard: `{scorecard['method']}`",
        "",
        f"- status: **{scorecard['status']}**, profile `{scorecard['profile']['name']}`, "
        f"outcomes {_format_outcomes(scorecard['outcomes'])}",
        f"- cfcheck {prov['cfcheck_version']} ({prov['cfcheck_commit'] or 'no commit'}), "
        f"torch {prov['torch_version']}, device {prov['device']}, seeds {prov['seeds']}",
        f"- finished {prov['finished']}",
        "",
        "| " + " | ".join(HEADER) + " |",
        "|" + "---|" * len(HEADER),
    ]
    lines += ["| " + " | ".join(row) + " |" for row in score_rows(scorecard)]
    lines += ["", "Reference models (sha256):", ""]
    lines += [f"- `{name}`: `{digest[:16]}…`" for name, digest in sorted(prov["reference_models"].items())]
    return "\n".join(lines) + "\n"


def render_html(scorecard: dict[str, Any]) -> str:
    cells = "".join(f"<th>{html.escape(h)}</th>" for h in HEADER)
    body = "\n".join(
        "<tr class='{}'>{}</tr>".format(
            "fail" if row[-1].startswith(("FAIL", "ERROR")) else "inconclusive" if row[-1].startswith("inconcl") else "",
            "".join(f"<td>{html.escape(c)}</td>" for c in row),
        )
        for row in score_rows(scorecard)
    )
    title = html.escape(f"cfcheck scorecard: {scorecard['method']}")
    prov = html.escape(json.dumps(scorecard["provenance"], indent=2, sort_keys=True))
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{title}</title>"
        "<style>body{font-family:sans-serif}td,th{padding:2px 8px;border-bottom:1px solid #ddd}"
        ".fail{background:#fdd}.inconclusive{background:#ffd}</style></head><body>"
        f"<h1>{title}</h1><p>status: <b>{html.escape(scorecard['status'])}</b>, profile "
        f"{html.escape(scorecard['profile']['name'])}, outcomes "
        f"{html.escape(_format_outcomes(scorecard['outcomes']))}</p>"
        f"<table><tr>{cells}</tr>\n{body}</table><h2>Provenance</h2><pre>{prov}</pre></body></html>\n"
    )


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
