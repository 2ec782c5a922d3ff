"""The project's lint settings hold on its own code (CI runs this through ``./test.sh``)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _ruff() -> list[str] | None:
    executable = Path(sys.executable).with_name("ruff")
    if executable.exists():
        return [str(executable)]
    found = shutil.which("ruff")
    return [found] if found else None


def test_ruff_passes_with_the_projects_settings():
    command = _ruff()
    if command is None:
        pytest.skip("ruff is not installed (pip install 'cfcheck[dev]')")
    folders = [name for name in ("cfcheck", "suites", "fixtures", "tests", "benchmarks", "examples", "reproductions")
               if (ROOT / name).is_dir()]
    finished = subprocess.run([*command, "check", *folders], cwd=ROOT, capture_output=True, text=True, check=False)
    assert finished.returncode == 0, finished.stdout + finished.stderr


def test_the_package_ships_its_annotations():
    assert (ROOT / "cfcheck" / "py.typed").is_file()
    assert '"cfcheck" = ["py.typed"]' in (ROOT / "pyproject.toml").read_text()


def test_every_package_folder_is_listed_for_the_wheel():
    """pyproject.toml lists the packages explicitly (suites/ and fixtures/ install inside cfcheck);
    a new folder missing from the list imports from a checkout but not from an installed wheel."""
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = set()
    for top, name in (("cfcheck", "cfcheck"), ("suites", "cfcheck.suites"), ("fixtures", "cfcheck.fixtures")):
        for init in (ROOT / top).rglob("__init__.py"):
            parts = init.parent.relative_to(ROOT / top).parts
            found.add(".".join((name, *parts)))
    assert found - listed == set(), f"add to [tool.setuptools] packages: {sorted(found - listed)}"
