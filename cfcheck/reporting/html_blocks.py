"""The building blocks every HTML page of cfcheck shares: the style sheet, the verdict colours and
chips, escaping, and the links to a metric's card."""

from __future__ import annotations

import html
import re
from typing import Any

from cfcheck.metrics.key import MetricKey
from cfcheck.reporting.tables import CATEGORY_NAMES, VERDICT_ORDER

#: dot / text colour and cell background of each verdict category
COLOURS = {
    "pass": ("#2e7d32", "#d7f0d8"),
    "fail": ("#c62828", "#f9d0d0"),
    "inconclusive": ("#b77c00", "#fff0bf"),
    "error": ("#6a1b9a", "#ead7f3"),
    "none": ("#78909c", "#eceff1"),
}

PAGE_CSS = """
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:0 auto;max-width:1240px;padding:12px 20px;color:#222}
h1{font-size:1.4em;margin:.2em 0;word-break:break-all}h2{font-size:1.15em;margin:1.2em 0 .4em;border-bottom:1px solid #ddd}
h3{font-size:1em;margin:.8em 0 .3em}small,.muted{color:#666}
.banner{font-size:1.35em;font-weight:600;padding:10px 16px;border-radius:6px;color:#fff;margin:8px 0}
.banner.INVALID{background:#6f42c1}.banner.PASS{background:#2e7d32}.banner.FAIL{background:#c62828}.banner.INCOMPLETE{background:#616161}.banner.REPORTED{background:#1565c0}
.top{display:flex;flex-wrap:wrap;gap:24px;align-items:flex-start}.top>div{flex:1 1 460px;min-width:0}
.top>div.counts{flex:0 1 auto}.nowrap{white-space:nowrap}
table{border-collapse:collapse;font-size:13px}td,th{padding:2px 7px;border-bottom:1px solid #e4e4e4;text-align:left}
th{background:#f5f5f5}td.n{text-align:right;font-variant-numeric:tabular-nums}
.v-pass{color:#2e7d32}.v-fail{color:#c62828;font-weight:600}.v-inconclusive{color:#b77c00}.v-error{color:#6a1b9a;font-weight:600}.v-none{color:#78909c}
.scroll{overflow-x:auto;max-width:100%}.matrix td{text-align:center;min-width:56px;border:1px solid #fff;white-space:nowrap}.matrix td.task{text-align:left;font-family:monospace;background:none}
.chip{display:inline-block;margin:0 2px;font-size:12px}.dim{color:#bbb}
.grids{display:flex;flex-wrap:wrap;align-items:flex-start;gap:10px 18px}.grid{border:1px solid #ddd;border-radius:5px;padding:4px 8px}
.grid summary{cursor:pointer;font-family:monospace}.grid td{padding:1px;border:none;text-align:center}
.grid th{background:none;font-weight:normal;font-size:11px;color:#555;padding-right:4px;text-align:right;width:72px;white-space:normal}
img.ex{image-rendering:pixelated;image-rendering:crisp-edges;display:block;background:#000}
.charts{display:flex;flex-wrap:wrap;gap:12px}.chart{border:1px solid #e4e4e4;border-radius:5px;padding:4px 6px}
.chart h4{margin:0;font-size:13px}.chart h4 span{font-weight:normal;color:#555}
details>summary{cursor:pointer}.card{margin:4px 0 8px;padding:4px 10px;border-left:3px solid #90a4ae}
.card dt{font-weight:600;float:left;clear:left;width:110px}.card dd{margin:0 0 2px 120px}
pre{background:#f7f7f7;padding:8px;overflow:auto;font-size:12px}a{color:#1a5fb4}
"""


def e(text: Any) -> str:
    """``text`` as HTML text or attribute value."""
    return html.escape(str(text), quote=True)


def card_anchor(metric: str) -> str:
    """The id of a metric's card section ("oracle_score:oracle_lenet" → "card-oracle_score")."""
    return "card-" + re.sub(r"[^A-Za-z0-9_-]", "-", MetricKey.card_part(metric))


def metric_link(metric: str) -> str:
    return f"<a href='#{card_anchor(metric)}'>{e(metric)}</a>"


def chips(counts: dict[str, int]) -> str:
    shown = [
        f"<span class='chip v-{name}' title='{e(CATEGORY_NAMES[name])}'>{counts[name]} {SYMBOL[name]}</span>"
        for name in VERDICT_ORDER
        if counts.get(name)
    ]
    return "".join(shown) or "<span class='dim'>·</span>"


SYMBOL = {"pass": "✓", "fail": "✗", "inconclusive": "?", "error": "!", "none": "–"}
