"""Bars for the attribution kind, earned on controls: ``cfcheck calibrate --kind attribution --domain SPEC``.

The verdict is "better than cfcheck's random attribution": a removal gap (``road_gap:morf``, …,
the per-input difference of accuracy areas, paired over the same inputs) at least as large as a
bar. The bar is earned, per domain, on controls whose answer is known by construction:

- **negative**: an independent random attribution (another seed than the suites' baseline); its
  expected gap is 0, so an attribution no better than random fails;
- **positive**: the domain's reference attributions (the true feature where the domain has one,
  else the gradient, input×gradient, SmoothGrad and integrated gradients) and a **ladder** of
  the gradient (or true feature) plus noise of 0.5, 1, 2, 4 and 8 times its norm: each keeps part
  of the signal, so each is better than random, by less as the noise grows.

A bar exists only where, on every seed, the ladder's gaps fall strictly as the noise ratio grows
and every positive control's gap exceeds every negative one's; it sits halfway between the worst
positive and the best negative value over all seeds. Elsewhere the score is reported without a
verdict and the values file says why. Only ROAD is calibrated: it needs no retraining, so three
seeds of every control take minutes. ROAR and GOAR retrain a model per level and stay reported.

Bars go to ``<domain.calibration_dir>/bars-<profile>.json`` (the attribution entries; a VCE
calibration's are kept) and the controls' values to ``calibration-attribution-<profile>.json``.
On a domain with a random classifier and its trained counterpart, that file also holds each
control's model-randomisation similarity per seed (``attribution_randomisation_similarity`` and
its ``_support`` variant: the mean over the profile's random draws and scored inputs, as the
suite measures it), reported as evidence for those cards; they get no bar.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import torch

from cfcheck.core.thresholds import Bar

__all__ = ["CALIBRATED", "NOISE_LADDER", "RANDOMISATION_SCORES", "attribution_controls", "calibrate_attribution",
           "derive_gap_bars", "measure_randomisation"]

#: the scores this calibration gives bars to: (strategy, order) of a gap
CALIBRATED = (("road", "morf"), ("road", "lerf"))
#: noise ratios of the positive ladder, ‖noise‖ / ‖signal‖
NOISE_LADDER = (0.5, 1.0, 2.0, 4.0, 8.0)
#: the randomisation similarity scores measured on the controls (support of each), without a bar
RANDOMISATION_SCORES = (("attribution_randomisation_similarity", "all"),
                        ("attribution_randomisation_similarity_support", "nonzero"))
#: the negative control's seed (the suites' own baseline uses REMOVAL_SEED + the task's seed)
_OTHER_RANDOM_SEED = 991


class _OtherRandom:
    """A random attribution drawn independently of cfcheck's baseline (the negative control)."""

    def __init__(self) -> None:
        self.generator = torch.Generator().manual_seed(_OTHER_RANDOM_SEED)

    def attribute(self, x: torch.Tensor, model: Any, target: torch.Tensor) -> torch.Tensor:
        return torch.randn(x.shape, generator=self.generator).to(x)


def attribution_controls(domain: Any) -> dict[str, tuple[str, Any]]:
    """Control name → (role, attribution method); role is "+", "-" or "ladder:<ratio>"."""
    from cfcheck.kinds.attribution.capabilities import ClassFeature
    from cfcheck.methods import attributions as A

    if isinstance(domain, ClassFeature):
        signal, reference = A.TrueFeature(domain), {"true feature": A.TrueFeature(domain)}
    else:
        signal = A.Gradient()
        reference = {"gradient": signal, "input×gradient": A.InputTimesGradient(), "smoothgrad": A.SmoothGrad(),
                     "integrated gradients": A.IntegratedGradients()}
    controls = {name: ("+", method) for name, method in reference.items()}
    controls.update({f"{'true feature' if isinstance(domain, ClassFeature) else 'gradient'} + noise {r:g}":
                     (f"ladder:{r:g}", A.NoisyAttribution(signal, r)) for r in NOISE_LADDER})
    controls["random (another seed)"] = ("-", _OtherRandom())
    return controls


def derive_gap_bars(values: Mapping[str, Mapping[str, Mapping[int, float]]], roles: Mapping[str, str],
                    domain: str, profile: str) -> dict[str, tuple[Bar | None, str]]:
    """Bar key (``road_gap_morf``) → (bar or None, rationale), from score → control → seed → gap.

    Args:
        values: mean gap of each control on each seed, per score key.
        roles: control → "+", "-" or "ladder:<ratio>" (a ladder rung is also a positive).
    """
    bars: dict[str, tuple[Bar | None, str]] = {}
    ladder = sorted((float(role.split(":", 1)[1]), control) for control, role in roles.items()
                    if role.startswith("ladder:"))
    for key, by_control in sorted(values.items()):
        seeds = sorted({seed for per_seed in by_control.values() for seed in per_seed})
        for seed in seeds:
            rungs = [by_control[control][seed] for _, control in ladder if seed in by_control.get(control, {})]
            if any(a <= b for a, b in zip(rungs, rungs[1:])):
                quoted = ", ".join(f"{r:g}: {v:+.3f}" for (r, _), v in zip(ladder, rungs))
                bars[key] = (None, f"the noisy ladder does not fall as the noise grows on seed {seed} ({quoted}) "
                                   f"on domain {domain!r}: the score does not track how much signal is left")
                break
        if key in bars:
            continue
        positives = [(c, v) for c, r in roles.items() if r != "-" for v in by_control.get(c, {}).values()]
        negatives = [(c, v) for c, r in roles.items() if r == "-" for v in by_control.get(c, {}).values()]
        if not positives or not negatives:
            bars[key] = (None, "no positive or no negative control was measured")
            continue
        pos_control, pos = min(positives, key=lambda cv: cv[1])
        neg_control, neg = max(negatives, key=lambda cv: cv[1])
        quoted = (f"{pos_control} (better than random by construction) reaches {pos:+.4g} at worst, {neg_control} "
                  f"{neg:+.4g} at best, over seeds {', '.join(map(str, seeds))} on domain {domain!r} ({profile} "
                  "profile)")
        bars[key] = ((Bar((pos + neg) / 2, "min"), f"halfway: {quoted}") if pos > neg
                     else (None, f"the controls overlap: {quoted}"))
    return bars


def measure_gaps(domain: Any, section: Any, seeds: Sequence[int], log: Callable[[str], None] = print,
                 ) -> tuple[dict[str, dict[str, dict[int, float]]], dict[str, str]]:
    """Mean gap of every control, per calibrated score and seed: (score → control → seed → gap, roles)."""
    from cfcheck.kinds.attribution.removal import removal_curve, removal_gap
    from cfcheck.kinds.attribution.reproduction import LocalRun, removal_data
    from cfcheck.methods.attributions import RandomAttribution
    from cfcheck.metrics.removal_curves import curve_area

    controls = attribution_controls(domain)
    model = domain.model_roles["explained"][0]
    values: dict[str, dict[str, dict[int, float]]] = {}
    for seed in seeds:
        run = LocalRun(section, seed=seed, domains=[domain])
        baseline = removal_data(run, domain, model, RandomAttribution(), seed=seed)
        for name, (_, method) in controls.items():
            data = removal_data(run, domain, model, method, seed=seed)
            for strategy, order in CALIBRATED:
                curve, random_curve = (removal_curve(run, d, strategy, order) for d in (data, baseline))
                area = curve_area(curve.outcomes, curve.levels)
                random_area = curve_area(random_curve.outcomes, random_curve.levels)
                gap = removal_gap(strategy, order, area, random_area)
                values.setdefault(f"{strategy}_gap_{order}", {}).setdefault(name, {})[seed] = float(gap.mean())
            log(f"seed {seed} {name}: " + ", ".join(f"{k} {v[name][seed]:+.3f}" for k, v in values.items()))
    return values, {name: role for name, (role, _) in controls.items()}


def measure_randomisation(domain: Any, section: Any, seeds: Sequence[int], log: Callable[[str], None] = print,
                          ) -> dict[str, dict[str, dict[int, float]]]:
    """Each control's model-randomisation similarity per seed, plain and on the support:
    score key → control → seed → mean over the section's random draws and scored inputs, from
    the inputs, targets and random networks the suite's random task uses. Empty on a domain
    without a random classifier or a trained counterpart (the suite skips there too).

    Args:
        domain: the domain object.
        section: the attribution section (``n_inputs``, ``randomisation_draws``).
        seeds: the task seeds.
        log: receives one line per seed and control.
    """
    from cfcheck.kinds.attribution.randomisation import draw_models, similarity_table
    from cfcheck.kinds.attribution.reproduction import LocalRun, attribute_batched
    from cfcheck.kinds.attribution.spec import SPEC, AttributionTask

    random, counterparts = domain.model_roles.get("random"), domain.model_roles.get("randomisation_counterpart")
    if not random or not counterparts:
        return {}
    values: dict[str, dict[str, dict[int, float]]] = {}
    for seed in seeds:
        run = LocalRun(section, seed=seed, domains=[domain])
        zoo = run.zoo(domain)
        inputs = SPEC.inputs(run, AttributionTask(domain=domain, model=counterparts[0], seed=seed))
        x, target = inputs.arguments["x"], inputs.arguments["target"]
        draws = draw_models(random[0], counterparts[0], seed, section.randomisation_draws)
        for name, (_, method) in attribution_controls(domain).items():
            trained = attribute_batched(method, x, zoo[counterparts[0]], target, seed)
            randomised = [attribute_batched(method, x, zoo[model], target, seed) for model in draws]
            for key, support in RANDOMISATION_SCORES:
                table = similarity_table(trained, randomised, support=support)
                values.setdefault(key, {}).setdefault(name, {})[seed] = float(table.mean())
            log(f"seed {seed} {name}: randomisation similarity " + ", ".join(
                f"{support} {values[key][name][seed]:.3f}" for key, support in RANDOMISATION_SCORES))
    return values


def calibrate_attribution(spec: str, profile: str = "quick", seeds: Sequence[int] = (0, 1, 2),
                          log: Callable[[str], None] = print) -> dict[str, Any]:
    """Measure the controls on ``spec``, derive its ROAD bars and write them into the domain's folder.

    Returns:
        ``{"bars": path or None, "values": path, "derived": {key: (bar, rationale)}}``.
    """
    from cfcheck.domain_bars import bars_path, write_domain_bars
    from cfcheck.domains import get_domain
    from cfcheck.core.io import atomic_write_text
    from cfcheck.kinds.attribution.section import SECTION_DEFAULTS

    domain = get_domain(spec)
    if domain.calibration_dir is None:
        raise ValueError(f"domain {domain.name!r} has no calibration_dir to keep its bars in")
    if profile not in SECTION_DEFAULTS:
        raise ValueError(f"unknown profile {profile!r}; expected one of {sorted(SECTION_DEFAULTS)}")
    section = dataclasses.replace(SECTION_DEFAULTS[profile])
    values, roles = measure_gaps(domain, section, seeds, log)
    derived = derive_gap_bars(values, roles, domain.name, profile)  # the ROAD gaps only: the similarity has no bar
    values.update(measure_randomisation(domain, section, seeds, log))
    folder = Path(domain.calibration_dir)
    folder.mkdir(parents=True, exist_ok=True)
    earned = {key: (bar, why) for key, (bar, why) in derived.items() if bar is not None}
    path = bars_path(folder, profile)
    written = None
    if earned or path.is_file():
        written = write_domain_bars(path, earned, domain=domain.name, profile=profile, method_kind="attribution",
                                    controls=dict(roles))
    values_path = folder / f"calibration-attribution-{profile}.json"
    atomic_write_text(values_path, json.dumps(
        {"profile": profile, "domain": domain.name, "seeds": list(seeds), "roles": roles, "values": values,
         "without_bar": {k: why for k, (bar, why) in derived.items() if bar is None}}, indent=1, sort_keys=True) + "\n")
    return {"bars": written, "values": values_path, "derived": derived}


def main(spec: str, profile: str, seeds: Sequence[int]) -> int:
    """The command behind ``cfcheck calibrate --kind attribution``."""
    from cfcheck.domain_bars import render_domain_bars

    torch.set_num_threads(1)
    outcome = calibrate_attribution(spec, profile, seeds, log=lambda line: print(line, file=sys.stderr))
    print(render_domain_bars(outcome["derived"]))
    print(f"wrote {outcome['bars'] or '(no bars)'} and {outcome['values']}", file=sys.stderr)
    return 0
