"""Markdown and HTML views of a :class:`~cfcheck.reporting.compare.Comparison`.

Both views show the same content, built once as plain tables by :func:`comparison_tables`:

1. a header (runs, profile, method of the tests) and each method's wins;
2. "Where they really differ": the significant paired differences, smallest adjusted p first;
3. one leaderboard table per metric family (a suite of one kind and domain): each method's value
   and 95% CI, the best in bold, and the significant differences of that row;
4. per pair of methods, the paired tests (n shared inputs, test, difference with its CI, raw and
   Holm-adjusted p), significant ones marked "yes".

The HTML page is self-contained (inline style, no scripts) and every user-supplied string
(method names, paths, metric and task names) goes through :func:`html.escape`.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

from cfcheck.reporting.compare import Comparison, Key, PairedTest

__all__ = ["Cell", "Table", "comparison_tables", "render_markdown", "render_html", "differ_lines"]

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
    lines = []
    for (better, worse, family), members in sorted(groups.items(), key=lambda g: (max(t.p_holm for _, t in g[1]), g[0])):
        total = tested[(frozenset((better, worse)), family)]
        low, high = f"{min(d for d, _ in members):+.3g}", f"{max(d for d, _ in members):+.3g}"
        verb = "differs from" if comparison.directions[members[0][1].key] == "none" else "better than"
        where = members[0][1].key[4] if total == 1 else f"{len(members)} of {total} tasks"
        lines.append(f"{better} {verb} {worse} on {'/'.join(family[:2])} {family[2]} {family[3]}, {where} "
                     f"({better} − {worse} = {low if low == high else f'{low} to {high}'}, "
                     f"{_test_name(members[0][1])}, p(Holm) {_p(max(t.p_holm for _, t in members), members[0][1], bound=True)})")
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
            notes = [_verdict(t, comparison.directions[key]) + f" (p {_p(t.p_holm, t)})" for t in by_key.get(key, [])]
            cells.append(Cell("; ".join(notes) or "–"))
            rows.append(cells)
        tables.append(Table(f"{kind} / {domain} / {suite}", ["metric", "task", "dir", *comparison.methods,
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
        tables.append(Table(f"Paired tests: {first} vs {second}",
                            ["family", "metric", "task", "n", "test", f"difference ({first} − {second}) [95% CI]",
                             "p", "p (Holm)", "sig."], rows))
    return tables


def render_markdown(comparison: Comparison) -> str:
    """The comparison as a Markdown document.

    Args:
        comparison: the comparison to render.

    Returns:
        Markdown text ending in a newline.
    """
    lines = [f"# cfcheck comparison: {' vs '.join(f'`{_md(m)}`' for m in comparison.methods)}", ""]
    lines += [f"- {_md(line)}" for line in _header_lines(comparison)]
    lines += ["", "## Where they really differ", ""]
    lines += [f"- {_md(line)}" for line in differ_lines(comparison)] or ["- no significant differences"]
    for table in comparison_tables(comparison):
        lines += ["", f"## {_md(table.title)}", "", "| " + " | ".join(_md(h) for h in table.header) + " |",
                  "|" + "---|" * len(table.header)]
        for row in table.rows:
            lines.append("| " + " | ".join(f"**{_md(c.text)}**" if c.strong and c.text else _md(c.text)
                                           for c in row) + " |")
    return "\n".join(lines) + "\n"


def render_html(comparison: Comparison) -> str:
    """The comparison as a self-contained HTML page (every user-supplied string escaped).

    Args:
        comparison: the comparison to render.

    Returns:
        The HTML document.
    """
    esc = html.escape
    title = esc("cfcheck comparison: " + " vs ".join(comparison.methods))
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>{title}</title><style>"
             "body{font-family:sans-serif}td,th{padding:2px 8px;border-bottom:1px solid #ddd;text-align:left}"
             "td.strong{font-weight:bold}tr.sig{background:#eef6ff}</style></head><body>",
             f"<h1>{title}</h1><ul>", *(f"<li>{esc(line)}</li>" for line in _header_lines(comparison)), "</ul>",
             "<h2>Where they really differ</h2><ul>"]
    parts += [f"<li>{esc(line)}</li>" for line in differ_lines(comparison)] or ["<li>no significant differences</li>"]
    parts.append("</ul>")
    for table in comparison_tables(comparison):
        paired = table.title.startswith("Paired tests")
        parts.append(f"<details><summary>{esc(table.title)}</summary>" if paired else f"<h2>{esc(table.title)}</h2>")
        parts.append("<table><tr>" + "".join(f"<th>{esc(h)}</th>" for h in table.header) + "</tr>")
        for row in table.rows:
            significant = paired and row[-1].strong
            cells = "".join(f"<td class='strong'>{esc(c.text)}</td>" if c.strong else f"<td>{esc(c.text)}</td>"
                            for c in row)
            parts.append(f"<tr class='sig'>{cells}</tr>" if significant else f"<tr>{cells}</tr>")
        parts.append("</table></details>" if paired else "</table>")
    parts.append("</body></html>\n")
    return "\n".join(parts)


def _header_lines(comparison: Comparison) -> list[str]:
    card = comparison.runs[0].scorecard
    lines = ["runs: " + ", ".join(f"{run.label} ({run.path})" for run in comparison.runs),
             f"profile {card.get('profile', {}).get('name')}, seeds {card.get('provenance', {}).get('seeds')}, "
             f"{len(comparison.keys)} scores present in at least two runs",
             "wins (best value by the metric's direction, ties count for each): "
             + ", ".join(f"{m} {comparison.wins[m]}" for m in comparison.methods),
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


def _verdict(test: PairedTest, direction: str) -> str:
    better, worse, _ = _ranked(test, direction)
    return f"{better} {'differs from' if direction == 'none' else 'better than'} {worse}"


def _p(p: float, test: PairedTest, bound: bool = False) -> str:
    """A p-value; a bootstrap's below 1e-16 shows only that bound (its normal tail is not
    meaningful that far out), McNemar's exact p-values are shown as they are."""
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
