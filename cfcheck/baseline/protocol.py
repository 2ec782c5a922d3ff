"""A baseline made under another protocol: which bars judge its scores differently now
(:class:`BarChange`, found by :meth:`cfcheck.baseline.store.Baseline.note_bar_changes`) and how the
run's protocols differ from the baseline's (:func:`protocol_change_lines`), for the terminal, the
scorecard's ``baseline`` section and ``changes.md``.

What a run does about it: every change is said, one line each; the regression check on values still
runs, but a score whose bar changed is never a known failure (nor a fix) across the change, since the
baseline's verdict was reached against another bar.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["BarChange", "bar_text", "protocol_change_lines"]


def bar_text(threshold: str | None) -> str:
    """A stored score's bar as the run describes bars before it has a floor: ``"<= 4 × floor"`` of
    ``"<= 4 × floor = 0.0123"`` (the floor is the run's own measurement, not the bar); "none" for no bar."""
    if not threshold:
        return "none"
    return threshold.split(" = ")[0] if "floor" in threshold else threshold


@dataclass(frozen=True)
class BarChange:
    """A bar that judges some of the baseline's scores differently now.

    Attributes:
        where: ``kind/domain``.
        metric: the metric (``card`` or ``card:variant``).
        old: the bar that judged them in the baseline ("none": no bar).
        new: the bar that judges them now ("none": no bar).
        scores: how many of the baseline's scores it judged.
    """

    where: str
    metric: str
    old: str
    new: str
    scores: int

    def describe(self) -> str:
        return (
            f"bar of {self.metric} on {self.where} changed since the baseline: {self.old} → {self.new} "
            f"({self.scores} score{'s' if self.scores != 1 else ''}; no known failure carries across it)"
        )


def protocol_change_lines(baseline: Mapping[str, Any], run: Mapping[str, Any], source: str) -> list[str]:
    """One line per protocol of the run whose digest differs from the baseline's, naming the parts
    (:func:`cfcheck.reporting.protocol_text.difference_details`); one line when the baseline has no
    protocols at all (saved before cfcheck recorded them).

    Args:
        baseline: the baseline scorecard's ``protocols``.
        run: the run's ``protocols``.
        source: where the baseline was read from (named in the lines).
    """
    from cfcheck.reporting.protocol_text import difference_details, protocol_label

    if not run:
        return []
    if not baseline:
        return [
            f"the baseline {source} records no protocol (saved before cfcheck recorded them): its scores are "
            "gated by their values, and by their bars where these did not change"
        ]
    lines = []
    for key in sorted(run):
        old, new = baseline.get(key), run[key]
        if not isinstance(old, Mapping) or not old.get("digest") or not new.get("digest"):
            continue
        details = difference_details(old, new)
        if details:
            lines.append(
                f"protocol {key} differs from the baseline's ({protocol_label(old)} → {protocol_label(new)}): {details}"
            )
    return lines
