"""`cfcheck new-adapter KIND` writes a ten-line adapter that runs as written; every subcommand's
help ends with an example."""

from __future__ import annotations

import importlib.util

import pytest

from cfcheck.adapter import declared_kinds
from cfcheck.cli import EXAMPLES, main
from cfcheck.kinds.protocols import MethodKind

KINDS = [kind.value for kind in MethodKind]


def _module(path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("kind", KINDS)
def test_the_adapter_is_short_declares_its_kind_and_is_never_overwritten(tmp_path, kind, capsys):
    path = tmp_path / f"mine_{kind}.py"
    assert main(["new-adapter", kind, str(path)]) == 0
    assert f"pytest --method={path}" in capsys.readouterr().out
    text = path.read_text()
    code = [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    assert len(code) <= 12, text
    assert declared_kinds(_module(path)) == frozenset({MethodKind(kind)})
    path.write_text("mine")
    assert main(["new-adapter", kind, str(path)]) == 2
    assert path.read_text() == "mine" and "never overwrites" in capsys.readouterr().err


def test_an_adapter_must_be_a_python_file(tmp_path, capsys):
    assert main(["new-adapter", "vce", str(tmp_path / "adapter.txt")]) == 2
    assert "Python module" in capsys.readouterr().err


@pytest.mark.parametrize("command", sorted(EXAMPLES))
def test_every_subcommand_help_ends_with_an_example(command, capsys):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    out = capsys.readouterr().out
    assert "example" in out and EXAMPLES[command].split()[1] in out
