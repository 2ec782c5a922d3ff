#!/usr/bin/env bash
# Set up and run the main job: a conformance run of the bundled Wachter-style baseline,
# writing its scorecard to reports/wachter-quick/. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")"
source scripts/setup-env.sh
.venv/bin/python -m pytest --method=cfcheck.fixtures.wachter --cfcheck-profile=quick -q "$@" || status=$?
.venv/bin/cfcheck summary reports/wachter-quick || true
exit "${status:-0}"
