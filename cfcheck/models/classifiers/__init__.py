"""Classifiers of 32×32 grey images (and of vectors, :mod:`.vector`): explained classifiers, oracles, attribute oracles, the
domain embedding network; their architectures, deterministic recipes, training, evaluation,
adversarial training and transfer, and the cascading model-parameter randomisation.

Importing this package registers its architectures with :mod:`cfcheck.models.builders`
(family ``"classifier"``), which is how the registry builds them. Import the submodules
directly (``cfcheck.models.classifiers.training``, ``...recipes``, ...).
"""

from __future__ import annotations

from . import vector  # noqa: F401  (registers vector_mlp)
from .architectures import ARCHITECTURES, IMAGE_SHAPE, build_model, count_parameters

__all__ = ["ARCHITECTURES", "IMAGE_SHAPE", "build_model", "count_parameters"]
