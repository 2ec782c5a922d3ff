"""The ``cfcheck`` command: retrain reference models, print metric cards, summarise scorecards.

Conformance runs themselves go through pytest (``pytest --method=...``); this command covers
what happens around them.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

#: an example per subcommand, shown at the end of its --help (and all of them under cfcheck --help)
EXAMPLES = {
    "new-adapter": "cfcheck new-adapter vce my_method.py && pytest --method=my_method.py --cfcheck-profile quick",
    "retrain": "cfcheck retrain --domain <domain> --only <model> --smoke --out /tmp/smoke",
    "cards": "cfcheck cards target_accuracy ground_truth_relative_error",
    "models": "cfcheck models --domain <domain>",
    "transfer": "cfcheck transfer --domain <domain> --n 300 --seed 0",
    "summary": "cfcheck summary reports/wachter-quick --against baseline.json > changes.md",
    "compare": "cfcheck compare reports/wachter-quick reports/dvce-quick --output reports/comparison",
    "merge": "cfcheck merge reports/m-quick-shard1of2 reports/m-quick-shard2of2 --output reports/m-quick",
    "calibrate": "cfcheck calibrate --profile quick --seeds 0 1 2 --out reports/calibration",
    "protocols": "cfcheck protocols --domain my_domain.py:DOMAIN",
}


def _epilog(*commands: str) -> str:
    return "example" + ("s" if len(commands) > 1 else "") + ":\n" + "\n".join(f"  {EXAMPLES[c]}" for c in commands)


def main(argv: Sequence[str] | None = None) -> int:
    from cfcheck.core.retrain import add_retrain_arguments
    from cfcheck.kinds.protocols import MethodKind  # torch-free

    parser = argparse.ArgumentParser(
        prog="cfcheck",
        description=__doc__,
        epilog=_epilog(*EXAMPLES),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", required=True)

    def command(name: str, **kwargs: Any) -> argparse.ArgumentParser:
        return commands.add_parser(
            name, epilog=_epilog(name), formatter_class=argparse.RawDescriptionHelpFormatter, **kwargs
        )

    new_adapter = command("new-adapter", help="write a ten-line adapter for a method kind into a file of yours")
    new_adapter.add_argument("kind", choices=[kind.value for kind in MethodKind], help="the method kind")
    new_adapter.add_argument(
        "path",
        type=Path,
        nargs="?",
        default=None,
        help="the file to write (default: my_<kind>.py here); never overwritten",
    )

    add_retrain_arguments(command("retrain", help="retrain the bundled reference models deterministically"))

    cards = command("cards", help="print the metric cards")
    cards.add_argument("keys", nargs="*", help="metric keys (default: all)")

    models = command("models", help="list the bundled reference models and their measured quality")
    models.add_argument("--domain", default=None, help="list only this domain's models (default: every domain)")

    transfer = command(
        "transfer",
        help="how often targeted PGD examples on an explained classifier fool the oracles too (the model cards' figures)",
    )
    transfer.add_argument("--domain", required=True, help="domain of the split and models (a registered name or spec)")
    transfer.add_argument("--n", type=int, default=300, help="images attacked (default 300)")
    transfer.add_argument("--eps", type=float, default=0.15, help="L∞ radius in [0, 1] pixel units (default 0.15)")
    transfer.add_argument("--steps", type=int, default=40, help="PGD steps (default 40)")
    transfer.add_argument("--seed", type=int, default=0, help="seeds the images, targets and random start")
    transfer.add_argument(
        "--source", default=None, help="the attacked model (default: the domain's first explained one)"
    )
    transfer.add_argument(
        "--evaluated",
        nargs="*",
        default=None,
        help="models whose target rate is reported too (default: the class-attribute oracle)",
    )
    transfer.add_argument("--threads", type=int, default=1, help="torch CPU threads (default 1)")

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
        "kind's task generation, the seeds and the profile's sizes, every metric card's definition, the bars "
        "with their calibration, the reference models and the domain's data. Settings of ./pyproject.toml's "
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

    commands.add_parser(
        "calibrate",
        add_help=False,
        help="run every bundled control through the suites; print the verdict matrix and calibration table",
    )
    if argv is None:
        argv = sys.argv[1:]
    if argv and argv[0] == "calibrate":  # its own options (cfcheck calibrate --help)
        if any(arg == "--domain" or arg.startswith("--domain=") for arg in argv[1:]):
            from cfcheck.calibrate.domain_run import main as calibrate_domain  # a user's domain

            return calibrate_domain(argv[1:])
        from cfcheck.calibrate.run import main as calibrate

        return calibrate(argv[1:])
    args = parser.parse_args(argv)
    try:
        return _COMMANDS[args.command](args)
    except (ValueError, KeyError, FileNotFoundError) as error:
        print(f"cfcheck {args.command}: {error}", file=sys.stderr)
        return 2


def _new_adapter(args: argparse.Namespace) -> int:
    from cfcheck.kinds import adapter_template

    path = args.path if args.path is not None else Path(f"my_{args.kind}.py")
    if path.suffix != ".py":
        raise ValueError(f"{path}: an adapter is a Python module; name it something.py")
    if path.exists():
        raise ValueError(f"{path} exists; cfcheck new-adapter never overwrites a file (choose another path)")
    path.write_text(adapter_template(args.kind).format(name=path.stem), encoding="utf-8")
    print(
        f"wrote {path}: replace the placeholder with your method, then run\n  pytest --method={path} --cfcheck-profile quick"
    )
    return 0


def _retrain(args: argparse.Namespace) -> int:
    """Hand the request to the domain's recipe function (:meth:`cfcheck.domains.base.BundledDomain.retrain`)."""
    from cfcheck.core.retrain import retrain_request
    from cfcheck.domains import available_domains, get_domain
    from cfcheck.domains.base import BundledDomain

    request = retrain_request(
        args, args.domain if args.domain is not None else _domain_holding(args.only or [], available_domains())
    )
    domain = get_domain(request.domain)
    if not isinstance(domain, BundledDomain):
        raise ValueError(f"domain {request.domain!r} has no bundled models: cfcheck retrains the models it ships")
    domain.retrain(request)
    return 0


def _domain_holding(names: list[str], domains: Sequence[str]) -> str:
    """The one registered domain whose model store holds every model in ``names``; ValueError otherwise."""
    from cfcheck.domains import get_domain

    holders = [d for d in domains if names and set(names) <= set(get_domain(d).model_store.names())]
    if len(holders) != 1:
        which = f"the domains holding {', '.join(names)}: {', '.join(holders) or 'none'}" if names else "no --only"
        raise ValueError(f"cfcheck retrain: name the domain with --domain ({which}); registered: {', '.join(domains)}")
    return holders[0]


def _cards(args: argparse.Namespace) -> int:
    from cfcheck.metrics.cards import CARDS, card_of, format_card
    from cfcheck.reporting.card_evidence import bundled_evidence

    cards = [card_of(key) for key in args.keys] if args.keys else list(CARDS.values())  # `key:variant` reads its card
    print(
        "\n\n".join(
            format_card(card, bundled_evidence(card.key), function_sources(card.computed_by) if args.keys else None)
            for card in cards
        )
    )
    return 0


def function_sources(names: Sequence[str]) -> dict[str, str]:
    """Function name (``package.module.function``) → ``path:line`` where it is defined (the path relative
    to the installed cfcheck's parent), or why it cannot be found."""
    import importlib
    import inspect

    root = Path(__file__).resolve().parent.parent
    found = {}
    for name in names:
        module_name, _, attribute = name.rpartition(".")
        try:
            function = inspect.unwrap(getattr(importlib.import_module(module_name), attribute))
            path = Path(inspect.getsourcefile(function) or "?").resolve()
            found[name] = (
                f"{path.relative_to(root) if path.is_relative_to(root) else path}:{inspect.getsourcelines(function)[1]}"
            )
        except (ImportError, AttributeError, TypeError, OSError) as error:
            found[name] = f"not found: {error}"
    return found


def _models(args: argparse.Namespace) -> int:
    from cfcheck.domains import available_domains
    from cfcheck.models.registry import available_models, model_entry

    if args.domain is not None and args.domain not in available_domains():
        raise ValueError(f"unknown domain {args.domain!r}; known domains: {', '.join(available_domains())}")
    for key in available_models(args.domain):  # "<domain>/<name>" without --domain
        domain, name = (args.domain, key) if args.domain is not None else key.split("/", 1)
        entry = model_entry(name, domain=domain)
        quality = ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in entry["quality"].items())
        print(f"{domain}/{name:16s} {entry['role']:17s} {entry['sha256'][:12]}  {quality}")
    return 0


def _transfer(args: argparse.Namespace) -> int:
    """Print the transfer rates of :func:`cfcheck.models.classifiers.transfer.adversarial_transfer` as JSON."""
    import json

    import torch

    from cfcheck.domains import get_domain
    from cfcheck.models.classifiers.transfer import adversarial_transfer

    domain = get_domain(args.domain)
    torch.set_num_threads(args.threads)
    rates = adversarial_transfer(
        args.n,
        domain=domain,
        eps=args.eps,
        steps=args.steps,
        seed=args.seed,
        source=args.source,
        evaluated=args.evaluated,
    )
    shown = {"domain": domain.name, "n": args.n, "eps": args.eps, "steps": args.steps, "seed": args.seed}
    print(json.dumps({**shown, "source": next(iter(rates)), "target_rate": rates}, indent=2))  # the source first
    return 0


def _summary(args: argparse.Namespace) -> int:
    from cfcheck.reporting.scorecard import load_scorecard
    from cfcheck.reporting.tables import HEADER, is_failing, score_rows

    if args.max_rows is not None and args.against is None:
        raise ValueError("--max-rows applies to --against BASELINE only")
    scorecard = load_scorecard(args.path)
    if args.against is not None:
        return _summary_against(scorecard, args.against, args.max_rows)
    rows = score_rows(scorecard)
    if args.failures:
        rows = [
            row
            for row, score in zip(rows, scorecard["scores"])
            if row[-1].startswith(("FAIL", "ERROR", "inconclusive")) or is_failing(score)
        ]
    widths = [max(len(str(c)) for c in column) for column in zip(HEADER, *rows)]
    print(f"{scorecard['method']} — {scorecard['status']}, profile {scorecard['profile']['name']}")
    for row in [HEADER, *rows]:
        print("  ".join(str(c).ljust(w) for c, w in zip(row, widths)))
    verdicts = {
        v: sum(1 for s in scorecard["scores"] if s.get("verdict") == v) for v in ("fail", "error", "inconclusive")
    }
    regressed = sum(1 for s in scorecard["scores"] if s.get("regressed"))
    known = sum(1 for s in scorecard["scores"] if s.get("baseline_status") == "known_failure")
    failed = sum(1 for s in scorecard["scores"] if is_failing(s))
    print(
        f"{len(scorecard['scores'])} scores: {verdicts['fail']} failed, {verdicts['error']} could not be computed, "
        f"{verdicts['inconclusive']} inconclusive, {regressed} regressed"
        + (f"; {known} of the failures known in the run's baseline" if known else "")
    )
    return 1 if failed else 0


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


_COMMANDS = {
    "new-adapter": _new_adapter,
    "retrain": _retrain,
    "cards": _cards,
    "models": _models,
    "transfer": _transfer,
    "summary": _summary,
    "compare": _compare,
    "protocols": _protocols,
    "merge": _merge,
}

if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
