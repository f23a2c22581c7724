#!/usr/bin/env bash
# Re-measure the headline benchmarks side by side in one run on a quiet machine.
#   bash bench/run_all.sh            # writes bench/results_*.md
set -euo pipefail
cd "$(dirname "$0")/.."
date -u +"run started %Y-%m-%dT%H:%M:%SZ"
python bench/bench_exact.py --out bench/results_exact.md
python bench/bench_core.py --out bench/results_core.md
python bench/bench_profile.py --out bench/results_profile.md
python bench/bench_accounting.py
date -u +"run finished %Y-%m-%dT%H:%M:%SZ"
