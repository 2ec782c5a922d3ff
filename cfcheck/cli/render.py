"""``cfcheck render``: redraw a run folder's report formats from its ``scorecard.json`` alone."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path


def add_commands(command: Callable[..., argparse.ArgumentParser]) -> dict[str, Callable[[argparse.Namespace], int]]:
    """Add ``render`` through ``command`` (name, help → its parser); its name → what runs it."""
    render = command(
        "render",
        help="redraw a run's report formats (scorecard.md, scorecard.html, badge.svg and a plugin's) from its "
        "scorecard.json alone, on any machine",
        description="Every format is drawn from the scorecard JSON alone: no domain, model or calibration file "
        "is read (the controls' values the pages show are the scorecard's calibration section). A format that "
        "raises is named and the others are still written (exit status 1).",
    )
    render.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="the run folder (holding scorecard.json)")
    render.add_argument(
        "-p",
        "--plugin",
        action="append",
        default=[],
        metavar="MODULE_OR_FILE",
        help="a module or .py file implementing pytest_cfcheck_scorecard (e.g. -p conftest.py): its format is "
        "drawn too; repeatable",
    )
    render.add_argument(
        "--recalibrate",
        action="store_true",
        help="first rewrite the scorecard's calibration section from this machine's domains (the controls' "
        "values their calibration folders hold now; for a scorecard written before the section)",
    )
    return {"render": _render}


def _render(args: argparse.Namespace) -> int:
    from cfcheck.reporting.formats import FormatError, render_run
    from cfcheck.reporting.scorecard import recalibrate

    if args.recalibrate:
        print(f"recalibrated {recalibrate(args.run_dir)}")
    try:
        written = render_run(args.run_dir, args.plugin)
    except FormatError as error:
        print(f"cfcheck render: {error}", file=sys.stderr)
        return 1
    for path in written:
        print(path)
    return 0
