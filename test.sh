#!/usr/bin/env bash
# Set up and run cfcheck's own tests (CI runs exactly this). Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")"
source scripts/setup-env.sh
.venv/bin/python -m pytest tests -n 2 "$@"
