#!/usr/bin/env bash
# Runs the example sweep on main's checkout and on the branch's, and gates the branch on the comparison:
#
#     bash examples/github/compare.sh MAIN_CHECKOUT BRANCH_CHECKOUT [RUNS_DIR]
#
# Exit status: 0 when the branch is not worse than main by more than the margin (the interval of ΔBoo_n says so),
# 3 when that is not supported, 2 bad input, 1 a failure. The Markdown report goes to stdout and, in a GitHub
# Actions job, to the job's summary page ($GITHUB_STEP_SUMMARY). The runs are left in RUNS_DIR (default: runs).
set -euo pipefail
main=$1
branch=$2
runs=${3:-runs}
mkdir -p "$runs"
python "$main/examples/github/sweep.py" "$runs/main.csv"
python "$branch/examples/github/sweep.py" "$runs/branch.csv"
boontrack compare "$runs/main.csv" "$runs/branch.csv" --label main --label branch \
    --val val_acc --test test_acc --seed-column seed --n 1,5,10 \
    --require not-worse --margin 0.02 --format markdown
