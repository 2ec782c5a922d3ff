"""Markdown and HTML views of a :class:`~cfcheck.reporting.compare.Comparison`.

Both views show the same content, built once as plain tables by
:mod:`.compare_tables` (:func:`~.compare_tables.comparison_tables`):

1. a header (runs, profile, method of the tests);
2. the leaderboard: per kind, domain and suite, the methods by average rank with Friedman's test,
   Nemenyi's post-hoc test and (HTML) the critical-difference diagram, the leader marked only
   where its lead is significant (:mod:`.compare_board`);
3. "Behind the best": per method and suite, the metrics on which a paired test says it is
   significantly worse than the metric's best method (the leaderboard at a glance);
4. "Where they really differ": the significant paired differences, smallest adjusted p first;
5. one table per metric family (a suite of one kind and domain): each method's value
   and 95% CI, the best in bold, and the significant differences of that row;
6. per pair of methods, the paired tests (n shared inputs, test, difference with its CI, raw and
   Holm-adjusted p), significant ones marked "yes".

The HTML page is self-contained (inline style, no scripts) and every user-supplied string
(method names, paths, metric and task names) goes through :func:`html.escape`. Methods are shown
by :func:`display_names` (the dotted prefix all of them share dropped); the header lists each
run's full method name.
"""

from __future__ import annotations

import html

from cfcheck.reporting.compare import ANSWER_READ_MARK, Board, Comparison
from cfcheck.reporting.compare_tables import (
    PROTOCOL_MARK,
    Cell,
    Table,
    behind_best,
    behind_best_table,
    comparison_tables,
    differ_lines,
    display_names,
)
from cfcheck.reporting.html_blocks import PAGE_CSS

__all__ = [
    "Cell",
    "Table",
    "behind_best",
    "comparison_tables",
    "differ_lines",
    "display_names",
    "render_html",
    "render_markdown",
]


def render_markdown(comparison: Comparison) -> str:
    """The comparison as a Markdown document.

    Args:
        comparison: the comparison to render.

    Returns:
        Markdown text ending in a newline.
    """
    names = display_names(comparison.methods)
    lines = [f"# cfcheck comparison: {' vs '.join(f'`{_md(names[m])}`' for m in comparison.methods)}", ""]
    lines += [f"- {_md(line)}" for line in _header_lines(comparison)]
    lines += _markdown_leaderboard(comparison, names)
    lines += _markdown_table(behind_best_table(comparison))
    lines += ["", "## Where they really differ", ""]
    lines += [f"- {_md(line)}" for line in differ_lines(comparison)] or ["- no significant differences"]
    for table in comparison_tables(comparison):
        lines += _markdown_table(table)
    return "\n".join(lines) + "\n"


def _markdown_leaderboard(comparison: Comparison, names: dict[str, str]) -> list[str]:
    from cfcheck.reporting.compare_board import (
        BOARD_HEADER,
        board_lines,
        board_rows,
        board_title,
        cd_diagram_text,
        headline,
    )

    lines = ["", "## Leaderboard: average rank per suite", "", f"- {_md(LEADERBOARD_NOTE)}"]
    lines += [f"- {_md(headline(board, names))}" for board in comparison.boards]
    for board in comparison.boards:
        lines += ["", f"### {_md(board_title(board) + _board_mark(comparison, board))}", ""]
        lines += [f"- {_md(line)}" for line in board_lines(board, names)]
        if board.blocks:
            lines += ["", "| " + " | ".join(BOARD_HEADER) + " |", "|" + "---|" * len(BOARD_HEADER)]
            lines += [
                "| " + " | ".join(f"**{_md(c)}**" if strong and c else _md(c) for c in row) + " |"
                for row, strong in board_rows(board, names)
            ]
            if len(board.methods) > 1:  # the HTML page's critical-difference diagram, drawn in text
                lines += ["", "```text", cd_diagram_text(board, names), "```"]
    return lines


def _html_leaderboard(comparison: Comparison, names: dict[str, str]) -> list[str]:
    import base64

    from cfcheck.reporting.compare_board import (
        BOARD_HEADER,
        board_lines,
        board_rows,
        board_title,
        cd_diagram_png,
        headline,
    )

    esc = html.escape
    parts = [
        "<h2>Leaderboard: average rank per suite</h2>",
        f"<p class='muted'>{esc(LEADERBOARD_NOTE)}</p><ul>",
        *(f"<li>{esc(headline(board, names))}</li>" for board in comparison.boards),
        "</ul>",
    ]
    for board in comparison.boards:
        parts.append(f"<h3>{esc(board_title(board) + _board_mark(comparison, board))}</h3><ul class='muted'>")
        parts += [f"<li>{esc(line)}</li>" for line in board_lines(board, names)] + ["</ul>"]
        if not board.blocks:
            continue
        parts.append("<div class='board'><table><tr>" + "".join(f"<th>{esc(h)}</th>" for h in BOARD_HEADER) + "</tr>")
        for row, strong in board_rows(board, names):
            cells = "".join(f"<td class='strong'>{esc(c)}</td>" if strong else f"<td>{esc(c)}</td>" for c in row)
            parts.append(f"<tr class='sig'>{cells}</tr>" if strong else f"<tr>{cells}</tr>")
        image = base64.b64encode(cd_diagram_png(board, names)).decode("ascii")
        parts.append(
            f"</table><img alt='critical-difference diagram of {esc(board_title(board))}' "
            f"src='data:image/png;base64,{image}'></div>"
        )
    return parts


def _markdown_table(table: Table) -> list[str]:
    lines = [
        "",
        f"## {_md(table.title)}",
        "",
        "| " + " | ".join(_md(h) for h in table.header) + " |",
        "|" + "---|" * len(table.header),
    ]
    for row in table.rows:
        lines.append(
            "| " + " | ".join(f"**{_md(c.text)}**" if c.strong and c.text else _md(c.text) for c in row) + " |"
        )
    return lines


#: how to read the leaderboard, on both views
LEADERBOARD_NOTE = (
    "Within each (task, metric) block the methods are ranked by the metric's direction (1 = best, ties share "
    "their average rank; metrics without a direction are left out, as are blocks where a method has no value); "
    "a method's place is its average rank over the blocks of its suite. Friedman's test asks whether the ranks "
    "differ at all, Nemenyi's test which pairs differ; a leader is marked only where Friedman's test rejects and "
    "Nemenyi's test separates it from the runner-up at the level shown (with two methods: a sign test over the "
    "blocks). A suite ranks what its metrics reward: closeness rewards changing nothing, so a do-nothing control "
    "can lead it. Set-level scores (FID, KID, density, coverage) enter as blocks; their paired test, a permutation "
    "test over the shared inputs, needs the runs' kept per-input features."
)

#: the comparison page's own rules, after the scorecard's
_COMPARE_CSS = (
    "div.board{display:flex;flex-wrap:wrap;gap:16px;align-items:flex-start}"
    "div.board img{max-width:760px;width:100%}"
    "td.strong{font-weight:600}tr.sig{background:#eef6ff}table.behind td{vertical-align:top;max-width:260px}"
    "table.behind td.clean{background:#e8f5e9;color:#2e7d32;text-align:center}"
    "table.behind td.trails{background:#ffebee}"
)


def render_html(comparison: Comparison) -> str:
    """The comparison as a self-contained HTML page (every user-supplied string escaped).

    Args:
        comparison: the comparison to render.

    Returns:
        The HTML document.
    """
    esc, names = html.escape, display_names(comparison.methods)
    title = esc("cfcheck comparison: " + " vs ".join(names[m] for m in comparison.methods))
    behind = behind_best_table(comparison)
    parts = [
        f"<!doctype html><html><head><meta charset='utf-8'><title>{title}</title>"
        f"<meta name='viewport' content='width=device-width'><style>{PAGE_CSS}{_COMPARE_CSS}</style></head><body>",
        f"<h1>{title}</h1><ul class='muted'>",
        *(f"<li>{esc(line)}</li>" for line in _header_lines(comparison)),
        "</ul>",
        *_html_leaderboard(comparison, names),
        f"<h2>{esc(behind.title)}</h2><div class='scroll'><table class='behind'><tr>",
        "".join(f"<th>{esc(h)}</th>" for h in behind.header) + "</tr>",
    ]
    for row in behind.rows:
        cells = [f"<td><b>{esc(row[0].text)}</b></td>"]
        cells += [f"<td class='{'clean' if c.strong else 'trails'}'>{esc(c.text)}</td>" for c in row[1:]]
        parts.append(f"<tr>{''.join(cells)}</tr>")
    parts.append("</table></div><h2>Where they really differ</h2><ul>")
    parts += [f"<li>{esc(line)}</li>" for line in differ_lines(comparison)] or ["<li>no significant differences</li>"]
    parts.append("</ul>")
    for table in comparison_tables(comparison):
        paired = table.title.startswith("Paired tests")
        parts.append(f"<details><summary>{esc(table.title)}</summary>" if paired else f"<h2>{esc(table.title)}</h2>")
        parts.append("<div class='scroll'><table><tr>" + "".join(f"<th>{esc(h)}</th>" for h in table.header) + "</tr>")
        for row in table.rows:
            significant = paired and row[-1].strong
            row_html = "".join(
                f"<td class='strong'>{esc(c.text)}</td>" if c.strong else f"<td>{esc(c.text)}</td>" for c in row
            )
            parts.append(f"<tr class='sig'>{row_html}</tr>" if significant else f"<tr>{row_html}</tr>")
        parts.append("</table></div></details>" if paired else "</table></div>")
    parts.append("</body></html>\n")
    return "\n".join(parts)


def _header_lines(comparison: Comparison) -> list[str]:
    card = comparison.runs[0].scorecard
    marked = [
        f"{PROTOCOL_MARK} (compared with --allow; every row of these scores is marked): {note}"
        for note in comparison.protocol_notes.values()
    ]
    return [
        *marked,
        "runs: " + ", ".join(f"{run.label} ({run.path})" for run in comparison.runs),
        *(
            f"{run.label}: its method read the domain's answer (true counterfactual or factors): not a valid submission"
            for run in comparison.runs
            if run.label.endswith(ANSWER_READ_MARK)
        ),
        f"profile {card.get('profile', {}).get('name')}, seeds {card.get('provenance', {}).get('seeds')}, "
        f"{len(comparison.keys)} scores present in at least two runs",
        "paired tests on the shared inputs of every pair of methods: McNemar's exact test for 0/1 values, "
        f"otherwise a paired bootstrap of the mean difference ({comparison.resamples} resamples); set-level "
        "scores: a permutation test swapping each shared input's two counterfactuals (where both runs kept "
        "their features); "
        f"p-values Holm-corrected over each pair's tests, significant when p(Holm) < {comparison.alpha:g}",
    ]


def _board_mark(comparison: Comparison, board: Board) -> str:
    """:data:`PROTOCOL_MARK` after the title of a board whose scores' protocols differ ("" otherwise)."""
    return f" {PROTOCOL_MARK}" if board.family[:2] in comparison.protocol_notes else ""


def _md(text: str) -> str:
    """Keep user-supplied text from breaking a Markdown table row."""
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")
