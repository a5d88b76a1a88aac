#!/usr/bin/env bash
# kcli rebuild-index on 1 GiB segments of 1 KiB records (1 and 16 records per batch), warm page
# cache, median of 5 runs, beside `cat file > /dev/null` and Kafka 3.9.1's own index rebuild
# (LogSegment.recover, timed inside a warm JVM: kafka/RecoverTime.java; needs
# tests/install-kafka-tools). Usage: benches/rebuild_index/run.sh [WORKDIR] (default /tmp/kcli-bench)
set -euo pipefail
cd "$(dirname "$0")/../.."
work=${1:-/tmp/kcli-bench}
kcli=$PWD/target/release/kcli
jars=$PWD/.tools/kafka-3.9.1
cargo build --release -q
mkdir -p "$work"
median() { sort -n | sed -n 3p; }
secs() { local s e; s=$(date +%s.%N); "$@" >/dev/null 2>&1; e=$(date +%s.%N); echo "$e - $s" | bc; }
if [ -f "$jars/.complete" ]; then
  javac -nowarn -cp "$jars/*" -d "$work" benches/rebuild_index/kafka/RecoverTime.java
fi
printf '| records/batch | cat | rebuild-index | ratio | --verify | ratio | --verify --strict | Kafka LogSegment.recover |\n'
printf '|---|---|---|---|---|---|---|---|\n'
for per in 16 1; do
  dir=$work/b$per/t-0
  log=$dir/00000000000000000000.log
  mkdir -p "$dir"
  [ -f "$log" ] || python3 benches/rebuild_index/make_segment.py "$log" "$per" 1073741824 >/dev/null
  cat "$log" >/dev/null
  c=$(for _ in 1 2 3 4 5; do secs cat "$log"; done | median)
  r=$(for _ in 1 2 3 4 5; do rm -f "$dir"/*index; secs "$kcli" rebuild-index "$dir"; done | median)
  v=$(for _ in 1 2 3 4 5; do secs "$kcli" rebuild-index "$dir" --verify; done | median)
  s=$(for _ in 1 2 3 4 5; do secs "$kcli" rebuild-index "$dir" --verify --strict; done | median)
  k=n/a
  if [ -f "$jars/.complete" ]; then
    k=$(printf "%.3f s" "$(java -cp "$work:$jars/*" RecoverTime "$dir" 5 | median)")
    "$kcli" rebuild-index "$dir" --verify --strict >/dev/null  # Kafka's indexes are ours, byte for byte
  fi
  printf '| %s | %.3f s | %.3f s | %.1f× | %.3f s | %.1f× | %.3f s | %s |\n' \
    "$per" "$c" "$r" "$(echo "$r / $c" | bc -l)" "$v" "$(echo "$v / $c" | bc -l)" "$s" "$k"
done
