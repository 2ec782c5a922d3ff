#!/usr/bin/env bash
# Create (or reuse) .venv with cfcheck installed. Sourced by demo.sh and test.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
# CFCHECK_EXTRAS adds extras (CI sets "dev,captum" so the captum adapter test runs)
EXTRAS=${CFCHECK_EXTRAS:-dev}
# A second run skips pip (about 12 s) when nothing it would install has changed: the stamp records
# pyproject.toml and the extras, and cfcheck must still import from this checkout.
STAMP=.venv/.cfcheck-install-stamp
WANT="$(sha256sum pyproject.toml | cut -d' ' -f1) ${EXTRAS}"
FOUND=$(.venv/bin/python -c "import importlib.util as u; s = u.find_spec('cfcheck'); print(s.origin if s else '')" \
        2>/dev/null || true)
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANT" ] && [ "$FOUND" = "$PWD/cfcheck/__init__.py" ]; then
    return 0 2>/dev/null || exit 0
fi
# Prefer the CPU build of torch (a plain `torch` requirement pulls several GB of CUDA packages).
if ! .venv/bin/python -c "import torch" 2>/dev/null; then
    .venv/bin/pip install --quiet "torch==2.13.0" || .venv/bin/pip install --quiet torch
fi
.venv/bin/pip install --quiet -e ".[${EXTRAS}]"
echo "$WANT" > "$STAMP"
