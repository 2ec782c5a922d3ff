"""A method that reads the domain's answer (its true counterfactual, or the factors it is computed
from) is flagged: the scorecard's headline, badge and provenance say it read the answer and that the
run is not a valid submission (issue 43, item 5). The bundled truth controls are flagged so; a method
that only explains is not, even where the engine scores it against the true counterfactual. The flag
survives the generation cache, xdist workers and a merge of shards."""

from __future__ import annotations

import json

import pytest

from cfcheck.cli import main as cfcheck
from cfcheck.core.answer_reads import AnswerReads, engine_reads, method_code, read_answer
from cfcheck.domains.answers import guard_answer_methods

HEADLINE = "NOT A VALID SUBMISSION: the method read the domain's true counterfactual"
VCE_ONE_TASK = ("-p", "no:randomly", "-k", "vce and test_ground_truth and not relative and not perceptual")
SCM_ONE_TASK = ("-p", "no:randomly", "-k", "scm and test_ground_truth and do_digit and not relative")

# Finds each input in the scored split by its pixels and asks the run's domain (the fixture) for its
# true counterfactual: what a user could write with cfcheck_domain alone.
READS_IN_EXPLAIN = """
import pytest, torch

class LooksUpTheAnswer:
    def __init__(self, domain):
        self.domain = domain
        self.test = domain.split(domain.split_roles["scored"])
        self.where = {bytes(image.numpy().tobytes()): i for i, image in enumerate(self.test.images)}

    def explain(self, x, target, classifier):
        index = torch.tensor([self.where[bytes(image.cpu().numpy().tobytes())] for image in x])
        factors = self.test.factors[index]
        return self.domain.class_counterfactual(factors, target.cpu()).to(x.device)

@pytest.fixture(scope="session")
def cf_method(cfcheck_domain):
    return LooksUpTheAnswer(cfcheck_domain)
"""

# Reads the answer once while its fixture builds it, then only copies its inputs.
READS_IN_FIXTURE = """
import pytest, torch

class Unchanged:
    def explain(self, x, target, classifier):
        return x.clone()

@pytest.fixture(scope="session")
def cf_method(cfcheck_domain):
    test = cfcheck_domain.split(cfcheck_domain.split_roles["scored"], n=3)
    cfcheck_domain.class_counterfactual(test.factors, torch.tensor([1, 2, 3]))
    return Unchanged()
"""

# Imports the bundled domain's internals instead of going through the run's domain object.
READS_INTERNALS = """
import pytest, torch
from cfcheck.domains.morpho.domain import true_counterfactual
from cfcheck.domains.morpho.splits import load_split

class RendersTheAnswer:
    def __init__(self):
        test = load_split("test")
        self.images, self.factors = test.images.flatten(1), test.factors

    def explain(self, x, target, classifier):
        index = torch.cdist(x.flatten(1).cpu(), self.images).argmin(1)
        return true_counterfactual(self.factors[index], digit=target.cpu()).to(x.device)

@pytest.fixture(scope="session")
def cf_method():
    return RendersTheAnswer()
"""

# Explains honestly (a blend towards grey): the engine scores it against the true counterfactual.
HONEST = """
import pytest

class Blend:
    def explain(self, x, target, classifier):
        return (x * 0.7 + 0.15).clone()

@pytest.fixture(scope="session")
def cf_method():
    return Blend()
"""

# Reads the answer only on the task of seed 0, so that one shard of a two-shard run reads it.
READS_ON_SEED0 = READS_IN_EXPLAIN.replace(
    "    def explain(self, x, target, classifier):\n        index",
    "    def explain(self, x, target, classifier, generator=None):\n"
    "        if generator.initial_seed() != 0:\n"
    "            return x.clone()\n"
    "        index",
)


def _run_dir(tiny, name: str, profile: str = "standard"):
    return tiny.path / "reports" / f"{name}-{profile}"


def _card(run_dir) -> dict:
    return json.loads((run_dir / "scorecard.json").read_text())


def assert_flagged(run_dir, *what: str) -> dict:
    """The run in ``run_dir`` says, on every page, that its method read the answer (``what``, at least)."""
    card = _card(run_dir)
    read = card["provenance"]["answer_read"]
    assert read is not None and set(what) <= set(read["what"]) and read["calls"] >= 1, read
    markdown = (run_dir / "scorecard.md").read_text()
    assert f"**NOT A VALID SUBMISSION**{HEADLINE[len('NOT A VALID SUBMISSION') :]}" in markdown
    assert "- answer read (not a valid submission): " in markdown
    html = (run_dir / "scorecard.html").read_text()
    assert f"<div class='banner INVALID'>{HEADLINE}" in html.replace("&#x27;", "'")
    badge = (run_dir / "badge.svg").read_text()
    assert ">not valid: read the answer</text>" in badge
    assert 'fill="#6f42c1"' in badge  # purple: neither a pass's green nor a failure's red
    return read


def assert_not_flagged(run_dir) -> None:
    card = _card(run_dir)
    assert card["provenance"]["answer_read"] is None
    assert "NOT A VALID SUBMISSION" not in (run_dir / "scorecard.md").read_text()
    assert "read the answer" not in (run_dir / "badge.svg").read_text()


@pytest.mark.parametrize(
    ("control", "selection", "what"),
    [
        ("vce.truth", VCE_ONE_TASK, {"class_counterfactual", "factors of the scored split"}),
        ("scm.truth", SCM_ONE_TASK, {"intervention_counterfactual"}),
    ],
)
def test_the_truth_controls_are_flagged(tiny, control, selection, what):
    result = tiny.runpytest(f"--method=cfcheck.fixtures.{control}", *selection)
    assert result.parseoutcomes().get("passed", 0) >= 1, result.stdout.str()[-2000:]
    name = {"vce.truth": "truth", "scm.truth": "scm_truth"}[control]
    read = assert_flagged(_run_dir(tiny, name), *what)
    assert set(read["what"]) == what
    result.stdout.fnmatch_lines([f"{HEADLINE} or its factors (*"])  # the terminal's headline
    assert result.ret == pytest.ExitCode.OK  # the flag is no verdict: the truth still passes


@pytest.mark.parametrize(
    ("adapter", "what"),
    [
        (READS_IN_EXPLAIN, {"class_counterfactual", "factors of the scored split"}),
        (READS_IN_FIXTURE, {"class_counterfactual", "factors of the scored split"}),
        (READS_INTERNALS, {"true_counterfactual", "factors of the scored split"}),
    ],
    ids=["from-explain", "from-the-fixture", "domain-internals"],
)
def test_a_users_method_that_reads_the_answer_is_flagged(tiny, adapter, what):
    tiny.makepyfile(reader=adapter)
    result = tiny.runpytest("--method=reader", *VCE_ONE_TASK)
    assert result.parseoutcomes().get("error") is None, result.stdout.str()[-2000:]
    assert set(assert_flagged(_run_dir(tiny, "reader"), *what)["what"]) == what


def test_an_honest_method_scored_against_the_true_counterfactual_is_not_flagged(tiny):
    tiny.makepyfile(honest=HONEST)
    tiny.runpytest("--method=honest", *VCE_ONE_TASK)
    run_dir = _run_dir(tiny, "honest")
    assert {s["metric"] for s in _card(run_dir)["scores"]} >= {"ground_truth_error"}  # the engine read the truth
    assert_not_flagged(run_dir)


def test_a_rerun_from_the_generation_cache_is_still_flagged(tiny):
    """The truth control reads the answer only in its calls: the second run, which takes its outputs
    from the cache and calls nothing, is flagged by what the cache entry kept."""
    first = tiny.runpytest("--method=cfcheck.fixtures.vce.truth", *VCE_ONE_TASK)
    first_read = assert_flagged(_run_dir(tiny, "truth"))
    second = tiny.runpytest("--method=cfcheck.fixtures.vce.truth", *VCE_ONE_TASK)
    generation = _card(_run_dir(tiny, "truth"))["provenance"]["generation"]
    assert generation["tasks_generated"] == 0 and generation["tasks_from_cache"] >= 1, generation
    assert assert_flagged(_run_dir(tiny, "truth")) == first_read
    assert first.ret == second.ret == pytest.ExitCode.OK


def test_xdist_workers_hand_the_flag_to_the_controller(tiny):
    tiny.makepyfile(reader=READS_IN_EXPLAIN)
    tiny.runpytest_subprocess("--method=reader", "-n", "2", *VCE_ONE_TASK)
    card = _card(_run_dir(tiny, "reader"))
    assert set(card["provenance"]["devices"]) == {"gw0", "gw1"}  # it ran on the workers
    assert_flagged(_run_dir(tiny, "reader"), "class_counterfactual")


def test_a_merged_scorecard_is_flagged_where_one_shard_is(tiny, tiny_settings):
    tiny.makepyprojecttoml(tiny_settings.replace("seeds = 1", "seeds = 2"))
    tiny.makepyfile(reader=READS_ON_SEED0)
    selection = ("-p", "no:randomly", "-k", "vce and test_ground_truth and not relative and not perceptual")
    for shard in ("1/2", "2/2"):
        tiny.runpytest("--method=reader", f"--cfcheck-shard={shard}", *selection)
    reports = tiny.path / "reports"
    shards = [reports / "reader-standard-shard1of2", reports / "reader-standard-shard2of2"]
    reads = [_card(shard)["provenance"]["answer_read"] for shard in shards]
    assert sum(read is not None for read in reads) == 1, reads  # only the shard with seed 0 read it
    assert cfcheck(["merge", *map(str, shards), "--output", str(reports / "merged")]) == 0
    merged = assert_flagged(reports / "merged", "class_counterfactual")
    assert merged == next(read for read in reads if read is not None)


def test_cfcheck_compare_marks_a_run_that_read_the_answer(tiny, capsys):
    tiny.makepyfile(honest=HONEST)
    tiny.runpytest("--method=honest", *VCE_ONE_TASK)
    tiny.runpytest("--method=cfcheck.fixtures.vce.truth", *VCE_ONE_TASK)
    runs = [str(_run_dir(tiny, "honest")), str(_run_dir(tiny, "truth"))]
    capsys.readouterr()
    assert cfcheck(["compare", *runs, "--resamples", "50", "--set-permutations", "0"]) == 0
    page = capsys.readouterr().out
    assert "truth [read the answer]" in page
    assert "truth [read the answer]: its method read the domain's answer" in page  # and the header says why
    assert "honest [read the answer" not in page


class _UsersDomain:
    """A user's domain with an answer method of its own that reports nothing."""

    name = "users_domain_with_an_answer"
    input_shape = (1, 2, 2)
    num_classes = 2
    class_names = ("a", "b")
    factor_names: tuple[str, ...] = ()
    categorical_factors: tuple[str, ...] = ()
    split_roles = {role: role for role in ("train", "selection", "scored", "reference")}
    model_roles: dict[str, tuple[str, ...]] = {}
    capabilities = frozenset({"class_counterfactual"})
    model_store = calibration_dir = None
    card_calibrated = False

    def __init__(self) -> None:
        self.calls = 0

    def split(self, name, n=None):
        raise NotImplementedError

    def class_counterfactual(self, factors, target):
        self.calls += 1
        return target


def test_a_users_domain_is_guarded_when_a_run_resolves_it():
    from cfcheck.domains.registry import forget_unregistered_domains, resolve_domain

    try:
        domain = resolve_domain(_UsersDomain())
    finally:
        forget_unregistered_domains()
    reads = AnswerReads()
    with method_code(reads):
        domain.class_counterfactual(None, 1)
    assert reads.summary() == {"what": ["class_counterfactual"], "calls": 1} and domain.calls == 1


def test_a_users_domain_answer_method_is_guarded_wherever_it_is_called():
    domain = guard_answer_methods(guard_answer_methods(_UsersDomain()))  # guarding twice wraps once
    assert domain.class_counterfactual.__wrapped__.__func__ is _UsersDomain.class_counterfactual
    reads = AnswerReads()
    domain.class_counterfactual(None, 1)  # not the method's code: not counted
    with method_code(reads):
        domain.class_counterfactual(None, 1)
        with engine_reads():  # the engine's own use inside the method's call: not the method's
            domain.class_counterfactual(None, 1)
        read_answer("factors")
    assert domain.calls == 3
    assert reads.summary() == {"what": ["class_counterfactual", "factors"], "calls": 2}
    with method_code(reads), reads.collecting() as task:
        domain.class_counterfactual(None, 1)
    assert task == {"class_counterfactual": 1} and reads.counts["class_counterfactual"] == 2


class _PropagatingDomain:
    """A domain whose counterfactual parents come from a model (``capabilities`` without the truth), or from
    its true SCM (with it)."""

    name = "propagating"

    def __init__(self, capabilities):
        self.capabilities = frozenset(capabilities)

    def counterfactual_parents(self, split, index, intervention):
        return dict(intervention)


@pytest.mark.parametrize(
    ("capabilities", "counted"), [((), False), (("intervention_counterfactual",), True)], ids=["model", "truth"]
)
def test_counterfactual_parents_are_the_answer_only_where_the_domain_has_a_true_counterfactual(capabilities, counted):
    """A user's attribute domain propagates through declared or fitted mechanisms (public: a method may use them);
    a domain with a true counterfactual propagates through the SCM the truth is rendered from."""
    domain = guard_answer_methods(_PropagatingDomain(capabilities))
    reads = AnswerReads()
    with method_code(reads):
        assert domain.counterfactual_parents("scored", None, {"a": 1}) == {"a": 1}
    assert reads.summary() == ({"what": ["counterfactual_parents"], "calls": 1} if counted else None)
