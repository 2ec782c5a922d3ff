"""An attribute domain whose ``reference`` split is too small for the SCM realism scores: its load
check passes with a warning naming the domain, the split, the images it holds and needs, and what to
change; the realism scores are skipped with that reason and the domain's other SCM scores are
computed. A domain with enough reference images gets no warning.

One pytester run per domain (a user's domain module written as a user would: random grey 8×8
images, a continuous and a binary attribute, an embedding), identity as the method.
"""

from __future__ import annotations

import json
import re
import textwrap

import pytest

DOMAINS = textwrap.dedent(
    '''
    """Two attribute domains of the same 600 images: a 5 % reference split and a 60 % one."""
    from pathlib import Path

    import numpy as np
    import torch
    from torch import nn

    from cfcheck.domains.attributes import Attributes, binary, continuous
    from cfcheck.domains.data import ArraySource, ImageDomain
    from cfcheck.models.store import ModuleStore

    HERE = Path(__file__).parent


    class Embedding(nn.Module):
        def __init__(self):
            super().__init__()
            torch.manual_seed(0)
            self.conv = nn.Conv2d(1, 4, 3, padding=1)

        def feature_maps(self, x):
            return [torch.relu(self.conv(x))]

        def forward(self, x):
            return self.feature_maps(x)[0].mean((2, 3))


    def _domain(name, fractions):
        rng = np.random.default_rng(0)
        images = rng.integers(0, 256, (600, 1, 8, 8), dtype=np.uint8)
        odd = np.arange(600) % 2
        table = {"grey": images.reshape(600, -1).mean(1) / 255.0, "odd": odd}
        attributes = Attributes([continuous("grey", bins=4), binary("odd")], table=table)
        return ImageDomain(name, ArraySource(images, odd), root=HERE / name, fractions=fractions,
                           model_store=ModuleStore({"embedding": Embedding()}),
                           model_roles={"embedding": ("embedding",)}, attributes=attributes)


    def small_reference():
        return _domain("small_reference", {"train": 0.45, "oracle_train": 0.1, "selection": 0.1, "scored": 0.3,
                                           "reference": 0.05})


    def large_reference():
        return _domain("large_reference", {"train": 0.1, "oracle_train": 0.05, "selection": 0.05, "scored": 0.2,
                                           "reference": 0.6})
    '''
)
SETTINGS = "[tool.cfcheck]\nprofile = 'quick'\n\n[tool.cfcheck.scm]\nn_inputs = 30\n"


def _run(pytester, factory):
    return pytester.runpytest(
        "--method=cfcheck.fixtures.scm.identity",
        f"--cfcheck-domain=user_domains.py:{factory}",
        "-k",
        "test_domain_loads or test_realism or test_composition",
        "-p",
        "no:randomly",
        "-p",
        "no:xdist",
        "-rA",
    )


def test_a_reference_split_too_small_for_realism_is_a_load_warning_and_realism_is_skipped(
    pytester, single_torch_thread
):
    pytester.makepyfile(user_domains=DOMAINS)
    pytester.makefile(".toml", pyproject=SETTINGS)
    result = _run(pytester, "small_reference")
    text = re.sub(r"\s+", " ", result.stdout.str())
    assert "PASSED test_domains.py::test_domain_loads[small_reference]" in text, text[-3000:]
    # 600 images, stratified by odd: the reference split holds 5 % of each class, 15 + 15; each task scores
    # 30 inputs, about 15 of each class, which need 7 real images each
    warning = re.search(
        r"DomainWarning: (domain 'small_reference': realism compares .*?other scores are computed)", text
    )
    assert warning, text[-4000:]
    message = warning.group(1)
    assert "from the reference split 'reference' (30 images)" in message
    for odd in (0, 1):
        found = re.search(rf"odd = {odd}: (\d+) for (\d+) counterfactuals, it holds 15", message)
        assert found and int(found.group(1)) == 7 * int(found.group(2)), message
    assert "give the domain more images, a larger reference fraction (ImageDomain(fractions=...)), or fewer " in message
    assert "inputs ([tool.cfcheck.scm] n_inputs)" in message
    assert (
        "Realism (scm_fid, scm_kid) is skipped on 2 of the run's tasks at the quick profile (do_grey/seed0, " in message
    )
    # realism skips with the reason; composition is computed
    skipped = re.findall(r"SKIPPED \[(\d+)\] \S+test_realism.py:\d+: domain 'small_reference': realism compares", text)
    assert sum(map(int, skipped)) == 4, text[-4000:]  # scm_fid and scm_kid on both tasks
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed", 0) == 0 and outcomes.get("passed", 0) >= 2, outcomes
    (card,) = list((pytester.path / "reports").glob("*/scorecard.json"))
    scores = json.loads(card.read_text())["scores"]
    assert any(s["metric"].startswith("composition_l1") for s in scores)
    assert not any(s["metric"].startswith("scm_") for s in scores)


def test_a_reference_split_large_enough_gets_no_warning_and_realism_is_scored(pytester, single_torch_thread):
    pytester.makepyfile(user_domains=DOMAINS)
    pytester.makefile(".toml", pyproject=SETTINGS)
    result = _run(pytester, "large_reference")
    text = result.stdout.str()
    assert "PASSED test_domains.py::test_domain_loads[large_reference]" in text, text[-3000:]
    assert "DomainWarning" not in text
    (card,) = list((pytester.path / "reports").glob("*/scorecard.json"))
    assert any(s["metric"] == "scm_fid" for s in json.loads(card.read_text())["scores"])


@pytest.fixture(autouse=True)
def _forget_the_domain_module():
    yield
    import sys

    sys.modules.pop("user_domains", None)
