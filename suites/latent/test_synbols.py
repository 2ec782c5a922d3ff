"""Bex et al.'s latent-counterfactual scores: EF, NCF, CF, SCE, the trivial rate and S#.

Per input, the share of its K counterfactuals in each category (``cfcheck cards synbols_ef_rate``
and the other ``synbols_*`` cards), and S#, the size of its greedy orthogonal/complementary set
of successful counterfactuals. S# is judged against its bar (at least one non-redundant
successful explanation per input on average; ``cfcheck cards synbols_s_sharp`` gives the
calibration); the rates are reported without a verdict.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.cfcheck_kind("latent")

RATES = ("ef", "ncf", "cf", "sce", "trivial")


def test_coverage(cfcheck_result, cfcheck_score):
    """Fraction of inputs the method did not abstain on."""
    cfcheck_score("coverage", cfcheck_result.valid.float(), labels=cfcheck_result.sample_labels)


@pytest.mark.parametrize("category", RATES)
def test_flip_rate(cfcheck_result, cfcheck_score, category):
    """EF, NCF, CF, SCE and trivial: each input's share of its K counterfactuals in the category."""
    cfcheck_score(
        f"synbols_{category}_rate", cfcheck_result.scores.rates[category], labels=cfcheck_result.sample_labels
    )


def test_s_sharp(cfcheck_result, cfcheck_score):
    """S#: successful counterfactuals per input that are orthogonal or complementary to each other."""
    cfcheck_score("synbols_s_sharp", cfcheck_result.scores.s_sharp.double(), labels=cfcheck_result.sample_labels)
