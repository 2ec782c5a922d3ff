"""``cfcheck calibrate --domain SPEC --kind scm``: earn a user's attribute domain's SCM bars from controls.

The controls run on any domain that declares attributes (``ImageDomain(..., attributes=...)``;
:data:`~cfcheck.kinds.scm.calibration_expectations.CONTROL_ORDER`): identity, uniform noise, a
random real training image with the counterfactual's attributes, the nearest such image and a
random real training image of any attribute cell (``cfcheck.fixtures.scm.<name>``,
:mod:`cfcheck.kinds.scm.calibration_controls`); ``--positive SPEC`` (repeatable; any spec
``--method`` takes) adds the user's own positive controls, expected to pass
every suite (:mod:`cfcheck.kinds.scm.calibration_expectations`). Each control is one conformance run
per seed (``--seeds``, default 0, 1 and 2; :func:`cfcheck.calibration.runs.run_domain_control`);
the shared rule (:mod:`cfcheck.calibration.placement`) places the bars from every seed's task
scores together, only where the controls separate.

The domain's load check runs first; a domain without attributes, a control run that writes no score,
or a calibration that earns no bar is an error (``cfcheck calibrate`` exits 2 with the message). The
bars go to ``<domain.calibration_dir>/bars-<profile>.json`` (the SCM entries, each with a rationale
quoting the controls' values; a VCE or attribution calibration's entries are kept), with each
control's expectations (``controls.scm``) and why the other scores have no bar (``without_bar.scm``);
the controls' values per score go to ``calibration-<profile>.json`` beside it (other kinds' kept).
"""

from __future__ import annotations

import sys
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from cfcheck.calibration.placement import Placement, barred_or_raise, expected_sign, place_bars
from cfcheck.kinds.registry import loaded_cards
from cfcheck.kinds.scm.calibration_expectations import CONTROL_ORDER, EXPECTED, POSITIVE_EXPECTATIONS, rules

__all__ = ["calibrate_domain", "plan_controls", "run"]

KIND = "scm"


def _signs(expected: Sequence[tuple[str, str]]) -> str:
    return " ".join(f"{'~' if sign == 'x' else sign}{prefix}" for prefix, sign in expected if sign)


def plan_controls(chosen: Sequence[str], positives: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Control name → ``{"method", "expected", "facts"}``, the user's positives first.

    Raises:
        ValueError: naming an unknown control, or positives repeated or named like a bundled control.
    """
    unknown = [c for c in chosen if c not in CONTROL_ORDER]
    if unknown:
        raise ValueError(f"unknown controls {unknown}: the SCM domain calibration runs {', '.join(CONTROL_ORDER)}")
    if len(set(positives)) != len(positives) or set(positives) & set(CONTROL_ORDER):
        raise ValueError(f"--positive must name distinct methods, none named like a bundled control: {list(positives)}")
    planned: dict[str, dict[str, Any]] = {}
    for spec in positives:
        facts = {"role": "positive (--positive)", "method": spec, "expected": _signs(POSITIVE_EXPECTATIONS)}
        planned[spec] = {"method": spec, "expected": POSITIVE_EXPECTATIONS, "facts": facts}
    for name in CONTROL_ORDER:
        if name in chosen:
            method = f"cfcheck.fixtures.scm.{name}"
            facts = {"method": method, "expected": _signs(EXPECTED[name])}
            planned[name] = {"method": method, "expected": EXPECTED[name], "facts": facts}
    return planned


def _run_controls(
    planned: Mapping[str, Mapping[str, Any]],
    spec: str,
    domain: str,
    profile: str,
    out: Path,
    seeds: Sequence[int],
    jobs: int = 1,
) -> tuple[list[dict[str, Any]], dict[str, float]]:
    """Every control at every seed (:func:`cfcheck.calibration.runs.run_domain_controls`)."""
    from cfcheck.calibration.runs import run_domain_controls

    controls = [(name, str(control["method"]), None) for name, control in planned.items()]
    return run_domain_controls(controls, spec, domain, profile, out, seeds, jobs)


def _write(
    domain: Any,
    profile: str,
    planned: Mapping[str, Mapping[str, Any]],
    placements: Mapping[str, Placement],
    runs: Sequence[Mapping[str, Any]],
    seeds: Sequence[int],
) -> dict[str, Path]:
    """The controls' values into ``calibration-<profile>.json`` (other kinds' entries kept), then the
    bars file; RuntimeError where no score earned a bar (the values are written, the bars are not)."""
    from cfcheck.calibration.bars import bars_path, write_domain_bars
    from cfcheck.calibration.store import calibration_values, merge_kind_values

    folder = Path(domain.calibration_dir)
    folder.mkdir(parents=True, exist_ok=True)
    table = {name: control["expected"] for name, control in planned.items()}
    unbarred = {key: p.rationale for key, p in placements.items() if p.bar is None}
    values: dict[str, Any] = {}
    for run in runs:
        values.update(
            calibration_values(
                dict(run),
                expected=lambda control, suite, metric: {"x": "-"}.get(
                    sign := expected_sign(control, suite, metric, table), sign
                ),
            )
        )
    values_path = merge_kind_values(
        folder / f"calibration-{profile}.json",
        KIND,
        values,
        profile=profile,
        domain=domain.name,
        **{
            KIND: {
                "seeds": list(seeds),
                "without_bar": unbarred,
                "verdicts": {key: p.verdicts for key, p in placements.items() if p.bar is not None},
            }
        },
    )
    barred = barred_or_raise(placements, unbarred, domain.name, values_path, "SCM score")
    bars = write_domain_bars(
        bars_path(folder, profile),
        barred,
        domain=domain.name,
        profile=profile,
        method_kind=KIND,
        cards=loaded_cards(),
        controls={name: control["facts"] for name, control in planned.items()},
        without_bar=unbarred,
        details={key: {"basis": p.basis} for key, p in placements.items() if p.bar is not None},
    )
    return {"bars": bars, "values": values_path}


def calibrate_domain(
    spec: str,
    profile: str,
    out: Path,
    controls: Sequence[str] | None = None,
    seeds: Sequence[int] = (0, 1, 2),
    positives: Sequence[str] = (),
    jobs: int = 1,
) -> dict[str, Any]:
    """Run the SCM controls on ``spec`` at each seed, place its bars and write them into the domain's folder.

    Args:
        spec: the domain spec (a registered name, ``pkg.module:factory`` or ``path.py``).
        profile: the profile to calibrate.
        out: where the control runs keep their reports.
        controls: the bundled controls to run (default: all of ``CONTROL_ORDER``).
        seeds: the seeds every control runs at.
        positives: the user's positive controls (method specs).
        jobs: how many control runs go at once (each is one process on one thread).

    Returns:
        ``{"bars", "values"}`` (paths), ``"placements"`` (key → placement), ``"derived"`` (key →
        (bar, rationale)), ``"seconds"`` (control → s) and ``"controls"`` (name → plan).

    Raises:
        ValueError: for a bad argument, a bundled domain, one without attributes or without a
            calibration folder.
        RuntimeError: where the domain fails its load check, a control writes no score, or no
            score earns a bar.
    """
    from cfcheck.calibration.runs import domain_to_calibrate
    from cfcheck.domains.checks import require_usable

    domain = domain_to_calibrate(spec, seeds, jobs)
    if getattr(domain, "attributes", None) is None:
        raise ValueError(
            f"domain {domain.name!r} declares no attributes, so the SCM suites do not run on it: declare them "
            "with ImageDomain(..., attributes=Attributes(...)) (see 'SCM generators on your own data')"
        )
    require_usable(spec)
    planned = plan_controls(list(CONTROL_ORDER if controls is None else controls), list(positives or ()))
    runs, seconds = _run_controls(planned, spec, domain.name, profile, Path(out), seeds, jobs)
    table = {name: control["expected"] for name, control in planned.items()}
    names = {spec_: f"{spec_} (--positive)" for spec_ in positives or ()}
    placements = place_bars(runs, profile, domain.name, rules(table), cards=loaded_cards(), names=names)
    return _write(domain, profile, planned, placements, runs, seeds) | {
        "placements": placements,
        "derived": {key: (p.bar, p.rationale) for key, p in placements.items()},
        "seconds": seconds,
        "controls": planned,
    }


def summary(outcome: Mapping[str, Any]) -> str:
    """Each control's verdicts under the bars, and where a control went against its expectation."""
    lines = []
    for name, control in outcome["controls"].items():
        counts: dict[str, int] = defaultdict(int)
        against = []
        for key, placement in sorted(outcome["placements"].items()):
            told = placement.verdicts.get(name, {})
            for verdict_name, n in told.items():
                counts[verdict_name] += n
            sign = expected_sign(name, placement.suite, placement.metric, {name: control["expected"]}) if told else ""
            wanted = {"+": {"pass"}, "-": {"fail"}}.get(sign)
            if wanted and set(told) - wanted:
                against.append(f"{key} ({', '.join(f'{v} {n}' for v, n in sorted(told.items()))})")
        total = ", ".join(f"{v} {n}" for v, n in sorted(counts.items())) or "no barred score"
        lines.append(f"{name}: {total}" + (f"; not as expected on {', '.join(against)}" if against else ""))
    return "\n".join(lines)


def run(args: Any) -> int:
    """``cfcheck calibrate --domain SPEC --kind scm [--positive SPEC ...]`` (the kind's
    :attr:`~cfcheck.kinds.declaration.KindDeclaration.domain_calibration`): the controls on the
    domain, its bars printed and written."""
    from cfcheck.calibration.bars import render_domain_bars

    outcome = calibrate_domain(
        args.domain,
        args.profile,
        args.out,
        getattr(args, "methods", None),
        args.seeds,
        getattr(args, "positive", None) or (),
        getattr(args, "jobs", 1),
    )
    print(render_domain_bars(outcome["derived"]))
    print(summary(outcome))
    spent = ", ".join(f"{name} {s:.0f} s" for name, s in outcome["seconds"].items())
    print(f"wrote {outcome['bars']} and {outcome['values']} ({spent})", file=sys.stderr)
    return 0
