"""A domain defined outside cfcheck's package, in a temporary folder, as a new user would write it:
its own data, its own architectures (built through an importable builder) and its own model store.

The VCE and attribution suites run on it end to end: first uncalibrated (scores and intervals, no
verdicts, a neutral badge and a banner that says how to calibrate), then, after ``cfcheck calibrate
--domain``, with verdicts. A second domain, read from a class-per-folder tree of RGB PNGs, runs the
VCE contract and validity suites with ready modules handed over by the domain (no store on disk).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from cfcheck.calibration.runs import bundled_adapter

DOMAIN_MODULE = textwrap.dedent('''
    """Four classes of 8x8 images: class k is a bright bar on rows 2k and 2k+1, over noise."""
    from pathlib import Path

    import torch
    from torch import nn

    from cfcheck.domains.data import ArraySource, ImageDomain

    ROOT = Path(__file__).resolve().parent / "bars_domain"
    ROLES = {"explained": ("cnn",), "oracles": ("oracle_a", "oracle_b", "oracle_c"), "embedding": ("embedding",)}


    class Net(nn.Module):
        def __init__(self, width=8, kernel=3, pool="avg"):
            super().__init__()
            self.block1 = nn.Sequential(nn.Conv2d(1, width, kernel, padding=kernel // 2), nn.ReLU())
            self.block2 = nn.Sequential(nn.Conv2d(width, width, 3, padding=1), nn.ReLU(),
                                        nn.AvgPool2d(2) if pool == "avg" else nn.MaxPool2d(2))
            self.head = nn.Linear(width * 16, 4)

        def feature_maps(self, x):
            first = self.block1(x)
            return [first, self.block2(first)]

        def forward(self, x):
            return self.head(self.feature_maps(x)[-1].flatten(1))


    def build(**kwargs):
        return Net(**kwargs)


    def images(n_per_class=200, seed=0):
        generator = torch.Generator().manual_seed(seed)
        x = 0.25 * torch.rand(4 * n_per_class, 1, 8, 8, generator=generator)
        y = torch.arange(4).repeat_interleave(n_per_class)
        for k in range(4):
            x[y == k, :, 2 * k:2 * k + 2, :] += 0.7
        return ArraySource(x.clamp(0, 1), y, name="bars")


    def make_domain():
        return ImageDomain("bars", images(), root=ROOT, model_roles=ROLES, seed=0,
                           fractions={"train": 0.3, "oracle_train": 0.2, "selection": 0.1, "scored": 0.1,
                                      "reference": 0.3})


    def train_models():
        from cfcheck.models.store import ModelStore

        domain = make_domain()
        store = ModelStore(ROOT / "models", domain.name)
        specs = {"cnn": ({"width": 8}, "train"), "oracle_a": ({"width": 6, "kernel": 5}, "oracle_train"),
                 "oracle_b": ({"width": 10, "pool": "max"}, "oracle_train"),
                 "oracle_c": ({"width": 4, "kernel": 1}, "oracle_train"), "embedding": ({"width": 8}, "oracle_train")}
        for seed, (name, (kwargs, split)) in enumerate(specs.items()):
            torch.manual_seed(seed)
            model, data = Net(**kwargs), domain.split(split)
            optimiser = torch.optim.Adam(model.parameters(), lr=1e-2)
            for _ in range(30):
                optimiser.zero_grad()
                nn.functional.cross_entropy(model(data.images), data.labels).backward()
                optimiser.step()
            store.add(name, model.eval(), builder="user_domain:build", arch_kwargs=kwargs)
''')

SETTINGS = textwrap.dedent("""
    [tool.cfcheck]
    domains = ["user_domain:make_domain"]
    profile = "quick"

    [tool.cfcheck.vce]
    n_per_source = 4
    pair_sets = ["other"]

    [tool.cfcheck.attribution]
    n_inputs = 24
    removal_train = 40
    removal_test = 24
""")


@pytest.fixture
def user_project(pytester, single_torch_thread):
    """A user's folder with the domain module, its pyproject settings and its trained models."""
    pytester.makepyfile(user_domain=DOMAIN_MODULE)
    pytester.makefile(".toml", pyproject=SETTINGS)
    pytester.syspathinsert()
    import importlib

    module = importlib.import_module("user_domain")
    module.train_models()
    yield pytester
    sys.modules.pop("user_domain", None)


def _scorecard(pytester, method):
    return json.loads((pytester.path / "reports" / f"{method}-quick" / "scorecard.json").read_text())


def test_user_domain_uncalibrated_then_calibrated(user_project):
    pytester = user_project
    result = pytester.runpytest("--method=cfcheck.fixtures.vce.wachter", "-p", "no:randomly")
    scorecard = _scorecard(pytester, "wachter")
    scores = [s for s in scorecard["scores"] if s["domain"] == "bars"]
    assert scores and {s["suite"] for s in scores} >= {"validity", "closeness", "realism"}
    assert all(s["verdict"] in (None, "error") for s in scores), "an uncalibrated domain has no verdicts"
    assert not [s for s in scores if s["verdict"] == "error"], [s["reason"] for s in scores if s["reason"]]
    assert all(s["ci_low"] <= s["value"] <= s["ci_high"] for s in scores if s["suite"] != "realism")
    assert scorecard["profile"]["domains"]["bars"]["bars"] == "uncalibrated"
    run_dir = pytester.path / "reports" / "wachter-quick"
    assert "reported only" in (run_dir / "badge.svg").read_text()
    html = (run_dir / "scorecard.html").read_text()
    assert "no bars: reported only" in html and "uncalibrated domain bars" in html and "cfcheck calibrate" in html
    assert result.ret == 0, result.stdout.str()[-3000:]

    calibrate = subprocess.run(
        [
            sys.executable,
            "-m",
            "cfcheck.cli",
            "calibrate",
            "--domain",
            "user_domain:make_domain",
            "--profile",
            "quick",
            "--seeds",
            "0",
            "--out",
            str(pytester.path / "calibration-runs"),
        ],  # one seed: the flow, not the seeds
        cwd=pytester.path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert calibrate.returncode == 0, calibrate.stderr[-3000:]
    bars = json.loads((pytester.path / "bars_domain" / "bars-quick.json").read_text())["bars"]
    # the controls separate on the classifier's target accuracy and on the distance to the input
    assert bars["target_accuracy"]["kind"] == "min" and bars["d2"]["kind"] == "max"
    assert "on domain 'bars'" in bars["target_accuracy"]["rationale"]

    pytester.runpytest("--method=cfcheck.fixtures.vce.identity", "-p", "no:randomly")
    verdicts = {s["metric"]: s["verdict"] for s in _scorecard(pytester, "identity")["scores"] if s["task"] != "-"}
    assert verdicts["target_accuracy"] == "fail"  # an unchanged input is not a counterfactual
    assert verdicts["d2"] == "pass"  # and it is as close to the input as can be
    assert _scorecard(pytester, "identity")["profile"]["domains"]["bars"]["bars"] == "calibrated"


def test_user_domain_attribution_suites(user_project):
    """ROAD needs only the domain's data and explained model, so it runs; ROAR and GOAR retrain by a
    recipe (and GOAR projects with a diffusion model), so on a domain without them they skip with
    that reason; the randomisation suite's two tests (random classifier, cascade) skip without a
    random classifier and its trained counterpart."""
    result = user_project.runpytest("--method=cfcheck.fixtures.attribution.gradient", "-p", "no:randomly", "-rs")
    scorecard = _scorecard(user_project, "attr_gradient")
    assert {s["suite"] for s in scorecard["scores"] if s["domain"] == "bars"} == {"road"}
    assert {s["metric"] for s in scorecard["scores"]} >= {"road_area:morf", "road_area:lerf"}
    assert not [s for s in scorecard["scores"] if s["verdict"] == "error"]
    result.assert_outcomes(passed=5, skipped=7, deselected=70)
    text = result.stdout.str()
    assert "ROAR retrains a model on removed data: domain 'bars' declares no 'retrained' model" in text
    assert "GOAR retrains a model on removed data" in text


@pytest.fixture
def larger_user_project(pytester, single_torch_thread):
    """The same user domain with 1,000 images per class (ROAD's gap to random needs the test inputs)."""
    pytester.makepyfile(user_domain=DOMAIN_MODULE.replace("n_per_class=200", "n_per_class=1000"))
    pytester.makefile(".toml", pyproject=SETTINGS)
    pytester.syspathinsert()
    import importlib

    importlib.import_module("user_domain").train_models()
    yield pytester
    sys.modules.pop("user_domain", None)


def _road_gap_verdicts(pytester, method):
    pytester.runpytest(f"--method={bundled_adapter(method)}", "-p", "no:randomly")
    scores = _scorecard(pytester, method)["scores"]
    return {s["metric"]: s["verdict"] for s in scores if s["metric"].startswith("road_gap") and s["domain"] == "bars"}


def test_user_domain_attribution_uncalibrated_then_calibrated(larger_user_project):
    """The attribution kind on the user's domain: ROAD's gaps to random are reported without a verdict
    until `cfcheck calibrate --kind attribution --domain` has run the controls (the gradient family and
    its noisy ladder against an independent random attribution) on seeds 0-2. The MoRF gap separates
    them and earns a bar, so the gradient passes it and the random attribution does not; under LeRF the
    noisy ladder rises with the noise, so that gap keeps no bar and the values file says why."""
    pytester = larger_user_project
    before = _road_gap_verdicts(pytester, "attr_gradient")
    assert set(before) == {"road_gap:morf", "road_gap:lerf"} and set(before.values()) == {None}
    assert "reported only" in (pytester.path / "reports" / "attr_gradient-quick" / "badge.svg").read_text()
    calibrate = subprocess.run(
        [
            sys.executable,
            "-m",
            "cfcheck.cli",
            "calibrate",
            "--domain",
            "user_domain:make_domain",
            "--kind",
            "attribution",
            "--profile",
            "quick",
            "--seeds",
            "0",
            "1",
            "2",
        ],
        cwd=pytester.path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert calibrate.returncode == 0, calibrate.stderr[-3000:]
    folder = pytester.path / "bars_domain"
    bars = json.loads((folder / "bars-quick.json").read_text())["bars"]
    assert set(bars) == {"road_gap:morf"} and bars["road_gap:morf"]["kind"] == "min"  # written in the one spelling
    assert "on domain 'bars'" in bars["road_gap:morf"]["rationale"]
    stored = json.loads((folder / "calibration-attribution-quick.json").read_text())
    assert (
        stored["seeds"] == [0, 1, 2] and "the least noisy rung of the ladder" in stored["without_bar"]["road_gap:lerf"]
    )
    gradient, random = _road_gap_verdicts(pytester, "attr_gradient"), _road_gap_verdicts(pytester, "attr_random")
    assert gradient == {"road_gap:morf": "pass", "road_gap:lerf": None}
    assert random["road_gap:morf"] in ("fail", "inconclusive") and random["road_gap:lerf"] is None


FOLDER_DOMAIN = textwrap.dedent('''
    """RGB PNGs in a class-per-folder tree, with ready modules handed over by the domain."""
    from pathlib import Path

    import torch
    from torch import nn

    from cfcheck.domains.data import FolderSource, ImageDomain
    from cfcheck.models.store import ModuleStore


    class Tiny(nn.Module):
        def __init__(self, seed):
            super().__init__()
            torch.manual_seed(seed)
            self.conv = nn.Conv2d(3, 4, 3, padding=1)
            self.head = nn.Linear(4, 2)

        def feature_maps(self, x):
            return [torch.relu(self.conv(x))]

        def forward(self, x):
            return self.head(self.feature_maps(x)[0].mean((2, 3)))


    def make_domain():
        modules = {name: Tiny(seed) for seed, name in enumerate(("cnn", "o1", "o2", "o3", "embedding"))}
        return ImageDomain("tree", FolderSource(Path(__file__).parent / "tree", mode="RGB"),
                           root=Path(__file__).parent / "tree_domain", model_store=ModuleStore(modules),
                           model_roles=ROLES)


    ROLES = {"explained": ("cnn",), "oracles": ("o1", "o2", "o3"), "embedding": ("embedding",)}
''')


@pytest.mark.parametrize("size", [16, 64, 128])
def test_folder_tree_of_rgb_pngs(pytester, size):
    """RGB 16×16 and 64×64 PNGs in root/<class>/, read lazily by FolderSource, scored by the VCE
    contract and validity suites; the domain's models are ready modules (their parameter digests
    go into the scorecard's provenance)."""
    import numpy as np
    from PIL import Image

    generator = np.random.default_rng(0)
    for label, name in enumerate(("cats", "dogs")):
        folder = pytester.path / "tree" / name
        folder.mkdir(parents=True)
        for i in range(120):  # 30 of each class in the reference split: the quick profile's realism needs 28
            pixels = (generator.random((size, size, 3)) * 128 + 100 * label).astype("uint8")
            Image.fromarray(pixels, "RGB").save(folder / f"{i:03d}.png")
    pytester.makepyfile(tree_domain_file=FOLDER_DOMAIN)
    pytester.makefile(".toml", pyproject="[tool.cfcheck.vce]\nn_per_source = 4\n")
    result = pytester.runpytest(
        "--method=cfcheck.fixtures.vce.identity",
        "--cfcheck-domain=tree_domain_file.py:make_domain",
        "--cfcheck-profile=quick",
        "-k",
        "test_contract or test_validity or test_domain_loads",
        "-p",
        "no:randomly",
        "-rA",
    )
    scorecard = _scorecard(pytester, "identity")
    tree_scores = [s for s in scorecard["scores"] if s["domain"] == "tree"]
    assert {s["metric"] for s in tree_scores} >= {"target_accuracy", "coverage", "committee_oracle_target_accuracy"}
    assert all(s["verdict"] in (None, "error") for s in tree_scores)
    assert scorecard["profile"]["domains"]["tree"]["bars"] == "uncalibrated"
    assert "PASSED test_domains.py::test_domain_loads[tree]" in result.stdout.str()
    outcomes = result.parseoutcomes()
    assert "error" not in outcomes and "errors" not in outcomes, result.stdout.str()[-3000:]
    # two classes form only the "ideal" pairs; failures are the identity control's own (no bar is asked)
    assert {s["task"] for s in tree_scores} == {"cnn/ideal/seed0"}
    contract = [line for line in result.stdout.lines if "test_contract.py" in line and "PASSED" in line]
    assert contract, result.stdout.str()[-3000:]
    models = {k: v for k, v in scorecard["provenance"]["reference_models"].items() if k.startswith("tree/")}
    assert sorted(models) == ["tree/cnn", "tree/embedding", "tree/o1", "tree/o2", "tree/o3"]
    assert len(set(models.values())) == 5  # five differently seeded modules, five digests


def _tree(pytester, size=16, per_class=120):
    import numpy as np
    from PIL import Image

    generator = np.random.default_rng(0)
    for label, name in enumerate(("cats", "dogs")):
        folder = pytester.path / "tree" / name
        folder.mkdir(parents=True)
        for i in range(per_class):
            pixels = (generator.random((size, size, 3)) * 128 + 100 * label).astype("uint8")
            Image.fromarray(pixels, "RGB").save(folder / f"{i:03d}.png")
    pytester.makepyfile(tree_domain_file=FOLDER_DOMAIN)
    pytester.makefile(".toml", pyproject="[tool.cfcheck.vce]\nn_per_source = 4\n")


def test_a_broken_domain_fails_its_test_and_the_others_run(pytester):
    """A factory that raises is one failing test naming the spec and the error; the run's other
    domain is scored as usual and the scorecard records the failure."""
    _tree(pytester)
    pytester.makepyfile(broken_domain="def make_domain():\n    raise RuntimeError('the data server is down')\n")
    result = pytester.runpytest(
        "--method=cfcheck.fixtures.vce.identity",
        "--cfcheck-domain=broken_domain.py:make_domain",
        "--cfcheck-domain=tree_domain_file.py:make_domain",
        "--cfcheck-profile=quick",
        "-k",
        "test_domain_loads or test_target_accuracy",
        "-p",
        "no:randomly",
        "-rA",
    )
    text = result.stdout.str()
    assert "FAILED test_domains.py::test_domain_loads[broken_domain.py:make_domain]" in text
    assert "its factory raised RuntimeError: the data server is down" in text
    assert "PASSED test_domains.py::test_domain_loads[tree]" in text
    scorecard = _scorecard(pytester, "identity")
    assert [s["metric"] for s in scorecard["scores"] if s["domain"] == "tree"] == ["target_accuracy"]
    errors = [s for s in scorecard["scores"] if s["verdict"] == "error"]
    assert [e["metric"] for e in errors] == ["domain:broken_domain.py:make_domain"]
    assert "the data server is down" in errors[0]["reason"]


def test_a_conftest_hook_adds_a_domain(pytester):
    """``pytest_cfcheck_domains`` in a conftest adds a domain object; without --cfcheck-domain the
    run uses every registered domain and the hook's, and selecting it by name works too."""
    _tree(pytester)
    pytester.makeconftest(
        "import tree_domain_file\n\n\ndef pytest_cfcheck_domains(config):\n"
        "    return [tree_domain_file.make_domain()]\n"
    )
    pytester.syspathinsert()
    result = pytester.runpytest(
        "--method=cfcheck.fixtures.vce.identity",
        "--cfcheck-domain=tree",
        "--cfcheck-profile=quick",
        "-k",
        "test_domain_loads or test_target_accuracy",
        "-p",
        "no:randomly",
        "-rA",
    )
    assert "PASSED test_domains.py::test_domain_loads[tree]" in result.stdout.str()
    assert {s["domain"] for s in _scorecard(pytester, "identity")["scores"]} == {"tree"}


def test_a_domain_without_oracles_or_embedding_skips_what_needs_them(pytester):
    """Roles a domain does not declare skip the suites that need them, with the role in the reason;
    what needs only the explained classifier is scored ("other" pairs: no committee, no ideal pairs)."""
    _tree(pytester)
    pytester.makepyfile(
        bare_domain=FOLDER_DOMAIN + '\nROLES = {"explained": ("cnn",)}  # only the explained classifier\n'
    )
    result = pytester.runpytest(
        "--method=cfcheck.fixtures.vce.identity",
        "--cfcheck-domain=bare_domain.py:make_domain",
        "--cfcheck-profile=quick",
        "-k",
        "test_validity or test_realism or test_perceptual",
        "-p",
        "no:randomly",
        "-rs",
    )
    text = result.stdout.str()
    assert "declares no oracle committee ('oracles')" in text
    assert "declares no 'embedding' model" in text and "which realism and the perceptual distance needs" in text
    outcomes = result.parseoutcomes()
    assert "error" not in outcomes and "errors" not in outcomes, text[-3000:]
    metrics = {s["metric"]: s["task"] for s in _scorecard(pytester, "identity")["scores"]}
    assert metrics["target_accuracy"] == "cnn/other/seed0"
