"""The page "cfcheck and the papers' code", generated from the metric cards.

Every card carries its differences from the papers' own code
(:class:`cfcheck.metrics.card.PaperDifference`); this module gathers them by the code they were
read from and renders one Markdown page: the codes read with their commits, then for each code
the differences and the bugs cfcheck avoids, each with its cards and the conversion.
``docs/reference/papers-code.md`` is this page, and a test keeps the two equal; regenerate it with
``python -m cfcheck.reporting.papers_code > docs/reference/papers-code.md``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from cfcheck.metrics.card import MetricCard, PaperCode, PaperDifference, markdown_escape

__all__ = ["PAGE", "grouped_differences", "papers_code_markdown"]

#: the page's path under docs/
PAGE = "reference/papers-code.md"

_INTRO = (
    "cfcheck's metrics come from five papers, and most of them have published code. Computed under the "
    "same definition on the same inputs, cfcheck's values agree with that code to float precision. Where "
    "a definition differs (a unit, an average, a choice of label, a bug in the paper's code that cfcheck "
    "does not repeat), a cfcheck number is not the paper's, and this page says how to get from one to "
    "the other. Each entry names the code and the commit it was read from, the file and line, the "
    "cards it concerns and the conversion, where one exists. The same entries appear on the cards "
    "themselves ([metric reference](metrics.md), `cfcheck cards KEY`)."
)


def grouped_differences(
    cards: Iterable[MetricCard],
) -> dict[PaperCode, list[tuple[PaperDifference, list[str]]]]:
    """Each code's differences, each with the keys of the cards that carry it.

    Args:
        cards: the metric cards.

    Returns:
        code → [(difference, card keys)], in the order the cards first name them; one difference
        attached to several cards appears once.
    """
    grouped: dict[PaperCode, dict[PaperDifference, list[str]]] = {}
    for card in cards:
        for difference in card.differences:
            keys = grouped.setdefault(difference.code, {}).setdefault(difference, [])
            if card.key not in keys:
                keys.append(card.key)
    return {code: list(entries.items()) for code, entries in grouped.items()}


def _entry(difference: PaperDifference, keys: Sequence[str]) -> str:
    cards = ", ".join(f"[`{key}`](metrics.md#{key})" for key in keys)
    conversion = markdown_escape(difference.conversion or "none.")
    return f"- {cards} · `{difference.where}`: {markdown_escape(difference.difference)} **Conversion:** {conversion}"


def _repository(code: PaperCode) -> str:
    """A link where the repository is a URL, else its name, escaped."""
    if code.repository.startswith("https://"):
        return f"[{markdown_escape(code.repository.removeprefix('https://'))}]({code.repository})"
    return markdown_escape(code.repository)


def _commit_cell(code: PaperCode) -> str:
    return f"`{code.commit}`" if code.commit is not None else markdown_escape(f"not checked: {code.unchecked}")


def papers_code_markdown(cards: Iterable[MetricCard] | None = None, codes: Sequence[PaperCode] | None = None) -> str:
    """The page "cfcheck and the papers' code".

    Args:
        cards: the cards to list (default: every card, the kinds' own included).
        codes: every code read, also those with no difference (default:
            :data:`cfcheck.metrics.definitions.paper_code.PAPER_CODES`); a code a card names but
            this leaves out is listed after them.

    Returns:
        The page's Markdown, ending with a newline.
    """
    if cards is None:
        from cfcheck.kinds.registry import loaded_cards

        cards = loaded_cards().values()
    if codes is None:
        from cfcheck.metrics.definitions.paper_code import PAPER_CODES

        codes = PAPER_CODES
    grouped = grouped_differences(cards)
    ordered = list(dict.fromkeys([*codes, *grouped]))
    out = ["# cfcheck and the papers' code", "", _INTRO, "", "## The code read", ""]
    out += ["| paper | code | commit | differences | bugs avoided |", "|---|---|---|---|---|"]
    for code in ordered:
        entries = grouped.get(code, [])
        bugs = sum(difference.bug for difference, _ in entries)
        cells = [code.paper, _repository(code), _commit_cell(code), str(len(entries) - bugs), str(bugs)]
        out.append("| " + " | ".join(cells) + " |")
    for code in ordered:
        entries = grouped.get(code, [])
        out += ["", f"## {code.paper}", "", f"{_repository(code)}, {markdown_escape(code.version())}."]
        if not entries:
            out += ["", "No difference recorded."]
        for title, bug in (("Differences", False), ("Bugs in this code that cfcheck avoids", True)):
            chosen = [_entry(difference, keys) for difference, keys in entries if difference.bug == bug]
            if chosen:
                out += ["", f"### {title}", "", *chosen]
    return "\n".join(out) + "\n"


if __name__ == "__main__":  # pragma: no cover - regenerates the committed page
    print(papers_code_markdown(), end="")
