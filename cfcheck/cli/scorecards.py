"""``cfcheck summary``, ``compare``, ``protocols`` and ``merge``: reading, comparing and joining
scorecards, and the protocols their scores belong to."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any


def add_commands(command: Callable[..., argparse.ArgumentParser]) -> dict[str, Callable[[argparse.Namespace], int]]:
    """Add ``summary``, ``compare``, ``protocols`` and ``merge`` through ``command`` (name, help → its
    parser); each name → what runs it."""
    summary = command("summary", help="summarise a scorecard (JSON file or its folder)")
    summary.add_argument("path", type=Path)
    summary.add_argument("--failures", action="store_true", help="only scores that failed or regressed")
    summary.add_argument(
        "--against",
        type=Path,
        default=None,
        metavar="BASELINE",
        help="print what changed against this baseline (a scorecard JSON) as Markdown for a pull request: new "
        "failures, regressions, vanished scores, fixes, scores that moved beyond their tolerance; tolerances and "
        "settings from ./pyproject.toml's [tool.cfcheck]; exits 1 when something got worse",
    )
    summary.add_argument(
        "--max-rows",
        type=int,
        default=None,
        metavar="N",
        help="with --against: rows per table at most (default 10; 0: every row)",
    )

    compare = command(
        "compare", help="compare runs of different methods: rank-based leaderboard per suite and paired tests"
    )
    compare.add_argument("runs", nargs="+", type=Path, metavar="RUN_DIR", help="run folders (at least two)")
    compare.add_argument(
        "--output",
        type=Path,
        default=None,
        metavar="DIR",
        help="write comparison.md and comparison.html here (default: print the Markdown)",
    )
    compare.add_argument("--resamples", type=int, default=2000, help="bootstrap resamples per paired test")
    compare.add_argument("--seed", type=int, default=0, help="seed of the paired bootstraps")
    compare.add_argument(
        "--set-permutations",
        type=int,
        default=200,
        metavar="N",
        help="swaps per permutation test of a set-level score (FID, KID, density, coverage) "
        "where both runs kept per-input features; 0 skips those tests",
    )
    compare.add_argument(
        "--allow",
        action="store_true",
        help="compare runs whose scores belong to different protocols (other bars, metric definitions, task "
        "generation, sizes, reference models or domain data), or to none recorded (older scorecards); every "
        "affected row is marked",
    )

    protocols = command(
        "protocols",
        help="list the protocols (kind, domain, profile) with their readable version and digest",
        description="A protocol's identity is a digest of what decides its scores' numbers and verdicts: the "
        "kind's task generation, the seeds and the profile's sizes, the definitions of the metric cards the "
        "kind declares, their bars with their calibration, the reference models and the domain's data. Settings of ./pyproject.toml's "
        "[tool.cfcheck] apply (a protocol so changed is unregistered).",
    )
    protocols.add_argument(
        "--domain", default=None, metavar="SPEC", help="a user's domain (module:attribute or path.py:attribute)"
    )
    protocols.add_argument("--seed", type=int, default=0, help="the run's base seed (--cfcheck-seed; default 0)")
    protocols.add_argument(
        "--record",
        default=None,
        metavar="WHAT_CHANGED",
        help="maintainers: record a new version of every bundled protocol whose digest moved, in cfcheck's "
        "registry (cfcheck/reporting/protocol_versions.json), with this line; prints what to add to CHANGELOG.md",
    )

    merge = command("merge", help="join the run folders of a sharded run (--cfcheck-shard) into one scorecard")
    merge.add_argument("runs", nargs="+", type=Path, metavar="RUN_DIR", help="the run folder of every shard")
    merge.add_argument("--output", type=Path, required=True, metavar="DIR", help="where the merged scorecard goes")
    return {"summary": _summary, "compare": _compare, "protocols": _protocols, "merge": _merge}


def _summary(args: argparse.Namespace) -> int:
    from cfcheck.reporting.model import Scorecard
    from cfcheck.reporting.scorecard import load_scorecard
    from cfcheck.reporting.tables import HEADER

    if args.max_rows is not None and args.against is None:
        raise ValueError("--max-rows applies to --against BASELINE only")
    scorecard = load_scorecard(args.path)
    if args.against is not None:
        return _summary_against(scorecard, args.against, args.max_rows)
    card = Scorecard.from_json(scorecard)  # the model every format reads (cfcheck.reporting.model)
    rows = card.rows()
    if args.failures:
        rows = [
            row
            for row, score in zip(rows, card.scores)
            if row[-1].startswith(("FAIL", "ERROR", "inconclusive")) or score.failing
        ]
    widths = [max(len(str(c)) for c in column) for column in zip(HEADER, *rows)]
    print(f"{card.method} — {card.status}, profile {card.profile_name}")
    for row in [HEADER, *rows]:
        print("  ".join(str(c).ljust(w) for c, w in zip(row, widths)))
    counts = card.scores.counts
    regressed = sum(1 for score in card.scores if score.regressed)
    known = card.known_failure_count
    print(
        f"{len(card.scores)} scores: {counts['fail']} failed, {counts['error']} could not be computed, "
        f"{counts['inconclusive']} inconclusive, {regressed} regressed"
        + (f"; {known} of the failures known in the run's baseline" if known else "")
    )
    return 1 if card.failing_count else 0


def _summary_against(scorecard: dict[str, Any], baseline_path: Path, max_rows: int | None) -> int:
    """Print ``scorecard`` against the baseline at ``baseline_path`` as Markdown; 1 when something got worse."""
    from cfcheck.baseline import Baseline
    from cfcheck.baseline.compare import compare_scorecard
    from cfcheck.profiles import read_user_settings, resolve_profile
    from cfcheck.reporting.changes import DEFAULT_MAX_ROWS, render_changes

    baseline = Baseline.load(baseline_path)
    name = str((scorecard.get("profile") or {}).get("name") or "standard")
    baseline.check_profile(name)
    baseline.note_bar_changes(_bars_of(scorecard))
    profile = resolve_profile(name, read_user_settings(Path.cwd()))
    changes = compare_scorecard(
        scorecard,
        baseline,
        tolerances=profile.tolerances,
        inconclusive=profile.inconclusive,
        known_failures=str((scorecard.get("baseline") or {}).get("known_failures") or profile.known_failures),
    )
    print(render_changes(changes, DEFAULT_MAX_ROWS if max_rows is None else max_rows), end="")
    return 1 if changes.failed else 0


def _bars_of(scorecard: dict[str, Any]) -> Any:
    """(domain, metric) → the bar the scorecard's records of it were judged by (LookupError: none of its
    records), for :meth:`cfcheck.baseline.Baseline.note_bar_changes`."""
    from cfcheck.baseline.protocol import bar_text

    bars = {(str(s.get("domain")), str(s.get("metric"))): bar_text(s.get("threshold")) for s in scorecard["scores"]}

    def bar(domain: str, metric: str) -> str | None:
        return bars[domain, metric]

    return bar


def _compare(args: argparse.Namespace) -> int:
    from cfcheck.core.io import atomic_write_text
    from cfcheck.reporting.compare import compare_runs, load_run
    from cfcheck.reporting.compare_render import render_html, render_markdown

    comparison = compare_runs(
        [load_run(path) for path in args.runs],
        resamples=args.resamples,
        seed=args.seed,
        set_resamples=args.set_permutations,
        allow=args.allow,
    )
    if args.output is None:
        print(render_markdown(comparison), end="")
        return 0
    for name, text in (("comparison.md", render_markdown(comparison)), ("comparison.html", render_html(comparison))):
        print(atomic_write_text(args.output / name, text))
    return 0


def _protocols(args: argparse.Namespace) -> int:
    """List the current protocols (``--record``: register the bundled ones' new versions)."""
    from cfcheck.core.protocol import SHORT
    from cfcheck.profiles import read_user_settings
    from cfcheck.reporting.protocols import bundled_protocols, domain_protocols, load_registry, record_versions

    if args.record is not None:
        if args.domain is not None or args.seed != 0:
            raise ValueError("--record registers the bundled protocols at the built-in profiles and seed 0 only")
        recorded = record_versions(args.record)
        if not recorded:
            print("every bundled protocol's digest is its latest registered version: nothing recorded")
            return 0
        print(f"recorded {len(recorded)} versions; add to CHANGELOG.md (top section):")
        print(f"- Protocol versions {', '.join(recorded)}: {' '.join(args.record.split())}")
        return 0
    settings = read_user_settings(Path.cwd())
    if args.domain is not None:
        from cfcheck.domains.registry import resolve_domain

        found = domain_protocols(resolve_domain(args.domain, Path.cwd()), settings, args.seed)
    else:
        found = bundled_protocols(settings, args.seed)
    registry = load_registry()
    rows = [("kind", "domain", "profile", "version", "digest")]
    for protocol in found:
        identity = protocol.identity
        version = registry.readable(identity.key, identity.digest).removesuffix(f", {identity.short}")
        rows.append((identity.kind, identity.domain, identity.profile, version, identity.digest[:SHORT]))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
    return 0


def _merge(args: argparse.Namespace) -> int:
    from cfcheck.reporting.merge import merge_runs

    path = merge_runs(list(args.runs), args.output)
    print(f"merged {len(args.runs)} shards: {path}")
    return 0
