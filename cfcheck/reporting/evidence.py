"""What the controls measured per metric card, summarised from a domain's calibration folder, so a
card's rationale says why, not how much, and a recalibration needs no prose edit.

Each file of the folder is read by its own reader into the same summary (:class:`CardEvidence`)
and the same sentence (:func:`render_evidence`), both :mod:`cfcheck.reporting.evidence_summary`'s:

- ``calibration-<profile>.json`` (``cfcheck calibrate``, :mod:`cfcheck.cli.calibrate_run`): each
  control's value per task score. A card's variants (``oracle_score:oracle_lenet``, the cascade's
  stages) are pooled: one bar judges them all, so the span over all of them is what it must
  separate; the sentence names them.
- the values file a kind's domain calibration keeps per seed
  (:attr:`cfcheck.kinds.declaration.DomainCalibration.values_file`, written by ``cfcheck calibrate
  --kind <kind>``): each control's value per seed, grouped by role (positive, the noise ladder,
  negative), one summary per variant (``road_gap:morf`` and ``road_gap:lerf`` get bars of their
  own), with the file's reason where a variant got no bar."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from functools import lru_cache, partial
from pathlib import Path
from typing import Any

from cfcheck.kinds.registry import DECLARATIONS
from cfcheck.reporting.evidence_summary import (
    COMMAND,
    CardEvidence,
    ControlRange,
    render_evidence,
    split_score_key,
    summarise_evidence,
    summarise_seed_evidence,
)

__all__ = [
    "CardEvidence",
    "ControlRange",
    "load_evidence",
    "measured_evidence",
    "render_evidence",
    "split_score_key",
    "summarise_evidence",
    "summarise_seed_evidence",
]


def _read_scores(data: Mapping[str, Any], key: str) -> tuple[CardEvidence, ...]:
    """The reader of ``calibration-<profile>.json``: values per task score, variants pooled."""
    found = summarise_evidence(data["values"], key, data.get("commands"))
    return (found,) if found is not None else ()


def _read_seeds(data: Mapping[str, Any], key: str, command: str) -> tuple[CardEvidence, ...]:
    """The reader of a kind's values file per seed: one summary per variant, measured by ``command``."""
    from cfcheck.kinds.registry import loaded_cards

    return summarise_seed_evidence(data, key, loaded_cards(), command=command)


Reader = Callable[[Mapping[str, Any], str], tuple[CardEvidence, ...]]

#: a calibration folder's files (their name, for a profile) and the reader of each: ``cfcheck
#: calibrate``'s values per score, then each kind's values per seed, in the registry's order
_READERS: tuple[tuple[str, Reader], ...] = (
    ("calibration-{profile}.json", _read_scores),
    *(
        (
            declaration.domain_calibration.values_file,
            partial(_read_seeds, command=f"{COMMAND} --kind {declaration.name}"),
        )
        for declaration in DECLARATIONS.values()
        if declaration.domain_calibration is not None and declaration.domain_calibration.values_file
    ),
)


@lru_cache(maxsize=64)
def _read_file(path: str, modified_ns: int) -> Mapping[str, Any]:
    """A calibration file's content (re-read only when the file changes)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise ValueError(f"{path}: not a readable calibration file: {error}") from error
    if not isinstance(data, dict) or not isinstance(data.get("values"), dict):
        raise ValueError(f"{path}: expected {{'profile': ..., 'domain': ..., 'values': {{score: controls}}}}")
    return data


def load_evidence(domain: Any, key: str, profile: str = "quick") -> list[tuple[CardEvidence, str]]:
    """Every summary of card ``key`` in ``domain``'s calibration files of ``profile``, each file by
    its reader (:data:`_READERS`), as :func:`measured_evidence` renders them.

    Args:
        domain: a domain object (its ``calibration_dir``; None or absent: it keeps no file).
        key: a metric card's key (no variant).
        profile: the profile whose files are read.

    Returns:
        (summary, the profile the file records) per summary, the files in reader order; empty where
        the domain keeps no file or no file holds a score of ``key``.

    Raises:
        ValueError: naming the file, where it is not a calibration file or an entry is malformed.

    Example:
        >>> from types import SimpleNamespace
        >>> load_evidence(SimpleNamespace(calibration_dir=None), "tcv")
        []
    """
    if not isinstance(profile, str) or not profile:
        raise ValueError(f"`profile` must be a profile name, got {profile!r}")
    folder = getattr(domain, "calibration_dir", None)
    found: list[tuple[CardEvidence, str]] = []
    for name, reader in _READERS if folder is not None else ():
        assert folder is not None  # the loop runs only when there is a folder
        path = Path(folder) / name.format(profile=profile)
        if not path.is_file():
            continue
        data = _read_file(str(path), path.stat().st_mtime_ns)
        try:
            found += [(evidence, str(data.get("profile") or profile)) for evidence in reader(data, key)]
        except ValueError as error:
            raise ValueError(f"{path}: {error}") from error
    return found


def measured_evidence(domain: Any, key: str, profile: str = "quick") -> list[str]:
    """The sentences of :func:`render_evidence` for card ``key`` from ``domain``'s calibration files.

    Args:
        domain: a domain object (its ``name`` and ``calibration_dir``; None: it keeps no file).
        key: a metric card's key.
        profile: reads the files of this profile in ``calibration_dir`` (once per change of a file).

    Returns:
        One sentence per summary (:func:`load_evidence`); empty without a calibration file for
        ``profile`` or a score of ``key`` in one.

    Raises:
        ValueError: naming the file, where it is not a calibration file or an entry is malformed.

    Example:
        >>> from cfcheck.domains import available_domains, get_domain
        >>> found = [s for name in available_domains() for s in measured_evidence(get_domain(name), "target_accuracy")]
        >>> found[0].split(", ", 1)[1][:13]
        'quick profile'
    """
    return [
        render_evidence(evidence, profile=recorded, domain=str(domain.name))
        for evidence, recorded in load_evidence(domain, key, profile)
    ]
