"""The runs ``cfcheck compare`` compares: a run folder read back (:func:`load_run`: its scorecard,
its per-input samples keyed by score, its kept set-level features), and the check that runs were
made under the same conditions (:func:`check_comparable`: scorecard format, profile, seeds,
protocols, reference models). :mod:`cfcheck.reporting.compare` compares them.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from cfcheck.core.set_features import SET_FEATURES_FILE, SetFeatures, read_set_features
from cfcheck.reporting.scorecard import load_scorecard

#: scorecard formats this module reads; runs of different formats are never compared
SUPPORTED_FORMATS = (2, 3)
Key = tuple[str, str, str, str, str]  # kind, domain, suite, metric, task


class CompareError(ValueError):
    """Runs that cannot be compared (the message names the runs and the difference)."""


@dataclass(frozen=True)
class Run:
    """One run folder, read back.

    Attributes:
        path: the run folder.
        label: the method name shown in tables (made unique by :func:`cfcheck.reporting.compare.compare_runs`).
        scorecard: the parsed ``scorecard.json``.
        samples: per score key, ``input -> value`` (mean of the rows when an input repeats).
        has_input: whether ``samples.csv`` has an ``input`` column (format 3).
        set_features: per (kind, domain, task), the kept features of its set-level scores
            (``set_features.npz``; empty when the run kept none).
    """

    path: Path
    label: str
    scorecard: dict[str, Any]
    samples: dict[Key, dict[str, float]]
    has_input: bool
    set_features: dict[tuple[str, str, str], SetFeatures] = field(default_factory=dict)


def load_run(path: str | Path) -> Run:
    """Read a run folder (or its ``scorecard.json``).

    Args:
        path: the run folder, or the ``scorecard.json`` inside it.

    Returns:
        The :class:`Run`, labelled with its method name.

    Raises:
        FileNotFoundError: if the folder, ``scorecard.json`` or ``samples.csv`` is missing.
        ValueError: if the scorecard is not valid cfcheck scorecard JSON, or its
            ``set_features.npz`` is not a set-features file.
    """
    folder = Path(path)
    if folder.name == "scorecard.json" and folder.is_file():
        folder = folder.parent
    if not folder.is_dir():
        raise FileNotFoundError(f"no run folder at {folder}")
    card_path, samples_path = folder / "scorecard.json", folder / "samples.csv"
    for needed in (card_path, samples_path):
        if not needed.is_file():
            raise FileNotFoundError(f"{folder} is not a cfcheck run folder: {needed.name} is missing")
    card = load_scorecard(card_path)
    with samples_path.open(newline="") as stream:
        reader = csv.DictReader(stream)
        has_input = "input" in (reader.fieldnames or [])
        rows: dict[Key, dict[str, list[float]]] = {}
        for row in reader:
            value = read_number(row.get("value"))
            if value is None or not has_input:
                continue
            key = score_key(row)
            rows.setdefault(key, {}).setdefault(row["input"], []).append(value)
    samples = {key: {i: float(np.mean(v)) for i, v in by_input.items()} for key, by_input in rows.items()}
    return Run(
        folder,
        str(card.get("method", folder.name)),
        card,
        samples,
        has_input,
        read_set_features(folder / SET_FEATURES_FILE),
    )


def check_comparable(runs: list[Run], *, allow: bool = False) -> dict[tuple[str, str], str]:
    """Refuse runs that were not made under the same conditions.

    Args:
        runs: the runs to compare (at least two).
        allow: compare runs of different protocols (``--allow``): their scores' rows are marked
            instead (the returned notes).

    Returns:
        (kind, domain) → what differs between the runs' protocols there, for every (kind, domain)
        whose protocols differ or are unknown (empty unless ``allow``).

    Raises:
        CompareError: fewer than two runs, an unsupported or differing scorecard format, or a
            different profile name or seed list between two runs; unless ``allow``, scores of one
            (kind, domain) under different protocols (:func:`protocol_differences`: the message
            names the runs, the protocol and the parts that differ), a run without a protocol
            (written before cfcheck recorded protocols) or a different reference-model hash. Models
            present in only one run's provenance are not a difference (a run lists the models of
            its own domains).
    """
    if len(runs) < 2:
        raise CompareError(f"cfcheck compare needs at least two runs, got {len(runs)}")
    first = runs[0]
    for run in runs:
        fmt = run.scorecard.get("format")
        if fmt not in SUPPORTED_FORMATS:
            raise CompareError(
                f"{run.path}: scorecard format {fmt!r} cannot be compared "
                f"(supported: {', '.join(map(str, SUPPORTED_FORMATS))})"
            )
    for other in runs[1:]:
        pair = f"cannot compare {first.path} and {other.path}"
        a_card, b_card = first.scorecard, other.scorecard
        if a_card.get("format") != b_card.get("format"):
            raise CompareError(
                f"{pair}: different scorecard formats ({a_card.get('format')} vs "
                f"{b_card.get('format')}; format-2 scores carry no kind/domain)"
            )
        a_profile, b_profile = a_card.get("profile", {}).get("name"), b_card.get("profile", {}).get("name")
        if a_profile != b_profile:
            raise CompareError(f"{pair}: different profiles ({a_profile!r} vs {b_profile!r})")
        a_prov, b_prov = a_card.get("provenance", {}), b_card.get("provenance", {})
        a_seeds, b_seeds = a_prov.get("seeds"), b_prov.get("seeds")
        if a_seeds != b_seeds:
            raise CompareError(f"{pair}: different seeds ({a_seeds} vs {b_seeds})")
    notes = protocol_differences(runs)
    if allow:
        return notes
    if notes:
        raise CompareError(
            "cannot compare runs of different protocols (--allow compares them, marking the rows): "
            + "; ".join(notes.values())
        )
    for other in runs[1:]:
        pair = f"cannot compare {first.path} and {other.path}"
        a_prov, b_prov = first.scorecard.get("provenance", {}), other.scorecard.get("provenance", {})
        a_models, b_models = a_prov.get("reference_models", {}), b_prov.get("reference_models", {})
        differing = sorted(name for name in set(a_models) & set(b_models) if a_models[name] != b_models[name])
        if differing:
            shown = ", ".join(f"{n} ({a_models[n][:12]} vs {b_models[n][:12]})" for n in differing)
            raise CompareError(f"{pair}: different reference-model hashes: {shown}")
    return {}


def protocol_differences(runs: list[Run]) -> dict[tuple[str, str], str]:
    """Where the runs' scores belong to different protocols, or to an unknown one.

    For each (kind, domain) of the scores of two runs or more, every run's protocol entry there
    (:func:`cfcheck.reporting.protocol_text.entry_of`) is set against the first run's.

    Args:
        runs: the runs to compare.

    Returns:
        (kind, domain) → one sentence naming the protocol, the runs and what differs (the parts,
        with the bars, cards, task facts and models that changed), or which run has no protocol.
    """
    from cfcheck.reporting.protocol_text import UNKNOWN, difference_details, entry_of, protocol_label

    present: dict[tuple[str, str], list[Run]] = {}
    for run in runs:
        for pair in dict.fromkeys(
            (str(s.get("kind") or "-"), str(s.get("domain") or "-")) for s in run.scorecard.get("scores", [])
        ):
            present.setdefault(pair, []).append(run)
    notes = {}
    for (kind, domain), holders in sorted(present.items()):
        if len(holders) < 2:
            continue
        profile = (holders[0].scorecard.get("profile") or {}).get("name")
        name = f"{kind}/{domain}/{profile}"
        unknown = [run for run in holders if entry_of(run.scorecard, kind, domain) is None]
        if unknown:
            runs_named = ", ".join(f"{run.label} ({run.path})" for run in unknown)
            notes[kind, domain] = f"protocol {name}: {UNKNOWN} in {runs_named}"
            continue
        first = entry_of(holders[0].scorecard, kind, domain)
        assert first is not None  # no run here lacks an entry
        differing = []
        for run in holders[1:]:
            entry = entry_of(run.scorecard, kind, domain)
            assert entry is not None
            details = difference_details(first, entry)
            if details:
                differing.append(
                    f"{holders[0].label} ({holders[0].path}) has {protocol_label(first)}, {run.label} ({run.path}) "
                    f"has {protocol_label(entry)}; differs in {details}"
                )
        if differing:
            notes[kind, domain] = f"protocol {name}: " + "; ".join(differing)
    return notes


def score_key(record: dict[str, Any]) -> Key:
    """The key of a scorecard record or a ``samples.csv`` row ("-" for a kind or domain a format-2 run lacks)."""
    return (
        str(record.get("kind") or "-"),
        str(record.get("domain") or "-"),
        str(record["suite"]),
        str(record["metric"]),
        str(record["task"]),
    )


def read_number(value: Any) -> float | None:
    """A value of a scorecard or ``samples.csv`` as a float ("True"/"False" as 1/0); None when missing, not a number or NaN."""
    if value is None or value == "":
        return None
    if isinstance(value, str) and value in ("True", "False"):
        return float(value == "True")
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(number) else number
