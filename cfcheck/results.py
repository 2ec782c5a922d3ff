"""Scorecards as data: load one or many runs into long-format :class:`pandas.DataFrame` s.

A run folder (what a cfcheck run writes under its report dir) holds ``scorecard.json`` and, beside
it, ``samples.csv`` with the per-input values. :func:`load_scores` reads the scores of any number
of runs into one table, one row per score; :func:`load_samples` reads their per-input values.

Example:
    >>> from cfcheck.results import load_scores
    >>> scores = load_scores(["reports/dvce-quick", "reports/pgd-quick"])  # doctest: +SKIP
    >>> scores.pivot_table(index=["suite", "metric"], columns="method", values="value")  # doctest: +SKIP

Columns of :func:`load_scores` (:data:`SCORE_COLUMNS`): ``method`` (the scorecard's method
name), ``run`` (the run folder), ``profile``, ``kind``, ``domain``, ``suite``, ``metric``,
``task``, ``seed`` (the ``seedN`` part of the task, or the run's only seed; missing otherwise),
``value``, ``ci_low``, ``ci_high`` (the 95% interval), ``n`` (inputs behind the value),
``verdict``, ``threshold`` (the bar's text), ``bar`` (the bound the value was held to, from the recorded
bar; missing without a bar, for an unresolved floor-relative bar and in scorecards written before bars were
data) and ``direction`` (``"higher"``, ``"lower"`` or ``"none"``, from the metric's card; a metric with no
card keeps the direction written in the scorecard). The cards are every registered kind's too: this
module loads the kinds (:func:`cfcheck.kinds.registry.loaded_cards`), so a notebook that imports only
it reads the same cards as a run.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

__all__ = [
    "SCORE_COLUMNS",
    "SAMPLE_COLUMNS",
    "ResultsError",
    "load_scores",
    "load_samples",
    "load_scorecard",
    "scorecard_path",
    "scores_frame",
    "metric_direction",
]

SCORE_COLUMNS = [
    "method",
    "run",
    "profile",
    "kind",
    "domain",
    "suite",
    "metric",
    "task",
    "seed",
    "value",
    "ci_low",
    "ci_high",
    "n",
    "verdict",
    "threshold",
    "bar",
    "direction",
]
SAMPLE_COLUMNS = ["method", "run", "kind", "domain", "suite", "metric", "task", "seed", "sample", "input", "value"]
_SEED = re.compile(r"(?:^|/)seed(\d+)(?:/|$)")


class ResultsError(ValueError):
    """A path that is not a cfcheck run folder or scorecard (the message names the path)."""


def scorecard_path(path: str | Path) -> Path:
    """The ``scorecard.json`` of a run folder, or ``path`` itself when it is one.

    Raises:
        ResultsError: no such file or folder, or a folder without ``scorecard.json``.
    """
    path = Path(path)
    if path.is_dir():
        card = path / "scorecard.json"
        if not card.is_file():
            raise ResultsError(f"{path} is not a cfcheck run folder: it has no scorecard.json")
        return card
    if not path.is_file():
        raise ResultsError(f"no scorecard at {path}: no such file or folder")
    return path


def load_scorecard(path: Path) -> dict[str, Any]:
    """Read a scorecard JSON written by :func:`cfcheck.reporting.scorecard.write_scorecard`, with a clear error otherwise."""
    path = Path(path)
    if path.is_dir():
        path = path / "scorecard.json"
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise FileNotFoundError(f"no cfcheck scorecard at {path}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ValueError(f"{path} is not a cfcheck scorecard: not valid JSON ({error})") from None
    if not isinstance(data, dict) or not isinstance(data.get("scores"), list):
        raise ValueError(f"{path} is not a cfcheck scorecard: it has no 'scores' list")
    return data


def _read_card(path: Path) -> dict[str, Any]:
    try:
        return load_scorecard(path)
    except ValueError as error:  # not JSON, or no 'scores' list: the message names the path
        raise ResultsError(str(error)) from None


def metric_direction(metric: str, written: str | None = None) -> str:
    """The direction of ``metric`` from its card (``"oracle_score:oracle_lenet"`` reads the card
    ``oracle_score``, the kinds' own cards included); ``written`` (or ``"none"``) for a metric without a card."""
    from cfcheck.kinds.registry import loaded_cards
    from cfcheck.metrics.key import MetricKey

    card = loaded_cards().get(MetricKey.parse(metric).card)
    if card is not None:
        return str(card.direction)
    return written if written in ("higher", "lower") else "none"


def _bar_value(data: Any) -> float:
    """The bound of a scorecard's recorded bar (:class:`~cfcheck.core.thresholds.RecordedBar`); NaN without one."""
    from cfcheck.core.thresholds import RecordedBar

    if not isinstance(data, dict):
        return math.nan
    try:
        value = RecordedBar.from_dict(data).value
    except ValueError:
        return math.nan
    return math.nan if value is None else float(value)


def _seed(task: str, seeds: Any) -> float:
    match = _SEED.search(task)
    if match:
        return float(match.group(1))
    if isinstance(seeds, list) and len(seeds) == 1 and isinstance(seeds[0], int):
        return float(seeds[0])
    return math.nan


def scores_frame(cards: Iterable[tuple[str, str, dict[str, Any]]]):
    """The long-format score table of already-parsed scorecards.

    Args:
        cards: ``(method label, run folder, parsed scorecard)`` per run.

    Returns:
        A :class:`pandas.DataFrame` with :data:`SCORE_COLUMNS`, one row per score record.
    """
    import pandas as pd

    rows = []
    for method, run, card in cards:
        seeds = card.get("provenance", {}).get("seeds")
        profile = card.get("profile", {}).get("name")
        for record in card["scores"]:
            metric, task = str(record.get("metric")), str(record.get("task"))
            rows.append(
                {
                    "method": method,
                    "run": run,
                    "profile": profile,
                    "kind": record.get("kind") or "-",
                    "domain": record.get("domain") or "-",
                    "suite": str(record.get("suite")),
                    "metric": metric,
                    "task": task,
                    "seed": _seed(task, seeds),
                    "value": _float(record.get("value")),
                    "ci_low": _float(record.get("ci_low")),
                    "ci_high": _float(record.get("ci_high")),
                    "n": _float(record.get("n")),
                    "verdict": record.get("verdict"),
                    "threshold": record.get("threshold"),
                    "bar": _bar_value(record.get("bar")),
                    "direction": metric_direction(metric, record.get("direction")),
                }
            )
    frame = pd.DataFrame(rows, columns=SCORE_COLUMNS)
    frame["n"] = frame["n"].astype("Int64")
    frame["seed"] = frame["seed"].astype("Int64")
    return frame


def load_scores(paths: str | Path | Iterable[str | Path]):
    """Every score of one or many runs as one long-format table.

    Args:
        paths: run folders or ``scorecard.json`` files (one path or several).

    Returns:
        A :class:`pandas.DataFrame` with :data:`SCORE_COLUMNS`, one row per score, runs in the
        order given.

    Raises:
        ResultsError: a path that is not a run folder or a cfcheck scorecard.
    """
    cards = []
    for path in _paths(paths):
        card_path = scorecard_path(path)
        card = _read_card(card_path)
        cards.append((str(card.get("method", card_path.parent.name)), str(card_path.parent), card))
    return scores_frame(cards)


def load_samples(paths: str | Path | Iterable[str | Path]):
    """The per-input values of one or many runs (their ``samples.csv``) as one long-format table.

    Args:
        paths: run folders or ``scorecard.json`` files.

    Returns:
        A :class:`pandas.DataFrame` with :data:`SAMPLE_COLUMNS` (``input`` is the input's label in
        its task, missing for runs written before it existed; ``value`` is numeric, ``True``/``False``
        read as 1/0). Set-level scores (FID, KID) have no rows here.

    Raises:
        ResultsError: a path that is not a run folder, or a run without ``samples.csv``.
    """
    import pandas as pd

    frames = []
    for path in _paths(paths):
        card_path = scorecard_path(path)
        card = _read_card(card_path)
        samples = card_path.parent / "samples.csv"
        if not samples.is_file():
            raise ResultsError(f"{card_path.parent} has no samples.csv beside its scorecard")
        frame = pd.read_csv(samples, dtype=str, keep_default_na=False)
        missing = {"suite", "metric", "task", "value"} - set(frame.columns)
        if missing:
            raise ResultsError(f"{samples} is not a cfcheck samples file: no column {', '.join(sorted(missing))}")
        for column in ("kind", "domain"):
            frame[column] = frame[column].replace("", "-") if column in frame else "-"
        frame["input"] = frame.get("input", pd.NA)
        sample = frame["sample"] if "sample" in frame else pd.Series(pd.NA, index=frame.index)
        frame["sample"] = pd.to_numeric(sample, errors="coerce").astype("Int64")
        frame["value"] = frame["value"].map(_float)
        seeds = card.get("provenance", {}).get("seeds")
        frame["seed"] = pd.array([_seed(task, seeds) for task in frame["task"]], dtype="Float64").astype("Int64")
        frame["method"] = str(card.get("method", card_path.parent.name))
        frame["run"] = str(card_path.parent)
        frames.append(frame[SAMPLE_COLUMNS])
    if not frames:
        return pd.DataFrame(columns=SAMPLE_COLUMNS)
    return pd.concat(frames, ignore_index=True)


def _paths(paths: str | Path | Iterable[str | Path]) -> list[Path]:
    if isinstance(paths, (str, Path)):
        return [Path(paths)]
    return [Path(p) for p in paths]


def _float(value: Any) -> float:
    if value is None or value == "":
        return math.nan
    if isinstance(value, str) and value in ("True", "False"):
        return float(value == "True")
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan
