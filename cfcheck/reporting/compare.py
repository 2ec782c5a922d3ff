"""Compare runs of different methods made with the same profile: leaderboard and paired tests.

A run folder (what a run writes under the report dir) holds ``scorecard.json`` and
``samples.csv``. :func:`load_run` reads one, :func:`check_comparable` refuses runs that were not
made under the same conditions (profile, seeds, protocols, reference models, scorecard format;
with ``allow``, runs of different protocols are compared and their rows marked), and
:func:`compare_runs` builds a :class:`Comparison`:

* **Leaderboard** (:mod:`.compare_ranks`). Per kind, domain and suite, the methods ordered by
  their average rank over the (task, metric) blocks every one of them has, with Friedman's test
  and Nemenyi's post-hoc test; the leader is marked only where its lead over the runner-up is
  significant. Built on the long-format score table of :mod:`cfcheck.results`.
* **Per score**, each method's value and 95% CI; the best value by the metric's direction is
  shown in bold (ties all count as best; direction ``"none"`` has no best).
* **Paired tests, every pair of methods** (:mod:`.compare_paired`). The pair is matched on the
  ``input`` label column of ``samples.csv`` (the input's position in its task), never on the
  ``sample`` index, since abstentions leave gaps; only inputs present in both runs count. When
  every paired value is 0 or 1 the test is **McNemar's exact test**; otherwise a **paired
  bootstrap** of the mean difference (seeded). The reported difference is the mean of ``first -
  second`` over the shared inputs with a percentile-bootstrap 95% CI.
* **Multiplicity.** For each pair of runs, the p-values of all its tests (every metric and task)
  are **Holm-corrected** together; a comparison is "significantly different" when its adjusted
  p-value is below ``alpha`` (0.05).

Set-level realism scores (``fid_*``, ``kid_*``, ``density_*``, ``coverage_*``, ``scm_fid``,
``scm_kid``) have one value per run and no per-input values: they enter the leaderboard's ranks as
blocks like the others. Their paired test is a **permutation test** over the shared inputs
(:mod:`.compare_sets`): it needs the counterfactuals' embedding features, which a run keeps in
``set_features.npz`` when its suite records them; without them the score is listed with a note
and no test. Format-2 runs have no ``input`` column: they can be listed against each other, but
pairing is refused with a note.
"""

from __future__ import annotations

import itertools
import math
import zlib
from dataclasses import dataclass, field, replace

import numpy as np

from cfcheck.core.answer_reads import answer_read_of
from cfcheck.core.set_features import SET_FEATURES_FILE
from cfcheck.reporting.compare_load import (  # noqa: F401  (SUPPORTED_FORMATS re-exported)
    SUPPORTED_FORMATS,
    CompareError,
    Key,
    Run,
    check_comparable,
    load_run,
    read_number,
    score_key,
)
from cfcheck.reporting.compare_paired import holm, mcnemar_exact, paired_bootstrap
from cfcheck.reporting.compare_ranks import Board, leaderboards
from cfcheck.reporting.compare_sets import is_set_level, paired_set_test
from cfcheck.results import metric_direction, scores_frame

__all__ = [
    "CompareError",
    "Run",
    "Entry",
    "PairedTest",
    "Comparison",
    "load_run",
    "check_comparable",
    "compare_runs",
    "mcnemar_exact",
    "paired_bootstrap",
    "holm",
    "Board",
]

#: permutations per set-level test (each recomputes the set statistic; their spread sets the p-value)
SET_RESAMPLES = 200


@dataclass(frozen=True)
class Entry:
    """One method's score on one key of the leaderboard."""

    value: float | None
    ci_low: float | None
    ci_high: float | None
    n: int | None


@dataclass(frozen=True)
class PairedTest:
    """The paired comparison of two methods on one score key.

    ``difference`` is ``first - second``; ``test`` is ``"mcnemar"``, ``"bootstrap"``,
    ``"permutation"`` (a set-level score; no CI) or ``None`` (then ``note`` says why no test was made).
    """

    key: Key
    first: str
    second: str
    n_shared: int
    test: str | None = None
    difference: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    p_value: float | None = None
    p_holm: float | None = None
    significant: bool = False
    note: str = ""


@dataclass
class Comparison:
    """The result of :func:`compare_runs`.

    Attributes:
        methods: run labels, in the order the runs were given.
        runs: the runs themselves.
        keys: every key present in at least two runs, sorted.
        entries: ``key -> {label: Entry}`` for the runs that have the key.
        directions: ``key -> "higher" | "lower" | "none"``.
        best: ``key -> labels with the best value`` (empty for direction "none").
        boards: the rank-based leaderboard, one :class:`Board` per kind, domain and suite.
        tests: every paired test, grouped by run pair in run order.
        alpha: significance level after Holm correction.
        resamples: bootstrap resamples per test.
        protocol_notes: ``(kind, domain) -> what differs`` where the runs' protocols differ (compared
            with ``allow``); the rows of those scores are marked.
    """

    methods: list[str]
    runs: list[Run]
    keys: list[Key]
    entries: dict[Key, dict[str, Entry]]
    directions: dict[Key, str]
    best: dict[Key, list[str]]
    boards: list[Board] = field(default_factory=list)
    tests: list[PairedTest] = field(default_factory=list)
    alpha: float = 0.05
    resamples: int = 2000
    protocol_notes: dict[tuple[str, str], str] = field(default_factory=dict)

    def significant(self) -> list[PairedTest]:
        """The significant tests, smallest adjusted p-value first."""
        return sorted((t for t in self.tests if t.significant), key=lambda t: (t.p_holm, t.key))


def compare_runs(
    runs: list[Run],
    *,
    resamples: int = 2000,
    seed: int = 0,
    alpha: float = 0.05,
    set_resamples: int = SET_RESAMPLES,
    allow: bool = False,
) -> Comparison:
    """Leaderboard and paired tests of runs made under the same conditions.

    Args:
        runs: runs from :func:`load_run`, in display order.
        resamples: bootstrap resamples per paired test.
        set_resamples: permutations per set-level test (0: no set-level tests).
        seed: base seed of the bootstraps (each key draws from a stream derived from it and the
            key, so results do not depend on the order of the runs).
        alpha: significance level applied to the Holm-adjusted p-values.
        allow: compare runs of different (or unknown) protocols, marking their scores' rows
            (:attr:`Comparison.protocol_notes`) instead of refusing them.

    Returns:
        The :class:`Comparison`.

    Raises:
        CompareError: if the runs cannot be compared (see :func:`check_comparable`).
    """
    protocol_notes = check_comparable(runs, allow=allow)
    runs = _mark_answer_reads(_unique_labels(runs))
    methods = [run.label for run in runs]
    records = [{score_key(s): s for s in run.scorecard["scores"]} for run in runs]
    counts: dict[Key, int] = {}
    for by_key in records:
        for key in by_key:
            counts[key] = counts.get(key, 0) + 1
    keys = sorted(k for k, c in counts.items() if c >= 2)
    entries: dict[Key, dict[str, Entry]] = {}
    directions: dict[Key, str] = {}
    best: dict[Key, list[str]] = {}
    for key in keys:
        present = {run.label: by_key[key] for run, by_key in zip(runs, records) if key in by_key}
        entries[key] = {
            label: Entry(
                read_number(r.get("value")), read_number(r.get("ci_low")), read_number(r.get("ci_high")), r.get("n")
            )
            for label, r in present.items()
        }
        kinds = {metric_direction(key[3], r.get("direction")) for r in present.values()}
        directions[key] = kinds.pop() if len(kinds) == 1 else "none"
        best[key] = _best(entries[key], directions[key])
    scores = scores_frame((run.label, str(run.path), run.scorecard) for run in runs)
    # a record repeated in one scorecard counts once, the last one, as in the per-score tables
    scores = scores.drop_duplicates(["method", "kind", "domain", "suite", "metric", "task"], keep="last")
    boards = leaderboards(scores, alpha=alpha, methods=methods)
    comparison = Comparison(
        methods,
        runs,
        keys,
        entries,
        directions,
        best,
        boards,
        alpha=alpha,
        resamples=resamples,
        protocol_notes=protocol_notes,
    )
    for a, b in itertools.combinations(runs, 2):
        tests = [
            _paired_test(key, a, b, resamples, seed, set_resamples)
            for key in keys
            if key in entries and a.label in entries[key] and b.label in entries[key]
        ]
        comparison.tests += _apply_holm(tests, alpha)
    return comparison


def _paired_test(key: Key, a: Run, b: Run, resamples: int, seed: int, set_resamples: int) -> PairedTest:
    base = PairedTest(key, a.label, b.label, 0)
    stream = [seed, zlib.crc32("\x1f".join(key).encode())]
    if is_set_level(key[3]):
        return _set_test(base, a, b, set_resamples, stream)
    if not (a.has_input and b.has_input):
        return replace(base, note="no paired test (samples.csv has no 'input' column: format-2 run)")
    first, second = a.samples.get(key, {}), b.samples.get(key, {})
    shared = sorted(set(first) & set(second), key=_input_order)
    if not shared:
        return replace(base, note="no paired test (no shared inputs)")
    x = np.array([first[i] for i in shared])
    y = np.array([second[i] for i in shared])
    diff, low, high, p_boot = paired_bootstrap(x - y, resamples=resamples, seed=stream)
    binary = bool(np.all(np.isin(x, (0.0, 1.0))) and np.all(np.isin(y, (0.0, 1.0))))
    p_value = mcnemar_exact(x, y) if binary else p_boot
    return replace(
        base,
        n_shared=len(shared),
        test="mcnemar" if binary else "bootstrap",
        difference=diff,
        ci_low=low,
        ci_high=high,
        p_value=p_value,
    )


def _set_test(base: PairedTest, a: Run, b: Run, resamples: int, stream: list[int]) -> PairedTest:
    task = (base.key[0], base.key[1], base.key[4])
    if resamples <= 0:
        return replace(base, note="no paired test (set-level metric; set tests turned off; ranked as a block)")
    missing = [run.label for run in (a, b) if task not in run.set_features]
    if missing:
        return replace(
            base,
            note=f"no paired test (set-level metric; {' and '.join(missing)} kept no per-input "
            f"features ({SET_FEATURES_FILE}); ranked as a block)",
        )
    try:
        result = paired_set_test(
            base.key[3], a.set_features[task], b.set_features[task], resamples=resamples, seed=stream
        )
    except ValueError as error:
        return replace(base, note=f"no paired test (set-level metric: {error})")
    return replace(
        base, n_shared=result.n_shared, test="permutation", difference=result.difference, p_value=result.p_value
    )


def _apply_holm(tests: list[PairedTest], alpha: float) -> list[PairedTest]:
    tested = [i for i, t in enumerate(tests) if t.p_value is not None]
    adjusted = holm([tests[i].p_value for i in tested])  # type: ignore[misc]
    for i, p in zip(tested, adjusted):
        tests[i] = replace(tests[i], p_holm=p, significant=p < alpha)
    return tests


def _best(entries: dict[str, Entry], direction: str) -> list[str]:
    values = {label: e.value for label, e in entries.items() if e.value is not None and math.isfinite(e.value)}
    if direction not in ("higher", "lower") or not values:
        return []
    target = max(values.values()) if direction == "higher" else min(values.values())
    return [label for label, v in values.items() if v == target]


def _unique_labels(runs: list[Run]) -> list[Run]:
    labels = [run.label for run in runs]
    if len(set(labels)) == len(labels):
        return runs
    named = [f"{run.label} [{run.path.name}]" if labels.count(run.label) > 1 else run.label for run in runs]
    if len(set(named)) != len(named):
        named = [f"{label} #{i + 1}" for i, label in enumerate(named)]
    return [replace(run, label=label) for run, label in zip(runs, named)]


#: appended to the label of a run whose method read the domain's answer (every row and board shows it)
ANSWER_READ_MARK = "[read the answer]"


def _mark_answer_reads(runs: list[Run]) -> list[Run]:
    """The runs, those whose method read the domain's answer labelled so (:data:`ANSWER_READ_MARK`)."""
    return [
        replace(run, label=f"{run.label} {ANSWER_READ_MARK}") if answer_read_of(run.scorecard) is not None else run
        for run in runs
    ]


def _input_order(value: str) -> tuple[int, float | str]:
    try:
        return (0, float(value))
    except ValueError:
        return (1, value)
