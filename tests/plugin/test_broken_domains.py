"""A broken domain fails once, clearly, and is not scored; any number of domains run together.

Each test writes a user's project as a new user would: a class-per-folder tree of RGB PNGs, a domain
module whose models live in a ``ModelStore`` folder (safetensors, sha256, an importable builder), and
then damages one thing. The run must fail ``test_domain_loads`` for that domain with a message naming
the domain, the file and what was expected, skip each of its suites in one line pointing there, put
none of its scores in the scorecard, and score the run's other domain as usual.
"""

from __future__ import annotations

import json
import textwrap

import pytest

DOMAIN_MODULE = textwrap.dedent('''
    """Bright and dark RGB squares in a class-per-folder tree; untrained but stored networks."""
    from pathlib import Path

    import torch
    from torch import nn

    from cfcheck.domains.data import FolderSource, ImageDomain
    from cfcheck.models.store import ModelStore

    HERE = Path(__file__).parent
    ROLES = {"explained": ("cnn",), "oracles": ("o1", "o2", "o3"), "embedding": ("embedding",)}
    FRACTIONS = {"train": 0.2, "oracle_train": 0.1, "selection": 0.1, "scored": 0.2, "reference": 0.4}


    class Tiny(nn.Module):
        def __init__(self, outputs=2):
            super().__init__()
            self.conv = nn.Conv2d(3, 4, 3, padding=1)
            self.head = nn.Linear(4, outputs)

        def feature_maps(self, x):
            return [torch.relu(self.conv(x))]

        def forward(self, x):
            return self.head(self.feature_maps(x)[0].mean((2, 3)))


    def build(outputs=2):
        return Tiny(outputs)


    def store_models(folder, name, outputs=2):
        store = ModelStore(folder, name)
        for seed, model in enumerate(ROLES["explained"] + ROLES["oracles"] + ROLES["embedding"]):
            torch.manual_seed(seed)
            store.add(model, Tiny(outputs), builder="MODULE:build", arch_kwargs={"outputs": outputs})


    def make_domain():
        return ImageDomain("NAME", FolderSource(HERE / "TREE", mode="RGB"), root=HERE / "NAME_domain",
                           model_roles=ROLES, fractions=FRACTIONS)
''')


def _tree(root, classes=("bright", "dark"), per_class=80, size=12):
    import numpy as np
    from PIL import Image

    generator = np.random.default_rng(0)
    for label, name in enumerate(classes):
        folder = root / name
        folder.mkdir(parents=True)
        for i in range(per_class):
            pixels = (generator.random((size, size, 3)) * 100 + 120 * (label % 2)).astype("uint8")
            Image.fromarray(pixels, "RGB").save(folder / f"{i:03d}.png")
    return root


def _domain(pytester, name, tree="tree", outputs=2, **tree_options):
    """Write ``<name>_module.py`` (domain ``name`` over ``tree``) and store its models."""
    import importlib

    module = f"{name}_module"
    if not (pytester.path / tree).exists():
        _tree(pytester.path / tree, **tree_options)
    pytester.makepyfile(**{module: DOMAIN_MODULE.replace("MODULE", module).replace("NAME", name).replace("TREE", tree)})
    pytester.syspathinsert()
    importlib.import_module(module).store_models(pytester.path / f"{name}_domain" / "models", name, outputs)
    return f"{module}:make_domain"


@pytest.fixture
def project(pytester, single_torch_thread):
    pytester.makefile(".toml", pyproject="[tool.cfcheck]\nprofile = 'quick'\n\n[tool.cfcheck.vce]\nn_per_source = 4\n")
    yield pytester
    import sys

    for name in [n for n in sys.modules if n.endswith("_module")]:
        sys.modules.pop(name)


def _run(pytester, *domains, keyword="test_domain_loads or test_target_accuracy or test_contract"):
    args = [f"--cfcheck-domain={d}" for d in domains]
    return pytester.runpytest(
        "--method=cfcheck.fixtures.vce.identity",
        *args,
        "-k",
        keyword,
        "-p",
        "no:randomly",
        "-rA",
        "-p",
        "no:cacheprovider",
    )


def _scores(pytester):
    path = pytester.path / "reports" / "identity-quick" / "scorecard.json"
    return json.loads(path.read_text())["scores"]


def _assert_not_scored(pytester, result, name, *expected):
    """``name`` fails its load check once with ``expected`` in the message, its suites are skipped
    pointing there, no score of it is in the scorecard, and the good domain is scored."""
    __tracebackhide__ = True
    text = result.stdout.str()
    assert f"FAILED test_domains.py::test_domain_loads[{name}]" in text, text[-3000:]
    failure = text[text.index(f"test_domain_loads[{name}]") :]
    for part in expected:
        assert part in failure, (part, text[-3000:])
    assert f"domain {name!r} cannot be used: see test_domain_loads[{name}]" in text
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed") == 1 and "error" not in outcomes and "errors" not in outcomes, outcomes
    scores = _scores(pytester)
    assert [s["metric"] for s in scores if s["domain"] == name] == [f"domain:{name}"]
    assert any(s["domain"] == "good" and s["metric"] == "target_accuracy" for s in scores)
    assert "PASSED test_domains.py::test_domain_loads[good]" in text


def test_two_user_domains_and_a_bundled_one_run_together(project):
    good, other = _domain(project, "good"), _domain(project, "other", tree="tree2")
    collected = project.runpytest(
        "--method=cfcheck.fixtures.vce.identity",
        f"--cfcheck-domain={good}",
        f"--cfcheck-domain={other}",
        "--cfcheck-domain=gmm",
        "--collect-only",
        "-q",
    )
    assert collected.ret == 0 and "INTERNALERROR" not in collected.stdout.str(), collected.stdout.str()[-3000:]
    assert not (project.path / "reports").exists(), "collecting runs nothing: no scorecard is written"
    result = _run(project, good, other, "gmm")
    assert result.ret == 0, result.stdout.str()[-3000:]  # uncalibrated domains: scores without verdicts
    outcomes = result.parseoutcomes()
    assert "error" not in outcomes and "errors" not in outcomes, result.stdout.str()[-3000:]
    scored = {s["domain"] for s in _scores(project) if s["metric"] == "target_accuracy"}
    assert scored == {"good", "other"}
    # the headline says how to calibrate each uncalibrated domain, by the spec the user typed
    assert (
        "until `cfcheck calibrate --domain good_module:make_domain` and `cfcheck calibrate --domain "
        "other_module:make_domain` earns their bars" in result.stdout.str()
    )


def test_the_domain_option_says_what_it_takes(pytester):
    text = pytester.runpytest("--help").stdout.str()
    assert "--cfcheck-domain=SPEC" in text and "pkg.module:factory" in " ".join(text.split())


def test_a_flipped_weight_byte(project):
    good, bad = _domain(project, "good"), _domain(project, "bad", tree="tree2")
    weights = project.path / "bad_domain" / "models" / "o2.safetensors"
    data = bytearray(weights.read_bytes())
    data[-1] ^= 0xFF
    weights.write_bytes(bytes(data))
    result = _run(project, bad, good)  # listed first: the contract must not depend on it
    _assert_not_scored(project, result, "bad", "model 'o2'", "sha256")
    assert "PASSED test_contract.py" in result.stdout.str()
    assert result.stdout.str().count("Traceback") == 0


def test_an_unreadable_image_in_the_training_part(project):
    good = _domain(project, "good")
    bad = _domain(project, "bad", tree="tree2")
    broken = project.path / "tree2" / "dark" / "000.png"
    broken.write_bytes(b"\x89PNG\r\n\x1a\n this is no image")
    result = _run(project, good, bad)
    _assert_not_scored(project, result, "bad", str(broken), "not a readable image")


def test_images_of_mixed_sizes(project):
    from PIL import Image

    good, bad = _domain(project, "good"), _domain(project, "bad", tree="tree2")
    odd = project.path / "tree2" / "bright" / "079.png"
    Image.new("RGB", (13, 12)).save(odd)
    result = _run(project, good, bad)
    _assert_not_scored(project, result, "bad", str(odd), "13×12 pixels, but the tree's images are 12×12")


def test_an_empty_class_folder(project):
    good = _domain(project, "good")
    bad = _domain(project, "bad", tree="tree2")
    (project.path / "tree2" / "aaa_empty").mkdir()
    result = _run(project, good, bad)
    text = result.stdout.str()
    assert "FAILED test_domains.py::test_domain_loads[bad_module:make_domain]" in text
    assert "aaa_empty: an empty class folder" in text and "remove the folder or add its images" in text
    assert [s["domain"] for s in _scores(project) if s["verdict"] == "error"] == ["-"]


def test_a_class_count_the_classifiers_do_not_have(project):
    good = _domain(project, "good")
    bad = _domain(project, "bad", tree="tree3", classes=("a", "b", "c"))  # three folders, two-output networks
    result = _run(project, good, bad)
    _assert_not_scored(
        project, result, "bad", "model 'cnn' (explained) gives outputs of shape (2, 2)", "the domain has 3 classes"
    )


def test_a_reference_split_too_small_for_the_profile(project):
    good = _domain(project, "good")
    bad = _domain(project, "bad", tree="tree2", per_class=30)  # 12 reference images of each class
    result = _run(project, good, bad)
    _assert_not_scored(
        project,
        result,
        "bad",
        "'bright' 28, 'dark' 28 real images in the reference split, which holds 'bright' 12, 'dark' 12",
        "[tool.cfcheck.vce] n_per_source",
    )


def test_a_run_that_scores_nothing_leaves_the_last_scorecard(project):
    """A run whose selected tests record no score, or a collection, writes no scorecard: the last one
    stays as it was and the terminal says so; collecting does not clear the example grids either."""
    good = _domain(project, "good")
    _run(project, good, keyword="test_target_accuracy")
    folder = project.path / "reports" / "identity-quick"
    before = (folder / "scorecard.json").read_bytes()
    result = _run(project, good, keyword="test_contract")  # the contract records no score
    assert "no score was recorded, so no scorecard was written" in result.stdout.str()
    assert (folder / "scorecard.json").read_bytes() == before
    grid = folder / "examples" / "drawn-earlier.png"
    grid.parent.mkdir(exist_ok=True)
    grid.write_bytes(b"png")
    project.runpytest("--method=cfcheck.fixtures.vce.identity", f"--cfcheck-domain={good}", "--collect-only", "-q")
    assert (folder / "scorecard.json").read_bytes() == before and grid.is_file()
