#!/usr/bin/env bash
# The reduced suite of the CI regression gate: all eight paper algorithms, 12 trials, 100 simulated hours
# (20 trials at 200 h until the Dask tests joined CI: that took 135 s of the 10-minute CI limit, now about 20 s).
# Usage: scripts/ci_suite.sh OUT_DIR  (then: nasbench check OUT_DIR --baseline results/baselines/ci-ptb.json)
# To refresh the baseline after an intended change:
#   scripts/ci_suite.sh /tmp/ci && nasbench check /tmp/ci --write-baseline results/baselines/ci-ptb.json
set -euo pipefail
usage="usage: scripts/ci_suite.sh OUT_DIR   (runs the CI gate's reduced suite into OUT_DIR)"
case "${1:-}" in
    -h|--help) echo "$usage"; exit 0 ;;
    -*|"") echo "$usage" >&2; exit 2 ;;
esac
[ $# -eq 1 ] || { echo "$usage" >&2; exit 2; }
out=$1
# (one process per core, or $NASBENCH_JOBS: the trials are the same whatever runs them)
exec nasbench run --algo all --trials 12 --budget-hours 100 --seed 0 --out "$out"
