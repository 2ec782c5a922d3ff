"""Realism's method-independent work kept with the derived data (cfcheck.metrics.reference_store):
the reference's terms, the floors and the real side of the set CIs' resamples, reused whatever the
method and in another process, recomputed when the real features or the
version change, a damaged entry discarded with a warning, and the same numbers bit for bit."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import cfcheck.metrics.reference_store as reference_store
from cfcheck.core.cache import DerivedDataWarning
from cfcheck.metrics.manifold import KnnSets, coverage, density
from cfcheck.metrics.realism import fid
from cfcheck.metrics.reference_sets import score_realism
from cfcheck.metrics.set_statistics import FidSets, KidSets, kid_all_pairs

STATISTICS = {
    "fid": (fid, "bootstrap"),
    "kid": (kid_all_pairs, "half_sampling"),
    "density": (density, "centred_half_sampling"),
    "coverage": (coverage, "centred_half_sampling"),
}
COMPUTED = (FidSets, KidSets, KnnSets)


def _pool(seed: int = 5) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    labels = torch.arange(3).repeat_interleave(90)
    return torch.randn(len(labels), 4, generator=gen, dtype=torch.float64) + labels[:, None], labels


def _fakes(shift: float) -> tuple[torch.Tensor, torch.Tensor]:
    classes = torch.tensor([0] * 8 + [1] * 5 + [2] * 7)
    gen = torch.Generator().manual_seed(11)
    return torch.randn(len(classes), 4, generator=gen, dtype=torch.float64) + classes[:, None] + shift, classes


def _score(name: str, pool, fakes, conditional: bool = True, seed: int = 1):
    statistic, ci_method = STATISTICS[name]
    return score_realism(
        statistic,
        *pool,
        *fakes,
        conditional=conditional,
        generator=torch.Generator().manual_seed(3),
        n_resamples=20,
        seed=seed,
        ci_method=ci_method,
    )


@pytest.fixture
def own_derived_data(tmp_path, monkeypatch):
    """An empty derived-data folder for this test, the store turned on, nothing held in memory."""
    monkeypatch.setenv("CFCHECK_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("CFCHECK_NO_DERIVED_CACHE", raising=False)
    reference_store.forget_recent()
    yield tmp_path / "derived"
    reference_store.forget_recent()


def _terms_missing(engine: object) -> bool:
    """Whether ``engine`` has yet to compute its reference's own terms."""
    held = {FidSets: "_moments", KidSets: "_real_within", KnnSets: "_terms"}[type(engine)]
    return getattr(engine, held) is None


@pytest.fixture
def computations(monkeypatch):
    """Counts the reference terms each engine computes (a load from the store computes none)."""
    counts = {engine.__name__: 0 for engine in COMPUTED}
    for engine in COMPUTED:

        def counted(self, _original=engine.state):
            counts[type(self).__name__] += _terms_missing(self)
            return _original(self)

        monkeypatch.setattr(engine, "state", counted)
    return counts


@pytest.mark.parametrize("conditional", [True, False], ids=["target", "domain"])
def test_a_second_method_reads_the_reference_terms_and_floors_and_gets_the_numbers_computed_afresh(
    own_derived_data, computations, monkeypatch, conditional
):
    pool = _pool()
    first = {name: _score(name, pool, _fakes(0.2), conditional) for name in STATISTICS}
    assert all(computations.values()), computations
    stored = sorted(own_derived_data.rglob("*.safetensors"))
    computations.update(dict.fromkeys(computations, 0))
    second = {name: _score(name, pool, _fakes(0.7), conditional) for name in STATISTICS}  # another method
    assert computations == dict.fromkeys(computations, 0)  # nothing about the reference computed again
    assert sorted(own_derived_data.rglob("*.safetensors")) == stored  # and nothing new stored
    for name in STATISTICS:
        assert second[name].floors == first[name].floors
        assert second[name].value != first[name].value
    monkeypatch.setenv("CFCHECK_NO_DERIVED_CACHE", "1")  # the same scores computed without the store
    reference_store.forget_recent()
    for name in STATISTICS:
        afresh = _score(name, pool, _fakes(0.7), conditional)
        assert (afresh.value, afresh.ci, afresh.floors) == (second[name].value, second[name].ci, second[name].floors)


def test_new_real_features_or_a_new_version_are_computed_again(own_derived_data, computations, monkeypatch):
    _score("density", _pool(), _fakes(0.2))
    assert computations["KnnSets"] == 3  # one reference per class
    _score("density", _pool(seed=6), _fakes(0.2))  # another reference split: other features
    assert computations["KnnSets"] == 6
    monkeypatch.setattr(reference_store, "REALISM_DERIVED_VERSION", reference_store.REALISM_DERIVED_VERSION + 1)
    _score("density", _pool(), _fakes(0.2))
    assert computations["KnnSets"] == 9
    _score("coverage", _pool(), _fakes(0.2))  # coverage shares density's reference terms
    assert computations["KnnSets"] == 9
    threads = torch.get_num_threads()
    reference_store.forget_recent()
    try:  # sums over another number of threads may differ in the last bits: not read across
        torch.set_num_threads(threads + 1)
        _score("density", _pool(), _fakes(0.2))
    finally:
        torch.set_num_threads(threads)
    assert computations["KnnSets"] == 12


def test_density_and_coverage_of_a_task_share_the_ranked_resamples(own_derived_data, monkeypatch):
    ranked = []
    original = KnnSets._shortlist_positions
    monkeypatch.setattr(KnnSets, "_shortlist_positions", lambda self, rows: ranked.append(1) or original(self, rows))
    pool, fakes = _pool(), _fakes(0.2)
    for conditional in (True, False):
        density_score = _score("density", pool, fakes, conditional)
        first = len(ranked)
        coverage_score = _score("coverage", pool, fakes, conditional)
        assert first > 0 and len(ranked) == first  # coverage ranked nothing again
        ranked.clear()
        reference_store.forget_recent()
        monkeypatch.setenv("CFCHECK_NO_DERIVED_CACHE", "1")  # computed on its own: the same numbers
        assert _score("coverage", pool, fakes, conditional).ci == coverage_score.ci
        assert _score("density", pool, fakes, conditional).ci == density_score.ci
        monkeypatch.delenv("CFCHECK_NO_DERIVED_CACHE")
        ranked.clear()


@pytest.fixture
def real_side(monkeypatch):
    """Records each real-side term of the set CIs' resamples an engine computes: the k-NN radii
    ranked within real resamples, and KID's within-set sum over real resamples."""
    computed: list[str] = []
    rank, within = KnnSets._shortlist_positions, KidSets._within

    def ranked(self, rows):
        computed.append("knn")
        return rank(self, rows)

    def summed(self, x, w):
        if x.shape == self.real.shape and torch.equal(x, self.real) and len(w) > 1:  # (its own term: one row)
            computed.append("kid")
        return within(self, x, w)

    monkeypatch.setattr(KnnSets, "_shortlist_positions", ranked)
    monkeypatch.setattr(KidSets, "_within", summed)
    return computed


@pytest.mark.parametrize("conditional", [True, False], ids=["target", "domain"])
def test_a_second_method_reads_the_real_side_of_the_resamples(own_derived_data, real_side, monkeypatch, conditional):
    pool = _pool()
    names = ("kid", "density", "coverage")
    first = {name: _score(name, pool, _fakes(0.2), conditional) for name in names}
    assert set(real_side) == {"kid", "knn"}
    real_side.clear()
    reference_store.forget_recent()  # as another process would: from disk
    second = {name: _score(name, pool, _fakes(0.7), conditional) for name in names}  # another method
    assert real_side == []
    assert all(second[name].ci != first[name].ci for name in names)
    monkeypatch.setenv("CFCHECK_NO_DERIVED_CACHE", "1")  # the same intervals computed without the store
    reference_store.forget_recent()
    for name in names:
        assert _score(name, pool, _fakes(0.7), conditional).ci == second[name].ci
    assert set(real_side) == {"kid", "knn"}


def test_other_real_rows_drawn_are_computed_again_and_a_damaged_real_side_is_not_trusted(own_derived_data, real_side):
    pool = _pool()
    expected = {name: _score(name, pool, _fakes(0.2)) for name in ("kid", "density")}
    real_side.clear()
    reference_store.forget_recent()
    _score("kid", pool, _fakes(0.2), seed=2)  # another CI seed draws other real rows
    assert real_side == ["kid"] * 3  # one reference per class
    real_side.clear()
    reference_store.forget_recent()
    for entry in own_derived_data.rglob("*.safetensors"):  # same size, other bytes
        data = bytearray(entry.read_bytes())
        data[-8:] = bytes(8)
        entry.write_bytes(bytes(data))
    with pytest.warns(DerivedDataWarning, match="failed its integrity check"):
        again = {name: _score(name, pool, _fakes(0.2)) for name in ("kid", "density")}
    assert {"kid", "knn"} <= set(real_side)
    assert all(again[name].ci == expected[name].ci for name in expected)


def test_a_damaged_entry_is_discarded_with_a_warning_and_never_trusted(own_derived_data, computations):
    pool = _pool()
    expected = _score("fid", pool, _fakes(0.2))
    reference_store.forget_recent()  # read from disk, as another process would
    for entry in own_derived_data.rglob("*.safetensors"):  # same size, other bytes: only the digest tells
        data = bytearray(entry.read_bytes())
        data[-8:] = bytes(8)
        entry.write_bytes(bytes(data))
    with pytest.warns(DerivedDataWarning, match="realism.*failed its integrity check"):
        again = _score("fid", pool, _fakes(0.2))
    assert computations["FidSets"] == 6 and (again.value, again.ci, again.floors) == (
        expected.value,
        expected.ci,
        expected.floors,
    )


def test_another_process_reads_what_the_first_stored(own_derived_data, tmp_path):
    """Like two xdist workers or two shards on one machine: the second process computes nothing."""
    script = f"""
import json, sys
sys.path.insert(0, {str(Path(__file__).parent)!r})
from test_reference_store import KnnSets, _pool, _fakes, _score
calls, ranked = [], []
original, rank = KnnSets._reference_state, KnnSets._shortlist_positions
KnnSets._reference_state = lambda self: calls.append(1) or original(self)
KnnSets._shortlist_positions = lambda self, rows: ranked.append(1) or rank(self, rows)
score = _score("density", _pool(), _fakes(float(sys.argv[1])), conditional=False)
print(json.dumps({{"floors": score.floors, "value": score.value, "reference_terms_computed": len(calls),
                  "resamples_ranked": len(ranked)}}))
"""
    runs = [
        json.loads(
            subprocess.run(
                [sys.executable, "-c", script, shift],
                capture_output=True,
                text=True,
                check=True,
                env={**_environ(), "CFCHECK_CACHE_DIR": str(tmp_path)},
            ).stdout
        )
        for shift in ("0.2", "3.0")
    ]
    assert [run["reference_terms_computed"] for run in runs] == [1, 0]
    assert runs[0]["resamples_ranked"] > 0 and runs[1]["resamples_ranked"] == 0
    assert runs[0]["floors"] == runs[1]["floors"] and runs[0]["value"] != runs[1]["value"]


def _environ() -> dict[str, str]:
    import os

    return {key: value for key, value in os.environ.items() if key != "CFCHECK_NO_DERIVED_CACHE"}
