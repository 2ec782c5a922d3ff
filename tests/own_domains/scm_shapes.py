"""An attribute-labelled test domain whose images cfcheck's SCM suites are run on: grey 28×28 shapes
rendered from three attributes and an exogenous position, so every counterfactual is renderable.

The SCM (attributes, graph and mechanism, as a user declares them for ``ImageDomain(attributes=...)``):

* ``type`` — categorical, 3 values (disc, square, triangle), a root; it is also the image's class;
* ``size`` — continuous (the shape's half extent in pixels, uniform in [3.5, 9.5]), a root;
* ``brightness`` — continuous, a child of ``size`` (the mediator edge size → brightness):
  ``brightness = 0.3 + 0.06·(size − 3.5) + 0.07·u`` with exogenous ``u ~ N(0, 1)`` clipped to ±2;
* the exogenous style: the shape's centre (``cx``, ``cy``, each 14 ± 3 px).

Every shape's bounding box is ``2·size`` wide and high (disc: radius ``size``; square: half side
``size``; triangle: apex up, base and height ``2·size``), so ``size`` and ``brightness`` read off the
image in closed form, and its fill of the box (π/4, 1, 1/2) tells the type: the domain's anti-causal
predictors and embedding are such fixed maps (:mod:`tests.own_domains.scm_shapes_nets`), and only
the minimality VAE is trained (a few seconds on one core).

The domain is materialised once per machine as a user would lay it out (``domain.py``, ``images.npy``
and its labels, ``attributes.npz``, ``styles.npy``, ``models/``) and cached
(:mod:`tests.own_domains.scm_build`: :data:`CACHED`, with ``build``, ``materialise`` and ``load``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from .scm_build import SHAPE_NAMES, CachedDomain, Declaration, coverage, write_domain
from .scm_build import load as load  # re-exported: scm_shapes.load(folder)

SIZE, TYPES = 28, SHAPE_NAMES[:3]
SIZE_RANGE, CENTRE_JITTER = (3.5, 9.5), 3.0
#: the share of each split role (realism matches every counterfactual with several real images)
FRACTIONS = {"train": 0.15, "oracle_train": 0.1, "selection": 0.1, "scored": 0.1, "reference": 0.55}
N_IMAGES = 2000
DOMAIN_NAME = "scm_shapes"


# -- the SCM -----------------------------------------------------------------------------------------
def brightness_of(size: np.ndarray, u: np.ndarray) -> np.ndarray:
    """The brightness mechanism's closed form."""
    return 0.3 + 0.06 * (np.asarray(size, dtype=np.float64) - SIZE_RANGE[0]) + 0.07 * np.asarray(u, dtype=np.float64)


def brightness_noise(brightness: np.ndarray, size: np.ndarray) -> np.ndarray:
    """Abduction: the ``u`` that gives ``brightness`` under ``size``."""
    return (np.asarray(brightness, dtype=np.float64) - brightness_of(size, 0.0)) / 0.07


def _abduct(values: Any, parents: Any) -> Any:
    import torch

    return torch.as_tensor(brightness_noise(np.asarray(values), np.asarray(parents["size"])))


def _predict(noise: Any, parents: Any) -> Any:
    import torch

    return torch.as_tensor(brightness_of(np.asarray(parents["size"]), np.asarray(noise))).float()


def _mechanism() -> Any:
    from cfcheck.domains.attributes import Mechanism

    return Mechanism(abduct=_abduct, predict=_predict)


#: the user's own mechanism of ``brightness`` (exactly the generating equation)
BRIGHTNESS = _mechanism()
#: the role map: two anti-causal predictors (one for ``type``, one two-headed for the continuous
#: attributes), the embedding and the minimality VAE
ROLES: dict[str, tuple[str, ...]] = {
    "anticausal_predictors": ("predictor_type", "predictor_continuous"),
    "embedding": ("embedding",),
    "minimality_vae": ("vae",),
}


def sample(n: int, seed: int) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """``n`` attribute rows (type int64, size and brightness float64) and their styles (cx, cy)."""
    rng = np.random.default_rng(seed)
    kinds = rng.integers(0, len(TYPES), n)
    size = rng.uniform(*SIZE_RANGE, n)
    u = np.clip(rng.standard_normal(n), -2, 2)
    styles = SIZE / 2 + rng.uniform(-CENTRE_JITTER, CENTRE_JITTER, (n, 2))
    return {"type": kinds, "size": size, "brightness": brightness_of(size, u)}, styles


def render(kinds: np.ndarray, size: np.ndarray, brightness: np.ndarray, styles: np.ndarray) -> np.ndarray:
    """uint8 N×1×28×28 images: each shape of ``kinds`` with its ``size`` and ``brightness`` at ``styles``
    (anti-aliased by 4× supersampling; a brightness outside [0, 1] is clipped)."""
    level = np.clip(np.asarray(brightness, dtype=np.float64), 0.0, 1.0)
    pooled = coverage(kinds, size, styles, SIZE)
    return np.round(255.0 * pooled * level[:, None, None]).astype(np.uint8)[:, None]


# -- the materialised domain -------------------------------------------------------------------------
DECLARATION = Declaration(
    module="scm_shapes",
    declared=f'[continuous("size", bins=5), continuous("brightness", bins=5), categorical("type", values={TYPES!r})]',
    graph={"brightness": ("size",)},
    class_attribute="type",
    classes=TYPES,
    mechanisms={"brightness": "BRIGHTNESS"},
    models={
        "predictor_type": ("tests.own_domains.scm_shapes_nets:type_reader", "type"),
        "predictor_continuous": ("tests.own_domains.scm_shapes_nets:size_brightness_reader", ["size", "brightness"]),
        "embedding": ("tests.own_domains.scm_shapes_nets:fixed_embedding", None),
    },
    vae_kwargs={"latent": 8},
)


def _build_into(folder: Path) -> None:
    table, styles = sample(N_IMAGES, seed=0)
    write_domain(
        folder, DOMAIN_NAME, DECLARATION, table, styles, lambda t, s: render(t["type"], t["size"], t["brightness"], s)
    )


#: the domain's cached build (:mod:`tests.own_domains.scm_build`)
CACHED = CachedDomain(DOMAIN_NAME, ("scm_shapes.py", "scm_shapes_nets.py"), N_IMAGES, _build_into)
version_key, build, materialise = CACHED.version_key, CACHED.build, CACHED.materialise
