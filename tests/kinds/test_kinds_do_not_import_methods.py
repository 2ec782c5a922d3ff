"""A kind's engine stands below its reference methods: a bundled method (``cfcheck/kinds/<kind>/methods/``)
may import its kind's capability protocols and baseline, but no module of the kinds' engine (every
module under ``cfcheck/kinds/`` outside the ``methods/`` folders) imports a bundled method
(function-level and relative imports included). A kind that needs one, as the attribution
calibration's controls do, names it by reference, so importing a kind's spec stays light."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import cfcheck.kinds

KINDS = Path(cfcheck.kinds.__file__).parent
#: a kind's reference methods, or a module below them
METHODS = re.compile(r"^cfcheck\.kinds\.\w+\.methods(\.|$)")


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(["cfcheck", "kinds", *(parts[:-1] if parts[-1] == "__init__" else parts)])


def _imports_of_methods(path: Path, root: Path = KINDS) -> list[str]:
    """``line: statement`` of each import of a kind's reference methods (or below) in the file,
    a module under ``root`` (the folder of ``cfcheck.kinds``); relative imports are resolved."""
    module = _module_name(path, root)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(anchor + ([node.module] if node.module else []))
            names = [base, *(f"{base}.{alias.name}" for alias in node.names)]
        else:
            continue
        if any(METHODS.match(name) for name in names):
            found.append((node.lineno, f"{node.lineno}: {ast.unparse(node)}"))
    return [text for _, text in sorted(found)]


def test_the_scan_finds_an_import_of_a_method_at_any_depth(tmp_path):
    (tmp_path / "attribution").mkdir()
    module = tmp_path / "attribution" / "engine.py"
    module.write_text(
        "import torch\n"
        "from cfcheck.kinds.attribution import methods\n"
        "def f():\n"
        "    from cfcheck.kinds.attribution.methods.saliency import Gradient\n"
        "    import cfcheck.kinds.vce.methods.contract as contract\n"
        "from .methods import saliency\n"
        "from . import methods\n"
        "from .spec import SPEC\n"
        "from cfcheck.kinds import method_helpers\n"
    )
    assert _imports_of_methods(module, tmp_path) == [
        "2: from cfcheck.kinds.attribution import methods",
        "4: from cfcheck.kinds.attribution.methods.saliency import Gradient",
        "5: import cfcheck.kinds.vce.methods.contract as contract",
        "6: from .methods import saliency",
        "7: from . import methods",
    ]


def test_no_module_of_the_kinds_engine_imports_a_bundled_method():
    engine = sorted(path for path in KINDS.rglob("*.py") if "methods" not in path.relative_to(KINDS).parts)
    assert len(engine) > 30  # the whole engine is scanned
    found = [f"{path.relative_to(KINDS)}:{line}" for path in engine for line in _imports_of_methods(path)]
    assert found == []
