"""Latent-CF (Balasubramanian et al. 2020) as Bex et al. run it: gradient descent on z.

For each input z, K starting points z + σ·ε are moved by Adam on the squared error between the
latent classifier's probability of the input's predicted class and the desired probability
``p`` (0.1); each counterfactual is kept at the first step where the other class's probability
exceeds ``tolerance`` (0.5), or after ``max_iterations`` (50) steps. Bex et al.'s
hyperparameters (appendix A.3.2): learning rate 0.1, p = 0.1, tol = 0.5, 50 iterations. σ (0.1)
is cfcheck's choice: the paper does not give the spread of the starts. The loop is
:class:`cfcheck.kinds.latent.methods.search.LatentGradientSearch`.

``explain(z, latent_classifier, generator, *, rng=None) -> z_cf`` (N×K×D); the classifier is
two-class. Inputs are never modified; the latent classifier's parameters are not updated.
"""

from __future__ import annotations

import torch

from cfcheck.kinds.latent.methods.search import LatentGradientSearch, SearchState

__all__ = ["LatentCF"]


def _check_probability(name: str, value: float) -> float:
    if not 0.0 < float(value) < 1.0:
        raise ValueError(f"{name} must be a probability in (0, 1), got {value!r}")
    return float(value)


class LatentCF(LatentGradientSearch):
    """Latent-CF with Bex et al.'s hyperparameters (see the module docstring).

    Args:
        k: counterfactuals per input.
        lr: Adam's learning rate.
        p: desired probability of the input's predicted class after the search.
        tolerance: stop once the other class's probability exceeds it.
        max_iterations: steps at most.
        start_spread: standard deviation σ of the K starting points around z.
    """

    name = "Latent-CF"

    def __init__(
        self,
        k: int = 10,
        lr: float = 0.1,
        p: float = 0.1,
        tolerance: float = 0.5,
        max_iterations: int = 50,
        start_spread: float = 0.1,
    ) -> None:
        super().__init__(k=k, lr=lr, max_iterations=max_iterations, start_spread=start_spread)
        self.p = _check_probability("p", p)
        self.tolerance = self.stop_probability = _check_probability("tolerance", tolerance)

    def objective(self, state: SearchState) -> torch.Tensor:
        return (state.probability(state.source) - self.p) ** 2
