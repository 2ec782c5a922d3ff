"""The scikit-learn digits as a cfcheck domain, written only against cfcheck's public API.

``make_domain`` is what ``--cfcheck-domain=digits_example.domain:make_domain`` names. The 1,797
8×8 images (grey levels 0–16, scaled to [0, 1]) are divided class by class, with a fixed seed,
into the roles cfcheck needs: the explained classifier's training split, the oracles' and the
embedding's training split, a never-scored selection split, the scored inputs and a reference
for realism.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from cfcheck.domains.data import ArraySource, ImageDomain

#: the example's folder: its model store (models/) and calibrated bars (bars-<profile>.json)
ROOT = Path(__file__).resolve().parent.parent
#: a large reference: realism compares n counterfactuals of a class with 2n real ones and five
#: real-vs-real floor sets of n, so each target class needs 7n real images
FRACTIONS = {"train": 0.25, "oracle_train": 0.15, "selection": 0.1, "scored": 0.1, "reference": 0.4}
MODEL_ROLES = {
    "explained": ("cnn",),
    "oracles": ("oracle_mlp", "oracle_pool_cnn", "oracle_projection"),
    "embedding": ("embedding",),
}


def load_images() -> ArraySource:
    from sklearn.datasets import load_digits

    digits = load_digits()
    images = (digits.images / 16.0).astype(np.float32)[:, None]  # N×1×8×8 in [0, 1]
    return ArraySource(images, digits.target.astype(np.int64), name="sklearn.datasets.load_digits")


def make_domain() -> ImageDomain:
    return ImageDomain(
        "sklearn_digits",
        load_images(),
        root=ROOT,
        model_roles=MODEL_ROLES,
        class_names=[str(d) for d in range(10)],
        seed=0,
        fractions=FRACTIONS,
    )
