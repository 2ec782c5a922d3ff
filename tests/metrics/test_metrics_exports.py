"""``cfcheck.metrics`` has one export list: ``__all__`` and the lazy attribute lookup both come
from it, every name resolves to its submodule's object, and reading the cards imports no torch."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import cfcheck.metrics as metrics


def test_every_exported_name_is_its_submodules_object():
    listed = [name for names in metrics._EXPORTS.values() for name in names]
    assert len(listed) == len(set(listed)), "a name is exported from two submodules"
    assert metrics.__all__ == sorted(listed)
    for module, names in metrics._EXPORTS.items():
        for name in names:
            assert getattr(metrics, name) is getattr(importlib.import_module(f"cfcheck.metrics.{module}"), name)


def test_a_star_import_gives_the_list_and_dir_shows_it():
    namespace: dict[str, object] = {}
    exec("from cfcheck.metrics import *", namespace)
    assert set(namespace) - {"__builtins__"} == set(metrics.__all__)
    assert set(metrics.__all__) <= set(dir(metrics))


def test_an_unknown_name_is_an_attribute_error_naming_it():
    with pytest.raises(AttributeError, match=r"module 'cfcheck.metrics' has no attribute 'no_such_metric'"):
        metrics.no_such_metric  # noqa: B018 - the lookup is the test


def test_reading_the_cards_imports_no_torch():
    code = "import sys, cfcheck.metrics as m; m.CARDS; m.MetricKey; print('torch' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
