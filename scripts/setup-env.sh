#!/usr/bin/env bash
# Create (or reuse) .venv with cfcheck installed. Sourced by demo.sh and test.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
# Prefer the CPU build of torch (a plain `torch` requirement pulls several GB of CUDA packages).
if ! .venv/bin/python -c "import torch" 2>/dev/null; then
    .venv/bin/pip install --quiet "torch==2.13.0" || .venv/bin/pip install --quiet torch
fi
# CFCHECK_EXTRAS adds extras (CI sets "dev,captum" so the captum adapter test runs)
.venv/bin/pip install --quiet -e ".[${CFCHECK_EXTRAS:-dev}]"
