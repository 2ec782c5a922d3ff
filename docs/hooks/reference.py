"""MkDocs hook: the metric reference and the CLI reference, generated from the code at build time.

``metric_reference()`` renders every card (the kinds' own included) with
:func:`cfcheck.metrics.card.card_markdown` (the Markdown twin of what ``cfcheck cards`` prints), with
what the bundled controls measured and each bundled domain's own bars; ``cli_reference()`` runs
``cfcheck <command> --help`` for every subcommand. Both are added to the site as pages, so the
documentation cannot drift from the cards or the parser; ``pytest_options_help()`` (the "cfcheck"
group of ``pytest --help``) replaces the ``<!-- pytest --help -->`` marker of the pytest options
page. ``tests/test_docs.py`` calls them directly.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import os
import pkgutil

METRIC_PAGE = "reference/metrics.md"
CLI_PAGE = "reference/cli.md"
OPTIONS_PAGE = "reference/pytest-options.md"
OPTIONS_MARKER = "<!-- pytest --help -->"
CONCEPTS_PAGE = "concepts.md"
PROFILES_MARKER = "<!-- profiles -->"

#: (where, module) → the family's title: ``where`` is "shared" (cfcheck.metrics.definitions) or the kind
#: whose own cards the module holds; a module not listed is titled by its name
_FAMILY_TITLES = {
    ("shared", "validity"): "Shared by several kinds",
    ("shared", "closeness"): "Shared by several kinds",
    ("vce", "validity"): "Validity",
    ("vce", "closeness"): "Closeness",
    ("vce", "realism"): "Realism",
    ("vce", "sanity"): "Random-classifier sanity",
    ("attribution", "randomisation"): "Attribution sanity",
    ("scm", "image"): "SCM generators",
    ("scm", "models"): "SCM reference models",
    ("scm", "realism"): "SCM realism",
    ("attribution", "removal"): "Removal benchmarks (ROAR, ROAD, GOAR)",
    ("latent", "cards"): "Latent explainers (glyphs, S#)",
}


def _card_modules() -> list[tuple[str, object]]:
    """(where, module) of every module that defines cards: those of :mod:`cfcheck.metrics.definitions`
    ("shared"), then each kind's own cards module (its declaration's ``own_cards``) or, for a
    ``cards/`` package, its modules."""
    from cfcheck.kinds.registry import declarations
    from cfcheck.metrics import definitions

    def modules(package: object) -> list[object]:
        path = getattr(package, "__path__", None)
        if path is None:
            return [package]
        return [
            importlib.import_module(f"{package.__name__}.{info.name}")  # type: ignore[attr-defined]
            for info in pkgutil.iter_modules(path)
            if not info.name.startswith("_")
        ]

    found: list[tuple[str, object]] = [("shared", module) for module in modules(definitions)]
    for name, declaration in declarations().items():
        if isinstance(declaration.own_cards, str):
            package = importlib.import_module(declaration.own_cards.partition(":")[0])
            found += [(name, module) for module in modules(package)]
    return found


def _families() -> list[tuple[str, list]]:
    """(title, cards) per module that defines cards (:func:`_card_modules`), in the registry's order; a
    card no family lists lands in "Other" so that none is left out."""
    from cfcheck.kinds.registry import loaded_cards

    registry = loaded_cards()
    families: dict[str, list] = {}
    seen: set[str] = set()
    for where, module in _card_modules():
        short = module.__name__.rpartition(".")[2]  # type: ignore[attr-defined]
        cards = [  # the registry's card: it carries the differences from the papers' code
            registry[card.key]
            for name, value in vars(module).items()
            if name.endswith("_CARDS") and isinstance(value, tuple)
            for card in value
            if card.key in registry and card.key not in seen
        ]
        seen.update(card.key for card in cards)
        if cards:
            title = _FAMILY_TITLES.get((where, short), short.replace("_", " ").capitalize())
            families.setdefault(title, []).extend(cards)
    order = list(registry)
    ordered = sorted(
        ((title, sorted(cards, key=lambda card: order.index(card.key))) for title, cards in families.items()),
        key=lambda family: order.index(family[1][0].key),
    )
    rest = [card for key, card in registry.items() if key not in seen]
    if rest:
        ordered.append(("Other", rest))
    return ordered


def _domain_bars(key: str) -> list[str]:
    """ "bar on <domain> (<profile> profile): ..." for each bundled domain's own bars file entry of ``key``."""
    from cfcheck.calibration.bars import bars_path, read_bars_file
    from cfcheck.core.keys import MetricKey
    from cfcheck.domains import available_domains, get_domain
    from cfcheck.kinds.registry import loaded_cards
    from cfcheck.profiles import PROFILE_NAMES

    lines = []
    for name in available_domains():
        folder = getattr(get_domain(name), "calibration_dir", None)
        for profile in PROFILE_NAMES:
            path = bars_path(folder, profile) if folder is not None else None
            if path is None or not path.is_file():
                continue
            bars, rationales = read_bars_file(path, cards=loaded_cards())
            for metric, bar in sorted(bars.items()):
                if MetricKey.parse(metric).card == key:  # the card's bar, or one of its variants' (card:variant)
                    lines.append(
                        f"bar of `{metric}` on {name} ({profile} profile): {bar.describe()}; "
                        f"{rationales.get(metric, '')}"
                    )
    return lines


def metric_reference() -> str:
    """The metric reference page: every card, grouped by property family."""
    from cfcheck.metrics.card import card_markdown
    from cfcheck.reporting.card_evidence import bundled_evidence

    families = _families()
    out = [
        "# Metric reference",
        "",
        "Generated from the metric cards (each kind's own in `cfcheck/kinds/<kind>/cards`, the shared ones "
        "in `cfcheck/metrics/definitions/`) when the site is built; "
        "`cfcheck cards KEY` prints the same card in a terminal. Each card gives the formula, the "
        "direction, how abstentions count, the bar (per profile where they differ, and a bundled "
        "domain's own bars), the calibration rationale with what the bundled controls measured, and "
        "the citation. How bars are earned: [Verdicts and bars](../concepts.md#verdicts-and-bars). Where a "
        "card's number differs from the one a paper's own code computes, the card says so and how to "
        "convert; all such differences: [cfcheck and the papers' code](papers-code.md).",
        "",
    ]
    out += [
        f"- [{title}](#{_slug(title)}): " + ", ".join(f"[`{card.key}`](#{card.key})" for card in cards)
        for title, cards in families
    ]
    for title, cards in families:
        out += ["", f"## {title}"]
        for card in cards:
            evidence = [*bundled_evidence(card.key), *_domain_bars(card.key)]
            out += ["", card_markdown(card, evidence)]
    return "\n".join(out) + "\n"


def _slug(title: str) -> str:
    import re

    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")


def _help(argv: list[str]) -> str:
    from cfcheck.cli import main

    buffer, columns = io.StringIO(), os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "100"  # argparse wraps to the terminal: the same page on every machine
    try:
        with (
            contextlib.redirect_stdout(buffer),
            contextlib.redirect_stderr(io.StringIO()),
            contextlib.suppress(SystemExit),
        ):
            main(argv)
    finally:
        if columns is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = columns
    return buffer.getvalue().rstrip()


def cli_reference() -> str:
    """The CLI reference page: ``cfcheck --help`` and every subcommand's help."""
    from cfcheck.cli import EXAMPLES

    out = [
        "# CLI reference",
        "",
        "Generated from the `cfcheck` command's parser when the site is built. Conformance runs "
        "themselves are `pytest --method=...` (options in [pytest options](pytest-options.md)).",
        "",
        "```text",
        _help(["--help"]),
        "```",
    ]
    for command in EXAMPLES:
        out += ["", f"## cfcheck {command}", "", "```text", _help([command, "--help"]), "```"]
    return "\n".join(out) + "\n"


def pytest_options_help() -> str:
    """The "counterfactual conformance (cfcheck)" group of ``pytest --help``, as pytest prints it."""
    import subprocess
    import sys
    import tempfile

    env = {**os.environ, "COLUMNS": "100"}
    with tempfile.TemporaryDirectory() as empty:  # outside the repository: its conftest.py takes half a minute
        result = subprocess.run(
            [sys.executable, "-m", "pytest", "--help", "-p", "no:cacheprovider"],
            capture_output=True,
            text=True,
            env=env,
            cwd=empty,
            timeout=300,
        )
    lines, inside = [], False
    for line in result.stdout.splitlines():
        inside = inside or line.startswith("counterfactual conformance (cfcheck)")
        if inside and not line.strip():
            break
        if inside:
            lines.append(line)
    if not lines:
        raise RuntimeError(f"`pytest --help` lists no cfcheck options:\n{result.stdout[-2000:]}{result.stderr[-2000:]}")
    return "\n".join(lines)


def profile_table() -> str:
    """What each bundled profile sets: the run's fields, then each kind's fields that differ between
    the profiles (``cfcheck.profiles.BUILTIN_PROFILES`` and the kinds' sections)."""
    import dataclasses

    from cfcheck.kinds import section_defaults
    from cfcheck.profiles import BUILTIN_PROFILES, PROFILE_NAMES, SECTION_KINDS

    rows = [
        (f"`{name}`", [getattr(BUILTIN_PROFILES[p], name) for p in PROFILE_NAMES])
        for name in ("seeds", "timeout", "bootstrap_resamples", "batch_size")
    ]
    for kind in SECTION_KINDS:
        sections = section_defaults(kind)
        for f in dataclasses.fields(sections[PROFILE_NAMES[0]]):
            values = [getattr(sections[p], f.name) for p in PROFILE_NAMES]
            if any(v != values[0] for v in values):
                rows.append((f"`{kind}.{f.name}`", values))

    def cell(value) -> str:
        if value is None:
            return "all"
        return ", ".join(map(str, value)) if isinstance(value, (tuple, list)) else str(value)

    lines = ["| setting | " + " | ".join(PROFILE_NAMES) + " |", "|---" * (len(PROFILE_NAMES) + 1) + "|"]
    lines += ["| " + " | ".join([name, *map(cell, values)]) + " |" for name, values in rows]
    return "\n".join(lines)


def on_page_markdown(markdown, page, config, files):
    if page.file.src_uri == OPTIONS_PAGE:
        return markdown.replace(OPTIONS_MARKER, "```text\n" + pytest_options_help() + "\n```")
    if page.file.src_uri == CONCEPTS_PAGE:
        return markdown.replace(PROFILES_MARKER, profile_table())
    return markdown


def on_files(files, config):
    from mkdocs.structure.files import File

    for path, render in ((METRIC_PAGE, metric_reference), (CLI_PAGE, cli_reference)):
        files.append(File.generated(config, path, content=render()))
    return files
