"""The ``cfcheck`` command: retrain reference models, print metric cards, summarise scorecards.

Conformance runs themselves go through pytest (``pytest --method=...``); this command covers
what happens around them.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
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
    "render": "cfcheck render reports/wachter-quick -p conftest.py",
}


def _epilog(*commands: str) -> str:
    return "example" + ("s" if len(commands) > 1 else "") + ":\n" + "\n".join(f"  {EXAMPLES[c]}" for c in commands)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``cfcheck`` command ``argv`` (default: the process's arguments); its exit status."""
    from cfcheck.cli import new_adapter, reference, render, scorecards

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

    handlers = {
        **new_adapter.add_commands(command),
        **reference.add_commands(command),
        **scorecards.add_commands(command),
        **render.add_commands(command),
    }
    commands.add_parser(
        "calibrate",
        add_help=False,
        help="run every bundled control through the suites; print the verdict matrix and calibration table",
    )
    if argv is None:
        argv = sys.argv[1:]
    from cfcheck.kinds.declaration import KindError
    from cfcheck.kinds.registry import loaded_cards

    try:
        loaded_cards()  # every command reads the metric cards: load the kinds, which bring their own
    except KindError as error:
        print(f"cfcheck: {error}", file=sys.stderr)
        return 2
    if argv and argv[0] == "calibrate":  # its own options (cfcheck calibrate --help)
        if any(arg == "--domain" or arg.startswith("--domain=") for arg in argv[1:]):
            from cfcheck.cli.calibrate_domain import main as calibrate_domain  # a user's domain

            return calibrate_domain(argv[1:])
        from cfcheck.cli.calibrate_run import main as calibrate

        return calibrate(argv[1:])
    args = parser.parse_args(argv)
    try:
        return handlers[args.command](args)
    except (ValueError, KeyError, FileNotFoundError) as error:
        print(f"cfcheck {args.command}: {error}", file=sys.stderr)
        return 2


__all__ = ["EXAMPLES", "main"]
