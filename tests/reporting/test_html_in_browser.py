"""The HTML scorecard in a real browser: headless Chromium opens it from disk without console
errors, draws something, and shows a hostile method name as text (no script runs).

Skipped when no Chromium is installed (CI installs it in .ci/run where apt is available)."""

from __future__ import annotations

import html as html_lib
import json
import re
import shutil
import subprocess
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pytest
import torch

from cfcheck.core.records import ScoreRecord
from cfcheck.reporting.examples import write_example_grid
from cfcheck.reporting.scorecard import build_scorecard, write_scorecard

HOSTILE = "<script>alert(1)</script>"
BROWSER = next(
    (shutil.which(name) for name in ("chromium", "chromium-browser", "google-chrome") if shutil.which(name)), None
)

pytestmark = pytest.mark.skipif(BROWSER is None, reason="no chromium, chromium-browser or google-chrome binary on PATH")


def _record(metric, task, value, verdict, suite="validity", **kwargs):
    return ScoreRecord(
        nodeid=f"x::{metric}[{task}]",
        suite=suite,
        metric=metric,
        task=task,
        value=value,
        n=12,
        direction=kwargs.pop("direction", "higher"),
        ci_low=value - 0.05,
        ci_high=value + 0.05,
        threshold=kwargs.pop("threshold", ">= 0.8"),
        verdict=verdict,
        samples=[value] * 3,
        kind="vce",
        domain="morpho",
        **kwargs,
    )


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("run")
    records = [
        _record("target_accuracy", "cnn/ideal/seed0", 0.95, "pass"),
        _record("target_accuracy", "mlp/ideal/seed0", 0.3, "fail"),
        _record("tcv", "cnn/ideal/seed0", 0.78, "inconclusive"),
        _record("tcv", "mlp/ideal/seed0", float("nan"), "error", reason=f"the method raised {HOSTILE}"),
        _record("d2", "cnn/ideal/seed0", 2.0, "pass", suite="closeness", direction="lower", threshold="<= 6.2"),
        _record(
            "fid_target",
            "cnn/ideal/seed0",
            28.0,
            "fail",
            suite="realism",
            direction="lower",
            threshold="<= 2 × floor = 19.22",
            extra={"real_floor": [9.6, 5.9, 8.7]},
        ),
    ]
    generator = torch.Generator().manual_seed(0)
    images = torch.rand(4, 1, 16, 16, generator=generator)
    write_example_grid(
        run_dir,
        "vce",
        "morpho",
        "cnn/ideal/seed0",
        {
            "input": images,
            "counterfactual": images.flip(-1),
            "difference": images.flip(-1) - images,
        },
    )
    card = build_scorecard(
        records,
        method=HOSTILE,
        profile={"name": "quick"},
        status="complete",
        seeds=[0],
        device="cpu",
        models={"morpho/cnn": "ab" * 32},
        outcomes={"passed": 2, "failed": 4},
        started=datetime.now(timezone.utc),
        generation={"generated": 2},
    )
    write_scorecard(run_dir, card, records)
    return run_dir / "scorecard.html"


def _chromium(*args, cwd):
    command = [
        BROWSER,
        "--headless",
        "--disable-gpu",
        "--no-sandbox",
        "--no-first-run",
        f"--user-data-dir={cwd / 'profile'}",
        *args,
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=cwd, check=False)


def test_the_page_renders_without_console_errors_and_is_not_blank(page, tmp_path):
    shot = tmp_path / "shot.png"
    result = _chromium(
        "--enable-logging=stderr",
        "--v=0",
        f"--screenshot={shot}",
        "--window-size=1280,2000",
        page.as_uri(),
        cwd=tmp_path,
    )
    console = [line for line in result.stderr.splitlines() if "CONSOLE" in line or "Uncaught" in line]
    assert not console, "\n".join(console)
    assert shot.is_file(), result.stderr[-2000:]
    from PIL import Image

    pixels = np.asarray(Image.open(shot).convert("RGB"))
    assert pixels.shape[:2] == (2000, 1280)
    colours = np.unique(pixels.reshape(-1, 3), axis=0)
    assert len(colours) > 10  # text, the red verdict banner, example images, charts
    non_white = (pixels < 245).any(axis=-1).mean()
    assert non_white > 0.03
    banner_red = ((pixels[..., 0] > 180) & (pixels[..., 1] < 80) & (pixels[..., 2] < 80)).mean()
    assert banner_red > 0.005  # the FAIL banner is drawn


def test_the_hostile_method_name_is_text_and_no_script_exists(page, tmp_path):
    result = _chromium("--dump-dom", page.as_uri(), cwd=tmp_path)
    dom = result.stdout
    assert "FAIL: 2 of 3 suites have failing scores" in dom, result.stderr[-2000:]
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in dom  # serialised text of the title and the heading
    assert "<script" not in dom.lower()


def test_a_wide_scorecard_does_not_scroll_the_page_sideways(tmp_path):
    """Many suites and long task names (a quick VCE run has five suites and 20 tasks): the task ×
    suite matrix scrolls inside its own box, the page never scrolls sideways at 1280 px."""
    suites = ["validity", "closeness", "realism", "ground_truth", "random_classifier", "diversity", "sanity_extra"]
    records = [
        _record(
            f"metric_{suite}",
            f"noise_cnn~classifier.{i}/other_pairs/seed{i}",
            0.5,
            ("pass", "fail", "inconclusive")[i % 3],
            suite=suite,
        )
        for suite in suites
        for i in range(12)
    ]
    card = build_scorecard(
        records,
        method="wide",
        profile={"name": "quick"},
        status="complete",
        seeds=[0],
        device="cpu",
        models={},
        outcomes={"passed": 1},
        started=datetime.now(timezone.utc),
        generation={},
    )
    write_scorecard(tmp_path, card, records)
    page = (tmp_path / "scorecard.html").read_text(encoding="utf-8")
    # a copy with a probe script (the scorecard itself has none): it writes the page's widths into the DOM
    probe = (
        "<script>addEventListener('load', () => document.body.setAttribute('data-widths', "
        "document.documentElement.scrollWidth + 'x' + document.documentElement.clientWidth));</script>"
    )
    probed = tmp_path / "probed.html"
    probed.write_text(page.replace("</body>", probe + "</body>"), encoding="utf-8")
    result = _chromium(
        "--window-size=1280,1000", "--virtual-time-budget=5000", "--dump-dom", probed.as_uri(), cwd=tmp_path
    )
    found = list(result.stdout.split('data-widths="')[1:])
    assert found, result.stderr[-2000:]
    scroll_width, client_width = (int(v) for v in found[0].split('"', 1)[0].split("x"))
    assert scroll_width <= client_width, f"the page is {scroll_width} px wide in a {client_width} px window"


PUBLISHED = Path(__file__).resolve().parents[2] / "reports" / "published" / "dvce-quick" / "scorecard.html"
FOLD = 800  # a 1280 × 800 screen: what the screenshot at --window-size=1280,800 shows without scrolling
_FOLD_PROBE = """<script>addEventListener('load', () => {
  const box = (el) => el ? (r => [Math.round(r.top + scrollY), Math.round(r.bottom + scrollY)])(el.getBoundingClientRect()) : null;
  const shown = (img) => !!img && img.complete && img.naturalWidth > 0;
  const input = document.querySelector("img.ex[alt='input']"), cf = document.querySelector("img.ex[alt='counterfactual']");
  document.body.setAttribute('data-fold', JSON.stringify({
    width: document.documentElement.clientWidth,
    banner: box(document.querySelector('.banner')),
    failing_suite: box(document.querySelector("table.counts tr.suite[data-worst='fail']")),
    failing_score: box(document.querySelector('table.failures tr:nth-child(2)')),
    example_input: shown(input) ? box(input) : null, example_counterfactual: shown(cf) ? box(cf) : null}));
});</script>"""


def fold_positions(html: str, tmp_path: Path) -> dict:
    """Where the scorecard's key parts lie on the page at 1280 px: [top, bottom] in CSS pixels from the
    top of the document, measured by Chromium's layout (getBoundingClientRect after the load event, so
    the inline example images are decoded); ``None`` for a part that is missing or not drawn."""
    probed = tmp_path / "fold.html"
    probed.write_text(html.replace("</body>", _FOLD_PROBE + "</body>"), encoding="utf-8")
    result = _chromium(
        "--window-size=1280,800", "--virtual-time-budget=5000", "--dump-dom", probed.as_uri(), cwd=tmp_path
    )
    found = re.search(r'data-fold="([^"]*)"', result.stdout)
    assert found, result.stderr[-2000:]
    return json.loads(html_lib.unescape(found.group(1)))


def below_the_fold(positions: dict) -> list[str]:
    """The parts a person at 1280 × 800 does not see without scrolling (missing parts count)."""
    return [
        f"{part} at {box}" if box else f"{part} missing"
        for part, box in positions.items()
        if part != "width" and (box is None or box[1] > FOLD)
    ]


@pytest.mark.skipif(not PUBLISHED.is_file(), reason="needs reports/published/dvce-quick")
def test_the_published_scorecard_shows_verdict_failures_and_examples_above_the_fold(tmp_path):
    """The published DVCE scorecard at 1280 × 800: the FAIL banner, the first failing suite, the first
    failing score and the first example's input and counterfactual images lie within the first 800 px."""
    positions = fold_positions(PUBLISHED.read_text(encoding="utf-8"), tmp_path)
    assert positions["width"] <= 1280
    assert not below_the_fold(positions), positions


@pytest.mark.skipif(not PUBLISHED.is_file(), reason="needs reports/published/dvce-quick")
def test_the_fold_check_sees_examples_pushed_below_a_tall_block(tmp_path):
    """The check can fail: the same page with a 600 px block before the examples has them below the fold."""
    html = PUBLISHED.read_text(encoding="utf-8")
    heading = "<h2>Example counterfactuals</h2>"
    assert heading in html
    pushed = html.replace(heading, "<div style='height:600px'></div>" + heading, 1)
    missed = below_the_fold(fold_positions(pushed, tmp_path))
    assert [part.split(" ")[0] for part in missed] == ["example_input", "example_counterfactual"], missed
