"""Latent-CF (Balasubramanian et al. 2020) as Bex et al. run it: gradient descent on z.

For each input z, K starting points z + σ·ε (ε ~ N(0, I) from the supplied generator; the
method makes one counterfactual per start, as Bex et al. follow DiCE to get K from a method that
makes one) are moved by Adam on the squared error between the latent classifier's probability of
the input's predicted class and the desired probability ``p`` (0.1), until the counterfactual's
confidence in the other class exceeds ``tolerance`` (0.5) or ``max_iterations`` (50) steps have
run. Bex et al.'s hyperparameters (appendix A.3.2): learning rate 0.1, p = 0.1, tol = 0.5, 50
iterations. σ (0.1) is cfcheck's choice: the paper does not give the spread of the starts.

``explain(z, latent_classifier, generator, *, rng=None) -> z_cf`` (N×K×D); the classifier is
two-class. Inputs are never modified; the latent classifier's parameters are not updated.
"""

from __future__ import annotations

import torch
from torch import nn

from cfcheck.methods.contract import check_positive, resolve_generator, validate_latent_inputs

__all__ = ["LatentCF"]


class LatentCF:
    """Latent-CF with Bex et al.'s hyperparameters (see the module docstring).

    Args:
        k: counterfactuals per input.
        lr: Adam's learning rate.
        p: desired probability of the input's predicted class after the search.
        tolerance: stop once the other class's probability exceeds it.
        max_iterations: steps at most.
        start_spread: standard deviation σ of the K starting points around z.
    """

    def __init__(self, k: int = 10, lr: float = 0.1, p: float = 0.1, tolerance: float = 0.5,
                 max_iterations: int = 50, start_spread: float = 0.1) -> None:
        check_positive("k", k, integer=True)
        check_positive("lr", lr)
        check_positive("max_iterations", max_iterations, integer=True)
        for name, value in (("p", p), ("tolerance", tolerance)):
            if not 0.0 < float(value) < 1.0:
                raise ValueError(f"{name} must be a probability in (0, 1), got {value!r}")
        if not float(start_spread) >= 0.0:
            raise ValueError(f"start_spread must be >= 0, got {start_spread!r}")
        self.k, self.lr, self.p, self.tolerance = int(k), float(lr), float(p), float(tolerance)
        self.max_iterations, self.start_spread = int(max_iterations), float(start_spread)

    def explain(self, z: torch.Tensor, latent_classifier: nn.Module, generator: nn.Module, *,
                rng: torch.Generator | None = None) -> torch.Tensor:
        validate_latent_inputs(z, latent_classifier)
        rng = resolve_generator(rng)
        n, d = z.shape
        with torch.no_grad():
            logits = latent_classifier(z)
        if logits.ndim != 2 or logits.shape[1] != 2:
            raise ValueError(f"Latent-CF here explains two-class latent classifiers; got logits {tuple(logits.shape)}")
        original = logits.argmax(1)
        noise = torch.randn((n, self.k, d), generator=rng, device=rng.device).to(z.device)
        start = (z.detach()[:, None, :] + self.start_spread * noise).reshape(n * self.k, d)
        source = original.repeat_interleave(self.k)
        current = start.clone().requires_grad_(True)
        optimiser = torch.optim.Adam([current], lr=self.lr)
        done = torch.zeros(n * self.k, dtype=torch.bool, device=z.device)
        result = start.clone()
        for _ in range(self.max_iterations):
            probability = torch.softmax(latent_classifier(current), 1)
            source_probability = probability.gather(1, source[:, None]).squeeze(1)
            reached = (1.0 - source_probability.detach()) > self.tolerance
            newly = reached & ~done
            result[newly] = current.detach()[newly]
            done |= reached
            if bool(done.all()):
                break
            loss = ((source_probability - self.p) ** 2 * (~done).float()).sum()
            optimiser.zero_grad(set_to_none=True)
            loss.backward()
            optimiser.step()
        result[~done] = current.detach()[~done]
        return result.reshape(n, self.k, d)
