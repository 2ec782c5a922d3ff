"""Park et al.'s (2023) findings, reproduced through cfcheck's removal engine.

On the Gaussian-mixture toy (§5.1, Fig. 3): removing along the true feature degraded by noise
of growing ratio, GOAR's cumulative-misclassification area falls monotonically with the ratio,
while ROAR's and ROAD's accuracy areas do not separate the features at all; the random
attribution is worst under GOAR. The toy's denoiser is exact, so GOAR needs no trained model.
The numbers README shows come from ``python -m cfcheck.kinds.attribution.reproduction``.
"""

from __future__ import annotations

import dataclasses

import pytest

from cfcheck.kinds.attribution.reproduction import LocalRun, default_methods, removal_table
from cfcheck.kinds.attribution.section import SECTION_DEFAULTS

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("removal-findings")]

#: Fig. 3's x-axis is a sweep of strengths: ten levels resolve the curves' timing
TOY = dataclasses.replace(SECTION_DEFAULTS["quick"], removal_test=1000,
                          goar_levels=tuple(round(0.1 * i, 1) for i in range(1, 11)))


@pytest.fixture(scope="module")
def toy_table():
    return removal_table(LocalRun(TOY), "gmm", "mlp", default_methods("gmm"), log=lambda _: None)


def test_goar_orders_the_noise_ratios_of_the_true_feature(toy_table):
    goar = [row["goar:morf"] for name, row in toy_table.items() if name.startswith("true feature")]
    assert goar == sorted(goar, reverse=True), goar
    # not merely ordered: the clean feature removes at least 5x what noise of 4x its norm does
    assert goar[0] > 5 * goar[-1]
    assert toy_table["random"]["goar:morf"] < goar[-1]


@pytest.mark.parametrize("curve", ["roar:morf", "roar:lerf", "road:morf", "road:lerf"])
def test_pixel_removal_does_not_separate_the_features(toy_table, curve):
    areas = [row[curve] for row in toy_table.values()]
    # measured: every feature and the random attribution score 0.9998-1.0 (the toy stays separable
    # after any pixel removal: each coordinate carries the class)
    assert max(areas) - min(areas) < 0.01, areas
    goar = [row["goar:morf"] for row in toy_table.values()]
    assert max(goar) - min(goar) > 0.3  # where GOAR's spread is 0.38
