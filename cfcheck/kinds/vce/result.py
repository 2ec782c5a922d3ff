"""The counterfactuals of one VCE task, with memoised reference-model outputs on them."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

import torch

from cfcheck.core.answer_reads import engine_reads
from cfcheck.kinds.base import EvaluatedOnce
from cfcheck.kinds.calling import MethodOutput
from cfcheck.kinds.vce.tasks import TaskInputs, VCETask

if TYPE_CHECKING:
    from cfcheck.models.zoo import ModelZoo


@dataclass
class VCEResult(EvaluatedOnce):
    """Counterfactuals of one task plus lazily computed, memoised model outputs on them (the
    realism scores read one embedding of the counterfactuals: :meth:`evaluated`)."""

    task: VCETask
    inputs: TaskInputs
    output: MethodOutput
    zoo: ModelZoo
    seconds: float
    _logits: dict[tuple[str, str], torch.Tensor] = field(default_factory=dict, repr=False)

    @property
    def x(self) -> torch.Tensor:
        return self.inputs.x

    @property
    def cfs(self) -> torch.Tensor:
        """Every counterfactual: N×K×C×H×W."""
        return self.output.values

    @property
    def x_cf(self) -> torch.Tensor:
        """The first counterfactual of every input (what single-CF metrics score)."""
        return self.output.values[:, 0]

    @property
    def valid(self) -> torch.Tensor:
        return self.output.valid

    @property
    def target(self) -> torch.Tensor:
        return self.inputs.target

    @property
    def source(self) -> torch.Tensor:
        return self.inputs.source

    @property
    def num_counterfactuals(self) -> int:
        return self.output.values.shape[1]

    def logits(self, model: str, on: str = "cf") -> torch.Tensor:
        """Logits of reference model ``model`` on the counterfactuals ("cf") or originals ("x"); the
        originals' are the same for every method, so they are kept on disk (:meth:`ModelZoo.stored_logits`)."""
        if on not in ("cf", "x"):
            raise ValueError(f"on must be 'cf' or 'x', got {on!r}")
        key = (model, on)
        if key not in self._logits:
            self._logits[key] = (
                self.zoo.logits(model, self.x_cf) if on == "cf" else self.zoo.stored_logits(model, self.x)
            )
        return self._logits[key]

    def predictions(self, model: str, on: str = "cf") -> torch.Tensor:
        return self.logits(model, on).argmax(dim=1)

    def probabilities(self, model: str, on: str = "cf") -> torch.Tensor:
        return self.logits(model, on).softmax(dim=1)

    @cached_property
    def true_cf(self) -> torch.Tensor | None:
        """The domain's true counterfactual of every input under do(class = target) (same style,
        re-rendered with the target class), or None where the domain cannot compute one."""
        from cfcheck.kinds.vce.capabilities import ClassCounterfactual

        domain = self.zoo.domain
        if not isinstance(domain, ClassCounterfactual):
            return None
        with engine_reads():  # the engine's own use of the answer, not the method's
            factors = domain.split(domain.split_roles["scored"]).factors[self.inputs.index]
            return domain.class_counterfactual(factors, self.target)

    @cached_property
    def sample_labels(self) -> dict[str, list[Any]]:
        """Per input: its position in the task (``input``, what paired comparisons match on),
        its class and its target."""
        return {"input": list(range(len(self.x))), "source": self.source.tolist(), "target": self.target.tolist()}
