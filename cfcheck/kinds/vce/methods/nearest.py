"""Nearest real neighbour of the target class: valid and realistic, but not minimal.

For each input it returns the closest (L2) real image whose true label is the target and
which the classifier also assigns to the target. The output is a genuine data point, so
validity and realism are as good as the data; but it is a *different* image, so closeness
(and any minimality criterion) is poor. It is the "upper bound on realism" reference point
for the scorecards and the control that shows closeness metrics are not fooled by realism.

Each output is real, but the *set* of outputs is not a fair sample of the target class:
L2-nearest selection prefers faint, thin shapes (a small norm keeps them close to any
input), so distribution-level realism (FID) sees the shift while per-image realism does not.
"""

from __future__ import annotations

import weakref
from typing import ClassVar

import torch
from torch import nn

from cfcheck.kinds.method_helpers import check_positive, predict_logits, validate_classifier
from cfcheck.kinds.vce.methods.contract import VisualExplainer, validate_explain_inputs, validate_target_range


def _parameter_versions(module: nn.Module) -> tuple[int, ...]:
    """In-place update counters of every parameter and buffer: a cheap fingerprint that
    changes when the weights are modified in place (e.g. re-randomised for a sanity check)."""
    return tuple(t._version for t in (*module.parameters(), *module.buffers()))


class NearestTargetNeighbour(VisualExplainer):
    """Per input, the L2-nearest bank image with true label == target and f(image) == target.

    Args:
        bank_images: N_bank×C×H×W float tensor in [0, 1] of real images (e.g. the train split).
        bank_labels: N_bank int64 true labels of the bank images.
        batch_size: chunk size for classifying the bank and for distance computation; bounds
            peak memory at about ``batch_size × N_bank`` floats.

    ``explain`` returns ``(x_cf, valid)``. It abstains (``valid=False``, ``x_cf = x``) on an
    input when the bank holds no image of its target class that the classifier also
    predicts as the target. The bank's predictions are cached per classifier object (and
    recomputed if its weights were modified in place), since the suites call the same
    method with the same classifier many times.
    """

    returns_valid: ClassVar[bool] = True

    def __init__(self, bank_images: torch.Tensor, bank_labels: torch.Tensor, batch_size: int = 1024) -> None:
        validate_explain_inputs(bank_images, bank_labels, x_name="bank_images", target_name="bank_labels")
        if bank_images.shape[0] == 0:
            raise ValueError("Expected a non-empty bank of images, but got 0 images.")
        check_positive("batch_size", batch_size, integer=True)
        self.bank_images = bank_images.detach().to(torch.float32).contiguous()
        self.bank_labels = bank_labels.detach().clone()
        self.batch_size = batch_size
        self._bank_on_device: dict[torch.device, tuple[torch.Tensor, torch.Tensor]] = {}
        self._prediction_cache: weakref.WeakKeyDictionary[nn.Module, tuple[tuple[int, ...], torch.Tensor, int]] = (
            weakref.WeakKeyDictionary()
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}(bank_size={self.bank_images.shape[0]}, batch_size={self.batch_size})"

    def _bank(self, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
        """Flattened bank images and labels on ``device`` (moved once per device)."""
        if device not in self._bank_on_device:
            flat = self.bank_images.flatten(1).to(device)
            self._bank_on_device[device] = (flat, self.bank_labels.to(device))
        return self._bank_on_device[device]

    def bank_predictions(self, classifier: nn.Module, device: torch.device) -> tuple[torch.Tensor, int]:
        """``(predicted labels of the bank, number of logits)``, once per classifier object."""
        validate_classifier(classifier)
        versions = _parameter_versions(classifier)
        cached = self._prediction_cache.get(classifier)
        if cached is not None and cached[0] == versions:
            return cached[1].to(device), cached[2]
        images = self.bank_images.to(device)
        logits = predict_logits(classifier, images, self.batch_size)
        predictions = logits.argmax(dim=1)
        self._prediction_cache[classifier] = (versions, predictions, logits.shape[1])
        return predictions, logits.shape[1]

    def counterfactuals(
        self, x: torch.Tensor, target: torch.Tensor, classifier: nn.Module, generator: torch.Generator
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Return ``(x_cf, valid)``; deterministic, so ``generator`` is accepted and unused."""
        if x.shape[1:] != self.bank_images.shape[1:]:
            raise ValueError(
                f"Expected `x` images of shape {tuple(self.bank_images.shape[1:])} like the bank, "
                f"but got {tuple(x.shape[1:])}."
            )
        device = x.device
        bank_flat, bank_labels = self._bank(device)
        predictions, num_classes = self.bank_predictions(classifier, device)
        x_cf = x.clone()
        valid = torch.zeros(x.shape[0], dtype=torch.bool, device=device)
        validate_target_range(target, num_classes)
        eligible = bank_labels == predictions
        queries = x.flatten(1).to(torch.float32)
        # One group per target class: each group searches only its class's eligible images.
        for cls in torch.unique(target).tolist():
            rows = (target == cls).nonzero(as_tuple=True)[0]
            candidates = (eligible & (bank_labels == cls)).nonzero(as_tuple=True)[0]
            if candidates.numel() == 0:
                continue  # abstain: rows keep x and valid=False
            candidate_images = bank_flat[candidates]
            for start in range(0, rows.numel(), self.batch_size):
                chunk = rows[start : start + self.batch_size]
                distances = torch.cdist(queries[chunk], candidate_images)
                nearest = candidates[distances.argmin(dim=1)]
                x_cf[chunk] = bank_flat[nearest].view(-1, *x.shape[1:]).to(x.dtype)
                valid[chunk] = True
        return x_cf, valid


#: real images the real-image controls draw from (the domain's train split, at most this many)
BANK_SIZE = 10_000


def training_bank(domain: object, size: int = BANK_SIZE) -> object:
    """The first ``size`` images of ``domain``'s train split (all of it when it is smaller): the
    real images the nearest-neighbour and random-target controls return."""
    role = domain.split_roles["train"]  # type: ignore[attr-defined]
    try:
        return domain.split(role, n=size)  # type: ignore[attr-defined]
    except ValueError:  # a split smaller than the bank
        return domain.split(role)  # type: ignore[attr-defined]
