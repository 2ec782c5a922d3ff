"""Scorecards: the publishable result of a run (JSON and per-sample CSV, plus the report formats of
:mod:`cfcheck.reporting.formats`: Markdown, HTML, a badge and any a plugin adds).

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
from cfcheck.core.io import atomic_write_text as atomic_write
from cfcheck.core.records import ScoreRecord
from cfcheck.core.set_features import SET_FEATURES_FILE, SetFeatures, write_set_features
from cfcheck.results import load_scorecard

#: 2: records carry a three-valued verdict and a reason; 3: records carry their kind and domain
SCORECARD_FORMAT = 3


def build_scorecard(
    records: Sequence[ScoreRecord],
    *,
    method: str,
    profile: dict[str, Any],
    status: str,
    seeds: Sequence[int],
    device: str,
    models: dict[str, str],
    devices: dict[str, str] | None = None,
    outcomes: dict[str, int],
    started: datetime,
    generation: dict[str, Any] | None = None,
    costs: dict[str, Any] | None = None,
    answer_read: dict[str, Any] | None = None,
    protocols: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The scorecard as a JSON-ready dict (records without per-sample values). ``answer_read``: what
    the method read of the domain's answer (``{"what": [...], "calls": N}``, None: nothing), which makes
    the run no valid submission (:mod:`cfcheck.core.answer_reads`). Its ``calibration`` section (what
    the controls reached on its scores, :func:`~cfcheck.reporting.calibration_record.collect_calibration`)
    is gathered here from the domains' calibration folders, so that its formats need no domain; its
    ``cards`` and ``kinds`` sections (:func:`unbundled_sections`: the definitions of the metric cards and
    the facts of the kinds cfcheck does not bundle) are written where its scores have any, so that its
    formats need no kind of another package either."""
    import torch

    from cfcheck.reporting.calibration_record import collect_calibration

    scores = [r.to_dict(with_samples=False) for r in sorted(records, key=_order)]
    card = {
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
            # where the tests ran: each xdist worker's device (its own GPU under worker pinning)
            "devices": devices or {},
            "seeds": list(seeds),
            "reference_models": models,
            "generation": generation or {},
            # the method read the domain's true counterfactual or its factors: not a valid submission
            "answer_read": answer_read,
            "started": started.isoformat(timespec="seconds"),
            "finished": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        },
        "costs": costs or {},
        # the protocol of each (kind, domain) of the scores: version, digest, parts (cfcheck.reporting.protocols)
        "protocols": protocols or {},
        "scores": scores,
    }
    card["calibration"] = collect_calibration(card)
    card.update(unbundled_sections(scores))
    return card


def unbundled_sections(scores: Sequence[Any]) -> dict[str, Any]:
    """What a scorecard of ``scores`` carries of the parts cfcheck does not bundle, so that it renders
    where they are not installed: ``cards``, the definition of each metric card of the scores that a
    kind of another package brings (:func:`cfcheck.metrics.card_json.unbundled_cards_json`), and
    ``kinds``, the facts the formats read of each such kind (``{"task_group_label": ...}``). A section
    with nothing in it is left out (a scorecard of cfcheck's own kinds and cards has neither).

    Args:
        scores: the scorecard's scores (as its JSON holds them).

    Returns:
        Section name → its content, only the sections that have any.
    """
    from cfcheck.metrics.card_json import unbundled_cards_json

    sections: dict[str, Any] = {}
    cards = unbundled_cards_json(str(score.get("metric")) for score in scores)
    if cards:
        sections["cards"] = cards
    kinds = {kind: facts for kind in sorted({str(s.get("kind")) for s in scores}) if (facts := _kind_facts(kind))}
    if kinds:
        sections["kinds"] = kinds
    return sections


def _kind_facts(kind: str) -> dict[str, Any]:
    """What the formats read of ``kind`` when cfcheck does not bundle it (its declaration lives in
    another package); empty for cfcheck's own kinds and for a name no installed kind has."""
    from cfcheck.kinds import kind_spec
    from cfcheck.kinds.registry import declarations

    declaration = declarations().get(kind)
    if declaration is None or declaration.spec.split(".", 1)[0] == "cfcheck":
        return {}
    return {"task_group_label": kind_spec(kind).task_group_label}


def write_scorecard(
    directory: Path, scorecard: dict[str, Any], records: Sequence[ScoreRecord], *, plugins: Any = None
) -> Path:
    """Write samples.csv, (where set-level scores kept per-input features) set_features.npz and
    scorecard.json into ``directory``, then every report format of the scorecard
    (:func:`cfcheck.reporting.formats.write_formats`: scorecard.md, scorecard.html, badge.svg and those
    of plugins); the formats read the example grids already in ``directory``.

    Args:
        directory: the run folder.
        scorecard: the scorecard JSON (:func:`build_scorecard`).
        records: the run's records, with their per-sample values.
        plugins: the plugin manager whose formats are drawn (pytest's in a run; None: the bundled ones).

    Returns:
        The JSON path.

    Raises:
        cfcheck.reporting.formats.FormatError: after everything else was written, where a format raised.
    """
    from cfcheck.reporting.formats import FormatError, write_formats
    from cfcheck.reporting.model import Scorecard

    directory.mkdir(parents=True, exist_ok=True)
    ordered = sorted(records, key=_order)
    atomic_write(directory / "samples.csv", _samples_csv(ordered))
    kept = {(r.kind, r.domain, r.task): SetFeatures.decode(r.set_features) for r in ordered if r.set_features}
    if kept:
        write_set_features(directory / SET_FEATURES_FILE, kept)
    json_path = write_json(directory, scorecard)
    # the formats read the JSON as written (its keys sorted), so that `cfcheck render` draws the same pages
    _, failures = write_formats(Scorecard.from_json(load_scorecard(json_path)), directory, plugins)
    if failures:
        raise FormatError(json_path, failures)
    return json_path


def write_json(directory: Path, scorecard: dict[str, Any]) -> Path:
    """``scorecard.json`` in ``directory`` (atomically); returns its path."""
    json_path = Path(directory) / "scorecard.json"
    atomic_write(json_path, json.dumps(scorecard, indent=2, sort_keys=True) + "\n")
    return json_path


def recalibrate(directory: Path) -> Path:
    """Rewrite the ``calibration`` section of the scorecard in ``directory`` from its domains'
    calibration folders as they are on this machine now (after ``cfcheck calibrate`` wrote new values,
    or for a scorecard written before the section); nothing else of the scorecard changes. Its formats
    are redrawn by :func:`cfcheck.reporting.formats.render_run`. Returns the JSON path."""
    from cfcheck.reporting.calibration_record import collect_calibration

    scorecard = load_scorecard(Path(directory))
    scorecard["calibration"] = collect_calibration(scorecard)
    return write_json(directory, scorecard)


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
