"""``cfcheck calibrate --domain SPEC``: earn a user domain's bars for the VCE kind from cfcheck's controls.

The controls need nothing but the domain's data and explained classifier, so they run on any
domain: identity, noise, a targeted PGD attack on the explained classifier, a random real image of
the target class, the nearest real image of the target class, and the domain's true counterfactual
where it can compute one. Each is one conformance run (``pytest --method=cfcheck.fixtures.<control>
--cfcheck-domain=SPEC --cfcheck-seed=S``, :func:`cfcheck.calibration.runs.run_domain_control`) per seed. Then, per score (metric and variant):

- the **positive** controls are those expected to pass it and the **negative** ones those
  expected to fail it (:data:`EXPECTED`; e.g. PGD only fails the oracle-based validity scores, since
  it does reach the target on the classifier it attacks);
- where every positive control's 95% interval over every task and seed (``--seeds``, default 0, 1
  and 2) lies on the good side of every negative control's, the bar sits halfway between the worst
  positive interval end and the best negative one, so that on the calibration runs each positive
  control passes and each negative one fails, conclusively, on every seed; realism bars are
  relative to the real-vs-real floor (value ÷ floor), as on the metric cards;
- where they overlap, or one side has no control, the score gets **no bar** and is reported without
  a verdict, and the bars file says why.

The bars go to ``<domain.calibration_dir>/bars-<profile>.json`` with a rationale per bar that
quotes the controls' values on this domain, and the controls' values per score to
``calibration-<profile>.json`` beside it (the HTML charts draw them).
"""

from __future__ import annotations

import json
import math
import sys
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from cfcheck.core.thresholds import Bar, FloorRule
from cfcheck.kinds.vce.declaration import CONTROL_ORDER
from cfcheck.metrics.key import MetricKey

#: the scores a targeted attack on the explained classifier is built to fail (it reaches the target
#: on that classifier, so classifier-based validity cannot tell it from a good counterfactual)
ORACLE_VALIDITY = ("oracle_score", "oracle_target_accuracy", "committee_oracle_target_accuracy", "lvs_target")
#: the realism scores against real images of the target class (an unchanged input is real, but of
#: the wrong class, so it fails these and not the whole-domain ones)
TARGET_REALISM = ("fid_target", "kid_target")

#: control → [(suite or metric prefix, sign)]: "+" expected to pass, "-" expected to fail. A metric
#: entry overrides its suite's.
EXPECTED: dict[str, list[tuple[str, str]]] = {
    "truth": [("validity", "+"), ("closeness", "+"), ("realism", "+"), ("ground_truth_relative_error", "+")],
    "random_target": [("validity", "+"), ("closeness", "-"), ("realism", "+"), ("ground_truth_relative_error", "-")],
    "nearest": [("validity", "+"), ("closeness", "-"), ("realism", "+"), ("ground_truth_relative_error", "-")],
    "identity": [
        ("validity", "-"),
        ("closeness", "+"),
        *((m, "-") for m in TARGET_REALISM),
        ("ground_truth_relative_error", "-"),
    ],
    "noise": [("validity", "-"), ("closeness", "-"), ("realism", "-"), ("ground_truth_relative_error", "-")],
    "pgd": [(m, "-") for m in ORACLE_VALIDITY],
}


def expected_sign(control: str, suite: str, metric: str) -> str:
    """ "+", "-" or "" for ``control`` on a score of ``suite`` named ``metric`` (``key`` or ``key:variant``)."""
    rules = dict(EXPECTED.get(control, []))
    return rules.get(MetricKey.parse(metric).card, rules.get(suite, ""))


def comparable_value(score: dict[str, Any], card: Any, profile: str, field: str = "value") -> tuple[float, FloorRule]:
    """The score's ``field`` ("value", "ci_low" or "ci_high"; the value where the interval end is
    missing) as a bar compares it: ÷ floor for a floor-relative card bar (realism), else as it is;
    and the bar's relative rule."""
    end = score.get(field)
    value = float(end if isinstance(end, (int, float)) and math.isfinite(end) else score["value"])
    bar = card.bar_for(profile) if card is not None else None
    floors = (score.get("extra") or {}).get("real_floor")
    if bar is not None and bar.relative != "absolute" and floors:
        floor = max(float(f) for f in floors)
        if bar.relative == "times_floor" and floor > 0:
            return value / floor, "times_floor"
        if bar.relative == "plus_floor":
            return value - floor, "plus_floor"
    return value, "absolute"


def derive_bars(
    results: Mapping[str, dict[str, Any]] | Sequence[Mapping[str, dict[str, Any]]], profile: str, domain: str
) -> dict[str, tuple[Bar | None, str]]:
    """Bar key (``key`` or ``key_variant``) → (bar or None, rationale) from control scorecards:
    control → scorecard, or a sequence of such, one per seed (every task score of every seed counts)."""
    from cfcheck.metrics.cards import CARDS

    values: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    found: dict[str, tuple[str, str, FloorRule, Any]] = {}  # bar key → (metric, suite, rule, card)
    runs = [results] if isinstance(results, Mapping) else list(results)
    for control, scorecard in ((c, card) for run in runs for c, card in run.items()):
        for score in scorecard["scores"]:
            value = score.get("value")
            if score.get("domain") != domain or not isinstance(value, (int, float)) or not math.isfinite(value):
                continue
            metric = str(score["metric"])
            card = CARDS.get(MetricKey.parse(metric).card)
            if card is None or card.direction == "none":
                continue
            # the interval's end a verdict would look at: the low end of a higher-is-better score, else the high
            passing_end, failing_end = ("ci_low", "ci_high") if card.direction == "higher" else ("ci_high", "ci_low")
            sign = expected_sign(control, str(score["suite"]), metric)
            compared, rule = comparable_value(score, card, profile, passing_end if sign == "+" else failing_end)
            key = MetricKey.parse(metric).bar_key
            values[key][control].append(compared)
            found[key] = (metric, str(score["suite"]), rule, card)
    bars: dict[str, tuple[Bar | None, str]] = {}
    for key, by_control in sorted(values.items()):
        metric, suite, rule, card = found[key]
        signs = {control: expected_sign(control, suite, metric) for control in by_control}
        positives = {c: v for c, v in by_control.items() if signs[c] == "+"}
        negatives = {c: v for c, v in by_control.items() if signs[c] == "-"}
        if not positives or not negatives:
            bars[key] = (
                None,
                f"no {'positive' if not positives else 'negative'} control is expected to "
                f"{'pass' if not positives else 'fail'} it",
            )
            continue
        higher = card.direction == "higher"
        worst = min if higher else max
        best = max if higher else min
        pos_control, pos = worst(((c, worst(v)) for c, v in positives.items()), key=lambda cv: cv[1])
        neg_control, neg = best(((c, best(v)) for c, v in negatives.items()), key=lambda cv: cv[1])
        unit = " × floor" if rule == "times_floor" else (" above the floor" if rule == "plus_floor" else "")
        tasks = sum(len(v) for v in by_control.values())
        over = f"{tasks} task scores of {len(by_control)} controls" + (f", {len(runs)} seeds" if len(runs) > 1 else "")
        quoted = (
            f"{pos_control} (expected to pass) reaches {pos:.4g}{unit} at worst, {neg_control} (expected to "
            f"fail) {neg:.4g}{unit} at best (95% interval ends), over {over} on domain {domain!r} "
            f"({profile} profile)"
        )
        if (pos > neg) if higher else (pos < neg):
            bars[key] = (Bar((pos + neg) / 2, "min" if higher else "max", rule), f"halfway: {quoted}")
        else:
            bars[key] = (None, f"the controls overlap: {quoted}")
    return bars


def calibrate_domain(
    spec: str, profile: str, out: Path, controls: Sequence[str] | None = None, seeds: Sequence[int] = (0, 1, 2)
) -> dict[str, Any]:
    """Run the controls on ``spec`` at each seed, derive its bars (from every seed's task scores
    together, so a bar lets each positive control pass and each negative one fail on every seed)
    and write them into the domain's folder.

    Returns:
        ``{"bars": path, "values": path, "derived": {key: (bar, rationale)}, "seconds": {control: s}}``.
    """
    from cfcheck.calibration.bars import bars_path, write_domain_bars
    from cfcheck.calibration.runs import run_domain_control
    from cfcheck.calibration.store import calibration_values
    from cfcheck.core.io import atomic_write_text
    from cfcheck.domains import get_domain
    from cfcheck.kinds.vce.capabilities import ClassCounterfactual

    domain = get_domain(spec)
    if domain.card_calibrated:
        raise ValueError(
            f"domain {domain.name!r} is judged by the metric cards' bars, calibrated on its bundled "
            "controls: recalibrate those with `cfcheck calibrate` (without --domain)"
        )
    if domain.calibration_dir is None:
        raise ValueError(f"domain {domain.name!r} has no calibration_dir to keep its bars in")
    chosen = list(controls or [c for c in CONTROL_ORDER if c != "truth" or isinstance(domain, ClassCounterfactual)])
    if not seeds or any(isinstance(seed, bool) or not isinstance(seed, int) or seed < 0 for seed in seeds):
        raise ValueError(f"`seeds` must be one or more non-negative integers, got {list(seeds)!r}")
    runs: list[dict[str, Any]] = []
    seconds: dict[str, float] = defaultdict(float)
    for seed in seeds:
        runs.append({})
        for control in chosen:
            scorecard, spent, tail = run_domain_control(control, spec, profile, out, seed)
            if scorecard is None or not scorecard["scores"]:
                what = "no scorecard" if scorecard is None else "a scorecard without scores"
                raise RuntimeError(
                    f"the {control} control wrote {what} on {domain.name!r} at seed {seed}; its run ended:\n{tail}"
                )
            runs[-1][control] = scorecard
            seconds[control] += spent
            print(f"seed {seed} {control}: {spent:.0f} s", file=sys.stderr)
    derived = derive_bars(runs, profile, domain.name)
    folder = Path(domain.calibration_dir)
    folder.mkdir(parents=True, exist_ok=True)
    bars = write_domain_bars(
        bars_path(folder, profile),
        {k: (b, why) for k, (b, why) in derived.items() if b},
        domain=domain.name,
        profile=profile,
        method_kind="vce",
        controls={c: "".join(f"{s}{p} " for p, s in EXPECTED[c]).strip() for c in chosen},
    )
    unbarred = {key: why for key, (bar, why) in derived.items() if bar is None}
    values = {key: entry for run in runs for key, entry in calibration_values(run, expected=expected_sign).items()}
    values_path = folder / f"calibration-{profile}.json"
    atomic_write_text(
        values_path,
        json.dumps(
            {"profile": profile, "domain": domain.name, "values": values, "without_bar": unbarred},
            indent=1,
            sort_keys=True,
        )
        + "\n",
    )
    return {"bars": bars, "values": values_path, "derived": derived, "seconds": dict(seconds)}


def run(args: Any) -> int:
    """``cfcheck calibrate --domain SPEC [--kind vce]`` (the kind's
    :attr:`~cfcheck.kinds.declaration.KindDeclaration.domain_calibration`): the controls on the
    domain, its bars printed and written."""
    from cfcheck.calibration.bars import render_domain_bars

    outcome = calibrate_domain(args.domain, args.profile, args.out, args.methods, args.seeds)
    print(render_domain_bars(outcome["derived"]))
    print(f"wrote {outcome['bars']} and {outcome['values']}", file=sys.stderr)
    return 0
