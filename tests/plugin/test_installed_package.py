"""cfcheck works from a regular (non-editable) install, outside any checkout.

A wheel is built from this checkout and installed into a fresh virtualenv that borrows the
current environment's dependencies (torch, ...) through a .pth file, then a conformance run
happens in an empty directory: the entry point, the suites, the fixtures and the checksummed
weights must all come from the installed package.
"""

from __future__ import annotations

import json
import os
import site
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def installed_python(tmp_path_factory):
    work = tmp_path_factory.mktemp("installed")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", str(work), str(ROOT)],
        check=True,
        capture_output=True,
    )
    (wheel,) = work.glob("cfcheck-*.whl")
    env_dir = work / "env"
    venv.create(env_dir, with_pip=False)
    python = env_dir / "bin" / "python"
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    # Borrow dependencies, but not the editable cfcheck: .pth files inside a borrowed folder
    # are not processed, so the checkout's editable finder stays out.
    (Path(purelib) / "borrowed.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "--target", purelib, str(wheel)],
        check=True,
        capture_output=True,
    )
    return python


def test_conformance_run_from_an_installed_wheel(installed_python, tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.cfcheck]\nn_per_source = 2\nseeds = 1\nclassifiers = ["cnn"]\npair_sets = ["ideal"]\n'
    )
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
    result = subprocess.run(
        [
            installed_python,
            "-m",
            "pytest",
            "--method=cfcheck.fixtures.vce.identity",
            "-k",
            "test_target_accuracy",
            "-p",
            "no:cacheprovider",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    where = subprocess.run(
        [
            installed_python,
            "-c",
            "import cfcheck.suites, cfcheck.reference_models as r; print(cfcheck.suites.__file__, r.__file__)",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    ).stdout
    assert str(ROOT) not in where, f"imported from the checkout, not the install: {where}"
    assert result.returncode == 1, result.stdout[-3000:] + result.stderr[-3000:]
    scorecard = json.loads((tmp_path / "reports" / "identity-standard" / "scorecard.json").read_text())
    (accuracy,) = [s for s in scorecard["scores"] if s["metric"] == "target_accuracy"]
    assert accuracy["value"] == 0.0 and accuracy["n"] == 20
