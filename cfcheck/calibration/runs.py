"""A control's conformance runs: each is one ``pytest --method=cfcheck.fixtures.<control>`` process
(one CPU thread, so runs are comparable), its scorecard kept per seed.

``cfcheck calibrate`` (:mod:`cfcheck.calibrate.run`) runs the bundled controls on the bundled
domains with :func:`run_control`; a kind's domain calibration (``cfcheck calibrate --domain SPEC``)
runs them on one domain with :func:`run_domain_control`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

__all__ = ["run_control", "run_domain_control", "seed_folder"]


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
    control: str, spec: str, profile: str, out: Path, seed: int = 0
) -> tuple[dict[str, Any] | None, float, str]:
    """One conformance run of a control on the domain ``spec`` at ``--cfcheck-seed=seed`` (its
    scorecard under :func:`seed_folder`): (scorecard or None, seconds, output tail)."""
    started = time.monotonic()
    folder = seed_folder(out, seed)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            f"--method=cfcheck.fixtures.{control}",
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
        env=_one_thread(),
    )
    path = folder / f"{control}-{profile}" / "scorecard.json"
    scorecard = json.loads(path.read_text()) if path.is_file() else None
    return scorecard, time.monotonic() - started, (done.stdout + done.stderr)[-2000:]
