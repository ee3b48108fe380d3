#!/bin/bash
# Benchmark (figures, not a test): `cqlbench gc analyze` against GCViewer 1.36 on the same large log.
# Builds a >= 200 MB unified log from a real JDK 17 G1 log (a committed fixture) repeated with uptime,
# wall-clock time and GC ids shifted to keep increasing, in a scratch directory (never committed),
# fetches GCViewer with mvn, and reports MB/s and peak RSS (/usr/bin/time -v) for each.
#
# Usage: bench/gclog/run.sh [MIN_MB (default 210)] [SCRATCH_DIR (default /tmp/cqlbench-gclog-bench)]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
min_mb=${1:-210}
scratch=${2:-/tmp/cqlbench-gclog-bench}
mkdir -p "$scratch"
source_log=$root/crates/gclog/tests/fixtures/unified/j17-g1-cqlbench.log
log=$scratch/big-gc.log

echo "== building cqlbench (release)" >&2
(cd "$root" && cargo build --release -p cqlbench --quiet)
cqlbench=$root/target/release/cqlbench

if [ ! -s "$log" ] || [ "$(stat -c %s "$log")" -lt $((min_mb * 1048576)) ]; then
    echo "== writing $log (>= $min_mb MiB)" >&2
    python3 "$root/bench/gclog/make_big_log.py" "$source_log" "$log" "$min_mb" >&2
fi
bytes=$(stat -c %s "$log")

jar=$scratch/gcviewer-1.36.jar
if [ ! -s "$jar" ]; then
    echo "== fetching GCViewer 1.36 with mvn" >&2
    mvn -B -q dependency:copy -Dartifact=com.github.chewiebug:gcviewer:1.36 -DoutputDirectory="$scratch" -Dmdep.useBaseVersion=true >&2
fi
java=${JAVA:-/usr/lib/jvm/java-17-openjdk-amd64/bin/java}

# measure NAME COMMAND... : prints elapsed seconds and peak RSS (KiB) of COMMAND
measure() {
    local name=$1; shift
    local stats=$scratch/$name.time
    /usr/bin/time -v -o "$stats" "$@" > "$scratch/$name.out" 2> "$scratch/$name.err" || {
        echo "$name failed, see $scratch/$name.err" >&2; tail -3 "$scratch/$name.err" >&2; }
    local wall rss
    wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s}' "$stats")
    rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$stats")
    awk -v name="$name" -v b="$bytes" -v w="$wall" -v r="$rss" 'BEGIN {
        printf "%-10s %8.1f MB in %7.2f s = %8.1f MB/s, peak RSS %7.1f MB\n", name, b / 1048576, w, b / 1048576 / w, r / 1024 }'
    echo "$wall $rss" > "$scratch/$name.figures"
}

echo "== log: $log, $(awk -v b="$bytes" 'BEGIN {printf "%.1f", b / 1048576}') MiB" >&2
measure cqlbench "$cqlbench" gc analyze "$log" --json
measure gcviewer "$java" -jar "$jar" "$log" "$scratch/gcviewer-summary.csv" -t SUMMARY
read -r cw cr < "$scratch/cqlbench.figures"
read -r gw gr < "$scratch/gcviewer.figures"
awk -v cw="$cw" -v gw="$gw" -v cr="$cr" 'BEGIN {
    printf "cqlbench throughput = %.1f x GCViewer (target >= 20 x); cqlbench peak RSS %.1f MB (target <= 32 MB)\n", gw / cw, cr / 1024 }'
echo "cqlbench pauses counted: $(grep -m1 '"count"' "$scratch/cqlbench.out" | tr -dc 0-9)" >&2
