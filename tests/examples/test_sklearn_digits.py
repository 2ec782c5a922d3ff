"""The worked example on real data (examples/sklearn_digits): its committed models and bars give the
verdicts its calibration implies, and its README is followed verbatim, command by command."""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import pytest

from tests.examples.readme_steps import follow_readme
from tests.examples.readme_steps import run as _run

pytest.importorskip("sklearn")

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sklearn_digits"


def _copy(tmp_path: Path) -> Path:
    target = tmp_path / "sklearn_digits"
    shutil.copytree(EXAMPLE, target, ignore=shutil.ignore_patterns("reports", "__pycache__"))
    return target


def _verdicts(folder: Path, method: str) -> dict[str, str | None]:
    scorecard = json.loads((folder / "reports" / f"{method}-quick" / "scorecard.json").read_text())
    assert scorecard["profile"]["domains"]["sklearn_digits"]["bars"] == "calibrated"
    return {score["metric"]: score["verdict"] for score in scorecard["scores"] if score["domain"] == "sklearn_digits"}


def _assert_calibrated_verdicts(folder: Path) -> None:
    identity, wachter = _verdicts(folder, "identity"), _verdicts(folder, "wachter")
    assert identity["target_accuracy"] == "fail" and identity["committee_oracle_target_accuracy"] == "fail"
    assert identity["d2"] == "pass" and identity["perceptual_distance"] == "pass"
    assert wachter["target_accuracy"] == "pass"  # it reaches the target on the CNN it explains
    assert wachter["committee_oracle_target_accuracy"] == "fail"  # the oracles do not see it
    assert identity["coverage"] is None  # the controls do not separate on coverage: no bar


def test_committed_example_gives_the_verdicts_of_its_calibration(tmp_path):
    folder = _copy(tmp_path)
    for method in ("identity", "wachter"):
        done = _run(
            [sys.executable, "-m", "pytest", f"--method=cfcheck.fixtures.vce.{method}", "-p", "no:randomly"], folder
        )
        assert done.returncode == 1, done.stdout[-3000:]  # both fail some bar
    _assert_calibrated_verdicts(folder)


@pytest.mark.slow
def test_readme_followed_verbatim(tmp_path):
    """Every command of the README's 'Run it' block, in a copy of the example (the copy's models,
    bars and calibration values are rewritten by the commands)."""
    folder, outputs = follow_readme(EXAMPLE, tmp_path)
    trained = outputs["python -m digits_example.train"].stdout
    accuracies = dict(re.findall(r"(\w+): selection accuracy ([0-9.]+)", trained))
    assert set(accuracies) == {"cnn", "oracle_mlp", "oracle_pool_cnn", "oracle_projection", "embedding"}
    assert all(float(value) >= 0.9 for value in accuracies.values()), accuracies
    assert (folder / "bars-quick.json").is_file()
    _assert_calibrated_verdicts(folder)
