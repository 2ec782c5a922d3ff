"""Calibration: run every bundled control through the suites and tabulate what they reach.

    cfcheck calibrate [--profile quick] [--out reports/published] [--methods truth identity ...]

Each control is one ``pytest --method=<its adapter>`` run
(:func:`cfcheck.calibration.runs.bundled_adapter`; one CPU thread, so runs are comparable). Two tables come out, both in Markdown:

- the **verdict matrix**: per control and suite, how many scores passed, failed or were
  inconclusive, and whether the suite passed as a whole;
- the **calibration table**: per metric with a bar, the range of values (over tasks) each
  control reached, beside the bar. A bar is earned when it sits between what the positive
  controls reach and what the negative controls reach; the metric cards state the rationale.

It also writes the controls' value per score (``calibration-<profile>.json`` in the domain's
folder, :func:`cfcheck.calibration.store.write_calibration_values`) for each method kind whose controls all ran
(:data:`KIND_CONTROLS`: each kind's controls, as its folder declares them), replacing that kind's entries and
keeping the other kinds'; every scorecard of that domain and profile written afterwards records them (its
``calibration`` section, :mod:`cfcheck.reporting.calibration_section`; the controls' own scorecards are
updated here), its HTML charts draw them beside its own values and its metric cards quote them
(:mod:`cfcheck.reporting.evidence`).

The README's tables are this command's output; tests/test_verdicts.py asserts the verdicts.
"""

from __future__ import annotations

import json
import math
import sys
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from cfcheck.calibration.runs import run_control, seed_folder
from cfcheck.calibration.store import write_calibration_values
from cfcheck.controls import (
    DEFAULT_KIND,
    KIND_CONTROL_SUITES,
    KIND_CONTROL_TABLES,
    REFERENCE_METHODS,
    bundled_expectation,
    expectation,
    expected_sign,
    is_control,
)
from cfcheck.kinds.declaration import Expectation
from cfcheck.metrics.key import MetricKey

__all__ = [
    "KIND_CONTROLS",
    "KIND_CONTROL_TABLES",
    "REFERENCE_METHODS",
    "calibrated_kinds",
    "main",
    "render",
    "run_control",
    "seed_folder",
    "suite_summary",
]

#: Method kind (the first segment of a score's identity key) → the controls that calibrate it. A
#: kind's values are written only when every one of them ran: a partial run would drop controls
#: from the charts' markers and the cards' evidence.
KIND_CONTROLS: dict[str, tuple[str, ...]] = {
    kind: tuple(name for name in table if is_control(name)) for kind, table in KIND_CONTROL_TABLES.items()
}


def calibrated_kinds(names: Sequence[str] | set[str] | dict[str, Any]) -> tuple[str, ...]:
    """The kinds of :data:`KIND_CONTROLS` whose controls are all among ``names``."""
    ran = set(names)
    return tuple(kind for kind, controls in KIND_CONTROLS.items() if set(controls) <= ran)


def suite_verdicts(scorecard: dict[str, Any]) -> dict[str, dict[str, int]]:
    """Suite → verdict → count (scores without a bar are left out)."""
    counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for score in scorecard["scores"]:
        if score.get("verdict"):
            counts[score["suite"]][score["verdict"]] += 1
    return counts


def suite_summary(counts: dict[str, int]) -> str:
    """ "PASS 96/96", "FAIL 40/96 (3 inconcl.)", "INCONCL. 5/6 (1 inconcl.)" …: a suite passes when
    every bar passes and fails when one fails; with neither, some bar could not decide."""
    total = sum(counts.values())
    if not total:
        return "-"
    passed = counts.get("pass", 0)
    label = "PASS" if passed == total else "FAIL" if counts.get("fail", 0) or counts.get("error", 0) else "INCONCL."
    text = f"{label} {passed}/{total}"
    if counts.get("inconclusive"):
        text += f" ({counts['inconclusive']} inconcl.)"
    return text


def metric_ranges(scorecard: dict[str, Any]) -> dict[str, tuple[float, float]]:
    """Metric key (variants merged) → (min, max) value over tasks."""
    values: dict[str, list[float]] = defaultdict(list)
    for score in scorecard["scores"]:
        value = score.get("value")
        if value is not None and math.isfinite(value):
            values[MetricKey.parse(score["metric"]).card].append(value)
    return {key: (min(v), max(v)) for key, v in values.items()}


def _range(span: tuple[float, float] | None) -> str:
    if span is None:
        return "-"
    low, high = span
    return f"{low:.3g}" if f"{low:.3g}" == f"{high:.3g}" else f"{low:.3g}–{high:.3g}"


def _seed_cell(summaries: Mapping[int, str]) -> str:
    """One summary where every seed agrees, else each seed's: "s0 PASS 96/96 · s2 FAIL 90/96"."""
    if len(set(summaries.values())) == 1:
        return next(iter(summaries.values()))
    return " · ".join(f"s{seed} {text}" for seed, text in summaries.items())


def bar_disagreements(
    by_seed: Mapping[int, Mapping[str, dict[str, Any]]],
) -> dict[tuple[str, str, str], dict[int, int]]:
    """Where a control's verdict contradicts what it exists to show, per seed.

    Args:
        by_seed: seed → control name → its scorecard.

    Returns:
        (card key, control, expected sign) → seed → how many of the card's scores went against the
        expectation: a control expected to pass the suite ("+") that did not pass (failed or was
        inconclusive), or one expected to fail ("-") that passed. Scores without a bar are left out.
    """
    found: dict[tuple[str, str, str], dict[int, int]] = defaultdict(lambda: defaultdict(int))
    for seed, results in by_seed.items():
        for control, scorecard in results.items():
            for score in scorecard["scores"]:
                verdict, sign = score.get("verdict"), expected_sign(control, score["suite"])
                if verdict and (
                    (sign is Expectation.PASS and verdict != "pass") or (sign is Expectation.FAIL and verdict == "pass")
                ):
                    found[MetricKey.parse(score["metric"]).card, control, sign.value][seed] += 1
    return {key: dict(per_seed) for key, per_seed in sorted(found.items())}


def render(results: Mapping[int, Mapping[str, tuple[dict[str, Any], float]]], profile: str) -> str:
    """The verdict matrix, the calibration table and, over several seeds, the disagreements.

    Args:
        results: seed → control name → (its scorecard, seconds).
        profile: the profile they ran at.

    Returns:
        Markdown: per control and suite the verdict counts (one cell where every seed agrees, else
        each seed's), per barred metric each control's value range over tasks and seeds, and the
        scores where a control went against its expectation on some seed.
    """
    from cfcheck.kinds.registry import loaded_cards

    seeds = sorted(results)
    names = list(dict.fromkeys(name for seed in seeds for name in results[seed]))
    where = f"{profile} profile, seed{'s' * (len(seeds) > 1)} {', '.join(map(str, seeds))}"
    lines = [f"Verdict matrix ({where}; passed/total bars per suite)", ""]
    # the suites of the kind whose table holds every control named, else the default kind's
    owner = next((kind for kind, table in KIND_CONTROL_TABLES.items() if names and set(names) <= set(table)), None)
    suites = KIND_CONTROL_SUITES[owner or DEFAULT_KIND]
    header = ["control", "expected", *suites, "s"]
    lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for name in names:
        ran = {seed: results[seed][name] for seed in seeds if name in results[seed]}
        counts = {seed: suite_verdicts(scorecard) for seed, (scorecard, _) in ran.items()}
        cells = []
        for suite in suites:
            summaries = {seed: suite_summary(counts[seed].get(suite, {})) for seed in ran}
            cells.append(_seed_cell(summaries))
        expected = expectation(name) or REFERENCE_METHODS.get(name, "-")
        seconds = "/".join(f"{s:.0f}" for _, s in ran.values())
        lines.append("| " + " | ".join([name, expected, *cells, seconds]) + " |")
    lines += ["", f"Calibration table (value range over tasks{' and seeds' * (len(seeds) > 1)}; {where})", ""]
    header = ["metric", "bar", *names]
    lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    ranges: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for seed in seeds:
        for name, (scorecard, _) in results[seed].items():
            for key, span in metric_ranges(scorecard).items():
                ranges[name][key] += span
    for key, card in loaded_cards().items():
        if not any(key in r for r in ranges.values()):
            continue
        bar = card.bar_for(profile)
        cells = [
            _range((min(ranges[name][key]), max(ranges[name][key])) if ranges[name].get(key) else None)
            for name in names
        ]
        lines.append("| " + " | ".join([key, bar.describe() if bar else "none", *cells]) + " |")
    if len(seeds) > 1:
        against = bar_disagreements({seed: {n: card for n, (card, _) in results[seed].items()} for seed in seeds})
        lines += ["", f"Verdicts against the expectation ({where}; scores per seed)", ""]
        lines += [
            "| metric | control | expected | " + " | ".join(f"seed {s}" for s in seeds) + " |",
            "|" + "---|" * (3 + len(seeds)),
        ]
        for (key, control, sign), per_seed in against.items():
            word = "pass" if sign == "+" else "fail"
            lines.append(f"| {key} | {control} | {word} | " + " | ".join(str(per_seed.get(s, 0)) for s in seeds) + " |")
        if not against:
            lines.append("| (none) | | | " + " | ".join("" for _ in seeds) + " |")
    return "\n".join(lines) + "\n"


def _run_seconds(scorecard: dict[str, Any]) -> float:
    """Wall time of a stored run, from its provenance (to the second)."""
    from datetime import datetime

    provenance = scorecard["provenance"]
    started, finished = (datetime.fromisoformat(provenance[k]) for k in ("started", "finished"))
    return (finished - started).total_seconds()


def _examples() -> str:
    """The command's examples: the bundled calibration, a domain of one's own, and each other kind
    that calibrates a domain (:data:`cfcheck.cli.calibrate_domain.DOMAIN_CALIBRATIONS`)."""
    from cfcheck.cli.calibrate_domain import DOMAIN_CALIBRATIONS

    lines = [
        "cfcheck calibrate --profile quick --seeds 0 1 2 --out reports/calibration",
        "cfcheck calibrate --domain my_domain.py:make_domain --seeds 0 1 2   (a domain of your own)",
        *(f"cfcheck calibrate --kind {kind} --domain <domain>" for kind in list(DOMAIN_CALIBRATIONS)[1:]),
    ]
    return "examples:\n" + "\n".join(f"  {line}" for line in lines)


def main(argv: Sequence[str] | None = None) -> int:
    import argparse

    from cfcheck.cli.calibrate_domain import DOMAIN_CALIBRATIONS

    parser = argparse.ArgumentParser(
        prog="cfcheck calibrate",
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=_examples(),
    )
    parser.add_argument("--profile", default="quick")
    parser.add_argument("--out", type=Path, default=Path("reports/published"))
    parser.add_argument("--methods", nargs="*", default=list(KIND_CONTROL_TABLES[DEFAULT_KIND]))
    parser.add_argument("--reuse", action="store_true", help="tabulate existing scorecards under --out")
    parser.add_argument(
        "--seeds",
        nargs="+",
        type=int,
        default=[0],
        help="run every control at each of these --cfcheck-seed values (seed 0's scorecards under "
        "--out, seed N's under --out/seedN); a bar should hold on each (default: 0; with --domain: 0 1 2)",
    )
    parser.add_argument(
        "--domain",
        default=None,
        metavar="SPEC",
        help="calibrate this domain (a registered name, pkg.module:factory or path.py): run the "
        "domain-agnostic controls on it and write its bars into its calibration folder",
    )
    parser.add_argument(
        "--kind",
        choices=list(DOMAIN_CALIBRATIONS),
        default=None,
        help="with --domain: whose bars to earn (default: "
        + next(iter(DOMAIN_CALIBRATIONS))
        + "; `cfcheck calibrate --domain SPEC --help` lists each kind's options)",
    )
    args = parser.parse_args(argv)
    if args.kind is not None and args.domain is None:
        parser.error("--kind calibrates a domain: give it --domain SPEC")
    if args.domain is not None:  # `cfcheck calibrate --domain` runs cfcheck.cli.calibrate_domain.main
        parser.error("--domain is handled by cfcheck.cli.calibrate_domain: run it as `cfcheck calibrate --domain SPEC`")
    results: dict[int, dict[str, tuple[dict[str, Any], float]]] = {}
    for seed in args.seeds:
        results[seed] = {}
        for name in args.methods:
            if args.reuse:
                path = seed_folder(args.out, seed) / f"{name}-{args.profile}" / "scorecard.json"
                scorecard = json.loads(path.read_text())
                results[seed][name] = (scorecard, _run_seconds(scorecard))
            else:
                results[seed][name] = run_control(name, args.profile, args.out, seed)
                print(f"seed {seed} {name}: {results[seed][name][1]:.0f} s", file=sys.stderr)
    print(render(results, args.profile))
    # a partial run would drop controls from the markers: a kind is written only where all its controls ran
    kinds = calibrated_kinds(args.methods)
    if kinds:
        runs = [
            {
                name: card
                for name, (card, _) in results[seed].items()
                if any(name in KIND_CONTROLS[kind] for kind in kinds)
            }
            for seed in args.seeds
        ]
        for path in write_calibration_values(runs, args.profile, kinds=kinds, expected=bundled_expectation):
            over = f", seeds {', '.join(map(str, args.seeds))}" if len(args.seeds) > 1 else ""
            print(f"wrote {path} ({', '.join(kinds)} values{over})", file=sys.stderr)
        # each run's scorecard recorded the values as they were before: record the new ones, redraw
        from cfcheck.reporting.formats import render_run
        from cfcheck.reporting.scorecard import recalibrate

        for seed in args.seeds:
            for name in results[seed]:
                recalibrate(seed_folder(args.out, seed) / f"{name}-{args.profile}")
                render_run(seed_folder(args.out, seed) / f"{name}-{args.profile}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
