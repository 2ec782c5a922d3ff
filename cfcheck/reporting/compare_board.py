"""Views of the rank-based leaderboard (:mod:`.compare_ranks`): sentences, a table per family and
the critical-difference diagram (a PNG drawn with matplotlib, embedded in the HTML page, and a
monospace drawing of the same for the Markdown page)."""

from __future__ import annotations

import io

from cfcheck.reporting.compare_ranks import Board, not_different_groups

__all__ = ["board_title", "board_lines", "board_rows", "headline", "cd_diagram_png", "cd_diagram_text", "BOARD_HEADER"]

BOARD_HEADER = ["#", "method", "average rank", "leader"]


def board_title(board: Board) -> str:
    """``"vce / <domain> / closeness"``."""
    return " / ".join(board.family)


def headline(board: Board, names: dict[str, str]) -> str:
    """One sentence: who leads the family and whether the lead is significant."""
    if not board.blocks:
        return f"{board_title(board)}: not ranked ({board.note})"
    first = board.methods[0]
    tied = [m for m in board.methods if board.average_ranks[m] == board.average_ranks[first]]
    shown = " and ".join(names[m] for m in tied)
    where = f"{board_title(board)} ({len(board.blocks)} blocks)"
    if board.leader is not None:
        return (
            f"{where}: {names[first]} leads, significantly (average rank {board.average_ranks[first]:.2f} against "
            f"{names[board.methods[1]]}'s {board.average_ranks[board.methods[1]]:.2f}, {_post_hoc(board)} p = "
            f"{_p(board.runner_up_p)})"
        )
    if len(tied) > 1:
        return f"{where}: {shown} share the best average rank ({board.average_ranks[first]:.2f}); no leader"
    reason = (
        f"{_post_hoc(board)} p = {_p(board.runner_up_p)} against {names[board.methods[1]]}"
        if board.p_value is not None and board.p_value < board.alpha
        else f"{_omnibus(board)} p = {_p(board.p_value)}"
    )
    return (
        f"{where}: {names[first]} ranks first (average rank {board.average_ranks[first]:.2f}) but its lead is "
        f"not significant ({reason})"
    )


def board_lines(board: Board, names: dict[str, str]) -> list[str]:
    """The statistics behind a family's ranking, as sentences."""
    lines = []
    dropped = sum(board.dropped.values())
    blocks = f"{len(board.blocks)} (task, metric) blocks ranked"
    if dropped:
        blocks += f"; {dropped} dropped (" + ", ".join(f"{why}: {n}" for why, n in sorted(board.dropped.items())) + ")"
    lines.append(blocks)
    if board.test == "friedman":
        lines.append(f"Friedman's test over the blocks: χ² = {board.statistic:.4g}, p = {_p(board.p_value)}")
    elif board.test == "sign":
        lines.append(f"two methods: sign test over the blocks ({board.note}), p = {_p(board.p_value)}")
    elif board.note:
        lines.append(board.note)
    if board.critical_difference is not None:
        lines.append(
            f"Nemenyi's critical difference at α = {board.alpha:g}: {board.critical_difference:.3g} average ranks"
        )
    groups = not_different_groups(board)
    if groups:
        lines.append(
            "not significantly different from one another: "
            + "; ".join("{" + ", ".join(names[m] for m in group) + "}" for group in groups)
        )
    return lines


def board_rows(board: Board, names: dict[str, str]) -> list[tuple[list[str], bool]]:
    """The family's table rows (position, method, average rank, mark) with whether the row is the
    marked leader."""
    rows = []
    for position, method in enumerate(board.methods, 1):
        leader = method == board.leader
        mark = "leader (significant)" if leader else ""
        rows.append(([str(position), names[method], f"{board.average_ranks[method]:.2f}", mark], leader))
    return rows


def cd_diagram_png(board: Board, names: dict[str, str]) -> bytes:
    """The critical-difference diagram of a family: the rank axis (1 = best, at the left), each
    method at its average rank, Nemenyi's CD as a scale bar, and a thick bar joining each group of
    methods no two of which differ significantly. The significant leader's label is bold."""
    from matplotlib.figure import Figure

    methods, k = board.methods, len(board.methods)
    half = (k + 1) // 2
    groups = not_different_groups(board)
    rows = max(half, k - half)
    step = 0.32
    fig = Figure(figsize=(8.0, 1.3 + step * rows + 0.12 * len(groups)), dpi=100)
    ax = fig.add_axes((0.0, 0.0, 1.0, 1.0))
    ax.axis("off")
    ax.plot([1, k], [0, 0], color="black", lw=1)
    for tick in range(1, k + 1):
        ax.plot([tick, tick], [0, 0.08], color="black", lw=1)
        ax.text(tick, 0.14, str(tick), ha="center", va="bottom", fontsize=9)
    left, right = 1 - 0.25 * k, k + 0.25 * k
    for index, method in enumerate(methods):
        rank = board.average_ranks[method]
        row = index + 1 if index < half else k - index
        y = -0.25 - step * row - 0.12 * len(groups)
        end = left if index < half else right
        ax.plot([rank, rank, end], [0, y, y], color="#555555", lw=0.8)
        label = f"{names[method]} ({rank:.2f})"
        ax.text(
            end,
            y,
            label + " " if index < half else " " + label,
            ha="right" if index < half else "left",
            va="center",
            fontsize=9,
            fontweight="bold" if method == board.leader else "normal",
        )
    for g, group in enumerate(groups):
        y = -0.12 - 0.12 * g
        lo, hi = board.average_ranks[group[0]], board.average_ranks[group[-1]]
        ax.plot([lo - 0.03, hi + 0.03], [y, y], color="#d32f2f", lw=3, solid_capstyle="round")
    if board.critical_difference is not None:
        cd = board.critical_difference
        ax.plot([1, 1 + cd], [0.55, 0.55], color="black", lw=1.5)
        ax.text(1 + cd / 2, 0.62, f"CD = {cd:.2f}", ha="center", va="bottom", fontsize=9)
    ax.set_xlim(left - 0.1 * k, right + 0.1 * k)
    ax.set_ylim(-0.45 - step * rows - 0.12 * len(groups), 0.95)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", bbox_inches="tight", pad_inches=0.1)
    return buffer.getvalue()


def cd_diagram_text(board: Board, names: dict[str, str], width: int = 40) -> str:
    """The critical-difference diagram in monospace text, for Markdown: the rank axis (1 = best, at
    the left), one line per method with ``●`` at its average rank (``◆`` for the significant leader),
    a line of ``━`` under each group of methods no two of which differ significantly, and Nemenyi's
    CD as a scale bar."""
    methods, k = board.methods, len(board.methods)

    def column(rank: float) -> int:
        return round((rank - 1) / (k - 1) * width) if k > 1 else 0

    pad = max(len(names[m]) for m in methods) + 2
    ticks = [" "] * (width + 1)
    axis = ["─"] * (width + 1)
    for tick in range(1, k + 1):
        ticks[column(tick)] = str(tick)[-1] if tick >= 10 else str(tick)
        axis[column(tick)] = "┼"
    axis[0], axis[-1] = "├", "┤"
    lines = [" " * pad + "".join(ticks), " " * pad + "".join(axis)]
    for method in methods:
        row = [" "] * (width + 1)
        row[column(board.average_ranks[method])] = "◆" if method == board.leader else "●"
        lines.append(f"{names[method]:<{pad}}" + "".join(row) + f"  {board.average_ranks[method]:.2f}")
    for group in not_different_groups(board):
        lo, hi = column(board.average_ranks[group[0]]), column(board.average_ranks[group[-1]])
        bar = " " * lo + "━" * (hi - lo + 1) + " " * (width - hi)
        lines.append(" " * pad + bar + "  not different: " + ", ".join(names[m] for m in group))
    if board.critical_difference is not None and k > 1:
        span = min(width, max(1, round(board.critical_difference / (k - 1) * width)))
        lines.append(
            f"{'CD':<{pad}}"
            + "├"
            + "─" * max(0, span - 1)
            + "┤"
            + f"  {board.critical_difference:.2f} average ranks (Nemenyi, α = {board.alpha:g})"
        )
    return "\n".join(line.rstrip() for line in lines)


def _post_hoc(board: Board) -> str:
    return "sign test" if board.test == "sign" else "Nemenyi"


def _omnibus(board: Board) -> str:
    return "sign test" if board.test == "sign" else "Friedman"


def _p(p: float | None) -> str:
    return "–" if p is None else f"{p:.2g}"
