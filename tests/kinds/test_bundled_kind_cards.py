"""The bundled kinds bring their own metric cards from their folders, as a kind of another package does
(issue 41): a card one kind records is that kind's own, a card several kinds record stays shared; a
process that has not loaded the kinds is told how to; the readers below the kinds read the cards their
caller passes; and the entry points a user reaches load the kinds first."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from cfcheck.calibration.bars import read_bars_file
from cfcheck.kinds.registry import declarations, loaded_cards
from cfcheck.metrics import cards as card_registry
from cfcheck.metrics.card_json import unbundled_cards_json

KIND_FOLDER = Path(__file__).resolve().parents[2] / "cfcheck" / "kinds"


def _recorded_by() -> dict[str, set[str]]:
    """Card key → the bundled kinds whose declarations record it."""
    found: dict[str, set[str]] = defaultdict(set)
    for name, declaration in declarations().items():
        for key in declaration.card_keys():
            found[key].add(name)
    return found


def test_a_card_one_kind_records_is_its_own_and_a_card_several_record_is_shared():
    recorded = _recorded_by()
    assert set(recorded) == set(loaded_cards())  # every card has a kind that records it
    shared = sorted(key for key, kinds in recorded.items() if len(kinds) > 1)
    assert shared == ["coverage", "ground_truth_error", "ground_truth_perceptual", "ground_truth_relative_error"]
    for key, kinds in recorded.items():
        (only,) = kinds if len(kinds) == 1 else (None,)
        expected = f"kind {only!r}" if only else card_registry.BUNDLED_OWNER
        assert card_registry.card_owner(key) == expected, key
        assert card_registry.is_bundled(key), key  # cfcheck ships it: a scorecard need not carry it


def test_each_bundled_kinds_cards_are_defined_in_its_own_folder():
    for name, declaration in declarations().items():
        own = declaration.own_metric_cards()
        assert own, name
        module = sys.modules[str(declaration.own_cards).partition(":")[0]]
        assert Path(module.__file__).resolve().is_relative_to(KIND_FOLDER / name), (name, module.__file__)
        # the registry holds the very cards the kind's folder defines
        assert all(loaded_cards()[card.key] is card for card in own), name


def test_a_scorecard_carries_no_definition_of_a_card_cfcheck_ships():
    assert unbundled_cards_json(["coverage", "d1", "road_gap:morf", "synbols_s_sharp", "scm_fid"]) == {}


def _fresh(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


def test_a_process_without_the_kinds_is_told_how_to_load_them():
    done = _fresh(
        "from cfcheck.metrics.cards import CARDS, card_of, get_card\n"
        "assert 'd1' not in CARDS and 'coverage' in CARDS\n"
        "for read in (get_card, card_of):\n"
        "    try:\n"
        "        read('d1')\n"
        "    except KeyError as error:\n"
        "        print(error)\n"
        "from cfcheck.kinds.registry import declarations\n"
        "declarations()\n"
        "print(get_card('d1').direction)\n"
    )
    assert done.returncode == 0, done.stderr
    first, second, direction = done.stdout.strip().splitlines()
    for message in (first, second):
        assert "'d1'" in message and "not loaded in this process" in message
        assert "cfcheck.kinds.registry.declarations()" in message
    assert direction == "lower"


def test_a_key_no_card_has_says_nothing_of_loading_once_the_kinds_are_loaded():
    loaded_cards()
    with pytest.raises(KeyError) as found:
        card_registry.get_card("no_such_card")
    assert "not loaded" not in str(found.value)
    with pytest.raises(card_registry.UnknownMetricKey) as unknown:
        card_registry.card_of("no_such_card")
    assert "not loaded" not in str(unknown.value)


def test_cfcheck_results_alone_reads_a_kinds_own_card():
    # d1 is the VCE kind's own card: lower is better, whatever the scorecard wrote
    done = _fresh("from cfcheck.results import metric_direction; print(metric_direction('d1', 'higher'))")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "lower"


def test_the_cfcheck_command_loads_the_kinds_before_any_command():
    done = _fresh("from cfcheck.cli import main; raise SystemExit(main(['cards', 'road_gap:morf']))")
    assert done.returncode == 0, done.stderr
    assert "road_gap" in done.stdout and "ROAD" in done.stdout


def test_a_bars_file_is_read_against_the_cards_its_caller_passes(tmp_path):
    entry = {"kind": "min", "bound": 0.03, "relative": "absolute", "rationale": "old", "method_kind": "attribution"}
    path = tmp_path / "bars-quick.json"
    path.write_text(json.dumps({"format": 1, "bars": {"road_gap_morf": entry}}))
    # the older spelling is read as card + variant only where the caller's cards know the card road_gap
    assert set(read_bars_file(path, cards=loaded_cards())[0]) == {"road_gap:morf"}
    assert set(read_bars_file(path, cards={})[0]) == {"road_gap_morf"}
