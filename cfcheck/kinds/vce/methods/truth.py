"""Positive controls built on the domain's true counterfactual, and a random real target image.

The true counterfactual keeps everything about an input except its class: the same style and
exogenous factors, re-rendered after do(class = target). It is the answer an
ideal explainer would give, and only a domain with a known generative process can compute it.
cfcheck's suites must pass it on validity, closeness and realism; because it ignores the
classifier, the random-classifier suite must fail it. :class:`TrueCounterfactual` with
``reject=True`` adds Väth et al.'s rejection step (abstain where the explained classifier
does not predict the target on the counterfactual), which makes it depend on the classifier
and pass the random-classifier suite too.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any, cast

import torch
from torch import nn

from cfcheck.kinds.method_helpers import SplitLookup, image_key
from cfcheck.kinds.vce.capabilities import ClassCounterfactual
from cfcheck.kinds.vce.methods.contract import VisualExplainer, validate_explain_inputs

if TYPE_CHECKING:
    from cfcheck.domains.base import Domain


class TrueCounterfactual(VisualExplainer):
    """The domain's true counterfactual of every input, found by matching inputs to a split.

    Args:
        domain: a domain with the true-counterfactual capability (``split(name)`` returning
            images with their ``factors``, and ``class_counterfactual(factors, target)``).
        split: the split the inputs come from; each input must equal one of its images
            exactly (cfcheck's inputs are test-split images).
        reject: abstain where the explained classifier does not assign the target class to the
            true counterfactual (then ``explain`` returns ``(x_cf, valid)``).

    Example:
        >>> truth = TrueCounterfactual(get_domain(name), reject=True)           # doctest: +SKIP
        >>> x_cf, valid = truth.explain(x, target, classifier)                   # doctest: +SKIP
    """

    def __init__(self, domain: Domain, *, split: str | None = None, reject: bool = False) -> None:
        if not isinstance(domain, ClassCounterfactual):
            raise TypeError(f"{domain!r} cannot compute true counterfactuals (it has no class_counterfactual)")
        split = split if split is not None else domain.split_roles["scored"]
        self._domain = domain
        self._lookup = SplitLookup(domain, split)
        self._data = self._lookup.data
        self.split = split
        self.reject = reject

    @property
    def returns_valid(self) -> bool:  # type: ignore[override]
        return self.reject

    def counterfactuals(
        self, x: torch.Tensor, target: torch.Tensor, classifier: nn.Module, generator: torch.Generator
    ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        """True counterfactuals of ``x`` towards ``target`` (and the rejection mask if asked)."""
        factors = self._data.factors[self._lookup.indices(x)]
        x_cf = self._domain.class_counterfactual(factors, target.cpu()).to(device=x.device, dtype=x.dtype)
        if not self.reject:
            return x_cf
        with torch.no_grad():
            valid = classifier(x_cf).argmax(dim=1) == target
        return x_cf, valid


def input_share(x: torch.Tensor, share: float, salt: bytes = b"cfcheck-mixture") -> torch.Tensor:
    """Bool N: a fixed pseudo-random ``share`` of the inputs, chosen by each image's pixels (a
    keyed hash mapped to [0, 1)), so the choice does not depend on batching or input order.

    Example:
        >>> x = torch.rand(2000, 1, 4, 4, generator=torch.Generator().manual_seed(0))
        >>> abs(float(input_share(x, 0.8).float().mean()) - 0.8) < 0.03
        True
    """
    if not 0.0 <= share <= 1.0:
        raise ValueError(f"`share` must be in [0, 1], got {share!r}")
    draws = [
        int.from_bytes(hashlib.blake2b(image_key(image), key=salt, digest_size=8).digest(), "big") / 2.0**64
        for image in x
    ]
    return torch.tensor(draws, dtype=torch.float64) < share


class TruthMixture(VisualExplainer):
    """The true counterfactual for a fixed ``share`` of the inputs and the unchanged input for the
    rest: a method that is right ``share`` of the time. Calibration control for the share of right
    counterfactuals a validity bar requires (TA's bar asks for 80 %).

    Args:
        domain: a domain with the true-counterfactual capability.
        share: the fraction of inputs (chosen by :func:`input_share`) that get the truth.
    """

    def __init__(self, domain: Any, share: float) -> None:
        if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0.0 <= share <= 1.0:
            raise ValueError(f"`share` must be a number in [0, 1], got {share!r}")
        self.share = float(share)
        self._truth = TrueCounterfactual(domain)

    def counterfactuals(
        self, x: torch.Tensor, target: torch.Tensor, classifier: nn.Module, generator: torch.Generator
    ) -> torch.Tensor:
        """The truth where :func:`input_share` picks the input, else the input itself."""
        x_cf = cast(
            torch.Tensor, self._truth.counterfactuals(x, target, classifier, generator)
        )  # reject=False: a tensor
        chosen = input_share(x, self.share).to(x.device)
        return torch.where(chosen[:, None, None, None], x_cf, x)


class RandomTargetImage(VisualExplainer):
    """A seeded random real image of the target class: valid and realistic, not minimal.

    Args:
        images: a bank of real images (N×C×H×W in [0, 1]).
        labels: their classes (int64 N).
    """

    def __init__(self, images: torch.Tensor, labels: torch.Tensor) -> None:
        validate_explain_inputs(images, labels, x_name="bank_images", target_name="bank_labels")
        self._images = images
        self._by_class = {int(c): torch.nonzero(labels == c).flatten() for c in labels.unique()}

    def counterfactuals(
        self, x: torch.Tensor, target: torch.Tensor, classifier: nn.Module, generator: torch.Generator
    ) -> torch.Tensor:
        """One bank image of each input's target class, drawn from ``generator``."""
        picks = []
        for t in target.tolist():
            pool = self._by_class.get(int(t))
            if pool is None:
                raise ValueError(f"the image bank has no image of target class {t}")
            draw = torch.randint(len(pool), (1,), generator=generator, device=generator.device).cpu()
            picks.append(pool[draw])
        return self._images[torch.cat(picks)].to(device=x.device, dtype=x.dtype).clone()
