"""`cfcheck protocols` (issue 43): the bundled protocols with their readable version and digest, a
user's domain's (unregistered), the user's settings applied, and `--record` for maintainers."""

from __future__ import annotations

import json

import pytest

import cfcheck.reporting.protocols as protocols_module
from cfcheck.cli import main
from cfcheck.kinds.registry import DECLARATIONS
from cfcheck.reporting.protocols import bundled_protocols, load_registry

USER_DOMAIN = """
import numpy as np
from cfcheck.domains.data import ArraySource, ImageDomain

rng = np.random.default_rng(0)
DOMAIN = ImageDomain(
    "mine",
    ArraySource(rng.integers(0, 256, size=(60, 1, 8, 8), dtype=np.uint8), np.repeat(np.arange(3), 20)),
    root="mine",
    model_roles={"explained": ("cnn",)},
)
"""


def _rows(out: str) -> list[list[str]]:
    return [line.split() for line in out.strip().splitlines()]


def test_it_lists_every_bundled_protocol_with_its_registered_version_and_digest(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no pyproject.toml here: the built-in profiles
    assert main(["protocols"]) == 0
    header, *rows = _rows(capsys.readouterr().out)
    assert header == ["kind", "domain", "profile", "version", "digest"]
    registry = load_registry()
    expected = [
        [p.identity.kind, p.identity.domain, p.identity.profile, registry.latest(p.identity.key).name, p.identity.short]
        for p in bundled_protocols()
    ]
    assert rows == expected and len(rows) >= 3
    assert {row[2] for row in rows} == {"quick", "standard", "full"}


def test_the_users_settings_make_the_protocols_unregistered(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[tool.cfcheck.thresholds]\ntarget_accuracy = 0.99\n")
    assert main(["protocols"]) == 0
    _, *rows = _rows(capsys.readouterr().out)
    # the threshold is a bar of the kinds that declare its card only: their protocols are unregistered
    declaring = {name for name, d in DECLARATIONS.items() if "target_accuracy" in d.card_keys()}
    assert declaring and {row[0] for row in rows} > declaring
    assert all((row[3] == "unregistered") == (row[0] in declaring) for row in rows), rows
    changed = bundled_protocols({"thresholds": {"target_accuracy": 0.99}})
    assert [row[4] for row in rows] == [p.identity.short for p in changed]


def test_a_users_domain(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine_domain.py").write_text(USER_DOMAIN)
    assert main(["protocols", "--domain", "mine_domain.py:DOMAIN"]) == 0
    _, *rows = _rows(capsys.readouterr().out)
    assert rows and all(row[1] == "mine" and row[3] == "unregistered" for row in rows)
    assert len({row[4] for row in rows}) == len(rows)  # one protocol per kind and profile
    assert main(["protocols", "--domain", "mine_domain.py:DOMAIN", "--seed", "1"]) == 0
    _, *reseeded = _rows(capsys.readouterr().out)
    assert [row[4] for row in reseeded] != [row[4] for row in rows]


def test_record_writes_new_versions_and_prints_the_changelog_line(capsys, tmp_path, monkeypatch):
    target = tmp_path / "versions.json"
    monkeypatch.setattr(protocols_module, "REGISTRY_FILE", target)
    assert main(["protocols", "--record", "first recorded version"]) == 0
    out = capsys.readouterr().out
    count = len(bundled_protocols())
    assert out.startswith(f"recorded {count} versions; add to CHANGELOG.md (top section):\n- Protocol versions ")
    assert out.rstrip().endswith(": first recorded version")
    assert len(json.loads(target.read_text())["protocols"]) == count
    assert main(["protocols", "--record", "again"]) == 0
    assert "nothing recorded" in capsys.readouterr().out


@pytest.mark.parametrize("extra", [["--domain", "x.py:D"], ["--seed", "3"]])
def test_record_is_for_the_bundled_protocols_only(capsys, extra):
    assert main(["protocols", "--record", "x", *extra]) == 2
    assert "--record registers the bundled protocols" in capsys.readouterr().err
