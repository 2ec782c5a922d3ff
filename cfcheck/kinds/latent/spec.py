"""Latent explainers (Bex et al.): ``explain(z, latent_classifier, generator) -> z_cf`` (N×K×D).

``generator`` is the domain's decoder g(z), as in the paper; cfcheck's seeded random-number
generator is passed as ``rng=``. No bundled domain has a latent space yet: the glyphs
(Synbols) domain brings one, with this kind's tasks and suites. Until then a latent method's
suites are skipped with that reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from cfcheck.domains.base import Domain
from cfcheck.kinds.base import Inputs, KindSpec, Run, Task
from cfcheck.kinds.calling import MethodOutput, OutputSpec
from cfcheck.kinds.protocols import MethodKind
from cfcheck.kinds.latent.section import SECTION_DEFAULTS

NOT_YET = "no bundled domain has a latent space yet: the glyphs (Synbols) domain brings the latent kind's suites (#11)"




class LatentSpec(KindSpec):
    kind: ClassVar[MethodKind] = MethodKind.LATENT
    output_noun = "latent counterfactuals"
    output = OutputSpec(call="explain", several=True, required_k=True, value_range=None)
    section_defaults = SECTION_DEFAULTS
    pending_suites = {"synbols": NOT_YET}

    def supports(self, domain: Domain) -> str | None:
        if "latent_space" not in domain.capabilities:
            return f"domain {domain.name!r} has no latent space; {NOT_YET}"
        return None

    def tasks(self, run: Run, domain: str, which: str) -> list[Task]:
        return []

    def inputs(self, run: Run, task: Task) -> Inputs:
        raise NotImplementedError(NOT_YET)

    def arguments(self, run: Run, task: Task, batch: Mapping[str, Any]) -> tuple[Any, ...]:
        raise NotImplementedError(NOT_YET)

    def result(self, run: Run, task: Task, inputs: Inputs, output: MethodOutput, seconds: float) -> Any:
        raise NotImplementedError(NOT_YET)


SPEC = LatentSpec()

__all__ = ["SPEC", "LatentSpec"]
