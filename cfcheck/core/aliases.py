"""Old module names that keep importing after a module moved: ``import pkg.old`` gives the very
module object of ``pkg.new`` (so ``isinstance``, identity and pickling agree whichever name a
user's code spells).

A package installs its table once, at its own import (its submodules cannot be imported before
it); the names import lazily, so an alias costs nothing until it is used.

Example:
    >>> import sys, types
    >>> sys.modules["demo_pkg"] = types.ModuleType("demo_pkg"); sys.modules["demo_pkg"].__path__ = []
    >>> sys.modules["demo_pkg.new"] = types.ModuleType("demo_pkg.new")
    >>> finder = install_aliases("demo_pkg", {"old": "new"})
    >>> import demo_pkg.old
    >>> demo_pkg.old is sys.modules["demo_pkg.new"]
    True
    >>> sys.meta_path.remove(finder)
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types
from collections.abc import Mapping, Sequence


class ModuleAliases(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """A meta-path finder answering ``package.<old>`` with the module ``package.<new>``.

    The loader's ``exec_module`` puts the moved module under the old name in ``sys.modules``;
    the import system returns what ``sys.modules`` holds after loading, so the placeholder it
    created is dropped and the moved module's own ``__name__`` and ``__spec__`` stay as they are.
    """

    def __init__(self, package: str, moved: Mapping[str, str]) -> None:
        self.package = package
        self.targets = {f"{package}.{old}": f"{package}.{new}" for old, new in moved.items()}

    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: types.ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in self.targets:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> None:
        return None  # the default placeholder; exec_module replaces it

    def exec_module(self, module: types.ModuleType) -> None:
        sys.modules[module.__name__] = importlib.import_module(self.targets[module.__name__])


def install_aliases(package: str, moved: Mapping[str, str]) -> ModuleAliases:
    """Make ``package.<old>`` import as ``package.<new>`` for each ``old: new`` of ``moved``
    (dotted names relative to ``package``); installing a package's table again replaces it."""
    for finder in list(sys.meta_path):
        if isinstance(finder, ModuleAliases) and finder.package == package:
            sys.meta_path.remove(finder)
    finder = ModuleAliases(package, moved)
    sys.meta_path.insert(0, finder)
    return finder
