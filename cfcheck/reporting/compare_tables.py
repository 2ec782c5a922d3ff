"""The comparison laid out as plain tables and sentences, shared by the Markdown and HTML views of
:mod:`.compare_render`: the display names of the methods, "behind the best" (per method and
suite, the metrics on which a paired test puts it significantly behind the metric's best method),
"where they really differ" (the significant paired differences in words), one table per metric
family (each method's value and 95% CI, the best in bold) and one table of paired tests per pair
of methods.
"""

from __future__ import annotations

from dataclasses import dataclass

from cfcheck.metrics.key import MetricKey
from cfcheck.reporting.compare import Comparison, Key, PairedTest

__all__ = [
    "ARROWS",
    "PROTOCOL_MARK",
    "Cell",
    "SUMMARY_LIMIT",
    "Table",
    "behind_best",
    "behind_best_table",
    "comparison_tables",
    "differ_lines",
    "display_names",
    "paired_test_name",
]

#: how many significant differences the summary lists before "… and N more"
SUMMARY_LIMIT = 20
#: appended to every row (and table title) of a score whose runs' protocols differ (compared with --allow)
PROTOCOL_MARK = "⚠ protocol differs"
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
    while (
        len(methods) > 1
        and all(len(parts) > shared + 1 for parts in split)
        and len({parts[shared] for parts in split}) == 1
    ):
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
    return {
        m: {
            f: {k: v for k, v in metrics.items() if v[0]}
            for f, metrics in families.items()
            if any(v[0] for v in metrics.values())
        }
        for m, families in out.items()
    }


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
                variant = metric[len(card) + 1 :]
                grouped.setdefault(card, []).append(f"{variant + ' ' if variant else ''}{count}/{total}")
            text = "; ".join(f"{name} {', '.join(parts)}" for name, parts in grouped.items())
            cells.append(Cell(text or "–", strong=not metrics))
        rows.append(cells)
    return Table(
        "Behind the best: metrics on which a method is significantly worse than the leader (tasks)",
        [
            "method",
            *("/".join(f) + (f" {PROTOCOL_MARK}" if f[:2] in comparison.protocol_notes else "") for f in families),
        ],
        rows,
    )


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
    for (better, worse, family), members in sorted(
        groups.items(), key=lambda g: (max(_holm(t) for _, t in g[1]), g[0])
    ):
        total = tested[(frozenset((better, worse)), family)]
        low, high = f"{min(d for d, _ in members):+.3g}", f"{max(d for d, _ in members):+.3g}"
        verb = "differs from" if comparison.directions[members[0][1].key] == "none" else "better than"
        where = members[0][1].key[4] if total == 1 else f"{len(members)} of {total} tasks"
        better, worse = names[better], names[worse]
        lines.append(
            f"{better} {verb} {worse} on {'/'.join(family[:2])} {family[2]} {family[3]}, {where} "
            f"({better} − {worse} = {low if low == high else f'{low} to {high}'}, "
            f"{paired_test_name(members[0][1])}, p(Holm) {_p(max(_holm(t) for _, t in members), members[0][1], bound=True)})"
        )
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
        mark = f" {PROTOCOL_MARK}" if (kind, domain) in comparison.protocol_notes else ""
        for key in keys:
            entries, best = comparison.entries[key], comparison.best[key]
            cells = [Cell(key[3] + mark), Cell(key[4]), Cell(ARROWS.get(comparison.directions[key], "–"))]
            for method in comparison.methods:
                entry = entries.get(method)
                text = "–" if entry is None else _value(entry.value, entry.ci_low, entry.ci_high)
                cells.append(Cell(text, strong=method in best))
            notes = [
                _verdict(t, comparison.directions[key], names) + f" (p {_p(t.p_holm, t)})" for t in by_key.get(key, [])
            ]
            cells.append(Cell("; ".join(notes) or "–"))
            rows.append(cells)
        tables.append(
            Table(
                f"{kind} / {domain} / {suite}{mark}",
                ["metric", "task", "dir", *(names[m] for m in comparison.methods), "significant differences"],
                rows,
            )
        )
    pairs: dict[tuple[str, str], list[PairedTest]] = {}
    for test in comparison.tests:
        pairs.setdefault((test.first, test.second), []).append(test)
    for (first, second), tests in pairs.items():
        rows = []
        for test in tests:
            tested = test.p_value is not None
            rows.append(
                [
                    Cell(
                        "/".join(test.key[:3])
                        + (f" {PROTOCOL_MARK}" if test.key[:2] in comparison.protocol_notes else "")
                    ),
                    Cell(test.key[3]),
                    Cell(test.key[4]),
                    Cell(str(test.n_shared) if tested else "–"),
                    Cell(paired_test_name(test) if tested else test.note),
                    Cell(_diff(test) if tested else "–"),
                    Cell(_p(test.p_value, test) if tested else "–"),
                    Cell(_p(test.p_holm, test) if tested else "–"),
                    Cell("yes" if test.significant else "", strong=test.significant),
                ]
            )
        tables.append(
            Table(
                f"Paired tests: {names[first]} vs {names[second]}",
                [
                    "family",
                    "metric",
                    "task",
                    "n",
                    "test",
                    f"difference ({names[first]} − {names[second]}) [95% CI]",
                    "p",
                    "p (Holm)",
                    "sig.",
                ],
                rows,
            )
        )
    return tables


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


def paired_test_name(test: PairedTest) -> str:
    return {"mcnemar": "McNemar", "bootstrap": "bootstrap", "permutation": "set permutation"}.get(
        test.test or "", str(test.test)
    )


def _diff(test: PairedTest) -> str:
    if test.ci_low is None or test.ci_high is None:  # a set-level permutation test: no interval
        return f"{test.difference:+.4g}"
    return f"{test.difference:+.4g} [{test.ci_low:+.4g}, {test.ci_high:+.4g}]"


def _value(value: float | None, low: float | None, high: float | None) -> str:
    if value is None:
        return "nan"
    return f"{value:.4g}" + (f" [{low:.4g}, {high:.4g}]" if low is not None and high is not None else "")
