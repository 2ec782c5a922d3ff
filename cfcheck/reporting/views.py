"""The human views of a scorecard, written beside its JSON: Markdown, HTML and the badge."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cfcheck.core.io import atomic_write_text as atomic_write

__all__ = ["write_views"]


def write_views(directory: Path, scorecard: dict[str, Any]) -> None:
    """scorecard.md, scorecard.html (with the bundled controls' calibration values as they are
    now) and badge.svg of ``scorecard`` in ``directory``, beside its example grids."""
    from cfcheck.calibration.store import load_calibration_values
    from cfcheck.reporting.badge import render_badge
    from cfcheck.reporting.html import render_html
    from cfcheck.reporting.markdown import render_markdown

    atomic_write(directory / "scorecard.md", render_markdown(scorecard, directory))
    atomic_write(directory / "scorecard.html", render_html(scorecard, directory, load_calibration_values(scorecard)))
    atomic_write(directory / "badge.svg", render_badge(scorecard, directory))
