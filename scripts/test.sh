#!/usr/bin/env bash
# The whole test suite: formatting, lints, then every test (unit tests and the suites that start real
# Cassandra nodes). Everything it needs is installed on demand by cqlbench itself (Cassandra jars via
# mvn, extra JDKs via pip), so this runs as-is on a fresh machine.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --release -- -D warnings
cargo test --workspace --release -- --test-threads "${CQLBENCH_TEST_THREADS:-2}"
