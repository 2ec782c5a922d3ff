"""Methods sit above kinds: a bundled method may import its kind's capability protocols and
baseline, but no module of a kind's engine imports a bundled method (function-level imports
included). A kind that needs one, as the attribution calibration's controls do, names it."""

from __future__ import annotations

import ast
from pathlib import Path

import cfcheck.kinds

KINDS = Path(cfcheck.kinds.__file__).parent


def _imports_of_methods(path: Path) -> list[str]:
    """``line: statement`` of each import of ``cfcheck.methods`` (or below) in the file."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
        else:
            continue
        if any(name == "cfcheck.methods" or name.startswith("cfcheck.methods.") for name in names):
            found.append(f"{node.lineno}: {ast.unparse(node)}")
    return found


def test_the_scan_finds_an_import_of_a_method_at_any_depth(tmp_path):
    module = tmp_path / "engine.py"
    module.write_text(
        "import torch\n"
        "from cfcheck import methods\n"
        "def f():\n"
        "    from cfcheck.methods.attribution.saliency import Gradient\n"
        "    import cfcheck.methods.common as common\n"
    )
    assert _imports_of_methods(module) == [
        "2: from cfcheck import methods",
        "4: from cfcheck.methods.attribution.saliency import Gradient",
        "5: import cfcheck.methods.common as common",
    ]


def test_no_kind_module_imports_a_bundled_method():
    modules = sorted(KINDS.rglob("*.py"))
    assert len(modules) > 30  # the whole engine is scanned
    found = [f"{path.relative_to(KINDS)}:{line}" for path in modules for line in _imports_of_methods(path)]
    assert found == []
