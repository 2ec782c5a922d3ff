"""cfcheck_score with per-sample values and a caller's interval (the randomisation similarity's
crossed t interval): the value is the samples' mean, the interval the one given, the samples kept."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from cfcheck.metrics.stats import summarize
from cfcheck.scoring import ScoreRecorder


class _Session:
    def __init__(self) -> None:
        self.profile = SimpleNamespace(bootstrap_resamples=200, inconclusive="fail", tolerances={})
        self.seed, self.baseline, self.records = 3, None, []

    def bars_for(self, domain):
        return SimpleNamespace(get=lambda metric, key: None)

    def add_record(self, record) -> None:
        self.records.append(record)


def _recorder() -> tuple[ScoreRecorder, _Session]:
    node = SimpleNamespace(
        nodeid="suite::test",
        module=None,
        path=Path("test_randomisation.py"),
        user_properties=[],
        get_closest_marker=lambda name: None,
    )
    session = _Session()
    return ScoreRecorder(session, node), session


def test_a_given_interval_replaces_the_input_bootstrap_and_keeps_the_samples():
    recorder, session = _recorder()
    samples = torch.tensor([0.1, 0.3, 0.2, 0.6])
    record = recorder(
        "attribution_randomisation_similarity", samples, ci=(0.05, 0.7), extra={"draws": {"means": [0.3]}}
    )
    assert (record.value, record.ci_low, record.ci_high, record.n) == (pytest.approx(0.3), 0.05, 0.7, 4)
    assert record.samples == pytest.approx(samples.tolist()) and record.extra == {"draws": {"means": [0.3]}}
    plain = recorder("attribution_randomisation_similarity", samples)  # without: the input bootstrap
    expected = summarize(samples.double(), n_resamples=200, seed=3, indicators=False)
    assert (plain.value, plain.ci_low, plain.ci_high) == pytest.approx(
        (expected.value, expected.ci_low, expected.ci_high)
    )
    assert session.records == [record, plain]


def test_samples_and_a_value_together_are_refused():
    recorder, _ = _recorder()
    with pytest.raises(TypeError, match="not both"):
        recorder("attribution_randomisation_similarity", torch.tensor([0.1, 0.2]), value=0.5)
