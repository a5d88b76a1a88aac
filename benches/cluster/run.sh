#!/usr/bin/env bash
# Cluster benchmarks, ZooKeeper mode, three brokers on 127.0.0.1 (docs/benchmarks.md has the
# figures):
#   create:   CreateTopics of `bench` (PARTITIONS partitions, RF 3), sent to the controller,
#             until every broker's own Metadata shows every partition with a leader;
#   failover: kill -9 of the controller until every surviving broker's Metadata shows every
#             partition of `bench` led by a live broker (neither -1 nor the killed id);
#   MODE=txn: instead, benches/serve/TxnBench.java (kafka-clients 3.9.1) on the three brokers:
#             an RF-3 topic (min.insync.replicas 2), TXN_RECORDS 1 KiB records in transactions
#             of TXN_PER_COMMIT, commitTransaction() timed, then TXN_VISIBLE one-record commits
#             timed until read_committed sees them (`__transaction_state` with its defaults:
#             50 partitions, RF 3, min ISR 2).
# Each run gets a fresh ZooKeeper (Debian's) and three fresh brokers; the median of RUNS runs is
# reported. Brokers use zookeeper.session.timeout.ms=$SESSION_MS: after a kill -9 nothing
# happens until ZooKeeper expires the dead broker's session, so the failover time is that
# timeout plus the election and the metadata propagation.
# Usage: benches/cluster/run.sh [targets...]   (targets: kafka kcli; default both)
#        RUNS=3 PARTITIONS=1000 SESSION_MS=6000 WAIT_S=300 (the deadline of every wait)
#        MODE=txn TXN_RECORDS=200000 TXN_PER_COMMIT=1000 TXN_VISIBLE=300
#        SKIP_BUILD=1 skips `cargo build --release --bin kcli`.
# Needs: tests/install-kafka-tools (Kafka 3.9.1's jars), Debian's zookeeper package, python3.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
targets=("${@:-kafka kcli}")
read -r -a targets <<<"${targets[*]}"
RUNS=${RUNS:-3}
PARTITIONS=${PARTITIONS:-1000}
SESSION_MS=${SESSION_MS:-6000}
WAIT_S=${WAIT_S:-300}
MODE=${MODE:-metadata}
TXN_RECORDS=${TXN_RECORDS:-200000}
TXN_PER_COMMIT=${TXN_PER_COMMIT:-1000}
TXN_VISIBLE=${TXN_VISIBLE:-300}
KAFKA_HEAP_OPTS=${KAFKA_HEAP_OPTS:--Xmx512m -Xms512m}
zk_jar=/usr/share/java/zookeeper.jar
kafka_cp="$root/.tools/kafka-3.9.1/*"
measure=(python3 "$root/benches/cluster/measure.py")

die() { echo "benches/cluster/run.sh: $*" >&2; exit 1; }
[ -f "$zk_jar" ] || die "$zk_jar missing: apt-get install -y --no-install-recommends zookeeper"
for t in "${targets[@]}"; do
  case $t in
    kafka) tests/install-kafka-tools ;;
    kcli)
      [ -n "${SKIP_BUILD:-}" ] || cargo build --release --quiet --bin kcli
      "$root/target/release/kcli" serve --help 2>&1 | grep -q -- --zookeeper ||
        die "target/release/kcli serve has no --zookeeper (cluster mode): nothing to measure" ;;
    *) die "unknown target $t (kafka, kcli)" ;;
  esac
done

work=$(mktemp -d)
# Every process started, by PID. They are disowned (so bash does not report the controller's
# intended kill -9 as a "Killed" job), hence cleanup polls for them to be gone, not `wait`.
pids=()
cleanup() {
  local p
  for p in "${pids[@]:-}"; do [ -n "$p" ] && kill -9 "$p" 2>/dev/null || true; done
  for p in "${pids[@]:-}"; do
    for _ in $(seq 1 200); do kill -0 "$p" 2>/dev/null || break; sleep 0.05; done
  done
  pids=()
}
trap 'cleanup; rm -rf "$work"' EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() { # port pid
  for _ in $(seq 1 $((WAIT_S * 20))); do
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
    kill -0 "$2" 2>/dev/null || return 1
    sleep 0.05
  done
  return 1
}

# start_zk DIR: a standalone ZooKeeper on a free port (tick 500 ms, sessions 1-30 s); sets ZK.
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
  "${measure[@]}" zk-wait "$port" 60 || { tail -20 "$dir/zk.log" >&2; return 1; }
  ZK=127.0.0.1:$port
}

# start_<target> ID PORT DIR: one broker of the cluster on ZooKeeper $ZK; sets BROKER_PID.
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
EOF
  # kafka-server-start.sh's JVM flags, with a small heap.
  # shellcheck disable=SC2086
  java $KAFKA_HEAP_OPTS -server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 \
    -XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent -Djava.awt.headless=true \
    -cp "$kafka_cp" kafka.Kafka "$dir/server.properties" >"$dir/broker.log" 2>&1 &
  BROKER_PID=$!
}
start_kcli() {
  local id=$1 port=$2 dir=$3
  mkdir -p "$dir"
  "$root/target/release/kcli" serve --zookeeper "$ZK" \
    --override "broker.id=$id" \
    --override "listeners=PLAINTEXT://127.0.0.1:$port" \
    --override "log.dirs=$dir/data" \
    --override "zookeeper.session.timeout.ms=$SESSION_MS" \
    --override "auto.create.topics.enable=false" \
    --override "offsets.topic.replication.factor=3" >"$dir/broker.log" 2>&1 &
  BROKER_PID=$!
}

# one_run TARGET RUN: ZooKeeper, three brokers, measure.py run; appends its JSON line to
# $work/TARGET.jsonl. Everything is killed and removed afterwards.
one_run() {
  local target=$1 run=$2 dir=$work/$1-$2 specs=() id port load
  load=$(cut -d' ' -f1 /proc/loadavg)
  start_zk "$dir/zk"
  for id in 1 2 3; do
    port=$(free_port)
    "start_$target" "$id" "$port" "$dir/broker-$id"
    pids+=("$BROKER_PID")
    disown
    specs+=("$id=127.0.0.1:$port:$BROKER_PID")
  done
  for spec in "${specs[@]}"; do
    id=${spec%%=*}; port=${spec#*:}; port=${port%%:*}
    wait_port "$port" "${spec##*:}" || {
      tail -30 "$dir/broker-$id/broker.log" >&2
      die "$target broker $id (port $port) did not start"
    }
  done
  local specs_csv; specs_csv=$(IFS=,; echo "${specs[*]}")
  if [ "$MODE" = txn ]; then
    local bootstrap="" spec out
    for spec in "${specs[@]}"; do bootstrap+="${bootstrap:+,}127.0.0.1:$(echo "$spec" | cut -d: -f2)"; done
    if ! out=$(timeout $((WAIT_S * 2)) java -Xmx512m -cp "$work/classes:$kafka_cp" TxnBench \
        "$bootstrap" txnc "$TXN_RECORDS" "$TXN_PER_COMMIT" "$TXN_VISIBLE" 3 2>"$dir/bench.err" | tail -1); then
      tail -20 "$dir/bench.err" >&2
      die "$target txn run $run failed"
    fi
    echo "$out" >>"$work/$target.jsonl"
    echo "  $target run $run: $out" >&2
    cleanup
    rm -rf "$dir"
    return
  fi
  if ! timeout $((WAIT_S * 4)) "${measure[@]}" run --brokers "$specs_csv" \
      --partitions "$PARTITIONS" --rf 3 --timeout "$WAIT_S" >>"$work/$target.jsonl"; then
    for id in 1 2 3; do echo "--- broker $id log tail" >&2; tail -15 "$dir/broker-$id/broker.log" >&2; done
    die "$target run $run failed"
  fi
  echo "  $target run $run (load average $load -> $(cut -d' ' -f1 /proc/loadavg)): $(tail -1 "$work/$target.jsonl")" >&2
  cleanup
  rm -rf "$dir"
}

if [ "$MODE" = txn ]; then
  mkdir -p "$work/classes"
  javac -nowarn -cp "$kafka_cp" -d "$work/classes" "$root/benches/serve/TxnBench.java"
  echo
  echo "| target | commits | transactional produce (median of $RUNS) | commitTransaction p50 / p99 | commit to read_committed p50 / p99 |"
  echo "|---|---|---|---|---|"
  for target in "${targets[@]}"; do
    : >"$work/$target.jsonl"
    for run in $(seq 1 "$RUNS"); do one_run "$target" "$run"; done
    python3 - "$target" "$TXN_PER_COMMIT" "$work/$target.jsonl" <<'PY'
import json, sys
target, per_commit, path = sys.argv[1:4]
runs = sorted((json.loads(l) for l in open(path) if l.strip()), key=lambda d: d["msgs_per_s"])
d = runs[len(runs) // 2]
print("| %s | every %s records | %d msg/s | %.1f / %.1f ms | %.1f / %.1f ms |" % (
    target, per_commit, d["msgs_per_s"], d["commit_ms_p50"], d["commit_ms_p99"],
    d["visible_ms_p50"], d["visible_ms_p99"]))
PY
  done
  exit 0
fi

rows=()
for target in "${targets[@]}"; do
  : >"$work/$target.jsonl"
  for run in $(seq 1 "$RUNS"); do one_run "$target" "$run"; done
  rows+=("$("${measure[@]}" row "$target" "$SESSION_MS" "$work/$target.jsonl")")
done

echo
echo "| target | create $PARTITIONS partitions RF 3 (median) | controller failover (median) | zookeeper.session.timeout.ms | new controller known (median) | runs | per run, s |"
echo "|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
