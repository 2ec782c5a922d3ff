"""``cfcheck calibrate --domain SPEC``: earn a user domain's bars for the VCE kind from cfcheck's controls.

The controls need nothing but the domain's data and explained classifier, so they run on any
domain (:data:`cfcheck.kinds.vce.declaration.CONTROL_ORDER`): the domain's true counterfactual
where it can compute one, a random and the nearest real image of the target class, identity, noise,
a targeted PGD attack on the explained classifier **sized to the domain** (the smallest L∞ budget
that reaches the target on 90 % of the never-scored selection split's inputs,
:mod:`cfcheck.kinds.vce.pgd_budget`) and a **mixture** (the first positive control on 60 % of the
inputs, the input unchanged on the rest). ``--positive SPEC`` (repeatable; any spec ``--method``
takes) adds the user's own positive controls, expected to pass validity, closeness and realism as
the true counterfactual is. Each control is one conformance run per seed (``--seeds``, default 0, 1
and 2; :func:`cfcheck.calibration.runs.run_domain_control`); :mod:`cfcheck.kinds.vce.bar_placement`
places the bars from every seed's task scores together.

Before any control runs, the domain's load check must pass; a control run that writes no score, or
a calibration that earns no bar, is an error (``cfcheck calibrate`` exits 2 with the message). The
bars go to ``<domain.calibration_dir>/bars-<profile>.json`` (a rationale per bar that quotes the
controls by name, how each control ran — the adversarial budget and how it was found — and why the
other scores have no bar) and the controls' values per score, their verdicts under the bars and the
budget search to ``calibration-<profile>.json`` beside it (the HTML charts draw them).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cfcheck.kinds.vce.bar_placement import (
    CHECKS,
    EXPECTED,
    MIXTURE_SHARE,
    POSITIVE_EXPECTATIONS,
    comparable_value,
    derive_bars,
    expected_sign,
    place_bars,
)
from cfcheck.kinds.vce.calibration_report import Control, summary, with_budget, write_calibration
from cfcheck.kinds.vce.declaration import CONTROL_ORDER

__all__ = [
    "EXPECTED",
    "Control",
    "calibrate_domain",
    "comparable_value",
    "derive_bars",
    "expected_sign",
    "place_bars",
    "plan_controls",
    "run",
]

#: the adapters of the controls that do not run as ``cfcheck.fixtures.vce.<name>``
METHODS = {"pgd": "cfcheck.fixtures.vce.pgd_sized", "mixture": "cfcheck.fixtures.vce.mixture"}
#: the environment variables the sized PGD and the mixture adapters read (see their modules)
PGD_EPS_VARIABLE = "CFCHECK_PGD_EPS"
MIXTURE_OF_VARIABLE, MIXTURE_SHARE_VARIABLE = "CFCHECK_MIXTURE_OF", "CFCHECK_MIXTURE_SHARE"


def _signs(expected: Sequence[tuple[str, str]]) -> str:
    """``+validity -closeness ~fid_target``: + expected to pass, - to fail, ~ not to pass (a check)."""
    return " ".join(f"{'~' if sign == 'x' else sign}{prefix}" for prefix, sign in expected if sign)


def plan_controls(
    chosen: Sequence[str], positives: Sequence[str], *, has_truth: bool, budget: Any = None
) -> list[Control]:
    """The controls a calibration runs, in order.

    Args:
        chosen: the bundled controls asked for (names of ``CONTROL_ORDER``); "truth" is dropped where
            the domain cannot compute its true counterfactual, "mixture" where no positive control runs.
        positives: the user's positive controls (method specs), run after the truth.
        has_truth: whether the domain computes its true counterfactual.
        budget: the adversarial control's :class:`~cfcheck.kinds.vce.pgd_budget.BudgetSearch` (needed
            where "pgd" is chosen).

    Raises:
        ValueError: naming an unknown control, a repeated positive, or "pgd" without a budget.
    """
    unknown = [c for c in chosen if c not in CONTROL_ORDER]
    if unknown:
        raise ValueError(f"unknown controls {unknown}: the domain calibration runs {', '.join(CONTROL_ORDER)}")
    if len(set(positives)) != len(positives) or set(positives) & set(CONTROL_ORDER):
        raise ValueError(f"--positive must name distinct methods, none named like a bundled control: {list(positives)}")
    controls: list[Control] = []
    for name in CONTROL_ORDER:
        if name not in chosen or (name == "truth" and not has_truth):
            continue
        if name == "mixture":
            of = "truth" if any(c.name == "truth" for c in controls) else (positives[0] if positives else None)
            if of is None:
                continue
            method = "cfcheck.fixtures.vce.truth" if of == "truth" else of
            expected = CHECKS["mixture"]
            facts = {
                "role": "check: judged on the bars, places none",
                "method": METHODS[name],
                "of": of,
                "share": MIXTURE_SHARE,
                "expected": f"(judged) {_signs(expected)}",
            }
            env = {MIXTURE_OF_VARIABLE: method, MIXTURE_SHARE_VARIABLE: repr(MIXTURE_SHARE)}
            controls.append(Control(name, METHODS[name], expected, env, facts))
            continue
        if name == "pgd":
            if budget is None:
                raise ValueError("the pgd control needs the budget its search found (find_pgd_budget)")
            facts = {"expected": _signs(EXPECTED[name]), "method": METHODS[name], **budget.describe()}
            env = {PGD_EPS_VARIABLE: repr(budget.eps)}
            controls.append(Control(name, METHODS[name], EXPECTED[name], env, facts))
            continue
        method = METHODS.get(name, f"cfcheck.fixtures.vce.{name}")
        facts = {"expected": _signs(EXPECTED[name]), "method": method}
        controls.append(Control(name, method, EXPECTED[name], facts=facts))
    truth_at = next((i + 1 for i, c in enumerate(controls) if c.name == "truth"), 0)
    own = [
        Control(
            spec,
            spec,
            POSITIVE_EXPECTATIONS,
            facts={"role": "positive (--positive)", "method": spec, "expected": _signs(POSITIVE_EXPECTATIONS)},
        )
        for spec in positives
    ]
    return controls[:truth_at] + own + controls[truth_at:]


def _check_positives(positives: Sequence[str]) -> None:
    """Each ``--positive`` spec must name something importable (a file, or a module as ``--method``
    takes it) before anything runs; the control's own run reports a module without ``cf_method``."""
    import importlib.util

    for spec in positives:
        location = spec.split(":", 1)[0] if not Path(spec).is_file() else spec
        if location.endswith(".py") or "/" in location or "\\" in location:
            found = Path(location).is_file()
        else:
            try:
                found = importlib.util.find_spec(location) is not None
            except (ImportError, ValueError):  # a parent package that does not import
                found = False
        if not found:
            raise ValueError(
                f"--positive {spec}: no such module or file (give it as --method takes it: pkg.module, "
                "path/to/adapter.py or pkg.module:attr)"
            )


def _run_controls(
    controls: Sequence[Control],
    spec: str,
    domain: str,
    profile: str,
    out: Path,
    seeds: Sequence[int],
    jobs: int = 1,
) -> tuple[list[dict[str, Any]], dict[str, float]]:
    """Every control at every seed (:func:`cfcheck.calibration.runs.run_domain_controls`)."""
    from cfcheck.calibration.runs import run_domain_controls

    planned = [(control.name, control.method, control.env) for control in controls]
    return run_domain_controls(planned, spec, domain, profile, out, seeds, jobs)


def calibrate_domain(
    spec: str,
    profile: str,
    out: Path,
    controls: Sequence[str] | None = None,
    seeds: Sequence[int] = (0, 1, 2),
    positives: Sequence[str] = (),
    jobs: int = 1,
) -> dict[str, Any]:
    """Run the controls on ``spec`` at each seed, place its bars (from every seed's task scores
    together, so a bar lets each positive control pass and each negative one fail on every seed) and
    write them into the domain's folder.

    Args:
        spec: the domain spec (a registered name, ``pkg.module:factory`` or ``path.py``).
        profile: the profile to calibrate.
        out: where the control runs keep their reports.
        controls: the bundled controls to run (default: all of ``CONTROL_ORDER`` the domain allows).
        seeds: the seeds every control runs at.
        positives: the user's positive controls (method specs).
        jobs: how many control runs go at once (each is one process on one thread).

    Returns:
        ``{"bars", "values"}`` (paths), ``"placements"`` (key → :class:`Placement`), ``"derived"``
        (key → (bar, rationale)), ``"seconds"`` (control → s, ``"pgd budget search"`` included),
        ``"budget"`` (the search, or None) and ``"controls"`` (the :class:`Control` list).

    Raises:
        ValueError: for a bad argument, a domain that is bundled or keeps no calibration folder.
        RuntimeError: where the domain fails its load check, a control writes no score, or no
            score earns a bar.
    """
    from cfcheck.calibration.runs import domain_to_calibrate
    from cfcheck.domains.checks import require_usable
    from cfcheck.kinds.vce.capabilities import ClassCounterfactual
    from cfcheck.kinds.vce.pgd_budget import find_pgd_budget

    domain = domain_to_calibrate(spec, seeds, jobs)
    positives = list(positives or ())
    require_usable(spec)
    _check_positives(positives)
    chosen = list(CONTROL_ORDER if controls is None else controls)
    budget, seconds_budget = None, 0.0
    if "pgd" in chosen:
        started = time.monotonic()
        budget = find_pgd_budget(domain)
        seconds_budget = time.monotonic() - started
        print(f"adversarial control: {budget.how} ({seconds_budget:.0f} s)", file=sys.stderr)
    planned = plan_controls(chosen, positives, has_truth=isinstance(domain, ClassCounterfactual), budget=budget)
    runs, seconds = _run_controls(planned, spec, domain.name, profile, Path(out), seeds, jobs)
    seconds["pgd budget search"] = seconds_budget
    table = {control.name: control.expected for control in planned}
    names = {c.name: f"{c.name} (--positive)" for c in planned if c.name in positives}
    names.update(
        {
            c.name: f"mixture ({c.facts['share']:.0%} {c.facts['of']}, the input elsewhere)"
            for c in planned
            if c.name == "mixture"
        }
    )
    placements = place_bars(runs, profile, domain.name, expected=table, names=names)
    if budget is not None:
        placements = with_budget(placements, budget)
    return write_calibration(domain, profile, planned, placements, runs, seeds, budget) | {
        "placements": placements,
        "derived": {key: (p.bar, p.rationale) for key, p in placements.items()},
        "seconds": seconds,
        "budget": budget,
        "controls": planned,
    }


def run(args: Any) -> int:
    """``cfcheck calibrate --domain SPEC [--kind vce] [--positive SPEC ...]`` (the kind's
    :attr:`~cfcheck.kinds.declaration.KindDeclaration.domain_calibration`): the controls on the
    domain, its bars printed and written."""
    from cfcheck.calibration.bars import render_domain_bars

    outcome = calibrate_domain(
        args.domain,
        args.profile,
        args.out,
        args.methods,
        args.seeds,
        getattr(args, "positive", None) or (),
        getattr(args, "jobs", 1),
    )
    print(render_domain_bars(outcome["derived"]))
    print(summary(outcome))
    spent = ", ".join(f"{name} {s:.0f} s" for name, s in outcome["seconds"].items())
    print(f"wrote {outcome['bars']} and {outcome['values']} ({spent})", file=sys.stderr)
    return 0
