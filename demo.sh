#!/usr/bin/env bash
# Set up and run the main job: a conformance run of the bundled Wachter-style baseline,
# writing its scorecard to reports/wachter-quick/. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")"
source scripts/setup-env.sh
status=0
# -o testpaths=suites: load only the suites' conftests, not the ones of cfcheck's own tests
.venv/bin/python -m pytest --method=cfcheck.fixtures.vce.wachter --cfcheck-profile=quick -q -o testpaths=suites "$@" || status=$?
.venv/bin/cfcheck summary reports/wachter-quick --failures || true
# Exit 1 means "the method missed some bars" -- the verdict, recorded in the scorecard (the
# Wachter baseline is adversarial on non-robust classifiers). Anything else is a real error.
if [ "$status" -le 1 ]; then
    echo "scorecard written to reports/wachter-quick/ (scorecard.html, scorecard.md, scorecard.json, scores.csv, samples.csv, badge.svg)"
    exit 0
fi
exit "$status"
