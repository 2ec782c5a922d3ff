"""What a user's own domain does with bad inputs: one clear error per mistake, naming the domain or
spec, the file where there is one, and what was expected; and properties of the splits and sources
(:mod:`cfcheck.domains.registry`, :mod:`cfcheck.domains.data`, :mod:`cfcheck.models.store`,
:mod:`cfcheck.domains.checks`)."""

from __future__ import annotations

import json
import re
import sys
import textwrap
from fractions import Fraction
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from torch import nn

from cfcheck.domains.checks import domain_problems
from cfcheck.domains.data import ArraySource, FolderSource, ImageDomain, ImageSplit, stratified_split
from cfcheck.domains.registry import DomainError, resolve_domain
from cfcheck.models.registry import ReferenceModelError
from cfcheck.models.store import ModelStore, ModuleStore

ROLES = {"explained": ("cnn",), "embedding": ("embedding",)}


def _write(path: Path, source: str) -> Path:
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return path


@pytest.fixture
def importable(tmp_path, monkeypatch):
    """Writes a module into an importable folder; the modules it wrote are unloaded afterwards."""
    folder = tmp_path / "importable"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    written: list[str] = []

    def write(name: str, source: str) -> str:
        _write(folder / f"{name}.py", source)
        written.append(name)
        return name

    yield write
    for name in written:
        sys.modules.pop(name, None)


@pytest.fixture
def builders(importable):
    """A builder module of the user's own: ``<module>:tiny(width)``."""
    return importable(
        "cfcheck_test_user_builders",
        """
        from torch import nn

        def tiny(width=4):
            return nn.Sequential(nn.Flatten(), nn.Linear(16, width))
    """,
    )


def _tiny(width: int = 4) -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Flatten(), nn.Linear(16, width))


def _arrays(n_per_class: int = 6, classes: int = 2) -> ArraySource:
    generator = torch.Generator().manual_seed(0)
    images = torch.randint(0, 256, (n_per_class * classes, 1, 4, 4), generator=generator, dtype=torch.uint8)
    return ArraySource(images, torch.arange(classes).repeat_interleave(n_per_class), name="toy arrays")


# --- resolving a domain ------------------------------------------------------------------------------


def test_a_factory_that_raises_is_reported_with_the_spec_and_its_error(tmp_path):
    path = _write(
        tmp_path / "raising_domain.py",
        """
        def make_domain():
            raise RuntimeError("no images under /data/faces")
    """,
    )
    spec = f"{path}:make_domain"
    with pytest.raises(
        DomainError, match=re.escape(f"domain {spec!r}: its factory raised RuntimeError: no images under /data/faces")
    ):
        resolve_domain(spec)


def test_a_factory_in_a_module_that_raises_names_the_module_spec(importable):
    module = importable(
        "cfcheck_test_raising_factory",
        """
        def make_domain():
            raise FileNotFoundError("faces.npz")
    """,
    )
    spec = f"{module}:make_domain"
    with pytest.raises(
        DomainError, match=re.escape(f"domain {spec!r}: its factory raised FileNotFoundError: faces.npz")
    ):
        resolve_domain(spec)


@pytest.mark.parametrize(
    "attribute, source",
    [
        ("", "cfcheck_domain = {'name': 'faces', 'splits': {}}"),
        (":make_domain", "def make_domain():\n    return {'name': 'faces'}"),
    ],
)
def test_a_spec_that_resolves_to_a_dict_says_it_is_not_a_domain(tmp_path, attribute, source):
    spec = f"{_write(tmp_path / 'dict_domain.py', source)}{attribute}"
    with pytest.raises(
        DomainError,
        match=re.escape(f"domain {spec!r} resolved to dict, not a cfcheck Domain: it lacks ")
        + r"name, input_shape, .*split_roles, model_roles.*ImageDomain",
    ):
        resolve_domain(spec)


def test_an_object_of_the_wrong_type_is_named_by_its_repr():
    with pytest.raises(DomainError, match=re.escape("domain '[1, 2]' resolved to list, not a cfcheck Domain")):
        resolve_domain([1, 2])


def test_a_factory_file_that_does_not_exist_names_the_file(tmp_path):
    spec = f"{tmp_path / 'no_such_domain.py'}:make_domain"
    with pytest.raises(
        DomainError,
        match=re.escape(f"domain {spec!r}: no such file {tmp_path / 'no_such_domain.py'}")
        + r".*expected a Python file",
    ):
        resolve_domain(spec)


def test_a_relative_file_that_is_missing_names_where_it_was_looked_up(tmp_path):
    with pytest.raises(
        DomainError, match=re.escape(f"domain 'domains/faces.py': no such file {tmp_path / 'domains' / 'faces.py'}")
    ):
        resolve_domain("domains/faces.py", rootdir=tmp_path)


def test_a_module_that_cannot_be_imported_names_the_module(tmp_path):
    with pytest.raises(
        DomainError,
        match=r"domain 'cfcheck_no_such_pkg\.faces:make_domain': cannot import module "
        r"'cfcheck_no_such_pkg\.faces': ModuleNotFoundError",
    ):
        resolve_domain("cfcheck_no_such_pkg.faces:make_domain", rootdir=tmp_path)


def test_a_missing_attribute_of_a_file_names_the_file_and_what_was_expected(tmp_path):
    path = _write(tmp_path / "faces_domain.py", "def make():\n    pass\n")
    spec = f"{path}:make_domain"
    with pytest.raises(
        DomainError,
        match=re.escape(
            f"domain {spec!r}: {path} has no attribute 'make_domain'; expected a Domain object, class or "
            "zero-argument factory named 'make_domain'"
        ),
    ):
        resolve_domain(spec)


def test_a_file_without_the_default_attribute_says_cfcheck_domain(tmp_path):
    path = _write(tmp_path / "faces_domain.py", "def make():\n    pass\n")
    with pytest.raises(DomainError, match=re.escape(f"domain {str(path)!r}: {path} has no attribute 'cfcheck_domain'")):
        resolve_domain(str(path))


def test_a_missing_attribute_of_a_module_names_the_module_file(importable):
    module = importable("cfcheck_test_no_factory", "VALUE = 1\n")
    with pytest.raises(
        DomainError,
        match=re.escape(f"domain '{module}:make_domain': ")
        + r".*cfcheck_test_no_factory\.py has no attribute 'make_domain'; expected a Domain object",
    ):
        resolve_domain(f"{module}:make_domain")


# --- array sources ----------------------------------------------------------------------------------


def test_mismatched_image_and_label_counts_name_the_source():
    with pytest.raises(
        DomainError, match=re.escape("faces: 5 images but labels of shape (4,); expected one integer label per image")
    ):
        ArraySource(np.zeros((5, 1, 4, 4), np.uint8), np.zeros(4, np.int64), name="faces")


def test_mismatched_counts_in_a_file_name_the_file(tmp_path):
    path = tmp_path / "faces.npz"
    np.savez(path, images=np.zeros((5, 1, 4, 4), np.uint8), labels=np.zeros(6, np.int64))
    with pytest.raises(DomainError, match=re.escape(f"{path}: 5 images but labels of shape (6,)")):
        ArraySource.from_file(path)


def test_float_images_outside_the_unit_interval_are_refused():
    images = np.full((3, 1, 4, 4), 0.5, np.float32)
    images[1, 0, 2, 2] = 1.5
    with pytest.raises(
        DomainError,
        match=re.escape(
            "faces: float images must lie in [0, 1] (found values from 0.5 to "
            "1.5 in images 0..2); scale them or pass uint8"
        ),
    ):
        ArraySource(images, np.zeros(3, np.int64), name="faces")


def test_non_finite_float_images_are_called_non_finite(tmp_path):
    images = np.full((3, 1, 4, 4), 0.5, np.float32)
    images[2, 0, 0, 0] = np.nan
    path = tmp_path / "faces.npy"
    np.save(path, images)
    np.save(tmp_path / "faces.labels.npy", np.zeros(3, np.int64))
    with pytest.raises(DomainError, match=re.escape(f"{path}: float images must lie in [0, 1]") + r".*non-finite"):
        ArraySource.from_file(path)


@pytest.mark.parametrize(
    "labels, dtype", [(np.array([0.0, 1.0, 1.0]), "float64"), (np.array(["cat", "dog", "dog"]), "<U3")]
)
def test_non_integer_labels_are_refused(labels, dtype):
    with pytest.raises(
        DomainError, match=re.escape(f"faces: labels must be integers (class indices), got dtype {dtype}")
    ):
        ArraySource(np.zeros((3, 1, 4, 4), np.uint8), labels, name="faces")


def test_a_npy_without_its_labels_file_names_the_file_it_expected(tmp_path):
    np.save(tmp_path / "faces.npy", np.zeros((3, 1, 4, 4), np.uint8))
    with pytest.raises(
        DomainError, match=re.escape(f"{tmp_path / 'faces.npy'}: a .npy of images needs its labels in faces.labels.npy")
    ):
        ArraySource.from_file(tmp_path / "faces.npy")


def test_labels_outside_the_classes_name_the_domain(tmp_path):
    source = ArraySource(np.zeros((4, 1, 4, 4), np.uint8), np.array([0, 1, 2, 3]), name="faces")
    parts = dict.fromkeys(("train", "selection", "scored", "reference"), source)
    with pytest.raises(
        DomainError, match=re.escape("domain 'faces': labels must lie in [0, 1] (its classes), found 0..3")
    ):
        ImageDomain(
            "faces", parts, root=tmp_path, model_roles=ROLES, class_names=["cat", "dog"], model_store=ModuleStore({})
        )


# --- folder sources ---------------------------------------------------------------------------------


def _png(path: Path, width: int, height: int, value: int = 128) -> None:
    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (width, height), (value, value // 2, 255 - value)).save(path)


def test_a_folder_of_mixed_image_sizes_names_the_offending_file_when_read(tmp_path):
    _png(tmp_path / "cat" / "a.png", 8, 8)
    _png(tmp_path / "cat" / "b.png", 8, 8)
    _png(tmp_path / "dog" / "c.png", 10, 6)
    _png(tmp_path / "dog" / "d.png", 8, 8)
    source = FolderSource(tmp_path)  # lazy: nothing is read yet
    assert source.read(torch.tensor([0, 1, 3])).shape == (3, 3, 8, 8)
    with pytest.raises(
        DomainError,
        match=re.escape(
            f"{tmp_path / 'dog' / 'c.png'}: 10×6 pixels, but the tree's images "
            "are 8×8; resize them or pass size=(height, width)"
        ),
    ):
        _ = ImageSplit(source, torch.arange(len(source)), "reference").images
    resized = FolderSource(tmp_path, size=(8, 8))
    assert resized.read(torch.arange(len(resized))).shape == (4, 3, 8, 8)


@pytest.mark.parametrize("folders", [["cat"], []])
def test_a_folder_with_fewer_than_two_class_folders_is_refused(tmp_path, folders):
    for name in folders:
        _png(tmp_path / name / "a.png", 8, 8)
    _png(tmp_path / "loose.png", 8, 8)  # an image at the root is not a class
    with pytest.raises(
        DomainError,
        match=re.escape(f"{tmp_path}: found {len(folders)} class folder")
        + r".*expected at least 2 \(root/<class>/<image files>\)",
    ):
        FolderSource(tmp_path)


# --- model stores -----------------------------------------------------------------------------------


def test_a_weights_file_modified_after_add_fails_its_sha256(tmp_path, builders):
    store = ModelStore(tmp_path / "models", "faces")
    entry = store.add("cnn", _tiny(), builder=f"{builders}:tiny", arch_kwargs={"width": 4})
    path = tmp_path / "models" / "cnn.safetensors"
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF  # one byte of the last weight
    path.write_bytes(bytes(data))
    with pytest.raises(
        ReferenceModelError,
        match=re.escape("model faces/cnn")
        + r".*"
        + re.escape(f"weights file {path} does not match the manifest: expected sha256 {entry['sha256']}, actual "),
    ):
        store.load("cnn")


def _edit_entry(store: ModelStore, name: str, **changes) -> None:
    manifest = json.loads(store.manifest_path.read_text())
    manifest["models"][f"{store.domain}/{name}"].update(changes)
    store.manifest_path.write_text(json.dumps(manifest))


def test_a_builder_that_cannot_be_imported_names_the_model_manifest_and_module(tmp_path, builders):
    store = ModelStore(tmp_path / "models", "faces")
    store.add("cnn", _tiny(), builder=f"{builders}:tiny", arch_kwargs={"width": 4})
    _edit_entry(store, "cnn", builder="cfcheck_no_such_builders:tiny")
    with pytest.raises(
        ReferenceModelError,
        match=re.escape(
            f"model faces/cnn in {store.manifest_path}: cannot import builder module 'cfcheck_no_such_builders' "
            "(cfcheck_no_such_builders:tiny): ModuleNotFoundError"
        ),
    ):
        store.load("cnn")


def test_a_builder_the_module_lacks_names_the_function(tmp_path, builders):
    store = ModelStore(tmp_path / "models", "faces")
    store.add("cnn", _tiny(), builder=f"{builders}:tiny", arch_kwargs={"width": 4})
    _edit_entry(store, "cnn", builder=f"{builders}:huge")
    with pytest.raises(
        ReferenceModelError,
        match=re.escape(
            f"model faces/cnn in {store.manifest_path}: {builders} has no callable 'huge' (builder '{builders}:huge')"
        ),
    ):
        store.load("cnn")


def test_a_builder_path_without_a_colon_is_refused_by_add_and_by_load(tmp_path, builders):
    store = ModelStore(tmp_path / "models", "faces")
    with pytest.raises(
        ReferenceModelError,
        match=re.escape(
            f"model faces/cnn in {store.manifest_path}: builder must be 'pkg.module:function', got '{builders}.tiny'"
        ),
    ):
        store.add("cnn", _tiny(), builder=f"{builders}.tiny", arch_kwargs={"width": 4})
    assert not (tmp_path / "models").exists()  # nothing written
    store.add("cnn", _tiny(), builder=f"{builders}:tiny", arch_kwargs={"width": 4})
    _edit_entry(store, "cnn", builder=f"{builders}.tiny")
    with pytest.raises(ReferenceModelError, match=re.escape(f"got '{builders}.tiny'")):
        store.load("cnn")


@pytest.mark.parametrize("how, given_", [({}, "neither"), ({"builder": "x:y", "architecture": "simple_cnn"}, "both")])
def test_add_needs_exactly_one_of_builder_and_architecture(tmp_path, how, given_):
    store = ModelStore(tmp_path / "models", "faces")
    with pytest.raises(
        ValueError,
        match=re.escape(
            f"model 'cnn' of domain 'faces' ({tmp_path / 'models'}): give exactly "
            "one of builder='pkg.module:function' or architecture="
            f"'<registered name>', got {given_}"
        ),
    ):
        store.add("cnn", _tiny(), **how)
    assert not (tmp_path / "models").exists()


def test_a_role_naming_a_model_the_store_lacks_is_a_problem_naming_both(tmp_path, builders):
    store = ModelStore(tmp_path / "models", "faces")
    store.add("cnn", _tiny(), builder=f"{builders}:tiny", arch_kwargs={"width": 4})
    domain = ImageDomain(
        "faces",
        _arrays(),
        root=tmp_path,
        model_roles=ROLES,
        model_store=store,
        fractions={"train": 0.25, "selection": 0.25, "scored": 0.25, "reference": 0.25},
    )
    assert domain_problems(domain) == [
        "role 'embedding' names model 'embedding', which the store does not hold (it holds ['cnn'])"
    ]


# --- properties -------------------------------------------------------------------------------------


def _expected_sizes(n: int, fractions: list[Fraction]) -> list[int]:
    """Part sizes of a class of n members, by exact arithmetic: differences of round(cumulative share × n)
    (Python rounds a Fraction half to even)."""
    bounds, total = [0], Fraction(0)
    for share in fractions:
        total += share
        bounds.append(round(total * n))
    return [high - low for low, high in pairwise(bounds)]


@st.composite
def dyadic_fractions(draw):
    """2-5 named shares, multiples of 1/16 summing to 1 (exact in binary floating point)."""
    cuts = sorted(draw(st.lists(st.integers(0, 16), min_size=1, max_size=4)))
    counts = [b - a for a, b in zip([0, *cuts], [*cuts, 16])]
    return {f"part{i}": Fraction(c, 16) for i, c in enumerate(counts)}


@settings(max_examples=60, deadline=None)
@given(labels=st.lists(st.integers(0, 4), max_size=80), shares=dyadic_fractions(), seed=st.integers(0, 2**31 - 1))
def test_stratified_split_partitions_every_class_by_rounded_cumulative_shares(labels, shares, seed):
    label_tensor = torch.tensor(labels, dtype=torch.int64)
    parts = stratified_split(label_tensor, {name: float(f) for name, f in shares.items()}, seed)
    assert list(parts) == list(shares)
    everything = sorted(i for index in parts.values() for i in index.tolist())
    assert everything == list(range(len(labels)))  # each index exactly once: disjoint and covering
    for index in parts.values():
        assert index.dtype == torch.int64 and index.tolist() == sorted(index.tolist())
    for label in set(labels):
        members = [i for i, value in enumerate(labels) if value == label]
        expected = _expected_sizes(len(members), list(shares.values()))
        found = [sum(labels[i] == label for i in index.tolist()) for index in parts.values()]
        assert found == expected, (label, len(members))


@settings(max_examples=40, deadline=None)
@given(
    labels=st.lists(st.integers(0, 3), max_size=60),
    weights=st.lists(st.floats(0.0, 1.0, allow_subnormal=False), min_size=2, max_size=5).filter(lambda w: sum(w) > 0.1),
    seed=st.integers(0, 2**31 - 1),
)
def test_stratified_split_of_any_shares_is_a_partition_within_one_of_each_share(labels, weights, seed):
    shares = {f"part{i}": w / sum(weights) for i, w in enumerate(weights)}
    parts = stratified_split(torch.tensor(labels, dtype=torch.int64), shares, seed)
    assert sorted(i for index in parts.values() for i in index.tolist()) == list(range(len(labels)))
    for label in set(labels):
        n = labels.count(label)
        for name, index in parts.items():
            size = sum(labels[i] == label for i in index.tolist())
            assert abs(size - shares[name] * n) <= 1 + 1e-9


@settings(max_examples=30, deadline=None)
@given(seeds=st.lists(st.integers(0, 2**31 - 1), min_size=2, max_size=2, unique=True))
def test_stratified_split_is_a_function_of_its_seed(seeds):
    labels = torch.arange(60) % 3  # 20 per class: two seeds cut alike with probability < 1e-15
    shares = {"train": 0.5, "reference": 0.5}
    first = stratified_split(labels, shares, seeds[0])
    torch.manual_seed(seeds[1])  # the global generator plays no part
    torch.rand(3)
    again = stratified_split(labels, shares, seeds[0])
    other = stratified_split(labels, shares, seeds[1])
    assert all(torch.equal(first[name], again[name]) for name in shares)
    assert not torch.equal(first["train"], other["train"])


def test_stratified_split_refuses_shares_that_do_not_sum_to_one():
    with pytest.raises(
        DomainError,
        match=re.escape("split fractions must be >= 0 and sum to 1, got {'train': 0.5, 'reference': 0.6} (sum 1.1)"),
    ):
        stratified_split(torch.zeros(4, dtype=torch.int64), {"train": 0.5, "reference": 0.6}, 0)


@st.composite
def uint8_images(draw):
    channels_last = draw(st.booleans())
    n, c, h, w = (draw(st.integers(1, 6)), draw(st.integers(1, 3)), draw(st.integers(1, 5)), draw(st.integers(1, 5)))
    images = draw(arrays(np.uint8, (n, h, w, c) if channels_last else (n, c, h, w)))
    rows = draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=2 * n))
    return images, channels_last, rows


@settings(max_examples=60, deadline=None)
@given(case=uint8_images())
def test_uint8_arrays_read_back_as_exactly_images_over_255(case):
    images, channels_last, rows = case
    source = ArraySource(images, np.arange(len(images)) % 2, channels_last=channels_last)
    nchw = np.transpose(images, (0, 3, 1, 2)) if channels_last else images
    expected = torch.from_numpy(nchw[rows].astype(np.float32) / np.float32(255.0))
    assert source.shape == nchw.shape[1:]
    got = source.read(torch.tensor(rows))
    assert got.dtype == torch.float32 and torch.equal(got, expected)
    split = ImageSplit(source, torch.tensor(rows), "reference")
    assert torch.equal(split.images, expected)
    assert torch.equal(torch.cat(list(split.batches(2))), expected)
    assert torch.equal(split.take(torch.tensor([len(rows) - 1])), expected[-1:])


@pytest.mark.parametrize("suffix", [".npy", ".npz", ".safetensors"])
def test_uint8_files_read_back_as_exactly_images_over_255(tmp_path, suffix):
    images = np.random.default_rng(0).integers(0, 256, (7, 3, 5, 4), dtype=np.uint8)
    labels = np.arange(7) % 3
    path = tmp_path / f"faces{suffix}"
    if suffix == ".npy":
        np.save(path, images)
        np.save(tmp_path / "faces.labels.npy", labels)
    elif suffix == ".npz":
        np.savez(path, images=images, labels=labels)
    else:
        from safetensors.numpy import save_file

        save_file({"images": images, "labels": labels}, str(path))
    source = ArraySource.from_file(path)
    if suffix == ".npy":
        assert isinstance(source._array, np.memmap)  # read lazily, not loaded
    assert torch.equal(source.read(torch.arange(7)), torch.from_numpy(images.astype(np.float32) / np.float32(255.0)))
    assert torch.equal(source.labels, torch.from_numpy(labels.astype(np.int64)))


def test_a_new_run_resolves_a_users_domain_afresh_and_keeps_the_bundled_ones(tmp_path, monkeypatch):
    """One domain object per spec within a run; forget_unregistered_domains (called when a run
    resolves its domains) drops a user's, so a second in-process run sees its rewritten module,
    while a registered domain stays the same object."""
    from cfcheck.domains.registry import forget_unregistered_domains

    def write(name):
        (tmp_path / "rewritten_domain.py").write_text(
            "from cfcheck.domains.data import ArraySource, ImageDomain\n"
            "import torch\n"
            "def make():\n"
            f"    return ImageDomain({name!r}, ArraySource(torch.rand(40, 1, 4, 4), torch.arange(2).repeat(20)),\n"
            f"                       root={str(tmp_path / name)!r}, model_roles={{'explained': ('m',)}})\n"
        )

    monkeypatch.syspath_prepend(str(tmp_path))
    write("first")
    morpho = resolve_domain("morpho")
    assert resolve_domain("rewritten_domain:make").name == "first"
    assert resolve_domain("rewritten_domain:make") is resolve_domain("rewritten_domain:make")  # one per run
    write("second")
    monkeypatch.delitem(sys.modules, "rewritten_domain")
    assert resolve_domain("rewritten_domain:make").name == "first"  # still this run's object
    forget_unregistered_domains()
    assert resolve_domain("rewritten_domain:make").name == "second"
    assert resolve_domain("morpho") is morpho
    forget_unregistered_domains()
