"""The attribution calibration's measurements: every control's removal gaps and areas per seed
(:func:`measure_gaps`, on the draws × inputs the suites score), and the joining of measurements
split over processes (:func:`merge_measurements`, :func:`check_draws`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import torch

from cfcheck.kinds.attribution.controls import attribution_controls
from cfcheck.kinds.attribution.gap_bars import CALIBRATED, gap_key

__all__ = ["BASELINE", "check_draws", "measure_gaps", "merge_measurements"]

#: the suites' own baseline, whose areas the values file keeps beside the controls'
BASELINE = "random (cfcheck's baseline)"


def measure_gaps(
    domain: Any,
    section: Any,
    seeds: Sequence[int],
    log: Callable[[str], None] = print,
    strategies: Sequence[tuple[str, str]] = CALIBRATED,
    controls: Sequence[str] | None = None,
    checkpoint: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Every control's mean gap and mean area per score and seed.

    Args:
        strategies: the (strategy, order) pairs to measure (default: all of :data:`CALIBRATED`).
        controls: the controls to measure, in this order (default: all of :func:`attribution_controls`).
        checkpoint: receives the measurements so far after each control (a long run keeps what it measured).

    Returns:
        ``{"values": gap key → control → seed → mean gap, "areas": "strategy:order" → control → seed →
        mean area (the suites' random baseline too), "roles": control → role, "seconds": control → seed → s}``.
    """
    import time

    from cfcheck.kinds.attribution.baseline import RandomBaseline as RandomAttribution
    from cfcheck.kinds.attribution.local_run import LocalRun, removal_data
    from cfcheck.kinds.attribution.removal import draw_areas, missing_for, removal_curves, removal_gap

    every = attribution_controls(domain)
    unknown = sorted(set(controls or ()) - set(every))
    if unknown:
        raise ValueError(f"unknown attribution controls {unknown}; expected some of {sorted(every)}")
    chosen = {name: every[name] for name in (controls or every)}
    model = domain.model_roles["explained"][0]
    out: dict[str, Any] = {
        "values": {},
        "areas": {},
        "roles": {n: r for n, (r, _) in chosen.items()},
        "seconds": {},
        "unavailable": {},
    }
    for strategy, order in strategies:  # ROAR and GOAR need a retraining recipe (GOAR a denoiser too)
        reason = missing_for(None, domain, strategy)
        if reason is not None:
            out["unavailable"][gap_key(strategy, order)] = reason
    strategies = [(s, o) for s, o in strategies if gap_key(s, o) not in out["unavailable"]]
    for seed in seeds:
        run = LocalRun(section, seed=seed, domains=[domain])
        baseline_data = removal_data(run, domain, model, RandomAttribution(), seed=seed)
        baseline: dict[tuple[str, str], torch.Tensor] = {}
        for strategy, order in strategies:  # draws × inputs, as the suite scores them
            baseline[strategy, order] = draw_areas(removal_curves(run, baseline_data, strategy, order))
            out["areas"].setdefault(f"{strategy}:{order}", {}).setdefault(BASELINE, {})[seed] = float(
                baseline[strategy, order].mean()
            )
        for name, (_, method) in chosen.items():
            started = time.perf_counter()
            data = removal_data(run, domain, model, method, seed=seed)
            for strategy, order in strategies:
                area = draw_areas(removal_curves(run, data, strategy, order))
                gap = removal_gap(strategy, order, area, baseline[strategy, order])
                out["values"].setdefault(gap_key(strategy, order), {}).setdefault(name, {})[seed] = float(gap.mean())
                out["areas"].setdefault(f"{strategy}:{order}", {}).setdefault(name, {})[seed] = float(area.mean())
            out["seconds"].setdefault(name, {})[seed] = round(time.perf_counter() - started, 1)
            log(
                f"seed {seed} {name} ({out['seconds'][name][seed]:.0f} s): "
                + ", ".join(f"{k} {v[name][seed]:+.3f}" for k, v in out["values"].items() if seed in v.get(name, {}))
            )
            if checkpoint is not None:
                checkpoint(out)
    return out


def merge_measurements(parts: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The union of several :func:`measure_gaps` outputs (e.g. seeds measured by separate processes,
    read back from JSON: seeds as strings become ints); ValueError where two parts disagree on a value."""
    merged: dict[str, Any] = {"values": {}, "areas": {}, "roles": {}, "seconds": {}, "unavailable": {}}
    for part in parts:
        merged["roles"].update(part["roles"])
        merged["unavailable"].update(part.get("unavailable", {}))
        for section in ("values", "areas"):
            for key, by_control in part[section].items():
                for control, per_seed in by_control.items():
                    into = merged[section].setdefault(key, {}).setdefault(control, {})
                    for seed, value in per_seed.items():
                        if int(seed) in into and into[int(seed)] != value:
                            raise ValueError(
                                f"two measurements of {section} {key} / {control} / seed {seed} differ: "
                                f"{into[int(seed)]} and {value}"
                            )
                        into[int(seed)] = value
        for control, per_seed in part.get("seconds", {}).items():
            merged["seconds"].setdefault(control, {}).update({int(s): v for s, v in per_seed.items()})
    return merged


def check_draws(path: Path, part: Mapping[str, Any], draws: int) -> None:
    """ValueError where ``part`` (a partial or values file) holds ROAR or GOAR gaps measured with
    other than ``draws`` retraining draws (a file without the field predates draws: one); its ROAD
    gaps retrain nothing and merge whatever the draws."""
    from cfcheck.kinds.attribution.removal import RETRAINED

    measured_with = int(part.get("retraining_draws", 1))
    retrained = sorted(
        key for key in part.get("values", {}) if any(key.startswith(f"{strategy}_gap") for strategy in RETRAINED)
    )
    if measured_with != draws and retrained:
        raise ValueError(
            f"{path} holds {', '.join(retrained)} measured with {measured_with} retraining draw(s), but the profile "
            f"retrains {draws} times per level: a bar must be earned on the draws the suite scores with; "
            "measure them again, or drop those entries (and their areas) and merge the rest"
        )
