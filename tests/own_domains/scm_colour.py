"""An RGB attribute-labelled test domain with a mediator and a categorical attribute of four values,
declared with no mechanism of the user's: cfcheck fits every mechanism to the table.

The SCM (``k`` is the shape's code; ``u_size``, ``u_hue`` exogenous, each ``N(0, 1)`` clipped to ±2):

* ``shape`` — categorical, 4 values (disc, square, triangle, diamond), a root, uniform; also the class;
* ``size`` — continuous, a child of ``shape``: ``size = 5.5 + k + u_size`` (the half extent in px);
* ``hue`` — continuous, a child of ``size`` and ``shape``:
  ``hue = 0.08 + 0.06·(size − 3.5) + 0.03·k + 0.03·u_hue`` (in [0.02, 0.65]: red to blue, no wrap);
* the exogenous style: the centre (``cx``, ``cy``, each 16 ± 3 px) and the background's RGB colour
  (each channel uniform in [0.05, 0.25]), kept by the true counterfactual.

So ``size`` mediates ``shape → hue``: under do(shape = k'), ``size`` moves by ``k' − k`` and ``hue`` by
``0.06·(k' − k)`` through it and ``0.03·(k' − k)`` directly (:func:`closed_form_counterfactual`). The
table holds float32 values (so the domain's parents are the exact values each image was drawn from).

Each image is 3×32×32: the shape (:func:`tests.own_domains.scm_build.coverage`) in the fully saturated
colour of its hue over the background. The anti-causal predictors and the embedding read the shape in
closed form (:mod:`tests.own_domains.scm_colour_nets`); only the minimality VAE is trained. The domain
is built, cached and loaded by :mod:`tests.own_domains.scm_build` (:data:`CACHED`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .scm_build import SHAPE_NAMES, CachedDomain, Declaration, coverage, write_domain
from .scm_build import load as load  # re-exported: scm_colour.load(folder)

SIDE, CENTRE_JITTER, BACKGROUND = 32, 3.0, (0.05, 0.25)
N_IMAGES = 2000
DOMAIN_NAME = "scm_colour"
#: the share of each split role (realism matches every counterfactual with several real images)
FRACTIONS = {"train": 0.15, "oracle_train": 0.1, "selection": 0.1, "scored": 0.1, "reference": 0.55}
#: the role map: the shape's predictor, a two-headed one of size and hue, the embedding, the VAE
ROLES: dict[str, tuple[str, ...]] = {
    "anticausal_predictors": ("predictor_shape", "predictor_continuous"),
    "embedding": ("embedding",),
    "minimality_vae": ("vae",),
}
#: the structural equations' coefficients (module docstring)
SIZE_BASE, HUE_BASE, HUE_PER_SIZE, HUE_PER_SHAPE, HUE_NOISE = 5.5, 0.08, 0.06, 0.03, 0.03


# -- the SCM -----------------------------------------------------------------------------------------
def size_of(shape: np.ndarray, u_size: np.ndarray) -> np.ndarray:
    """The size equation."""
    return SIZE_BASE + np.asarray(shape, dtype=np.float64) + np.asarray(u_size, dtype=np.float64)


def hue_of(size: np.ndarray, shape: np.ndarray, u_hue: np.ndarray) -> np.ndarray:
    """The hue equation."""
    size, shape = np.asarray(size, dtype=np.float64), np.asarray(shape, dtype=np.float64)
    return HUE_BASE + HUE_PER_SIZE * (size - 3.5) + HUE_PER_SHAPE * shape + HUE_NOISE * np.asarray(u_hue)


def _float32(values: np.ndarray) -> np.ndarray:
    return np.asarray(values, dtype=np.float32).astype(np.float64)


def sample(n: int, seed: int) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """``n`` attribute rows (shape int64; size and hue float64 holding float32 values) and their
    styles (cx, cy, background r, g, b)."""
    rng = np.random.default_rng(seed)
    shape = rng.integers(0, len(SHAPE_NAMES), n)
    size = _float32(size_of(shape, np.clip(rng.standard_normal(n), -2, 2)))
    hue = _float32(hue_of(size, shape, np.clip(rng.standard_normal(n), -2, 2)))
    centres = SIDE / 2 + rng.uniform(-CENTRE_JITTER, CENTRE_JITTER, (n, 2))
    styles = np.concatenate([centres, rng.uniform(*BACKGROUND, (n, 3))], 1)
    return {"shape": shape, "size": size, "hue": hue}, styles


def closed_form_counterfactual(
    observed: dict[str, np.ndarray], intervention: dict[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """The true SCM's counterfactual attributes (abduction of ``u_size`` and ``u_hue`` from the observed
    values, the intervention, then the equations in the graph's order), float64."""
    shape, size = observed["shape"].astype(np.int64), observed["size"].astype(np.float64)
    u_size = size - size_of(shape, 0.0)
    u_hue = (observed["hue"].astype(np.float64) - hue_of(size, shape, 0.0)) / HUE_NOISE
    new_shape = np.asarray(intervention.get("shape", shape)).astype(np.int64)
    new_size = np.asarray(intervention["size"], np.float64) if "size" in intervention else size_of(new_shape, u_size)
    new_hue = (
        np.asarray(intervention["hue"], np.float64) if "hue" in intervention else hue_of(new_size, new_shape, u_hue)
    )
    return {"shape": new_shape, "size": new_size, "hue": new_hue}


def hue_to_rgb(hue: np.ndarray) -> np.ndarray:
    """N×3 fully saturated, full-value RGB colours of hues in [0, 1)."""
    h = 6.0 * np.asarray(hue, dtype=np.float64)[:, None]
    return np.clip(np.array([-1.0, 2.0, 2.0]) + np.array([1.0, -1.0, -1.0]) * np.abs(h - [3.0, 2.0, 4.0]), 0.0, 1.0)


def render(shape: np.ndarray, size: np.ndarray, hue: np.ndarray, styles: np.ndarray) -> np.ndarray:
    """uint8 N×3×32×32 images: each ``shape`` of its ``size`` in the colour of its ``hue``, at the
    style's centre over the style's background."""
    alpha = coverage(shape, size, styles[:, :2], SIDE)[:, None]
    colour, background = hue_to_rgb(hue)[:, :, None, None], styles[:, 2:5, None, None]
    return np.round(255.0 * (alpha * colour + (1.0 - alpha) * background)).astype(np.uint8)


# -- the materialised domain -------------------------------------------------------------------------
DECLARATION = Declaration(
    module="scm_colour",
    declared=f'[categorical("shape", values={SHAPE_NAMES!r}), continuous("size", bins=5), continuous("hue", bins=5)]',
    graph={"size": ("shape",), "hue": ("size", "shape")},
    class_attribute="shape",
    classes=SHAPE_NAMES,
    mechanisms={},  # every mechanism fitted by cfcheck
    models={
        "predictor_shape": ("tests.own_domains.scm_colour_nets:shape_reader", "shape"),
        "predictor_continuous": ("tests.own_domains.scm_colour_nets:size_hue_reader", ["size", "hue"]),
        "embedding": ("tests.own_domains.scm_colour_nets:fixed_embedding", None),
    },
    vae_kwargs={"latent": 8, "pixels": 3 * SIDE * SIDE},
)


def _build_into(folder: Path) -> None:
    table, styles = sample(N_IMAGES, seed=0)
    write_domain(
        folder, DOMAIN_NAME, DECLARATION, table, styles, lambda t, s: render(t["shape"], t["size"], t["hue"], s)
    )


#: the domain's cached build (:mod:`tests.own_domains.scm_build`)
CACHED = CachedDomain(DOMAIN_NAME, ("scm_colour.py", "scm_colour_nets.py", "scm_shapes_nets.py"), N_IMAGES, _build_into)
version_key, build, materialise = CACHED.version_key, CACHED.build, CACHED.materialise
