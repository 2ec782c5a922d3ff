#!/usr/bin/env bash
# Regenerate the published scorecards of the bundled reference methods and controls (quick profile, seed 0)
# and the two comparisons, under OUT (default reports/published). One CPU thread per run, as
# `cfcheck calibrate` runs controls, so timings are comparable. Usage: scripts/publish-runs.sh [OUT]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-reports/published}
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
py=${PYTHON:-.venv/bin/python}
vce="dvce fastdime identity nearest noise pgd random_target truth truth_rejecting wachter"
scm="truth vae hvae gan resample identity noise"
run() {  # adapter
  echo "== $1" >&2
  "$py" -m pytest "--method=cfcheck.fixtures.$1" --cfcheck-profile=quick --cfcheck-seed=0 \
    "--cfcheck-report-dir=$out" -q -p no:cacheprovider --no-header -o addopts= -p no:xdist >/dev/null || true
}
for name in $vce; do run "vce.$name"; done
for name in $scm; do run "scm.$name"; done
"$py" -m cfcheck.cli compare $(for n in $vce; do echo "$out/$n-quick"; done) --output "$out/compare-vce-quick" >/dev/null
"$py" -m cfcheck.cli compare $(for n in $scm; do echo "$out/scm_$n-quick"; done) --output "$out/compare-scm-quick" >/dev/null
echo "published runs written under $out" >&2
