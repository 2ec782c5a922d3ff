"""The paired permutation test of set-level realism scores (cfcheck.reporting.compare_sets), the kept
features it reads (cfcheck.core.set_features), and its place in `cfcheck compare`."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from cfcheck.core.records import ScoreRecord
from cfcheck.core.set_features import (
    SET_FEATURES_FILE,
    SetFeatures,
    join_set_features,
    read_set_features,
    write_set_features,
)
from cfcheck.metrics.manifold import density
from cfcheck.metrics.realism import fid
from cfcheck.metrics.set_statistics import kid_all_pairs
from cfcheck.reporting.compare import compare_runs, load_run
from cfcheck.reporting.compare_render import render_markdown
from cfcheck.reporting.compare_sets import paired_set_test, set_statistic_of
from tests.reporting.test_compare import HIT, write_run

TASK = "cnn/ideal/seed0"


def sets(
    rng: np.random.Generator, n: int, dim: int, shift: float, *, classes: int = 2, reference: int = 60, drop: int = 0
) -> tuple[SetFeatures, SetFeatures]:
    """Two methods' kept features on the same n inputs (targets cycling over ``classes``): the real
    reference and method A drawn from the same class-shifted Gaussians (class c at c in every
    coordinate), method B moved by ``shift`` in each coordinate with alternating signs (away from
    every class, not onto another one); B abstains on its first ``drop`` inputs."""
    target = np.arange(n) % classes
    ref_classes = np.repeat(np.arange(classes), reference)
    real = rng.normal(size=(len(ref_classes), dim)) + ref_classes[:, None]
    a = rng.normal(size=(n, dim)) + target[:, None]
    b = rng.normal(size=(n, dim)) + target[:, None] + shift * (-1.0) ** np.arange(dim)
    inputs = np.arange(n)
    first = SetFeatures(a.astype(np.float32), target, inputs, real.astype(np.float32), ref_classes)
    second = SetFeatures(
        b[drop:].astype(np.float32), target[drop:], inputs[drop:], real.astype(np.float32), ref_classes
    )
    return first, second


def test_metric_keys_name_their_statistic():
    assert set_statistic_of("fid_target") == ("fid", True)
    assert set_statistic_of("coverage_domain") == ("coverage", False)
    assert set_statistic_of("scm_fid") == ("fid", True)
    assert set_statistic_of("d1") is None and set_statistic_of("fidelity") is None
    assert set_statistic_of("fid") is None and set_statistic_of("scm_fid_target") is None
    with pytest.raises(ValueError, match="not a set-level score"):
        paired_set_test("d1", *sets(np.random.default_rng(0), 8, 2, 0.0))


@pytest.mark.parametrize("metric", ["fid_target", "fid_domain", "kid_target", "kid_domain", "density_domain"])
def test_a_known_shift_is_significant(metric):
    first, second = sets(np.random.default_rng(1), 60, 8, 1.0)
    result = paired_set_test(metric, first, second, resamples=300, seed=0)
    assert result.n_shared == 60 and result.p_value < 1e-4 and result.p_permutation < 0.01
    worse = result.difference > 0 if metric.startswith(("fid", "kid")) else result.difference < 0
    assert not worse  # B, shifted away from the real images, scores worse


def test_the_difference_is_the_statistic_on_the_shared_inputs():
    """T against independent calls of the metrics on the gathered sets (B abstains on 6 inputs)."""
    first, second = sets(np.random.default_rng(2), 40, 6, 0.5, drop=6)
    a, b = first.features[6:].astype(np.float64), second.features.astype(np.float64)
    real, target = first.reference.astype(np.float64), first.classes[6:]
    for metric, statistic in (("fid_target", fid), ("kid_target", kid_all_pairs)):
        expected = sum(
            np.mean(target == c)
            * (
                statistic(real[first.reference_classes == c], a[target == c])
                - statistic(real[first.reference_classes == c], b[target == c])
            )
            for c in (0, 1)
        )
        result = paired_set_test(metric, first, second, resamples=50)
        assert result.n_shared == 34 and result.difference == pytest.approx(expected, rel=1e-6)
    counts = np.bincount(target)  # 17 shared inputs per class; 60 reference rows per class hold 3 × 17
    assert counts.tolist() == [17, 17]
    matched = np.concatenate([real[first.reference_classes == c][: 3 * 17] for c in (0, 1)])
    result = paired_set_test("density_domain", first, second, resamples=50)
    assert result.difference == pytest.approx(
        density(torch.from_numpy(matched), torch.from_numpy(a))
        - density(torch.from_numpy(matched), torch.from_numpy(b))
    )


@pytest.mark.parametrize(
    ("metric", "n", "rejections"),
    [("kid_domain", 30, 5), ("fid_domain", 30, 3), ("fid_target", 40, 7), ("density_domain", 30, 3)],
)
def test_equal_methods_are_rejected_at_about_the_nominal_rate(metric, n, rejections):
    """100 pairs of methods drawn from one distribution: the two-sided test at 0.05 rejects in at
    most 10 of them (P(Binomial(100, 0.05) > 10) ≈ 0.01); seeded, so the count is fixed (the
    figures docs/comparing.md quotes)."""
    rng = np.random.default_rng(3)
    p_values = [paired_set_test(metric, *sets(rng, n, 3, 0.0), resamples=200, seed=i).p_value for i in range(100)]
    rejected = sum(p < 0.05 for p in p_values)
    assert rejected == rejections <= 10
    assert np.mean(p_values) == pytest.approx(0.5, abs=0.1)  # about uniform under the null


def test_inputs_whose_targets_differ_are_refused():
    first, second = sets(np.random.default_rng(4), 10, 2, 0.0)
    flipped = SetFeatures(
        second.features, 1 - second.classes, second.inputs, second.reference, second.reference_classes
    )
    with pytest.raises(ValueError, match="different target classes"):
        paired_set_test("fid_domain", first, flipped)
    lone = SetFeatures(
        second.features[:1], second.classes[:1], np.array([99]), second.reference, second.reference_classes
    )
    with pytest.raises(ValueError, match="0 shared inputs"):
        paired_set_test("fid_domain", first, lone)


def test_kept_features_round_trip_and_share_their_reference(tmp_path):
    first, second = sets(np.random.default_rng(5), 12, 3, 0.0)
    assert np.array_equal(SetFeatures.decode(first.encode()).features, first.features)
    path = tmp_path / SET_FEATURES_FILE
    write_set_features(path, {("vce", "morpho", "a"): first, ("vce", "morpho", "b"): second})
    back = read_set_features(path)
    assert np.array_equal(back[("vce", "morpho", "b")].features, second.features)
    with np.load(path) as data:
        assert sum(name.endswith(".reference") for name in data.files) == 1
    assert read_set_features(tmp_path / "absent.npz") == {}
    (tmp_path / "bad.npz").write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="not a cfcheck set-features file"):
        read_set_features(tmp_path / "bad.npz")


def test_shards_kept_features_are_joined(tmp_path):
    first, second = sets(np.random.default_rng(9), 6, 2, 0.0)
    shards = [tmp_path / "s1", tmp_path / "s2", tmp_path / "s3"]
    for shard in shards:
        shard.mkdir()
    write_set_features(shards[0] / SET_FEATURES_FILE, {("vce", "morpho", "a"): first})
    write_set_features(shards[1] / SET_FEATURES_FILE, {("vce", "morpho", "b"): second})
    (tmp_path / "out").mkdir()
    assert join_set_features(shards, tmp_path / "out") == 2  # the third shard kept none
    assert sorted(read_set_features(tmp_path / "out" / SET_FEATURES_FILE)) == [
        ("vce", "morpho", "a"),
        ("vce", "morpho", "b"),
    ]
    assert join_set_features(shards[2:], tmp_path / "empty") == 0 and not (tmp_path / "empty").exists()


def test_a_drawn_reference_depends_on_the_seed_and_class_only():
    rng = np.random.default_rng(6)
    pool, labels = rng.normal(size=(300, 4)), np.repeat([0, 1, 2], 100)
    one = SetFeatures.draw(rng.normal(size=(4, 4)), [0, 0, 1, 1], [0, 1, 2, 3], pool, labels, seed=7, per_class=20)
    two = SetFeatures.draw(rng.normal(size=(3, 4)), [1, 2, 2], [2, 4, 5], pool, labels, seed=7, per_class=20)
    assert np.array_equal(one.reference[one.reference_classes == 1], two.reference[two.reference_classes == 1])
    assert len(one.reference) == 40 and sorted(set(two.reference_classes)) == [1, 2]


def test_records_keep_features_out_of_the_scorecard_json():
    first, _ = sets(np.random.default_rng(7), 4, 2, 0.0)
    record = ScoreRecord("n", "realism", "fid_target", TASK, 1.0, 4, "lower", set_features=first.encode())
    assert "set_features" not in record.to_dict(with_samples=False)
    assert ScoreRecord.from_dict(json.loads(json.dumps(record.to_dict()))).set_features == record.set_features


def _with_set_score(folder, metric: str, value: float, kept: SetFeatures | None) -> None:
    card = json.loads((folder / "scorecard.json").read_text())
    card["scores"].append(
        {
            "kind": "vce",
            "domain": "morpho",
            "suite": "realism",
            "metric": metric,
            "task": TASK,
            "value": value,
            "ci_low": value - 1,
            "ci_high": value + 1,
            "n": 40,
            "direction": "lower",
        }
    )
    (folder / "scorecard.json").write_text(json.dumps(card))
    if kept is not None:
        write_set_features(folder / SET_FEATURES_FILE, {("vce", "morpho", TASK): kept})


def test_compare_tests_set_level_scores_where_both_runs_kept_features(tmp_path):
    """Two runs whose counterfactual sets differ by a known shift: their FID is tested and the
    difference is significant after Holm; a third run without kept features gets a note."""
    first, second = sets(np.random.default_rng(8), 40, 4, 1.0)
    folders = [write_run(tmp_path, name, name, {HIT: {0: 1.0}}) for name in ("alpha", "beta", "gamma")]
    for folder, kept in zip(folders, (first, second, None)):
        _with_set_score(folder, "fid_domain", 1.0, kept)
    comparison = compare_runs([load_run(f) for f in folders], set_resamples=200)
    fid_key = ("vce", "morpho", "realism", "fid_domain", TASK)
    tests = {(t.first, t.second): t for t in comparison.tests if t.key == fid_key}
    tested = tests[("alpha", "beta")]
    assert tested.test == "permutation" and tested.n_shared == 40 and tested.significant and tested.difference < 0
    assert tests[("alpha", "gamma")].p_value is None
    assert "gamma kept no per-input features" in tests[("alpha", "gamma")].note
    markdown = render_markdown(comparison)
    assert "alpha better than beta on vce/morpho realism fid_domain" in markdown
    assert "| set permutation |" in markdown
