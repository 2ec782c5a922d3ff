"""cfcheck's own tests keep each ``xdist_group`` on one worker under ``-n 2 --dist loadgroup``.

pytest 9.2 drops the ``@group`` suffix xdist writes into node ids (:mod:`cfcheck.core.xdist_groups`),
so without the repair a grouped module is spread over both workers and its module fixture is
computed once on each (the Synbols findings' table: about four minutes of CPU, twice).
``tests/conftest.py`` installs the repair, which cfcheck's plugin does only with ``--method``.
"""

from __future__ import annotations

import pytest

from cfcheck.core import xdist_groups

pytestmark = pytest.mark.xdist_group("own-xdist-groups")

GROUPED = """
import os, pathlib, pytest

pytestmark = pytest.mark.xdist_group("shared")

@pytest.fixture(scope="module")
def table():
    with open(pathlib.Path(__file__).parent / "setups.txt", "a") as log:
        log.write(os.environ.get("PYTEST_XDIST_WORKER", "main") + "\\n")
    return 1

@pytest.mark.parametrize("i", range(6))
def test_grouped(table, i):
    pass
"""

UNGROUPED = """
import pytest

@pytest.mark.parametrize("i", range(30))
def test_other(i):
    pass
"""


def test_this_run_names_the_group_on_an_xdist_worker(request):
    """On a worker (CI's run) the repair is registered and this test's node id carries its group;
    in a plain run it is not registered (it acts on workers only)."""
    on_worker = hasattr(request.config, "workerinput")
    assert request.config.pluginmanager.has_plugin(xdist_groups.PLUGIN_NAME) == on_worker
    if on_worker and getattr(request.config.option, "loadgroup", False):
        assert request.node.nodeid.endswith("@own-xdist-groups"), request.node.nodeid


def test_a_grouped_module_fixture_is_set_up_once_with_the_repair(pytester):
    """Without ``--method``: with the repair installed as tests/conftest.py installs it, a grouped
    module's fixture is set up on one worker (without it, xdist 3.8 on pytest 9.2 sets it up on both)."""
    pytester.makeconftest(
        "from cfcheck.core import xdist_groups\n\ndef pytest_configure(config):\n    xdist_groups.install(config)\n"
    )
    pytester.makepyfile(test_grouped=GROUPED, test_other=UNGROUPED)
    result = pytester.runpytest_subprocess("-n", "2", "--dist", "loadgroup", "-p", "no:cacheprovider")
    assert result.parseoutcomes().get("passed") == 36, result.stdout.str()[-2000:]
    setups = (pytester.path / "setups.txt").read_text().split()
    assert len(setups) == 1, setups
