"""cfcheck's own tests: each has an empty generation cache, and the run's derived data is shared.

tests/conftest.py gives every test a generation cache of its own (no test reads another's cached
outputs) whose ``derived`` folder is one per run, over the xdist workers: derived data (rendered
splits, the reference models' fixed features) is keyed by digests of what it derives from, so the
controls that test_verdicts runs one after another read it instead of computing it again.
"""

from __future__ import annotations

import os
from pathlib import Path

import torch

from cfcheck.core.cache import GenerationCache, default_cache_dir, memoise_on_disk


def test_the_generation_cache_is_the_test_s_own_and_empty(tmp_path):
    cache = default_cache_dir()
    assert cache == Path(os.environ["CFCHECK_CACHE_DIR"]) and not cache.is_relative_to(Path.home())
    assert [p.name for p in cache.iterdir()] == ["derived"]  # nothing generated yet
    assert list(tmp_path.iterdir()) == []  # the test's own folder stays empty
    assert GenerationCache(cache).clear() == 0


def test_derived_data_goes_to_the_run_s_folder(request, tmp_path_factory, pytestconfig):
    derived = default_cache_dir() / "derived"
    assert derived.is_symlink()
    base = tmp_path_factory.getbasetemp()
    run = base.parent if hasattr(pytestconfig, "workerinput") else base
    assert derived.resolve() == (run / "derived-data").resolve()
    calls = []
    name = f"cfcheck-selftest.{request.node.nodeid}"
    first = memoise_on_disk(name, lambda: calls.append(1) or {"x": torch.arange(3.0)}, run=str(run))
    again = memoise_on_disk(name, lambda: calls.append(1) or {"x": torch.zeros(3)}, run=str(run))
    assert calls == [1] and torch.equal(first["x"], again["x"])
    assert any(p.name.endswith(".safetensors") for p in (run / "derived-data").rglob("*"))
