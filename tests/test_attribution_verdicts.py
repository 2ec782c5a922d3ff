"""The attribution kind's verdicts: which removal gap gates on which bundled domain, that each bar
reaches the score it was earned for, and that every control lands on its side of every bar on
every calibrated seed.

The matrix is read from the committed calibration files (``cfcheck calibrate --kind attribution
--domain gmm|morpho``, seeds 0, 1 and 2), not re-measured: morpho's ROAR and GOAR curves retrain
a model per level and take an hour. The cheap gmm suites run as a user runs them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cfcheck.calibration.bars import DomainBars, read_bars_file
from cfcheck.calibration.runs import bundled_adapter
from cfcheck.core.keys import read_keyed
from cfcheck.core.thresholds import Bar
from cfcheck.domains import get_domain
from cfcheck.kinds.attribution.calibration import (
    CALIBRATED,
    OTHER_RANDOM_SEEDS,
    attribution_controls,
    derive_gap_bars,
    gap_key,
)
from cfcheck.kinds.attribution.removal import STRATEGIES
from cfcheck.metrics.cards import CARDS

#: domain → the removal gaps that gate there (every other calibrated gap is reported without a verdict)
GATED = {
    "gmm": {"goar_gap"},
    "morpho": {"road_gap:morf", "roar_gap:lerf", "goar_gap"},
}
SEEDS = {0, 1, 2}
#: (domain, gap key) → the seeds its committed calibration measured for every listed control, where not
#: all three (none: every gated score has every control on seeds 0, 1 and 2)
PARTIAL_SEEDS: dict[tuple[str, str], set[int]] = {}


def _calibration(domain: str) -> tuple[dict, dict[str, Bar]]:
    folder = Path(get_domain(domain).calibration_dir)
    values = json.loads((folder / "calibration-attribution-quick.json").read_text())
    from cfcheck.metrics.cards import CARDS

    for section in ("values", "without_bar"):  # a file written before one spelling keys road_gap_morf
        values[section] = read_keyed(values.get(section, {}), CARDS)
    path = folder / "bars-quick.json"
    bars = read_bars_file(path, cards=CARDS)[0] if path.is_file() else {}
    return values, bars


def _gaps(values: dict) -> dict[str, dict[str, dict[int, float]]]:
    keys = {gap_key(strategy, order) for strategy, order in CALIBRATED}
    return {
        key: {control: {int(seed): v for seed, v in per_seed.items()} for control, per_seed in by.items()}
        for key, by in values["values"].items()
        if key in keys
    }


def test_each_bar_key_is_the_name_of_the_score_it_judges():
    """A bar is looked up by the score's name, then by its card: GOAR records ``goar_gap`` (one order, no
    variant), so its bar must be keyed ``goar_gap``, not ``goar_gap:morf``."""
    bars = {gap_key(s, o): Bar(0.01 * i, "min") for i, (s, o) in enumerate(CALIBRATED, start=1)}
    judged = DomainBars(bars, "calibrated")
    for i, (strategy, order) in enumerate(CALIBRATED, start=1):
        suffix = f":{order}" if len(STRATEGIES[strategy]) > 1 else ""  # as score_removal names it
        assert judged.get(f"{strategy}_gap{suffix}", f"{strategy}_gap") == Bar(0.01 * i, "min"), (strategy, order)
    assert gap_key("goar", "morf") == "goar_gap" and gap_key("roar", "lerf") == "roar_gap:lerf"
    assert {s for s, _ in CALIBRATED} == {"roar", "road", "goar"}  # every strategy is calibrated


@pytest.mark.parametrize("domain", sorted(GATED))
def test_the_bundled_bars_reach_the_scores_a_run_records(domain):
    """Through the same lookup a run uses (cards first, then the domain's own bars): each gated gap's
    bar reaches its score and no other order's."""
    from cfcheck.calibration.bars import domain_bars

    class _Quick:
        name, thresholds = "quick", {}

    judged = domain_bars(get_domain(domain), _Quick(), {}, cards=CARDS)
    _, bars = _calibration(domain)
    for strategy, order in CALIBRATED:
        suffix = f":{order}" if len(STRATEGIES[strategy]) > 1 else ""
        found = judged.get(f"{strategy}_gap{suffix}", f"{strategy}_gap")
        key = gap_key(strategy, order)
        assert found == (bars[key] if key in GATED[domain] else None), (domain, key, found)


def test_the_negative_controls_are_several_independent_random_attributions():
    import torch

    controls = attribution_controls(get_domain("gmm"))
    negatives = [name for name, (role, _) in controls.items() if role == "-"]
    assert len(negatives) == len(OTHER_RANDOM_SEEDS) >= 2
    x = torch.zeros(4, 64)
    maps = [controls[name][1].attribute(x, None, torch.zeros(4, dtype=torch.int64)) for name in negatives]
    assert all(not torch.equal(a, b) for i, a in enumerate(maps) for b in maps[i + 1 :])


def test_a_bar_clears_every_negative_of_every_seed_and_quotes_their_spread():
    roles = {"signal": "+", "noisy 1": "ladder:1", "noisy 4": "ladder:4", "random a": "-", "random b": "-"}
    values = {
        "goar_gap": {
            "signal": {0: 0.4, 1: 0.38},
            "noisy 1": {0: 0.3, 1: 0.31},
            "noisy 4": {0: 0.05, 1: 0.06},
            "random a": {0: -0.01, 1: 0.004},
            "random b": {0: 0.02, 1: -0.003},
        },
        "roar_gap_morf": {
            "signal": {0: 0.12, 1: 0.09},
            "noisy 1": {0: 0.08, 1: 0.07},
            "noisy 4": {0: 0.03, 1: 0.02},
            "random a": {0: 0.046, 1: 0.0},
            "random b": {0: 0.0, 1: -0.01},
        },
    }
    derived = derive_gap_bars(values, roles, "d", "quick")
    bar, why = derived["goar_gap"]
    assert bar == Bar((0.05 + 0.02) / 2, "min")  # random b's seed-0 draw is the best negative
    assert "span -0.01 to +0.02" in why and "4 negative values (2 random attributions" in why
    assert "0.015 above the best negative" in why
    bar, why = derived["roar_gap_morf"]  # a lucky retraining of a random attribution beats the noisiest rung,
    assert bar == Bar((0.07 + 0.046) / 2, "min")  # which is past the score's resolution: neither + nor -
    assert "+0.046" in why and "resolves noise up to 1×" in why
    # measured on two seeds where three are asked for: no bar, whatever the values
    short = derive_gap_bars(values, roles, "d", "quick", seeds=(0, 1, 2))
    assert short["goar_gap"][0] is None and "(not on 2)" in short["goar_gap"][1]
    values["roar_gap_morf"]["signal"][1] = 0.04  # below the lucky random draw: what the measured seeds
    short = derive_gap_bars(values, roles, "d", "quick", seeds=(0, 1, 2))  # already rule out is said first
    assert "overlap" in short["roar_gap_morf"][1]


@pytest.mark.parametrize("domain", sorted(GATED))
def test_the_calibration_covers_every_strategy_on_three_seeds(domain):
    values, _ = _calibration(domain)
    gaps = _gaps(values)
    assert set(gaps) == {gap_key(s, o) for s, o in CALIBRATED}, f"recalibrate {domain}: {sorted(gaps)}"
    for key, by_control in gaps.items():
        negatives = [c for c in by_control if values["roles"][c] == "-"]
        assert len(negatives) >= 2, (domain, key, negatives)  # independent random attributions
        seeds = PARTIAL_SEEDS.get((domain, key), SEEDS)
        for control in ("gradient", "smoothgrad", *negatives) if domain == "morpho" else by_control:
            assert seeds <= set(by_control[control]) <= SEEDS, (domain, key, control)
        rungs = [c for c in by_control if values["roles"][c].startswith("ladder:")]
        assert len(rungs) >= 3, (domain, key, rungs)
    for strategy, order in CALIBRATED:  # the areas are kept too, for the suites' random baseline as well
        seeds = PARTIAL_SEEDS.get((domain, gap_key(strategy, order)), SEEDS)
        measured = {int(s) for s in values["areas"][f"{strategy}:{order}"]["random (cfcheck's baseline)"]}
        assert seeds <= measured <= SEEDS, (domain, strategy, order)


@pytest.mark.parametrize("domain", sorted(GATED))
def test_the_calibration_retrained_as_often_as_the_suites_do(domain):
    """A ROAR or GOAR bar is earned on the mean gap over the profile's retraining draws (the value a
    run records); gaps measured with another number of draws would be other, noisier numbers."""
    from cfcheck.kinds.attribution.section import SECTION_DEFAULTS

    values, _ = _calibration(domain)
    assert values.get("retraining_draws", 1) == SECTION_DEFAULTS["quick"].retraining_draws == 3


@pytest.mark.parametrize("domain", sorted(GATED))
def test_the_verdict_matrix(domain):
    """Gated scores are the expected ones; under each bar every positive control passes and every
    negative fails on every seed (a noisy rung past the score's resolution is neither, and the bar's
    rationale names it); an ungated score's reason is in the values file."""
    values, bars = _calibration(domain)
    gaps = _gaps(values)
    derived = derive_gap_bars(gaps, values["roles"], domain, "quick", values["seeds"])
    gated = {key for key, (bar, _) in derived.items() if bar is not None}
    assert gated == GATED[domain], {key: why for key, (_, why) in derived.items()}
    attribution_bars = {key: bar for key, bar in bars.items() if key in derived}
    assert attribution_bars == {key: derived[key][0] for key in gated}, "stale bars file: recalibrate"
    for key, (bar, why) in derived.items():
        if bar is None:
            assert values["without_bar"][key] == why
            continue
        best_negative = max(v for c, per in gaps[key].items() if values["roles"][c] == "-" for v in per.values())
        for control, per_seed in gaps[key].items():
            role = values["roles"][control]
            if role.startswith("ladder:") and min(per_seed.values()) <= best_negative:
                # past the score's resolution: neither positive nor negative, and the rationale says so
                assert f"{float(role.split(':')[1]):g}× (worst" in why, (domain, key, control, why)
                continue
            passes = {seed: gap >= bar.bound for seed, gap in per_seed.items()}
            expected = role != "-"
            assert all(p == expected for p in passes.values()), (domain, key, control, per_seed, bar)


def _run_suite(tmp_path: Path, suite: str, fixture: str, domain: str) -> dict:
    root = Path(__file__).resolve().parents[1]
    # the quick profile attributes morpho's "cnn"; a gmm-only run names the toy's model
    (tmp_path / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\n[tool.cfcheck.attribution]\nmodels = ["mlp"]\n'
    )
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    env.pop("PYTEST_XDIST_WORKER", None)
    env.pop("PYTEST_XDIST_WORKER_COUNT", None)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            str(root / "suites" / "attribution" / suite),
            f"--method={root.joinpath(*bundled_adapter(fixture).split('.')[1:])}.py",
            f"--cfcheck-domain={domain}",
            "--cfcheck-profile=quick",
            f"--cfcheck-report-dir={tmp_path / 'reports'}",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:xdist",
            "-o",
            "addopts=",
            "-c",
            str(tmp_path / "pyproject.toml"),
            f"--rootdir={tmp_path}",
            "--cfcheck-no-cache",
            "-k",
            "not leakage",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    path = tmp_path / "reports" / f"{fixture}-quick" / "scorecard.json"
    assert path.is_file(), done.stdout[-3000:] + done.stderr[-3000:]
    return json.loads(path.read_text())


@pytest.mark.slow
@pytest.mark.parametrize(
    ("fixture", "expected"), [("attr_gradient", {"pass"}), ("attr_random", {"fail", "inconclusive"})]
)
def test_goar_gates_on_gmm_as_a_user_runs_it(tmp_path, fixture, expected):
    """The gmm GOAR bar reaches the suite's ``goar_gap``: the gradient passes; the random attribution
    does not (measured at seed 0 with three retraining draws: the toy's MLP retrains to the same
    outcomes on the random removals in every draw, +0.006 each, and the interval −0.0001 to +0.0121
    straddles the bar 0.0092, so it is inconclusive, which fails a run by default: the bar's margin
    over the random controls, 0.0067, is about the half-width of a 300-input interval)."""
    scorecard = _run_suite(tmp_path, "test_goar.py", fixture, "gmm")
    verdicts = {s["metric"]: s["verdict"] for s in scorecard["scores"]}
    assert verdicts["goar_gap"] in expected, scorecard["scores"]
    assert verdicts["goar_area"] is None


def test_the_retraining_seed_follows_the_run_seed_and_seed_0_keeps_the_old_one():
    """Each calibration seed is another retraining draw (ROAR and GOAR retrain per level); seed 0
    retrains exactly as before the seed was threaded through."""
    import dataclasses

    import torch

    from cfcheck.kinds.attribution import removal
    from cfcheck.kinds.attribution.local_run import LocalRun
    from cfcheck.kinds.attribution.section import SECTION_DEFAULTS
    from cfcheck.models.classifiers.recipes import model_specs
    from cfcheck.models.classifiers.training import fit

    gmm = get_domain("gmm")
    data = gmm.split(gmm.split_roles["train"])
    x, y = data.images[:64], data.labels[:64]
    section = dataclasses.replace(SECTION_DEFAULTS["quick"], retrain_epochs=1)

    def weights(seed: int) -> torch.Tensor:
        model = removal.retrain(LocalRun(section, seed=seed, domains=[gmm]), gmm, x, y)
        return torch.cat([p.detach().flatten() for p in model.parameters()])

    spec = model_specs(gmm)[gmm.model_roles["retrained"][0]]
    recipe = dataclasses.replace(
        spec.recipe, seed=removal.REMOVAL_SEED, epochs=1, batch_size=removal.RETRAIN_BATCH, select_on="last", n=None
    )
    fixed = fit(
        dataclasses.replace(spec, recipe=recipe, logit_calibration=None),
        removal._TrainingSet(x, y),
        None,
        log=lambda _: None,
    )
    assert torch.equal(weights(0), torch.cat([p.detach().flatten() for p in fixed.parameters()]))
    assert torch.equal(weights(1), weights(1)) and not torch.equal(weights(0), weights(1))
