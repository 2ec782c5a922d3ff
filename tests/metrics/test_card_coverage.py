"""Every metric card is scored somewhere, and every scored key has a card.

How the scored keys are collected, without running a suite:

* **files**: the keys in the published scorecards (``reports/published/*/scorecard.json``: each
  score's ``metric``), in the bundled domains' calibration files (``calibration-<profile>.json``:
  the metric part of each identity ``kind/domain/suite/metric[task]``;
  ``calibration-attribution-<profile>.json``: its ``values`` and ``without_bar`` score keys) and in
  their bars files (``bars-<profile>.json``: metric keys; a file written before one spelling has
  ``card_variant``, read back to a card by :meth:`MetricKey.read`). These are what runs recorded.
* **suites**: the keys written as a literal where the suites and kinds record a score (parsed with
  :mod:`ast`, not imported): the first argument of ``cfcheck_score(...)``, ``score(...)`` and their
  ``.unavailable``/``.error``, as a string (``"tcv"``) or an f-string whose literal head names the
  card (``f"lvs_target:{a}"``), the card of every ``MetricKey("card", ...)`` built there, and the values of
  a ``parametrize("metric", [...])``.

A card scored only where neither reaches (an f-string built from parameters, a suite without a
published scorecard) is listed in :data:`SCORED_ELSEWHERE` with where it is scored; an entry that
the collection reaches after all, or whose card is gone, fails, so the list cannot go stale.
"""

from __future__ import annotations

import ast
import importlib
import json
from collections.abc import Iterator
from pathlib import Path

import cfcheck
from cfcheck.core.keys import ScoreId
from cfcheck.metrics.cards import CARDS
from cfcheck.metrics.key import MetricKey

ROOT = Path(cfcheck.__file__).resolve().parent.parent
DOMAINS = ROOT / "cfcheck" / "domains"
#: where the suites and the kinds record scores
SCORING_SOURCES = (ROOT / "suites", ROOT / "cfcheck" / "kinds")
#: the names a recorder goes by where a score is recorded
RECORDERS = {"cfcheck_score", "score"}
#: names recorded without a card: checks, not metrics (recorded through ``ScoreRecorder.error``)
CHECKS = {"domain"}

_AREA = (
    "cfcheck/kinds/attribution/removal.py",
    "score_removal records it under removal_key(strategy, 'area', "
    "order), called by suites/attribution/test_{goar,road,roar}.py; no attribution scorecard is published "
    "and the attribution calibration files keep the gaps, not the areas",
)
_LEAKAGE = (
    "cfcheck/kinds/attribution/removal.py",
    "score_leakage records f'{strategy}_leakage', called by "
    "suites/attribution/test_{goar,roar}.py; no attribution scorecard is published and the attribution "
    "calibration does not measure leakage",
)
_CASCADE = (
    "suites/attribution/test_randomisation.py",
    "test_cascading_randomisation passes the card's key to a "
    "helper that records it per layer; no attribution scorecard is published and the attribution "
    "calibration measures the single-stage similarities only",
)
#: card → (the file that records it, why neither the files nor a literal key reach it)
SCORED_ELSEWHERE = {
    "goar_area": _AREA,
    "road_area": _AREA,
    "roar_area": _AREA,
    "goar_leakage": _LEAKAGE,
    "roar_leakage": _LEAKAGE,
    "attribution_cascading_randomisation_similarity": _CASCADE,
    "attribution_cascading_randomisation_similarity_support": _CASCADE,
}
#: cards no single function computes, with the reason (every other card names its functions)
COMPUTED_INLINE = {"coverage": "the mean of the validity mask the method returns"}


def _published() -> Iterator[tuple[str, str]]:
    for path in sorted((ROOT / "reports" / "published").glob("*/scorecard.json")):
        for score in json.loads(path.read_text(encoding="utf-8"))["scores"]:
            yield str(score["metric"]), str(path.relative_to(ROOT))


def _calibrations() -> Iterator[tuple[str, str]]:
    for path in sorted(DOMAINS.glob("*/calibration-*.json")):
        data, where = json.loads(path.read_text(encoding="utf-8")), str(path.relative_to(ROOT))
        if path.name.startswith("calibration-attribution-"):
            for section in ("values", "without_bar"):
                for bar_key in data.get(section, {}):
                    yield str(MetricKey.read(bar_key, CARDS)), where
        else:
            for identity in data["values"]:
                yield str(ScoreId.parse(identity).metric), where


def _bars() -> Iterator[tuple[str, str]]:
    for path in sorted(DOMAINS.glob("*/bars-*.json")):
        for bar_key in json.loads(path.read_text(encoding="utf-8"))["bars"]:
            yield str(MetricKey.read(bar_key, CARDS)), str(path.relative_to(ROOT))


def file_keys() -> dict[str, str]:
    """Scored key → the first file it appears in."""
    keys: dict[str, str] = {}
    for key, where in (*_published(), *_calibrations(), *_bars()):
        keys.setdefault(key, where)
    return keys


def _recorder_call(node: ast.Call) -> bool:
    func = node.func
    if isinstance(func, ast.Attribute) and func.attr in ("unavailable", "error"):
        func = func.value
    return isinstance(func, ast.Name) and func.id in RECORDERS


def literal_key(argument: ast.expr) -> str | None:
    """The key a recorder's first argument names literally: a string, or the card of an f-string that
    starts with ``card:``; None where it is computed."""
    if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
        return argument.value
    if isinstance(argument, ast.JoinedStr) and argument.values:
        head = argument.values[0]
        if isinstance(head, ast.Constant) and isinstance(head.value, str) and ":" in head.value:
            return head.value.split(":", 1)[0]
    return None


def _built_key(node: ast.Call) -> list[str]:
    """The card of ``MetricKey("card", ...)`` where it is a literal (the suites build keys so)."""
    func = node.func
    named = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
    if named != "MetricKey" or not node.args:
        return []
    card = node.args[0]
    return [card.value] if isinstance(card, ast.Constant) and isinstance(card.value, str) else []


def _metric_parameters(node: ast.Call) -> list[str]:
    """The values of ``parametrize("metric", [...])`` where they are all strings."""
    if not (isinstance(node.func, ast.Attribute) and node.func.attr == "parametrize" and len(node.args) >= 2):
        return []
    name, values = node.args[:2]
    if not (isinstance(name, ast.Constant) and name.value == "metric" and isinstance(values, (ast.List, ast.Tuple))):
        return []
    return [v.value for v in values.elts if isinstance(v, ast.Constant) and isinstance(v.value, str)]


def source_keys(sources: tuple[Path, ...] = SCORING_SOURCES) -> dict[str, str]:
    """Literal key → ``file:line`` of its first recorder call (or ``parametrize("metric", ...)``) in ``sources``."""
    keys: dict[str, str] = {}
    for path in sorted(p for source in sources for p in source.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if not isinstance(node, ast.Call):
                continue
            found = (
                [literal_key(node.args[0])]
                if _recorder_call(node) and node.args
                else _built_key(node) or _metric_parameters(node)
            )
            for key in found:
                if key is not None:
                    keys.setdefault(key, f"{path}:{node.lineno}")
    return keys


def without_card(keys: dict[str, str]) -> dict[str, str]:
    return {
        key: where
        for key, where in keys.items()
        if MetricKey.parse(key).card not in CARDS and MetricKey.parse(key).card not in CHECKS
    }


def scored_cards() -> set[str]:
    return {MetricKey.parse(key).card for key in (*file_keys(), *source_keys())}


def test_every_key_in_a_published_scorecard_or_calibration_file_has_a_card() -> None:
    keys = file_keys()
    assert len(keys) > 50, "the collection found almost nothing: has the layout of the files changed?"
    assert without_card(keys) == {}


def test_every_key_the_suites_record_literally_has_a_card() -> None:
    keys = source_keys()
    assert len(keys) > 20, "the collection found almost nothing: do the suites still record through cfcheck_score?"
    assert without_card(keys) == {}


def test_every_card_is_scored() -> None:
    unscored = sorted(set(CARDS) - scored_cards() - set(SCORED_ELSEWHERE))
    assert unscored == [], f"cards no suite scores (or add them to SCORED_ELSEWHERE with where they are): {unscored}"


def test_the_allowlist_is_not_stale() -> None:
    gone = sorted(set(SCORED_ELSEWHERE) - set(CARDS))
    reached = sorted(set(SCORED_ELSEWHERE) & scored_cards())
    assert gone == [], f"SCORED_ELSEWHERE names cards that do not exist: {gone}"
    assert reached == [], f"SCORED_ELSEWHERE lists cards the collection reaches: drop them: {reached}"
    assert [where for where, _ in SCORED_ELSEWHERE.values() if not (ROOT / where).is_file()] == []


def test_every_card_names_the_functions_that_compute_it() -> None:
    """``computed_by`` resolves to functions (``cfcheck cards KEY`` shows where they are defined)."""
    unnamed = sorted(key for key, card in CARDS.items() if not card.computed_by)
    assert unnamed == sorted(COMPUTED_INLINE)
    broken = {}
    for card in CARDS.values():
        for name in card.computed_by:
            module, _, attribute = name.rpartition(".")
            if not callable(getattr(importlib.import_module(module), attribute, None)):
                broken[card.key] = name
    assert broken == {}


def test_a_planted_unknown_key_is_found(tmp_path: Path) -> None:
    """The check can fail: a suite that records a misspelt key, and a scorecard that holds one."""
    suite = tmp_path / "test_planted.py"
    suite.write_text(
        'def test_x(cfcheck_score):\n    cfcheck_score("orcale_score:oracle_lenet", [1.0])\n'
        '    cfcheck_score.unavailable(f"lvs_targte:{1}", "no")\n'
        '    cfcheck_score(MetricKey("lvs_unrelatd", "thickness"), [1.0])\n',
        encoding="utf-8",
    )
    planted = source_keys((tmp_path,))
    assert set(without_card(planted)) == {"orcale_score:oracle_lenet", "lvs_targte", "lvs_unrelatd"}
    assert without_card({"road_gapp_morf": "bars"}) == {"road_gapp_morf": "bars"}
    assert str(MetricKey.read("road_gapp_morf", CARDS)) == "road_gapp_morf"
