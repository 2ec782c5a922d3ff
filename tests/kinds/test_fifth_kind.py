"""A kind is a plugin: a package of its own registers a fifth kind through the ``cfcheck.kinds`` entry
point, ships its suite and a metric card of its own, and a run scores a method of that kind on a
bundled domain, its own card's direction and bar on the score and the card on the pages, with no
line of cfcheck changed for it.

The package is written into the test's folder with the metadata an installed distribution has (a
``.dist-info`` folder whose ``entry_points.txt`` registers the kind), and the run is a fresh process
(as a user's run would be) with that folder on its path: the registry finds the kind there, exactly
as it finds cfcheck's own four. Its scorecard carries the toy card's definition and the kind's task
label, so ``cfcheck render`` in a fresh process without the toy package (another machine) draws them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

DECLARATION = """
from typing import Any, Protocol, runtime_checkable

from cfcheck.core.thresholds import Bar
from cfcheck.kinds.declaration import KindDeclaration
from cfcheck.metrics.card import MetricCard


@runtime_checkable
class PointRater(Protocol):
    def rate(self, x: Any) -> Any: ...


ABSTENTION = MetricCard(
    key="toy_abstention",
    name="Toy abstention rate",
    formula="share of the inputs the rater abstains on",
    direction="lower",
    range=(0.0, 1.0),
    units="fraction of inputs",
    normalisation="none",
    abstentions="what it counts",
    citation="the toy kind of tests/kinds/test_fifth_kind.py",
    per_sample=True,
    bar=Bar(0.75, "max"),
    rationale="a rater that abstains on three inputs in four rates next to nothing",
)

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
    cards=("coverage",),
    own_cards=(ABSTENTION,),
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
    task_group_label = "point set"

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


def test_abstention(cfcheck_result, cfcheck_score):
    cfcheck_score("toy_abstention", (~cfcheck_result.valid).float(), labels=cfcheck_result.sample_labels)
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


def run_toy(toy_kind) -> pytest.RunResult:
    """Run the toy kind's suite and the contract on gmm (its suite's marker selects it like a bundled
    suite's; the domains' load check is left out); returns the run's result."""
    selected = "-m", "toy_coverage or contract"
    result = toy_kind.runpytest_subprocess(
        "--method=toy_method", "--cfcheck-domain=gmm", "--cfcheck-no-cache", *selected, "-p", "no:randomly", "-v"
    )
    output = result.stdout.str()
    assert result.ret == 0, output[-4000:]
    return result


def test_a_fifth_kind_from_its_own_package_is_run_and_scored(toy_kind):
    result = run_toy(toy_kind)
    output = result.stdout.str()
    assert "method toy_method, kinds toy," in output  # detected before the run, from the fixture's annotation
    assert "the method implements toy" in output  # the bundled kinds' suites are deselected
    assert "test_domain_loads" not in output
    # its contract (the engine's one contract suite, for every kind) and its own suite ran
    result.stdout.fnmatch_lines(["*test_contract.py::test_output_contract[[]toy[]] PASSED*"], consecutive=False)
    run_dir = toy_kind.path / "reports" / "toy_method-standard"
    scorecard = json.loads((run_dir / "scorecard.json").read_text())
    toy = {score["metric"]: score for score in scorecard["scores"] if score["kind"] == "toy"}
    assert sorted(toy) == ["coverage", "toy_abstention"], toy
    score = toy["coverage"]
    assert (score["domain"], score["suite"], score["metric"], score["n"]) == ("gmm", "toy_coverage", "coverage", 8)
    assert score["task"].startswith("points/seed")
    assert score["value"] == pytest.approx(6 / 8)
    # its own card judges its score: 2 of 8 inputs abstained, against the card's bar <= 0.75, lower is better
    own = toy["toy_abstention"]
    assert own["value"] == pytest.approx(2 / 8) and own["n"] == 8 and own["direction"] == "lower"
    assert (own["bar"]["kind"], own["bar"]["bound"], own["threshold"], own["verdict"]) == (
        "max",
        0.75,
        "<= 0.75",
        "pass",
    )
    # its protocol covers exactly the cards it declares, and the bars of those cards
    protocol = scorecard["protocols"]["toy/gmm/standard"]
    assert sorted(protocol["metrics"]) == ["coverage", "toy_abstention"]
    assert set(protocol["bars"]) <= {"coverage", "toy_abstention"} and protocol["bars"]["toy_abstention"] == "<= 0.75"
    # the pages show the card: the Markdown row with its bar, the HTML card with its direction and range
    markdown = (run_dir / "scorecard.md").read_text()
    assert "| toy_abstention | points/seed0 | 0.25 [" in markdown and "| 8 | &lt;= 0.75 | pass |" in markdown
    page = (run_dir / "scorecard.html").read_text()
    assert "<b>Toy abstention rate</b> <code>toy_abstention</code>" in page
    assert "<dd>lower is better</dd>" in page and "<dd>[0, 1] fraction of inputs</dd>" in page


def test_cfcheck_new_adapter_writes_the_fifth_kinds_template(toy_kind):
    result = toy_kind.run(sys.executable, "-m", "cfcheck.cli", "new-adapter", "toy", "my_rater.py")
    assert result.ret == 0, result.stderr.str()
    written = (toy_kind.path / "my_rater.py").read_text()
    assert written.startswith("# my_rater.py: a point rater for cfcheck") and "def rate(self, x)" in written


def test_cfcheck_cards_lists_the_fifth_kinds_own_card(toy_kind):
    result = toy_kind.run(sys.executable, "-m", "cfcheck.cli", "cards", "toy_abstention")
    assert result.ret == 0, result.stderr.str()
    assert "Toy abstention rate" in result.stdout.str() and "<= 0.75" in result.stdout.str()


def _cfcheck(where: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``cfcheck ARGS`` in a fresh process run in ``where``, with nothing of the test's project on its path
    (no PYTHONPATH): the toy kind's package and its entry point are not installed there."""
    env = {name: value for name, value in os.environ.items() if name != "PYTHONPATH"}
    command = [sys.executable, "-m", "cfcheck.cli", *args]
    return subprocess.run(command, cwd=where, env=env, capture_output=True, text=True, timeout=300, check=False)


def test_the_fifth_kinds_scorecard_renders_where_the_kind_is_not_installed(toy_kind, tmp_path_factory):
    run_toy(toy_kind)
    written = json.loads((toy_kind.path / "reports" / "toy_method-standard" / "scorecard.json").read_text())
    # the scorecard carries the toy kind's own card and its task groups' label, and nothing cfcheck bundles
    # (its scores' other card, coverage, is cfcheck's own; the run's other kind is none)
    assert {score["metric"] for score in written["scores"]} == {"coverage", "toy_abstention"}
    assert list(written["cards"]) == ["toy_abstention"]
    own = written["cards"]["toy_abstention"]
    assert (own["name"], own["direction"], own["range"], own["bar"]) == (
        "Toy abstention rate",
        "lower",
        [0.0, 1.0],
        {"bound": 0.75, "kind": "max", "relative": "absolute"},
    )
    assert written["kinds"] == {"toy": {"task_group_label": "point set"}}

    # another machine: the run folder alone, its pages gone, in a folder without the toy kind's package
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    run_dir = elsewhere / "toy_method-standard"
    shutil.copytree(toy_kind.path / "reports" / "toy_method-standard", run_dir)
    for page in ("scorecard.md", "scorecard.html", "badge.svg"):
        (run_dir / page).unlink()
    unknown = _cfcheck(elsewhere, "cards", "toy_abstention")
    assert unknown.returncode != 0 and "no card 'toy_abstention'" in unknown.stderr + unknown.stdout, unknown
    rendered = _cfcheck(elsewhere, "render", str(run_dir))
    assert rendered.returncode == 0, rendered.stderr[-3000:]
    page = (run_dir / "scorecard.html").read_text()
    assert "<b>Toy abstention rate</b> <code>toy_abstention</code>" in page
    assert "<dd>lower is better</dd>" in page and "<dd>[0, 1] fraction of inputs</dd>" in page
    assert "<dd>a rater that abstains on three inputs in four rates next to nothing</dd>" in page
    assert "<dt>bar (bundled domains)</dt><dd>&lt;= 0.75</dd>" in page
    markdown = (run_dir / "scorecard.md").read_text()
    assert "| point set | toy_coverage | toy_abstention |" in markdown  # the summary's label, from the JSON
    assert "| 8 | &lt;= 0.75 | pass |" in markdown
    summary = _cfcheck(elsewhere, "summary", str(run_dir))
    assert "toy_abstention" in summary.stdout and "2 scores: 0 failed" in summary.stdout, summary

    # without the two sections the same JSON loses the card and the label here (this process has no toy kind)
    from cfcheck.metrics.cards import card_owner
    from cfcheck.reporting.html import render_html
    from cfcheck.reporting.markdown import render_markdown

    assert card_owner("toy_abstention") is None
    bare = {name: value for name, value in written.items() if name not in ("cards", "kinds")}
    assert "Toy abstention rate" not in render_html(bare)
    assert "| task | toy_coverage | toy_abstention |" in render_markdown(bare)
    assert "<dd>lower is better</dd>" in render_html(written) and "| point set |" in render_markdown(written)
