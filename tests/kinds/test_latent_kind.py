"""The latent kind's pieces that need no bundled model: input buckets, the section, Latent-CF."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from cfcheck.core.costs import MethodClock
from cfcheck.kinds.latent.methods.latent_cf import LatentCF
from cfcheck.kinds.latent.section import SECTION_DEFAULTS, LatentSection
from cfcheck.kinds.latent.spec import confidence_buckets


def test_buckets_take_inputs_nearest_to_each_level_split_by_correctness():
    probability = torch.linspace(0.0, 1.0, 1001, dtype=torch.float64)
    correct = torch.arange(1001) % 2 == 0
    index, level, is_correct = confidence_buckets(probability, correct, (0.1, 0.9), 8, torch.Generator().manual_seed(0))
    assert len(index) == 8 and len(set(index.tolist())) == 8
    assert sorted(level.tolist()) == [0.1] * 4 + [0.9] * 4
    assert (is_correct == correct[index].long()).all() and int(is_correct.sum()) == 4
    # each input lies among the 4·m = 8 candidates of its bucket nearest to the level
    assert ((probability[index] - level).abs() <= 8 * 2 * 0.001 + 1e-9).all()
    again = confidence_buckets(probability, correct, (0.1, 0.9), 8, torch.Generator().manual_seed(0))
    assert torch.equal(again[0], index)
    other = confidence_buckets(probability, correct, (0.1, 0.9), 8, torch.Generator().manual_seed(1))
    assert not torch.equal(other[0], index)


def test_buckets_spread_a_remainder_and_skip_empty_groups():
    probability = torch.rand(100, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    index, _, is_correct = confidence_buckets(
        probability, torch.ones(100, dtype=torch.bool), (0.5,), 3, torch.Generator().manual_seed(0)
    )
    assert len(index) == 2 and is_correct.tolist() == [1, 1]  # 2 of 3 in the correct bucket; the other is empty


def test_section_defaults_and_validation():
    assert SECTION_DEFAULTS["full"].n_inputs == 800 and SECTION_DEFAULTS["quick"].counterfactuals_per_input == 10
    assert SECTION_DEFAULTS["quick"].confidence_levels == (0.1, 0.4, 0.6, 0.9)
    for bad in (
        dict(n_inputs=0),
        dict(n_inputs=4, counterfactuals_per_input=0),
        dict(n_inputs=4, confidence_levels=(0.0, 0.5)),
        dict(n_inputs=4, confidence_levels=()),
    ):
        with pytest.raises(ValueError):
            LatentSection(**bad).validate()


class _Linear(nn.Module):
    """Two logits ±w·z: class 1 where w·z > 0."""

    def __init__(self, w: torch.Tensor) -> None:
        super().__init__()
        self.w = nn.Parameter(w, requires_grad=False)

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        score = z @ self.w
        return torch.stack([-score, score], 1)


def test_latent_cf_flips_a_linear_classifier_without_touching_its_inputs():
    torch.manual_seed(0)
    classifier = _Linear(torch.tensor([1.0, 0.0, 0.0]))
    z = torch.tensor([[0.3, 1.0, -1.0], [-0.2, 0.5, 0.5]])
    before = z.clone()
    explainer = LatentCF(k=4)
    z_cf = explainer.explain(z, classifier, nn.Identity(), rng=torch.Generator().manual_seed(5))
    assert z_cf.shape == (2, 4, 3) and torch.equal(z, before)
    flipped = classifier(z_cf.reshape(-1, 3)).argmax(1).reshape(2, 4) != classifier(z).argmax(1)[:, None]
    assert flipped.all()
    again = explainer.explain(z, classifier, nn.Identity(), rng=torch.Generator().manual_seed(5))
    assert torch.equal(z_cf, again)
    # it stops at the flip: the counterfactuals stay close to the boundary, not far beyond it
    assert (z_cf[..., 0].abs() < 1.0).all()


def test_latent_cf_validates_its_arguments():
    with pytest.raises(ValueError, match="p"):
        LatentCF(p=1.5)
    with pytest.raises(TypeError, match="k"):
        LatentCF(k=2.5)
    with pytest.raises(TypeError, match="N×D"):
        LatentCF().explain(torch.zeros(3), _Linear(torch.ones(3)), nn.Identity())
    three_class = nn.Linear(3, 3)
    with pytest.raises(ValueError, match="two-class"):
        LatentCF().explain(torch.zeros(2, 3), three_class, nn.Identity())


# -- the engine on a stub domain: tasks, inputs, the call, the result and its scores ------------
class _StubDomain:
    """A two-variant latent space: z ∈ R³, one categorical coordinate group of three categories
    (columns 0–1) and one continuous coordinate; h_causal = the category's parity."""

    name = "stub"
    capabilities = frozenset({"latent_space"})
    split_roles = {"scored": "test"}
    variants = ("a", "b")

    def __init__(self, variant: str = "a") -> None:
        self.label = variant
        self._z = torch.randn(400, 3, generator=torch.Generator().manual_seed(0 if variant == "a" else 1))

    def variant(self, name: str) -> _StubDomain:
        return _StubDomain(name)

    def latents(self, split: str, n: int | None = None) -> torch.Tensor:
        return self._z[:n]

    def latent_classifier(self) -> nn.Module:
        return _Linear(torch.tensor([0.0, 0.0, 2.0]))

    def latent_generator(self) -> nn.Module:
        return nn.Linear(3, 3)

    def latent_layout(self):
        from cfcheck.metrics.synbols import CategoricalGroup, LatentLayout

        table = torch.tensor([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0]])
        return LatentLayout([CategoricalGroup("category", (0, 2), table, 2.0)], (2, 3), continuous_radius=1.0)

    def causal_oracle(self, z: torch.Tensor) -> torch.Tensor:
        table = torch.tensor([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0]])
        flat = z[..., :2].reshape(-1, 2)
        return (torch.cdist(flat, table).argmin(1) % 2).reshape(z.shape[:-1])

    def clip_latents(self, z: torch.Tensor) -> torch.Tensor:
        return z.clamp(-3.0, 3.0)


class _Run:
    def __init__(self, section: LatentSection) -> None:
        from types import SimpleNamespace

        self.device = torch.device("cpu")
        self.seed = 0
        self.seeds = (0,)
        self.method_clock = MethodClock()
        self.profile = SimpleNamespace(section=lambda kind: section, batch_size=64, timeout=None, determinism_batch=2)
        self._memo: dict = {}
        self._domain = _StubDomain()

    def domain(self, name: str) -> _StubDomain:
        return self._domain

    def memo(self, key, factory):
        if key not in self._memo:
            self._memo[key] = factory()
        return self._memo[key]


class _MoveTheContinuousCoordinate:
    """K counterfactuals: the continuous coordinate pushed across the linear boundary."""

    def explain(self, z, latent_classifier, generator, *, rng=None):
        z_cf = z[:, None].repeat(1, 3, 1)
        z_cf[..., 2] = -z[:, None, 2] + torch.tensor([0.0, 0.01, 0.02])
        return z_cf


def test_the_engine_builds_tasks_draws_inputs_and_scores_a_stub_method():
    from cfcheck.kinds.latent.spec import SPEC

    run = _Run(LatentSection(n_inputs=8, counterfactuals_per_input=3, confidence_levels=(0.1, 0.9)))
    tasks = SPEC.tasks(run, run.domain("stub"), "explained")
    assert [t.id for t in tasks] == ["a/seed0", "b/seed0"] and tasks[0].k == 3
    inputs = SPEC.inputs(run, tasks[0])
    assert inputs.like.shape == (8, 3) and set(inputs.labels) == {"index", "confidence_level", "correct", "probability"}
    output = SPEC.generate(run, tasks[0], _MoveTheContinuousCoordinate(), inputs, None)
    assert output.values.shape == (8, 3, 3) and output.valid.all()
    result = SPEC.result(run, tasks[0], inputs, output, 0.0)
    rates = result.scores.rates
    # flipping the classifier's coordinate within the radius keeps the category: every CF is an NCF
    moved = 2 * inputs.like[:, 2].abs() <= 1.0  # inside the continuous radius (L1 ≤ 1)
    assert torch.allclose(rates["ef"], moved.double(), atol=1e-9)
    assert torch.equal(rates["ncf"], rates["ef"]) and float(rates["trivial"].sum()) == 0.0
    # three counterfactuals along one direction: S# is 1 where they are successful, else 0
    assert torch.equal(result.scores.s_sharp, moved.long())
    assert len(result.sample_labels["input"]) == 8


def test_the_engine_rejects_a_wrong_k_and_unknown_variants():
    from cfcheck.kinds.calling import MethodOutputError
    from cfcheck.kinds.latent.spec import SPEC

    run = _Run(LatentSection(n_inputs=4, counterfactuals_per_input=5))
    task = SPEC.tasks(run, run.domain("stub"), "explained")[0]
    with pytest.raises(MethodOutputError, match="K = 5"):
        SPEC.generate(run, task, _MoveTheContinuousCoordinate(), SPEC.inputs(run, task), None)
    with pytest.raises(ValueError, match="unknown entries"):
        SPEC.check(_Run(LatentSection(n_inputs=4, variants=("c",))), _StubDomain())
    with pytest.raises(ValueError, match="only 'explained'"):
        SPEC.tasks(run, run.domain("stub"), "random")


class _Spy:
    """Records the keywords it was called with; returns z repeated K = 3 times."""

    def __init__(self) -> None:
        self.seen: list[set[str]] = []

    def _result(self, z, kwargs):
        self.seen.append(set(kwargs))
        return z[:, None].repeat(1, 3, 1)


class _Oracle(_Spy):
    def explain(self, z, latent_classifier, generator, *, rng=None, oracle_domain=None):
        assert isinstance(oracle_domain, _StubDomain) and oracle_domain.label == "b"
        return self._result(z, {"rng": rng, "oracle_domain": oracle_domain})


class _Catchall(_Spy):
    def explain(self, z, latent_classifier, generator, **kwargs):
        return self._result(z, kwargs)


def test_only_a_method_that_names_oracle_domain_gets_the_variants_domain():
    from cfcheck.kinds.latent.spec import SPEC

    run = _Run(LatentSection(n_inputs=4, counterfactuals_per_input=3))
    task = SPEC.tasks(run, run.domain("stub"), "explained")[1]  # variant "b"
    oracle, catchall = _Oracle(), _Catchall()
    SPEC.generate(run, task, oracle, SPEC.inputs(run, task), None)
    SPEC.generate(run, task, catchall, SPEC.inputs(run, task), None)
    assert oracle.seen == [{"rng", "oracle_domain"}]
    assert catchall.seen == [{"rng"}]  # **kwargs gets cfcheck's generator, never the oracle's knowledge


class _ToldK:
    """Returns as many counterfactuals as it is told."""

    def __init__(self) -> None:
        self.told: list[int] = []

    def explain(self, z, latent_classifier, generator, *, rng=None, k=10):
        self.told.append(k)
        return z[:, None].repeat(1, k, 1)


@pytest.mark.parametrize("k", [1, 5])
def test_a_method_that_names_k_is_told_the_profiles_k(k):
    from cfcheck.kinds.latent.spec import SPEC

    run = _Run(LatentSection(n_inputs=4, counterfactuals_per_input=k))
    task = SPEC.tasks(run, run.domain("stub"), "explained")[0]
    method, catchall = _ToldK(), _Catchall()
    output = SPEC.generate(run, task, method, SPEC.inputs(run, task), None)
    assert method.told == [k] and output.values.shape[1] == k  # its default (10) would have failed the K check
    with pytest.raises(Exception, match=f"K = {k}"):  # **kwargs is not told: it returns its own 3
        SPEC.generate(run, task, catchall, SPEC.inputs(run, task), None)
    assert catchall.seen == [{"rng"}]
