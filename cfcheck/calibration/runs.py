"""A control's conformance runs: each is one ``pytest --method=cfcheck.fixtures.<control>`` process
(one CPU thread, so runs are comparable), its scorecard kept per seed.

``cfcheck calibrate`` (:mod:`cfcheck.calibrate.run`) runs the bundled controls on the bundled
domains with :func:`run_control`; a kind's domain calibration (``cfcheck calibrate --domain SPEC``)
runs them on one domain with :func:`run_domain_control`.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["output_tail", "run_control", "run_domain_control", "seed_folder"]


def seed_folder(out: Path, seed: int) -> Path:
    """Where the runs of ``seed`` keep their scorecards: ``out`` for seed 0, ``out/seed<N>`` otherwise."""
    return out if seed == 0 else out / f"seed{seed}"


def _one_thread() -> dict[str, str]:
    return {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def run_control(name: str, profile: str, out: Path, seed: int = 0) -> tuple[dict[str, Any], float]:
    """One conformance run of ``cfcheck.fixtures.<name>`` at ``--cfcheck-seed=seed``; its scorecard
    (under :func:`seed_folder`) and wall time."""
    started = time.monotonic()
    folder = seed_folder(out, seed)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            f"--method=cfcheck.fixtures.{name}",
            f"--cfcheck-profile={profile}",
            f"--cfcheck-seed={seed}",
            f"--cfcheck-report-dir={folder}",
            "-q",
            "-p",
            "no:cacheprovider",
            "--no-header",
            "-o",
            "addopts=",
            "-p",
            "no:xdist",
        ],
        check=False,
        capture_output=True,
        env=_one_thread(),
    )
    elapsed = time.monotonic() - started
    path = folder / f"{name}-{profile}" / "scorecard.json"
    return json.loads(path.read_text()), elapsed


def run_domain_control(
    control: str,
    spec: str,
    profile: str,
    out: Path,
    seed: int = 0,
    *,
    method: str | None = None,
    env: Mapping[str, str] | None = None,
) -> tuple[dict[str, Any] | None, float, str]:
    """One conformance run of a control on the domain ``spec`` at ``--cfcheck-seed=seed``.

    Args:
        control: the control's name; its reports go to ``<seed folder>/<control>/`` (:func:`seed_folder`).
        spec: the domain spec (``--cfcheck-domain``).
        profile: the profile.
        out: the folder of the calibration's runs.
        seed: the run's seed.
        method: the method spec to run (``--method``; default ``cfcheck.fixtures.<control>``).
        env: variables added to the run's environment (e.g. a control's budget).

    Returns:
        (scorecard, or None where the run wrote none; seconds; the output's last lines, cut at a
        line boundary: :func:`output_tail`).
    """
    started = time.monotonic()
    folder = seed_folder(out, seed) / _slug(control)
    for stale in folder.glob("*/scorecard.json"):  # a run that writes none must not find an old one
        stale.unlink()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            f"--method={method or f'cfcheck.fixtures.{control}'}",
            f"--cfcheck-domain={spec}",
            f"--cfcheck-profile={profile}",
            f"--cfcheck-seed={seed}",
            f"--cfcheck-report-dir={folder}",
            "-q",
            "-p",
            "no:cacheprovider",
            "--no-header",
            "-p",
            "no:xdist",
            "-p",
            "no:randomly",
        ],
        check=False,
        capture_output=True,
        text=True,
        env={**_one_thread(), **dict(env or {})},
    )
    found = sorted(folder.glob("*/scorecard.json"))
    scorecard = json.loads(found[0].read_text()) if found else None
    return scorecard, time.monotonic() - started, output_tail(done.stdout + done.stderr)


def output_tail(text: str, limit: int = 2000) -> str:
    r"""The last lines of ``text`` that fit in ``limit`` characters, whole lines only (a single last
    line longer than ``limit`` is kept whole).

    Example:
        >>> output_tail("first line\nsecond line\nthird", limit=20)
        'second line\nthird'
    """
    lines = text.rstrip("\n").split("\n")
    kept: list[str] = []
    size = 0
    for line in reversed(lines):
        if kept and size + len(line) + 1 > limit:
            break
        kept.append(line)
        size += len(line) + 1
    return "\n".join(reversed(kept))


def _slug(name: str) -> str:
    """A folder name for a control's name (a ``--positive`` spec may hold ``/``, ``:`` or ``.``)."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-.") or "control"
