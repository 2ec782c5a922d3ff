"""A control's conformance runs: each is one ``pytest --method=<the control's adapter>`` process
(one CPU thread, so runs are comparable), its scorecard kept per seed.

A bundled control is named by the name its reports are filed under (``truth``, ``scm_identity``);
:func:`bundled_adapter` finds its adapter module (``cfcheck.fixtures.<kind>.<file>``).

``cfcheck calibrate`` (:mod:`cfcheck.cli.calibrate_run`) runs the bundled controls on the bundled
domains with :func:`run_control`; a kind's domain calibration (``cfcheck calibrate --domain SPEC``)
runs them on one domain with :func:`run_domain_control`.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

__all__ = [
    "domain_to_calibrate",
    "run_domain_controls",
    "scored_count",
    "adapters_in",
    "bundled_adapter",
    "bundled_adapters",
    "output_tail",
    "run_control",
    "run_domain_control",
    "seed_folder",
]


@functools.cache
def bundled_adapters() -> Mapping[str, str]:
    """Report name → module of every bundled adapter (``cfcheck.fixtures.<kind>.<file>``), as
    :func:`adapters_in` reads them from the ``cfcheck.fixtures`` package, importing none."""
    package = importlib.util.find_spec("cfcheck.fixtures")
    found: dict[str, str] = {}
    for folder in (package.submodule_search_locations or []) if package is not None else []:
        found.update(adapters_in(Path(folder), "cfcheck.fixtures"))
    return MappingProxyType(found)


def bundled_adapter(name: str) -> str:
    """The module of the bundled adapter whose reports are filed under ``name`` (``"scm_truth"`` →
    ``"cfcheck.fixtures.scm.truth"``).

    Raises:
        KeyError: for a name no bundled adapter files its reports under, listing those that do.
    """
    adapters = bundled_adapters()
    if name not in adapters:
        raise KeyError(f"no bundled adapter files its reports under {name!r}; the bundled ones: {', '.join(adapters)}")
    return adapters[name]


def adapters_in(folder: Path, package: str) -> dict[str, str]:
    """Report name → module of the adapters in ``folder``'s subpackages (``<package>.<sub>.<file>``):
    the adapter's module-level ``cfcheck_name`` where it assigns one, else its file's name, as
    :func:`cfcheck.adapter.load_method` names its reports. Read from the files, importing none.

    Raises:
        ValueError: where two adapters would file their reports under one name.
    """
    found: dict[str, str] = {}
    for path in sorted(folder.glob("*/*.py")):
        if path.stem == "__init__" or not (path.parent / "__init__.py").is_file():
            continue
        module = f"{package}.{path.parent.name}.{path.stem}"
        name = _declared_name(path) or path.stem
        if name in found:
            raise ValueError(f"{found[name]} and {module} both file their reports under {name!r}")
        found[name] = module
    return found


def _declared_name(path: Path) -> str | None:
    """The string a module assigns to ``cfcheck_name`` at its top level, or None."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        if any(isinstance(target, ast.Name) and target.id == "cfcheck_name" for target in targets):
            return value.value if isinstance(value, ast.Constant) and isinstance(value.value, str) else None
    return None


def seed_folder(out: Path, seed: int) -> Path:
    """Where the runs of ``seed`` keep their scorecards: ``out`` for seed 0, ``out/seed<N>`` otherwise."""
    return out if seed == 0 else out / f"seed{seed}"


def _one_thread() -> dict[str, str]:
    return {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def run_control(name: str, profile: str, out: Path, seed: int = 0) -> tuple[dict[str, Any], float]:
    """One conformance run of the bundled control ``name`` (:func:`bundled_adapter`) at
    ``--cfcheck-seed=seed``; its scorecard (under :func:`seed_folder`) and wall time."""
    started = time.monotonic()
    folder = seed_folder(out, seed)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            f"--method={bundled_adapter(name)}",
            f"--cfcheck-profile={profile}",
            f"--cfcheck-seed={seed}",
            f"--cfcheck-report-dir={folder}",
            "-q",
            "-p",
            "no:cacheprovider",
            "--no-header",
            "-o",
            "addopts=",
            "-p",
            "no:xdist",
        ],
        check=False,
        capture_output=True,
        env=_one_thread(),
    )
    elapsed = time.monotonic() - started
    path = folder / f"{name}-{profile}" / "scorecard.json"
    return json.loads(path.read_text()), elapsed


def run_domain_control(
    control: str,
    spec: str,
    profile: str,
    out: Path,
    seed: int = 0,
    *,
    method: str | None = None,
    env: Mapping[str, str] | None = None,
) -> tuple[dict[str, Any] | None, float, str]:
    """One conformance run of a control on the domain ``spec`` at ``--cfcheck-seed=seed``.

    Args:
        control: the control's name; its reports go to ``<seed folder>/<control>/`` (:func:`seed_folder`).
        spec: the domain spec (``--cfcheck-domain``).
        profile: the profile.
        out: the folder of the calibration's runs.
        seed: the run's seed.
        method: the method spec to run (``--method``; default the bundled control's adapter,
            :func:`bundled_adapter`).
        env: variables added to the run's environment (e.g. a control's budget).

    Returns:
        (scorecard, or None where the run wrote none; seconds; the output's last lines, cut at a
        line boundary: :func:`output_tail`).
    """
    started = time.monotonic()
    folder = seed_folder(out, seed) / _slug(control)
    for stale in folder.glob("*/scorecard.json"):  # a run that writes none must not find an old one
        stale.unlink()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            f"--method={method or bundled_adapter(control)}",
            f"--cfcheck-domain={spec}",
            f"--cfcheck-profile={profile}",
            f"--cfcheck-seed={seed}",
            f"--cfcheck-report-dir={folder}",
            "-q",
            "-p",
            "no:cacheprovider",
            "--no-header",
            "-p",
            "no:xdist",
            "-p",
            "no:randomly",
        ],
        check=False,
        capture_output=True,
        text=True,
        env={**_one_thread(), **dict(env or {})},
    )
    found = sorted(folder.glob("*/scorecard.json"))
    scorecard = json.loads(found[0].read_text()) if found else None
    return scorecard, time.monotonic() - started, output_tail(done.stdout + done.stderr)


def output_tail(text: str, limit: int = 2000) -> str:
    r"""The last lines of ``text`` that fit in ``limit`` characters, whole lines only (a single last
    line longer than ``limit`` is kept whole).

    Example:
        >>> output_tail("first line\nsecond line\nthird", limit=20)
        'second line\nthird'
    """
    lines = text.rstrip("\n").split("\n")
    kept: list[str] = []
    size = 0
    for line in reversed(lines):
        if kept and size + len(line) + 1 > limit:
            break
        kept.append(line)
        size += len(line) + 1
    return "\n".join(reversed(kept))


def _slug(name: str) -> str:
    """A folder name for a control's name (a ``--positive`` spec may hold ``/``, ``:`` or ``.``)."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-.") or "control"


def scored_count(scorecard: Mapping[str, Any] | None, domain: str) -> int:
    """How many finite scores of ``domain`` a control's scorecard holds (0 for no scorecard)."""
    if scorecard is None:
        return 0
    return sum(
        1
        for s in scorecard.get("scores", [])
        if s.get("domain") == domain and isinstance(s.get("value"), (int, float)) and s["value"] == s["value"]
    )


def domain_to_calibrate(spec: str, seeds: Sequence[int], jobs: int) -> Any:
    """The user's domain ``spec`` resolved for a kind's domain calibration, after checking the run's
    ``seeds`` and ``jobs``.

    Args:
        spec: the domain spec (a registered name, ``pkg.module:factory`` or ``path.py``).
        seeds: the seeds every control runs at (non-negative, distinct).
        jobs: how many control runs go at once (a positive int).

    Raises:
        ValueError: for bad ``seeds`` or ``jobs``, a domain judged by the metric cards' bars (a bundled
            one) or one without a calibration folder to keep its bars in.
    """
    from cfcheck.domains import get_domain

    if not seeds or any(isinstance(seed, bool) or not isinstance(seed, int) or seed < 0 for seed in seeds):
        raise ValueError(f"`seeds` must be one or more non-negative integers, got {list(seeds)!r}")
    if len(set(seeds)) != len(seeds):
        raise ValueError(f"`seeds` must be distinct, got {list(seeds)!r}")
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"`jobs` must be a positive int, got {jobs!r}")
    domain = get_domain(spec)
    if domain.card_calibrated:
        raise ValueError(
            f"domain {domain.name!r} is judged by the metric cards' bars, calibrated on its bundled "
            "controls: recalibrate those with `cfcheck calibrate` (without --domain)"
        )
    if domain.calibration_dir is None:
        raise ValueError(f"domain {domain.name!r} has no calibration_dir to keep its bars in")
    return domain


def run_domain_controls(
    controls: Sequence[tuple[str, str, Mapping[str, str] | None]],
    spec: str,
    domain: str,
    profile: str,
    out: Path,
    seeds: Sequence[int],
    jobs: int = 1,
) -> tuple[list[dict[str, Any]], dict[str, float]]:
    """Every control at every seed, ``jobs`` runs at a time (each run one process on one thread), for a
    kind's domain calibration.

    Args:
        controls: (name, adapter module, extra environment or None) of each control.
        spec, domain, profile, out: as :func:`run_domain_control` takes them; ``domain`` is the name
            its scores carry.
        seeds: the ``--cfcheck-seed`` values.
        jobs: runs at a time.

    Returns:
        The scorecards per seed (control name -> scorecard) and each control's seconds.

    Raises:
        RuntimeError: with the run's output tail, where a run writes no score of the domain.
    """
    from collections import defaultdict
    from concurrent.futures import ThreadPoolExecutor

    def one(seed: int, name: str, method: str, env: Mapping[str, str] | None) -> tuple[dict[str, Any], float]:
        scorecard, spent, tail = run_domain_control(name, spec, profile, out, seed, method=method, env=env)
        if scorecard is None or not scored_count(scorecard, domain):
            what = "no scorecard" if scorecard is None else "no score of the domain"
            raise RuntimeError(
                f"the {name} control ({method}) wrote {what} on domain {domain!r} at seed "
                f"{seed}, so the domain cannot be calibrated; its run ended:\n{tail}"
            )
        print(f"seed {seed} {name}: {spent:.0f} s", file=sys.stderr)
        return scorecard, spent

    pairs = [(seed, control) for seed in seeds for control in controls]
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(one, seed, *control) for seed, control in pairs]
        try:
            results = [future.result() for future in futures]
        except BaseException:
            for future in futures:
                future.cancel()
            raise
    runs: list[dict[str, Any]] = [{} for _ in seeds]
    seconds: dict[str, float] = defaultdict(float)
    for (seed, (name, _, _)), (scorecard, spent) in zip(pairs, results):
        runs[list(seeds).index(seed)][name] = scorecard
        seconds[name] += spent
    return runs, dict(seconds)
