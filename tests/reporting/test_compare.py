"""cfcheck compare: leaderboard, paired tests and refusals, on run folders whose answers are
known by construction (plus one slow test on two real quick runs)."""

from __future__ import annotations

import csv
import json
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.stats
from hypothesis import given
from hypothesis import strategies as st

from cfcheck.cli import main
from cfcheck.reporting.compare import (
    CompareError,
    Run,
    compare_runs,
    holm,
    load_run,
    mcnemar_exact,
    paired_bootstrap,
)
from cfcheck.reporting.compare_render import (
    behind_best,
    behind_best_table,
    differ_lines,
    display_names,
    render_html,
    render_markdown,
)

REPO = Path(__file__).resolve().parents[2]
MODELS = {"morpho/cnn": "a" * 64, "morpho/oracle_lenet": "b" * 64}
HIT = ("vce", "morpho", "validity", "target_accuracy", "cnn/ideal/seed0")
DIST = ("vce", "morpho", "closeness", "d1", "cnn/ideal/seed0")


def write_run(
    root: Path,
    name: str,
    method: str,
    samples: dict[tuple, dict[int, float]],
    *,
    directions: dict[tuple, str] | None = None,
    profile: str = "quick",
    seeds: list[int] | None = None,
    models: dict[str, str] | None = None,
    fmt: int = 3,
    shuffle: bool = False,
    protocols: dict | None = None,
) -> Path:
    """A run folder: scorecard.json (one record per key, value = mean of its samples) and samples.csv;
    ``protocols`` (default: one protocol, the same in every run, per kind and domain of the keys;
    ``{}``: none, as a scorecard written before cfcheck recorded protocols)."""
    folder = root / name
    folder.mkdir(parents=True)
    scores = []
    for key, values in samples.items():
        kind, domain, suite, metric, task = key
        mean = float(np.mean(list(values.values()))) if values else None
        scores.append(
            {
                "kind": kind,
                "domain": domain,
                "suite": suite,
                "metric": metric,
                "task": task,
                "value": mean,
                "ci_low": None if mean is None else mean - 0.1,
                "ci_high": None if mean is None else mean + 0.1,
                "n": len(values),
                "direction": (directions or {}).get(key, "higher" if metric != "d1" else "lower"),
                "threshold": None,
                "verdict": "pass",
                "reason": None,
            }
        )
    card = {
        "format": fmt,
        "method": method,
        "status": "complete",
        "outcomes": {},
        "profile": {"name": profile, "seeds": 1},
        "provenance": {
            "cfcheck_version": "0.1.0",
            "seeds": seeds if seeds is not None else [0],
            "reference_models": models if models is not None else MODELS,
        },
        "scores": scores,
        "protocols": same_protocols(samples, profile) if protocols is None else protocols,
    }
    (folder / "scorecard.json").write_text(json.dumps(card))
    rows = []
    for key, values in samples.items():
        rows += [[*key, position, repr(value), str(i), "0", "1"] for position, (i, value) in enumerate(values.items())]
    if shuffle:
        random.Random(1).shuffle(rows)
    with (folder / "samples.csv").open("w", newline="") as stream:
        writer = csv.writer(stream)
        writer.writerow(["kind", "domain", "suite", "metric", "task", "sample", "value", "input", "source", "target"])
        writer.writerows(rows)
    return folder


def same_protocols(samples: dict[tuple, dict], profile: str) -> dict:
    """One fixed protocol entry per (kind, domain) of ``samples``' keys."""
    parts = dict.fromkeys(("tasks", "metrics", "bars", "reference_models", "domain"), "0" * 64)
    return {
        f"{kind}/{domain}/{profile}": {
            "kind": kind,
            "domain": domain,
            "profile": profile,
            "version": "v1",
            "digest": "f" * 64,
            "parts": parts,
        }
        for kind, domain, *_ in samples
    }


def _test(comparison, key):
    (test,) = [t for t in comparison.tests if t.key == key]
    return test


def test_identical_methods_differ_nowhere(tmp_path):
    rng = np.random.default_rng(0)
    samples = {
        HIT: {i: float(rng.integers(0, 2)) for i in range(40)},
        DIST: {i: float(rng.normal(50, 5)) for i in range(40)},
    }
    a = write_run(tmp_path, "a", "alpha", samples)
    b = write_run(tmp_path, "b", "beta", samples, shuffle=True)
    comparison = compare_runs([load_run(a), load_run(b)])
    assert not comparison.significant() and differ_lines(comparison) == []
    assert {t.p_value for t in comparison.tests} == {1.0}
    assert all(t.difference == 0.0 for t in comparison.tests)
    assert comparison.best[HIT] == ["alpha", "beta"] and not hasattr(comparison, "wins")
    (board,) = [b for b in comparison.boards if b.family == HIT[:3]]
    assert board.average_ranks == {"alpha": 1.5, "beta": 1.5} and board.leader is None
    assert "no significant differences" in render_markdown(comparison)


def test_all_hits_against_no_hits_is_mcnemar_on_30_discordant_pairs(tmp_path):
    a = write_run(tmp_path, "a", "good", {HIT: dict.fromkeys(range(30), 1.0)})
    b = write_run(tmp_path, "b", "bad", {HIT: dict.fromkeys(range(30), 0.0)})
    comparison = compare_runs([load_run(a), load_run(b)])
    test = _test(comparison, HIT)
    assert test.test == "mcnemar" and test.n_shared == 30 and test.difference == 1.0
    assert test.p_value == pytest.approx(2 * 0.5**30, rel=1e-12)
    assert test.p_value == pytest.approx(scipy.stats.binomtest(30, 30, 0.5).pvalue, rel=1e-12)
    assert test.significant and comparison.best[HIT] == ["good"]
    (board,) = comparison.boards  # one block is too few for the leaderboard to mark a leader
    assert board.methods == ["good", "bad"] and board.test == "sign" and board.p_value == 1.0 and board.leader is None
    assert differ_lines(comparison)[0].startswith("good better than bad on vce/morpho validity target_accuracy")
    assert "**1 [0.9, 1.1]**" in render_markdown(comparison)


@given(st.lists(st.tuples(st.integers(0, 1), st.integers(0, 1)), min_size=1, max_size=60))
def test_mcnemar_matches_scipy_binomtest(pairs):
    first, second = (np.array(column, dtype=float) for column in zip(*pairs))
    b = int(np.sum((first == 1) & (second == 0)))
    c = int(np.sum((first == 0) & (second == 1)))
    expected = 1.0 if b + c == 0 else scipy.stats.binomtest(b, b + c, 0.5).pvalue
    assert mcnemar_exact(first, second) == pytest.approx(expected, rel=1e-9, abs=1e-300)


def test_paired_bootstrap_ci_contains_the_true_mean_difference(tmp_path):
    rng = np.random.default_rng(3)
    base = rng.normal(40, 10, size=80)  # large between-input spread: only pairing sees the shift
    noise = rng.normal(0, 1, size=80)
    noise -= noise.mean()  # the differences have mean exactly 0.7
    a = write_run(tmp_path, "a", "far", {DIST: {i: float(base[i] + 0.7 + noise[i]) for i in range(80)}})
    b = write_run(tmp_path, "b", "near", {DIST: {i: float(base[i]) for i in range(80)}})
    test = _test(compare_runs([load_run(a), load_run(b)]), DIST)
    assert test.test == "bootstrap" and test.n_shared == 80
    assert test.difference == pytest.approx(0.7)
    assert test.ci_low < 0.7 < test.ci_high and test.ci_high - test.ci_low < 0.6
    assert test.p_value < 1e-3 and test.significant


def test_paired_bootstrap_is_seeded_and_p_is_one_without_difference():
    diffs = np.random.default_rng(0).normal(0.2, 1, size=50)
    assert paired_bootstrap(diffs, seed=5) == paired_bootstrap(diffs, seed=5)
    assert paired_bootstrap(np.zeros(10))[3] == 1.0
    assert paired_bootstrap(np.full(10, 0.5))[3] == 0.0  # every input moved by the same amount


def test_pairing_is_by_input_not_by_row_or_sample_index(tmp_path):
    # B's value is A's + 1 on each shared input; B's rows are shuffled and 8 inputs are missing,
    # so pairing by sample index or row order would mix inputs up
    values = {i: float(i * i) for i in range(30)}
    kept = {i: v + 1.0 for i, v in values.items() if i % 4 != 1}
    a = write_run(tmp_path, "a", "alpha", {DIST: values})
    b = write_run(tmp_path, "b", "beta", {DIST: kept}, shuffle=True)
    test = _test(compare_runs([load_run(a), load_run(b)]), DIST)
    assert test.n_shared == len(kept) == 22
    assert test.difference == -1.0 and test.ci_low == test.ci_high == -1.0


def test_holm_adjustment():
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.5, 0.001]) == pytest.approx([0.5, 0.002])
    assert holm([]) == []


def test_holm_over_a_pair_makes_a_lone_weak_difference_insignificant(tmp_path):
    # 19 tasks without difference and one with p ~ 0.03: significant alone, not after Holm over 20
    hits = {
        ("vce", "morpho", "validity", "target_accuracy", f"task{k}"): dict.fromkeys(range(20), 1.0) for k in range(19)
    }
    weak = ("vce", "morpho", "validity", "target_accuracy", "weak")
    a = write_run(tmp_path, "a", "alpha", {**hits, weak: {i: float(i >= 6) for i in range(20)}})
    b = write_run(tmp_path, "b", "beta", {**hits, weak: dict.fromkeys(range(20), 1.0)})
    alone = compare_runs(
        [
            load_run(write_run(tmp_path, "c", "alpha", {weak: {i: float(i >= 6) for i in range(20)}})),
            load_run(write_run(tmp_path, "d", "beta", {weak: dict.fromkeys(range(20), 1.0)})),
        ]
    )
    assert _test(alone, weak).p_value == pytest.approx(2 * 0.5**6) and _test(alone, weak).significant
    test = _test(compare_runs([load_run(a), load_run(b)]), weak)
    assert test.p_holm == pytest.approx(20 * 2 * 0.5**6) and not test.significant


def _run(method: str, values: dict[int, float], key=DIST) -> Run:
    card = {
        "format": 3,
        "method": method,
        "profile": {"name": "quick"},
        "provenance": {"seeds": [0], "reference_models": MODELS},
        "protocols": same_protocols({key: values}, "quick"),
        "scores": [
            {
                "kind": key[0],
                "domain": key[1],
                "suite": key[2],
                "metric": key[3],
                "task": key[4],
                "value": float(np.mean(list(values.values()))),
                "direction": "lower",
                "n": len(values),
            }
        ],
    }
    return Run(Path(method), method, card, {key: {str(i): v for i, v in values.items()}}, True)


@given(st.lists(st.tuples(st.floats(-100, 100), st.floats(-100, 100)), min_size=2, max_size=40), st.booleans())
def test_swapping_the_runs_negates_the_difference_and_keeps_the_p_value(pairs, binary):
    if binary:
        pairs = [(float(x > 0), float(y > 0)) for x, y in pairs]
    first = _run("first", {i: x for i, (x, _) in enumerate(pairs)})
    second = _run("second", {i: y for i, (_, y) in enumerate(pairs)})
    forward = _test(compare_runs([first, second], resamples=300), DIST)
    backward = _test(compare_runs([second, first], resamples=300), DIST)
    assert backward.difference == -forward.difference
    assert (backward.ci_low, backward.ci_high) == (-forward.ci_high, -forward.ci_low)
    assert backward.p_value == forward.p_value and backward.significant == forward.significant
    values = {v for pair in pairs for v in pair}
    assert forward.test == ("mcnemar" if values <= {0.0, 1.0} else "bootstrap")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"profile": "full"}, "different profiles ('quick' vs 'full')"),
        ({"seeds": [0, 1]}, "different seeds ([0] vs [0, 1])"),
        (
            {"models": {**MODELS, "morpho/cnn": "c" * 64}},
            "different reference-model hashes: morpho/cnn (aaaaaaaaaaaa vs cccc",
        ),
        ({"fmt": 2}, "different scorecard formats (3 vs 2"),
    ],
)
def test_runs_made_differently_are_refused_naming_both(tmp_path, change, message):
    a = write_run(tmp_path, "a", "alpha", {HIT: {0: 1.0}})
    b = write_run(tmp_path, "b", "beta", {HIT: {0: 1.0}}, **change)
    with pytest.raises(CompareError) as error:
        compare_runs([load_run(a), load_run(b)])
    assert message in str(error.value) and str(a) in str(error.value) and str(b) in str(error.value)


def test_models_known_to_one_run_only_are_not_a_difference(tmp_path):
    a = write_run(tmp_path, "a", "alpha", {HIT: {0: 1.0}})
    b = write_run(tmp_path, "b", "beta", {HIT: {0: 1.0}}, models={**MODELS, "other/cnn": "d" * 64})
    assert compare_runs([load_run(a), load_run(b)]).keys == [HIT]


def test_unusable_inputs_are_clear_errors(tmp_path):
    a = write_run(tmp_path, "a", "alpha", {HIT: {0: 1.0}})
    with pytest.raises(CompareError, match="at least two runs"):
        compare_runs([load_run(a)])
    with pytest.raises(FileNotFoundError, match="no run folder"):
        load_run(tmp_path / "nowhere")
    (tmp_path / "a" / "samples.csv").unlink()
    with pytest.raises(FileNotFoundError, match="samples.csv is missing"):
        load_run(a)
    b = write_run(tmp_path, "b", "beta", {HIT: {0: 1.0}}, fmt=7)
    c = write_run(tmp_path, "c", "gamma", {HIT: {0: 1.0}}, fmt=7)
    with pytest.raises(CompareError, match="format 7 cannot be compared"):
        compare_runs([load_run(b), load_run(c)])


def test_set_level_metrics_are_listed_without_a_paired_test(tmp_path):
    fid = ("vce", "morpho", "realism", "fid_target", "cnn/ideal/seed0")
    a = write_run(tmp_path, "a", "alpha", {HIT: {0: 1.0}})
    b = write_run(tmp_path, "b", "beta", {HIT: {0: 1.0}})
    for folder, value in ((a, 3.0), (b, 5.0)):  # a set-level record: no rows in samples.csv
        card = json.loads((folder / "scorecard.json").read_text())
        card["scores"].append(
            {
                "kind": "vce",
                "domain": "morpho",
                "suite": "realism",
                "metric": "fid_target",
                "task": "cnn/ideal/seed0",
                "value": value,
                "ci_low": value - 1,
                "ci_high": value + 1,
                "n": 120,
                "direction": "lower",
            }
        )
        (folder / "scorecard.json").write_text(json.dumps(card))
    comparison = compare_runs([load_run(a), load_run(b)])
    assert comparison.best[fid] == ["alpha"]
    assert _test(comparison, fid).note.startswith("no paired test (set-level metric")
    (realism,) = [b for b in comparison.boards if b.family[2] == "realism"]
    assert realism.blocks == [("cnn/ideal/seed0", "fid_target")] and realism.methods == ["alpha", "beta"]
    assert "| fid_target | cnn/ideal/seed0 | ↓ | **3 [2, 4]** | 5 [4, 6] |" in render_markdown(comparison)


def _format_2_run(root: Path, name: str, method: str, hits: float) -> Path:
    """A run as format 2 wrote it: no kind or domain on records, samples.csv without `input`."""
    folder = root / name
    folder.mkdir()
    score = {
        "suite": "validity",
        "metric": "committee_oracle_target_accuracy",
        "task": "cnn/ideal/seed0",
        "value": hits,
        "ci_low": hits,
        "ci_high": hits,
        "n": 4,
        "direction": "higher",
        "verdict": "pass",
    }
    card = {
        "format": 2,
        "method": method,
        "status": "complete",
        "outcomes": {},
        "profile": {"name": "quick"},
        "provenance": {"cfcheck_version": "0.1.0", "seeds": [0], "reference_models": MODELS},
        "scores": [score],
    }
    (folder / "scorecard.json").write_text(json.dumps(card))
    rows = [f"validity,committee_oracle_target_accuracy,cnn/ideal/seed0,{i},{hits!r},{i},{i + 1}" for i in range(4)]
    (folder / "samples.csv").write_text("suite,metric,task,sample,value,source,target\n" + "\n".join(rows) + "\n")
    return folder


def test_format_2_runs_are_listed_but_not_paired(tmp_path):
    runs = [
        _format_2_run(tmp_path, "noise", "cfcheck.fixtures.noise", 0.0),
        _format_2_run(tmp_path, "truth", "cfcheck.fixtures.truth", 1.0),
    ]
    with pytest.raises(CompareError, match="unknown protocol"):  # written before protocols were recorded
        compare_runs([load_run(run) for run in runs])
    comparison = compare_runs([load_run(run) for run in runs], allow=True)
    key = ("-", "-", "validity", "committee_oracle_target_accuracy", "cnn/ideal/seed0")
    assert comparison.best[key] == ["cfcheck.fixtures.truth"]
    assert "no 'input' column" in _test(comparison, key).note and not comparison.significant()


def test_hostile_method_names_are_escaped_in_html(tmp_path):
    a = write_run(tmp_path, "a", "<script>alert(1)</script>", {HIT: dict.fromkeys(range(30), 1.0)})
    b = write_run(tmp_path, "b", "b&b", {HIT: dict.fromkeys(range(30), 0.0)})
    page = render_html(compare_runs([load_run(a), load_run(b)]))
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "b&amp;b" in page


def test_same_method_twice_gets_distinct_labels(tmp_path):
    a = write_run(tmp_path, "a", "alpha", {HIT: {0: 1.0}})
    b = write_run(tmp_path, "b", "alpha", {HIT: {0: 1.0}})
    assert compare_runs([load_run(a), load_run(b)]).methods == ["alpha [a]", "alpha [b]"]


def test_cli_prints_markdown_or_writes_both_files(tmp_path, capsys):
    a = write_run(tmp_path, "a", "good", {HIT: dict.fromkeys(range(30), 1.0)})
    b = write_run(tmp_path, "b", "bad", {HIT: dict.fromkeys(range(30), 0.0)})
    assert main(["compare", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# cfcheck comparison: `good` vs `bad`") and "## Where they really differ" in out
    assert main(["compare", str(a), str(b), "--output", str(tmp_path / "out")]) == 0
    assert (tmp_path / "out" / "comparison.md").read_text() == out
    assert (tmp_path / "out" / "comparison.html").read_text().startswith("<!doctype html>")


def test_cli_errors_exit_2_with_the_reason(tmp_path, capsys):
    a = write_run(tmp_path, "a", "alpha", {HIT: {0: 1.0}})
    assert main(["compare", str(a)]) == 2
    assert "at least two runs" in capsys.readouterr().err
    assert main(["compare", str(a), str(tmp_path / "missing")]) == 2
    assert "no run folder" in capsys.readouterr().err
    b = write_run(tmp_path, "b", "beta", {HIT: {0: 1.0}}, seeds=[3])
    assert main(["compare", str(a), str(b)]) == 2
    assert "different seeds" in capsys.readouterr().err


@pytest.mark.slow
def test_truth_is_significantly_better_than_noise_on_real_quick_runs(tmp_path, capsys):
    reports = tmp_path / "reports"
    for method in ("noise", "truth"):
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                f"--method=cfcheck.fixtures.vce.{method}",
                "--cfcheck-profile=quick",
                "-k",
                "vce and test_validity",
                f"--cfcheck-report-dir={reports}",
                "-p",
                "no:randomly",
                "-q",
            ],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
    runs = sorted(reports.iterdir())
    assert [run.name for run in runs] == ["noise-quick", "truth-quick"]
    assert (
        main(["compare", str(reports / "noise-quick"), str(reports / "truth-quick"), "--output", str(tmp_path / "out")])
        == 0
    )
    # the truth control read the domain's answer: its label says so in every table (issue 43, item 5)
    assert "truth [read the answer] better than" in (tmp_path / "out" / "comparison.md").read_text()
    comparison = compare_runs([load_run(run) for run in runs])
    tests = [t for t in comparison.tests if t.key[3] == "committee_oracle_target_accuracy"]
    assert tests and all(t.test == "mcnemar" and t.significant and t.difference < 0 for t in tests)
    assert all(comparison.best[t.key] == ["cfcheck.fixtures.vce.truth [read the answer]"] for t in tests)


def test_behind_best_names_the_methods_a_paired_test_puts_behind_the_leader(tmp_path):
    """Known by construction: on 30 inputs "lead" hits every target, "twin" too (tied for the lead),
    "close" misses 2 (McNemar p = 0.5: not behind), "poor" misses all; on d1 (lower is better) "poor"
    leads and the rest trail it by 10 on every input."""
    other = ("vce", "morpho", "validity", "oracle_score:oracle_lenet", "cnn/ideal/seed0")
    hits = {"lead": [1.0] * 30, "twin": [1.0] * 30, "close": [0.0, 0.0] + [1.0] * 28, "poor": [0.0] * 30}
    runs = []
    for name, values in hits.items():
        distance = [1.0 + i / 30 for i in range(30)] if name == "poor" else [11.0 + i / 30 for i in range(30)]
        samples = {HIT: dict(enumerate(values)), other: dict(enumerate(values)), DIST: dict(enumerate(distance))}
        runs.append(load_run(write_run(tmp_path, name, f"pkg.methods.{name}", samples)))
    comparison = compare_runs(runs)
    behind = behind_best(comparison)
    validity, closeness = ("vce", "morpho", "validity"), ("vce", "morpho", "closeness")
    assert behind["pkg.methods.poor"] == {validity: {"target_accuracy": (1, 1), "oracle_score:oracle_lenet": (1, 1)}}
    for name in ("lead", "twin", "close"):
        assert behind[f"pkg.methods.{name}"] == {closeness: {"d1": (1, 1)}}
    table = behind_best_table(comparison)
    assert table.header == ["method", "vce/morpho/closeness", "vce/morpho/validity"]
    rows = {row[0].text: [cell.text for cell in row[1:]] for row in table.rows}
    assert rows["poor"] == ["–", "oracle_score oracle_lenet 1/1; target_accuracy 1/1"]  # in key order
    assert rows["close"] == ["d1 1/1", "–"]
    assert "| poor | **–** |" in render_markdown(comparison)


def test_display_names_drop_a_shared_dotted_prefix_only_when_labels_stay_distinct():
    assert display_names(["cfcheck.fixtures.dvce", "cfcheck.fixtures.pgd"]) == {
        "cfcheck.fixtures.dvce": "dvce",
        "cfcheck.fixtures.pgd": "pgd",
    }
    assert display_names(["a.b.c", "a.x.c"]) == {"a.b.c": "b.c", "a.x.c": "x.c"}
    assert display_names(["alpha", "beta"]) == {"alpha": "alpha", "beta": "beta"}
    assert display_names(["pkg.m", "pkg.m (2)"]) == {"pkg.m": "m", "pkg.m (2)": "m (2)"}
    assert display_names(["only.one"]) == {"only.one": "only.one"}


def test_leaderboard_marks_a_method_better_on_every_block_and_not_equal_ones(tmp_path, capsys):
    """By construction: over 15 tasks "good"'s distance is 1 below "fair"'s and 2 below "poor"'s on
    every input (lower is better), "twin" equals "fair"; good leads significantly, fair and twin tie."""
    tasks = [("vce", "morpho", "closeness", "d1", f"cnn/ideal/seed{s}") for s in range(15)]
    rng = np.random.default_rng(2)
    base = {task: rng.normal(40, 5, size=10) for task in tasks}
    folders = [
        write_run(tmp_path, name, f"pkg.{name}", {t: dict(enumerate(base[t] + shift)) for t in tasks})
        for name, shift in (("poor", 2.0), ("fair", 1.0), ("good", 0.0), ("twin", 1.0))
    ]
    (board,) = compare_runs([load_run(f) for f in folders]).boards
    assert board.methods[0] == "pkg.good" and board.leader == "pkg.good" and len(board.blocks) == 15
    assert board.average_ranks["pkg.fair"] == board.average_ranks["pkg.twin"] == 2.5
    assert board.pairwise[("pkg.fair", "pkg.twin")] == 1.0
    assert main(["compare", *map(str, folders), "--output", str(tmp_path / "out"), "--resamples", "50"]) == 0
    markdown = (tmp_path / "out" / "comparison.md").read_text()
    assert "| **1** | **good** | **1.00** | **leader (significant)** |" in markdown
    assert "good leads, significantly" in markdown and "wins" not in markdown
    diagram = markdown.split("```text\n", 1)[1].split("```", 1)[0]  # the CD diagram, drawn in text
    assert "good" in diagram and "◆" in diagram and "not different: fair, twin" in diagram
    page = (tmp_path / "out" / "comparison.html").read_text()
    assert "<img alt='critical-difference diagram of vce / morpho / closeness' src='data:image/png;base64," in page


def test_a_record_repeated_in_a_scorecard_counts_once_in_the_leaderboard(tmp_path):
    a = write_run(tmp_path, "a", "alpha", {DIST: {0: 1.0}})
    b = write_run(tmp_path, "b", "beta", {DIST: {0: 2.0}})
    card = json.loads((a / "scorecard.json").read_text())
    card["scores"] = [{**card["scores"][0], "value": 9.0}, *card["scores"]]  # the last record stands
    (a / "scorecard.json").write_text(json.dumps(card))
    (board,) = compare_runs([load_run(a), load_run(b)]).boards
    assert board.blocks == [(DIST[4], DIST[3])] and board.methods == ["alpha", "beta"]
