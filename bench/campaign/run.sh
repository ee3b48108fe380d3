#!/usr/bin/env bash
# Seed 000's matrix scaled to this machine (examples/seed-000-one-machine.toml: one node, CMS, G1, ZGC
# and Shenandoah on Cassandra 4.0 / JDK 11, three rates, 2 minutes a cell), run end to end. Results go
# to bench/campaign/results/<time>/ (git-ignored); the report of the run quoted in README.md is copied
# to bench/campaign/example/. About 35 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build --release -p cqlbench
out="bench/campaign/results/$(date -u +%Y%m%d-%H%M%S)"
target/release/cqlbench campaign examples/seed-000-one-machine.toml -o "$out"
mkdir -p bench/campaign/example
cp "$out/report.md" "$out/report.html" "$out/tables.txt" "$out/environment.json" bench/campaign/example/
echo "report: $out/report.html (copied to bench/campaign/example/)"
