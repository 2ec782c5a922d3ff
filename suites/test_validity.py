"""Validity: does the counterfactual belong to the target class, for the classifier and for
independent oracles? (Väth et al. 2023 §3.1; Hvilshøj et al. 2021 §3)

Abstentions count as failures: an input the method declined to explain is not a valid
counterfactual. TA and the committee's OTA are the recommended minimal set; OS, TCV and OA
are reported for diagnosis.
"""

from __future__ import annotations

import pytest
import torch

from cfcheck.metrics.validity import (
    class_changes,
    committee_vote,
    label_variation,
    oracle_agreement,
    oracle_target_hits,
    original_hits,
    target_hits,
)

pytestmark = pytest.mark.cfcheck_kind("vce")


def _valid(result, hits):
    return hits * result.valid.float()


def test_coverage(cfcheck_vce, cfcheck_score):
    """Fraction of inputs the method did not abstain on."""
    cfcheck_score("coverage", cfcheck_vce.valid.float(), labels=cfcheck_vce.sample_labels)


def test_target_accuracy(cfcheck_vce, cfcheck_score, cfcheck_task):
    """TA: the explained classifier assigns the counterfactual to the target class."""
    hits = target_hits(cfcheck_vce.predictions(cfcheck_task.classifier), cfcheck_vce.target)
    cfcheck_score("target_accuracy", _valid(cfcheck_vce, hits), labels=cfcheck_vce.sample_labels)


def test_class_change(cfcheck_vce, cfcheck_score, cfcheck_task):
    """TCV: the classifier's decision changed at all (Hvilshøj eq. 1)."""
    name = cfcheck_task.classifier
    changes = class_changes(cfcheck_vce.predictions(name), cfcheck_vce.predictions(name, on="x"))
    cfcheck_score("tcv", _valid(cfcheck_vce, changes), labels=cfcheck_vce.sample_labels)


def test_original_accuracy(cfcheck_vce, cfcheck_score, cfcheck_task):
    """OA: the counterfactual is still classified as the original's class (lower is better)."""
    name = cfcheck_task.classifier
    stays = original_hits(cfcheck_vce.predictions(name), cfcheck_vce.predictions(name, on="x"))
    # an abstention leaves the original class in place
    stays = torch.where(cfcheck_vce.valid, stays, torch.ones_like(stays))
    cfcheck_score("original_accuracy", stays, labels=cfcheck_vce.sample_labels)


def test_oracle_score(cfcheck_vce, cfcheck_score, cfcheck_task, cfcheck_oracle):
    """OS: the classifier and an oracle agree on the counterfactual."""
    agree = oracle_agreement(cfcheck_vce.predictions(cfcheck_task.classifier), cfcheck_vce.predictions(cfcheck_oracle))
    cfcheck_score(f"oracle_score:{cfcheck_oracle}", _valid(cfcheck_vce, agree), labels=cfcheck_vce.sample_labels)


def test_oracle_target_accuracy(cfcheck_vce, cfcheck_score, cfcheck_oracle):
    """OTA per oracle: an independently trained model sees the target class."""
    hits = oracle_target_hits(cfcheck_vce.predictions(cfcheck_oracle), cfcheck_vce.target)
    cfcheck_score(
        f"oracle_target_accuracy:{cfcheck_oracle}", _valid(cfcheck_vce, hits), labels=cfcheck_vce.sample_labels
    )


def test_committee_oracle_target_accuracy(cfcheck_vce, cfcheck_score, cfcheck_models):
    """OTA of the oracle committee (soft vote): the test that tells counterfactuals from
    adversarial examples."""
    vote = committee_vote([cfcheck_vce.probabilities(o) for o in cfcheck_models.oracles])
    hits = oracle_target_hits(vote, cfcheck_vce.target)
    cfcheck_score("committee_oracle_target_accuracy", _valid(cfcheck_vce, hits), labels=cfcheck_vce.sample_labels)


def test_label_variation_target(cfcheck_vce, cfcheck_score, cfcheck_models):
    """LVS of the digit oracle: the targeted attribute must visibly change (Hvilshøj eq. 5)."""
    oracle = cfcheck_models.attribute_oracles["digit"]
    lvs = label_variation(cfcheck_vce.probabilities(oracle, on="x"), cfcheck_vce.probabilities(oracle))
    cfcheck_score("lvs:digit", _valid(cfcheck_vce, lvs), labels=cfcheck_vce.sample_labels)
