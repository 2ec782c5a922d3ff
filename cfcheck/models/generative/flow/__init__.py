"""Normalizing flows (``normflows``): scalar attribute mechanisms of an SCM.

Importing this package registers the ``"scalar_spline_flow"`` architecture (family ``"flow"``).
"""

from __future__ import annotations

from ..base import register_generative_architecture
from .network import ScalarSplineFlow
from .recipe import FlowRecipe, train_flow

__all__ = ["FlowRecipe", "ScalarSplineFlow", "train_flow"]

register_generative_architecture("scalar_spline_flow", ScalarSplineFlow, family="flow", input_shape=(1,), replace=True)
