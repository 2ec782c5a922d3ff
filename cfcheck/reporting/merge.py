"""``cfcheck merge``: join the run folders of a sharded run into one scorecard.

Each shard (``--cfcheck-shard I/N``) writes ``<method>-<profile>-shardIofN/`` with its own
scorecard, samples and example grids. Merging checks that the folders are the N shards of one
run (same method, profile, seeds, reference models and cfcheck version; every shard exactly
once) and writes the scorecard an unsharded run would have written: the same scores, outcomes
and generation counts summed, costs, example grids and kept set features joined, and the definitions
of the cards and kinds cfcheck does not bundle (the ``cards`` and ``kinds`` sections) united.
"""

from __future__ import annotations

import csv
import math
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

from cfcheck.core.keys import ScoreId
from cfcheck.core.records import ScoreRecord
from cfcheck.core.set_features import join_set_features
from cfcheck.reporting.examples import EXAMPLES_DIR
from cfcheck.reporting.scorecard import load_scorecard, write_scorecard

#: what must agree between shards, as (description, getter)
_SAME = (
    ("method", lambda card: card["method"]),
    ("profile", lambda card: card["profile"]["name"]),
    ("seeds", lambda card: card["provenance"]["seeds"]),
    ("reference models", lambda card: card["provenance"]["reference_models"]),
    ("cfcheck version", lambda card: card["provenance"]["cfcheck_version"]),
    ("scorecard format", lambda card: card.get("format")),
)


def merge_runs(run_dirs: list[Path], output: Path) -> Path:
    """Merge the shard folders ``run_dirs`` into ``output``; returns the scorecard JSON path.

    Raises:
        ValueError: the folders are not the complete set of shards of one run (the message
            names the difference or the missing shard).
    """
    if not run_dirs:
        raise ValueError("give the run folders of every shard")
    cards = [load_scorecard(Path(d)) for d in run_dirs]
    _check_same_run(run_dirs, cards)
    _check_complete(run_dirs, cards)
    records = []
    for run_dir, card in zip(run_dirs, cards):
        records += _records(Path(run_dir), card)
    seen = Counter(r.key for r in records)
    repeated = sorted(k for k, count in seen.items() if count > 1)
    if repeated:
        raise ValueError(f"scores appear in more than one shard (e.g. {repeated[0]}); were the shards made with one N?")
    output = Path(output)
    output.mkdir(parents=True, exist_ok=True)
    for run_dir in run_dirs:
        examples = Path(run_dir) / EXAMPLES_DIR
        if examples.is_dir():
            shutil.copytree(examples, output / EXAMPLES_DIR, dirs_exist_ok=True)
    path = write_scorecard(output, _merged_card(cards, records, run_dirs), records)
    join_set_features(list(run_dirs), output)  # records read back from JSON carry no features
    return path


def _check_same_run(run_dirs: list[Path], cards: list[dict[str, Any]]) -> None:
    first = cards[0]
    for run_dir, card in zip(run_dirs[1:], cards[1:]):
        for what, get in _SAME:
            try:
                a, b = get(first), get(card)
            except (KeyError, TypeError):
                raise ValueError(f"{run_dir} is not a scorecard cfcheck merge can read (no {what})") from None
            if a != b:
                raise ValueError(
                    f"{run_dirs[0]} and {run_dir} differ in {what} ({a!r} vs {b!r}): not shards of one run"
                )


def _check_complete(run_dirs: list[Path], cards: list[dict[str, Any]]) -> None:
    labels = [card["profile"].get("shard") for card in cards]
    if None in labels:
        unsharded = run_dirs[labels.index(None)]
        raise ValueError(f"{unsharded} is not a shard (run it with --cfcheck-shard I/N)")
    counts = {int(label.split("/")[1]) for label in labels}
    if len(counts) != 1:
        raise ValueError(f"the shards were made with different N: {sorted(labels)}")
    (count,) = counts
    indices = Counter(int(label.split("/")[0]) for label in labels)
    missing = sorted(set(range(1, count + 1)) - set(indices))
    doubled = sorted(i for i, n in indices.items() if n > 1)
    if missing:
        raise ValueError(f"shard {', '.join(f'{i}/{count}' for i in missing)} is missing")
    if doubled:
        raise ValueError(f"shard {', '.join(f'{i}/{count}' for i in doubled)} was given more than once")


def _records(run_dir: Path, card: dict[str, Any]) -> list[ScoreRecord]:
    """The shard's records with their per-sample values and labels read back from samples.csv."""
    records = [ScoreRecord.from_dict(score) for score in card["scores"]]
    by_key = {r.key: r for r in records}
    path = run_dir / "samples.csv"
    if not path.is_file():
        return records
    with path.open(newline="") as handle:
        reader = csv.DictReader(handle)
        fixed = {"kind", "domain", "suite", "metric", "task", "sample", "value"}
        label_names = [name for name in reader.fieldnames or [] if name not in fixed]
        for row in reader:
            record = by_key.get(ScoreId.from_score(row).serialise())
            if record is None:
                continue
            record.samples.append(float(row["value"]) if row["value"] != "" else math.nan)
            for name in label_names:
                if row[name] != "":
                    record.sample_labels.setdefault(name, []).append(_number(row[name]))
    return records


def _number(text: str) -> Any:
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            continue
    return text


def _answer_read(cards: list[dict[str, Any]]) -> dict[str, Any] | None:
    """What the shards' method read of the domain's answer, together (None: no shard read any)."""
    reads = [read for card in cards if (read := card["provenance"].get("answer_read"))]
    if not reads:
        return None
    what = sorted({str(w) for read in reads for w in read.get("what", [])})
    return {"what": what, "calls": sum(int(read.get("calls", 0)) for read in reads)}


def _merged_card(cards: list[dict[str, Any]], records: list[ScoreRecord], run_dirs: list[Path]) -> dict[str, Any]:
    merged = dict(cards[0])
    merged["profile"] = {**cards[0]["profile"], "shard": None, "merged_shards": len(cards)}
    merged["status"] = "complete" if all(c["status"] == "complete" for c in cards) else "incomplete"
    outcomes: Counter[str] = Counter()
    generation: Counter[str] = Counter()
    costs: dict[str, Any] = {}
    domains: dict[str, Any] = {}
    for card in cards:
        outcomes.update(card.get("outcomes", {}))
        for name, value in card["provenance"].get("generation", {}).items():
            if isinstance(value, (int, float)):  # seconds are a float: typeshed's Counter allows only int
                generation[name] += value  # type: ignore[assignment]
        costs.update(card.get("costs", {}))
        domains.update(card["profile"].get("domains", {}))
    merged["profile"]["domains"] = domains
    merged["outcomes"] = dict(outcomes)
    merged["costs"] = dict(sorted(costs.items()))
    provenance = dict(cards[0]["provenance"])
    provenance["generation"] = {**dict(generation), "cache": cards[0]["provenance"].get("generation", {}).get("cache")}
    provenance["started"] = min(c["provenance"]["started"] for c in cards)
    provenance["finished"] = max(c["provenance"]["finished"] for c in cards)
    provenance["merged_from"] = [str(Path(d)) for d in run_dirs]
    provenance["answer_read"] = _answer_read(cards)  # flagged where any shard's method read the answer
    # each shard's devices (one node per shard: where each part ran)
    provenance["devices"] = {
        f"shard {card['profile'].get('shard')} {worker}": device
        for card in cards
        for worker, device in card["provenance"].get("devices", {}).items()
    }
    merged["provenance"] = provenance
    merged["protocols"] = _merged_protocols(cards, run_dirs)
    for name in UNBUNDLED_SECTIONS:
        merged.pop(name, None)
        united = _united_section(name, cards, run_dirs)
        if united:  # (written only where some shard has it, as a run writes it)
            merged[name] = united
    merged.pop("calibration", None)
    if any("calibration" in card for card in cards):  # (shards written before the section have none)
        merged["calibration"] = _merged_calibration(cards)
    merged["scores"] = [
        r.to_dict(with_samples=False)
        for r in sorted(records, key=lambda r: (r.kind, r.domain, r.suite, r.task, r.metric))
    ]
    return merged


def _merged_calibration(cards: list[dict[str, Any]]) -> dict[str, Any]:
    """Every shard's ``calibration`` section joined (:mod:`cfcheck.reporting.calibration_section`): each
    shard records the controls' values of its own scores, so one (kind, domain) is the union of its
    shards' entries; the merge looks no domain up."""
    merged: dict[str, Any] = {}
    for card in cards:
        for key, entry in (card.get("calibration") or {}).items():
            if not isinstance(entry, dict):
                continue
            known = merged.setdefault(key, {**entry, "controls": {}, "evidence": {}})
            known["controls"].update(entry.get("controls") or {})
            for card_key, rows in (entry.get("evidence") or {}).items():
                known["evidence"].setdefault(card_key, rows)
            if entry.get("error") and not known.get("error"):
                known["error"] = entry["error"]
    return merged


#: the scorecard sections that define what cfcheck does not bundle (:func:`cfcheck.reporting.scorecard.unbundled_sections`)
UNBUNDLED_SECTIONS = ("cards", "kinds")


def _united_section(name: str, cards: list[dict[str, Any]], run_dirs: list[Path]) -> dict[str, Any]:
    """The union of every shard's section ``name`` (key → definition), in key order; the same key defined
    two ways is an error naming it and both shards."""
    united: dict[str, Any] = {}
    first: dict[str, Path] = {}
    for run_dir, card in zip(run_dirs, cards):
        section = card.get(name) or {}
        if not isinstance(section, dict):
            raise ValueError(f"{run_dir}: the scorecard's {name!r} section is not an object (key → definition)")
        for key, definition in section.items():
            known = united.setdefault(key, definition)
            first.setdefault(key, Path(run_dir))
            if known != definition:
                what = "metric card" if name == "cards" else "kind"
                raise ValueError(
                    f"the {what} {key!r} is defined differently in {first[key]} and {run_dir} "
                    f"(their scorecards' {name!r} sections): not shards of one run"
                )
    return dict(sorted(united.items()))


def _merged_protocols(cards: list[dict[str, Any]], run_dirs: list[Path]) -> dict[str, Any]:
    """Every shard's protocols (each shard records those of its own scores); one protocol with two
    digests means the shards were not made alike."""
    merged: dict[str, Any] = {}
    for run_dir, card in zip(run_dirs, cards):
        for key, entry in (card.get("protocols") or {}).items():
            known = merged.setdefault(key, entry)
            if known.get("digest") != entry.get("digest"):
                raise ValueError(
                    f"{run_dir}: protocol {key} has digest {str(entry.get('digest'))[:12]}, another shard's "
                    f"{str(known.get('digest'))[:12]}: not shards of one run"
                )
    return merged
