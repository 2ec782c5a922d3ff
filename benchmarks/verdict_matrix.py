"""Kept for old links: the verdict matrix is ``cfcheck calibrate`` (cfcheck/cli/calibrate_run.py).

python benchmarks/verdict_matrix.py [--profile quick] [--out reports/published]
"""

from cfcheck.cli.calibrate_run import main

if __name__ == "__main__":
    raise SystemExit(main())
