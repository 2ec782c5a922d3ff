"""The zoo's randomised copies of a reference model (the attribution sanity checks' models): the
stages of its cascading randomisation (``"cnn~features.6"``) and its full re-initialisations
(``"cnn~reinit7"``): their names, and their weights and logit standardisations, fitted on the
domain's calibration images and kept on disk (:func:`cfcheck.core.cache.memoise_on_disk`).

:class:`cfcheck.models.zoo.ModelZoo` serves them by name, like the bundled models.
"""

from __future__ import annotations

from typing import Any, Protocol

import torch


class ZooServing(Protocol):
    """What these functions use of the zoo that calls them with itself
    (:class:`cfcheck.models.zoo.ModelZoo`): a protocol, so this module does not import the zoo."""

    domain: Any
    device: torch.device
    store: Any

    def __getitem__(self, name: str) -> torch.nn.Module: ...


#: "cnn~features.6": the cnn with its layers from the output down to features.6 randomised.
STAGE_SEPARATOR = "~"
CASCADE_SEED = 0
#: Unlabelled images (of the domain's train split) for the stages' label-free logit standardisation.
CASCADE_CALIBRATION_IMAGES = 2000
#: "cnn~reinit7": the cnn with every parametrised layer re-initialised under seed 7 (one random draw
#: of its architecture, standardised like the cascade's stages).
REINITIALISED = "reinit"


def reinitialisation_name(model: str, seed: int) -> str:
    """The zoo's name of ``model`` fully re-initialised under ``seed`` (int ≥ 0).

    Example:
        >>> reinitialisation_name("cnn", 7)
        'cnn~reinit7'
    """
    if not isinstance(model, str) or not model or STAGE_SEPARATOR in model:
        raise ValueError(f"`model` must be a bundled model's name, got {model!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"`seed` must be an int >= 0, got {seed!r}")
    return f"{model}{STAGE_SEPARATOR}{REINITIALISED}{seed}"


def reinitialisation_seed(stage: str) -> int | None:
    """The seed of a re-initialisation's name part after the separator, None for a cascade stage."""
    digits = stage.removeprefix(REINITIALISED)
    return int(digits) if stage.startswith(REINITIALISED) and digits.isdigit() else None


def _calibration_images(zoo: ZooServing) -> torch.Tensor:
    """:data:`CASCADE_CALIBRATION_IMAGES` unlabelled images of the domain's train split, on the zoo's device."""
    domain = zoo.domain
    return domain.split(domain.split_roles["train"], n=CASCADE_CALIBRATION_IMAGES).images.to(zoo.device)


def cascade_stages(zoo: ZooServing, name: str) -> dict[str, torch.nn.Module]:
    """The stages of ``name``'s cascade, by their zoo names. Their weights and fitted logit
    standardisations are the same in every session with these weights, images and code, so they
    are kept on disk (:func:`cfcheck.core.cache.memoise_on_disk`): fitting them runs every stage on
    :data:`CASCADE_CALIBRATION_IMAGES` images, seconds at each session's start."""
    from cfcheck.core.cache import file_digest, memoise_on_disk, tensor_digest
    from cfcheck.models.classifiers import architectures, logit_standardisation, randomisation

    calibration = _calibration_images(zoo)

    def fitted() -> dict[str, torch.Tensor]:
        stages = randomisation.cascading_randomisation(zoo[name], calibration, seed=CASCADE_SEED)
        return {
            f"{i}/{key}": value for i, stage in enumerate(stages) for key, value in stage.model.state_dict().items()
        }

    stored = memoise_on_disk(
        "zoo.cascade",
        fitted,
        model=zoo.store.digest(name),
        images=tensor_digest(calibration),
        seed=CASCADE_SEED,
        device=zoo.device.type,
        code=file_digest(randomisation.__file__, architectures.__file__, logit_standardisation.__file__),
    )
    # the same stages fitted on two images (their structure), then given the stored state
    stages = randomisation.cascading_randomisation(zoo[name], calibration[:2], seed=CASCADE_SEED)
    for i, stage in enumerate(stages):
        prefix = f"{i}/"
        stage.model.load_state_dict({k[len(prefix) :]: v for k, v in stored.items() if k.startswith(prefix)})
    return {f"{name}{STAGE_SEPARATOR}{stage.layer}": stage.model for stage in stages}


def reinitialised_copy(zoo: ZooServing, name: str, seed: int) -> torch.nn.Module:
    """``name`` with every parametrised layer re-initialised under ``seed``
    (:func:`cfcheck.models.classifiers.randomisation.reinitialised`), its logit standardisation
    fitted on the cascade's calibration images; kept on disk like the cascade's stages."""
    from cfcheck.core.cache import file_digest, memoise_on_disk, tensor_digest
    from cfcheck.models.classifiers import architectures, logit_standardisation, randomisation

    calibration = _calibration_images(zoo)
    stored = memoise_on_disk(
        "zoo.reinitialised",
        lambda: dict(randomisation.reinitialised(zoo[name], calibration, seed=seed).state_dict()),
        model=zoo.store.digest(name),
        images=tensor_digest(calibration),
        seed=seed,
        device=zoo.device.type,
        code=file_digest(randomisation.__file__, architectures.__file__, logit_standardisation.__file__),
    )
    model = randomisation.reinitialised(zoo[name], calibration[:2], seed=seed)  # its structure
    model.load_state_dict(stored)
    return model
