"""The rank-based leaderboard: average ranks, Friedman's test and Nemenyi's post-hoc test.

For every family (kind, domain, suite) the **blocks** are its (task, metric) pairs with a
direction ("higher" or "lower", from the metric's card; "none" is left out). Methods are ranked
within each block (1 = best, ties share the average of their ranks) and ordered by their
**average rank** over the blocks. Only blocks where every compared method has a finite value
count; the others are dropped and counted (:attr:`Board.dropped`). Set-level scores (FID, KID)
are blocks like the others: one value per method and task.

* **Friedman's test** (:func:`scipy.stats.friedmanchisquare`, with its tie correction) asks
  whether the methods' ranks differ at all; with two methods it is the two-sided **sign test**
  on the blocks that are not tied (:func:`scipy.stats.binomtest`), which is what Friedman's
  statistic reduces to for two methods.
* **Nemenyi's test** (Demšar 2006, JMLR 7) compares every pair of methods: ``q = |R_i - R_j| /
  sqrt(k (k + 1) / (6 N))`` for average ranks ``R`` over ``N`` blocks and ``k`` methods, with
  ``p = P(Q > q sqrt 2)`` for the studentized range ``Q`` of ``k`` means and infinite degrees of
  freedom (:func:`scipy.stats.studentized_range`); two methods differ at level ``alpha`` when
  their average ranks are more than the critical difference ``CD = q_alpha / sqrt 2 *
  sqrt(k (k + 1) / (6 N))`` apart. This is scikit-posthocs' ``posthoc_nemenyi_friedman``.
* The **leader** (best average rank) is marked only when Friedman's test rejects at ``alpha``
  and the leader's Nemenyi p-value against the runner-up is below ``alpha`` (for two methods:
  the sign test); otherwise the board has no marked leader.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import scipy.stats

__all__ = ["Board", "leaderboards", "block_ranks", "nemenyi", "critical_difference", "not_different_groups"]


@dataclass
class Board:
    """The leaderboard of one family (kind, domain, suite).

    Attributes:
        family: ``(kind, domain, suite)``.
        methods: the compared methods, best average rank first.
        average_ranks: ``method -> average rank`` (1 = best).
        blocks: the (task, metric) blocks ranked, in order.
        ranks: ``len(blocks) x len(methods)`` ranks (columns in :attr:`methods` order).
        dropped: ``reason -> number of blocks`` left out (a method without a value; direction "none").
        test: ``"friedman"``, ``"sign"`` or ``None`` (``note`` says why none).
        statistic, p_value: the omnibus test's statistic and p-value.
        pairwise: ``(method, method) -> p`` of the post-hoc test, both orders.
        critical_difference: Nemenyi's CD at ``alpha`` (``None`` for two methods).
        leader: the best method when its lead over the runner-up is significant, else ``None``.
        alpha: the significance level.
    """

    family: tuple[str, str, str]
    methods: list[str]
    average_ranks: dict[str, float]
    blocks: list[tuple[str, str]]
    ranks: np.ndarray
    dropped: dict[str, int] = field(default_factory=dict)
    test: str | None = None
    statistic: float | None = None
    p_value: float | None = None
    pairwise: dict[tuple[str, str], float] = field(default_factory=dict)
    critical_difference: float | None = None
    leader: str | None = None
    alpha: float = 0.05
    note: str = ""

    @property
    def runner_up_p(self) -> float | None:
        """The post-hoc p-value of the first method against the second (``None`` when untested)."""
        if len(self.methods) < 2:
            return None
        return self.pairwise.get((self.methods[0], self.methods[1]))


def block_ranks(values: np.ndarray, directions: list[str]) -> np.ndarray:
    """Ranks within each block (row): 1 = best by the block's direction, ties averaged.

    Args:
        values: ``blocks x methods`` finite values.
        directions: ``"higher"`` or ``"lower"`` per block.

    Returns:
        The ``blocks x methods`` ranks; each row sums to ``k (k + 1) / 2``.
    """
    values = np.asarray(values, dtype=float)
    signs = np.array([-1.0 if d == "higher" else 1.0 for d in directions])
    return scipy.stats.rankdata(values * signs[:, None], axis=1, method="average")


def nemenyi(average_ranks: np.ndarray, n_blocks: int) -> np.ndarray:
    """Nemenyi's pairwise p-values from average ranks (see the module docstring).

    Args:
        average_ranks: the ``k`` methods' average ranks.
        n_blocks: the number of blocks ``N`` behind them.

    Returns:
        The symmetric ``k x k`` matrix of p-values (1 on the diagonal).
    """
    ranks = np.asarray(average_ranks, dtype=float)
    k = ranks.size
    scale = math.sqrt(k * (k + 1) / (6.0 * n_blocks))
    q = np.abs(ranks[:, None] - ranks[None, :]) / scale
    p = scipy.stats.studentized_range.sf(q * math.sqrt(2.0), k, np.inf)
    p = np.clip(np.where(q == 0, 1.0, p), 0.0, 1.0)
    np.fill_diagonal(p, 1.0)
    return p


def critical_difference(k: int, n_blocks: int, alpha: float = 0.05) -> float:
    """Nemenyi's critical difference of average ranks for ``k`` methods over ``n_blocks`` blocks."""
    q_alpha = scipy.stats.studentized_range.ppf(1.0 - alpha, k, np.inf) / math.sqrt(2.0)
    return float(q_alpha * math.sqrt(k * (k + 1) / (6.0 * n_blocks)))


def not_different_groups(board: Board) -> list[list[str]]:
    """The maximal runs of methods (in rank order) of which no two differ significantly by the
    post-hoc test: the bars of a critical-difference diagram. Runs of one method are left out."""
    methods, alpha = board.methods, board.alpha
    groups: list[tuple[int, int]] = []
    for start in range(len(methods)):
        end = start
        while end + 1 < len(methods) and all(
            board.pairwise.get((methods[i], methods[end + 1]), 1.0) >= alpha for i in range(start, end + 1)
        ):
            end += 1
        if end > start and not any(s <= start and end <= e for s, e in groups):
            groups.append((start, end))
    return [methods[s : e + 1] for s, e in groups]


def leaderboards(scores, *, alpha: float = 0.05, methods: list[str] | None = None) -> list[Board]:
    """One :class:`Board` per (kind, domain, suite) of a score table.

    Args:
        scores: a long-format table as :func:`cfcheck.results.load_scores` returns (columns
            method, kind, domain, suite, metric, task, value, direction; one row per method and
            score).
        alpha: the significance level of Friedman's and the post-hoc test.
        methods: the methods to compare (default: every method in ``scores``, in order of
            appearance); a family is ranked over the methods that have any score in it.

    Returns:
        The boards, families sorted; a family with fewer than two methods has no board.

    Raises:
        ValueError: a method with two values on the same block (one row per method and score).
    """
    methods = list(dict.fromkeys(scores["method"])) if methods is None else list(methods)
    boards = []
    for family, rows in sorted(
        scores[scores["method"].isin(methods)].groupby(["kind", "domain", "suite"]), key=lambda item: item[0]
    ):
        present = [m for m in methods if m in set(rows["method"])]
        if len(present) < 2:
            continue
        duplicated = rows.duplicated(["method", "task", "metric"])
        if duplicated.any():
            row = rows[duplicated].iloc[0]
            raise ValueError(
                f"{row['method']} has two values for {'/'.join(family)} {row['metric']} {row['task']}: "
                "compare one run per method"
            )
        boards.append(_board(tuple(family), rows, present, alpha))
    return boards


def _board(family: tuple[str, str, str], rows, methods: list[str], alpha: float) -> Board:
    dropped: dict[str, int] = {}
    table = rows.pivot(index=["task", "metric"], columns="method", values="value").reindex(columns=methods)
    direction = rows.groupby(["task", "metric"])["direction"].first()
    keep = []
    for block, values in table.iterrows():
        if direction[block] not in ("higher", "lower"):
            dropped["direction none"] = dropped.get("direction none", 0) + 1
        elif not np.all(np.isfinite(values.to_numpy(dtype=float))):
            dropped["a method has no value"] = dropped.get("a method has no value", 0) + 1
        else:
            keep.append(block)
    if not keep:
        return Board(
            family,
            methods,
            dict.fromkeys(methods, math.nan),
            [],
            np.empty((0, len(methods))),
            dropped,
            alpha=alpha,
            note="no block with a value for every method",
        )
    values = table.loc[keep].to_numpy(dtype=float)
    ranks = block_ranks(values, [direction[b] for b in keep])
    mean = ranks.mean(axis=0)
    order = sorted(range(len(methods)), key=lambda i: (mean[i], i))
    board = Board(
        family,
        [methods[i] for i in order],
        {methods[i]: float(mean[i]) for i in order},
        [(str(t), str(m)) for t, m in keep],
        ranks[:, order],
        dropped,
        alpha=alpha,
    )
    _test(board)
    first, second = board.methods[0], board.methods[1]
    top_tied = board.average_ranks[first] == board.average_ranks[second]
    if (
        board.p_value is not None
        and board.p_value < alpha
        and not top_tied
        and board.pairwise.get((first, second), 1.0) < alpha
    ):
        board.leader = first
    return board


def _test(board: Board) -> None:
    k, n = len(board.methods), len(board.blocks)
    ranks = board.ranks
    if k == 2:
        wins = int(np.sum(ranks[:, 0] < ranks[:, 1]))
        losses = int(np.sum(ranks[:, 0] > ranks[:, 1]))
        board.test = "sign"
        board.statistic = float(wins)
        board.p_value = 1.0 if wins + losses == 0 else float(scipy.stats.binomtest(wins, wins + losses).pvalue)
        board.pairwise = {(a, b): board.p_value for a in board.methods for b in board.methods if a != b}
        board.note = f"{wins} blocks to {losses}, {n - wins - losses} tied"
        return
    if np.all(ranks == (k + 1) / 2.0):
        board.test, board.statistic, board.p_value = "friedman", 0.0, 1.0  # every block a full tie
    elif n < 2:
        board.note = "Friedman's test needs at least two blocks"
    else:
        result = scipy.stats.friedmanchisquare(*ranks.T)
        board.test, board.statistic, board.p_value = "friedman", float(result.statistic), float(result.pvalue)
    p = nemenyi(ranks.mean(axis=0), n)
    board.pairwise = {
        (a, b): float(p[i, j]) for i, a in enumerate(board.methods) for j, b in enumerate(board.methods) if i != j
    }
    board.critical_difference = critical_difference(k, n, board.alpha)
