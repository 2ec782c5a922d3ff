"""How far targeted adversarial examples on an explained classifier transfer to the oracles.

Oracle-based validity (OS, OTA, LVS) is only meaningful if an oracle is *not* fooled by what
fools the explained classifier: a targeted L∞ PGD example on ``cnn`` changes no digit a human
sees, so an oracle that predicts the adversarial target shares the classifier's non-robust
features (typically because it shares its architecture) and would certify adversarial
examples as valid counterfactuals. This module measures that rate.

Run ``cfcheck transfer --domain DOMAIN [--n 300] [--seed 0]`` to print the figures quoted in the
model cards (one thread, deterministic for a seed).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import torch
from torch import nn

from ..capabilities import require_domain_object
from ..inference import batched_logits

if TYPE_CHECKING:
    from ..capabilities import ModelDomain

__all__ = ["adversarial_transfer"]


def adversarial_transfer(
    n: int = 300,
    *,
    domain: ModelDomain,
    eps: float = 0.15,
    steps: int = 40,
    seed: int = 0,
    source: str | None = None,
    evaluated: Sequence[str] | None = None,
    committee: Sequence[str] | None = None,
    models: Mapping[str, nn.Module] | None = None,
    split: str | None = None,
) -> dict[str, float]:
    """Rate at which each model predicts the target of targeted L∞ PGD examples on ``source``.

    ``n`` images are drawn from ``split`` without replacement and each is sent to a uniformly
    random other class (both seeded by ``seed``); :class:`cfcheck.kinds.vce.methods.adversarial.TargetedPGD`
    (``eps``, ``steps``, random start from a generator seeded by ``seed``) attacks ``source``.

    Args:
        n: number of images (at most the split's size).
        domain: the domain object whose split, role map and model store are used.
        eps: L∞ radius of the attack, in [0, 1] pixel units.
        steps: PGD steps.
        seed: seeds the image subset, the targets and the PGD random start.
        source: the explained classifier that is attacked (default: the domain's first ``explained``).
        evaluated: further models whose target rate is reported (default: its ``class_attribute_oracle``).
        committee: oracle names (default: its ``oracles``); each is reported and so is their majority
            vote (``committee_majority``: more than half of the members predict the target).
        models: name -> module overriding the domain's store (e.g. a candidate not yet shipped);
            names not in it are loaded from ``domain.model_store``.
        split: domain split the images come from (default: the ``scored`` role's).

    Returns:
        ``{name: rate}`` for ``source``, every ``evaluated`` and ``committee`` model, and
        ``committee_majority`` (omitted when ``committee`` is empty); each rate is the
        fraction of the ``n`` adversarial images classified as their target.

    Example:
        >>> rates = adversarial_transfer(n=300, domain=get_domain(name))  # doctest: +SKIP
        >>> rates["cnn"], rates["attr_digit"], rates["committee_majority"]  # doctest: +SKIP
    """
    from cfcheck.models.classifiers.adversarial import pgd_attack

    require_domain_object(domain, "adversarial_transfer")
    found = domain
    roles = found.model_roles
    source = source if source is not None else roles["explained"][0]
    evaluated = evaluated if evaluated is not None else roles.get("class_attribute_oracle", ())
    committee = committee if committee is not None else roles.get("oracles", ())
    split = split if split is not None else found.split_roles["scored"]
    if n < 1:
        raise ValueError(f"n must be positive, got {n}")
    data = found.split(split)
    if n > data.images.shape[0]:
        raise ValueError(f"n={n} exceeds the {data.images.shape[0]} images of split {split!r}")
    rng = torch.Generator().manual_seed(seed)
    index = torch.randperm(data.images.shape[0], generator=rng)[:n]
    x, y = data.images[index], data.labels[index].long()
    k = found.num_classes
    target = (y + torch.randint(1, k, (n,), generator=rng)) % k

    supplied = dict(models or {})
    names = list(dict.fromkeys([source, *evaluated, *committee]))
    loaded = {name: supplied[name] if name in supplied else found.model_store.load(name) for name in names}
    # the bundled pgd control's attack (targeted L∞, random start, step 2.5·eps/steps), called directly:
    # models sit below methods
    x_adv = pgd_attack(
        loaded[source],
        x,
        target,
        eps=eps,
        steps=steps,
        norm="linf",
        random_start=True,
        generator=torch.Generator().manual_seed(seed),
        targeted=True,
    )
    hits = {name: batched_logits(model, x_adv, batch_size=500).argmax(1) == target for name, model in loaded.items()}
    # exact count / n: the manifest holds the decimal a reader recomputes
    rates = {name: int(hit.sum()) / n for name, hit in hits.items()}
    if committee:
        votes = torch.stack([hits[name] for name in committee]).sum(0)
        rates["committee_majority"] = int((2 * votes > len(committee)).sum()) / n
    return rates
