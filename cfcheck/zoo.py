"""The reference models of a domain, loaded lazily, once per session, on the session's device."""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property

import torch

from cfcheck.models import registry
from cfcheck.models.inference import CPU_BATCH_SIZE


#: "cnn~features.6": the cnn with its layers from the output down to features.6 randomised.
STAGE_SEPARATOR = "~"
CASCADE_SEED = 0
#: Unlabelled images (of the domain's train split) for the stages' label-free logit standardisation.
CASCADE_CALIBRATION_IMAGES = 2000


class MethodModels:
    """What a method under test may load: the domain's explained classifiers, not the models
    that score it (oracles, attribute oracles, the embedding network). A method guided by an
    evaluation model would be graded by its own guide; the scores would stop being independent.
    """

    #: registry roles a method may use: the explained classifiers and the generative priors a
    #: method may build on (a diffusion model, an SCM generator's attribute and image mechanisms:
    #: tools of the method, not judges of it)
    ALLOWED_ROLES = ("classifier", "diffusion", "attribute_mechanism", "image_mechanism")

    def __init__(self, zoo: ModelZoo) -> None:
        self._zoo = zoo

    @property
    def device(self) -> torch.device:
        return self._zoo.device

    def names(self) -> list[str]:
        return [n for n in registry.available_models(self._zoo.domain) if self._role(n) in self.ALLOWED_ROLES]

    def __getitem__(self, name: str) -> torch.nn.Module:
        role = self._role(name)
        if role not in self.ALLOWED_ROLES:
            raise KeyError(
                f"{name!r} is an evaluation model ({role}) that scores the method; methods may load only "
                f"{', '.join(self.names())}"
            )
        return self._zoo[name]

    def _role(self, name: str) -> str:
        return registry.model_entry(name, domain=self._zoo.domain)["role"]


class ModelZoo:
    """Name → verified, frozen reference model; also the roles suites ask for."""

    def __init__(self, domain: str, device: torch.device) -> None:
        self.domain = domain
        self.device = device
        self._models: dict[str, torch.nn.Module] = {}
        self._stage_names: dict[str, tuple[str, ...]] = {}

    def __getitem__(self, name: str) -> torch.nn.Module:
        """A reference model, or ``"<model>~<layer>"``: a stage of the model's cascading
        randomisation (its layers from the output down to ``<layer>`` re-initialised)."""
        if name not in self._models:
            if STAGE_SEPARATOR in name:
                base, _ = name.split(STAGE_SEPARATOR, 1)
                if name not in self.randomisation_stages(base):
                    raise KeyError(f"{base} has no randomisation stage {name!r}; stages: {self.randomisation_stages(base)}")
            else:
                self._models[name] = registry.load_model(name, domain=self.domain, device=self.device)
        return self._models[name]

    def randomisation_stages(self, name: str) -> tuple[str, ...]:
        """Names of the cascading-randomisation stages of ``name``, top layer first."""
        if name not in self._stage_names:
            stages = self._cascade(name)
            self._models.update(stages)
            self._stage_names[name] = tuple(stages)
        return self._stage_names[name]

    def _cascade(self, name: str) -> dict[str, torch.nn.Module]:
        """The stages of ``name``'s cascade. Their weights and fitted logit standardisations are
        the same in every session with these weights, images and code, so they are kept on disk
        (:func:`cfcheck.cache.memoise_on_disk`): fitting them runs every stage on
        :data:`CASCADE_CALIBRATION_IMAGES` images, seconds at each session's start."""
        from cfcheck.cache import file_digest, memoise_on_disk, tensor_digest
        from cfcheck.domains import get_domain
        from cfcheck.models.classifiers import architectures, randomisation

        domain = get_domain(self.domain)
        calibration = domain.split(domain.split_roles["train"], n=CASCADE_CALIBRATION_IMAGES).images.to(self.device)

        def fitted() -> dict[str, torch.Tensor]:
            stages = randomisation.cascading_randomisation(self[name], calibration, seed=CASCADE_SEED)
            return {f"{i}/{key}": value for i, stage in enumerate(stages)
                    for key, value in stage.model.state_dict().items()}

        stored = memoise_on_disk(
            "zoo.cascade", fitted, model=registry.model_entry(name, domain=self.domain)["sha256"],
            images=tensor_digest(calibration), seed=CASCADE_SEED, device=self.device.type,
            code=file_digest(randomisation.__file__, architectures.__file__))
        # the same stages fitted on two images (their structure), then given the stored state
        stages = randomisation.cascading_randomisation(self[name], calibration[:2], seed=CASCADE_SEED)
        for i, stage in enumerate(stages):
            prefix = f"{i}/"
            stage.model.load_state_dict({k[len(prefix):]: v for k, v in stored.items() if k.startswith(prefix)})
        return {f"{name}{STAGE_SEPARATOR}{stage.layer}": stage.model for stage in stages}

    @cached_property
    def oracles(self) -> tuple[str, ...]:
        """The oracle committee (never an explained classifier)."""
        return tuple(registry.available_models(self.domain, role="oracle"))

    @cached_property
    def attribute_oracles(self) -> dict[str, str]:
        """Attribute name → model name, for the Label Variation Score."""
        names = registry.available_models(self.domain, role="attribute_oracle")
        return {registry.model_entry(n, domain=self.domain)["attribute"]: n for n in names}

    @cached_property
    def anticausal_predictors(self) -> dict[str, str]:
        """SCM parent → name of the anti-causal predictor that reads it off an image."""
        names = registry.available_models(self.domain, role="anticausal_predictor")
        return {registry.model_entry(n, domain=self.domain)["attribute"]: n for n in names}

    @torch.no_grad()
    def predictor_embedding(self, images: torch.Tensor, batch_size: int = CPU_BATCH_SIZE) -> torch.Tensor:
        """The anti-causal predictors' last hidden layers, concatenated in parent order (N×ΣD, float64):
        Melistas et al.'s composition embedding. Raises KeyError when the domain bundles none."""
        if not self.anticausal_predictors:
            raise KeyError(f"{self.domain} bundles no anti-causal predictors")
        parts = []
        for parent in sorted(self.anticausal_predictors):
            model = self[self.anticausal_predictors[parent]]
            parts.append(torch.cat([model.features(images[i:i + batch_size].to(self.device)).double().cpu()
                                    for i in range(0, len(images), batch_size)]) if len(images) else
                         torch.empty(0, 0, dtype=torch.float64))
        return torch.cat(parts, 1)

    @cached_property
    def minimality_vae(self) -> str:
        """Name of the unconditional VAE whose posteriors give CLD's distance (KeyError without one)."""
        names = registry.available_models(self.domain, role="minimality_vae")
        if not names:
            raise KeyError(f"{self.domain} bundles no minimality VAE (role 'minimality_vae')")
        return names[0]

    @torch.no_grad()
    def posterior(self, images: torch.Tensor, batch_size: int = CPU_BATCH_SIZE) -> tuple[torch.Tensor, torch.Tensor]:
        """Mean and log-variance of the minimality VAE's q(z | x), each N×latent (float64, on the CPU)."""
        vae = self[self.minimality_vae]
        means, log_vars = [], []
        for start in range(0, len(images), batch_size):
            mean, log_var = vae.encode(images[start:start + batch_size].to(self.device))
            means.append(mean.double().cpu())
            log_vars.append(log_var.double().cpu())
        return torch.cat(means), torch.cat(log_vars)

    @cached_property
    def autoencoders(self) -> dict[int | None, str]:
        """Class → name of the IM1/IM2 autoencoder of that class (``None``: the all-class one)."""
        names = registry.available_models(self.domain, role="autoencoder")
        return {registry.model_entry(n, domain=self.domain).get("label"): n for n in names}

    def reconstruct(self, images: torch.Tensor, labels: torch.Tensor | None = None) -> torch.Tensor:
        """Each image reconstructed by the autoencoder of its class in ``labels`` (``None``: by the
        all-class autoencoder). Raises KeyError naming a class without an autoencoder."""
        if labels is None:
            return self.logits(self.autoencoders[None], images).to(images)
        out = torch.empty_like(images)
        for label in labels.unique().tolist():
            if label not in self.autoencoders:
                raise KeyError(f"{self.domain} bundles no autoencoder of class {label}")
            rows = labels == label
            out[rows] = self.logits(self.autoencoders[label], images[rows]).to(images)
        return out

    @property
    def embedding(self) -> torch.nn.Module:
        return self["embedding"]

    @cached_property
    def _feature_statistics(self) -> tuple[torch.Tensor, torch.Tensor]:
        from cfcheck.domains import get_domain

        domain = get_domain(self.domain)
        features = self.split_logits("embedding", domain.split_roles["selection"]).double()
        return features.mean(0), features.std(0).clamp_min(1e-8)

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
        from cfcheck.domains import get_domain

        return self._standardised_split_features(get_domain(self.domain).split_roles["reference"])

    def realism_pool_for(self, classes: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The realism pool for counterfactuals of target ``classes``: :attr:`realism_pool`, or,
        when it holds too few real images of one of those classes for a reference and floors
        (:func:`cfcheck.reference_sets.pool_suffices`), that pool followed by the domain's
        ``reference_extra`` split where it has one (a domain without it keeps the reference
        split, and the realism scores say which class is short)."""
        from cfcheck.domains import get_domain
        from cfcheck.reference_sets import pool_suffices

        pool = self.realism_pool
        extra = get_domain(self.domain).split_roles.get("reference_extra")
        if extra is None or pool_suffices(pool[1], classes):
            return pool
        return self._extended_realism_pool

    @cached_property
    def _extended_realism_pool(self) -> tuple[torch.Tensor, torch.Tensor]:
        from cfcheck.domains import get_domain

        more = self._standardised_split_features(get_domain(self.domain).split_roles["reference_extra"])
        return torch.cat([self.realism_pool[0], more[0]]), torch.cat([self.realism_pool[1], more[1]])

    def _standardised_split_features(self, split: str) -> tuple[torch.Tensor, torch.Tensor]:
        from cfcheck.domains import get_domain

        raw = self.split_logits("embedding", split).double()
        mean, std = self._feature_statistics
        return (raw - mean) / std, get_domain(self.domain).split(split).labels

    def split_logits(self, name: str, split: str) -> torch.Tensor:
        """Outputs of bundled model ``name`` on a whole split of the domain (:meth:`stored_logits`)."""
        from cfcheck.domains import get_domain

        return self.stored_logits(name, get_domain(self.domain).split(split).images)

    def stored_logits(self, name: str, images: torch.Tensor) -> torch.Tensor:
        """Outputs of bundled model ``name`` on fixed images (a split, a task's originals): the same
        in every session with these images, weights and device, so kept on disk once computed
        (:meth:`_stored`)."""
        if STAGE_SEPARATOR in name:  # a randomisation stage has no weights file of its own to key on
            return self.logits(name, images)
        return self._stored("zoo.split_logits", name, images, lambda: {"logits": self.logits(name, images)})["logits"]

    def stored_posterior(self, images: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """:meth:`posterior` of fixed images (CLD's pool of real images), kept on disk once computed."""
        found = self._stored("zoo.posterior", self.minimality_vae, images,
                             lambda: dict(zip(("mean", "log_var"), self.posterior(images))))
        return found["mean"], found["log_var"]

    def _stored(self, what: str, name: str, images: torch.Tensor,
                compute: Callable[[], dict[str, torch.Tensor]]) -> dict[str, torch.Tensor]:
        """``compute()`` of bundled model ``name`` on fixed images, memoised on disk
        (:func:`cfcheck.cache.memoise_on_disk`, keyed by the images' digest and the weights' sha256)."""
        from cfcheck.cache import memoise_on_disk, tensor_digest

        return memoise_on_disk(what, compute, images=tensor_digest(images),
                               model=registry.model_entry(name, domain=self.domain)["sha256"], device=self.device.type)

    def hashes(self) -> dict[str, str]:
        """sha256 of every reference model of the domain (for the scorecard's provenance)."""
        return {
            f"{self.domain}/{name}": registry.model_entry(name, domain=self.domain)["sha256"]
            for name in registry.available_models(self.domain)
        }

    @torch.no_grad()
    def feature_maps(self, images: torch.Tensor) -> list[torch.Tensor]:
        """The domain embedding's feature maps (the perceptual distance's layers), without autograd."""
        from cfcheck.models.inference import inference_copy

        return inference_copy(self.embedding).feature_maps(images.to(self.device))

    def features(self, images: torch.Tensor, batch_size: int = CPU_BATCH_SIZE) -> torch.Tensor:
        """Raw domain-embedding features (float64), the input of FID and KID."""
        return self.logits("embedding", images, batch_size).double()

    @torch.no_grad()
    def logits(self, name: str, images: torch.Tensor, batch_size: int = CPU_BATCH_SIZE) -> torch.Tensor:
        from cfcheck.models.inference import batched_logits

        if len(images) == 0:
            return torch.empty(0)  # no inputs (e.g. every one abstained): no outputs
        return batched_logits(self[name], images, batch_size=batch_size, device=self.device)
