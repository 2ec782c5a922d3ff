"""The rank-based leaderboard of cfcheck compare, on score tables whose answers are known by
construction: average ranks against a brute-force loop, Friedman's statistic against its formula
and scipy, Nemenyi against Demšar's table (and scikit-posthocs where it is installed)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st

from cfcheck.reporting.compare_board import board_lines, cd_diagram_png, cd_diagram_text, headline
from cfcheck.reporting.compare_ranks import (
    block_ranks,
    critical_difference,
    leaderboards,
    nemenyi,
    not_different_groups,
)

FAMILY = ("vce", "morpho", "closeness")


def frame(
    values: dict[str, list[float]], directions: list[str] | None = None, family: tuple[str, str, str] = FAMILY
) -> pd.DataFrame:
    """A score table: method -> one value per block (block b is task "t{b}", metric "m")."""
    n = len(next(iter(values.values())))
    directions = directions or ["lower"] * n
    rows = [
        {
            "method": method,
            "kind": family[0],
            "domain": family[1],
            "suite": family[2],
            "metric": "m",
            "task": f"t{b:03d}",
            "value": v,
            "direction": directions[b],
        }
        for method, column in values.items()
        for b, v in enumerate(column)
    ]
    return pd.DataFrame(rows)


def the_board(values, directions=None, **kwargs):
    (board,) = leaderboards(frame(values, directions), **kwargs)
    return board


def test_a_method_better_by_a_margin_on_every_block_leads_significantly():
    rng = np.random.default_rng(0)
    base = rng.normal(50, 10, size=20)
    board = the_board({"b": list(base + 1.0), "c": list(base + 2.0), "a": list(base)})  # lower is better
    assert board.methods == ["a", "b", "c"] and board.average_ranks == {"a": 1.0, "b": 2.0, "c": 3.0}
    n, k = 20, 3  # perfect concordance: chi2 = 12 N / (k (k + 1)) * sum(R^2) - 3 N (k + 1) = N (k - 1)
    assert board.statistic == pytest.approx(12 * n / (k * (k + 1)) * (1 + 4 + 9) - 3 * n * (k + 1)) == 40.0
    assert board.p_value == pytest.approx(scipy.stats.chi2.sf(40.0, 2))
    assert board.leader == "a" and board.runner_up_p < 0.05
    assert "a leads, significantly" in headline(board, {m: m for m in board.methods})


def test_equal_methods_share_ranks_and_nothing_is_significant():
    values = list(np.linspace(0, 1, 15))
    board = the_board({"a": values, "b": values, "c": values})
    assert board.average_ranks == {"a": 2.0, "b": 2.0, "c": 2.0}
    assert (board.statistic, board.p_value, board.leader) == (0.0, 1.0, None)
    assert set(board.pairwise.values()) == {1.0}
    assert not_different_groups(board) == [["a", "b", "c"]]
    assert "share the best average rank" in headline(board, {m: m for m in "abc"})


def test_too_few_blocks_for_significance():
    # a beats b beats c on 3 blocks: Friedman just rejects (chi2 = 6, p = e^-3 = 0.0498), but the
    # leader's 1-rank lead is below Nemenyi's CD (2.343 * sqrt(12 / 18) = 1.91): no leader
    board = the_board({"a": [0.0] * 3, "b": [1.0] * 3, "c": [2.0] * 3})
    assert board.statistic == pytest.approx(6.0) and board.p_value == pytest.approx(math.exp(-3.0))
    assert board.critical_difference == pytest.approx(critical_difference(3, 3)) and board.critical_difference > 1
    assert board.methods[0] == "a" and board.leader is None
    assert "not significant (Nemenyi p = " in headline(board, {m: m for m in "abc"})


@pytest.mark.parametrize(("blocks", "leads"), [(5, False), (6, True)])
def test_two_methods_use_the_sign_test(blocks, leads):
    # all blocks to a: p = 2 / 2^N, 0.0625 with 5 blocks, 0.031 with 6
    board = the_board({"a": [0.0] * blocks, "b": [1.0] * blocks})
    assert board.test == "sign" and board.p_value == pytest.approx(2 * 0.5**blocks)
    assert (board.leader == "a") is leads and board.critical_difference is None


def test_blocks_a_method_lacks_and_directionless_metrics_are_dropped_and_counted():
    scores = frame({"a": [0.0] * 12, "b": [1.0] * 12, "c": [2.0] * 12}, directions=["lower"] * 10 + ["none"] * 2)
    scores.loc[(scores["method"] == "c") & scores["task"].isin(["t000", "t001", "t002"]), "value"] = math.nan
    scores = scores[~((scores["method"] == "b") & (scores["task"] == "t003"))]  # no row at all
    (board,) = leaderboards(scores)
    assert len(board.blocks) == 6 and board.dropped == {"a method has no value": 4, "direction none": 2}
    assert "6 (task, metric) blocks ranked; 6 dropped (a method has no value: 4, direction none: 2)" in board_lines(
        board, {m: m for m in "abc"}
    )


def test_higher_is_better_ranks_the_largest_first():
    board = the_board({"a": [0.9] * 8, "b": [0.1] * 8, "c": [0.5] * 8}, directions=["higher"] * 8)
    assert board.methods == ["a", "c", "b"]


def test_families_are_ranked_separately_over_the_methods_present():
    scores = pd.concat(
        [
            frame({"a": [0.0] * 4, "b": [1.0] * 4}),
            frame({"b": [0.0] * 4, "c": [1.0] * 4}, family=("vce", "morpho", "validity")),
            frame({"c": [0.0] * 4}, family=("vce", "morpho", "realism")),
        ]
    )
    boards = leaderboards(scores)
    assert [(b.family[2], b.methods) for b in boards] == [("closeness", ["a", "b"]), ("validity", ["b", "c"])]
    with pytest.raises(ValueError, match="a has two values for vce/morpho/closeness m t000"):
        leaderboards(pd.concat([scores, scores.iloc[:1]]))


def brute_force_ranks(values: np.ndarray, directions: list[str]) -> np.ndarray:
    ranks = np.zeros_like(values, dtype=float)
    for b, row in enumerate(values):
        for i, v in enumerate(row):
            better = sum(1 for w in row if (w < v if directions[b] == "lower" else w > v))
            tied = sum(1 for w in row if w == v) - 1
            ranks[b, i] = 1 + better + tied / 2
    return ranks


blocks_strategy = st.integers(2, 6).flatmap(
    lambda k: st.lists(
        st.tuples(st.lists(st.integers(0, 3), min_size=k, max_size=k), st.sampled_from(["higher", "lower"])),
        min_size=1,
        max_size=12,
    )
)


@settings(max_examples=60, deadline=None)
@given(blocks_strategy, st.randoms(use_true_random=False))
def test_ranks_match_brute_force_sum_per_block_and_follow_relabelling(blocks, rnd):
    values = np.array([row for row, _ in blocks], dtype=float)
    directions = [d for _, d in blocks]
    k = values.shape[1]
    ranks = block_ranks(values, directions)
    assert np.array_equal(ranks, brute_force_ranks(values, directions))
    assert np.allclose(ranks.sum(axis=1), k * (k + 1) / 2)
    names = [f"m{i}" for i in range(k)]
    board = the_board({n: list(values[:, i]) for i, n in enumerate(names)}, directions)
    assert board.average_ranks == pytest.approx({n: ranks[:, i].mean() for i, n in enumerate(names)})
    order = list(range(k))
    rnd.shuffle(order)  # relabel: method m_i's values now go under the name r_{order[i]}
    relabelled = the_board({f"r{order[i]}": list(values[:, i]) for i in range(k)}, directions)
    assert relabelled.average_ranks == pytest.approx(
        {f"r{order[i]}": board.average_ranks[n] for i, n in enumerate(names)}
    )
    assert (relabelled.p_value is None) == (board.p_value is None)
    if board.p_value is not None:
        assert relabelled.p_value == pytest.approx(board.p_value)
    expected = None if board.leader is None else f"r{order[names.index(board.leader)]}"
    assert relabelled.leader == expected


@settings(max_examples=40, deadline=None)
@given(st.integers(3, 7), st.integers(2, 30), st.integers(0, 2**31))
def test_friedman_statistic_matches_the_formula_and_scipy(k, n, seed):
    values = np.random.default_rng(seed).normal(size=(n, k))  # continuous: no ties
    board = the_board({f"m{i}": list(values[:, i]) for i in range(k)})
    rank_sums = block_ranks(values, ["lower"] * n).sum(axis=0)
    by_hand = 12.0 / (n * k * (k + 1)) * float(np.sum(rank_sums**2)) - 3.0 * n * (k + 1)
    assert board.statistic == pytest.approx(by_hand)
    assert board.statistic == pytest.approx(scipy.stats.friedmanchisquare(*values.T).statistic)


def test_critical_difference_matches_demsar_table():
    # Demšar (2006), Table 5(a): q_0.05 = 2.343 (k = 3), 2.569 (4), 2.728 (5), 3.164 (10)
    for k, q in ((3, 2.343), (4, 2.569), (5, 2.728), (10, 3.164)):
        assert critical_difference(k, 6) == pytest.approx(q * math.sqrt(k * (k + 1) / 36.0), abs=2e-3)


@settings(max_examples=40, deadline=None)
@given(st.integers(3, 8), st.integers(2, 40), st.integers(0, 2**31))
def test_nemenyi_is_significant_exactly_beyond_the_critical_difference(k, n, seed):
    ranks = np.random.default_rng(seed).uniform(1, k, size=k)
    p, cd = nemenyi(ranks, n), critical_difference(k, n)
    for i, j in itertools.combinations(range(k), 2):
        gap = abs(ranks[i] - ranks[j])
        if abs(gap - cd) > 1e-6:
            assert (p[i, j] < 0.05) == (gap > cd)
        assert p[i, j] == p[j, i]


def test_nemenyi_matches_scikit_posthocs():
    sp = pytest.importorskip("scikit_posthocs")
    values = np.random.default_rng(4).normal(size=(25, 5)) + np.array([0.0, 0.3, 0.6, 0.9, 1.2])
    board = the_board({f"m{i}": list(values[:, i]) for i in range(5)})
    theirs = sp.posthoc_nemenyi_friedman(values)
    for i, j in itertools.permutations(range(5), 2):
        assert board.pairwise[(f"m{i}", f"m{j}")] == pytest.approx(theirs.iloc[i, j], rel=1e-6, abs=1e-12)


def test_groups_and_the_diagram():
    # a, b within the CD of one another, c far behind both
    board = the_board({"a": [0.0, 1.0] * 10, "b": [1.0, 0.0] * 10, "c": [5.0] * 20})
    assert board.average_ranks == {"a": 1.5, "b": 1.5, "c": 3.0}
    assert not_different_groups(board) == [["a", "b"]] and board.leader is None
    png = cd_diagram_png(board, {"a": "a", "b": "b", "c": "c"})
    assert png.startswith(b"\x89PNG") and len(png) > 2000


def test_the_text_diagram_puts_each_method_at_its_rank_and_joins_the_groups():
    # a and b tie at 1.5, c is last at 3.0: on a 40-column axis from rank 1 to 3, columns 10 and 40
    board = the_board({"a": [0.0, 1.0] * 10, "b": [1.0, 0.0] * 10, "c": [5.0] * 20})
    lines = cd_diagram_text(board, {m: m for m in "abc"}, width=40).splitlines()
    pad = 3  # the longest name and two spaces
    assert lines[0][pad:].split() == ["1", "2", "3"] and lines[1][pad] == "├" and lines[1][pad + 40] == "┤"
    marks = {line[0]: line.index("●") - pad for line in lines[2:5]}
    assert marks == {"a": 10, "b": 10, "c": 40}
    assert lines[2].endswith("1.50") and lines[4].endswith("3.00")
    (group,) = [line for line in lines if "not different" in line]
    assert group[pad:].index("━") == 10 and group.count("━") == 1 and group.endswith("not different: a, b")
    cd = lines[-1]
    assert cd.startswith("CD") and cd.index("┤") - cd.index("├") == round(board.critical_difference / 2 * 40)


def test_the_text_diagram_marks_only_a_significant_leader():
    rng = np.random.default_rng(0)
    base = rng.normal(50, 10, size=20)
    led = the_board({"b": list(base + 1.0), "c": list(base + 2.0), "a": list(base)})
    text = cd_diagram_text(led, {m: m for m in "abc"})
    assert (
        led.leader == "a" and text.count("◆") == 1 and "◆" in next(line for line in text.splitlines() if line[0] == "a")
    )
    assert "not different" not in text  # every pair differs significantly
    tied = the_board({"a": [0.0, 1.0] * 10, "b": [1.0, 0.0] * 10, "c": [5.0] * 20})
    assert "◆" not in cd_diagram_text(tied, {m: m for m in "abc"})


def test_a_family_without_a_shared_block_is_listed_not_ranked():
    scores = frame({"a": [0.0, math.nan], "b": [math.nan, 1.0]})
    (board,) = leaderboards(scores)
    assert board.blocks == [] and board.dropped == {"a method has no value": 2} and board.leader is None
    assert headline(board, {"a": "a", "b": "b"}) == (
        "vce / morpho / closeness: not ranked (no block with a value for every method)"
    )
