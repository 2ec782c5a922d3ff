"""Keep ``--dist loadgroup`` working where pytest-xdist's group suffix no longer takes effect.

xdist tells its controller which tests form a group by appending ``@<group>`` to each node id on
the worker (``item._nodeid = ...``). pytest 9.2 keeps node ids in a structured ``_id`` instead,
so that assignment is silently ignored and grouped tests are spread over workers
(pytest-dev/pytest-xdist#1386, open when this was written). cfcheck relies on groups to
generate each task once per run, so on a worker it adds the suffix itself wherever xdist's did
not land; with a pytest where xdist's works, this finds nothing to do.
"""

from __future__ import annotations

from typing import Any

import pytest

PLUGIN_NAME = "cfcheck-xdist-loadgroup"


class LoadGroupSuffix:
    """Registered on xdist workers running ``--dist loadgroup``."""

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        if not getattr(config.option, "loadgroup", False):  # set by xdist on its workers
            return
        for item in items:
            groups = sorted(
                {
                    str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                    for m in item.iter_markers("xdist_group")
                }
            )
            if not groups or _has_group_suffix(item.nodeid):
                continue
            _set_nodeid(item, f"{item.nodeid}@{'_'.join(groups)}")


def _has_group_suffix(nodeid: str) -> bool:
    return nodeid.rfind("@") > nodeid.rfind("]")


def _set_nodeid(item: Any, nodeid: str) -> None:
    structured = getattr(item, "_id", None)
    if structured is not None and not isinstance(structured, str):
        from _pytest.nodeid import coerce_node_id  # pytest >= 9.2

        item._id = coerce_node_id(nodeid)
    else:
        item._nodeid = nodeid


def install(config: pytest.Config) -> None:
    """Register the suffixing plugin on an xdist worker (it acts only under ``--dist loadgroup``);
    a second call (cfcheck's own test suite installs it too) does nothing."""
    if hasattr(config, "workerinput") and not config.pluginmanager.has_plugin(PLUGIN_NAME):
        config.pluginmanager.register(LoadGroupSuffix(), PLUGIN_NAME)
