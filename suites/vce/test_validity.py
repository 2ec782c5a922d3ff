"""Validity: does the counterfactual belong to the target class, for the classifier and for
independent oracles? (Väth et al. 2023 §3.1; Hvilshøj et al. 2021 §3)

Abstentions count as failures: an input the method declined to explain is not a valid
counterfactual. TA and the committee's OTA are the recommended minimal set; OS, TCV and OA
are reported for diagnosis. Bars and their calibration: ``cfcheck cards``.
"""

from __future__ import annotations

import pytest
import torch

from cfcheck.kinds.base import labels_where
from cfcheck.metrics.key import MetricKey
from cfcheck.metrics.transition import counterfactual_transition
from cfcheck.metrics.validity import (
    class_changes,
    committee_target_hits,
    label_variation_toward,
    oracle_agreement,
    oracle_target_hits,
    original_hits,
    target_hits,
)

pytestmark = pytest.mark.cfcheck_kind("vce")


def _valid(result, hits):
    return hits * result.valid.float()


def test_coverage(cfcheck_result, cfcheck_score):
    """Fraction of inputs the method did not abstain on."""
    cfcheck_score("coverage", cfcheck_result.valid.float(), labels=cfcheck_result.sample_labels)


def test_target_accuracy(cfcheck_result, cfcheck_score, cfcheck_task):
    """TA: the explained classifier assigns the counterfactual to the target class."""
    hits = target_hits(cfcheck_result.predictions(cfcheck_task.classifier), cfcheck_result.target)
    cfcheck_score("target_accuracy", _valid(cfcheck_result, hits), labels=cfcheck_result.sample_labels)


def test_class_change(cfcheck_result, cfcheck_score, cfcheck_task):
    """TCV: the classifier's decision changed at all (Hvilshøj eq. 1)."""
    name = cfcheck_task.classifier
    changes = class_changes(cfcheck_result.predictions(name), cfcheck_result.predictions(name, on="x"))
    cfcheck_score("tcv", _valid(cfcheck_result, changes), labels=cfcheck_result.sample_labels)


def test_original_accuracy(cfcheck_result, cfcheck_score, cfcheck_task):
    """OA: the counterfactual is still classified as the original's class (lower is better)."""
    name = cfcheck_task.classifier
    stays = original_hits(cfcheck_result.predictions(name), cfcheck_result.predictions(name, on="x"))
    # an abstention leaves the original class in place
    stays = torch.where(cfcheck_result.valid, stays, torch.ones_like(stays))
    cfcheck_score("original_accuracy", stays, labels=cfcheck_result.sample_labels)


def test_oracle_score(cfcheck_result, cfcheck_score, cfcheck_task, cfcheck_oracle):
    """OS: where the classifier's decision changed, does an oracle agree with it? (Hvilshøj §4)"""
    name, metric = cfcheck_task.classifier, MetricKey("oracle_score", cfcheck_oracle)
    changed = cfcheck_result.valid & (cfcheck_result.predictions(name) != cfcheck_result.predictions(name, on="x"))
    if not bool(changed.any()):
        cfcheck_score.unavailable(metric, "no counterfactual changed the classifier's decision")
    agree = oracle_agreement(
        cfcheck_result.predictions(name)[changed], cfcheck_result.predictions(cfcheck_oracle)[changed]
    )
    cfcheck_score(metric, agree, labels=labels_where(cfcheck_result.sample_labels, changed))


def test_oracle_target_accuracy(cfcheck_result, cfcheck_score, cfcheck_oracle):
    """OTA per oracle: an independently trained model sees the target class."""
    hits = oracle_target_hits(cfcheck_result.predictions(cfcheck_oracle), cfcheck_result.target)
    metric = MetricKey("oracle_target_accuracy", cfcheck_oracle)
    cfcheck_score(metric, _valid(cfcheck_result, hits), labels=cfcheck_result.sample_labels)


def test_committee_oracle_target_accuracy(cfcheck_result, cfcheck_score, cfcheck_evaluation_models):
    """OTA of the oracle committee (strict majority): the test that tells counterfactuals from
    adversarial examples."""
    if not cfcheck_evaluation_models.oracles:
        pytest.skip(f"domain {cfcheck_evaluation_models.domain.name!r} declares no oracle committee ('oracles')")
    hits = committee_target_hits(
        [cfcheck_result.predictions(o) for o in cfcheck_evaluation_models.oracles], cfcheck_result.target
    )
    cfcheck_score("committee_oracle_target_accuracy", _valid(cfcheck_result, hits), labels=cfcheck_result.sample_labels)


def test_label_variation_target(cfcheck_result, cfcheck_score, cfcheck_evaluation_models):
    """LVS of the class attribute oracle toward the target: the targeted attribute must visibly change,
    to the target class (Hvilshøj eq. 5, counted where the oracle reads the target)."""
    attribute = cfcheck_evaluation_models.class_attribute
    if attribute is None:
        pytest.skip(f"domain {cfcheck_evaluation_models.domain.name!r} declares no class_attribute_oracle")
    oracle = cfcheck_evaluation_models.attribute_oracles[attribute]
    lvs = label_variation_toward(
        cfcheck_result.probabilities(oracle, on="x"), cfcheck_result.probabilities(oracle), cfcheck_result.target
    )
    cfcheck_score(MetricKey("lvs_target", attribute), _valid(cfcheck_result, lvs), labels=cfcheck_result.sample_labels)


def test_counterfactual_transition(cfcheck_result, cfcheck_score, cfcheck_evaluation_models, cfcheck_task):
    """COUT: inserting the counterfactual's largest changes first moves the explained classifier
    from the class it predicts for the input towards the target (Khorram & Fuxin 2022)."""
    keep = cfcheck_result.valid
    if not bool(keep.any()):
        cfcheck_score.unavailable("cout", "the method abstained on every input; nothing to measure")
    zoo, classifier = cfcheck_evaluation_models, cfcheck_task.classifier
    cout = counterfactual_transition(
        cfcheck_result.x[keep],
        cfcheck_result.x_cf[keep],
        cfcheck_result.predictions(classifier, on="x")[keep],
        cfcheck_result.target[keep],
        lambda images: zoo.logits(classifier, images).softmax(1),
    )
    cfcheck_score("cout", cout, labels=labels_where(cfcheck_result.sample_labels, keep))
