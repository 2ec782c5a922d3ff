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
    folders = [
        name
        for name in ("cfcheck", "suites", "fixtures", "tests", "benchmarks", "examples", "reproductions")
        if (ROOT / name).is_dir()
    ]
    finished = subprocess.run([*command, "check", *folders], cwd=ROOT, capture_output=True, text=True, check=False)
    assert finished.returncode == 0, finished.stdout + finished.stderr


def test_code_is_formatted_by_ruff():
    """`ruff format` (pyproject.toml's settings) leaves every Python file of the project unchanged."""
    command = _ruff()
    if command is None:
        pytest.skip("ruff is not installed (pip install 'cfcheck[dev]')")
    finished = subprocess.run(
        [*command, "format", "--check", "."], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert finished.returncode == 0, "run `ruff format .`:\n" + finished.stdout + finished.stderr


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


def strict_modules(pyproject: str) -> list[str]:
    """The module patterns pyproject.toml's ``[tool.mypy]`` overrides hold strict (those that set
    ``disallow_untyped_defs``)."""
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+

    overrides = tomllib.loads(pyproject)["tool"]["mypy"]["overrides"]
    return [
        module
        for entry in overrides
        if entry.get("disallow_untyped_defs")
        for module in ([entry["module"]] if isinstance(entry["module"], str) else entry["module"])
    ]


def module_files(root: Path, patterns: list[str]) -> list[str]:
    """The files under ``root`` of mypy module patterns (``a.*`` is a package and everything in it,
    ``a.*.b`` a module ``b`` of any subpackage of ``a``), relative to ``root``, sorted."""
    found: set[Path] = set()
    for pattern in patterns:
        parts = pattern.split(".")
        if parts[-1] == "*":
            found |= set((root / Path(*parts[:-1])).rglob("*.py"))
        else:
            found |= set(root.glob("/".join(parts) + ".py")) | set(root.glob("/".join(parts) + "/__init__.py"))
    return sorted(path.relative_to(root).as_posix() for path in found)


def test_mypy_passes_on_the_whole_package():
    """mypy, with the project's settings, finds nothing in cfcheck/: strict on the modules the
    overrides name (the engine's core and the kinds' declarations and specs), gradual elsewhere."""
    pytest.importorskip("mypy", reason="mypy is not installed (pip install 'cfcheck[dev]')")
    files = module_files(ROOT, strict_modules((ROOT / "pyproject.toml").read_text()))
    assert "cfcheck/kinds/protocols.py" in files and any(f.startswith("cfcheck/core/") for f in files), files
    # no file arguments: mypy checks what pyproject.toml's `files` names (all of cfcheck/)
    finished = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True, check=False)
    assert finished.returncode == 0, finished.stdout + finished.stderr
    assert "Success: no issues found" in finished.stdout, finished.stdout


def test_the_strict_modules_are_found_from_the_patterns(tmp_path):
    for name in ("pkg/core/a.py", "pkg/core/deep/b.py", "pkg/kinds/x/spec.py", "pkg/kinds/x/other.py", "pkg/top.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    assert module_files(tmp_path, ["pkg.core.*", "pkg.kinds.*.spec", "pkg.top"]) == [
        "pkg/core/a.py",
        "pkg/core/deep/b.py",
        "pkg/kinds/x/spec.py",
        "pkg/top.py",
    ]
