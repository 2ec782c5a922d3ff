#!/usr/bin/env bash
# Set up and run cfcheck's own tests (CI runs exactly this). Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")"
source scripts/setup-env.sh
# two xdist workers on two cores: one BLAS/OpenMP thread each, or they oversubscribe the CPU
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} MKL_NUM_THREADS=${MKL_NUM_THREADS:-1}
.venv/bin/python -m pytest tests -n 2 --dist loadgroup "$@"
