"""The names the reference methods and their adapters were published under, before the per-kind
folders, still import, as the very modules they moved to (so ``isinstance``, pickling and the
generation cache's fingerprint agree whichever name a user's code spells), and a run under an
adapter's published name or path files its reports where it did."""

from __future__ import annotations

import importlib
import pickle
import sys
from pathlib import Path

import cfcheck.fixtures as bundled
import pytest

import cfcheck.calibration as calibration
import cfcheck.methods as methods
from cfcheck.adapter import load_method
from cfcheck.core.cache import method_fingerprint

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("package", "old", "new"),
    [(methods, old, new) for old, new in sorted(methods.MOVED.items())]
    + [(bundled, old, new) for old, new in sorted(bundled.MOVED.items())],
)
def test_old_name_is_the_moved_module(package, old, new):
    moved = importlib.import_module(f"{package.__name__}.{new}")
    assert moved.__name__ == f"{package.__name__}.{new}" and moved.__spec__.name == moved.__name__
    assert importlib.import_module(f"{package.__name__}.{old}") is moved
    assert getattr(importlib.import_module(package.__name__), old) is moved  # `from package import old`


def test_classes_are_one_class_under_either_name():
    from cfcheck.methods.contract import VisualExplainer as OldBase
    from cfcheck.methods.wachter import WachterCounterfactual as Old

    from cfcheck.methods.vce.contract import VisualExplainer
    from cfcheck.methods.vce.wachter import WachterCounterfactual

    assert Old is WachterCounterfactual and OldBase is VisualExplainer
    assert isinstance(Old(), VisualExplainer)
    assert type(pickle.loads(pickle.dumps(Old()))) is WachterCounterfactual
    assert method_fingerprint(Old(), None) == method_fingerprint(WachterCounterfactual(), None)


def test_every_published_name_points_at_an_adapter_file():
    folders = [path for path in Path(bundled.__path__[0]).iterdir() if (path / "__init__.py").is_file()]
    adapters = {
        f"{folder.name}.{path.stem}" for folder in folders for path in folder.glob("*.py") if path.stem != "__init__"
    }
    assert set(bundled.MOVED.values()) <= adapters, set(bundled.MOVED.values()) - adapters
    assert len(set(bundled.MOVED.values())) == len(bundled.MOVED)  # no two published names for one adapter


@pytest.mark.parametrize(("old", "new"), sorted(bundled.MOVED.items()))
def test_published_name_and_path_file_reports_where_they_did(old, new, monkeypatch):
    """``--method=cfcheck.fixtures.<old>``, the new name and the published checkout path
    ``fixtures/<old>.py`` load the one adapter and file reports under ``<old>``."""
    monkeypatch.setattr(sys, "path", list(sys.path))  # a path adapter puts its folder on it
    given = [
        f"cfcheck.fixtures.{old}",
        f"cfcheck.fixtures.{new}",
        str(ROOT / "fixtures" / f"{old}.py"),
        str(ROOT / "fixtures" / Path(*new.split(".")).with_suffix(".py")),
    ]
    specs = [load_method(spec, ROOT) for spec in given]
    assert {spec.name for spec in specs} == {old}
    assert {id(spec.module) for spec in specs[:3]} == {id(importlib.import_module(f"cfcheck.fixtures.{new}"))}
    assert [spec.spec for spec in specs] == given  # what the scorecard records as the method


def test_report_names_are_distinct():
    names = [load_method(f"cfcheck.fixtures.{new}", ROOT).name for new in bundled.MOVED.values()]
    assert len(names) == len(set(names))


def test_a_missing_path_outside_the_bundled_adapters_is_still_an_error(tmp_path):
    with pytest.raises(pytest.UsageError, match="does not exist"):
        load_method(str(tmp_path / "wachter.py"), tmp_path)
    with pytest.raises(pytest.UsageError, match="does not exist"):
        load_method(str(ROOT / "fixtures" / "no_such_adapter.py"), ROOT)


def test_cfcheck_name_must_be_a_string(tmp_path):
    adapter = tmp_path / "named_adapter.py"
    adapter.write_text("import pytest\ncfcheck_name = 3\n\n@pytest.fixture\ndef cf_method():\n    return None\n")
    with pytest.raises(pytest.UsageError, match="cfcheck_name must be a non-empty str"):
        load_method(str(adapter), tmp_path)


@pytest.mark.parametrize(("old", "new"), sorted(calibration.MOVED.items()))
def test_a_moved_cfcheck_module_imports_under_its_old_name(old, new):
    """``cfcheck.calibration.run`` and the other modules that moved between cfcheck's groups import
    as the very modules they moved to."""
    moved = importlib.import_module(f"cfcheck.{new}")
    assert moved.__name__ == f"cfcheck.{new}"
    assert importlib.import_module(f"cfcheck.{old}") is moved
