"""The GPU path end to end: bundled methods of every kind run with ``--cfcheck-device cuda``.

Each run is a tiny conformance run (quick profile, the plugin tests' small task settings) in
a subprocess whose conftest records, for every call of the method, where its tensors, models
and generator were, and where every evaluation network the suites load sits. The test asserts
that scores were recorded, that everything was on CUDA and that no failure or uncomputed score
names a device mismatch. It runs only where CUDA is available and skips with that reason
elsewhere.
"""

from __future__ import annotations

import json

import pytest
import torch

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA is not available on this machine")

#: one or more bundled methods of each kind, among them every one that draws noise on the device
#: or carries a generative model of its own (DVCE, FastDiME, the SCM VAE, the latent searches)
METHODS = (
    "vce.wachter",
    "vce.dvce",
    "vce.fastdime",
    "vce.nearest",
    "vce.pgd",
    "vce.noise",
    "scm.vae",
    "scm.gan",
    "scm.resample",
    "scm.noise",
    "latent.growing_spheres",
    "latent.informed_search",
    "latent.dice",
    "latent.repeater",
    "attribution.smoothgrad",
    "attribution.integrated_gradients",
    "attribution.random_saliency",
)

#: what a tensor on the wrong device raises in torch (the text a fallback leaves behind)
MISMATCH = (
    "Expected all tensors to be on the same device",
    "Expected a 'cpu' device type for generator",
    "Expected a 'cuda' device type for generator",
    "cuda:0 and cpu",
    "cpu and cuda:0",
)

RECORDER = """
import json, os
import torch
import cfcheck.kinds.base as base
import cfcheck.models.zoo as zoo

SEEN = []

def _where(value):
    if isinstance(value, torch.Tensor):
        return [str(value.device)]
    if isinstance(value, torch.Generator):
        return [str(value.device)]
    if isinstance(value, torch.nn.Module):
        return [str(t.device) for t in [*value.parameters(), *value.buffers()][:1]]
    if isinstance(value, dict):
        return [d for v in value.values() for d in _where(v)]
    return []

_invoke, _getitem = base.invoke, zoo.ModelZoo.__getitem__

def invoke(call, function, args, kwargs, **options):
    SEEN.append({"what": "method call " + call, "devices": [d for a in [*args, *kwargs.values()] for d in _where(a)]})
    return _invoke(call, function, args, kwargs, **options)

def getitem(self, name):
    model = _getitem(self, name)
    SEEN.append({"what": "model " + str(name), "devices": _where(model)})
    return model

base.invoke, zoo.ModelZoo.__getitem__ = invoke, getitem

def pytest_sessionfinish(session):
    with open(os.environ["DEVICES_SEEN"], "a") as handle:
        handle.write(json.dumps(SEEN) + "\\n")
"""


@pytest.mark.parametrize("method", METHODS)
def test_a_bundled_method_runs_on_cuda(tiny, method, tmp_path, monkeypatch):
    seen = tmp_path / "devices.jsonl"
    monkeypatch.setenv("DEVICES_SEEN", str(seen))
    tiny.makeconftest(RECORDER)
    result = tiny.runpytest_subprocess(
        f"--method=cfcheck.fixtures.{method}",
        "--cfcheck-device=cuda",
        "--cfcheck-profile=quick",
        "-p",
        "no:randomly",
        "-p",
        "no:cacheprovider",
    )
    output = result.stdout.str()
    assert "device cuda" in output, output[-3000:]
    assert not [line for line in output.splitlines() if any(text in line for text in MISMATCH)], output[-6000:]
    calls = [entry for line in seen.read_text().splitlines() for entry in json.loads(line)]
    method_calls = [c for c in calls if c["what"].startswith("method call")]
    assert method_calls, f"{method} was never called"
    off_cuda = [c for c in calls if any(not d.startswith("cuda") for d in c["devices"])]
    assert not off_cuda, f"not on CUDA: {off_cuda[:5]}"
    card = json.loads(next((tiny.path / "reports").glob("*-quick/scorecard.json")).read_text())
    assert card["provenance"]["device"].startswith("cuda")
    assert all(device.startswith("cuda") for device in card["provenance"]["devices"].values())
    computed = [s for s in card["scores"] if s["value"] is not None]
    assert computed, "no score was computed"
    uncomputed = [s for s in card["scores"] if s["value"] is None and any(t in json.dumps(s) for t in MISMATCH)]
    assert not uncomputed, uncomputed[:3]
