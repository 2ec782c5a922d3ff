"""Adversarial transfer measurement: tiny runs, checked against what can be computed by hand."""

from __future__ import annotations

import json

import pytest
import torch
from torch import nn

from cfcheck.domains import get_domain
from cfcheck.models.classifiers.transfer import adversarial_transfer

#: the default committee: the domain's oracles
MORPHO = get_domain("morpho")
COMMITTEE = MORPHO.model_roles["oracles"]


class _Constant(nn.Module):
    """Predicts ``label`` for every image."""

    def __init__(self, label: int) -> None:
        super().__init__()
        self.label = label
        self.anchor = nn.Parameter(torch.zeros(()))  # so .parameters() is not empty

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        logits = torch.zeros(x.shape[0], 10)
        logits[:, self.label] = 1.0
        return logits + 0 * self.anchor


def _targets(n: int, seed: int) -> torch.Tensor:
    """The targets adversarial_transfer draws (same generator calls), recomputed here."""
    from cfcheck.domains.morpho import load_split

    data = load_split("test")
    rng = torch.Generator().manual_seed(seed)
    index = torch.randperm(len(data), generator=rng)[:n]
    labels = data.labels[index].long()
    return (labels + torch.randint(1, 10, (n,), generator=rng)) % 10, labels


def test_tiny_run_reports_every_model_and_is_deterministic():
    kwargs = dict(steps=3, seed=5, evaluated=["attr_digit"])
    rates = adversarial_transfer(12, domain=MORPHO, **kwargs)
    assert list(rates) == ["cnn", "attr_digit", *COMMITTEE, "committee_majority"]
    assert all(0.0 <= v <= 1.0 and (v * 12) == round(v * 12) for v in rates.values())
    assert adversarial_transfer(12, domain=MORPHO, **kwargs) == rates


def test_rates_count_target_hits_and_majority_votes():
    n, seed = 40, 3
    targets, labels = _targets(n, seed)
    assert not (targets == labels).any()  # each image goes to another class
    models = {
        "zero": _Constant(0),
        "one": _Constant(1),
        "oracle_a": _Constant(2),
        "oracle_b": _Constant(2),
        "oracle_c": _Constant(7),
    }
    rates = adversarial_transfer(
        n,
        domain=MORPHO,
        steps=1,
        seed=seed,
        evaluated=["zero", "one"],
        committee=["oracle_a", "oracle_b", "oracle_c"],
        models=models,
    )
    for name, label in (("zero", 0), ("one", 1), ("oracle_a", 2), ("oracle_c", 7)):
        assert rates[name] == pytest.approx(float((targets == label).float().mean()))
    # two of three members vote 2: the majority predicts the target where it is 2
    assert rates["committee_majority"] == rates["oracle_a"]
    without = adversarial_transfer(n, domain=MORPHO, steps=1, seed=seed, evaluated=[], committee=[], models=models)
    assert set(without) == {"cnn"} and without["cnn"] == rates["cnn"]


def test_more_steps_fool_the_attacked_classifier_more():
    weak = adversarial_transfer(24, domain=MORPHO, steps=1, eps=0.02, evaluated=[], committee=[])
    strong = adversarial_transfer(24, domain=MORPHO, steps=10, eps=0.15, evaluated=[], committee=[])
    assert strong["cnn"] > weak["cnn"] and strong["cnn"] >= 0.5


def test_argument_errors():
    with pytest.raises(ValueError, match="n must be positive"):
        adversarial_transfer(0, domain=MORPHO)
    with pytest.raises(ValueError, match="exceeds"):
        adversarial_transfer(10**6, domain=MORPHO)

    with pytest.raises(TypeError, match=r"takes the domain object, got the name 'morpho'"):
        adversarial_transfer(6, domain="morpho")  # type: ignore[arg-type]


def test_cfcheck_transfer_prints_json(capsys):
    from cfcheck.cli import main

    previous = torch.get_num_threads()
    try:
        assert main(["transfer", "--domain", "morpho", "--n", "6", "--steps", "2", "--evaluated"]) == 0
    finally:
        torch.set_num_threads(previous)
    printed = json.loads(capsys.readouterr().out)
    assert printed["domain"] == "morpho" and printed["n"] == 6 and printed["source"] == "cnn"
    assert set(printed["target_rate"]) == {"cnn", *COMMITTEE, "committee_majority"}
    assert printed["target_rate"] == adversarial_transfer(6, domain=MORPHO, steps=2, evaluated=[])
