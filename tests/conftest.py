"""Shared set-up for cfcheck's own tests.

pytester's in-process runs drop every module first imported during a run; compiled
extensions (numpy.fft, scipy) cannot be imported twice, and re-importing cfcheck would also
throw away its in-memory data caches; diffusers and captum import torch modules that register
native operators, which a second import registers again and fails. Importing them here, once,
keeps them loaded.
"""

import contextlib

import pytest
import scipy.linalg  # noqa: F401
import scipy.spatial  # noqa: F401
import scipy.stats  # noqa: F401
import torchmetrics.image.fid  # noqa: F401
from diffusers import DDIMScheduler, DDPMScheduler, UNet2DModel  # noqa: F401  (register torch operators)

import cfcheck.domains.glyphs  # noqa: F401
import cfcheck.domains.gmm  # noqa: F401
import cfcheck.domains.morpho  # noqa: F401
import cfcheck.kinds.attribution.removal  # noqa: F401
import cfcheck.kinds.attribution.spec  # noqa: F401
import cfcheck.kinds.contract  # noqa: F401
import cfcheck.kinds.latent.spec  # noqa: F401
import cfcheck.kinds.scm.spec  # noqa: F401
import cfcheck.kinds.vce.methods.adversarial  # noqa: F401
import cfcheck.kinds.vce.methods.controls  # noqa: F401
import cfcheck.kinds.vce.methods.nearest  # noqa: F401
import cfcheck.kinds.vce.methods.wachter  # noqa: F401
import cfcheck.kinds.vce.spec  # noqa: F401
import cfcheck.metrics  # noqa: F401
import cfcheck.metrics.removal_curves  # noqa: F401
import cfcheck.models.generative.diffusion  # noqa: F401
import cfcheck.models.registry  # noqa: F401
import cfcheck.scoring  # noqa: F401
import cfcheck.session  # noqa: F401
from cfcheck.kinds.registry import loaded_cards

with contextlib.suppress(ImportError):  # the optional captum extra (its adapter test skips without it)
    import captum.attr  # noqa: F401

# the kinds bring their own metric cards: loaded once here, so every test that reads a card (and every
# parametrization over the cards, at collection) sees them, whatever it imported
loaded_cards()


def pytest_configure(config):
    """cfcheck's plugin repairs xdist's grouping (:mod:`cfcheck.core.xdist_groups`) only in conformance
    runs (``--method``); these tests rely on it as well: a module's tests that share an expensive
    module fixture (the Synbols, DDPM, removal and SCM findings) carry one ``xdist_group``, so that
    under ``-n 2 --dist loadgroup`` one worker computes the fixture once, not each worker again."""
    from cfcheck.core import xdist_groups

    xdist_groups.install(config)


@pytest.fixture(scope="session")
def _derived_data_of_this_run(tmp_path_factory, pytestconfig):
    """One folder for the derived data (:func:`cfcheck.core.cache.memoise_on_disk`: rendered splits,
    glyph banks, the reference models' fixed features and fitted stages) of this test run, shared
    by its xdist workers: each entry is keyed by digests of the code and inputs it derives from,
    verified on reading and written atomically, so a second process reads what the first one
    computed (in a control's run in test_verdicts: 26 s of CPU saved for a VCE control, 11 s for an
    SCM one)."""
    base = tmp_path_factory.getbasetemp()
    root = base.parent if hasattr(pytestconfig, "workerinput") else base  # an xdist worker's parent: the run's
    folder = root / "derived-data"
    folder.mkdir(exist_ok=True)
    return folder


@pytest.fixture(autouse=True)
def _own_generation_cache(tmp_path_factory, monkeypatch, _derived_data_of_this_run):
    """Every test gets an empty generation cache of its own: runs inside a test never read
    another test's cached outputs, nor the user's ~/.cache. Its ``derived`` folder is the run's
    (a link): derived data is what every run computes alike. A test of the derived cache itself
    points ``CFCHECK_CACHE_DIR`` at a folder of its own."""
    cache = tmp_path_factory.mktemp("generation-cache")  # beside the test's tmp_path, which stays empty
    (cache / "derived").symlink_to(_derived_data_of_this_run, target_is_directory=True)
    monkeypatch.setenv("CFCHECK_CACHE_DIR", str(cache))


@pytest.fixture(scope="module")
def single_torch_thread():
    """One torch thread for a module's tests, as the reference models are trained: small CPU
    kernels with two OpenMP threads slow down by an order of magnitude on an oversubscribed
    machine (CI runners, parallel helpers). The previous setting is restored afterwards."""
    import torch

    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


@pytest.fixture
def registry_restored():
    """The metric card registry as it was, after a test that registers cards."""
    import cfcheck.metrics.cards as card_registry

    cards, owners = dict(card_registry.CARDS), dict(card_registry._OWNERS)
    yield
    card_registry.CARDS.clear()
    card_registry.CARDS.update(cards)
    card_registry._OWNERS.clear()
    card_registry._OWNERS.update(owners)
