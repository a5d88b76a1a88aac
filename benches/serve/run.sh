#!/usr/bin/env bash
# End-to-end broker benchmarks with real clients (docs/benchmarks.md has the figures):
#   throughput: librdkafka's rdkafka_performance producing 100 B and 1 KiB records, acks=1 and
#               acks=-1, to 1 and 8 partitions, against kcli serve (release), librdkafka's mock
#               cluster (a separate process) and Apache Kafka 3.9.1 (KRaft, one node), then a
#               librdkafka consumer reading everything back;
#   latency:    Kafka's ProducerPerformance at a fixed 10k records/s (100 B, acks=1,
#               linger.ms=0), median of 3 runs of LAT_SECS each (default 60);
#   recompress: 1 KiB records produced uncompressed (acks=1, 1 partition) to a broker whose
#               compression.type is lz4 or zstd, so the broker recompresses every batch;
#               throughput and broker CPU per GB produced (kcli and kafka only);
#   txn:        Kafka's ProducerPerformance with a transactional id (1 KiB records, a commit
#               every TXN_MS ms, default 100), then librdkafka's consumer reading partition 0
#               read_committed (its default); median of RUNS_TXN runs (kcli and kafka only);
#   txncommit:  benches/serve/TxnBench.java (kafka-clients 3.9.1): TXN_RECORDS 1 KiB records in
#               transactions of TXN_PER_COMMIT (default 1000) with commitTransaction() timed,
#               then TXN_VISIBLE one-record transactions timed from commit until read_committed
#               ListOffsets sees them; median of RUNS_TXN runs (kcli and kafka only);
#   quota:      kcli only: 100 B records produced (acks=1) to 1 partition and read back, with
#               no quota configured and with producer and consumer quotas that are never
#               reached (1 TB/s for every client id, set with kafka-configs), runs alternating,
#               median of RUNS_QUOTA (default 5): what measuring a quota costs a client;
#   quotarates: a producer and then a consumer (benches/serve/quota_rates.py, librdkafka) each
#               with a 1 MiB/s byte-rate quota for its client id, set with kafka-configs,
#               running flat out for QUOTA_SECS (default 60): the MiB acknowledged or consumed
#               in each second, kcli beside kafka on the same schedule;
#   broker CPU (utime+stime) and peak RSS (VmHWM) from /proc.
# Usage: benches/serve/run.sh [targets...]   (targets: kcli mock kafka; default all)
#        SECTIONS="throughput rss latency recompress txn txncommit" (default all) picks the tables.
# Needs: benches/serve/build-tools.sh, tests/install-kafka-tools. Everything on 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
tools=$root/.tools/librdkafka-bench
perf=$tools/rdkafka_performance
benches/serve/build-tools.sh
tests/install-kafka-tools
[ -n "${SKIP_BUILD:-}" ] || cargo build --release --quiet --bin kcli
targets=("${@:-kcli mock kafka}")
read -r -a targets <<<"${targets[*]}"
COUNT_100=${COUNT_100:-2000000}
COUNT_1K=${COUNT_1K:-500000}
LAT_SECS=${LAT_SECS:-60}
SECTIONS=${SECTIONS:-throughput rss latency recompress txn txncommit quota quotarates}
QUOTA_SECS=${QUOTA_SECS:-60}
RUNS_QUOTA=${RUNS_QUOTA:-5}
RUNS_RC=${RUNS_RC:-3}
RUNS_TXN=${RUNS_TXN:-3}
TXN_MS=${TXN_MS:-100}
TXN_RECORDS=${TXN_RECORDS:-200000}
TXN_PER_COMMIT=${TXN_PER_COMMIT:-1000}
TXN_VISIBLE=${TXN_VISIBLE:-300}
wants() { [[ " $SECTIONS " == *" $1 "* ]]; }
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]:-}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() { for _ in $(seq 1 600); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.05; done; echo "port $1 never opened" >&2; return 1; }
cpu_ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }
hwm_kb() { awk '/VmHWM/{print $2}' "/proc/$1/status"; }

# start_<target> PARTITIONS [KEY=VALUE...]: sets BOOTSTRAP and BROKER_PID; the pairs are broker
# configs (kcli and kafka).
start_kcli() {
  local port dir over=(); port=$(free_port); dir=$work/kcli-$RANDOM
  for kv in "${@:2}"; do over+=(--override "$kv"); done
  "$root/target/release/kcli" serve --override "listeners=PLAINTEXT://127.0.0.1:$port" \
    --override "log.dirs=$dir" --override "num.partitions=$1" "${over[@]}" >"$work/kcli.log" 2>&1 &
  BROKER_PID=$!; pids+=("$BROKER_PID"); wait_port "$port"; BOOTSTRAP=127.0.0.1:$port
}
start_mock() {
  "$tools/mockcluster" 1 3600 perf "$1" >"$work/mock.addr" &
  BROKER_PID=$!; pids+=("$BROKER_PID")
  for _ in $(seq 1 100); do [ -s "$work/mock.addr" ] && break; sleep 0.05; done
  BOOTSTRAP=$(head -1 "$work/mock.addr")
}
start_kafka() {
  local port cport dir; port=$(free_port); cport=$(free_port); dir=$work/kafka-$RANDOM
  mkdir -p "$dir"
  cat >"$dir/server.properties" <<EOF
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$cport
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$cport
advertised.listeners=PLAINTEXT://127.0.0.1:$port
controller.listener.names=CONTROLLER
log.dirs=$dir/data
num.partitions=$1
offsets.topic.replication.factor=1
EOF
  [ $# -gt 1 ] && printf '%s\n' "${@:2}" >>"$dir/server.properties"
  local cp="$root/.tools/kafka-3.9.1/*"
  java -cp "$cp" kafka.tools.StorageTool format -t "$(java -cp "$cp" kafka.tools.StorageTool random-uuid)" \
    -c "$dir/server.properties" >/dev/null
  java -Xmx1g -Xms1g -cp "$cp" kafka.Kafka "$dir/server.properties" >"$work/kafka.log" 2>&1 &
  BROKER_PID=$!; pids+=("$BROKER_PID"); wait_port "$port"; BOOTSTRAP=127.0.0.1:$port
  sleep 2
}
stop_broker() { kill "$BROKER_PID" 2>/dev/null || true; wait "$BROKER_PID" 2>/dev/null || true; }

# The last table row of rdkafka_performance: msgs/s and MB/s of delivered (producer) or
# consumed records.
produce_run() { # bootstrap topic size count acks
  timeout 300 "$perf" -P -t "$2" -b "$1" -s "$3" -c "$4" -a "$5" -X linger.ms=5 -u -q 2>/dev/null |
    awk -F'|' '/^\|/ && $2 ~ /[0-9]/ {row=$0} END {split(row,f,"|"); printf "%d msg/s %.1f MB/s", f[7], f[8]}'
}
consume_run() { # bootstrap topic count partitions: partition 0 only, to its end (-e); the
  # librdkafka tool reads one partition without a consumer group.
  timeout 120 "$perf" -C -t "$2" -b "$1" -p 0 -o beginning -e -u -q -X fetch.wait.max.ms=10 2>/dev/null |
    awk -F'|' '/^\|/ && $2 ~ /[0-9]/ {row=$0} END {split(row,f,"|"); printf "%d msg/s %.1f MB/s", f[6], f[7]}'
}

if wants throughput; then
echo "| target | partitions | record | acks | produce | consume | broker CPU s | peak RSS MB |"
echo "|---|---|---|---|---|---|---|---|"
for target in "${targets[@]}"; do
  for parts in 1 8; do
    for size in 100 1024; do
      for acks in 1 -1; do
        count=$COUNT_100; [ "$size" = 1024 ] && count=$COUNT_1K
        "start_$target" "$parts"
        topic=perf
        [ "$target" = mock ] || topic="perf-$size-$acks"
        t0=$(cpu_ticks "$BROKER_PID")
        p=$(produce_run "$BOOTSTRAP" "$topic" "$size" "$count" "$acks")
        c=-
        # The mock keeps only 5 MiB per partition: it is a producer-side ceiling only.
        [ "$target" = mock ] || [ "$parts" != 1 ] || c=$(consume_run "$BOOTSTRAP" "$topic" "$count" "$parts")
        t1=$(cpu_ticks "$BROKER_PID")
        cpu=$(awk -v a="$t0" -v b="$t1" -v hz="$(getconf CLK_TCK)" 'BEGIN{printf "%.1f", (b-a)/hz}')
        rss=$(($(hwm_kb "$BROKER_PID") / 1024))
        echo "| $target | $parts | $size B | $acks | $p | $c | $cpu | $rss |"
        stop_broker
      done
    done
  done
done
fi

if wants rss; then
echo
echo "| target | partitions | records | peak RSS MB |"
echo "|---|---|---|---|"
for target in "${targets[@]}"; do
  [ "$target" = mock ] && continue
  "start_$target" 100
  timeout 300 "$perf" -P -t many -b "$BOOTSTRAP" -s 1024 -c "$COUNT_1K" -a 1 -p -1 -X linger.ms=5 -u -q >/dev/null 2>&1
  echo "| $target | 100 | $COUNT_1K x 1 KiB | $(($(hwm_kb "$BROKER_PID") / 1024)) |"
  stop_broker
done
fi

if wants latency; then
echo
echo "| target | p50 ms | p99 ms | p99.9 ms | (median of 3 runs, ProducerPerformance --throughput 10000, ${LAT_SECS}s) |"
echo "|---|---|---|---|---|"
cp="$root/.tools/kafka-3.9.1/*"
for target in "${targets[@]}"; do
  [ "$target" = mock ] && continue
  results=()
  for run in 1 2 3; do
    "start_$target" 1
    java -Xmx512m -cp "$cp" org.apache.kafka.tools.ProducerPerformance --topic "lat$run" \
      --num-records $((LAT_SECS * 10000)) --record-size 100 --throughput 10000 \
      --producer-props "bootstrap.servers=$BOOTSTRAP" acks=1 linger.ms=0 enable.idempotence=false \
      >"$work/lat.txt" 2>/dev/null
    # "... 50th, 99th, 99.9th" is the summary line's tail.
    results+=("$(tail -1 "$work/lat.txt" | sed -E 's/.* ([0-9]+) ms 50th, ([0-9]+) ms 95th, ([0-9]+) ms 99th, ([0-9]+) ms 99.9th.*/\1 \3 \4/')")
    stop_broker
  done
  printf '%s\n' "${results[@]}" | sort -n -k2 | sed -n 2p |
    awk -v t="$target" '{printf "| %s | %s | %s | %s | runs: |\n", t, $1, $2, $3}'
  printf '%s\n' "${results[@]}" | sed 's/^/  run: /'
done
fi

if wants recompress; then
echo
echo "| target | compression.type | produce (median of $RUNS_RC) | broker CPU s per GB | stored MB per GB |"
echo "|---|---|---|---|---|"
for target in "${targets[@]}"; do
  [ "$target" = mock ] && continue
  for codec in lz4 zstd; do
    rows=()
    for run in $(seq 1 "$RUNS_RC"); do
      "start_$target" 1 "compression.type=$codec"
      t0=$(cpu_ticks "$BROKER_PID")
      p=$(produce_run "$BOOTSTRAP" "rc-$codec" 1024 "$COUNT_1K" 1)
      t1=$(cpu_ticks "$BROKER_PID")
      stored=$(find "$work" -path "*rc-$codec-0/*.log" -printf '%s\n' | awk '{s+=$1} END {print s+0}')
      # CPU seconds and stored bytes per GB (1e9 bytes) of record values produced.
      rows+=("$(awk -v a="$t0" -v b="$t1" -v hz="$(getconf CLK_TCK)" -v n="$COUNT_1K" -v st="$stored" -v p="$p" \
        'BEGIN{gb=n*1024/1e9; printf "%s|%.2f|%.0f", p, (b-a)/hz/gb, st/1e6/gb}')")
      stop_broker
      rm -rf "$work"/kcli-* "$work"/kafka-*
    done
    printf '%s\n' "${rows[@]}" | sed 's/^/  run: /' >&2
    printf '%s\n' "${rows[@]}" | sort -t'|' -k1 -n | sed -n "$(((RUNS_RC + 1) / 2))p" |
      awk -F'|' -v t="$target" -v c="$codec" '{printf "| %s | %s | %s | %s | %s |\n", t, c, $1, $2, $3}'
  done
done
fi

if wants txn; then
echo
echo "| target | commits | record | transactional produce (median of $RUNS_TXN) | read_committed consume | broker CPU s |"
echo "|---|---|---|---|---|---|"
cp="$root/.tools/kafka-3.9.1/*"
for target in "${targets[@]}"; do
  [ "$target" = mock ] && continue
  rows=()
  for run in $(seq 1 "$RUNS_TXN"); do
    # One node: __transaction_state with one replica (kcli's single node does so by itself).
    "start_$target" 1 transaction.state.log.replication.factor=1 transaction.state.log.min.isr=1
    t0=$(cpu_ticks "$BROKER_PID")
    java -Xmx512m -cp "$cp" org.apache.kafka.tools.ProducerPerformance --topic txn \
      --num-records "$COUNT_1K" --record-size 1024 --throughput -1 \
      --transactional-id "bench-$run" --transaction-duration-ms "$TXN_MS" \
      --producer-props "bootstrap.servers=$BOOTSTRAP" linger.ms=5 >"$work/txn.txt" 2>/dev/null
    # "N records sent, X records/sec (Y MB/sec), ..." is the summary line.
    p=$(tail -1 "$work/txn.txt" | sed -E 's/^[0-9]+ records sent, ([0-9]+)[0-9.]* records\/sec \(([0-9.]+) MB\/sec\).*/\1 msg\/s \2 MB\/s/')
    c=$(consume_run "$BOOTSTRAP" txn "$COUNT_1K" 1)
    t1=$(cpu_ticks "$BROKER_PID")
    cpu=$(awk -v a="$t0" -v b="$t1" -v hz="$(getconf CLK_TCK)" 'BEGIN{printf "%.1f", (b-a)/hz}')
    rows+=("$p|$c|$cpu")
    echo "  run: $p | $c | $cpu" >&2
    stop_broker
  done
  printf '%s\n' "${rows[@]}" | sort -n -t'|' -k1 | sed -n "$(( (RUNS_TXN + 1) / 2 ))p" |
    awk -F'|' -v t="$target" -v ms="$TXN_MS" '{printf "| %s | every %s ms | 1 KiB | %s | %s | %s |\n", t, ms, $1, $2, $3}'
done
fi

if wants txncommit; then
echo
echo "| target | commits | record | transactional produce (median of $RUNS_TXN) | commitTransaction p50 / p99 | commit to read_committed p50 / p99 | broker CPU s |"
echo "|---|---|---|---|---|---|---|"
cp="$root/.tools/kafka-3.9.1/*"
mkdir -p "$work/classes"
javac -nowarn -cp "$cp" -d "$work/classes" "$root/benches/serve/TxnBench.java"
for target in "${targets[@]}"; do
  [ "$target" = mock ] && continue
  rows=()
  for run in $(seq 1 "$RUNS_TXN"); do
    "start_$target" 1 transaction.state.log.replication.factor=1 transaction.state.log.min.isr=1
    t0=$(cpu_ticks "$BROKER_PID")
    out=$(java -Xmx512m -cp "$work/classes:$cp" TxnBench "$BOOTSTRAP" txnc "$TXN_RECORDS" \
      "$TXN_PER_COMMIT" "$TXN_VISIBLE" 2>/dev/null | tail -1)
    t1=$(cpu_ticks "$BROKER_PID")
    cpu=$(awk -v a="$t0" -v b="$t1" -v hz="$(getconf CLK_TCK)" 'BEGIN{printf "%.1f", (b-a)/hz}')
    row=$(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print("%d msg/s|%.1f / %.1f ms|%.1f / %.1f ms" % (d["msgs_per_s"], d["commit_ms_p50"], d["commit_ms_p99"], d["visible_ms_p50"], d["visible_ms_p99"]))' "$out")
    rows+=("$row|$cpu")
    echo "  run: $row | $cpu" >&2
    stop_broker
  done
  printf '%s\n' "${rows[@]}" | sort -n -t'|' -k1 | sed -n "$(( (RUNS_TXN + 1) / 2 ))p" |
    awk -F'|' -v t="$target" -v n="$TXN_PER_COMMIT" '{printf "| %s | every %s records | 1 KiB | %s | %s | %s | %s |\n", t, n, $1, $2, $3, $4}'
done
fi

if wants quota && [[ " ${targets[*]} " == *" kcli "* ]]; then
echo
echo "| quotas | produce msg/s (median) | runs | consume msg/s (median) |"
echo "|---|---|---|---|"
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
declare -A prod cons
for run in $(seq 1 "$RUNS_QUOTA"); do
  for mode in none unreached; do
    start_kcli 1
    if [ "$mode" = unreached ]; then
      java -cp "$root/.tools/kafka-3.9.1/*" kafka.admin.ConfigCommand --bootstrap-server "$BOOTSTRAP" \
        --alter --entity-type clients --entity-default \
        --add-config producer_byte_rate=1000000000000,consumer_byte_rate=1000000000000 >/dev/null
    fi
    p=$(produce_run "$BOOTSTRAP" quota 100 "$COUNT_100" 1)
    c=$(consume_run "$BOOTSTRAP" quota "$COUNT_100" 1)
    prod[$mode]+="${p%% *} "; cons[$mode]+="${c%% *} "
    stop_broker
  done
done
for mode in none unreached; do
  pm=$(tr ' ' '\n' <<<"${prod[$mode]}" | grep . | median)
  cm=$(tr ' ' '\n' <<<"${cons[$mode]}" | grep . | median)
  echo "| $mode | $pm | ${prod[$mode]} | $cm |"
done
fi

if wants quotarates; then
echo
echo "| target | client | MiB in each second (quota 1 MiB/s) | throttle avg ms, errors |"
echo "|---|---|---|---|"
for target in "${targets[@]}"; do
  [ "$target" = mock ] && continue
  "start_$target" 1
  java -cp "$root/.tools/kafka-3.9.1/*" kafka.admin.ConfigCommand --bootstrap-server "$BOOTSTRAP" \
    --alter --entity-type clients --entity-name throttled \
    --add-config producer_byte_rate=1048576,consumer_byte_rate=1048576 >/dev/null
  # What the consumer reads: more than it can take in QUOTA_SECS, even with Kafka's first burst.
  timeout 300 "$perf" -P -t quota-read -b "$BOOTSTRAP" -s 10240 -c $((QUOTA_SECS * 150)) -a 1 \
    -X linger.ms=5 -X batch.size=32768 -u -q >/dev/null 2>&1
  sleep 2 # the quota config reaches the broker (the producer above, client id rdkafka, has none)
  for mode in produce consume; do
    topic=quota-write; [ "$mode" = consume ] && topic=quota-read
    line=$("$root/.venv/bin/python" benches/serve/quota_rates.py "$mode" "$BOOTSTRAP" "$topic" throttled "$QUOTA_SECS")
    echo "| $target | $mode | ${line% | *} | ${line##* | } |"
  done
  stop_broker
done
fi
