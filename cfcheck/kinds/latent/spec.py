"""Latent explainers (Bex et al.): ``explain(z, latent_classifier, generator) -> z_cf`` (N×K×D).

``generator`` is the domain's decoder g(z) and ``latent_classifier`` the explained classifier on
generated images, f(g(z)), both frozen and differentiable in z; cfcheck's seeded random-number
generator is passed as ``rng=``. K (``counterfactuals_per_input``) counterfactuals are required
per input, and a method whose ``explain`` names ``k`` is told K (``k=``); a method may return
``(z_cf, valid)`` with ``valid`` a bool N mask to abstain.

A domain has a latent space (capability ``"latent_space"``) when it offers: ``latents(split, n)``
(standardised z of a split), ``latent_classifier()``, ``latent_generator()``, ``latent_layout()``
(:class:`cfcheck.metrics.synbols.LatentLayout`), ``causal_oracle(z)`` and ``clip_latents(z)``;
optionally ``variants`` (names) and ``variant(name)`` returning the domain for one of them (one
classifier each, e.g. one per scenario of spurious correlations). An oracle control that names
the keyword ``oracle_domain`` in its ``explain`` gets the variant's domain (informed search
reads the spurious attributes from it); no other method does.

Tasks are (domain, variant, seed). Their inputs follow Bex et al. (appendix A.3.2): from the
scored split, inputs near each level of the latent classifier's confidence p(class 1) ∈
``confidence_levels``, half of them classified correctly (by the causal oracle's label) and half
incorrectly: per (level, correctness) bucket, a seeded draw among the 4m candidates nearest to
the level, m = n_inputs / (2 · levels). Counterfactuals are clipped to the training box before
they are scored, as Bex et al. clip every coordinate.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar, Protocol, runtime_checkable

import torch

from cfcheck.core.seeds import TASK_INPUTS, seeded
from cfcheck.domains.base import Domain
from cfcheck.kinds.base import Inputs, KindSpec, Run, Task
from cfcheck.kinds.calling import MethodOutput, OutputSpec
from cfcheck.kinds.latent.declaration import DECLARATION
from cfcheck.kinds.latent.section import SECTION_DEFAULTS
from cfcheck.metrics.synbols import SynbolsScores, synbols_scores

#: the capability a domain declares when it offers the latent interface of the module docstring
LATENT_SPACE = "latent_space"
#: offset of the latent tasks' input draws from the seed (other kinds use other offsets)
SEED_OFFSET = 7
#: candidates per chosen input in a confidence bucket (the draw is among the nearest ones)
CANDIDATES_PER_INPUT = 4


@runtime_checkable
class Variants(Protocol):
    """A latent domain with several scenarios (each its own explained classifier)."""

    variants: tuple[str, ...]

    def variant(self, name: str) -> Any: ...


def variant_names(domain: Domain) -> tuple[str | None, ...]:
    """The domain's variants (``(None,)`` for a domain without any)."""
    return tuple(domain.variants) if isinstance(domain, Variants) and domain.variants else (None,)


def variant_domain(domain: Domain, variant: str | None) -> Any:
    """The domain serving ``variant`` (the domain itself when it has no variants)."""
    if variant is None:
        return domain
    if not isinstance(domain, Variants):
        raise ValueError(f"domain {domain.name!r} has no variants, asked for {variant!r}")
    return domain.variant(variant)


@dataclass(frozen=True, kw_only=True)
class LatentTask(Task):
    kind: ClassVar[str] = "latent"
    variant: str | None = None
    k: int = 10  # counterfactuals per input (part of the task, so of the generation cache key)

    @property
    def id(self) -> str:
        return f"{self.variant or 'default'}/seed{self.seed}"


@dataclass(frozen=True)
class LatentModels:
    """The frozen models of one variant: f(g(z)) and g(z)."""

    latent_classifier: torch.nn.Module
    generator: torch.nn.Module


def latent_models(run: Run, task: LatentTask) -> LatentModels:
    """The variant's latent classifier and generator, loaded once per run."""

    def load() -> LatentModels:
        dom = variant_domain(task.domain, task.variant)
        return LatentModels(dom.latent_classifier().to(run.device), dom.latent_generator().to(run.device))

    return run.memo(("latent-models", task.domain_name, task.variant), load)


@torch.no_grad()
def class_one_probability(latent_classifier: torch.nn.Module, z: torch.Tensor, batch_size: int = 256) -> torch.Tensor:
    """p(class 1 | z) under a two-class latent classifier, batched (float64 on the CPU)."""
    device = next(iter(latent_classifier.parameters())).device
    parts = [
        torch.softmax(latent_classifier(z[i : i + batch_size].to(device)).double(), 1)[:, 1].cpu()
        for i in range(0, len(z), batch_size)
    ]
    return torch.cat(parts)


def confidence_buckets(
    probability: torch.Tensor,
    correct: torch.Tensor,
    levels: tuple[float, ...],
    n_inputs: int,
    generator: torch.Generator,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Indices of the chosen inputs, their level and their correctness (see the module docstring)."""
    buckets = [(level, flag) for level in levels for flag in (True, False)]
    base, extra = divmod(n_inputs, len(buckets))
    chosen, level_of, correct_of = [], [], []
    for position, (level, flag) in enumerate(buckets):
        m = base + (1 if position < extra else 0)
        pool = torch.nonzero(correct == flag).flatten()
        if m == 0 or len(pool) == 0:
            continue
        nearest = pool[(probability[pool] - level).abs().argsort()[: CANDIDATES_PER_INPUT * m]]
        picked = nearest[torch.randperm(len(nearest), generator=generator)[:m]]
        chosen.append(picked)
        level_of.append(torch.full((len(picked),), level, dtype=torch.float64))
        correct_of.append(torch.full((len(picked),), int(flag), dtype=torch.int64))
    return torch.cat(chosen), torch.cat(level_of), torch.cat(correct_of)


@dataclass
class LatentResult:
    """The latent counterfactuals of one task and their Bex et al. scores."""

    task: LatentTask
    inputs: Inputs
    output: MethodOutput
    domain: Any  # the variant's domain
    models: LatentModels
    seconds: float

    @property
    def z(self) -> torch.Tensor:
        return self.inputs.tensor("z")

    @cached_property
    def z_cf(self) -> torch.Tensor:
        """N×K×D counterfactuals, clipped to the training box (an abstention keeps its values)."""
        clipped: torch.Tensor = self.domain.clip_latents(self.output.values.float())
        return clipped

    @property
    def valid(self) -> torch.Tensor:
        return self.output.valid

    @property
    def k(self) -> int:
        return int(self.output.values.shape[1])

    def _labels(self, z: torch.Tensor) -> torch.Tensor:
        return (class_one_probability(self.models.latent_classifier, z) > 0.5).long()

    @cached_property
    def scores(self) -> SynbolsScores:
        n, k, d = self.z_cf.shape
        flat = self.z_cf.reshape(n * k, d)
        return synbols_scores(
            self.z,
            self.z_cf,
            self.domain.latent_layout(),
            self._labels(self.z),
            self._labels(flat).reshape(n, k),
            self.domain.causal_oracle(self.z),
            self.domain.causal_oracle(self.z_cf),
            valid=self.valid[:, None].expand(n, k),
        )

    @cached_property
    def sample_labels(self) -> dict[str, list[Any]]:
        labels = {name: values.tolist() for name, values in self.inputs.labels.items()}
        return {"input": list(range(len(self.inputs))), **labels}


class LatentSpec(KindSpec[LatentTask, LatentResult]):
    declaration = DECLARATION
    task_group_label = "variant"
    output_noun = "latent counterfactuals"
    output = OutputSpec(call=DECLARATION.call, several=True, required_k=True, value_range=None)
    section_defaults = SECTION_DEFAULTS

    def supports(self, domain: Domain) -> str | None:
        if LATENT_SPACE not in domain.capabilities:
            return f"domain {domain.name!r} has no latent space (a generator g(z) and a latent classifier)"
        return None

    def check(self, run: Run, domain: Domain) -> None:
        requested = run.profile.section("latent").variants or ()
        known = variant_names(domain)
        unknown = sorted(set(requested) - set(known))
        if unknown:
            raise ValueError(f"variants has unknown entries {unknown}; {domain.name} has {', '.join(map(str, known))}")

    def tasks(self, run: Run, domain: Domain, which: str) -> list[LatentTask]:
        if which != "explained":
            raise ValueError(f"latent suites have only 'explained' tasks, got cfcheck_tasks({which!r})")
        section = run.profile.section("latent")
        variants = section.variants or variant_names(domain)
        return [
            LatentTask(domain=domain, variant=v, seed=seed, k=section.counterfactuals_per_input)
            for v in variants
            for seed in run.seeds
        ]

    def _pool(self, run: Run, task: LatentTask) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """The scored split's latents, p(class 1) and correctness for the variant (memoised)."""

        def compute() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
            dom = variant_domain(task.domain, task.variant)
            z = dom.latents(dom.split_roles["scored"])
            probability = class_one_probability(latent_models(run, task).latent_classifier, z)
            correct = (probability > 0.5).long() == dom.causal_oracle(z)
            return z, probability, correct

        return run.memo(("latent-pool", task.domain_name, task.variant), compute)

    def _draw(self, run: Run, task: LatentTask) -> Inputs:
        section = run.profile.section("latent")
        z, probability, correct = self._pool(run, task)
        position = variant_names(task.domain).index(task.variant)
        generator = torch.Generator().manual_seed(seeded(task.seed, TASK_INPUTS, SEED_OFFSET, position))
        index, level, is_correct = confidence_buckets(
            probability, correct, tuple(section.confidence_levels), section.n_inputs, generator
        )
        return Inputs(
            like=z[index],
            arguments={"z": z[index].clone()},
            labels={
                "index": index,
                "confidence_level": level,
                "correct": is_correct,
                "probability": probability[index],
            },
        )

    def inputs(self, run: Run, task: LatentTask) -> Inputs:
        return run.memo(("latent-draw", task), lambda: self._draw(run, task))

    def call_keywords(self, run: Run, task: LatentTask) -> dict[str, Any]:
        """``k``: how many counterfactuals per input the profile asks for (``counterfactuals_per_input``),
        for a method whose ``explain`` names ``k``."""
        return {"k": task.k}

    def oracle_arguments(self, run: Run, task: LatentTask) -> dict[str, Any]:
        """``oracle_domain``: the variant's domain, for oracle controls such as informed search."""
        return {"oracle_domain": variant_domain(task.domain, task.variant)}

    def arguments(self, run: Run, task: LatentTask, batch: Mapping[str, Any]) -> tuple[Any, ...]:
        models = latent_models(run, task)
        return batch["z"], models.latent_classifier, models.generator

    def generate(
        self, run: Run, task: LatentTask, method: Any, inputs: Inputs, write: Callable[[str], None] | None
    ) -> MethodOutput:
        """As every kind, and K must be the profile's ``counterfactuals_per_input``."""
        __tracebackhide__ = True
        output = super().generate(run, task, method, inputs, write)
        k = task.k
        if output.values.shape[1] != k:
            from cfcheck.kinds.calling import MethodOutputError

            raise MethodOutputError(
                f"explain returned {output.values.shape[1]} counterfactuals per input; "
                f"the profile asks for K = {k} (counterfactuals_per_input)"
            )
        return output

    def examples(self, run: Run, result: LatentResult, k: int) -> dict[str, torch.Tensor]:
        """The generated input g(z) and its first three counterfactuals g(z′) (an abstention shows g(z))."""
        z = result.z[:k]
        generator = result.models.generator
        device = next(iter(generator.parameters())).device

        def generate(latents: torch.Tensor) -> torch.Tensor:
            images: torch.Tensor = generator(latents.to(device))
            return images.cpu()

        with torch.no_grad():
            columns = {"input g(z)": generate(z)}
            for j in range(min(3, result.k)):
                z_cf = torch.where(result.valid[:k, None], result.z_cf[:k, j], z)
                columns[f"counterfactual {j + 1}"] = generate(z_cf)
        return columns

    def result(self, run: Run, task: LatentTask, inputs: Inputs, output: MethodOutput, seconds: float) -> LatentResult:
        dom = variant_domain(task.domain, task.variant)
        return LatentResult(task, inputs, output, dom, latent_models(run, task), seconds)


SPEC = LatentSpec()

__all__ = ["LATENT_SPACE", "SPEC", "LatentResult", "LatentSpec", "LatentTask", "confidence_buckets"]
