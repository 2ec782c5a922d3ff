"""The latent kind's call contract: ``explain(z, latent_classifier, generator, *, rng=None)``."""

from __future__ import annotations

import torch


def validate_latent_inputs(z: object, latent_classifier: object) -> None:
    """TypeError unless ``z`` is a float N×D tensor and ``latent_classifier`` is callable (the
    latent kind's ``explain`` arguments)."""
    if not isinstance(z, torch.Tensor) or not z.is_floating_point() or z.ndim != 2:
        raise TypeError(
            f"z must be a float N×D tensor, got {type(z).__name__} "
            f"{tuple(z.shape) if isinstance(z, torch.Tensor) else ''}"
        )
    if not callable(latent_classifier):
        raise TypeError(f"latent_classifier must be callable, got {type(latent_classifier).__name__}")
