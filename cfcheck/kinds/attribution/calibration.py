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

The ladder also measures the score's resolution: its rungs count as positives while they clear
every negative value on every seed, and the noisier rungs past that point count as neither (an
attribution whose noise is 8 times its signal keeps an eighth of it, which a removal benchmark
with a few hundred retraining images may not resolve). A bar exists only where, on every seed, the
ladder's gaps fall strictly over the resolved rungs and the first unresolved one, at least one rung
is resolved, and every positive control's gap exceeds every negative one's; it sits halfway between
the worst positive and the best negative value over all seeds. Elsewhere the score is reported without a
verdict and the values file says why. ROAD needs no retraining (three seeds of every control take
minutes); ROAR and GOAR retrain a model per level, so their seeds are also retraining draws and a
calibration of them can be split over processes (``--controls``, ``--partial``, ``--merge``).

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
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, cast

import torch

from cfcheck.kinds.attribution.controls import NOISE_LADDER, OTHER_RANDOM_SEEDS, attribution_controls
from cfcheck.kinds.attribution.declaration import VALUES_FILE
from cfcheck.kinds.attribution.gap_bars import CALIBRATED, derive_gap_bars, gap_key
from cfcheck.kinds.attribution.gap_measurements import check_draws, measure_gaps, merge_measurements

__all__ = [
    "CALIBRATED",
    "NOISE_LADDER",
    "OTHER_RANDOM_SEEDS",
    "RANDOMISATION_SCORES",
    "attribution_controls",
    "calibrate_attribution",
    "derive_gap_bars",
    "gap_key",
    "measure_gaps",
    "measure_randomisation",
    "merge_measurements",
]

#: the randomisation similarity scores measured on the controls (support of each), without a bar
RANDOMISATION_SCORES = (
    ("attribution_randomisation_similarity", "all"),
    ("attribution_randomisation_similarity_support", "nonzero"),
)


def measure_randomisation(
    domain: Any,
    section: Any,
    seeds: Sequence[int],
    log: Callable[[str], None] = print,
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
    from cfcheck.kinds.attribution.local_run import LocalRun, attribute_batched
    from cfcheck.kinds.attribution.randomisation import draw_models, similarity_table
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
            log(
                f"seed {seed} {name}: randomisation similarity "
                + ", ".join(f"{support} {values[key][name][seed]:.3f}" for key, support in RANDOMISATION_SCORES)
            )
    return values


def _as_partial(part: dict[str, Any]) -> dict[str, Any]:
    """A partial file as it is, or a values file (``calibration-attribution-<profile>.json``) as one:
    its randomisation similarities, kept under ``values`` there, go back under ``randomisation``. Score keys
    are read in the one spelling (``road_gap:morf``; a file written before it has ``road_gap_morf``)."""
    from cfcheck.core.keys import read_keyed
    from cfcheck.kinds.registry import loaded_cards

    cards = loaded_cards()
    for section in ("values", "unavailable", "without_bar"):
        if isinstance(part.get(section), dict):
            part[section] = read_keyed(part[section], cards)
    similarity = {key: part["values"].pop(key) for key, _ in RANDOMISATION_SCORES if key in part.get("values", {})}
    if similarity:
        part["randomisation"] = {**part.get("randomisation", {}), **similarity}
    return part


def calibrate_attribution(
    spec: str,
    profile: str = "quick",
    seeds: Sequence[int] = (0, 1, 2),
    log: Callable[[str], None] = print,
    strategies: Sequence[tuple[str, str]] | None = None,
    controls: Sequence[str] | None = None,
    partial: Path | None = None,
    merge: Sequence[Path] = (),
    randomisation: bool = True,
) -> dict[str, Any]:
    """Measure the controls on ``spec``, derive its removal bars and write them into the domain's folder.

    Args:
        strategies, controls: measure only these (strategy, order) pairs and controls (default: all).
        partial: write the measurements (after each control) to this file and derive no bars: one
            process of a calibration split over seeds or controls.
        merge: instead of measuring, join these partial files (or a domain's values file, to re-derive
            its bars or add measurements to it) and derive the bars from them.
        randomisation: measure the model-randomisation similarity too (a partial run: only if asked).

    Returns:
        ``{"bars": path or None, "values": path, "derived": {key: (bar, rationale)}}`` (a partial run:
        ``{"partial": path}``).
    """
    from cfcheck.calibration.bars import bars_path, write_domain_bars
    from cfcheck.core.io import atomic_write_text
    from cfcheck.domains import get_domain
    from cfcheck.kinds.attribution.section import SECTION_DEFAULTS
    from cfcheck.kinds.registry import loaded_cards

    domain = get_domain(spec)
    if domain.calibration_dir is None:
        raise ValueError(f"domain {domain.name!r} has no calibration_dir to keep its bars in")
    if profile not in SECTION_DEFAULTS:
        raise ValueError(f"unknown profile {profile!r}; expected one of {sorted(SECTION_DEFAULTS)}")
    section = dataclasses.replace(SECTION_DEFAULTS[profile])
    if partial is not None:

        def keep(measured: dict[str, Any]) -> None:
            atomic_write_text(
                Path(partial),
                json.dumps(
                    {
                        "domain": domain.name,
                        "profile": profile,
                        "retraining_draws": section.retraining_draws,
                        **measured,
                    },
                    indent=1,
                    sort_keys=True,
                )
                + "\n",
            )

        measured = measure_gaps(domain, section, seeds, log, strategies or CALIBRATED, controls, keep)
        if randomisation:
            measured["randomisation"] = measure_randomisation(domain, section, seeds, log)
        keep(measured)
        return {"partial": Path(partial)}
    if merge:
        parts = [_as_partial(json.loads(Path(path).read_text(encoding="utf-8"))) for path in merge]
        wrong = [
            str(path)
            for path, part in zip(merge, parts)
            if (part.get("domain"), part.get("profile")) != (domain.name, profile)
        ]
        if wrong:
            raise ValueError(f"partial calibration files {wrong} are not of domain {domain.name!r} at {profile!r}")
        for path, part in zip(merge, parts):
            check_draws(path, part, section.retraining_draws)
        measured = merge_measurements(parts)
        similarity = merge_measurements(
            [{"values": part.get("randomisation", {}), "areas": {}, "roles": {}} for part in parts]
        )["values"]
        seeds = sorted(
            {int(s) for by_control in measured["values"].values() for per in by_control.values() for s in per}
        )
    else:
        measured = measure_gaps(domain, section, seeds, log, strategies or CALIBRATED, controls)
        similarity = measure_randomisation(domain, section, seeds, log) if randomisation else {}
    values, roles = measured["values"], measured["roles"]
    derived = derive_gap_bars(
        values, roles, domain.name, profile, seeds
    )  # the removal gaps only: the similarity has no bar
    derived.update({key: (None, why) for key, why in measured["unavailable"].items()})
    values.update(similarity)
    folder = Path(domain.calibration_dir)
    folder.mkdir(parents=True, exist_ok=True)
    earned = {key: (bar, why) for key, (bar, why) in derived.items() if bar is not None}
    path = bars_path(folder, profile)
    written = None
    if earned or path.is_file():
        written = write_domain_bars(
            path,
            earned,
            domain=domain.name,
            profile=profile,
            method_kind="attribution",
            cards=loaded_cards(),
            controls=dict(roles),
        )
    values_path = folder / VALUES_FILE.format(profile=profile)
    atomic_write_text(
        values_path,
        json.dumps(
            {
                "profile": profile,
                "domain": domain.name,
                "seeds": list(seeds),
                "retraining_draws": section.retraining_draws,
                "roles": roles,
                "values": values,
                "areas": measured["areas"],
                "seconds": measured["seconds"],
                "without_bar": {k: why for k, (bar, why) in derived.items() if bar is None},
            },
            indent=1,
            sort_keys=True,
        )
        + "\n",
    )
    return {"bars": written, "values": values_path, "derived": derived}


def main(
    spec: str,
    profile: str,
    seeds: Sequence[int],
    strategies: Sequence[str] | None = None,
    controls: Sequence[str] | None = None,
    partial: Path | None = None,
    merge: Sequence[Path] = (),
    randomisation: bool = False,
) -> int:
    """The command behind ``cfcheck calibrate --kind attribution`` (strategies as ``roar:morf``)."""
    from cfcheck.calibration.bars import render_domain_bars

    torch.set_num_threads(1)
    pairs = None
    if strategies:
        pairs = [tuple(item.split(":", 1)) for item in strategies]
        bad = [item for item, pair in zip(strategies, pairs) if pair not in CALIBRATED]
        if bad:
            raise ValueError(
                f"unknown removal strategies {bad}; expected some of {[f'{s}:{o}' for s, o in CALIBRATED]}"
            )
    outcome = calibrate_attribution(
        spec,
        profile,
        seeds,
        lambda line: print(line, file=sys.stderr, flush=True),
        cast("list[tuple[str, str]] | None", pairs),  # pairs: checked in CALIBRATED
        controls,
        partial,
        merge,
        randomisation=partial is None or randomisation,
    )
    if "partial" in outcome:
        print(f"wrote {outcome['partial']} (merge it with --merge)", file=sys.stderr)
        return 0
    print(render_domain_bars(outcome["derived"]))
    print(f"wrote {outcome['bars'] or '(no bars)'} and {outcome['values']}", file=sys.stderr)
    return 0


def run(args: Any) -> int:
    """``cfcheck calibrate --domain SPEC --kind attribution`` (the kind's
    :attr:`~cfcheck.kinds.declaration.KindDeclaration.domain_calibration`): :func:`main` with the
    command's arguments."""
    return main(
        args.domain,
        args.profile,
        args.seeds,
        args.strategies,
        args.controls,
        args.partial,
        args.merge,
        args.with_randomisation,
    )
