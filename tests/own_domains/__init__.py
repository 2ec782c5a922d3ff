"""User domains of the project's own making, for its tests and benchmarks.

Three procedurally rendered domains, built as a user builds one (``ImageDomain`` over an
``ArraySource`` or a ``FolderSource`` PNG tree, a ``ModelStore`` of their own architectures), each
with its true counterfactual renderable and shipped as a user positive-control adapter:

- ``shapes``: RGB 32×32, 3 classes (disc, square, triangle in random colours);
- ``bars``: grey 28×20 (non-square), 5 classes (the orientation of a bar);
- ``textures``: RGB 40×40, 4 classes carried by a texture (stripes, checks, dots), not a shape.

Example:
    >>> from tests.own_domains import materialise, TRUTH_ADAPTER      # doctest: +SKIP
    >>> shapes = materialise("shapes")          # cached build; materialise("shapes", tmp_path): a copy
    >>> shapes.spec        # --cfcheck-domain=... / cfcheck calibrate --domain ...
    >>> shapes.method      # --method=... / cfcheck calibrate --positive ... (== TRUTH_ADAPTER)
"""

from .build import FRACTIONS, TRUTH_ADAPTER, OwnDomain, build, cache_root, domain_name, load_domain, materialise
from .scenes import SCENES
from .variants import Variant, empty_class, flipped_weight, mixed_sizes, unreadable_image

#: the test domains' scene names
NAMES = tuple(SCENES)

__all__ = [
    "FRACTIONS",
    "NAMES",
    "SCENES",
    "TRUTH_ADAPTER",
    "OwnDomain",
    "Variant",
    "build",
    "cache_root",
    "domain_name",
    "empty_class",
    "flipped_weight",
    "load_domain",
    "materialise",
    "mixed_sizes",
    "unreadable_image",
]
