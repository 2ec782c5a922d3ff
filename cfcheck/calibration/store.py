"""The controls' values per score, kept in each domain's calibration folder
(``calibration-<profile>.json``): where the file is, how a set of control scorecards becomes its
entries, and how it is written (merged per method kind) and read back.

``cfcheck calibrate`` (:mod:`cfcheck.cli.calibrate_run`, :mod:`cfcheck.cli.calibrate_domain`) writes it,
saying which control is expected to pass or fail which score (the caller's ``expected`` rule: the
store knows no control); the HTML charts draw its values beside a run's own
(:func:`load_calibration_values`) and the metric cards quote them (:mod:`cfcheck.reporting.evidence`).
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from cfcheck.core.keys import ScoreId

__all__ = [
    "Expected",
    "calibration_path",
    "calibration_values",
    "load_calibration_values",
    "write_calibration_values",
]

#: ``expected(control, suite, metric)``: "+" where the control is expected to pass the score, "-"
#: where to fail it, "" for neither; None where ``control`` is no control (the baseline, a reference
#: method): its values are not kept. The bundled controls' rule is
#: :func:`cfcheck.controls.bundled_expectation`.
Expected = Callable[[str, str, str], "str | None"]


def calibration_values(results: dict[str, dict[str, Any]], expected: Expected) -> dict[str, dict[str, dict[str, Any]]]:
    """Score identity key → control → {"value", "expected"} from control scorecards.

    Args:
        results: control name → its scorecard (format 3: scores carry kind and domain).
        expected: the sign of each control on each score (:data:`Expected`); a result whose
            control it answers None for is skipped.

    Returns:
        For every score with a finite value, what each control reached and whether that
        control is expected to pass ("+") or fail ("-") the score's suite ("" for neither); where
        the score had a verdict, also the verdict and the threshold it was judged against (a
        floor-relative bar's threshold depends on the run, so the value alone cannot re-judge it).
    """
    values: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    for control, scorecard in results.items():
        for score in scorecard["scores"]:
            value = score.get("value")
            if isinstance(value, (int, float)) and math.isfinite(value):
                sign = expected(control, score["suite"], score["metric"])
                if sign is None:
                    continue  # the baseline, the reference methods and unknown methods are not controls
                key = ScoreId.from_score(score).serialise()
                entry: dict[str, Any] = {"value": float(value), "expected": sign}
                if score.get("verdict"):  # as judged in that run, under the bar it names
                    entry.update(verdict=score["verdict"], threshold=score.get("threshold"))
                values[key][control] = entry
    return dict(values)


def calibration_path(domain: str, profile: str) -> Path | None:
    """Where the controls' values of ``domain`` at ``profile`` are kept (the domain's calibration folder)."""
    from cfcheck.domains.registry import known_domain

    found = known_domain(domain)
    folder = found.calibration_dir if found is not None else None
    return Path(folder) / f"calibration-{profile}.json" if folder is not None else None


def _kind(identity: str) -> str:
    return ScoreId.parse(identity).kind


def write_calibration_values(
    results: Mapping[str, dict[str, Any]] | Sequence[Mapping[str, dict[str, Any]]],
    profile: str,
    kinds: Sequence[str] | None = None,
    *,
    expected: Expected,
    command: str | None = None,
) -> list[Path]:
    """Write :func:`calibration_values` per domain to :func:`calibration_path`, merged into what
    the file holds; returns the paths written.

    Args:
        results: control name → its scorecard; or a sequence of such, one per seed (a task's id
            names its seed, so the seeds' scores are kept side by side).
        profile: the profile they ran at.
        kinds: the method kinds recalibrated (the first segment of an identity key); only
            their values are written, and every entry of theirs the file held is
            replaced. Default: the kinds ``results`` have values of.
        expected: as :func:`calibration_values`'s.
        command: the command that measured the values, kept per kind in the file's ``commands``
            (what the cards' evidence names); None: ``cfcheck calibrate``, recorded as nothing.

    Returns:
        One path per domain that has a calibration folder and values of ``kinds``. The entries
        of other kinds are kept as they were (the file is rewritten atomically).

    Raises:
        ValueError: where the existing file is not a calibration file (naming it): rewriting it
            would drop the other kinds' values.
    """
    from cfcheck.core.io import atomic_write_text as atomic_write

    if command is not None and (not isinstance(command, str) or not command):
        raise ValueError(f"`command` must be a non-empty string or None, got {command!r}")
    runs = [results] if isinstance(results, Mapping) else list(results)
    measured: dict[str, dict[str, Any]] = {}
    for run in runs:
        measured.update(calibration_values(dict(run), expected))
    by_domain: dict[str, dict[str, Any]] = defaultdict(dict)
    for key, controls in measured.items():
        if kinds is None or _kind(key) in kinds:
            by_domain[ScoreId.parse(key).domain][key] = controls
    paths = []
    for domain, values in sorted(by_domain.items()):
        path = calibration_path(domain, profile)
        if path is None or not path.parent.is_dir():
            continue
        replaced = set(kinds) if kinds is not None else {_kind(key) for key in values}
        stored: dict[str, Any] = {}
        if path.is_file():
            try:
                stored = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError) as error:
                raise ValueError(
                    f"{path}: not a readable calibration file ({error}); move it aside to rewrite it"
                ) from error
            if not isinstance(stored, dict) or not isinstance(stored.get("values"), dict):
                raise ValueError(f"{path}: not a calibration file (no 'values'); move it aside to rewrite it")
        kept = {key: controls for key, controls in stored.get("values", {}).items() if _kind(key) not in replaced}
        commands = {kind: text for kind, text in (stored.get("commands") or {}).items() if kind not in replaced}
        commands.update(dict.fromkeys(replaced, command) if command is not None else {})
        extra = {"commands": commands} if commands else {}
        stored.pop("commands", None)
        atomic_write(
            path,
            json.dumps(
                {**stored, **extra, "profile": profile, "domain": domain, "values": {**kept, **values}},
                indent=1,
                sort_keys=True,
            )
            + "\n",
        )
        paths.append(path)
    return paths


def merge_kind_values(path: Path, kind: str, values: Mapping[str, Any], **sections: Any) -> Path:
    """Rewrite a domain's values file (``calibration-<profile>.json``) with ``kind``'s values replaced and
    every other kind's kept, and ``sections`` (top-level entries such as ``profile`` or the kind's own
    facts) set; what a domain calibration of one kind writes.

    Args:
        path: the values file (created where missing; its folder must exist).
        kind: the kind recalibrated: its entries the file held are dropped.
        values: score identity -> controls' values, of ``kind``.
        sections: top-level entries to set.

    Returns:
        ``path``.

    Raises:
        RuntimeError: where the file exists but is not a readable calibration file (naming it):
            rewriting it would lose the other kinds' values.
    """
    from cfcheck.core.io import atomic_write_text

    stored: dict[str, Any] = {}
    if path.is_file():
        try:
            stored = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise RuntimeError(f"{path}: not a readable calibration file ({error}); move it aside") from error
        if not isinstance(stored, dict):
            raise RuntimeError(f"{path}: not a calibration file (not a JSON object); move it aside")
    kept = {key: entry for key, entry in (stored.get("values") or {}).items() if _kind(key) != kind}
    merged = {**stored, **sections, "values": {**kept, **dict(values)}}
    atomic_write_text(path, json.dumps(merged, indent=1, sort_keys=True) + "\n")
    return path


def load_calibration_values(scorecard: dict[str, Any]) -> dict[str, dict[str, dict[str, Any]]]:
    """The controls' values for the domains and profile of ``scorecard`` ({} where none are kept)."""
    profile = str((scorecard.get("profile") or {}).get("name", ""))
    values: dict[str, dict[str, dict[str, Any]]] = {}
    for domain in sorted({str(s.get("domain", "-")) for s in scorecard.get("scores", [])}):
        path = calibration_path(domain, profile)
        if profile and path is not None and path.is_file():
            try:
                values.update(json.loads(path.read_text())["values"])
            except (OSError, ValueError, KeyError):
                continue  # a damaged calibration file costs the charts their markers, nothing else
    return values
