"""The project's own user domains (:mod:`tests.own_domains`): each builds (once per machine, cached),
renders deterministically, its true counterfactual is exact and valid for the models, its models
reach their accuracy bar, a conformance run of the truth adapter on them writes a scorecard, and
the broken copies fail the way the failure-path tests expect.

The builds are shared through the cache (``~/.cache/cfcheck-test-domains`` or
``$CFCHECK_TEST_DOMAINS_DIR``); the module's tests form one xdist group, so one worker builds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from cfcheck.domains.registry import DomainError
from cfcheck.models.registry import ReferenceModelError
from tests.own_domains import (
    NAMES,
    SCENES,
    TRUTH_ADAPTER,
    OwnDomain,
    build,
    empty_class,
    flipped_weight,
    load_domain,
    materialise,
    mixed_sizes,
    unreadable_image,
)
from tests.own_domains.rerender import RenderedTruth

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("own-test-domains")]

#: accuracy bar of the explained classifier and of each oracle on the scored split
ACCURACY_BAR = 0.95
#: share of true counterfactuals the explained classifier and each oracle must assign the target
TRUTH_BAR = 0.90


@pytest.fixture(scope="module")
def own(single_torch_thread) -> dict[str, OwnDomain]:
    """Every test domain, built or read from the cache."""
    return {name: materialise(name) for name in NAMES}


@pytest.fixture(scope="module")
def domains(own):
    """The loaded cfcheck domain object of every test domain."""
    return {name: load_domain(built.spec) for name, built in own.items()}


def _scorers(domain) -> list[str]:
    return [*domain.model_roles["explained"], *domain.model_roles["oracles"]]


@pytest.mark.parametrize("name", NAMES)
def test_domain_shape_and_splits(domains, name):
    scene, domain = SCENES[name], domains[name]
    assert domain.input_shape == (scene.channels, scene.height, scene.width)
    assert domain.num_classes == len(scene.class_names) and domain.class_names == scene.class_names
    total = sum(len(domain.split(role)) for role in ("train", "oracle_train", "selection", "scored", "reference"))
    assert total == scene.per_class * len(scene.class_names)
    assert 1800 <= total <= 2100


@pytest.mark.parametrize("name", NAMES)
def test_rendering_is_deterministic(own, name):
    """A style row renders to the same pixels every time, and the stored images are those renders."""
    scene = SCENES[name]
    images = np.load(own[name].folder / "images.npy", mmap_mode="r")
    styles = np.load(own[name].folder / "styles.npy")
    labels = np.load(own[name].folder / "images.labels.npy")
    rows = np.linspace(0, len(labels) - 1, 40).astype(int)
    once, twice = scene.render(labels[rows], styles[rows]), scene.render(labels[rows], styles[rows])
    assert np.array_equal(once, twice) and np.array_equal(once, images[rows])
    _, same_labels, same_styles = scene.dataset(0)
    assert np.array_equal(same_labels, labels) and np.array_equal(same_styles, styles)


@pytest.mark.parametrize("name", NAMES)
def test_truth_under_the_own_class_is_the_input(domains, name):
    scored = domains[name].split("scored")
    truth = RenderedTruth(domains[name])
    assert torch.equal(truth.explain(scored.images, scored.labels, torch.nn.Identity()), scored.images)


@pytest.mark.parametrize("name", NAMES)
def test_models_reach_their_accuracy_bar(domains, name):
    domain = domains[name]
    scored = domain.split("scored")
    for model_name in _scorers(domain):
        with torch.no_grad():
            accuracy = float(
                (domain.model_store.load(model_name)(scored.images).argmax(1) == scored.labels).float().mean()
            )
        assert accuracy >= ACCURACY_BAR, f"{name}/{model_name}: scored accuracy {accuracy:.3f}"


@pytest.mark.parametrize("name", NAMES)
def test_truth_is_assigned_the_target_class(domains, name):
    """The truth of k → t for every scored input and every other class t is classified t by the
    explained classifier and by each oracle, on at least 90% of the inputs."""
    domain = domains[name]
    scored, truth = domain.split("scored"), RenderedTruth(domain)
    classes = domain.num_classes
    x = scored.images.repeat(classes - 1, 1, 1, 1)
    target = torch.cat([(scored.labels + shift) % classes for shift in range(1, classes)])
    x_cf = truth.explain(x, target, torch.nn.Identity())
    assert not torch.equal(x_cf, x)
    for model_name in _scorers(domain):
        with torch.no_grad():
            share = float((domain.model_store.load(model_name)(x_cf).argmax(1) == target).float().mean())
        assert share >= TRUTH_BAR, f"{name}/{model_name}: the truth is assigned its target on {share:.3f}"


def test_truth_rejects_inputs_it_does_not_know(domains):
    truth = RenderedTruth(domains["shapes"])
    scored = domains["shapes"].split("scored", 3)
    x = scored.images.clone()
    x[1] = 1.0 - x[1]
    with pytest.raises(ValueError, match=r"1 of 3 inputs are not images of test domain 'own_shapes'"):
        truth.explain(x, scored.labels, torch.nn.Identity())


def test_truth_needs_a_test_domain(domains, tmp_path):
    class Elsewhere:
        name, root = "faces", tmp_path

    with pytest.raises(ValueError, match="not a tests.own_domains test domain"):
        RenderedTruth(Elsewhere())


def test_the_png_tree_is_the_same_domain(own, domains):
    """The FolderSource layout lists the same images in the same splits, and the truth finds them."""
    tree = load_domain(own["shapes"].tree_spec)
    assert tree.name == "own_shapes_tree"
    for role in ("train", "scored", "reference"):
        assert torch.equal(tree.split(role).labels, domains["shapes"].split(role).labels)
    scored = tree.split("scored")
    assert torch.equal(scored.images, domains["shapes"].split("scored").images)
    target = (scored.labels + 1) % 3
    expected = RenderedTruth(domains["shapes"]).explain(scored.images, target, torch.nn.Identity())
    assert torch.equal(RenderedTruth(tree).explain(scored.images, target, torch.nn.Identity()), expected)


def test_a_second_build_reads_the_cache(own):
    started = time.perf_counter()
    assert build("shapes") == own["shapes"].folder
    assert time.perf_counter() - started < 2.0


def test_the_truth_adapter_runs_the_validity_suite_on_every_domain(own, tmp_path):
    """``pytest --method=<truth adapter> --cfcheck-domain=<spec> …`` in a subprocess, over the three
    domains at once: it completes and its scorecard has the truth's validity scores on each."""
    command = [sys.executable, "-m", "pytest", f"--method={TRUTH_ADAPTER}", "--cfcheck-profile=quick"]
    command += [f"--cfcheck-domain={built.spec}" for built in own.values()]
    command += [
        "-p",
        "no:xdist",
        "-p",
        "no:randomly",
        "-q",
        "-k",
        "validity or domain_loads",
        f"--cfcheck-report-dir={tmp_path}",
    ]
    environment = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    result = subprocess.run(command, cwd=Path(__file__).parents[2], capture_output=True, text=True, env=environment)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    scores = json.loads((tmp_path / "own_truth-quick" / "scorecard.json").read_text())["scores"]
    for built in own.values():
        accuracy = [s["value"] for s in scores if s["domain"] == built.domain_name and s["metric"] == "target_accuracy"]
        committee = [
            s["value"]
            for s in scores
            if s["domain"] == built.domain_name and s["metric"] == "committee_oracle_target_accuracy"
        ]
        assert accuracy and min(accuracy) >= TRUTH_BAR, (built.name, accuracy)
        assert committee and min(committee) >= TRUTH_BAR, (built.name, committee)


def test_a_flipped_weight_byte_fails_the_checksum(own, tmp_path):
    variant = flipped_weight("shapes", tmp_path)
    domain = load_domain(variant.spec)
    with pytest.raises(ReferenceModelError, match="sha256"):
        domain.model_store.load("cnn")
    domain.model_store.load("oracle_lenet")  # the others are intact


def test_an_empty_class_folder_is_refused_or_leaves_its_class_without_images(own, tmp_path):
    """The variant keeps the emptied folder. A FolderSource that refuses an empty class folder names
    it; one that accepts it leaves that class without images in every split."""
    variant = empty_class("shapes", tmp_path)
    assert variant.path.is_dir() and not any(variant.path.iterdir())
    try:
        domain = load_domain(variant.spec)
    except DomainError as error:
        assert str(variant.path) in str(error) and "empty" in str(error)
    else:
        assert domain.num_classes == 3 and 2 not in domain.split("scored").labels.tolist()


@pytest.mark.parametrize("split", ["reference", "train"])
def test_an_unreadable_image_fails_where_its_split_is_read(own, tmp_path, split):
    variant = unreadable_image("shapes", tmp_path, split)
    domain = load_domain(variant.spec)
    domain.split("scored").images  # noqa: B018  (other splits read)
    with pytest.raises(DomainError, match=f"{variant.path}: not a readable image"):
        list(domain.split(split).batches(256))


def test_an_image_of_another_size_fails_where_its_split_is_read(own, tmp_path):
    variant = mixed_sizes("shapes", tmp_path, "reference")
    domain = load_domain(variant.spec)
    with pytest.raises(DomainError, match="36×36 pixels, but the tree's images are 32×32"):
        list(domain.split("reference").batches(256))
