#!/usr/bin/env bash
# Verifies by hand that every supported Cassandra/JDK/GC combination starts and serves CQL:
# for each one, a 1-node cluster on 127.0.1.1 (512M heap), one write + read back, the collector the
# live JVM reports, then down. Prints one line per combination. Takes ~10 minutes on 2 cores.
#   bash crates/cluster/scripts/verify-pairs.sh [FILTER]   (FILTER: substring of "version/jdk/gc")
set -uo pipefail
cd "$(dirname "$0")/../../.."
cargo build --release -q -p cqlbench -p cqlbench-cluster --example cql_roundtrip
cqlbench=target/release/cqlbench
roundtrip=target/release/examples/cql_roundtrip
combos=(
  4.0.19/11/cms 4.0.19/11/g1 4.0.19/11/zgc 4.0.19/11/shenandoah
  4.1.10/11/cms 4.1.10/11/g1 4.1.10/11/zgc 4.1.10/11/shenandoah
  5.0.9/17/g1 5.0.9/17/zgc 5.0.9/17/shenandoah
  5.0.9/21/g1 5.0.9/21/zgc 5.0.9/21/zgc-generational 5.0.9/21/shenandoah
  6.0-alpha2/17/g1 6.0-alpha2/21/g1
  5.0.9/25/g1 5.0.9/25/zgc-generational 5.0.9/25/shenandoah-generational
  6.0-alpha2/25/g1 6.0-alpha2/25/zgc-generational 6.0-alpha2/25/shenandoah-generational
)
for combo in "${combos[@]}"; do
  [[ -n "${1:-}" && "$combo" != *"$1"* ]] && continue
  IFS=/ read -r version jdk gc <<<"$combo"
  name="verify-${version//./-}"
  started=$(date +%s.%N)
  if out=$($cqlbench cluster up --name "$name" --base-ip 127.0.1.1 --cassandra "$version" --jdk "$jdk" --gc "$gc" --heap 512M 2>&1); then
    ready=$(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $started}")
    rt=$($roundtrip 127.0.1.1:9042 2>&1)
    collector=$($cqlbench cluster status --name "$name" --json | grep -o '"effective_collector": "[^"]*"' | head -1)
    echo "OK   $combo ready ${ready}s; $rt; $collector"
  else
    echo "FAIL $combo: $(echo "$out" | tail -1)"
  fi
  $cqlbench cluster destroy --name "$name" >/dev/null 2>&1
done
