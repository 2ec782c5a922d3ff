"""``cfcheck calibrate --domain SPEC [--kind KIND]``: earn a domain's bars for one method kind.

Each kind that can calibrate a domain declares how in its folder
(:attr:`cfcheck.kinds.declaration.KindDeclaration.domain_calibration`): the function that runs,
what it calibrates and its own options. This command offers those kinds (the first declared is
the default), adds every kind's options, and hands the parsed arguments to the chosen kind's
function; it names no kind itself.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from cfcheck.domains.checks import require_usable
from cfcheck.kinds.declaration import DomainCalibration
from cfcheck.kinds.registry import DECLARATIONS

__all__ = ["DOMAIN_CALIBRATIONS", "main", "parser"]

#: kind → how it calibrates a domain, for the kinds that declare it, in the registry's order
DOMAIN_CALIBRATIONS: Mapping[str, DomainCalibration] = {
    name: declaration.domain_calibration
    for name, declaration in DECLARATIONS.items()
    if declaration.domain_calibration is not None
}


def parser() -> argparse.ArgumentParser:
    """The command's parser: the shared options, ``--kind`` over :data:`DOMAIN_CALIBRATIONS`, and
    each kind's own options (their help starts with the kind)."""
    kinds = list(DOMAIN_CALIBRATIONS)
    found = argparse.ArgumentParser(prog="cfcheck calibrate", description=__doc__.split("\n\n")[0])
    found.add_argument("--domain", required=True, metavar="SPEC")
    found.add_argument(
        "--kind",
        choices=kinds,
        default=kinds[0],
        help="whose bars to earn: "
        + "; ".join(f"{name}: {calibration.summary}" for name, calibration in DOMAIN_CALIBRATIONS.items())
        + f" (default: {kinds[0]})",
    )
    found.add_argument("--profile", default="quick")
    found.add_argument(
        "--seeds",
        nargs="+",
        type=int,
        default=[0, 1, 2],
        help="run every control at each --cfcheck-seed; a bar is earned only where the controls "
        "separate on all of them together (default 0 1 2)",
    )
    for flags, uses in _options().items():
        if len(uses) == 1:
            name, keywords = uses[0]
            help_text = keywords.get("help")
            found.add_argument(
                *flags, **{**keywords, "help": f"{name} only: {help_text}" if help_text else f"{name} only"}
            )
            continue
        told = "; ".join(f"{name}: {keywords['help']}" if keywords.get("help") else name for name, keywords in uses)
        found.add_argument(*flags, **{**uses[0][1], "help": told})
    return found


def _options() -> dict[tuple[str, ...], list[tuple[str, dict[str, Any]]]]:
    """Each option's flags → the kinds that declare it, with their keywords. An option several kinds
    declare is added once (``--positive``); ValueError where they declare it differently (other
    than its help)."""
    found: dict[tuple[str, ...], list[tuple[str, dict[str, Any]]]] = {}
    for name, calibration in DOMAIN_CALIBRATIONS.items():
        for flags, keywords in calibration.options:
            found.setdefault(tuple(flags), []).append((name, dict(keywords)))
    for flags, uses in found.items():
        shapes = {repr(sorted((k, v) for k, v in keywords.items() if k != "help")) for _, keywords in uses}
        if len(shapes) > 1:
            raise ValueError(
                f"the domain calibrations of {[name for name, _ in uses]} declare {'/'.join(flags)} differently: "
                "a shared option must take the same type, default and arity"
            )
    return found


def _runner(calibration: DomainCalibration) -> Callable[[Any], int]:
    return calibration.runner()


def main(argv: Sequence[str] | None = None) -> int:
    """``cfcheck calibrate --domain SPEC [--kind KIND] [--profile P] [--seeds S ...]`` and the
    chosen kind's options; 2 with the message where the domain fails its load check or the kind's
    calibration fails."""
    args = parser().parse_args(argv)
    try:
        require_usable(args.domain)
        return _runner(DOMAIN_CALIBRATIONS[args.kind])(args)
    except (RuntimeError, ValueError) as error:  # DomainError is a ValueError
        print(f"cfcheck calibrate: {error}", file=sys.stderr)
        return 2
