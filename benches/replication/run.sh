#!/usr/bin/env bash
# Replication benchmark, ZooKeeper mode, brokers on 127.0.0.1 (docs/benchmarks.md has the
# figures). Per run, on a fresh cluster with topic `bench` (PARTITIONS partitions, replication
# factor 3, min.insync.replicas=2, created on the controller and settled with full ISRs):
#   throughput: librdkafka's rdkafka_performance produces COUNT records of SIZE bytes with
#               acks=-1 and linger.ms=5 (msg/s and MB/s of delivered records);
#   CPU:        the brokers' utime+stime (/proc/<pid>/stat, summed over the brokers) across the
#               throughput run, per GB (1e9 bytes) of record values produced; and the
#               producer's own (/usr/bin/time), per GB as well;
#   latency:    Kafka's ProducerPerformance at a fixed --throughput 10000 records/s of SIZE
#               bytes, acks=-1, linger.ms=LAT_LINGER_MS, for LAT_SECS; p50/p99/p99.9.
# The targets take turns, run by run; the median of RUNS runs of each column is reported. Targets:
#   kcli         three kcli brokers on a real ZooKeeper (Debian's), RF 3;
#   kcli-single  one kcli broker (single-node, embedded store), RF 1 (acks=-1 = the leader);
#   kafka        three Apache Kafka 3.9.1 brokers in ZooKeeper mode (heap KAFKA_HEAP_OPTS), RF 3.
# Usage: benches/replication/run.sh [targets...]   (default: kcli kcli-single kafka)
#        RUNS=3 COUNT=1000000 SIZE=1024 PARTITIONS=6 LAT_SECS=30 LAT_LINGER_MS=0
#        NUM_FETCHERS=1 (num.replica.fetchers, both brokers) WAIT_S=120 (every wait's deadline)
#        WARM_CPU_S=5 (every CPU kept busy this long right before each throughput run; 0: none)
#        WARM_MB=0 (page cache written and deleted before each throughput run, for a VM whose
#        free page reporting cannot be pinned; the default was 4096 before the pin)
#        REPORTING_ORDER=11 (this VM's free page reporting, pinned for the series and put back
#        afterwards when the knob is writable; 11 is above the largest buddy order, so nothing
#        is handed back to the host; `keep` leaves it as it is)
#        SKIP_BUILD=1 skips `cargo build --release --bin kcli`; KCLI=PATH runs another kcli binary
#        (an A/B of two builds; implies nothing is built).
# Needs: benches/serve/build-tools.sh (rdkafka_performance), tests/install-kafka-tools (Kafka
# 3.9.1's jars: the brokers and ProducerPerformance), Debian's zookeeper package, python3.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
targets=("${@:-kcli kcli-single kafka}")
read -r -a targets <<<"${targets[*]}"
RUNS=${RUNS:-3}
COUNT=${COUNT:-1000000}
SIZE=${SIZE:-1024}
PARTITIONS=${PARTITIONS:-6}
LAT_SECS=${LAT_SECS:-30}
LAT_LINGER_MS=${LAT_LINGER_MS:-0}
NUM_FETCHERS=${NUM_FETCHERS:-1}
WAIT_S=${WAIT_S:-120}
WARM_CPU_S=${WARM_CPU_S:-5}
WARM_MB=${WARM_MB:-0}
REPORTING_ORDER=${REPORTING_ORDER:-11}
reporting_knob=/sys/module/page_reporting/parameters/page_reporting_order
SESSION_MS=6000
KAFKA_HEAP_OPTS=${KAFKA_HEAP_OPTS:--Xmx512m -Xms512m}
zk_jar=/usr/share/java/zookeeper.jar
kafka_cp="$root/.tools/kafka-3.9.1/*"
perf=$root/.tools/librdkafka-bench/rdkafka_performance
cluster_measure=(python3 "$root/benches/cluster/measure.py")
measure=(python3 "$root/benches/replication/measure.py")
hz=$(getconf CLK_TCK)
KCLI=${KCLI:-$root/target/release/kcli}

die() { echo "benches/replication/run.sh: $*" >&2; exit 1; }
[ -f "$zk_jar" ] || die "$zk_jar missing: apt-get install -y --no-install-recommends zookeeper"
benches/serve/build-tools.sh
tests/install-kafka-tools
for t in "${targets[@]}"; do
  case $t in
    kafka) ;;
    kcli|kcli-single) [ -n "${SKIP_BUILD:-}" ] || [ "$KCLI" != "$root/target/release/kcli" ] || cargo build --release --quiet --bin kcli ;;
    *) die "unknown target $t (kcli, kcli-single, kafka)" ;;
  esac
done

work=$(mktemp -d)
# Every process started, by PID; disowned (bash would report their kill -9 as jobs), so cleanup
# polls for them to be gone.
pids=()
cleanup() {
  local p
  for p in "${pids[@]:-}"; do [ -n "$p" ] && kill -9 "$p" 2>/dev/null || true; done
  for p in "${pids[@]:-}"; do
    for _ in $(seq 1 200); do kill -0 "$p" 2>/dev/null || break; sleep 0.05; done
  done
  pids=()
}
# A guest with free page reporting hands freed memory back to its host after a moment, and
# each page the host took back faults in again, at ~2.6 CPU s per GB, when the page cache
# next takes it: a replicated run writes three times a single broker's pages and paid that
# on most of them, whatever the broker did (docs/benchmarks.md, "The host's page faults").
# Pinning the order above the largest free block stops the reporting for the series.
reporting_was=
restore_reporting() { [ -z "$reporting_was" ] || echo "$reporting_was" >"$reporting_knob"; }
trap 'cleanup; rm -rf "$work"; restore_reporting' EXIT
if [ "$REPORTING_ORDER" != keep ] && [ -w "$reporting_knob" ]; then
  reporting_was=$(cat "$reporting_knob")
  echo "$REPORTING_ORDER" >"$reporting_knob" || die "cannot set $reporting_knob to $REPORTING_ORDER"
fi
reporting_now=$(cat "$reporting_knob" 2>/dev/null || echo none)

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() { # port pid
  for _ in $(seq 1 $((WAIT_S * 20))); do
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
    kill -0 "$2" 2>/dev/null || return 1
    sleep 0.05
  done
  return 1
}
cpu_ticks() { local p t=0; for p in "$@"; do t=$((t + $(awk '{print $14+$15}' "/proc/$p/stat"))); done; echo "$t"; }

# start_zk DIR: a standalone ZooKeeper on a free port; sets ZK (as benches/cluster/run.sh).
start_zk() {
  local dir=$1 port; port=$(free_port)
  mkdir -p "$dir/data"
  cat >"$dir/zoo.cfg" <<EOF
tickTime=500
minSessionTimeout=1000
maxSessionTimeout=30000
dataDir=$dir/data
clientPort=$port
clientPortAddress=127.0.0.1
admin.enableServer=false
4lw.commands.whitelist=ruok,srvr,stat
EOF
  java -Xmx256m -XX:+UseSerialGC "-Dzookeeper.log.dir=$dir" \
    -cp "/etc/zookeeper/conf:$zk_jar:/usr/share/java/slf4j-simple.jar" \
    org.apache.zookeeper.server.ZooKeeperServerMain "$dir/zoo.cfg" >"$dir/zk.log" 2>&1 &
  pids+=($!)
  disown
  "${cluster_measure[@]}" zk-wait "$port" 60 || { tail -20 "$dir/zk.log" >&2; return 1; }
  ZK=127.0.0.1:$port
}

# start_<target> ID PORT DIR: one broker; sets BROKER_PID. Settings common to all: RF-3
# offsets topic, min.insync.replicas=2, no auto-creation.
start_kafka() {
  local id=$1 port=$2 dir=$3
  mkdir -p "$dir"
  cat >"$dir/server.properties" <<EOF
broker.id=$id
zookeeper.connect=$ZK
zookeeper.session.timeout.ms=$SESSION_MS
listeners=PLAINTEXT://127.0.0.1:$port
log.dirs=$dir/data
auto.create.topics.enable=false
offsets.topic.replication.factor=3
min.insync.replicas=2
num.replica.fetchers=$NUM_FETCHERS
EOF
  # shellcheck disable=SC2086
  java $KAFKA_HEAP_OPTS -server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 \
    -XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent -Djava.awt.headless=true \
    -cp "$kafka_cp" kafka.Kafka "$dir/server.properties" >"$dir/broker.log" 2>&1 &
  BROKER_PID=$!
}
start_kcli() {
  local id=$1 port=$2 dir=$3
  mkdir -p "$dir"
  "$KCLI" serve --zookeeper "$ZK" \
    --override "broker.id=$id" \
    --override "listeners=PLAINTEXT://127.0.0.1:$port" \
    --override "log.dirs=$dir/data" \
    --override "zookeeper.session.timeout.ms=$SESSION_MS" \
    --override "auto.create.topics.enable=false" \
    --override "offsets.topic.replication.factor=3" \
    --override "min.insync.replicas=2" \
    --override "num.replica.fetchers=$NUM_FETCHERS" >"$dir/broker.log" 2>&1 &
  BROKER_PID=$!
}
start_kcli_single() {
  local id=$1 port=$2 dir=$3
  mkdir -p "$dir"
  "$KCLI" serve \
    --override "broker.id=$id" \
    --override "listeners=PLAINTEXT://127.0.0.1:$port" \
    --override "log.dirs=$dir/data" \
    --override "auto.create.topics.enable=false" \
    --override "min.insync.replicas=2" >"$dir/broker.log" 2>&1 &
  BROKER_PID=$!
}

# one_run TARGET RUN: the cluster, the topic, the three measurements; appends a JSON line to
# $work/TARGET.jsonl. Everything is killed and removed afterwards.
one_run() {
  local target=$1 run=$2 dir=$work/$1-$2 specs=() brokers=() ids rf id port
  if [ "$target" = kcli-single ]; then ids=1; rf=1; else ids="1 2 3"; rf=3; start_zk "$dir/zk"; fi
  for id in $ids; do
    port=$(free_port)
    "start_${target//-/_}" "$id" "$port" "$dir/broker-$id"
    pids+=("$BROKER_PID")
    disown
    brokers+=("$BROKER_PID")
    specs+=("$id=127.0.0.1:$port:$BROKER_PID")
  done
  local bootstrap=()
  for spec in "${specs[@]}"; do
    id=${spec%%=*}; port=${spec#*:}; port=${port%%:*}
    bootstrap+=("127.0.0.1:$port")
    wait_port "$port" "${spec##*:}" || {
      tail -30 "$dir/broker-$id/broker.log" >&2
      die "$target broker $id (port $port) did not start"
    }
  done
  local specs_csv bootstrap_csv
  specs_csv=$(IFS=,; echo "${specs[*]}")
  bootstrap_csv=$(IFS=,; echo "${bootstrap[*]}")
  "${measure[@]}" create --brokers "$specs_csv" --partitions "$PARTITIONS" --rf "$rf" \
    --timeout "$WAIT_S" >/dev/null || die "$target run $run: topic creation failed"

  local t0 t1 p
  # Each run starts with the page cache empty (when this runs as root), so earlier runs' dirty
  # and cached pages do not make this one reclaim them: without it the same binary's figures
  # drift by a fifth from run to run.
  if [ -w /proc/sys/vm/drop_caches ]; then sync; echo 3 >/proc/sys/vm/drop_caches; fi
  # WARM_MB of page cache written and deleted at once makes the next WARM_MB of fresh pages
  # ones the guest just had, for a VM whose free page reporting could not be pinned above: there
  # a page idle for seconds faults back in from the host at ~2.6 CPU s per GB written against
  # ~0.2 for a recently freed one, and a run writing 3 GB (RF 3) pays it on more of its pages
  # than one writing 1 GB (docs/benchmarks.md, "The host's page faults").
  if [ "$WARM_MB" -gt 0 ]; then
    dd if=/dev/zero of="$work/warm" bs=1M count="$WARM_MB" status=none
    rm -f "$work/warm"
  fi
  # Then every CPU spins for WARM_CPU_S: after the seconds of near-idle that setting up a
  # cluster takes, this VM ran the next few seconds of a replicated run at two thirds of its
  # rate (273k against 440-509k msg/s, at the same broker CPU per GB), and a 1M-record run
  # lasts only about that long ("Warm CPUs" in docs/benchmarks.md).
  if [ "$WARM_CPU_S" -gt 0 ]; then
    local spinners=() _
    for _ in $(seq 1 "$(nproc)"); do
      timeout "$WARM_CPU_S" sh -c 'while :; do :; done' &
      spinners+=($!)
    done
    wait "${spinners[@]}" || true
  fi
  t0=$(cpu_ticks "${brokers[@]}")
  p=$(timeout $((WAIT_S * 5)) /usr/bin/time -f '%U %S' -o "$dir/producer.time" \
      "$perf" -P -t bench -b "$bootstrap_csv" -s "$SIZE" -c "$COUNT" -a -1 \
      -X linger.ms=5 -u -q 2>/dev/null |
    awk -F'|' '/^\|/ && $2 ~ /[0-9]/ {row=$0} END {split(row,f,"|"); printf "%d %.2f", f[7], f[8]}') ||
    die "$target run $run: rdkafka_performance failed"
  t1=$(cpu_ticks "${brokers[@]}")
  [ -n "$p" ] && [ "${p%% *}" != 0 ] || die "$target run $run: rdkafka_performance reported nothing"

  java -Xmx512m -cp "$kafka_cp" org.apache.kafka.tools.ProducerPerformance --topic bench \
    --num-records $((LAT_SECS * 10000)) --record-size "$SIZE" --throughput 10000 \
    --producer-props "bootstrap.servers=$bootstrap_csv" acks=-1 "linger.ms=$LAT_LINGER_MS" \
    enable.idempotence=false >"$dir/lat.txt" 2>"$dir/lat.err" ||
    { tail -5 "$dir/lat.err" >&2; die "$target run $run: ProducerPerformance failed"; }
  # "... N ms 50th, N ms 95th, N ms 99th, N ms 99.9th." is the summary line's tail.
  local lat
  lat=$(tail -1 "$dir/lat.txt" | sed -nE 's/.* ([0-9]+) ms 50th, ([0-9]+) ms 95th, ([0-9]+) ms 99th, ([0-9]+) ms 99.9th.*/\1 \3 \4/p')
  [ -n "$lat" ] || die "$target run $run: no latency summary in $(tail -1 "$dir/lat.txt")"

  local producer_cpu
  producer_cpu=$(awk 'NF == 2 {print $1 + $2}' "$dir/producer.time")
  awk -v p="$p" -v lat="$lat" -v a="$t0" -v b="$t1" -v hz="$hz" -v n="$COUNT" -v s="$SIZE" \
    -v pc="$producer_cpu" 'BEGIN {
      split(p, t, " "); split(lat, l, " "); gb = n * s / 1e9
      printf "{\"msgs_s\": %d, \"mb_s\": %.2f, \"p50_ms\": %d, \"p99_ms\": %d, \"p999_ms\": %d, \"cpu_s_per_gb\": %.2f, \"producer_cpu_s_per_gb\": %.2f}\n",
        t[1], t[2], l[1], l[2], l[3], (b - a) / hz / gb, pc / gb }' >>"$work/$target.jsonl"
  echo "  $target run $run: $(tail -1 "$work/$target.jsonl")" >&2
  cleanup
  rm -rf "$dir"
}

# The targets take turns, run by run (run 1 of each, then run 2 of each, ...): this VM's speed
# drifts over the minutes of a series (broker CPU per GB of one binary has ranged 2.1-3.9), and
# turns put every target on the same stretch of it, so the ratio between targets holds.
for target in "${targets[@]}"; do : >"$work/$target.jsonl"; done
for run in $(seq 1 "$RUNS"); do
  for target in "${targets[@]}"; do one_run "$target" "$run"; done
done
rows=()
for target in "${targets[@]}"; do
  rows+=("$("${measure[@]}" row "$target" "$work/$target.jsonl")")
done

echo
echo "$COUNT x $SIZE B records, $PARTITIONS partitions, acks=-1, linger.ms=5, min.insync.replicas=2, num.replica.fetchers=$NUM_FETCHERS; latency at 10000 records/s for ${LAT_SECS}s, linger.ms=$LAT_LINGER_MS; medians of $RUNS runs; page_reporting_order=$reporting_now, WARM_CPU_S=$WARM_CPU_S, WARM_MB=$WARM_MB"
echo
echo "| target | produce msg/s | MB/s | p50 ms | p99 ms | p99.9 ms | broker CPU s per GB | producer CPU s per GB | runs | msg/s per run |"
echo "|---|---|---|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
