"""The user-domain VCE calibration's other parts, without running a calibration: how the controls
are planned, the adversarial budget's search (against a linear classifier whose answer is
closed-form), the sized attack and the mixture adapters, the failure paths' messages (a broken
domain, a control that writes no score, no bar earned, the output tail) and the bars file's new
fields. Where the bars go: test_vce_domain_calibration_bars.py."""

from __future__ import annotations

import json
import math
import types

import pytest
import torch

from cfcheck.calibration.bars import read_bars_file, write_domain_bars
from cfcheck.calibration.runs import output_tail
from cfcheck.core.thresholds import Bar
from cfcheck.kinds.vce import calibration
from cfcheck.kinds.vce.bar_placement import CHECKS, EXPECTED, place_bars
from cfcheck.kinds.vce.calibration import plan_controls
from cfcheck.metrics.cards import CARDS

_BUDGET = types.SimpleNamespace(eps=4 / 255, describe=lambda: {"eps": 4 / 255})


def test_plan_the_truth_then_the_users_positives_and_a_mixture_of_the_truth():
    planned = plan_controls(calibration.CONTROL_ORDER, ["a.py", "pkg.m:b"], has_truth=True, budget=_BUDGET)
    assert [c.name for c in planned] == [
        "truth",
        "a.py",
        "pkg.m:b",
        "random_target",
        "nearest",
        "identity",
        "noise",
        "pgd",
        "mixture",
    ]
    by_name = {c.name: c for c in planned}
    assert by_name["a.py"].method == "a.py" and by_name["a.py"].expected == EXPECTED["truth"]
    assert by_name["mixture"].env == {
        "CFCHECK_MIXTURE_OF": "cfcheck.fixtures.vce.truth",
        "CFCHECK_MIXTURE_SHARE": "0.6",
    }
    assert by_name["mixture"].expected == CHECKS["mixture"]
    assert by_name["pgd"].env == {"CFCHECK_PGD_EPS": repr(4 / 255)} and by_name["pgd"].facts["eps"] == 4 / 255


def test_plan_without_a_truth_mixes_the_first_positive_and_without_any_runs_no_mixture():
    planned = plan_controls(calibration.CONTROL_ORDER, ["a.py", "b.py"], has_truth=False, budget=_BUDGET)
    assert (
        planned[0].name == "a.py"
        and next(c for c in planned if c.name == "mixture").env["CFCHECK_MIXTURE_OF"] == "a.py"
    )
    bare = plan_controls(calibration.CONTROL_ORDER, [], has_truth=False, budget=_BUDGET)
    assert "mixture" not in [c.name for c in bare] and "truth" not in [c.name for c in bare]


@pytest.mark.parametrize(
    ("chosen", "positives", "message"),
    [
        (["truth", "fgsm"], [], r"unknown controls \['fgsm'\]"),
        (["truth"], ["a.py", "a.py"], "--positive must name distinct methods"),
        (["pgd"], [], "the pgd control needs the budget"),
    ],
)
def test_plan_refuses_bad_arguments(chosen, positives, message):
    with pytest.raises(ValueError, match=message):
        plan_controls(chosen, positives, has_truth=True)


def test_the_output_tail_is_cut_at_a_line_boundary():
    text = "".join(f"line {i:03d} of a failing control run with words\n" for i in range(200))
    tail = output_tail(text, limit=500)
    assert len(tail) <= 500 and text.rstrip("\n").endswith(tail)
    assert all(line.startswith("line ") and line.endswith("with words") for line in tail.split("\n"))
    assert output_tail("x" * 3000, limit=100) == "x" * 3000  # one long last line is kept whole


def test_a_control_that_writes_no_score_stops_the_calibration(monkeypatch, tmp_path):
    import cfcheck.calibration.runs as runs

    monkeypatch.setattr(runs, "run_domain_control", lambda *a, **k: (None, 1.0, "E   the domain exploded"))
    planned = plan_controls(["identity"], [], has_truth=False)
    with pytest.raises(
        RuntimeError, match=r"the identity control \(cfcheck.fixtures.vce.identity\) wrote no scorecard"
    ):
        calibration._run_controls(planned, "spec", "mine", "quick", tmp_path, [0])


def test_a_calibration_that_earns_no_bar_writes_no_bars_file(tmp_path):
    from cfcheck.kinds.vce.calibration_report import write_calibration

    def scorecard(low, high):
        score = {"domain": "mine", "suite": "validity", "metric": "target_accuracy", "task": "cnn/other/seed0"}
        return {"scores": [{**score, "value": (low + high) / 2, "ci_low": low, "ci_high": high}]}

    placements = place_bars({"truth": scorecard(0.3, 0.9), "identity": scorecard(0.2, 0.6)}, "quick", "mine")
    domain = types.SimpleNamespace(name="mine", calibration_dir=tmp_path)
    with pytest.raises(RuntimeError, match="no score earned a bar on domain 'mine'.*target_accuracy: the controls"):
        write_calibration(domain, "quick", plan_controls(["identity"], [], has_truth=False), placements, [], [0], None)
    assert not (tmp_path / "bars-quick.json").exists() and (tmp_path / "calibration-quick.json").exists()


def test_the_bars_file_keeps_each_kinds_controls_and_reasons_without_bar(tmp_path):
    path = tmp_path / "bars-quick.json"
    write_domain_bars(
        path,
        {"d2": (Bar(2.3, "max"), "comparison")},
        domain="mine",
        profile="quick",
        controls={"pgd": {"eps": 0.02}},
        method_kind="vce",
        cards=CARDS,
        without_bar={"tcv": "the controls overlap"},
        details={"d2": {"basis": "comparison", "baseline": "nearest"}},
    )
    write_domain_bars(
        path, {}, domain="mine", profile="quick", controls={"random": "-"}, method_kind="attribution", cards=CARDS
    )
    data = json.loads(path.read_text())
    assert data["controls"] == {"vce": {"pgd": {"eps": 0.02}}, "attribution": {"random": "-"}}
    assert data["without_bar"] == {"vce": {"tcv": "the controls overlap"}, "attribution": {}}
    assert data["bars"]["d2"]["basis"] == "comparison" and data["bars"]["d2"]["baseline"] == "nearest"
    assert read_bars_file(path, cards=CARDS)[0] == {"d2": Bar(2.3, "max")}


class _Margin(torch.nn.Module):
    """Two classes: logits ±k·Σ(x − 0.5); an L∞ change of ε moves the sum by at most d·ε."""

    def forward(self, x):
        s = 10.0 * (x - 0.5).flatten(1).sum(1)
        return torch.stack([s, -s], dim=1)


def test_the_attack_reaches_an_input_exactly_where_its_margin_is_within_the_budget():
    from cfcheck.kinds.vce.pgd_budget import reach_rate

    margins = torch.linspace(0.01, 0.39, 20)  # Σ(x − 0.5) per input, all on class 0's side
    images = (0.5 + margins / 4).view(-1, 1, 1, 1).expand(-1, 1, 2, 2).contiguous()  # 4 pixels
    targets = torch.ones(20, dtype=torch.long)
    for eps in (0.02, 0.05, 0.08):
        expected = float((margins < 4 * eps).float().mean())  # the full budget on every pixel flips it
        assert reach_rate(_Margin(), images, targets, eps) == pytest.approx(expected)


def test_the_budget_search_finds_the_smallest_budget_reaching_90_percent(tmp_path):
    from cfcheck.domains.data import ArraySource, ImageDomain
    from cfcheck.kinds.vce import pgd_budget
    from cfcheck.models.store import ModuleStore

    generator = torch.Generator().manual_seed(0)
    margins = torch.rand(400, generator=generator) * 0.6  # |Σ(x − 0.5)| per image, in [0, 0.6)
    labels = torch.arange(2).repeat(200)
    sign = torch.where(labels == 0, 1.0, -1.0)
    images = (0.5 + sign * margins / 4).view(-1, 1, 1, 1).expand(-1, 1, 2, 2).contiguous()
    fractions = {"train": 0.2, "oracle_train": 0.2, "selection": 0.4, "scored": 0.1, "reference": 0.1}
    domain = ImageDomain(
        "margins",
        ArraySource(images, labels),
        root=tmp_path,
        model_store=ModuleStore({"lin": _Margin()}),
        model_roles={"explained": ("lin",)},
        fractions=fractions,
    )
    found = pgd_budget.find_pgd_budget(domain, inputs=120)
    drawn, _ = pgd_budget._inputs(domain, "selection", 120, 0)
    margin = (drawn - 0.5).flatten(1).sum(1).abs()

    def rate(eps):  # closed form: the attack flips exactly the inputs whose margin is under 4·ε
        return float((margin < 4 * eps).float().mean())

    low, eps, trials = 0.0, 1 / 255, []
    while rate(eps) < 0.9:  # the documented search, replayed on the closed form
        trials.append(eps)
        low, eps = eps, min(2 * eps, 0.15)
    trials.append(eps)
    for _ in range(3):
        middle = (low + eps) / 2
        trials.append(middle)
        low, eps = (low, middle) if rate(middle) >= 0.9 else (middle, eps)
    assert found.eps == pytest.approx(eps) and found.reached == pytest.approx(rate(eps)) and rate(eps) >= 0.9
    assert [e for e, _ in found.trials] == pytest.approx(trials)
    assert found.inputs == 120 and not found.capped
    assert "the smallest budget found that reaches 90%" in found.how and f"{eps * 255:.3g}/255" in found.how


def test_the_sized_attack_reads_its_budget_and_keys_its_cache_by_it():
    from cfcheck.kinds.vce.methods.adversarial import SizedPGD, budget_from_environment

    assert budget_from_environment({"CFCHECK_PGD_EPS": "0.02"}) == 0.02
    with pytest.raises(ValueError, match="CFCHECK_PGD_EPS, which is not set"):
        budget_from_environment({})
    with pytest.raises(ValueError, match=r"CFCHECK_PGD_EPS must be a number in \(0, 1\]"):
        budget_from_environment({"CFCHECK_PGD_EPS": "8/255"})
    assert SizedPGD(eps=0.02).cfcheck_version != SizedPGD(eps=0.03).cfcheck_version
    assert SizedPGD(eps=0.02).cfcheck_version == SizedPGD(eps=0.02).cfcheck_version


def test_the_mixture_gives_the_positives_output_on_the_chosen_share_and_the_input_elsewhere():
    from cfcheck.fixtures.vce.mixture import PositiveMixture

    from cfcheck.kinds.vce.methods.truth import input_share

    class Abstaining:
        def explain(self, x, target, classifier, generator=None):
            assert generator is not None  # the seeded generator is handed on
            return torch.ones_like(x), torch.arange(len(x)) % 2 == 0

    x = torch.rand(500, 1, 4, 4, generator=torch.Generator().manual_seed(1)) * 0.5
    mixture = PositiveMixture(Abstaining(), 0.6, version="v1")
    out, valid = mixture.explain(
        x, torch.zeros(500, dtype=torch.long), torch.nn.Identity(), generator=torch.Generator()
    )
    chosen = input_share(x, 0.6)
    assert torch.equal(out[chosen], torch.ones_like(x[chosen])) and torch.equal(out[~chosen], x[~chosen])
    assert torch.equal(valid, torch.where(chosen, torch.arange(500) % 2 == 0, torch.ones(500, dtype=torch.bool)))
    assert math.isclose(float(chosen.float().mean()), 0.6, abs_tol=0.06)
    assert mixture.cfcheck_version != PositiveMixture(Abstaining(), 0.5, version="v1").cfcheck_version
    with pytest.raises(ValueError, match=r"`share` must be a number in \[0, 1\]"):
        PositiveMixture(Abstaining(), 1.5, version="v1")


BROKEN_DOMAIN = """
from pathlib import Path

import torch

from cfcheck.domains.data import ArraySource, ImageDomain
from cfcheck.models.store import ModelStore

HERE = Path(__file__).resolve().parent


def build():
    return torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(16, 2))


def make_domain():
    images = torch.rand(200, 1, 4, 4, generator=torch.Generator().manual_seed(0))
    return ImageDomain(
        "broken_weights",
        ArraySource(images, torch.arange(2).repeat(100)),
        root=HERE / "broken",
        model_store=ModelStore(HERE / "broken" / "models", "broken_weights"),
        model_roles={"explained": ("cnn",)},
    )
"""


def test_calibration_of_a_domain_that_fails_its_load_check_exits_2_naming_it(tmp_path, monkeypatch, capsys):
    import importlib.util

    from cfcheck.cli import calibrate_domain as domain_run
    from cfcheck.models.store import ModelStore

    (tmp_path / "broken_domain.py").write_text(BROKEN_DOMAIN)
    spec = importlib.util.spec_from_file_location("broken_domain_for_test", tmp_path / "broken_domain.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setitem(__import__("sys").modules, "broken_domain_for_test", module)
    store = ModelStore(tmp_path / "broken" / "models", "broken_weights")
    store.add("cnn", module.build(), builder="broken_domain_for_test:build")
    weights = tmp_path / "broken" / "models" / "cnn.safetensors"
    weights.write_bytes(weights.read_bytes()[:-1] + bytes([weights.read_bytes()[-1] ^ 0xFF]))
    ran = []
    monkeypatch.setattr(domain_run, "_runner", lambda calibration: ran.append(calibration) or (lambda args: 0))
    status = domain_run.main(["--domain", f"{tmp_path / 'broken_domain.py'}:make_domain", "--out", str(tmp_path)])
    message = capsys.readouterr().err.strip()
    assert status == 2 and ran == []  # no kind's calibration started
    assert message.startswith("cfcheck calibrate: domain 'broken_weights' (") and "\n" not in message
    assert "cannot be used, so no control was run and no bar written: model 'cnn'" in message
    assert "sha256" in message
