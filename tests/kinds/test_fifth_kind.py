"""A kind is a plugin: a package of its own registers a fifth kind through the ``cfcheck.kinds`` entry
point, ships its suite, and a run scores a method of that kind on a bundled domain, with no line of
cfcheck changed for it.

The package is written into the test's folder with the metadata an installed distribution has (a
``.dist-info`` folder whose ``entry_points.txt`` registers the kind), and the run is a fresh process
(as a user's run would be) with that folder on its path: the registry finds the kind there, exactly
as it finds cfcheck's own four."""

from __future__ import annotations

import json
import sys
import textwrap

import pytest

DECLARATION = """
from typing import Any, Protocol, runtime_checkable

from cfcheck.kinds.declaration import KindDeclaration


@runtime_checkable
class PointRater(Protocol):
    def rate(self, x: Any) -> Any: ...


DECLARATION = KindDeclaration(
    name="toy",
    description="point rater: rate(x) -> x-shaped ratings",
    call="rate",
    arguments=("x",),
    spec="toykind.spec:SPEC",
    section="toykind.section:SECTION_DEFAULTS",
    template="toykind.template:ADAPTER",
    suites="toykind.suites",
    order=50,
    protocol=PointRater,
)
"""

SECTION = """
from dataclasses import dataclass


@dataclass(frozen=True)
class ToySection:
    n_inputs: int

    def validate(self):
        if self.n_inputs < 1:
            raise ValueError(f"n_inputs must be >= 1, got {self.n_inputs}")


SECTION_DEFAULTS = {profile: ToySection(n_inputs=8) for profile in ("quick", "standard", "full")}
"""

SPEC = """
from dataclasses import dataclass

import torch

from cfcheck.kinds.base import Inputs, KindSpec, Task
from cfcheck.kinds.calling import OutputSpec
from toykind.declaration import DECLARATION


@dataclass(frozen=True, kw_only=True)
class ToyTask(Task):
    kind = "toy"

    @property
    def id(self):
        return f"points/seed{self.seed}"


@dataclass(frozen=True)
class ToyResult:
    task: ToyTask
    valid: torch.Tensor
    sample_labels: dict
    seconds: float


class ToySpec(KindSpec):
    declaration = DECLARATION
    output = OutputSpec(call="rate")

    def supports(self, domain):
        return None if hasattr(domain.split("test", 1), "x") else "the toy kind rates points (a split with .x)"

    def tasks(self, run, domain, which):
        return [ToyTask(domain=domain, seed=seed) for seed in run.seeds]

    def inputs(self, run, task):
        split = task.domain.split("test", run.profile.section("toy").n_inputs)
        return Inputs(like=split.x, arguments={"x": split.x}, labels={"label": split.labels})

    def arguments(self, run, task, batch):
        return (batch["x"],)

    def result(self, run, task, inputs, output, seconds):
        return ToyResult(task, output.valid.cpu(), {"label": inputs.labels["label"].tolist()}, seconds)


SPEC = ToySpec()
"""

SUITE = """
import pytest

pytestmark = pytest.mark.cfcheck_kind("toy")


def test_coverage(cfcheck_result, cfcheck_score):
    cfcheck_score("coverage", cfcheck_result.valid.float(), labels=cfcheck_result.sample_labels)
"""

TEMPLATE = '''
ADAPTER = """# {name}.py: a point rater for cfcheck
import pytest


class MyRater:
    def rate(self, x):
        return x.clone()


@pytest.fixture
def cf_method() -> MyRater:
    return MyRater()
"""
'''

# a rater that abstains on every fourth input: on the 8 inputs of a task its coverage is 6/8 by construction
METHOD = """
import pytest
import torch


class Abstainer:
    def rate(self, x):
        return x.clone(), torch.arange(x.shape[0], device=x.device) % 4 != 0


@pytest.fixture
def cf_method() -> Abstainer:
    return Abstainer()
"""


@pytest.fixture
def toy_kind(pytester):
    """A small project (one seed, a short bootstrap) with the toy kind's package installed beside it."""
    tiny = pytester
    tiny.makepyprojecttoml("[tool.cfcheck]\nseeds = 1\nbootstrap_resamples = 50\n")
    package = tiny.path / "toykind"
    (package / "suites").mkdir(parents=True)
    files = {
        "__init__.py": "",
        "declaration.py": DECLARATION,
        "section.py": SECTION,
        "spec.py": SPEC,
        "template.py": TEMPLATE,
        "suites/__init__.py": "",
        "suites/test_toy_coverage.py": SUITE,
    }
    for name, text in files.items():
        (package / name).write_text(textwrap.dedent(text))
    metadata = tiny.path / "cfcheck_toykind-0.1.dist-info"
    metadata.mkdir()
    (metadata / "METADATA").write_text("Metadata-Version: 2.1\nName: cfcheck-toykind\nVersion: 0.1\n")
    (metadata / "entry_points.txt").write_text("[cfcheck.kinds]\ntoy = toykind.declaration:DECLARATION\n")
    tiny.makepyfile(toy_method=METHOD)
    return tiny


def test_a_fifth_kind_from_its_own_package_is_run_and_scored(toy_kind):
    # its suite's marker selects it like a bundled suite's (the domains' load check is left out)
    selected = "-m", "toy_coverage or contract"
    result = toy_kind.runpytest_subprocess(
        "--method=toy_method", "--cfcheck-domain=gmm", "--cfcheck-no-cache", *selected, "-p", "no:randomly", "-v"
    )
    output = result.stdout.str()
    assert result.ret == 0, output[-4000:]
    assert "method toy_method, kinds toy," in output  # detected before the run, from the fixture's annotation
    assert "the method implements toy" in output  # the bundled kinds' suites are deselected
    assert "test_domain_loads" not in output
    # its contract (the engine's one contract suite, for every kind) and its own suite ran
    result.stdout.fnmatch_lines(["*test_contract.py::test_output_contract[[]toy[]] PASSED*"], consecutive=False)
    scorecard = json.loads((toy_kind.path / "reports" / "toy_method-standard" / "scorecard.json").read_text())
    toy = [score for score in scorecard["scores"] if score["kind"] == "toy"]
    assert len(toy) == 1, toy
    (score,) = toy
    assert (score["domain"], score["suite"], score["metric"], score["n"]) == ("gmm", "toy_coverage", "coverage", 8)
    assert score["task"].startswith("points/seed")
    assert score["value"] == pytest.approx(6 / 8)


def test_cfcheck_new_adapter_writes_the_fifth_kinds_template(toy_kind):
    result = toy_kind.run(sys.executable, "-m", "cfcheck.cli", "new-adapter", "toy", "my_rater.py")
    assert result.ret == 0, result.stderr.str()
    written = (toy_kind.path / "my_rater.py").read_text()
    assert written.startswith("# my_rater.py: a point rater for cfcheck") and "def rate(self, x)" in written
