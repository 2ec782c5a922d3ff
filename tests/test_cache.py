"""cfcheck.core.cache: the persistent generation cache, on its own (no session, no plugin)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cfcheck
import cfcheck.core.io
from cfcheck.core import cache as cache_module
from cfcheck.core.cache import CacheStats, GenerationCache, default_cache_dir, method_fingerprint, tensor_digest

PARTS = {"method": "pkg.mod:Method", "code": "version:1", "task": "morpho/thickness", "inputs": "ab" * 32, "seed": 0}


def _outputs() -> dict[str, torch.Tensor]:
    generator = torch.Generator().manual_seed(0)
    return {
        "counterfactuals": torch.rand(4, 1, 8, 8, generator=generator),
        "labels": torch.arange(4, dtype=torch.int64),
        "valid": torch.tensor([True, False, True, True]),
    }


def _stored(tmp_path: Path) -> tuple[GenerationCache, str, Path]:
    cache = GenerationCache(tmp_path / "cache")
    key = cache.key(**PARTS)
    cache.store(key, _outputs())
    return cache, key, cache.path(key)


def _assert_equal(got: dict[str, torch.Tensor], expected: dict[str, torch.Tensor]) -> None:
    assert set(got) == set(expected)
    for name, tensor in expected.items():
        assert got[name].dtype == tensor.dtype and got[name].shape == tensor.shape, name
        assert torch.equal(got[name], tensor), name


def _leftovers(directory: Path) -> list[Path]:
    return [p for p in directory.rglob("*") if p.name.endswith(".tmp")]


# --- round trip -----------------------------------------------------------------------------


def test_round_trip_and_layout(tmp_path):
    cache, key, path = _stored(tmp_path)
    assert path == tmp_path / "cache" / key[:2] / f"{key}.safetensors" and path.is_file()
    _assert_equal(cache.load(key), _outputs())
    assert (cache.stats.hits, cache.stats.misses, cache.stats.stored, cache.stats.discarded) == (1, 0, 1, 0)
    assert not _leftovers(tmp_path)


def test_store_moves_non_contiguous_tensors_and_keeps_meta(tmp_path):
    cache = GenerationCache(tmp_path)
    key = cache.key(task="t")
    transposed = torch.arange(12, dtype=torch.float32).reshape(3, 4).t()
    cache.store(key, {"x": transposed, "g": torch.ones(2, requires_grad=True)}, meta={"profile": "quick"})
    _assert_equal(cache.load(key), {"x": transposed.contiguous(), "g": torch.ones(2)})


_DTYPES = st.sampled_from([torch.float32, torch.int64, torch.bool])
_SHAPES = st.lists(st.integers(0, 4), min_size=0, max_size=3).map(tuple)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(specs=st.lists(st.tuples(_DTYPES, _SHAPES), min_size=1, max_size=4), seed=st.integers(0, 2**16))
def test_round_trip_property(tmp_path, specs, seed):
    generator = torch.Generator().manual_seed(seed)
    tensors = {}
    for index, (dtype, shape) in enumerate(specs):
        values = torch.randint(-1000, 1000, shape, generator=generator)
        if dtype == torch.bool:
            values = values > 0
        elif dtype.is_floating_point:
            values = values.to(dtype) / 7
        tensors[f"t{index}"] = values
    cache = GenerationCache(tmp_path / "prop")
    key = cache.key(seed=seed, specs=repr(specs))
    cache.store(key, tensors)
    _assert_equal(cache.load(key), tensors)


def test_disabled_cache(tmp_path):
    cache = GenerationCache(None)
    key = cache.key(**PARTS)
    cache.store(key, _outputs())
    assert cache.load(key) is None
    assert cache.clear() == 0
    assert cache.stats.describe() == "cache: disabled"
    assert list(tmp_path.iterdir()) == []


def test_missing_entry_is_a_miss(tmp_path):
    cache = GenerationCache(tmp_path)
    assert cache.load(cache.key(**PARTS)) is None
    assert (cache.stats.misses, cache.stats.discarded) == (1, 0)


# --- keys -----------------------------------------------------------------------------------


def test_key_is_stable_and_order_independent():
    cache = GenerationCache(None)
    key = cache.key(**PARTS)
    assert len(key) == 64 and key == GenerationCache(Path("elsewhere")).key(**PARTS)
    assert cache.key(**dict(reversed(list(PARTS.items())))) == key


@pytest.mark.parametrize("part", sorted(PARTS))
def test_key_changes_with_every_part(part):
    changed = dict(PARTS, **{part: str(PARTS[part]) + "x"})
    assert GenerationCache(None).key(**changed) != GenerationCache(None).key(**PARTS)


def test_key_changes_with_versions(monkeypatch):
    key = GenerationCache(None).key(**PARTS)
    monkeypatch.setattr(cfcheck, "__version__", cfcheck.__version__ + ".post1")
    assert GenerationCache(None).key(**PARTS) != key
    monkeypatch.undo()
    monkeypatch.setattr(cache_module, "CACHE_FORMAT", "999")
    assert GenerationCache(None).key(**PARTS) != key


def test_key_rejects_bad_parts():
    with pytest.raises(TypeError, match="'inputs'"):
        GenerationCache(None).key(inputs=[1, 2])
    with pytest.raises(ValueError, match="finite"):
        GenerationCache(None).key(scale=float("nan"))
    with pytest.raises(ValueError, match="at least one"):
        GenerationCache(None).key()
    with pytest.raises(ValueError, match="not a cache key"):
        GenerationCache(Path("x")).load("../../etc/passwd")


# --- bad entries are discarded, never trusted -----------------------------------------------


def _corrupt_and_check(cache: GenerationCache, key: str, path: Path) -> None:
    assert cache.load(key) is None
    assert not path.exists()
    assert cache.stats.discarded == 1 and cache.stats.misses == 1 and cache.stats.hits == 0
    cache.store(key, _outputs())
    _assert_equal(cache.load(key), _outputs())


@pytest.mark.parametrize("fraction", [0.0, 0.01, 0.1, 0.5, 0.99])
def test_truncated_entry(tmp_path, fraction):
    cache, key, path = _stored(tmp_path)
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * fraction)])
    _corrupt_and_check(cache, key, path)


def test_one_byte_short_entry(tmp_path):
    cache, key, path = _stored(tmp_path)
    path.write_bytes(path.read_bytes()[:-1])
    _corrupt_and_check(cache, key, path)


@pytest.mark.parametrize("from_end", [1, 40, 300])
def test_flipped_byte_in_tensor_data(tmp_path, from_end):
    cache, key, path = _stored(tmp_path)
    data = bytearray(path.read_bytes())
    data[-from_end] ^= 0x01
    path.write_bytes(bytes(data))
    _corrupt_and_check(cache, key, path)


@pytest.mark.parametrize("content", [b"", b"not a safetensors file", b"\xff" * 64, b"\x08" + b"\0" * 7 + b"{}garbage"])
def test_not_safetensors(tmp_path, content):
    cache, key, path = _stored(tmp_path)
    path.write_bytes(content)
    _corrupt_and_check(cache, key, path)


def test_entry_of_another_key(tmp_path):
    cache, key, path = _stored(tmp_path)
    other = cache.key(**dict(PARTS, seed=1))
    other_path = cache.path(other)
    other_path.parent.mkdir(parents=True, exist_ok=True)
    os.replace(path, other_path)
    _corrupt_and_check(cache, other, other_path)


def test_entry_with_a_valid_digest_but_other_format(tmp_path, monkeypatch):
    cache, key, path = _stored(tmp_path)
    monkeypatch.setattr(cache_module, "CACHE_FORMAT", "0")
    assert cache.load(key) is None and not path.exists() and cache.stats.discarded == 1


# --- atomic writes --------------------------------------------------------------------------


def test_uses_the_shared_atomic_write():
    assert cache_module.atomic_write_bytes is cfcheck.core.io.atomic_write_bytes


def test_failed_write_leaves_nothing_behind(tmp_path, monkeypatch):
    cache, key, path = _stored(tmp_path)
    before = path.read_bytes()

    def failing_replace(src, dst):
        raise OSError("disk full (simulated)")

    monkeypatch.setattr(cfcheck.core.io.os, "replace", failing_replace)
    with pytest.raises(OSError, match="simulated"):
        cache.store(key, {"other": torch.zeros(3)})
    monkeypatch.undo()
    assert not _leftovers(tmp_path)
    assert path.read_bytes() == before and cache.stats.stored == 1
    _assert_equal(cache.load(key), _outputs())


_WRITER = """
import sys, torch
from pathlib import Path
from cfcheck.core.cache import GenerationCache
cache = GenerationCache(Path(sys.argv[1]))
key = cache.key(task="shared")
for _ in range(30):
    cache.store(key, {"x": torch.arange(50_000, dtype=torch.float32), "ok": torch.ones(7, dtype=torch.bool)})
"""


def test_concurrent_writers_of_one_key_are_harmless(tmp_path):
    directory = tmp_path / "shared"
    writers = [subprocess.Popen([sys.executable, "-c", _WRITER, str(directory)]) for _ in range(2)]
    cache = GenerationCache(directory)
    key = cache.key(task="shared")
    expected = {"x": torch.arange(50_000, dtype=torch.float32), "ok": torch.ones(7, dtype=torch.bool)}
    while any(writer.poll() is None for writer in writers):
        got = cache.load(key)
        if got is not None:
            _assert_equal(got, expected)
    assert [writer.returncode for writer in writers] == [0, 0]
    _assert_equal(cache.load(key), expected)
    assert cache.stats.discarded == 0 and not _leftovers(directory)


def test_store_rejects_bad_arguments(tmp_path):
    cache = GenerationCache(tmp_path)
    key = cache.key(**PARTS)
    with pytest.raises(TypeError, match="'x'"):
        cache.store(key, {"x": [1, 2]})
    with pytest.raises(ValueError, match="reserved"):
        cache.store(key, {"x": torch.zeros(1)}, meta={"cfcheck.key": "forged"})
    with pytest.raises(TypeError, match="str to str"):
        cache.store(key, {"x": torch.zeros(1)}, meta={"seed": 3})
    assert list(tmp_path.iterdir()) == []


def test_clear(tmp_path):
    cache = GenerationCache(tmp_path / "cache")
    for seed in range(3):
        cache.store(cache.key(seed=seed), {"x": torch.zeros(1)})
    stray = tmp_path / "cache" / "README.txt"
    stray.write_text("not an entry")
    assert cache.clear() == 3
    assert cache.load(cache.key(seed=0)) is None
    assert [p.name for p in (tmp_path / "cache").iterdir()] == ["README.txt"]
    assert GenerationCache(tmp_path / "absent").clear() == 0


def test_describe():
    assert CacheStats(hits=12, discarded=1).describe() == ("cache: 12 hits, 0 misses, 1 discarded entry, 0 stored")
    assert CacheStats(hits=1, misses=1, discarded=2, stored=1).describe() == (
        "cache: 1 hit, 1 miss, 2 discarded entries, 1 stored"
    )


# --- default directory ----------------------------------------------------------------------


def test_default_cache_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("CFCHECK_CACHE_DIR", str(tmp_path / "explicit"))
    assert default_cache_dir() == tmp_path / "explicit"
    monkeypatch.delenv("CFCHECK_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "cfcheck" / "generation"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_cache_dir() == tmp_path / "home" / ".cache" / "cfcheck" / "generation"


# --- fingerprints and digests ---------------------------------------------------------------


def _import_file(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class _Method:
    pass


def test_method_fingerprint_follows_the_adapter_source(tmp_path):
    first, second = tmp_path / "adapter_a.py", tmp_path / "adapter_b.py"
    first.write_text("def make():\n    return 1\n")
    second.write_text("def make():\n    return 2\n")
    module_a = _import_file(first, "cfcheck_test_adapter")
    module_b = _import_file(second, "cfcheck_test_adapter")
    method = _Method()
    fingerprint = method_fingerprint(method, module_a)
    assert fingerprint.startswith("source:")
    assert fingerprint == method_fingerprint(method, module_a)
    assert method_fingerprint(method, module_b) != fingerprint
    first.write_text("def make():\n    return 3\n")  # edited on disk since the import
    assert method_fingerprint(method, module_a) != fingerprint


def test_method_fingerprint_follows_the_method_class_module(tmp_path, monkeypatch):
    source = tmp_path / "method_mod.py"
    source.write_text("class Method:\n    pass\n")
    module = _import_file(source, "cfcheck_test_method_module")
    monkeypatch.setitem(sys.modules, "cfcheck_test_method_module", module)
    method = module.Method()
    fingerprint = method_fingerprint(method, None)
    source.write_text("class Method:\n    step = 2\n")
    assert method_fingerprint(method, None) != fingerprint


def test_method_fingerprint_follows_the_module_of_a_base_class(tmp_path, monkeypatch):
    # a method whose explain() lives in a base class elsewhere (cfcheck's VisualExplainer preamble)
    base_source, method_source = tmp_path / "base_mod.py", tmp_path / "subclass_mod.py"
    base_source.write_text("class Base:\n    def explain(self):\n        return 1\n")
    base = _import_file(base_source, "cfcheck_test_base_module")
    monkeypatch.setitem(sys.modules, "cfcheck_test_base_module", base)
    method_source.write_text("from cfcheck_test_base_module import Base\n\nclass Method(Base):\n    pass\n")
    module = _import_file(method_source, "cfcheck_test_subclass_module")
    monkeypatch.setitem(sys.modules, "cfcheck_test_subclass_module", module)
    method = module.Method()
    fingerprint = method_fingerprint(method, None)
    assert method_fingerprint(method, None) == fingerprint
    base_source.write_text("class Base:\n    def explain(self):\n        return 2\n")
    assert method_fingerprint(method, None) != fingerprint


def test_method_fingerprint_honours_cfcheck_version(tmp_path):
    adapter = tmp_path / "adapter_v.py"
    adapter.write_text("x = 1\n")
    module = _import_file(adapter, "cfcheck_test_adapter_v")
    method = _Method()
    method.cfcheck_version = "2.1"
    assert method_fingerprint(method, module) == "version:2.1"
    adapter.write_text("x = 2\n")
    assert method_fingerprint(method, module) == "version:2.1"
    method.cfcheck_version = 3
    with pytest.raises(TypeError, match="cfcheck_version"):
        method_fingerprint(method, module)


def test_method_fingerprint_of_builtins_and_functions():
    assert method_fingerprint(len, None).startswith("source:")
    assert method_fingerprint(len, None) != method_fingerprint(object(), None)


def test_tensor_digest():
    data = torch.arange(6, dtype=torch.int32)
    assert tensor_digest(data) == tensor_digest(data.clone())
    assert tensor_digest(data) != tensor_digest(data.reshape(2, 3))
    assert tensor_digest(data) != tensor_digest(data.view(torch.float32))
    assert tensor_digest(torch.zeros(4, dtype=torch.uint8)) != tensor_digest(torch.zeros(4, dtype=torch.bool))
    assert tensor_digest(data, data) != tensor_digest(data)
    assert tensor_digest(data.reshape(2, 3).t()) == tensor_digest(data.reshape(2, 3).t().contiguous())
    with pytest.raises(TypeError, match="argument 1"):
        tensor_digest(data, [1])


def test_memoise_on_disk_computes_once_and_recomputes_a_damaged_entry(tmp_path, monkeypatch):
    from cfcheck.core.cache import DerivedDataWarning, memoise_on_disk

    monkeypatch.setenv("CFCHECK_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("CFCHECK_NO_DERIVED_CACHE", raising=False)
    calls = []

    def compute():
        calls.append(1)
        return {"x": torch.arange(4.0)}

    first = memoise_on_disk("test.data", compute, code="a")
    second = memoise_on_disk("test.data", compute, code="a")
    assert len(calls) == 1 and torch.equal(first["x"], second["x"])
    memoise_on_disk("test.data", compute, code="b")  # another key part: computed again
    assert len(calls) == 2
    entries = list((tmp_path / "derived").rglob("*.safetensors"))
    assert len(entries) == 2
    for entry in entries:
        entry.write_bytes(entry.read_bytes()[:-3])  # truncated: verified on load, so recomputed
    with pytest.warns(DerivedDataWarning, match="'test.data' at .* failed its integrity check"):
        again = memoise_on_disk("test.data", compute, code="a")
    assert torch.equal(again["x"], torch.arange(4.0)) and len(calls) == 3


def test_memoise_on_disk_can_be_turned_off_and_survives_an_unwritable_cache(tmp_path, monkeypatch):
    from cfcheck.core.cache import memoise_on_disk

    calls = []

    def compute():
        calls.append(1)
        return {"x": torch.ones(1)}

    monkeypatch.setenv("CFCHECK_CACHE_DIR", str(tmp_path / "off"))
    monkeypatch.setenv("CFCHECK_NO_DERIVED_CACHE", "1")
    memoise_on_disk("test.data", compute, code="a")
    memoise_on_disk("test.data", compute, code="a")
    assert len(calls) == 2 and not (tmp_path / "off").exists()
    monkeypatch.delenv("CFCHECK_NO_DERIVED_CACHE")
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("CFCHECK_CACHE_DIR", str(blocker))  # <file>/derived cannot be created
    assert memoise_on_disk("test.data", compute, code="a")["x"].tolist() == [1.0] and len(calls) == 3
