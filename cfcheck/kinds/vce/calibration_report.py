"""What a user domain's VCE calibration writes and prints: the bars file (bars, how each control
ran, why the other scores have no bar), the controls' values and verdicts beside it, and the
summary of each control's verdicts under the bars (:mod:`cfcheck.kinds.vce.calibration` runs it)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cfcheck.calibration.placement import barred_or_raise
from cfcheck.kinds.vce.bar_placement import (
    COMPARISON_BASELINE,
    ORACLE_VALIDITY,
    REQUIRED_SHARE,
    Placement,
    expected_sign,
)

__all__ = ["Control", "summary", "with_budget", "write_calibration"]


@dataclass(frozen=True)
class Control:
    """One calibration control as it runs on a domain.

    Attributes:
        name: its name in the bars file and the rationales (a ``--positive`` control's spec).
        method: the method spec its runs use (``--method``).
        expected: [(suite or card key, sign)]: what it is expected to pass ("+"), fail ("-") or not
            pass ("x", a check) (:mod:`cfcheck.kinds.vce.expectations`).
        env: environment variables its runs get (a budget, the mixture's positive control).
        facts: what the bars file records of it (``controls.vce.<name>``).
    """

    name: str
    method: str
    expected: list[tuple[str, str]]
    env: dict[str, str] = field(default_factory=dict)
    facts: dict[str, Any] = field(default_factory=dict)


def with_budget(placements: Mapping[str, Placement], budget: Any) -> dict[str, Placement]:
    """The oracle-validity bars' rationales say how the adversarial control's budget was chosen."""
    found = dict(placements)
    for key, placement in placements.items():
        if placement.bar is not None and placement.metric.split(":")[0] in ORACLE_VALIDITY:
            found[key] = placement.but(rationale=f"{placement.rationale}; {budget.short}")
    return found


def write_calibration(
    domain: Any,
    profile: str,
    planned: Sequence[Control],
    placements: Mapping[str, Placement],
    runs: Sequence[dict[str, Any]],
    seeds: Sequence[int],
    budget: Any,
) -> dict[str, Path]:
    """Write the controls' values, verdicts and budget search (``calibration-<profile>.json``), then
    the bars file (bars with their basis, each control's facts, the reasons of the scores without a
    bar) into the domain's calibration folder.

    Returns:
        ``{"bars": path, "values": path}``.

    Raises:
        RuntimeError: where no score earned a bar (the values file is written, the bars file is not).
    """
    from cfcheck.calibration.bars import bars_path, write_domain_bars
    from cfcheck.calibration.store import calibration_values, merge_kind_values
    from cfcheck.kinds.registry import loaded_cards

    folder = Path(domain.calibration_dir)
    folder.mkdir(parents=True, exist_ok=True)
    unbarred = {key: p.rationale for key, p in placements.items() if p.bar is None}
    table = {control.name: control.expected for control in planned}
    values = {
        key: entry
        for run in runs
        for key, entry in calibration_values(
            run, expected=lambda control, suite, metric: _as_store_sign(expected_sign(control, suite, metric, table))
        ).items()
    }
    values_path = merge_kind_values(  # another kind's values (an SCM calibration of the domain) are kept
        folder / f"calibration-{profile}.json",
        "vce",
        values,
        profile=profile,
        domain=domain.name,
        seeds=list(seeds),
        without_bar=unbarred,
        verdicts={key: p.verdicts for key, p in placements.items() if p.bar is not None},
        adversarial_budget=budget.describe() if budget is not None else None,
    )
    barred = barred_or_raise(placements, unbarred, domain.name, values_path, "score")
    extra: dict[str, dict[str, Any]] = {
        "share": {"required_share": REQUIRED_SHARE},
        "comparison": {"baseline": COMPARISON_BASELINE},
    }
    details = {key: {"basis": p.basis, **extra.get(p.basis, {})} for key, p in placements.items() if p.bar is not None}
    bars = write_domain_bars(
        bars_path(folder, profile),
        barred,
        domain=domain.name,
        profile=profile,
        method_kind="vce",
        cards=loaded_cards(),
        controls={control.name: control.facts for control in planned},
        without_bar=unbarred,
        details=details,
    )
    return {"bars": bars, "values": values_path}


def _as_store_sign(sign: str) -> str:
    """The values file's vocabulary: a check (x, expected not to pass) is written as "-"."""
    return "-" if sign == "x" else sign


def summary(outcome: Mapping[str, Any]) -> str:
    """Each control's verdicts under the bars, and where a control went against its expectation."""
    planned = {c.name: c for c in outcome["controls"]}
    lines = []
    for name, control in planned.items():
        counts: dict[str, int] = defaultdict(int)
        against = []
        for key, placement in sorted(outcome["placements"].items()):
            told = placement.verdicts.get(name, {})
            for verdict_name, n in told.items():
                counts[verdict_name] += n
            sign = expected_sign(name, placement.suite, placement.metric, {name: control.expected}) if told else ""
            wanted = {"+": {"pass"}, "-": {"fail"}, "x": {"fail", "inconclusive"}}.get(sign)
            if wanted and set(told) - wanted:
                against.append(f"{key} ({', '.join(f'{v} {n}' for v, n in sorted(told.items()))})")
        total = ", ".join(f"{v} {n}" for v, n in sorted(counts.items())) or "no barred score"
        lines.append(f"{name}: {total}" + (f"; not as expected on {', '.join(against)}" if against else ""))
    return "\n".join(lines)
