#!/usr/bin/env bash
# What many partitions cost a broker (issue 36, docs/benchmarks.md "Tens of thousands of
# partitions"): BROKERS brokers (kcli serve, release; or Apache Kafka 3.9.1 in ZooKeeper mode,
# -Xmx2g each) against a real ZooKeeper (Debian's), then for each count in SIZES:
#   create   topics of at most 5,000 partitions (ZooKeeper's 1 MB znode limit) with Kafka's
#            kafka-topics, RF = BROKERS, timed until a Metadata request (kcat -L) shows every
#            partition with a leader;
#   idle     RSS, open descriptors and memory maps of every broker, summed;
#   produce  RECORDS records of 100 B spread over every partition by Kafka's ProducerPerformance
#            (RoundRobinPartitioner, acks=1, one producer per topic, concurrently): records/s
#            and the brokers' CPU seconds (utime + stime) for it;
#   consume  a consumer group per topic (Kafka's ConsumerPerformance) reading everything: s;
#   restart  every broker stopped with SIGTERM and started again, until all are led again;
#   kill -9  every broker killed -9 and, once ZooKeeper expired their sessions, started again,
#            until all are led again (log recovery);
#   failover (BROKERS > 1) once every ISR is full again and a preferred-replica election has
#            spread the leaders (Kafka's kafka-leader-election, so the controller leads its share),
#            the controller killed -9, until every partition has a live leader; ZooKeeper's
#            session timeout (18 s on both) is in the figure. The partitions it led are printed.
# Brokers that do not make every log within LIMIT s of all being led, or die meanwhile, end
# their target's run: the row says how many logs were made and the most descriptors a broker
# held (Kafka 3.9.1 past its open-file limit keeps running with the rest unmade).
# Usage: BROKERS=1 SIZES="1000 10000" benches/serve/partitions.sh [targets...]
#        (targets: kcli kafka; default both). RECORDS default 1000000; KCLI the binary
#        (default target/release/kcli); STEPS=create stops each run after the idle figures.
# Needs: tests/install-kafka-tools, Debian's zookeeper and kcat; an open-file limit above the
# partition count (raised here to the hard limit).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
targets=("${@:-kcli kafka}")
read -r -a targets <<<"${targets[*]}"
BROKERS=${BROKERS:-1}
SIZES=${SIZES:-1000 10000}
RECORDS=${RECORDS:-1000000}
LIMIT=${LIMIT:-900}
KCLI=${KCLI:-$root/target/release/kcli}
STEPS=${STEPS:-all}
TOPIC_MAX=5000
cp="$root/.tools/kafka-3.9.1/*"
[ -n "${SKIP_BUILD:-}" ] || cargo build --release --quiet --bin kcli
ulimit -n "$(ulimit -Hn)"
work=$(mktemp -d)
zk_pid=
declare -A pid port
cleanup() {
  for b in "${!pid[@]}"; do kill -9 "${pid[$b]}" 2>/dev/null || true; done
  [ -z "$zk_pid" ] || kill -9 "$zk_pid" 2>/dev/null || true
  [ -n "${KEEP_WORK:-}" ] || rm -rf "$work"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# wait_port PORT: until it accepts, LIMIT seconds at most (a broker recovering thousands of logs
# after a kill -9 opens its listener only when they are loaded).
wait_port() { for _ in $(seq 1 $((LIMIT * 20))); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.05; done; echo "port $1 never opened" >&2; return 1; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN{printf "%.1f", b-a}'; }
cpu_ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }

start_zk() {
  local zport; zport=$(free_port); mkdir -p "$work/zk/data"
  printf 'tickTime=500\ndataDir=%s\nclientPort=%s\nclientPortAddress=127.0.0.1\nadmin.enableServer=false\nmaxClientCnxns=0\n' \
    "$work/zk/data" "$zport" >"$work/zk/zoo.cfg"
  java -Xmx512m -Djute.maxbuffer=4194304 -cp /etc/zookeeper/conf:/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-simple.jar \
    org.apache.zookeeper.server.ZooKeeperServerMain "$work/zk/zoo.cfg" >"$work/zk/zk.log" 2>&1 &
  zk_pid=$!; wait_port "$zport"; ZK=127.0.0.1:$zport
}

# start_broker TARGET ID: (re)starts broker ID on its port and log dir.
start_broker() {
  local target=$1 b=$2 dir=$work/b$2
  [ -n "${port[$b]:-}" ] || port[$b]=$(free_port)
  mkdir -p "$dir"
  if [ "$target" = kcli ]; then
    "$KCLI" serve --zookeeper "$ZK/kcli" --override "broker.id=$b" \
      --override "listeners=PLAINTEXT://127.0.0.1:${port[$b]}" --override "log.dirs=$dir/data" \
      --override "offsets.topic.replication.factor=$BROKERS" --override group.initial.rebalance.delay.ms=0 \
      >>"$dir/broker.log" 2>&1 &
  else
    cat >"$dir/server.properties" <<EOF
broker.id=$b
listeners=PLAINTEXT://127.0.0.1:${port[$b]}
log.dirs=$dir/data
zookeeper.connect=$ZK/kafka
offsets.topic.replication.factor=$BROKERS
group.initial.rebalance.delay.ms=0
EOF
    KAFKA_OPTS= java -Xmx2g -Xms2g -Djute.maxbuffer=4194304 -cp "$cp" kafka.Kafka "$dir/server.properties" >>"$dir/broker.log" 2>&1 &
  fi
  pid[$b]=$!
}
start_all() { for b in $(seq 1 "$BROKERS"); do start_broker "$1" "$b"; done; for b in $(seq 1 "$BROKERS"); do wait_port "${port[$b]}"; done; }
bootstrap() { local s=; for b in "${!pid[@]}"; do [ -n "${pid[$b]}" ] && s+="127.0.0.1:${port[$b]},"; done; echo "${s%,}"; }

# partitions_where COND [ARG]: how many partitions of the bench topics a Metadata request
# (kcat) shows with COND true, a Python expression over `p` (the partition) and `arg` (ARG as an
# int, default 0); 0 when no broker answers in time.
partitions_where() {
  timeout 60 kcat -b "$(bootstrap)" -L -J 2>/dev/null | python3 -c '
import json, sys
cond, arg = sys.argv[1], int(sys.argv[2])
try:
    md = json.load(sys.stdin)
except ValueError:  # kcat got no answer in time
    md = {"topics": []}
print(sum(1 for t in md["topics"] if t["topic"].startswith("p-") for p in t["partitions"]
          if eval(cond, {}, {"p": p, "arg": arg})))' "$1" "${2:-0}" || true
}
# led TOTAL [DEAD]: true when TOTAL partitions of the bench topics have a leader, none DEAD.
led() { [ "$(partitions_where 'p.get("leader", -1) >= 0 and p["leader"] != arg and "error" not in p' "${2:--1}")" -eq "$1" ]; }
# full_isr TOTAL: true when TOTAL partitions of the bench topics have all BROKERS replicas in
# their ISR (after a restart the followers rejoin as they catch up; a controller killed before
# that leaves the partitions whose ISR is only itself offline, on either kind).
full_isr() { [ "$(partitions_where 'len(p.get("isrs", [])) == arg' "$BROKERS")" -eq "$1" ]; }
# alive PID: the process runs (an exited child stays a zombie until waited for, and kill -0
# still finds it).
alive() { local state; state=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) && [ "$state" != Z ]; }
# dead_broker: the id of a broker whose process is gone, if any.
dead_broker() { for b in "${!pid[@]}"; do alive "${pid[$b]}" || { echo "$b"; return; }; done; }
# log_dirs ID: the partition logs of the bench topics in broker ID's log dir.
log_dirs() { find "$work/b$1/data" -maxdepth 1 -name 'p-*' 2>/dev/null | wc -l; }
# wait_logs TOTAL: until the brokers hold TOTAL logs of the bench topics (a partition is led in
# Metadata before its leader has made its log): "ok", "died" or "timeout", then the most
# descriptors a broker was seen holding.
wait_logs() {
  local t0 n f peak=0; t0=$(now)
  while :; do
    n=0; for b in "${!pid[@]}"; do
      n=$((n + $(log_dirs "$b"))); f=$(ls "/proc/${pid[$b]}/fd" 2>/dev/null | wc -l || true); [ "$f" -le "$peak" ] || peak=$f
    done
    [ "$n" -lt "$1" ] || { echo "ok $peak"; return; }
    [ -z "$(dead_broker)" ] || { echo "died $peak"; return; }
    if awk -v a="$t0" -v b="$(now)" -v l="$LIMIT" 'BEGIN{exit !(b-a>l)}'; then echo "timeout $peak"; return; fi
    sleep 0.5
  done
}
# led_by ID: partitions of the bench topics led by broker ID.
led_by() { partitions_where 'p.get("leader", -1) == arg' "$1"; }
wait_led() { # TOTAL [DEAD]: seconds until led, "timeout", or "died" (a broker's process ended)
  local t0; t0=$(now)
  while ! led "$@"; do
    if awk -v a="$t0" -v b="$(now)" -v l="$LIMIT" 'BEGIN{exit !(b-a>l)}'; then echo timeout; return; fi
    [ -z "$(dead_broker)" ] || { echo died; return; }
    sleep 0.5
  done
  since "$t0"
}
topics_for() { local left=$1 i=0; while [ "$left" -gt 0 ]; do n=$((left < TOPIC_MAX ? left : TOPIC_MAX)); echo "p-$i:$n"; left=$((left - n)); i=$((i + 1)); done; }
sum_over() { local s=0; for b in "${!pid[@]}"; do s=$((s + $("$1" "${pid[$b]}"))); done; echo "$s"; }
rss_kb() { awk '/VmRSS/{print $2}' "/proc/$1/status"; }
fds() { ls "/proc/$1/fd" | wc -l; }
maps() { wc -l <"/proc/$1/maps"; }
zk_cli() { java -cp /etc/zookeeper/conf:/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-simple.jar \
  org.apache.zookeeper.ZooKeeperMain -server "$ZK" "$@" 2>/dev/null; }
# wait_unregistered CHROOT: until no broker is registered (a broker killed -9 keeps its
# ephemeral znode until its session expires, and Kafka, like kcli, refuses to start while it is
# there).
wait_unregistered() { while zk_cli ls "/$1/brokers/ids" | grep -q '^\[[0-9]'; do sleep 0.5; done; }
controller() { # the broker id in /controller
  java -cp /etc/zookeeper/conf:/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-simple.jar \
    org.apache.zookeeper.ZooKeeperMain -server "$ZK" get "/$1/controller" 2>/dev/null |
    python3 -c 'import json,sys
for l in sys.stdin:
    if l.startswith("{"): print(json.loads(l)["brokerid"]); break'
}

echo "| target | brokers | partitions | create s | RSS MB | descriptors | maps | produce rec/s | broker CPU s | consume s | restart s | kill -9 restart s | failover s |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for size in $SIZES; do
  for target in "${targets[@]}"; do
    [ -n "${KEEP_WORK:-}" ] || rm -rf "${work:?}"/*; pid=(); port=(); start_zk; start_all "$target"
    sleep 2 # the first controller election
    t0=$(now)
    for tn in $(topics_for "$size"); do
      java -Xmx256m -cp "$cp" org.apache.kafka.tools.TopicCommand --bootstrap-server "$(bootstrap)" --create \
        --topic "${tn%%:*}" --partitions "${tn#*:}" --replication-factor "$BROKERS" >"$work/create.log" 2>&1 ||
        # A CreateTopics answered after the tool's 30 s timeout: the topic is created, only
        # slowly; the clock runs on until every partition is led.
        grep -qE 'TimeoutException|timed out' "$work/create.log"
    done
    create=$(wait_led "$size"); made="ok 0"
    [ "$create" = died ] || made=$(wait_logs $((size * BROKERS)))
    if [ "$create" = died ] || [ "${made%% *}" != ok ]; then
      n=0; for b in $(seq 1 "$BROKERS"); do n=$((n + $(log_dirs "$b"))); done
      d=$(dead_broker); [ -z "$d" ] || unset "pid[$d]"
      echo "| $target | $BROKERS | $size | ${made%% *}${d:+ (broker $d)}: $n of $((size * BROKERS)) logs made, ${made#* } descriptors at most | - | - | - | - | - | - | - | - | - |"
      [ -z "$d" ] || grep -E 'ERROR|FATAL|Too many open files|halting' "$work/b$d/broker.log" | head -3 | cut -c1-300 | sed 's/^/    /' || true
      for b in "${!pid[@]}"; do kill -9 "${pid[$b]}" 2>/dev/null || true; done
      kill -9 "$zk_pid"; wait 2>/dev/null || true; zk_pid=
      continue
    fi
    [ "$create" = timeout ] || create=$(since "$t0")
    rss=$(($(sum_over rss_kb) / 1024)); fd=$(sum_over fds); mp=$(sum_over maps)
    if [ "$STEPS" = create ]; then
      echo "| $target | $BROKERS | $size | $create | $rss | $fd | $mp | - | - | - | - | - | - |"
      for b in "${!pid[@]}"; do kill -9 "${pid[$b]}" 2>/dev/null || true; done
      kill -9 "$zk_pid"; wait 2>/dev/null || true; zk_pid=
      continue
    fi
    ntopics=$(topics_for "$size" | wc -l); each=$((RECORDS / ntopics))
    c0=$(sum_over cpu_ticks); t0=$(now); ppids=()
    for tn in $(topics_for "$size"); do
      java -Xmx512m -cp "$cp" org.apache.kafka.tools.ProducerPerformance --topic "${tn%%:*}" \
        --num-records "$each" --record-size 100 --throughput -1 --producer-props \
        "bootstrap.servers=$(bootstrap)" acks=1 \
        partitioner.class=org.apache.kafka.clients.producer.RoundRobinPartitioner >"$work/pp-${tn%%:*}.log" 2>&1 &
      ppids+=($!)
    done
    for p in "${ppids[@]}"; do wait "$p"; done
    secs=$(since "$t0"); cpu=$(awk -v t="$(( $(sum_over cpu_ticks) - c0 ))" -v hz="$(getconf CLK_TCK)" 'BEGIN{printf "%.1f", t/hz}')
    rate=$(awk -v n="$((each * ntopics))" -v s="$secs" 'BEGIN{printf "%d", n/s}')
    t0=$(now); cpids=()
    for tn in $(topics_for "$size"); do
      java -Xmx512m -cp "$cp" org.apache.kafka.tools.ConsumerPerformance --bootstrap-server "$(bootstrap)" \
        --topic "${tn%%:*}" --group "g-${tn%%:*}" --messages "$each" --timeout 600000 >"$work/cp-${tn%%:*}.log" 2>&1 &
      cpids+=($!)
    done
    for p in "${cpids[@]}"; do wait "$p"; done
    consume=$(since "$t0")
    for b in "${!pid[@]}"; do kill "${pid[$b]}"; done
    for b in "${!pid[@]}"; do while kill -0 "${pid[$b]}" 2>/dev/null; do sleep 0.1; done; done
    t0=$(now); start_all "$target"; restart=$(wait_led "$size"); [ "$restart" = timeout ] || restart=$(since "$t0")
    for b in "${!pid[@]}"; do kill -9 "${pid[$b]}"; done
    for b in "${!pid[@]}"; do while kill -0 "${pid[$b]}" 2>/dev/null; do sleep 0.1; done; done
    wait_unregistered "$target"
    t0=$(now); start_all "$target"; killed=$(wait_led "$size"); [ "$killed" = timeout ] || killed=$(since "$t0")
    failover=-
    if [ "$BROKERS" -gt 1 ]; then
      t0=$(now); while ! full_isr "$size"; do sleep 1; [ "$(since "$t0" | cut -d. -f1)" -lt "$LIMIT" ] || break; done
      java -Xmx256m -cp "$cp" org.apache.kafka.tools.LeaderElectionCommand --bootstrap-server "$(bootstrap)" \
        --election-type PREFERRED --all-topic-partitions >"$work/elect.log" 2>&1 || true
      c=$(controller "$target")
      # The election's leaders reach every broker's metadata within moments; wait for the
      # controller's share, a third of the partitions or more.
      t0=$(now); while [ "$(led_by "$c")" -lt $((size / BROKERS)) ]; do sleep 0.5; [ "$(since "$t0" | cut -d. -f1)" -lt 120 ] || break; done
      victim_led=$(led_by "$c")
      kill -9 "${pid[$c]}"; unset "pid[$c]"
      failover="$(wait_led "$size" "$c") ($victim_led led)"
    fi
    echo "| $target | $BROKERS | $size | $create | $rss | $fd | $mp | $rate | $cpu | $consume | $restart | $killed | $failover |"
    for b in "${!pid[@]}"; do kill -9 "${pid[$b]}" 2>/dev/null || true; done
    kill -9 "$zk_pid"; wait 2>/dev/null || true; zk_pid=
  done
done
