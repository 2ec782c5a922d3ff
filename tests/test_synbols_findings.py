"""Bex et al.'s findings about the seven latent explainers, as measured on the glyphs scenarios.

Every explainer (and the latent kind's negative controls) runs through the latent kind's engine
on the four scenarios' bundled classifiers, with the quick profile's inputs (32 per scenario,
drawn near the confidence levels, seed 0) and K = 10, so the numbers are those of the table in docs/findings/glyphs.md
(``python benchmarks/bex_table.py``). What reproduces is asserted as the paper states it; what
does not is asserted as measured, and docs/findings/glyphs.md says which is which. The
orderings are measured on these 32 inputs per scenario; with the earlier classifiers (before the
spurious fonts were the heaviest and lightest ones) 16 inputs were already too few for some of
them, and smaller samples were not re-checked with the current ones.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch

from cfcheck.core.costs import MethodClock
from cfcheck.domains import get_domain
from cfcheck.kinds.latent.methods.controls import LatentIdentity, LatentNoise, LatentRepeater
from cfcheck.kinds.latent.methods.gradient_explainers import XGEM, DiCE, DiVE
from cfcheck.kinds.latent.methods.growing_spheres import GrowingSpheres
from cfcheck.kinds.latent.methods.informed_search import InformedSearch
from cfcheck.kinds.latent.methods.latent_cf import LatentCF
from cfcheck.kinds.latent.methods.stylex_attfind import StylExAttFind
from cfcheck.kinds.latent.section import LatentSection
from cfcheck.kinds.latent.spec import SPEC
from cfcheck.metrics.cards import get_card
from cfcheck.metrics.stats import summarize, verdict

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("synbols-findings")]

N_INPUTS = 32  # the quick profile's
EXPLAINERS = {
    "IS": InformedSearch,
    "DiCE": DiCE,
    "DiVE": DiVE,
    "GS": GrowingSpheres,
    "StylEx": StylExAttFind,
    "Latent-CF": LatentCF,
    "xGEM": XGEM,
}
CONTROLS = {"identity": LatentIdentity, "noise": LatentNoise, "repeater": LatentRepeater}
GRADIENT_BASED = ("DiCE", "DiVE", "Latent-CF", "xGEM")


class _Run:
    """The part of a cfcheck run the latent engine reads: one seed, the glyphs domain, a memo."""

    def __init__(self) -> None:
        section = LatentSection(n_inputs=N_INPUTS)
        self.device = torch.device("cpu")
        self.seed, self.seeds = 0, (0,)
        self.method_clock = MethodClock()
        self.profile = SimpleNamespace(section=lambda kind: section, batch_size=64, timeout=None)
        self._memo: dict = {}
        self._domain = get_domain("glyphs")

    def domain(self, name: str):
        return self._domain

    def memo(self, key, factory):
        if key not in self._memo:
            self._memo[key] = factory()
        return self._memo[key]


@pytest.fixture(scope="module")
def table(single_torch_thread) -> dict[str, dict[str, dict[str, float]]]:
    """method -> scenario -> mean S#, trivial rate, estimator-flip rate and the S# verdict (95% bootstrap interval
    against the card's bar, as the suite judges it)."""
    run = _Run()
    measured: dict[str, dict[str, dict[str, float]]] = {}
    for task in SPEC.tasks(run, run.domain("glyphs"), "explained"):
        inputs = SPEC.inputs(run, task)
        for name, factory in {**EXPLAINERS, **CONTROLS}.items():
            output = SPEC.generate(run, task, factory(), inputs, None)
            scores = SPEC.result(run, task, inputs, output, 0.0).scores
            bar = get_card("synbols_s_sharp").bar
            summary = summarize(scores.s_sharp.double(), n_resamples=500, seed=0, indicators=False)  # quick profile
            measured.setdefault(name, {})[task.variant] = {
                "s_sharp": summary.value,
                "trivial": float(scores.rates["trivial"].mean()),
                "ef": float(scores.rates["ef"].mean()),
                "verdict": verdict(summary.value, summary.ci_low, summary.ci_high, bar.bound, bar.kind),
            }
    return measured


def _s_sharp(table, name):
    return {scenario: row["s_sharp"] for scenario, row in table[name].items()}


def test_informed_search_beats_every_explainer_but_stylex_in_every_scenario(table):
    """Reproduces for five of the six: the oracle's S# is above DiCE's, DiVE's, GS's, Latent-CF's and
    xGEM's in all four scenarios."""
    oracle = _s_sharp(table, "IS")
    for name in ("DiCE", "DiVE", "GS", "Latent-CF", "xGEM"):
        for scenario, value in _s_sharp(table, name).items():
            assert oracle[scenario] > value, (name, scenario, oracle[scenario], value)


def test_stylex_outscores_the_oracle_here_unlike_the_paper(table):
    """Does not reproduce: Bex et al. find StylEx near 1. Here AttFind's K single-coordinate shifts of
    an axis-aligned latent space are orthogonal by construction, so each one that flips counts, and
    StylEx's S# is above 2 in every scenario (2.16–2.81), above the oracle's in the two 6-font ones."""
    stylex, oracle = _s_sharp(table, "StylEx"), _s_sharp(table, "IS")
    assert min(stylex.values()) > 2.0
    assert sum(stylex[s] > oracle[s] for s in stylex) >= 2


def test_gradient_explainers_score_near_one(table):
    """Reproduces for DiCE and DiVE (mean S# over the scenarios within 0.35 of 1, as the paper's
    0.81–1.19; measured 1.33 and 1.23); xGEM and Latent-CF score higher here (their K random starts
    give more than one direction), so Latent-CF is not the lowest, unlike the paper's Table 2."""
    mean = {name: sum(_s_sharp(table, name).values()) / 4 for name in (*GRADIENT_BASED, "GS")}
    for name in ("DiCE", "DiVE"):
        assert abs(mean[name] - 1.0) <= 0.35, (name, mean[name])
    assert mean["Latent-CF"] > mean["GS"] and mean["Latent-CF"] > mean["DiVE"], mean


def test_the_oracle_is_never_trivial_and_the_bar_separates_it_from_the_controls(table):
    """IS never touches the character, so none of its counterfactuals is trivial (the paper's 0%).
    Judged on the 95% interval against the bar (1.1): every control fails S# in every scenario,
    and the oracle passes in every scenario."""
    assert all(row["trivial"] == 0.0 for row in table["IS"].values())
    for name in CONTROLS:
        assert {row["verdict"] for row in table[name].values()} == {"fail"}, (name, table[name])
    assert {row["verdict"] for row in table["IS"].values()} == {"pass"}, table["IS"]


def test_only_the_oracle_gains_much_from_a_stronger_correlation(table):
    """Reproduces (Bex et al., Figure 5 and §4.1): the oracle's S# grows with the correlation at both
    font counts (6 fonts 1.88 -> 2.19, 10 fonts 2.41 -> 4.31), because the classifiers lean on the
    spurious fonts at 0.95 and not at 0.5. With 10 fonts its gain is more than twice any other
    explainer's (the next, StylEx, gains 0.62). With 6 fonts it does not stand out: StylEx gains
    about as much (0.34 against the oracle's 0.31), asserted as measured."""

    def gain(name, fonts):
        values = _s_sharp(table, name)
        return values[f"fonts{fonts}-corr95"] - values[f"fonts{fonts}-corr50"]

    assert gain("IS", 6) > 0 and gain("IS", 10) > 0
    others = [name for name in EXPLAINERS if name != "IS"]
    assert all(gain("IS", 10) > 2 * gain(name, 10) for name in others), {n: gain(n, 10) for n in EXPLAINERS}
    assert max(gain(name, 6) for name in others) > gain("IS", 6), {n: gain(n, 6) for n in EXPLAINERS}


def test_xgem_flips_the_estimator_more_often_than_dice_and_dive(table):
    """Reproduces (Table 4): xGEM's estimator-flip rate EF is above DiCE's and DiVE's in every
    scenario (quick profile: 77–88% against 51–75%; the paper 66–76% against 22–37%)."""
    for scenario, row in table["xGEM"].items():
        for name in ("DiCE", "DiVE"):
            assert row["ef"] > table[name][scenario]["ef"], (name, scenario, row["ef"], table[name][scenario]["ef"])
