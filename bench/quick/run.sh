#!/usr/bin/env bash
# The README's first command, measured: `cqlbench campaign examples/quick.toml` end to end (built
# first, the build not timed), then per configuration its top rate (the plan's highest fraction of
# its own measured capacity), write Average p99, write p99.9, and G1's write Average p99 over the
# better of ZGC's and Shenandoah's. Results go to bench/quick/results/<time>/ (git-ignored).
# Usage: bench/quick/run.sh [PLAN (default examples/quick.toml)]
set -euo pipefail
cd "$(dirname "$0")/../.."
plan=${1:-examples/quick.toml}
cargo build --release -p cqlbench --quiet
mkdir -p bench/quick/results
out="bench/quick/results/$(date -u +%Y%m%d-%H%M%S)"
started=$(date +%s.%N)
target/release/cqlbench campaign "$plan" -o "$out" 2> "$out.progress" || {
    tail -5 "$out.progress" >&2; exit 1; }
ended=$(date +%s.%N)
python3 bench/quick/figures.py "$out" "$plan" "$(echo "$ended - $started" | bc)"
