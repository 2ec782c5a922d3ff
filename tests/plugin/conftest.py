"""A tiny conformance run for the plugin tests: one classifier, one pair set, two inputs per digit."""

from __future__ import annotations

import json

import pytest

TINY_SETTINGS = """
[tool.cfcheck]
n_per_source = 2
classifiers = ["cnn"]
pair_sets = ["ideal"]
bootstrap_resamples = 50
seeds = 1
[tool.cfcheck.scm]
n_inputs = 20
[tool.cfcheck.latent]
n_inputs = 8
variants = ["fonts6-corr95"]
[tool.cfcheck.attribution]
n_inputs = 8
models = ["cnn"]
removal_train = 48
removal_test = 24
removal_fractions = [0.5]
goar_levels = [1.0]
retrain_epochs = 1
"""


@pytest.fixture
def tiny_settings() -> str:
    return TINY_SETTINGS


@pytest.fixture
def tiny(pytester):
    pytester.makepyprojecttoml(TINY_SETTINGS)
    pytester.syspathinsert()
    return pytester


@pytest.fixture
def scorecard_of(tiny):
    """The JSON scorecard a tiny run of method ``name`` wrote (standard profile)."""

    def read(name: str) -> dict:
        return json.loads((tiny.path / "reports" / f"{name}-standard" / "scorecard.json").read_text())

    return read


@pytest.fixture(scope="session")
def documented_snippets() -> dict[str, str]:
    """The ``# name.py`` Python blocks of README.md and of every documentation page under docs/
    (the guides per kind hold the adapters), by name: the examples tests run them as printed."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    text = "\n".join(page.read_text() for page in [root / "README.md", *sorted((root / "docs").rglob("*.md"))])
    snippets: dict[str, str] = {}
    for name, code in re.findall(r"```python\n# (\w+)\.py\n(.*?)```", text, re.S):
        # an example printed in several places (README and a guide) must read the same everywhere
        assert snippets.setdefault(name, code) == code, f"two different documented examples are named {name}.py"
    return snippets
