"""The reference models of a domain, loaded lazily, once per session, on the session's device."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import cached_property
from typing import Protocol, cast, runtime_checkable

import torch

from cfcheck.models.capabilities import ModelDomain, require_domain_object
from cfcheck.models.inference import CPU_BATCH_SIZE
from cfcheck.models.randomised_copies import (  # noqa: F401  (the names re-exported)
    CASCADE_CALIBRATION_IMAGES,
    CASCADE_SEED,
    REINITIALISED,
    STAGE_SEPARATOR,
    cascade_stages,
    reinitialisation_name,
    reinitialisation_seed,
    reinitialised_copy,
)
from cfcheck.models.roles import EVALUATION_ROLES, METHOD_ROLES
from cfcheck.models.store import Store


class MethodModels:
    """What a method under test may load: the domain's explained classifiers and generative
    priors, not the models that score it (oracles, attribute oracles, the embedding network). A
    method guided by an evaluation model would be graded by its own guide; the scores would stop
    being independent.
    """

    def __init__(self, zoo: ModelZoo) -> None:
        self._zoo = zoo

    @property
    def device(self) -> torch.device:
        return self._zoo.device

    @property
    def domain(self) -> ModelDomain:
        return self._zoo.domain

    def names(self) -> list[str]:
        allowed = {name for role in METHOD_ROLES for name in self._zoo.domain.model_roles.get(role, ())}
        return [n for n in self._zoo.store.names() if n in allowed]

    def __getitem__(self, name: str) -> torch.nn.Module:
        if name not in self.names():
            roles = [role for role, names in self._zoo.domain.model_roles.items() if name in names]
            what = (
                f"an evaluation model ({', '.join(roles)}) that scores the method"
                if roles
                else "not a model of the domain"
            )
            raise KeyError(f"{name!r} is {what}; methods may load only {', '.join(self.names())}")
        return self._zoo[name]


class MissingRole(KeyError):
    """The domain's role map has no model for a role a suite needs."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class _Features(Protocol):  # an anti-causal predictor's penultimate features
    def features(self, x: torch.Tensor) -> torch.Tensor: ...


class _Encoder(Protocol):  # the minimality VAE's q(z | x): mean and log-variance
    def encode(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]: ...


class _FeatureMaps(Protocol):  # the embedding's activations per block
    def feature_maps(self, x: torch.Tensor) -> list[torch.Tensor]: ...


@runtime_checkable
class BatchedSplit(Protocol):
    """A split that reads its images batch by batch (``digest`` identifies its contents)."""

    digest: str

    def batches(self, size: int) -> Iterator[torch.Tensor]: ...


#: a feature whose spread on real data is below this share of the typical (median) spread is not
#: divided by it: a unit that real images barely move (a dead ReLU on a small selection split)
#: would otherwise turn a counterfactual's activation of it into a value of order 1e8
SPREAD_FLOOR = 1e-3


def standardising_statistics(features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Mean and scale that standardise embedding features of real data (N×D, N ≥ 2): each feature's
    standard deviation, except that a feature spreading less than :data:`SPREAD_FLOOR` × the median
    spread is scaled by the median spread instead (it carries no scale of its own).

    Example:
        >>> x = torch.tensor([[0.0, 1.0, 5.0], [2.0, 3.0, 5.0], [4.0, 5.0, 5.0]])
        >>> standardising_statistics(x)[1].tolist()
        [2.0, 2.0, 2.0]
    """
    if features.ndim != 2 or len(features) < 2:
        raise ValueError(f"`features` must be N×D with N >= 2, got shape {tuple(features.shape)}")
    spread = features.std(0)
    spread = torch.where(spread <= 1e-12 * features.abs().amax(0).clamp_min(1.0), 0.0, spread)  # rounding only
    typical = float(spread.quantile(0.5))  # the median, the middle two averaged (as numpy's)
    if typical <= 0:  # every feature constant: nothing to standardise by
        return features.mean(0), torch.ones_like(spread)
    return features.mean(0), torch.where(spread < SPREAD_FLOOR * typical, torch.full_like(spread, typical), spread)


class ModelZoo:
    """Name → verified, frozen model of one domain (from its store); also the roles suites ask for
    (read off the domain's role map)."""

    def __init__(self, domain: ModelDomain, device: torch.device | str) -> None:
        require_domain_object(domain, "ModelZoo")
        self.domain = domain
        self.store: Store = domain.model_store
        self.device = torch.device(device)
        self._models: dict[str, torch.nn.Module] = {}
        self._stage_names: dict[str, tuple[str, ...]] = {}

    def __getitem__(self, name: str) -> torch.nn.Module:
        """A reference model; ``"<model>~<layer>"``: a stage of the model's cascading
        randomisation (its layers from the output down to ``<layer>`` re-initialised); or
        ``"<model>~reinit<seed>"`` (:func:`reinitialisation_name`): the model with every layer
        re-initialised under ``seed``."""
        if name not in self._models:
            if STAGE_SEPARATOR in name:
                base, stage = name.split(STAGE_SEPARATOR, 1)
                seed = reinitialisation_seed(stage)
                if seed is not None:
                    self._models[name] = reinitialised_copy(self, base, seed)
                elif name not in self.randomisation_stages(base):
                    raise KeyError(
                        f"{base} has no randomisation stage {name!r}; stages: {self.randomisation_stages(base)}"
                    )
            else:
                self._models[name] = self.store.load(name, device=self.device)
        return self._models[name]

    def randomisation_stages(self, name: str) -> tuple[str, ...]:
        """Names of the cascading-randomisation stages of ``name``, top layer first."""
        if name not in self._stage_names:
            stages = cascade_stages(self, name)
            self._models.update(stages)
            self._stage_names[name] = tuple(stages)
        return self._stage_names[name]

    def role(self, role: str) -> tuple[str, ...]:
        """The domain's models of ``role`` (its role map; empty where it declares none)."""
        return tuple(self.domain.model_roles.get(role, ()))

    def require(self, role: str, needed_by: str) -> str:
        """The domain's (first) model of ``role``; :class:`MissingRole` naming the role and what
        needs it when the domain declares none."""
        names = self.role(role)
        if not names:
            raise MissingRole(
                f"domain {self.domain.name!r} declares no {role!r} model "
                f"({EVALUATION_ROLES.get(role, role)}), which {needed_by} needs"
            )
        return names[0]

    @cached_property
    def oracles(self) -> tuple[str, ...]:
        """The oracle committee (never an explained classifier)."""
        return self.role("oracles")

    def _by_metadata(self, role: str, field: str) -> dict:
        return {self.store.entry(n).get(field): n for n in self.role(role)}

    @cached_property
    def attribute_oracles(self) -> dict[str, str]:
        """Attribute name → model name, for the Label Variation Score (each model's store entry
        names the attribute it reads)."""
        return self._by_metadata("attribute_oracles", "attribute")

    @cached_property
    def class_attribute(self) -> str | None:
        """The attribute whose oracle reads the class itself (the LVS of the target), or None."""
        names = self.role("class_attribute_oracle")
        return self.store.entry(names[0]).get("attribute") if names else None

    @cached_property
    def anticausal_predictors(self) -> dict[str, str]:
        """SCM parent → name of the anti-causal predictor that reads it off an image."""
        return self._by_metadata("anticausal_predictors", "attribute")

    @torch.no_grad()
    def predictor_embedding(self, images: torch.Tensor, batch_size: int = CPU_BATCH_SIZE) -> torch.Tensor:
        """The anti-causal predictors' last hidden layers, concatenated in parent order (N×ΣD, float64):
        Melistas et al.'s composition embedding. Raises KeyError when the domain bundles none."""
        if not self.anticausal_predictors:
            raise KeyError(f"{self.domain.name} declares no anti-causal predictors")
        parts = []
        for parent in sorted(self.anticausal_predictors):
            model = cast(_Features, self[self.anticausal_predictors[parent]])  # the role's models have features()
            parts.append(
                torch.cat(
                    [
                        model.features(images[i : i + batch_size].to(self.device)).double().cpu()
                        for i in range(0, len(images), batch_size)
                    ]
                )
                if len(images)
                else torch.empty(0, 0, dtype=torch.float64)
            )
        return torch.cat(parts, 1)

    @cached_property
    def minimality_vae(self) -> str:
        """Name of the unconditional VAE whose posteriors give CLD's distance (KeyError without one)."""
        names = self.role("minimality_vae")
        if not names:
            raise KeyError(f"{self.domain.name} declares no minimality VAE (role 'minimality_vae')")
        return names[0]

    @torch.no_grad()
    def posterior(self, images: torch.Tensor, batch_size: int = CPU_BATCH_SIZE) -> tuple[torch.Tensor, torch.Tensor]:
        """Mean and log-variance of the minimality VAE's q(z | x), each N×latent (float64, on the CPU)."""
        vae = cast(_Encoder, self[self.minimality_vae])  # the role's VAE has encode()
        means, log_vars = [], []
        for start in range(0, len(images), batch_size):
            mean, log_var = vae.encode(images[start : start + batch_size].to(self.device))
            means.append(mean.double().cpu())
            log_vars.append(log_var.double().cpu())
        return torch.cat(means), torch.cat(log_vars)

    @cached_property
    def autoencoders(self) -> dict[int | None, str]:
        """Class → name of the IM1/IM2 autoencoder of that class (``None``: the all-class one)."""
        return self._by_metadata("autoencoders", "label")

    def reconstruct(self, images: torch.Tensor, labels: torch.Tensor | None = None) -> torch.Tensor:
        """Each image reconstructed by the autoencoder of its class in ``labels`` (``None``: by the
        all-class autoencoder). Raises KeyError naming a class without an autoencoder."""
        if labels is None:
            return self.logits(self.autoencoders[None], images).to(images)
        out = torch.empty_like(images)
        for label in labels.unique().tolist():
            if label not in self.autoencoders:
                raise KeyError(f"{self.domain.name} declares no autoencoder of class {label}")
            rows = labels == label
            out[rows] = self.logits(self.autoencoders[label], images[rows]).to(images)
        return out

    @property
    def embedding(self) -> torch.nn.Module:
        return self[self.embedding_name]

    @cached_property
    def embedding_name(self) -> str:
        """The domain's embedding network (realism and perceptual distance)."""
        return self.require("embedding", "realism and the perceptual distance")

    @cached_property
    def _feature_statistics(self) -> tuple[torch.Tensor, torch.Tensor]:
        features = self.split_logits(self.embedding_name, self.domain.split_roles["selection"]).double()
        return standardising_statistics(features)

    def embed(self, images: torch.Tensor) -> torch.Tensor:
        """Domain-embedding features standardised with fixed statistics of real data (the
        domain's never-scored selection split).

        One fixed normalisation (Hvilshøj et al.) keeps FID/KID comparable across runs and
        puts every dimension on the same scale, which KID's polynomial kernel needs.
        """
        mean, std = self._feature_statistics
        return (self.features(images) - mean) / std

    @cached_property
    def realism_pool(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Standardised embedding features and classes of the domain's reference split (real
        images that are never trained on and never scored)."""
        return self._standardised_split_features(self.domain.split_roles["reference"])

    def realism_pool_for(self, classes: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The realism pool for counterfactuals of target ``classes``: :attr:`realism_pool`, or,
        when it holds too few real images of one of those classes for a reference and floors
        (:func:`cfcheck.metrics.reference_sets.pool_suffices`), that pool followed by the domain's
        ``reference_extra`` split where it has one (a domain without it keeps the reference
        split, and the realism scores say which class is short)."""
        from cfcheck.metrics.reference_sets import pool_suffices

        pool = self.realism_pool
        extra = self.domain.split_roles.get("reference_extra")
        if extra is None or pool_suffices(pool[1], classes):
            return pool
        return self._extended_realism_pool

    @cached_property
    def _extended_realism_pool(self) -> tuple[torch.Tensor, torch.Tensor]:
        more = self._standardised_split_features(self.domain.split_roles["reference_extra"])
        return torch.cat([self.realism_pool[0], more[0]]), torch.cat([self.realism_pool[1], more[1]])

    def _standardised_split_features(self, split: str) -> tuple[torch.Tensor, torch.Tensor]:
        raw = self.split_logits(self.embedding_name, split).double()
        mean, std = self._feature_statistics
        return (raw - mean) / std, self.domain.split(split).labels

    def split_logits(self, name: str, split: str) -> torch.Tensor:
        """Outputs of model ``name`` on a whole split of the domain (:meth:`stored_logits`); a split
        that reads its images in batches (``batches(size)`` and ``digest``, as
        :class:`cfcheck.domains.data.ImageSplit`) is never held in memory whole."""
        data = self.domain.split(split)
        if isinstance(data, BatchedSplit):
            return self._stored_digest(
                "zoo.split_logits", name, data.digest, lambda: {"logits": self._batched_logits(name, data)}
            )["logits"]
        return self.stored_logits(name, data.images)

    @torch.no_grad()
    def _batched_logits(self, name: str, data: BatchedSplit) -> torch.Tensor:
        from cfcheck.models.inference import batched_logits

        model = self[name]
        parts = [
            batched_logits(model, images, batch_size=CPU_BATCH_SIZE, device=self.device)
            for images in data.batches(CPU_BATCH_SIZE * 4)
        ]
        return torch.cat(parts) if parts else torch.empty(0)

    def stored_logits(self, name: str, images: torch.Tensor) -> torch.Tensor:
        """Outputs of bundled model ``name`` on fixed images (a split, a task's originals): the same
        in every session with these images, weights and device, so kept on disk once computed
        (:meth:`_stored`)."""
        if STAGE_SEPARATOR in name:  # a randomisation stage has no weights file of its own to key on
            return self.logits(name, images)
        return self._stored("zoo.split_logits", name, images, lambda: {"logits": self.logits(name, images)})["logits"]

    def stored_posterior(self, images: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """:meth:`posterior` of fixed images (CLD's pool of real images), kept on disk once computed."""
        found = self._stored(
            "zoo.posterior", self.minimality_vae, images, lambda: dict(zip(("mean", "log_var"), self.posterior(images)))
        )
        return found["mean"], found["log_var"]

    def _stored(
        self, what: str, name: str, images: torch.Tensor, compute: Callable[[], dict[str, torch.Tensor]]
    ) -> dict[str, torch.Tensor]:
        """``compute()`` of bundled model ``name`` on fixed images, memoised on disk
        (:func:`cfcheck.core.cache.memoise_on_disk`, keyed by the images' digest and the weights' sha256)."""
        from cfcheck.core.cache import tensor_digest

        return self._stored_digest(what, name, tensor_digest(images), compute)

    def _stored_digest(
        self, what: str, name: str, images: str, compute: Callable[[], dict[str, torch.Tensor]]
    ) -> dict[str, torch.Tensor]:
        from cfcheck.core.cache import memoise_on_disk

        return memoise_on_disk(what, compute, images=images, model=self.store.digest(name), device=self.device.type)

    def hashes(self) -> dict[str, str]:
        """sha256 of every model of the domain's store (for the scorecard's provenance)."""
        return {f"{self.domain.name}/{name}": self.store.digest(name) for name in self.store.names()}

    @torch.no_grad()
    def feature_maps(self, images: torch.Tensor) -> list[torch.Tensor]:
        """The domain embedding's feature maps (the perceptual distance's layers), without autograd."""
        from cfcheck.models.inference import inference_copy

        embedding = cast(_FeatureMaps, inference_copy(self.embedding))  # an embedding has feature_maps()
        return embedding.feature_maps(images.to(self.device))

    def features(self, images: torch.Tensor, batch_size: int = CPU_BATCH_SIZE) -> torch.Tensor:
        """Raw domain-embedding features (float64), the input of FID and KID."""
        return self.logits(self.embedding_name, images, batch_size).double()

    @torch.no_grad()
    def logits(self, name: str, images: torch.Tensor, batch_size: int = CPU_BATCH_SIZE) -> torch.Tensor:
        from cfcheck.models.inference import batched_logits

        if len(images) == 0:
            return torch.empty(0)  # no inputs (e.g. every one abstained): no outputs
        return batched_logits(self[name], images, batch_size=batch_size, device=self.device)
