"""One gradient-search engine for the latent explainers of Bex et al. (Latent-CF, DiCE, xGEM, DiVE).

Each explainer is this loop with its own objective: per input z (predicted class s by the
two-class latent classifier, target t = 1 − s), K counterfactuals start at z + σ·ε (ε ~ N(0, I)
from the supplied generator; Bex et al. follow DiCE to get K from methods that make one) and
move by Adam on z′ for at most ``max_iterations`` steps. A subclass supplies

* ``objective(state) -> N×K`` (the loss of each counterfactual; the step minimises their sum),
* optionally ``stop_probability``: a counterfactual is frozen at the first step where the
  target class's probability exceeds it (Latent-CF's tolerance), and ``stop_when_all``: the
  K of an input are frozen together once all of them exceed it (DiCE's convergence test),
* optionally ``movable(z, classifier, source) -> N×D`` bool: coordinates allowed to move (DiVE
  masks the ones with the largest Fisher information); the others stay at z's value.

``explain(z, latent_classifier, generator, *, rng=None) -> z_cf`` (N×K×D). The input and the
models' parameters are never modified.
"""

from __future__ import annotations

from abc import abstractmethod
from dataclasses import dataclass, field

import torch
from torch import nn

from cfcheck.kinds.latent.methods.contract import LatentSpaceExplainer
from cfcheck.kinds.method_helpers import check_positive

__all__ = ["LatentGradientSearch", "SearchState", "two_class_logits"]


def two_class_logits(latent_classifier: nn.Module, z: torch.Tensor, method: str) -> torch.Tensor:
    """The classifier's logits on ``z`` (N×2); ValueError naming ``method`` unless it has two classes."""
    logits = latent_classifier(z)
    if logits.ndim != 2 or logits.shape[1] != 2:
        raise ValueError(f"{method} here explains two-class latent classifiers; got logits {tuple(logits.shape)}")
    return logits


@dataclass
class SearchState:
    """What an objective sees at one step (N inputs, K counterfactuals each, D coordinates).

    Attributes:
        z: N×D inputs. z_cf: N×K×D current counterfactuals (differentiable).
        logits: N×K×2 the latent classifier's logits on z_cf.
        source, target: N predicted and target classes.
        generator: the domain's g(z) (for objectives measured on images).
        cache: shared by the steps of one call (g(z) of the inputs, computed once).
    """

    z: torch.Tensor
    z_cf: torch.Tensor
    logits: torch.Tensor
    source: torch.Tensor
    target: torch.Tensor
    generator: nn.Module
    cache: dict = field(default_factory=dict)  # per call: what does not change between steps

    def probability(self, which: torch.Tensor) -> torch.Tensor:
        """N×K softmax probability of class ``which`` (N)."""
        index = which[:, None, None].expand(-1, self.logits.shape[1], 1)
        return torch.softmax(self.logits, -1).gather(-1, index).squeeze(-1)

    def target_margin(self) -> torch.Tensor:
        """N×K log-odds of the target class over the source class."""
        k = self.logits.shape[1]
        pick = self.logits.gather
        target = pick(-1, self.target[:, None, None].expand(-1, k, 1)).squeeze(-1)
        return target - pick(-1, self.source[:, None, None].expand(-1, k, 1)).squeeze(-1)

    def l1_distance(self) -> torch.Tensor:
        """N×K mean absolute coordinate change |z′ − z|."""
        return (self.z_cf - self.z[:, None]).abs().mean(-1)

    def image_distance(self) -> torch.Tensor:
        """N×K mean absolute pixel change |g(z′) − g(z)| (the generator runs on every step)."""
        n, k, d = self.z_cf.shape
        if "images" not in self.cache:
            with torch.no_grad():
                self.cache["images"] = self.generator(self.z).flatten(1)
        original = self.cache["images"]
        generated = self.generator(self.z_cf.reshape(n * k, d)).reshape(n, k, -1)
        return (generated - original[:, None]).abs().mean(-1)


class LatentGradientSearch(LatentSpaceExplainer):
    """The engine of the module docstring; subclasses set the objective and the stopping rule.

    Args:
        k: counterfactuals per input.
        lr: Adam's learning rate.
        max_iterations: steps at most.
        start_spread: standard deviation σ of the K starting points around z.
    """

    #: freeze a counterfactual once p(target) exceeds this (None: run every step)
    stop_probability: float | None = None
    #: freeze an input's K together, once all of them exceed ``stop_probability``
    stop_when_all: bool = False
    name = "latent gradient search"

    def __init__(self, k: int = 10, lr: float = 0.1, max_iterations: int = 50, start_spread: float = 0.1) -> None:
        check_positive("k", k, integer=True)
        check_positive("lr", lr)
        check_positive("max_iterations", max_iterations, integer=True)
        if not float(start_spread) >= 0.0:
            raise ValueError(f"start_spread must be >= 0, got {start_spread!r}")
        self.k, self.lr, self.max_iterations, self.start_spread = (
            int(k),
            float(lr),
            int(max_iterations),
            float(start_spread),
        )

    @abstractmethod
    def objective(self, state: SearchState) -> torch.Tensor:
        """N×K loss of each counterfactual (the step minimises the sum over the unfrozen ones)."""

    def movable(self, z: torch.Tensor, latent_classifier: nn.Module, source: torch.Tensor) -> torch.Tensor | None:
        """N×D bool of the coordinates allowed to move (None: all)."""
        return None

    def counterfactuals(
        self, z: torch.Tensor, latent_classifier: nn.Module, generator: nn.Module, rng: torch.Generator
    ) -> torch.Tensor:
        n, d = z.shape
        z = z.detach()
        with torch.no_grad():
            source = two_class_logits(latent_classifier, z, self.name).argmax(1)
        mask = self.movable(z, latent_classifier, source)
        keep = None if mask is None else mask[:, None, :].to(z.dtype)
        noise = torch.randn((n, self.k, d), generator=rng, device=rng.device).to(z.device)
        start = z[:, None, :] + self.start_spread * noise
        if keep is not None:
            start = z[:, None, :] + (start - z[:, None, :]) * keep
        current = start.clone().requires_grad_(True)
        optimiser = torch.optim.Adam([current], lr=self.lr)
        done = torch.zeros(n, self.k, dtype=torch.bool, device=z.device)
        result = start.clone()
        cache: dict = {}
        for _ in range(self.max_iterations):
            z_cf = current if keep is None else z[:, None, :] + (current - z[:, None, :]) * keep
            logits = latent_classifier(z_cf.reshape(n * self.k, d)).reshape(n, self.k, -1)
            state = SearchState(z, z_cf, logits, source, 1 - source, generator, cache)
            if self.stop_probability is not None:
                reached = state.probability(state.target).detach() > self.stop_probability
                if self.stop_when_all:
                    reached = reached.all(1, keepdim=True).expand(-1, self.k)
                newly = reached & ~done
                result[newly] = z_cf.detach()[newly]
                done |= reached
                if bool(done.all()):
                    break
            loss = (self.objective(state) * (~done).to(z.dtype)).sum()
            optimiser.zero_grad(set_to_none=True)
            loss.backward()
            optimiser.step()
        with torch.no_grad():
            final = current.detach() if keep is None else z[:, None, :] + (current.detach() - z[:, None, :]) * keep
        result[~done] = final[~done]
        return result
