"""Bex et al.'s seven explainers on the glyphs scenarios, beside the paper's Tables 2 and 4.

Runs ``pytest suites/latent --method=cfcheck.fixtures.latent.<file> --cfcheck-profile PROFILE`` for each
explainer (one process at a time, one thread; an existing scorecard under ``--out`` is reused
unless ``--rerun``), then prints one Markdown table: per explainer and scenario, cfcheck's mean
EF, SCE, trivial rate (as percentages of the K counterfactuals) and S#, each beside the paper's.

    python benchmarks/bex_table.py --profile quick --out reports/bex

With ``--calibrate`` it also writes the latent kind's controls' values per task score into the
glyphs domain's calibration file (``calibration-<profile>.json``, the latent entries replaced,
the other kinds' kept; every ``--seeds`` value side by side), which the metric cards quote
(``cfcheck cards synbols_s_sharp``):

    python benchmarks/bex_table.py --calibrate --seeds 0 1 2 --only informed_search latent_identity latent_noise latent_repeater
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from cfcheck.metrics.cards import get_card
from cfcheck.metrics.stats import verdict

REPO = Path(__file__).resolve().parents[1]
EXPLAINERS = {  # fixture -> the paper's name
    "informed_search": "IS (oracle)",
    "dice": "DiCE",
    "dive": "DiVE",
    "growing_spheres": "GS",
    "stylex_attfind": "StylEx",
    "latent_cf": "Latent-CF",
    "xgem": "xGEM",
    "latent_identity": "identity (control)",
    "latent_noise": "noise (control)",
    "latent_repeater": "repeater (control)",
}
SCENARIOS = ("fonts6-corr50", "fonts6-corr95", "fonts10-corr50", "fonts10-corr95")
#: Bex et al. 2022, Table 2 (S#, trivial %) and Table 4 (EF %, SCE %), in SCENARIOS order
PAPER = {
    "IS (oracle)": {
        "s_sharp": (2.40, 2.67, 2.80, 3.63),
        "trivial": (0, 0, 0, 0),
        "ef": (40.55, 76.97, 35.33, 71.19),
        "sce": (67.5, 62.25, 54.50, 51.25),
    },
    "DiCE": {
        "s_sharp": (1.18, 1.17, 1.13, 1.19),
        "trivial": (9.37, 6.78, 8.62, 6.70),
        "ef": (32.90, 31.96, 31.77, 33.25),
        "sce": (55.42, 56.67, 45.00, 39.17),
    },
    "DiVE": {
        "s_sharp": (1.02, 1.00, 1.00, 1.04),
        "trivial": (2.51, 1.68, 2.28, 1.44),
        "ef": (25.02, 36.58, 22.39, 31.8),
        "sce": (67.5, 60.83, 60.00, 54.58),
    },
    "GS": {
        "s_sharp": (1.01, 1.01, 1.01, 1.00),
        "trivial": (4.49, 2.34, 4.91, 1.95),
        "ef": (36.14, 34.94, 37.38, 36.38),
        "sce": (31.67, 31.67, 44.58, 40.42),
    },
    "StylEx": {
        "s_sharp": (1.04, 1.17, 1.15, 1.12),
        "trivial": (2.41, 1.58, 3.37, 1.62),
        "ef": (23.66, 24.84, 24.20, 23.04),
        "sce": (23.07, 25.80, 23.65, 23.77),
    },
    "Latent-CF": {
        "s_sharp": (0.82, 0.93, 0.81, 0.81),
        "trivial": (0, 0, 0, 0),
        "ef": (20.98, 24.18, 22.00, 23.33),
        "sce": (20.96, 24.18, 21.98, 23.24),
    },
    "xGEM": {
        "s_sharp": (1.18, 1.15, 1.15, 1.16),
        "trivial": (12.46, 6.45, 10.17, 6.38),
        "ef": (70.61, 75.98, 66.45, 74.95),
        "sce": (76.67, 78.33, 61.67, 62.92),
    },
}
#: the latent kind's controls and whether each is expected to pass (+) or fail (-) the S# bar: the
#: informed-search oracle finds several non-redundant explanations per input; identity finds none,
#: noise and the repeater at most one by construction. The flip rates have no expectation.
LATENT_CONTROLS = {"informed_search": "+", "latent_identity": "-", "latent_noise": "-", "latent_repeater": "-"}
CALIBRATED_METRICS = ("synbols_s_sharp",)
CALIBRATE_COMMAND = "python benchmarks/bex_table.py --calibrate"
METRICS = {
    "ef": "synbols_ef_rate",
    "sce": "synbols_sce_rate",
    "trivial": "synbols_trivial_rate",
    "s_sharp": "synbols_s_sharp",
}


def run_explainer(fixture: str, profile: str, out: Path, rerun: bool, seed: int = 0) -> tuple[Path, float | None]:
    """The explainer's scorecard at ``--cfcheck-seed=seed`` (run now unless one exists) and the run's
    seconds; seed N > 0 keeps its runs under ``out/seedN``."""
    from cfcheck.calibration.runs import bundled_adapter, seed_folder

    report = seed_folder(out, seed) / fixture
    scorecard = report / f"{fixture}-{profile}" / "scorecard.json"
    if scorecard.exists() and not rerun:
        return scorecard, None
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    command = [
        sys.executable,
        "-m",
        "pytest",
        "suites/latent",
        f"--method={bundled_adapter(fixture)}",
        f"--cfcheck-profile={profile}",
        f"--cfcheck-seed={seed}",
        f"--cfcheck-report-dir={report}",
        "--cfcheck-no-cache",
        "-q",
        "-p",
        "no:randomly",
    ]
    start = time.perf_counter()
    finished = subprocess.run(command, cwd=REPO, env=env, stdout=subprocess.DEVNULL)
    if finished.returncode not in (0, 1):  # 1: some verdict failed, which is a result, not an error
        raise RuntimeError(f"{' '.join(command)} exited with {finished.returncode}")
    return scorecard, time.perf_counter() - start


def scenario_means(scorecard: Path) -> dict[str, dict[str, float]]:
    """Per scenario, the mean of each metric over the scorecard's seeds (weighted by n), and the
    verdict(s) of S# against the bar its card holds now (from the recorded value and interval,
    so a scorecard made before a bar changed is judged as a new run would judge it)."""
    scores = json.loads(scorecard.read_text())["scores"]
    table: dict[str, dict[str, float]] = {}
    for key, metric in METRICS.items():
        for scenario in SCENARIOS:
            rows = [s for s in scores if s["metric"] == metric and s["task"].startswith(f"{scenario}/")]
            total = sum(s["n"] for s in rows)
            table.setdefault(scenario, {})[key] = sum(s["value"] * s["n"] for s in rows) / total
            if key == "s_sharp":  # judged against the card's current bar, from the recorded interval
                bar = get_card(metric).bar
                verdicts = sorted({verdict(s["value"], s["ci_low"], s["ci_high"], bar.bound, bar.kind) for s in rows})
                table[scenario]["verdict"] = "/".join(verdicts)  # type: ignore[assignment]
    return table


def latent_expected(control: str, suite: str, metric: str) -> str:
    """ "+" / "-" where ``control`` is expected to pass / fail ``metric``'s bar, "" otherwise.

    Args:
        control: a fixture of :data:`LATENT_CONTROLS`.
        suite: the score's suite (unused: the expectation is per metric).
        metric: the score's metric key.

    Example:
        >>> latent_expected("latent_noise", "synbols", "synbols_s_sharp"), latent_expected("latent_noise", "synbols", "synbols_ef_rate")
        ('-', '')
    """
    if control not in LATENT_CONTROLS:
        raise ValueError(f"`control` must be one of {sorted(LATENT_CONTROLS)}, got {control!r}")
    return LATENT_CONTROLS[control] if metric in CALIBRATED_METRICS else ""


def write_latent_calibration(
    scorecards: dict[str, Path] | list[dict[str, Path]], profile: str, seeds: tuple[int, ...] = (0,)
) -> list[Path]:
    """Write the latent controls' values from their scorecards into the domain's calibration file.

    Args:
        scorecards: fixture → its scorecard.json, or one such mapping per seed (kept side by side:
            a task id names its seed); each must hold every one of :data:`LATENT_CONTROLS`.
        profile: the profile they ran at.
        seeds: the seeds the scorecards ran at (named in the recorded command).

    Returns:
        The calibration files written (:func:`cfcheck.calibration.store.write_calibration_values`).
    """
    from cfcheck.calibration.store import write_calibration_values

    runs = [scorecards] if isinstance(scorecards, dict) else list(scorecards)
    results = []
    for run in runs:
        missing = sorted(set(LATENT_CONTROLS) - set(run))
        if missing:
            raise ValueError(f"--calibrate needs every latent control's run; missing {', '.join(missing)}")
        results.append({name: json.loads(run[name].read_text()) for name in LATENT_CONTROLS})
    return write_calibration_values(
        results,
        profile,
        kinds=("latent",),
        expected=latent_expected,
        command=f"{CALIBRATE_COMMAND} --seeds {' '.join(map(str, seeds))}",
    )


def markdown(results: dict[str, dict[str, dict[str, float]]]) -> str:
    lines = [
        "| explainer | scenario | EF % (paper) | SCE % (paper) | trivial % (paper) | S# (paper) | S# verdict |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, per_scenario in results.items():
        for i, scenario in enumerate(SCENARIOS):
            ours, paper = per_scenario[scenario], PAPER.get(name)
            cells = [
                f"{100 * ours[m]:.1f}" + (f" ({paper[m][i]:g})" if paper else "") for m in ("ef", "sce", "trivial")
            ]
            s_sharp = f"{ours['s_sharp']:.2f}" + (f" ({paper['s_sharp'][i]:.2f})" if paper else "")
            lines.append(f"| {name} | {scenario} | " + " | ".join(cells) + f" | {s_sharp} | {ours['verdict']} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="quick")
    parser.add_argument("--out", type=Path, default=REPO / "reports" / "bex")
    parser.add_argument("--rerun", action="store_true", help="run every explainer even where a scorecard exists")
    parser.add_argument("--only", nargs="*", choices=sorted(EXPLAINERS), help="a subset of the explainers")
    parser.add_argument(
        "--seeds",
        nargs="+",
        type=int,
        default=[0],
        help="run each explainer at these --cfcheck-seed values (a table per seed; "
        "--calibrate keeps every seed's values)",
    )
    parser.add_argument(
        "--calibrate",
        action="store_true",
        help=f"write the controls' values ({', '.join(LATENT_CONTROLS)}) into the domain's calibration file",
    )
    args = parser.parse_args()
    per_seed = []
    for seed in args.seeds:
        results, scorecards = {}, {}
        for fixture in args.only or EXPLAINERS:
            scorecards[fixture], seconds = run_explainer(fixture, args.profile, args.out, args.rerun, seed)
            if seconds is not None:
                print(f"{fixture} seed {seed}: {seconds:.0f} s", file=sys.stderr)
            results[EXPLAINERS[fixture]] = scenario_means(scorecards[fixture])
        if len(args.seeds) > 1:
            print(f"\nseed {seed}\n")
        print(markdown(results))
        per_seed.append(scorecards)
    if args.calibrate:
        for path in write_latent_calibration(per_seed, args.profile, tuple(args.seeds)):
            print(f"wrote {path} (latent values)", file=sys.stderr)


if __name__ == "__main__":
    main()
