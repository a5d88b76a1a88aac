#!/usr/bin/env bash
# kcli dump-segment on 1 GiB segments of 1 KiB records (1 and 16 records per batch), output to
# /dev/null, warm page cache, median of 5 runs, beside `cat file > /dev/null` in the same run
# and Kafka 3.9.1's own kafka.tools.DumpLogSegments (one run each, JVM start included; needs
# tests/install-kafka-tools). Segments come from benches/rebuild_index/make_segment.py.
# Usage: benches/dump_segment/run.sh [WORKDIR] (default /tmp/kcli-bench)
set -euo pipefail
cd "$(dirname "$0")/../.."
work=${1:-/tmp/kcli-bench}
kcli=$PWD/target/release/kcli
jars=$PWD/.tools/kafka-3.9.1
cargo build --release -q
median() { sort -n | sed -n 3p; }
secs() { local s e; s=$(date +%s.%N); "$@" >/dev/null 2>&1; e=$(date +%s.%N); echo "$e - $s" | bc; }
gbs() { echo "1.073741824 / $1" | bc -l; }
printf '| records/batch | cat | dump | ratio | --deep-iteration | ratio | --print-data-log | --format json --deep-iteration | Kafka shallow | Kafka --deep-iteration |\n'
printf '|---|---|---|---|---|---|---|---|---|---|\n'
for per in 16 1; do
  dir=$work/b$per/t-0
  log=$dir/00000000000000000000.log
  mkdir -p "$dir"
  [ -f "$log" ] || python3 benches/rebuild_index/make_segment.py "$log" "$per" 1073741824 >/dev/null
  cat "$log" >/dev/null
  c=$(for _ in 1 2 3 4 5; do secs cat "$log"; done | median)
  s=$(for _ in 1 2 3 4 5; do secs "$kcli" dump-segment "$log"; done | median)
  d=$(for _ in 1 2 3 4 5; do secs "$kcli" dump-segment --deep-iteration "$log"; done | median)
  p=$(for _ in 1 2 3 4 5; do secs "$kcli" dump-segment --print-data-log "$log"; done | median)
  j=$(for _ in 1 2 3 4 5; do secs "$kcli" dump-segment --format json --deep-iteration "$log"; done | median)
  ks=n/a kd=n/a
  if [ -f "$jars/.complete" ]; then
    ks=$(printf "%.2f s" "$(secs java -cp "$jars/*" kafka.tools.DumpLogSegments --files "$log")")
    kd=$(printf "%.2f s" "$(secs java -cp "$jars/*" kafka.tools.DumpLogSegments --deep-iteration --files "$log")")
  fi
  printf '| %s | %.3f s | %.3f s (%.1f GB/s) | %.1f× | %.3f s (%.1f GB/s) | %.1f× | %.3f s | %.3f s | %s | %s |\n' \
    "$per" "$c" "$s" "$(gbs "$s")" "$(echo "$s / $c" | bc -l)" "$d" "$(gbs "$d")" "$(echo "$d / $c" | bc -l)" \
    "$p" "$j" "$ks" "$kd"
done
