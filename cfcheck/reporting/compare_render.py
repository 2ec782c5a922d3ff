"""Markdown and HTML views of a :class:`~cfcheck.reporting.compare.Comparison`.

Both views show the same content, built once as plain tables by :func:`comparison_tables`:

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
from dataclasses import dataclass

from cfcheck.metrics.key import MetricKey
from cfcheck.reporting.compare import Comparison, Key, PairedTest
from cfcheck.reporting.html_blocks import PAGE_CSS

__all__ = ["Cell", "Table", "behind_best", "comparison_tables", "differ_lines", "display_names", "render_html",
           "render_markdown"]

#: how many significant differences the summary lists before "… and N more"
SUMMARY_LIMIT = 20
ARROWS = {"higher": "↑", "lower": "↓", "none": "–"}


@dataclass(frozen=True)
class Cell:
    """One table cell: its text and whether it is emphasised (best value, significant test)."""

    text: str
    strong: bool = False


@dataclass(frozen=True)
class Table:
    """A titled table of cells."""

    title: str
    header: list[str]
    rows: list[list[Cell]]


def display_names(methods: list[str]) -> dict[str, str]:
    """Each method's label with the dotted prefix every label shares dropped, where that leaves the
    labels distinct and non-empty ("cfcheck.fixtures.dvce" and "cfcheck.fixtures.pgd" → "dvce" and
    "pgd"); otherwise the labels themselves.

    Example:
        >>> display_names(["pkg.methods.a", "pkg.methods.b"])
        {'pkg.methods.a': 'a', 'pkg.methods.b': 'b'}
    """
    split = [method.split(".") for method in methods]
    shared = 0
    while len(methods) > 1 and all(len(parts) > shared + 1 for parts in split) \
            and len({parts[shared] for parts in split}) == 1:
        shared += 1
    short = {method: ".".join(parts[shared:]) for method, parts in zip(methods, split)}
    return short if len(set(short.values())) == len(methods) else {method: method for method in methods}


def behind_best(comparison: Comparison) -> dict[str, dict[tuple[str, ...], dict[str, tuple[int, int]]]]:
    """Where each method is significantly worse than the best method of a score.

    For every key with a direction, the methods with the best value are the leaders; a method is
    behind on that key when its paired test against a leader is significant with the leader better.

    Args:
        comparison: the comparison.

    Returns:
        ``method -> (kind, domain, suite) -> metric -> (tasks behind, tasks where it was tested
        against a leader)``; families and metrics in which the method is never behind are absent.
    """
    tests = {(t.key, frozenset((t.first, t.second))): t for t in comparison.tests}
    out: dict[str, dict[tuple[str, ...], dict[str, tuple[int, int]]]] = {m: {} for m in comparison.methods}
    for key in comparison.keys:
        leaders = comparison.best.get(key, [])
        if comparison.directions.get(key) == "none" or not leaders:
            continue
        for method in comparison.methods:
            if method in leaders or method not in comparison.entries[key]:
                continue
            pairs = [tests.get((key, frozenset((leader, method)))) for leader in leaders]
            tested = [t for t in pairs if t is not None and t.p_value is not None]
            if not tested:
                continue
            behind = any(t.significant and _ranked(t, comparison.directions[key])[1] == method for t in tested)
            family = out[method].setdefault(key[:3], {})
            count, total = family.get(key[3], (0, 0))
            family[key[3]] = (count + behind, total + 1)
    return {m: {f: {k: v for k, v in metrics.items() if v[0]} for f, metrics in families.items()
                if any(v[0] for v in metrics.values())} for m, families in out.items()}


def behind_best_table(comparison: Comparison) -> Table:
    """:func:`behind_best` as a table: one row per method, one column per suite;
    a cell lists the metrics it trails on with "tasks behind/tasks tested", "–" where it trails
    on none (strong: a clean column)."""
    names = display_names(comparison.methods)
    behind = behind_best(comparison)
    families = list(dict.fromkeys(key[:3] for key in comparison.keys))
    rows = []
    for method in comparison.methods:
        cells = [Cell(names[method])]
        for family in families:
            metrics = behind[method].get(family, {})
            grouped: dict[str, list[str]] = {}  # "oracle_score:oracle_lenet" and ":oracle_resnet" share one entry
            for metric, (count, total) in metrics.items():
                card = MetricKey.card_part(metric)  # a scorecard's name as written, unvalidated
                variant = metric[len(card) + 1:]
                grouped.setdefault(card, []).append(f"{variant + ' ' if variant else ''}{count}/{total}")
            text = "; ".join(f"{name} {', '.join(parts)}" for name, parts in grouped.items())
            cells.append(Cell(text or "–", strong=not metrics))
        rows.append(cells)
    return Table("Behind the best: metrics on which a method is significantly worse than the leader (tasks)",
                 ["method", *("/".join(f) for f in families)], rows)


def differ_lines(comparison: Comparison, limit: int = SUMMARY_LIMIT) -> list[str]:
    """The significant paired differences, one sentence per pair of methods and metric.

    The tasks of a metric (classifier, pair set, seed) are summarised together: "A better than B
    on <metric> in 7 of 8 tasks (difference +0.8 to +1, p(Holm) <= 1e-30)".

    Args:
        comparison: the comparison to summarise.
        limit: at most this many sentences, then one "… and N more".

    Returns:
        The sentences, strongest evidence first (empty when nothing differs).
    """
    tested: dict[tuple[frozenset[str], tuple[str, ...]], int] = {}
    for test in comparison.tests:
        if test.p_value is not None:
            group = (frozenset((test.first, test.second)), test.key[:4])
            tested[group] = tested.get(group, 0) + 1
    groups: dict[tuple[str, str, tuple[str, ...]], list[tuple[float, PairedTest]]] = {}
    for test in comparison.significant():
        better, worse, sign = _ranked(test, comparison.directions[test.key])
        groups.setdefault((better, worse, test.key[:4]), []).append((sign * (test.difference or 0.0), test))
    lines, names = [], display_names(comparison.methods)
    for (better, worse, family), members in sorted(groups.items(), key=lambda g: (max(_holm(t) for _, t in g[1]), g[0])):
        total = tested[(frozenset((better, worse)), family)]
        low, high = f"{min(d for d, _ in members):+.3g}", f"{max(d for d, _ in members):+.3g}"
        verb = "differs from" if comparison.directions[members[0][1].key] == "none" else "better than"
        where = members[0][1].key[4] if total == 1 else f"{len(members)} of {total} tasks"
        better, worse = names[better], names[worse]
        lines.append(f"{better} {verb} {worse} on {'/'.join(family[:2])} {family[2]} {family[3]}, {where} "
                     f"({better} − {worse} = {low if low == high else f'{low} to {high}'}, "
                     f"{_test_name(members[0][1])}, p(Holm) {_p(max(_holm(t) for _, t in members), members[0][1], bound=True)})")
    if len(lines) > limit:
        lines = lines[:limit] + [f"… and {len(lines) - limit} more (see the paired tests)"]
    return lines


def comparison_tables(comparison: Comparison) -> list[Table]:
    """The leaderboard tables (one per metric family) followed by the paired-test tables.

    Args:
        comparison: the comparison to lay out.

    Returns:
        The tables, in display order.
    """
    by_key: dict[Key, list[PairedTest]] = {}
    for test in comparison.significant():
        by_key.setdefault(test.key, []).append(test)
    tables: list[Table] = []
    names = display_names(comparison.methods)
    families: dict[tuple[str, str, str], list[Key]] = {}
    for key in comparison.keys:
        families.setdefault(key[:3], []).append(key)
    for (kind, domain, suite), keys in families.items():
        rows = []
        for key in keys:
            entries, best = comparison.entries[key], comparison.best[key]
            cells = [Cell(key[3]), Cell(key[4]), Cell(ARROWS.get(comparison.directions[key], "–"))]
            for method in comparison.methods:
                entry = entries.get(method)
                text = "–" if entry is None else _value(entry.value, entry.ci_low, entry.ci_high)
                cells.append(Cell(text, strong=method in best))
            notes = [_verdict(t, comparison.directions[key], names) + f" (p {_p(t.p_holm, t)})" for t in by_key.get(key, [])]
            cells.append(Cell("; ".join(notes) or "–"))
            rows.append(cells)
        tables.append(Table(f"{kind} / {domain} / {suite}", ["metric", "task", "dir", *(names[m] for m in comparison.methods),
                                                              "significant differences"], rows))
    pairs: dict[tuple[str, str], list[PairedTest]] = {}
    for test in comparison.tests:
        pairs.setdefault((test.first, test.second), []).append(test)
    for (first, second), tests in pairs.items():
        rows = []
        for test in tests:
            tested = test.p_value is not None
            rows.append([Cell("/".join(test.key[:3])), Cell(test.key[3]), Cell(test.key[4]),
                         Cell(str(test.n_shared) if tested else "–"),
                         Cell(_test_name(test) if tested else test.note),
                         Cell(_diff(test) if tested else "–"),
                         Cell(_p(test.p_value, test) if tested else "–"),
                         Cell(_p(test.p_holm, test) if tested else "–"),
                         Cell("yes" if test.significant else "", strong=test.significant)])
        tables.append(Table(f"Paired tests: {names[first]} vs {names[second]}",
                            ["family", "metric", "task", "n", "test",
                             f"difference ({names[first]} − {names[second]}) [95% CI]",
                             "p", "p (Holm)", "sig."], rows))
    return tables


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
        BOARD_HEADER, board_lines, board_rows, board_title, cd_diagram_text, headline,
    )

    lines = ["", "## Leaderboard: average rank per suite", "", f"- {_md(LEADERBOARD_NOTE)}"]
    lines += [f"- {_md(headline(board, names))}" for board in comparison.boards]
    for board in comparison.boards:
        lines += ["", f"### {_md(board_title(board))}", ""]
        lines += [f"- {_md(line)}" for line in board_lines(board, names)]
        if board.blocks:
            lines += ["", "| " + " | ".join(BOARD_HEADER) + " |", "|" + "---|" * len(BOARD_HEADER)]
            lines += ["| " + " | ".join(f"**{_md(c)}**" if strong and c else _md(c) for c in row) + " |"
                      for row, strong in board_rows(board, names)]
            if len(board.methods) > 1:  # the HTML page's critical-difference diagram, drawn in text
                lines += ["", "```text", cd_diagram_text(board, names), "```"]
    return lines


def _html_leaderboard(comparison: Comparison, names: dict[str, str]) -> list[str]:
    import base64

    from cfcheck.reporting.compare_board import (
        BOARD_HEADER, board_lines, board_rows, board_title, cd_diagram_png, headline,
    )

    esc = html.escape
    parts = ["<h2>Leaderboard: average rank per suite</h2>", f"<p class='muted'>{esc(LEADERBOARD_NOTE)}</p><ul>",
             *(f"<li>{esc(headline(board, names))}</li>" for board in comparison.boards), "</ul>"]
    for board in comparison.boards:
        parts.append(f"<h3>{esc(board_title(board))}</h3><ul class='muted'>")
        parts += [f"<li>{esc(line)}</li>" for line in board_lines(board, names)] + ["</ul>"]
        if not board.blocks:
            continue
        parts.append("<div class='board'><table><tr>" + "".join(f"<th>{esc(h)}</th>" for h in BOARD_HEADER) + "</tr>")
        for row, strong in board_rows(board, names):
            cells = "".join(f"<td class='strong'>{esc(c)}</td>" if strong else f"<td>{esc(c)}</td>" for c in row)
            parts.append(f"<tr class='sig'>{cells}</tr>" if strong else f"<tr>{cells}</tr>")
        image = base64.b64encode(cd_diagram_png(board, names)).decode("ascii")
        parts.append(f"</table><img alt='critical-difference diagram of {esc(board_title(board))}' "
                     f"src='data:image/png;base64,{image}'></div>")
    return parts


def _markdown_table(table: Table) -> list[str]:
    lines = ["", f"## {_md(table.title)}", "", "| " + " | ".join(_md(h) for h in table.header) + " |",
             "|" + "---|" * len(table.header)]
    for row in table.rows:
        lines.append("| " + " | ".join(f"**{_md(c.text)}**" if c.strong and c.text else _md(c.text)
                                       for c in row) + " |")
    return lines


#: how to read the leaderboard, on both views
LEADERBOARD_NOTE = (
    "Within each (task, metric) block the methods are ranked by the metric's direction (1 = best, ties share "
    "their average rank; metrics without a direction are left out, as are blocks where a method has no value); "
    "a method's place is its average rank over the blocks of its suite. Friedman's test asks whether the ranks "
    "differ at all, Nemenyi's test which pairs differ; a leader is marked only where Friedman's test rejects and "
    "Nemenyi's test separates it from the runner-up at the level shown (with two methods: a sign test over the "
    "blocks). A suite ranks what its metrics reward: closeness rewards changing nothing, so a do-nothing control "
    "can lead it. Set-level scores (FID, KID) enter as blocks; they have no per-input values and no paired test.")

#: the comparison page's own rules, after the scorecard's
_COMPARE_CSS = ("div.board{display:flex;flex-wrap:wrap;gap:16px;align-items:flex-start}"
                "div.board img{max-width:760px;width:100%}"
                "td.strong{font-weight:600}tr.sig{background:#eef6ff}table.behind td{vertical-align:top;max-width:260px}"
                "table.behind td.clean{background:#e8f5e9;color:#2e7d32;text-align:center}"
                "table.behind td.trails{background:#ffebee}")


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
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>{title}</title>"
             f"<meta name='viewport' content='width=device-width'><style>{PAGE_CSS}{_COMPARE_CSS}</style></head><body>",
             f"<h1>{title}</h1><ul class='muted'>",
             *(f"<li>{esc(line)}</li>" for line in _header_lines(comparison)), "</ul>",
             *_html_leaderboard(comparison, names),
             f"<h2>{esc(behind.title)}</h2><div class='scroll'><table class='behind'><tr>",
             "".join(f"<th>{esc(h)}</th>" for h in behind.header) + "</tr>"]
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
            row_html = "".join(f"<td class='strong'>{esc(c.text)}</td>" if c.strong else f"<td>{esc(c.text)}</td>"
                               for c in row)
            parts.append(f"<tr class='sig'>{row_html}</tr>" if significant else f"<tr>{row_html}</tr>")
        parts.append("</table></div></details>" if paired else "</table></div>")
    parts.append("</body></html>\n")
    return "\n".join(parts)


def _header_lines(comparison: Comparison) -> list[str]:
    card = comparison.runs[0].scorecard
    lines = ["runs: " + ", ".join(f"{run.label} ({run.path})" for run in comparison.runs),
             f"profile {card.get('profile', {}).get('name')}, seeds {card.get('provenance', {}).get('seeds')}, "
             f"{len(comparison.keys)} scores present in at least two runs",
             "paired tests on the shared inputs of every pair of methods: McNemar's exact test for 0/1 values, "
             f"otherwise a paired bootstrap of the mean difference ({comparison.resamples} resamples); "
             f"p-values Holm-corrected over each pair's tests, significant when p(Holm) < {comparison.alpha:g}"]
    return lines


def _ranked(test: PairedTest, direction: str) -> tuple[str, str, float]:
    """(better, worse, sign turning ``first - second`` into ``better - worse``); for direction
    "none" the first method is listed first."""
    if direction == "none" or ((test.difference or 0.0) > 0) == (direction == "higher"):
        return test.first, test.second, 1.0
    return test.second, test.first, -1.0


def _verdict(test: PairedTest, direction: str, names: dict[str, str]) -> str:
    better, worse, _ = _ranked(test, direction)
    return f"{names[better]} {'differs from' if direction == 'none' else 'better than'} {names[worse]}"


def _holm(test: PairedTest) -> float:
    """A significant test's Holm-adjusted p-value (every significant test has one)."""
    assert test.p_holm is not None, "a significant test is Holm-adjusted"
    return test.p_holm


def _p(p: float | None, test: PairedTest, bound: bool = False) -> str:
    """A p-value; a bootstrap's below 1e-16 shows only that bound (its normal tail is not
    meaningful that far out), McNemar's exact p-values are shown as they are."""
    assert p is not None, "only a tested pair has p-values"
    if p < 1e-16 and test.test != "mcnemar":
        return "< 1e-16"
    return f"{'<= ' if bound else ''}{p:.2g}"


def _test_name(test: PairedTest) -> str:
    return {"mcnemar": "McNemar", "bootstrap": "bootstrap"}.get(test.test or "", str(test.test))


def _diff(test: PairedTest) -> str:
    return f"{test.difference:+.4g} [{test.ci_low:+.4g}, {test.ci_high:+.4g}]"


def _value(value: float | None, low: float | None, high: float | None) -> str:
    if value is None:
        return "nan"
    return f"{value:.4g}" + (f" [{low:.4g}, {high:.4g}]" if low is not None and high is not None else "")


def _md(text: str) -> str:
    """Keep user-supplied text from breaking a Markdown table row."""
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")
