"""``scores.csv``: the scorecard's scores as one flat table, a row per score, drawn from the scorecard
model like every other format (:class:`cfcheck.reporting.model.Scorecard`), for a spreadsheet, pandas or
a paper's table. The per-input values are ``samples.csv`` (written with the scorecard, not a format).

Columns: the score's identity (``kind``, ``domain``, ``suite``, ``metric``, ``task``), its value, 95 %
interval and sample size, the metric's ``direction``, its bar as data (``bar_kind`` "min"/"max",
``bar_bound``, ``bar_relative`` and the resolved ``bar_floor`` and ``bar_value``) and as text
(``threshold``), the ``verdict``, the ``reason`` of a skip or an inconclusive verdict, the standing
against the run's baseline, and the ``protocol`` of its kind and domain (its label, e.g.
``vce/faces/quick v2 (1a2b3c4d5e6f)``). Numbers are written
in full precision (``repr``); a missing one is an empty cell.
"""

from __future__ import annotations

import csv
import io
from typing import Any

from cfcheck.reporting.model import Scorecard
from cfcheck.reporting.protocol_text import protocol_label

__all__ = ["COLUMNS", "render_scores_csv"]

COLUMNS = (
    "kind",
    "domain",
    "suite",
    "metric",
    "task",
    "value",
    "ci_low",
    "ci_high",
    "n",
    "direction",
    "bar_kind",
    "bar_bound",
    "bar_relative",
    "bar_floor",
    "bar_value",
    "threshold",
    "verdict",
    "reason",
    "baseline_status",
    "regressed",
    "protocol",
)


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def render_scores_csv(scorecard: Scorecard) -> str:
    """The scores of ``scorecard`` as CSV text (a header of :data:`COLUMNS`, then a row per score in the
    scorecard's order).

    Args:
        scorecard: the run's scorecard model.

    Returns:
        The CSV text, ``\\n`` line ends.

    Example:
        >>> from cfcheck.reporting.model import Scorecard
        >>> card = Scorecard.from_json({"scores": [{"kind": "vce", "metric": "d1", "value": 2.5}]})
        >>> render_scores_csv(card).splitlines()[1].split(",")[:6]
        ['vce', '-', '-', 'd1', '-', '2.5']
    """
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(COLUMNS)
    for score in scorecard.scores.scores:
        bar = score.bar
        protocol = scorecard.protocol_of(score.kind, score.domain)
        row = {
            "kind": score.kind,
            "domain": score.domain,
            "suite": score.suite,
            "metric": score.metric,
            "task": score.task,
            "value": score.value,
            "ci_low": score.ci_low,
            "ci_high": score.ci_high,
            "n": score.n,
            "direction": score.data.get("direction"),
            "bar_kind": bar.kind if bar is not None else None,
            "bar_bound": bar.bound if bar is not None else None,
            "bar_relative": bar.relative if bar is not None else None,
            "bar_floor": bar.floor if bar is not None else None,
            "bar_value": bar.value if bar is not None else None,
            "threshold": score.threshold,
            "verdict": score.verdict,
            "reason": score.reason,
            "baseline_status": score.baseline_status,
            "regressed": score.regressed if score.baseline_status is not None else None,
            "protocol": protocol_label(protocol) if protocol is not None else None,
        }
        writer.writerow([_cell(row[column]) for column in COLUMNS])
    return buffer.getvalue()
