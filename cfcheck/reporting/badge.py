"""``badge.svg``: a small shields-style badge of a run, "cfcheck | pass" / "fail 3" / "incomplete".

The badge is a self-contained SVG (no fonts, images or links to fetch), so a README can embed
the file straight from the run folder.
"""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from pathlib import Path
from typing import Any

from cfcheck.reporting.model import Scorecard

LABEL = "cfcheck"
#: message colour of each state (shields.io's palette)
COLOURS = {"pass": "#4c1", "fail": "#e05d44", "incomplete": "#9f9f9f", "reported": "#007ec6"}
#: the badge of a run whose method read the domain's answer (whatever its verdicts)
ANSWER_READ_BADGE = ("not valid: read the answer", "#6f42c1")
_LABEL_COLOUR = "#555"


def badge_state(scorecard: Scorecard | Mapping[str, Any]) -> tuple[str, str]:
    """(message, colour): "incomplete" when the run was cut short, else "fail N" (N scores
    failed, could not be computed or regressed), else "reported only" (neutral) when no score had
    a bar, else "pass", naming the kinds judged and the kinds only reported ("vce pass ·
    attribution reported") when some kind had no bar. A run whose method read the domain's answer
    is "not valid: read the answer" (purple), whatever else."""
    card = Scorecard.of(scorecard)
    if card.provenance.answer_read is not None:
        return ANSWER_READ_BADGE
    if card.status != "complete":
        return "incomplete", COLOURS["incomplete"]
    failed = card.failing_count
    if failed:
        return f"fail {failed}", COLOURS["fail"]
    counts = card.scores.counts
    if card.scores and not counts["pass"] and not counts["inconclusive"]:
        return "reported only", COLOURS["reported"]  # no score had a bar: nothing was judged
    gated, reported = card.kinds_by_judgement()
    if reported:  # some kinds were judged and passed, others only reported: say which is which
        return f"{'+'.join(gated)} pass · {'+'.join(reported)} reported", COLOURS["pass"]
    return "pass", COLOURS["pass"]


def render_badge(scorecard: Scorecard | Mapping[str, Any], run_dir: Path | None = None) -> str:
    """The badge SVG of ``scorecard`` (a scorecard JSON is read with :meth:`Scorecard.from_json`;
    ``run_dir`` is accepted for symmetry with the other formats)."""
    card = Scorecard.of(scorecard)
    message, colour = badge_state(card)
    left, right = _text_width(LABEL) + 10, _text_width(message) + 10
    width = left + right
    label, text = escape(LABEL), escape(message)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="20" role="img" '
        f'aria-label="{label}: {text}"><title>{label}: {text}{_protocols(card)}</title>'
        '<linearGradient id="s" x2="0" y2="100%"><stop offset="0" stop-color="#bbb" stop-opacity=".1"/>'
        '<stop offset="1" stop-opacity=".1"/></linearGradient>'
        f'<clipPath id="r"><rect width="{width}" height="20" rx="3" fill="#fff"/></clipPath>'
        f'<g clip-path="url(#r)"><rect width="{left}" height="20" fill="{_LABEL_COLOUR}"/>'
        f'<rect x="{left}" width="{right}" height="20" fill="{colour}"/>'
        f'<rect width="{width}" height="20" fill="url(#s)"/></g>'
        '<g fill="#fff" text-anchor="middle" font-family="Verdana,Geneva,DejaVu Sans,sans-serif" font-size="11">'
        f'<text x="{left / 2:g}" y="15" fill="#010101" fill-opacity=".3">{label}</text>'
        f'<text x="{left / 2:g}" y="14">{label}</text>'
        f'<text x="{left + right / 2:g}" y="15" fill="#010101" fill-opacity=".3">{text}</text>'
        f'<text x="{left + right / 2:g}" y="14">{text}</text></g></svg>\n'
    )


def _protocols(card: Scorecard) -> str:
    """The title's protocols, escaped: ``" · protocol <kind>/<domain>/quick v1 (1a2b3c4d5e6f)"`` ("" without)."""
    labels = card.protocol_labels
    return escape(f" · protocol {'; '.join(labels)}") if labels else ""


def _text_width(text: str) -> int:
    """Approximate width of ``text`` in 11 px Verdana (no font metrics needed)."""
    narrow = sum(1 for c in text if c in "ilj .,:;|!'1")
    return round(7 * (len(text) - narrow) + 3.5 * narrow)
