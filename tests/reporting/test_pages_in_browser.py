"""The built documentation site and the published comparison pages in headless Chromium: each opens
from disk with no console message (an error, a warning or a log line) and draws something; a
page with a failing script shows that the check sees console errors.

Skipped when no Chromium is installed (see test_html_in_browser.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.reporting.test_html_in_browser import BROWSER

REPO = Path(__file__).resolve().parents[2]
#: a sample of the site's pages: the home page, the first steps, the pages with tables, figures,
#: generated references and code
DOC_PAGES = [
    "index.html",
    "getting-started/index.html",
    "comparing/index.html",
    "scorecard/index.html",
    "results/index.html",
    "reference/metrics/index.html",
    "reference/api/index.html",
    "findings/controls/index.html",
]
COMPARISONS = sorted(
    str(p.relative_to(REPO)) for p in (REPO / "reports" / "published").glob("compare-*/comparison.html")
)

pytestmark = pytest.mark.skipif(BROWSER is None, reason="no chromium, chromium-browser or google-chrome binary on PATH")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    pytest.importorskip("mkdocs")
    out = tmp_path_factory.mktemp("site")
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return out


def _open(page: Path, tmp_path: Path) -> tuple[list[str], np.ndarray]:
    """Console lines Chromium logged while loading ``page``, and its screenshot at 1280 × 900."""
    shot = tmp_path / "shot.png"
    command = [
        BROWSER,
        "--headless",
        "--disable-gpu",
        "--no-sandbox",
        "--no-first-run",
        f"--user-data-dir={tmp_path / 'profile'}",
        "--enable-logging=stderr",
        "--v=0",
        f"--screenshot={shot}",
        "--window-size=1280,900",
        page.as_uri(),
    ]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=tmp_path, check=False)
    assert shot.is_file(), result.stderr[-2000:]
    from PIL import Image

    console = [line for line in result.stderr.splitlines() if "CONSOLE" in line or "Uncaught" in line]
    return console, np.asarray(Image.open(shot).convert("RGB"))


def _drawn(pixels: np.ndarray) -> bool:
    return len(np.unique(pixels.reshape(-1, 3), axis=0)) > 20


def test_every_published_comparison_is_found():
    assert COMPARISONS == [
        "reports/published/compare-scm-quick/comparison.html",
        "reports/published/compare-vce-quick/comparison.html",
    ]


@pytest.mark.parametrize("page", DOC_PAGES)
def test_a_docs_page_opens_without_console_errors(site, page, tmp_path):
    assert (site / page).is_file(), f"the site has no {page}"
    console, pixels = _open(site / page, tmp_path)
    assert not console, "\n".join(console)
    assert _drawn(pixels)


@pytest.mark.parametrize("page", COMPARISONS)
def test_a_published_comparison_opens_without_console_errors(page, tmp_path):
    console, pixels = _open(REPO / page, tmp_path)
    assert not console, "\n".join(console)
    assert _drawn(pixels)


def test_the_check_sees_a_script_error(tmp_path):
    page = tmp_path / "broken.html"
    page.write_text("<!doctype html><html><body><p>text</p><script>not_defined()</script></body></html>")
    console, _ = _open(page, tmp_path)
    assert any("not_defined is not defined" in line for line in console), console
