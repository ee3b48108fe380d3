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
cqlbench=$root/target/release/cqlbench
if ! (cd "$root" && cargo build --release -p cqlbench --quiet); then
    [ -x "$cqlbench" ] || exit 1
    echo "build failed; measuring the existing $cqlbench" >&2
fi

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

# measure NAME RUNS COMMAND... : runs COMMAND RUNS times; prints the median wall time, its CPU time
# (user + sys) and the highest peak RSS, and leaves "wall cpu rss_kb" in $scratch/NAME.figures.
# The machine is shared: a short run's wall time suffers most from other load, hence the median.
measure() {
    local name=$1 runs=$2; shift 2
    local stats=$scratch/$name.time
    : > "$scratch/$name.all"
    for _ in $(seq "$runs"); do
        /usr/bin/time -v -o "$stats" "$@" > "$scratch/$name.out" 2> "$scratch/$name.err" || {
            echo "$name failed, see $scratch/$name.err" >&2; tail -3 "$scratch/$name.err" >&2; }
        awk -F': ' '
            /Elapsed \(wall clock\)/ {n = split($2, p, ":"); w = 0; for (i = 1; i <= n; i++) w = w * 60 + p[i]}
            /User time/ {u = $2} /System time/ {s = $2} /Maximum resident set size/ {r = $2}
            END {print w, u + s, r}' "$stats" >> "$scratch/$name.all"
    done
    sort -n "$scratch/$name.all" | awk -v runs="$runs" '
        {w[NR] = $1; c[NR] = $2; if ($3 > r) r = $3}
        END {m = int((runs + 1) / 2); print w[m], c[m], r}' > "$scratch/$name.figures"
    read -r wall cpu rss < "$scratch/$name.figures"
    awk -v name="$name" -v b="$bytes" -v w="$wall" -v c="$cpu" -v r="$rss" -v n="$runs" 'BEGIN {
        printf "%-10s %6.1f MB: median of %d: %6.2f s wall = %7.1f MB/s (CPU %6.2f s = %7.1f MB/s), peak RSS %7.1f MB\n",
            name, b / 1048576, n, w, b / 1048576 / w, c, b / 1048576 / c, r / 1024 }'
}

echo "== log: $log, $(awk -v b="$bytes" 'BEGIN {printf "%.1f", b / 1048576}') MiB" >&2
gz=$scratch/big-gc.log.gz
if [ ! -s "$gz" ] || [ "$gz" -ot "$log" ]; then
    echo "== writing $gz" >&2
    gzip -c "$log" > "$gz"
fi

# Page cache warm for every reader: each file is read once before anything is timed.
cat "$log" "$gz" > /dev/null
measure cqlbench 5 "$cqlbench" gc analyze "$log" --json
measure cqlbench-1 5 "$cqlbench" gc analyze "$log" --json --threads 1
# grep's output goes to a file: GNU grep stops at the first match when it sees /dev/null.
measure grep 5 grep -c Pause "$log"
measure cqlbench-gz 3 "$cqlbench" gc analyze "$gz" --json
measure gunzip 3 gzip -dc "$gz"
measure gcviewer 1 "$java" -jar "$jar" "$log" "$scratch/gcviewer-summary.csv" -t SUMMARY
cmp -s <(grep -v '"path"' "$scratch/cqlbench.out") <(grep -v '"path"' "$scratch/cqlbench-1.out") ||
    echo "DIFFERENT: the report on all cores differs from the one on one core" >&2
figure() { cut -d' ' -f"$2" "$scratch/$1.figures"; }
awk -v all="$(figure cqlbench 1)" -v one="$(figure cqlbench-1 1)" -v grep="$(figure grep 1)" \
    -v gz="$(figure cqlbench-gz 1)" -v gunzip="$(figure gunzip 1)" -v gcv="$(figure gcviewer 1)" \
    -v gcvcpu="$(figure gcviewer 2)" -v cpu="$(figure cqlbench 2)" -v rss="$(figure cqlbench 3)" \
    -v gzrss="$(figure cqlbench-gz 3)" -v cores="$(nproc)" 'BEGIN {
    printf "all %d cores / grep -c Pause (wall): %.2f x grep'"'"'s time (target <= 1)\n", cores, all / grep
    printf "all cores / one core (wall): %.2f (one core %.2f s, all %.2f s)\n", all / one, one, all
    printf "GCViewer / cqlbench: %.1f x by wall time, %.1f x by CPU time (target >= 30 x)\n", gcv / all, gcvcpu / cpu
    printf "gzip input: %.2f s against %.2f s for gzip -dc alone (%.2f x)\n", gz, gunzip, gz / gunzip
    printf "peak RSS: %.1f MB plain, %.1f MB gzip (target <= 32 MB)\n", rss / 1024, gzrss / 1024 }'
echo "cqlbench pauses counted: $(grep -m1 '"count"' "$scratch/cqlbench.out" | tr -dc 0-9)" >&2
