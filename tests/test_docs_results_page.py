"""docs/results.md runs as written: its ```python blocks execute in order, in one namespace, from the
repository root, against reports/published/, and each block's printed output is the ```text block
that follows it (a block that prints nothing has none).

``python tests/test_docs_results_page.py --write`` rewrites the output blocks from a run.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "results.md"
_BLOCK = re.compile(r"```python\n(?P<code>.*?)```\n(?:\n```text\n(?P<out>.*?)```\n)?", re.S)


def run_page(text: str) -> list[tuple[re.Match, str]]:
    """(the block's match, what the block printed) for each python block of ``text``, run in order."""
    namespace: dict = {"__name__": "__docs_results__"}
    results = []
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        for match in _BLOCK.finditer(text):
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                exec(compile(match.group("code"), f"{PAGE.name} block {len(results) + 1}", "exec"), namespace)
            results.append((match, out.getvalue()))
    finally:
        os.chdir(cwd)
    return results


def write_outputs() -> None:
    text = PAGE.read_text()
    pieces, last = [], 0
    for match, printed in run_page(text):
        pieces.append(text[last : match.start()])
        pieces.append(f"```python\n{match.group('code')}```\n")
        if printed:
            pieces.append(f"\n```text\n{printed}```\n")
        last = match.end()
    pieces.append(text[last:])
    PAGE.write_text("".join(pieces))


def test_page_has_code_that_loads_scorecards():
    blocks = [m.group("code") for m in _BLOCK.finditer(PAGE.read_text())]
    assert len(blocks) >= 6
    assert any("load_scores(" in code for code in blocks) and any("load_samples(" in code for code in blocks)


@pytest.mark.skipif(
    not (ROOT / "reports/published/dvce-quick/scorecard.json").is_file(),
    reason="needs the published runs in reports/published",
)
def test_every_block_runs_and_prints_what_the_page_shows():
    for number, (match, printed) in enumerate(run_page(PAGE.read_text()), start=1):
        shown = match.group("out") or ""
        assert printed == shown, (
            f"docs/results.md block {number} prints something else than the page shows; "
            f"regenerate with `python tests/test_docs_results_page.py --write`.\n"
            f"printed:\n{printed}\nshown:\n{shown}"
        )


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python tests/test_docs_results_page.py --write")
    write_outputs()
