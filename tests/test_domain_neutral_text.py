"""No module outside a bundled domain's folder names that domain or one of its factors (issue 24:
"bring your own domain"): the engine, the kinds, the metric cards, the methods and the suites speak
of *a* domain, so a user's domain reads the same texts as a bundled one. What a bundled domain
measured is its calibration files' business (:mod:`cfcheck.reporting.evidence`)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: the bundled domains, whose folders (cfcheck/domains/<name>/) may name them
BUNDLED = ("morpho", "gmm", "glyphs")
#: the bundled domains' names, their factors and scenario names: words no generic text needs
#: ("intensity" after "pixel" is the generic word, not the factor)
WORDS = re.compile(
    r"(?<![A-Za-z])(morpho|gmm|glyphs|thickness|(?<!pixel )intensity|fonts\d+-corr\d+)(?![A-Za-z])", re.IGNORECASE
)
#: (path, word) → why naming it there is right
ALLOWED = {
    ("cfcheck/domains/registry.py", "morpho"): "the registry documents how the bundled domains are registered by name",
    ("cfcheck/domains/registry.py", "gmm"): "the registry documents how the bundled domains are registered by name",
    ("cfcheck/domains/registry.py", "glyphs"): "the registry documents how the bundled domains are registered by name",
    ("cfcheck/domains/__init__.py", "morpho"): "the domains package lists the bundled domains it registers",
    ("cfcheck/domains/__init__.py", "gmm"): "the domains package lists the bundled domains it registers",
    ("cfcheck/domains/__init__.py", "glyphs"): "the domains package lists the bundled domains it registers",
    ("cfcheck/domains/truetype.py", "glyphs"): "a variable: the rasterised characters of a font, not the domain",
}


def neutral_text_hits(root: Path) -> list[tuple[str, int, str, str]]:
    """(path, line number, word, line) of every bundled domain's name or factor in a ``.py`` file
    under ``cfcheck/`` or ``suites/`` outside the bundled domains' folders.

    Args:
        root: the repository root.

    Returns:
        The hits in path and line order, the allowed ones included.
    """
    if not isinstance(root, Path) or not (root / "cfcheck").is_dir():
        raise ValueError(f"`root` must be the repository's root folder, got {root!r}")
    hits = []
    for top in ("cfcheck", "suites"):
        for path in sorted((root / top).rglob("*.py")):
            relative = path.relative_to(root)
            if (
                relative.parts[:2] == ("cfcheck", "domains")
                and len(relative.parts) > 3
                and relative.parts[2] in BUNDLED
            ):
                continue
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                hits += [
                    (relative.as_posix(), number, match.group(1).lower(), line.strip())
                    for match in WORDS.finditer(line)
                ]
    return hits


def test_no_module_outside_a_bundled_domain_names_it_or_its_factors():
    hits = neutral_text_hits(ROOT)
    unexpected = [
        f"{path}:{number}: {word!r} in {line}" for path, number, word, line in hits if (path, word) not in ALLOWED
    ]
    assert not unexpected, "name no bundled domain or factor outside its folder:\n" + "\n".join(unexpected)
    stale = set(ALLOWED) - {(path, word) for path, _, word, _ in hits}
    assert not stale, f"allowed hits that no longer occur: {sorted(stale)}"


def test_the_scan_finds_a_planted_name(tmp_path):
    (tmp_path / "cfcheck" / "domains" / "morpho").mkdir(parents=True)
    (tmp_path / "suites").mkdir()
    (tmp_path / "cfcheck" / "domains" / "morpho" / "domain.py").write_text('NAME = "morpho"  # its own folder\n')
    (tmp_path / "cfcheck" / "card.py").write_text('NOTE = "pixel intensity"\nEXAMPLE = "(Morpho: N×1×32×32)"\n')
    (tmp_path / "suites" / "test_x.py").write_text('"""do(thickness) on fonts6-corr95, do_intensity"""\n')
    assert [(path, number, word) for path, number, word, _ in neutral_text_hits(tmp_path)] == [
        ("cfcheck/card.py", 2, "morpho"),
        ("suites/test_x.py", 1, "thickness"),
        ("suites/test_x.py", 1, "fonts6-corr95"),
        ("suites/test_x.py", 1, "intensity"),
    ]
    with pytest.raises(ValueError, match="root"):
        neutral_text_hits(tmp_path / "absent")
