"""The bundled SCM reference generator with a conditional VAE image mechanism (Deep-SCM; the
"VAE (σ learned)" of Melistas et al. 2024).

Abduction, action, prediction:

1. the domain's attribute mechanisms (normalizing flows) abduct each parent's exogenous noise
   under the observed parents, apply the intervention and predict the counterfactual parents
   (an intervention moves the intervened parent's children through their flows);
2. the VAE abducts z = the posterior mean of q(z | x, observed parents) and the pixel noise
   ε = (x − μ(z, pa)) / σ(z, pa), and predicts x* = μ(z, pa*) + σ(z, pa*)·ε (Melistas et al.
   §3.2's formula; default), clamped to [0, 1]. The null intervention then returns x exactly
   (composition is perfect by construction). With ``abduct_pixel_noise=False`` it predicts the
   decoder's mean μ(z, pa*) alone: composition costs the reconstruction error, and the VAE's
   blur can bias a parent read off the image (README, SCM reference generators).

The same adapter drives the other bundled image mechanisms, which offer the same ``encode``,
``decode`` and ``counterfactual(x, c, c*, abduct_pixel_noise=…)``: the conditional hierarchical VAE
(z₁:₃ abducted top-down, then the pixel noise as above) and the conditional GAN with an encoder
(x* = G(E(x, pa), pa*); it has no pixel noise, so its adapter sets ``abduct_pixel_noise=False``).

Everything is deterministic (no sampling), so the method needs no generator; its inputs are checked
by the kind's preamble (:class:`cfcheck.kinds.scm.methods.contract.SCMGenerator`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

import torch
from torch import nn

from cfcheck.kinds.scm.methods.contract import SCMGenerator

__all__ = ["AttributeMechanisms", "SCMVAE"]


class ImageMechanism(Protocol):
    """What SCMVAE calls on its image mechanism (a conditional VAE, HVAE or GAN)."""

    def parameters(self) -> Iterator[nn.Parameter]: ...

    def counterfactual(
        self,
        x: torch.Tensor,
        condition: torch.Tensor,
        counterfactual_condition: torch.Tensor,
        *,
        abduct_pixel_noise: bool = True,
    ) -> torch.Tensor: ...


class AttributeMechanisms(Protocol):
    """What a domain's learned attribute mechanisms offer the image mechanism."""

    condition_features: int

    def condition(self, parents: dict[str, torch.Tensor]) -> torch.Tensor:
        """The image mechanism's condition vectors (N × condition_features) of these parents."""
        ...

    def propagate(
        self, parents: dict[str, torch.Tensor], intervention: dict[str, torch.Tensor]
    ) -> dict[str, torch.Tensor]:
        """Every parent after the intervention: abduction, action, prediction."""
        ...


def domain_attribute_mechanisms(domain: Any, models: Any, generator: str) -> AttributeMechanisms:
    """The attribute mechanisms a bundled image mechanism was trained with: the domain's
    ``attribute_mechanisms(models)`` hook (the bundled domain builds them from its flows).

    Args:
        domain: the domain under test.
        models: the model store a method may load from.
        generator: the adapter's name, for the message.

    Raises:
        TypeError: where the domain has no such hook (a user's attribute domain): the bundled SCM
            generators condition on the parents of the domain they were trained on, so they do not
            transfer; the message says what to write instead.
    """
    hook = getattr(domain, "attribute_mechanisms", None)
    if not callable(hook):
        raise TypeError(
            f"the bundled SCM generator {generator!r} runs on a domain with an attribute_mechanisms(models) "
            f"hook (its image mechanism was trained on that domain's parents); domain "
            f"{getattr(domain, 'name', domain)!r} has none. On your own attribute domain, evaluate your own "
            "generator: an adapter returning counterfactual(x, parents, intervention) (docs/own-domain.md, "
            "'SCM generators on your own data')"
        )
    return hook(models)


@dataclass(frozen=True)
class SCMVAE(SCMGenerator):
    """``counterfactual(x, parents, intervention) -> x_cf`` with a conditional VAE.

    Args:
        vae: the image mechanism: a :class:`cfcheck.models.generative.vae.ConditionalVAE`,
            :class:`~cfcheck.models.generative.vae.ConditionalHVAE` or
            :class:`~cfcheck.models.generative.gan.ConditionalGAN`.
        mechanisms: the domain's attribute mechanisms (:class:`AttributeMechanisms`).
        abduct_pixel_noise: carry the abducted pixel noise into the counterfactual (Melistas
            et al.'s formula; default); ``False`` decodes the mean μ(z, pa*) only.
        batch_size: images per forward pass.
    """

    vae: ImageMechanism
    mechanisms: Any
    abduct_pixel_noise: bool = True
    batch_size: int = 256
    cfcheck_batch_size: ClassVar[int] = 256

    def __post_init__(self) -> None:
        for name in ("encode", "decode", "counterfactual"):
            if not callable(getattr(self.vae, name, None)):
                raise TypeError(
                    f"vae must be a ConditionalVAE, ConditionalHVAE or ConditionalGAN (with encode, "
                    f"decode, counterfactual); {type(self.vae).__name__} has no {name}()"
                )
        for name in ("condition", "propagate"):
            if not callable(getattr(self.mechanisms, name, None)):
                raise TypeError(
                    f"mechanisms must offer condition() and propagate(); "
                    f"{type(self.mechanisms).__name__} has no {name}()"
                )
        if isinstance(self.batch_size, bool) or not isinstance(self.batch_size, int) or self.batch_size < 1:
            raise ValueError(f"batch_size must be a positive int, got {self.batch_size!r}")

    @torch.no_grad()
    def counterfactuals(
        self, x: torch.Tensor, parents: dict, intervention: dict, generator: torch.Generator
    ) -> torch.Tensor:
        """The counterfactual of each image of ``x`` (checked, non-empty) under ``intervention``:
        N×C×H×W images in [0, 1], on ``x``'s device and dtype (``generator`` is not used)."""
        n = x.shape[0]
        new_parents = self.mechanisms.propagate(parents, intervention)
        condition = self.mechanisms.condition({k: v.cpu() for k, v in parents.items()})
        condition_cf = self.mechanisms.condition(new_parents)
        device = next(self.vae.parameters()).device
        out = []
        for start in range(0, n, self.batch_size):
            rows = slice(start, start + self.batch_size)
            out.append(
                self.vae.counterfactual(
                    x[rows].to(device=device, dtype=torch.float32),
                    condition[rows].to(device),
                    condition_cf[rows].to(device),
                    abduct_pixel_noise=self.abduct_pixel_noise,
                )
            )
        return torch.cat(out).to(device=x.device, dtype=x.dtype)
