"""The cards' differences from the papers' code, and the page that lists them (issue 43, item 1)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from cfcheck.metrics.card import (
    DIFFERENCES_HEADING,
    PaperCode,
    PaperDifference,
    card_markdown,
    format_card,
    markdown_escape,
)
from cfcheck.metrics.cards import CARDS
from cfcheck.metrics.definitions import with_paper_differences
from cfcheck.metrics.definitions.paper_code import PAPER_CODES, PAPER_DIFFERENCES
from cfcheck.reporting.papers_code import PAGE, grouped_differences, papers_code_markdown

DOCS = Path(__file__).resolve().parents[2] / "docs"

#: the cards issue 43 names a difference or an avoided bug for
NAMED_IN_THE_ISSUE = {
    "lvs_target",
    "lvs_unrelated",
    "composition_l1",
    "effectiveness_error",
    "d1",
    "d1_5",
    "d2",
    "original_accuracy",
    "im1",
    "im2",
    "density_target",
    "density_domain",
    "coverage_target",
    "coverage_domain",
    "kid_target",
    "kid_domain",
    "synbols_ncf_rate",
    "synbols_cf_rate",
    "synbols_sce_rate",
    "synbols_s_sharp",
    "oracle_score",
    "cld",
}


def test_the_committed_page_is_the_generated_one() -> None:
    committed = (DOCS / PAGE).read_text(encoding="utf-8")
    assert committed == papers_code_markdown(), (
        "docs/reference/papers-code.md is stale: python -m cfcheck.reporting.papers_code > docs/reference/papers-code.md"
    )


def test_every_card_the_issue_names_carries_its_differences() -> None:
    missing = sorted(key for key in NAMED_IN_THE_ISSUE if not CARDS[key].differences)
    assert not missing
    assert set(PAPER_DIFFERENCES) <= set(CARDS)
    for key, differences in PAPER_DIFFERENCES.items():
        assert CARDS[key].differences[-len(differences) :] == differences


def test_the_avoided_bugs_are_marked_as_bugs() -> None:
    bugs = {(d.code.paper, d.where.split(":")[0]) for card in CARDS.values() for d in card.differences if d.bug}
    assert ("Hvilshøj et al. 2021", "evaluate/metrics/oracle.py") in bugs
    assert ("Bex et al.", "bex/utils.py") in bugs
    assert ("Melistas et al. 2024", "counterfactual_benchmark/evaluation/metrics/minimality.py") in bugs


def test_every_difference_names_a_code_that_was_read_with_its_commit_or_why_not() -> None:
    for card in CARDS.values():
        for difference in card.differences:
            assert difference.code in PAPER_CODES
            code = difference.code
            assert (
                (code.commit is not None and len(code.commit) == 40)
                or "could not" in code.unchecked
                or ("no commit" in code.unchecked)
            )


def test_the_page_lists_every_difference_with_its_cards_commit_and_conversion() -> None:
    page = papers_code_markdown()
    for code, entries in grouped_differences(CARDS.values()).items():
        assert f"## {code.paper}" in page
        if code.commit is not None:
            assert code.commit in page
        for difference, keys in entries:
            text = markdown_escape(difference.difference)
            line = next(line for line in page.splitlines() if f"`{difference.where}`" in line and text in line)
            assert all(f"[`{key}`](metrics.md#{key})" in line for key in keys)
            assert "**Conversion:**" in line
    assert "### Bugs in this code that cfcheck avoids" in page
    assert "road_evaluation" in page and "No difference recorded." in page


def test_cards_render_their_differences_under_one_heading() -> None:
    card = CARDS["d1"]
    text, markdown = format_card(card), card_markdown(card)
    commit = card.differences[0].code.commit
    assert commit is not None and f"{DIFFERENCES_HEADING}:" in text and "n · mean" in text and commit[:12] in text
    assert f"**{DIFFERENCES_HEADING}**" in markdown and "\n    - Differs (Väth et al. 2023" in markdown
    assert DIFFERENCES_HEADING not in format_card(CARDS["tcv"])


def test_the_html_card_shows_the_differences() -> None:
    from cfcheck.reporting.html_cards import cards_section
    from cfcheck.reporting.model import Scorecard

    html = cards_section(Scorecard.from_json({"scores": [{"metric": "oracle_score:oracle_lenet"}]}))
    assert "Where it differs from the papers&#x27; code" in html and "Bug in the paper&#x27;s code, avoided" in html


def test_the_metric_reference_links_the_page() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("cfcheck_docs_reference_hook", DOCS / "hooks" / "reference.py")
    assert spec is not None and spec.loader is not None
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    page = hook.metric_reference()
    assert "(papers-code.md)" in page and f"**{DIFFERENCES_HEADING}**" in page


def test_a_paper_code_refuses_an_invented_or_unexplained_commit() -> None:
    with pytest.raises(ValueError, match="40"):
        PaperCode("p", "https://example.org/r", "abc123")
    with pytest.raises(ValueError, match="unchecked"):
        PaperCode("p", "https://example.org/r", None)
    with pytest.raises(ValueError, match="unchecked"):
        PaperCode("p", "https://example.org/r", "a" * 40, unchecked="why")
    with pytest.raises(TypeError, match="PaperDifference"):
        dataclasses.replace(CARDS["d1"], differences=("text",))  # type: ignore[arg-type]


def test_differences_for_an_unknown_card_are_refused() -> None:
    code = PAPER_CODES[0]
    with pytest.raises(KeyError, match="no_such_card"):
        with_paper_differences(tuple(CARDS.values()), {"no_such_card": (PaperDifference(code, "f.py:1", "x"),)})
