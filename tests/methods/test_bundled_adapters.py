"""The bundled adapters are named ``cfcheck.fixtures.<kind>.<file>`` only (the flat names of before
the per-kind folders are gone), and :func:`cfcheck.calibration.runs.bundled_adapter` finds each by
the name its reports are filed under, as the adapter loader names them."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

from cfcheck.adapter import load_method
from cfcheck.calibration.runs import adapters_in, bundled_adapter, bundled_adapters

ROOT = Path(__file__).resolve().parents[2]


def test_every_bundled_adapter_is_found_under_the_name_the_loader_files_its_reports_under():
    """What the files say (read without importing) agrees with what loading each adapter gives."""
    adapters = bundled_adapters()
    on_disk = {
        f"cfcheck.fixtures.{path.parent.name}.{path.stem}"
        for path in (ROOT / "fixtures").glob("*/*.py")
        if path.stem != "__init__"
    }
    assert set(adapters.values()) == on_disk
    assert {load_method(module, ROOT).name: module for module in adapters.values()} == dict(adapters)


@pytest.mark.parametrize(
    ("name", "module"),
    [
        ("truth", "cfcheck.fixtures.vce.truth"),
        ("scm_truth", "cfcheck.fixtures.scm.truth"),
        ("attr_random", "cfcheck.fixtures.attribution.random_saliency"),
        ("latent_identity", "cfcheck.fixtures.latent.identity"),
        ("dive", "cfcheck.fixtures.latent.dive"),
    ],
)
def test_a_report_name_gives_its_adapter(name, module):
    assert bundled_adapter(name) == module


def test_an_unknown_report_name_lists_the_known_ones():
    with pytest.raises(KeyError, match=r"no bundled adapter files its reports under 'wachtr'.*wachter"):
        bundled_adapter("wachtr")


def test_the_flat_names_of_before_the_kind_folders_no_longer_import(monkeypatch):
    monkeypatch.setattr(sys, "path", list(sys.path))
    for old in (
        "cfcheck.fixtures.wachter",
        "cfcheck.fixtures.scm_vae",
        "cfcheck.methods.wachter",
        "cfcheck.methods.vce.wachter",
    ):
        with pytest.raises(ModuleNotFoundError):
            importlib.import_module(old)
    with pytest.raises(pytest.UsageError, match="does not exist"):
        load_method(str(ROOT / "fixtures" / "wachter.py"), ROOT)


def _package(root: Path, files: dict[str, str]) -> Path:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        (path.parent / "__init__.py").touch()
        path.write_text(text)
    return root


def test_adapters_in_reads_the_declared_name_else_the_file_name(tmp_path):
    folder = _package(
        tmp_path,
        {
            "one/plain.py": "x = 1\n",
            "one/named.py": 'import pytest\ncfcheck_name = "one_named"\n',
            "two/annotated.py": 'cfcheck_name: str = "two_annotated"\n',
            "two/computed.py": 'cfcheck_name = "two_" + "computed"\n',  # not a literal: the file's name
            "two/later.py": 'def f():\n    cfcheck_name = "inner"\n',  # not at the top level
            "loose/no_init.py": "",
        },
    )
    (tmp_path / "loose" / "__init__.py").unlink()  # a folder that is no package holds no adapters
    assert adapters_in(folder, "pkg") == {
        "plain": "pkg.one.plain",
        "one_named": "pkg.one.named",
        "two_annotated": "pkg.two.annotated",
        "computed": "pkg.two.computed",
        "later": "pkg.two.later",
    }


def test_two_adapters_filing_under_one_name_are_an_error(tmp_path):
    folder = _package(tmp_path, {"one/identity.py": "", "two/identity.py": ""})
    with pytest.raises(
        ValueError, match=r"pkg.one.identity and pkg.two.identity both file their reports under 'identity'"
    ):
        adapters_in(folder, "pkg")


def test_a_missing_path_is_an_error(tmp_path):
    with pytest.raises(pytest.UsageError, match="does not exist"):
        load_method(str(tmp_path / "wachter.py"), tmp_path)
    with pytest.raises(pytest.UsageError, match="does not exist"):
        load_method(str(ROOT / "fixtures" / "no_such_adapter.py"), ROOT)


def test_cfcheck_name_must_be_a_string(tmp_path):
    adapter = tmp_path / "named_adapter.py"
    adapter.write_text("import pytest\ncfcheck_name = 3\n\n@pytest.fixture\ndef cf_method():\n    return None\n")
    with pytest.raises(pytest.UsageError, match="cfcheck_name must be a non-empty str"):
        load_method(str(adapter), tmp_path)
