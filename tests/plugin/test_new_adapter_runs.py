"""The adapter `cfcheck new-adapter KIND` writes runs as written and passes its kind's contract."""

from __future__ import annotations

import pytest

from cfcheck.cli import main
from cfcheck.kinds.protocols import MethodKind

KINDS = [kind.value for kind in MethodKind]


@pytest.mark.parametrize("kind", KINDS)
def test_the_written_adapter_passes_its_kinds_contract(tiny, kind):
    path = tiny.path / f"mine_{kind}.py"
    assert main(["new-adapter", kind, str(path)]) == 0
    domain = {"latent": "glyphs"}.get(kind, "morpho")
    result = tiny.runpytest(f"--method={path.name}", "-k", "test_output_contract", f"--cfcheck-domain={domain}")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines([f"*deselected: the method implements {kind}*"])
