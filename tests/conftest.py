"""Shared set-up for cfcheck's own tests.

pytester's in-process runs drop every module first imported during a run; compiled
extensions (numpy.fft, scipy) cannot be imported twice, and re-importing cfcheck would also
throw away its in-memory data caches. Importing them here, once, keeps them loaded.
"""

import scipy.linalg  # noqa: F401
import scipy.spatial  # noqa: F401
import scipy.stats  # noqa: F401
import torchmetrics.image.fid  # noqa: F401

import cfcheck.domains.morpho  # noqa: F401
import cfcheck.generation  # noqa: F401
import cfcheck.metrics  # noqa: F401
import cfcheck.methods  # noqa: F401
import cfcheck.models.registry  # noqa: F401
import cfcheck.scoring  # noqa: F401
import cfcheck.session  # noqa: F401
