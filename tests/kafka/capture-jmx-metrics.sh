#!/usr/bin/env bash
# Captures the Prometheus series a real Apache Kafka 3.9.1 broker (ZooKeeper mode) exposes through
# the Prometheus JMX exporter javaagent, once with Strimzi's rules and once with Confluent's, and
# writes the reference kcli's metrics endpoint must match (issue 34):
#
#   tests/fixtures/metrics/kafka-3.9.1-series.txt            families, types, label names (Strimzi's rules)
#   tests/fixtures/metrics/kafka-3.9.1-series-confluent.txt  the same under Confluent's rules
#   tests/fixtures/metrics/kafka-3.9.1-strimzi.prom          one raw scrape (Strimzi's rules), JVM series left out
#   tests/fixtures/metrics/kafka-3.9.1-strimzi-mbeans.txt   the kafka* MBeans behind that scrape (DumpKafkaMBeans.java)
#   tests/fixtures/metrics/kafka-3.9.1-confluent{.prom,-mbeans.txt}  the same under Confluent's rules
#
# Steps: Debian's ZooKeeper on a free loopback port; one Kafka 3.9.1 broker from .tools/kafka-3.9.1
# (`kafka.Kafka server.properties`, as tests/it/support/kafka_broker.rs starts it) with
# `-javaagent:.tools/jmx_prometheus_javaagent-<v>.jar=<port>:<rules>`; a 3-partition topic; 20,000
# records through ProducerPerformance (acks=all); all of them read back by the console consumer in a
# consumer group; a describe of a missing topic (so ErrorsPerSec has an error other than NONE); then
# one scrape of /metrics, summarised by tests/kafka/summarize-metrics.py. The scrape is taken by
# tests/kafka/DumpKafkaMBeans.java between two reads of every kafka* MBean over remote JMX (the broker
# runs with an unauthenticated JMX port on loopback), so the dump shows the MBeans and values the
# agent rendered, each attribute marked with whether it held still across the scrape. The broker is restarted on
# a fresh log dir for the second rules file, so both captures see the same history.
#
# Usage: tests/kafka/capture-jmx-metrics.sh [OUT_DIR]   (default tests/fixtures/metrics)
# Needs tests/install-kafka-tools (Kafka's jars, the javaagent) and Debian's zookeeper package.
# Holds /tmp/kcli-cluster.lock throughout: one cluster at a time on this machine, as the tests do.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
out=${1:-tests/fixtures/metrics}
mkdir -p "$out"
log() { printf '==> %s\n' "$*" >&2; }

tests/install-kafka-tools
agent=$(ls .tools/jmx_prometheus_javaagent-*.jar | sort -V | tail -1)
agent_version=$(basename "$agent" .jar)
agent_version=${agent_version#jmx_prometheus_javaagent-}
[ -f /usr/share/java/zookeeper.jar ] || {
  echo "missing Debian's zookeeper: apt-get install --no-install-recommends zookeeper" >&2
  exit 2
}

exec 9>/tmp/kcli-cluster.lock
log "waiting for /tmp/kcli-cluster.lock"
flock 9

work=$(mktemp -d /tmp/kafka-jmx-capture.XXXXXX)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do
    kill -TERM "$pid" 2>/dev/null || true
  done
  for pid in "${pids[@]}"; do
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$pid" 2>/dev/null || true
  done
  rm -rf "$work"
}
trap cleanup EXIT

mkdir -p "$work/classes"
javac -d "$work/classes" tests/kafka/DumpKafkaMBeans.java

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() { # port, what, pid
  for _ in $(seq 1 300); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
    kill -0 "$3" 2>/dev/null || { echo "$2 exited" >&2; return 1; }
    sleep 0.2
  done
  echo "$2 did not listen on $1 within 60s" >&2
  return 1
}
jvm() { java -Xmx512m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp "$root/.tools/kafka-3.9.1/*" "$@"; }

# ZooKeeper, as tests/it/support/zookeeper.rs runs it.
zk_port=$(free_port)
mkdir -p "$work/zk/data"
cat >"$work/zk/zoo.cfg" <<EOF
tickTime=500
minSessionTimeout=1000
maxSessionTimeout=30000
dataDir=$work/zk/data
clientPort=$zk_port
clientPortAddress=127.0.0.1
admin.enableServer=false
EOF
java -Xmx256m -XX:+UseSerialGC -Dzookeeper.log.dir="$work/zk" \
  -cp /etc/zookeeper/conf:/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-simple.jar \
  org.apache.zookeeper.server.ZooKeeperServerMain "$work/zk/zoo.cfg" >"$work/zk/zk.log" 2>&1 &
zk_pid=$!
pids+=("$zk_pid")
wait_port "$zk_port" ZooKeeper "$zk_pid"

capture() { # name, rules file, its name in the summary, output summary
  local name=$1 rules=$2 rules_name=$3 summary=$4
  local dir="$work/$name" port metrics_port jmx_port chroot="/$name"
  port=$(free_port)
  metrics_port=$(free_port)
  jmx_port=$(free_port)
  mkdir -p "$dir"
  cat >"$dir/server.properties" <<EOF
broker.id=0
listeners=PLAINTEXT://127.0.0.1:$port
log.dirs=$dir/logs
zookeeper.connect=127.0.0.1:$zk_port$chroot
zookeeper.session.timeout.ms=6000
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
group.initial.rebalance.delay.ms=0
auto.create.topics.enable=false
EOF
  log "$name: Kafka 3.9.1 on 127.0.0.1:$port, $agent_version on :$metrics_port with $rules"
  jvm -Dcom.sun.management.jmxremote.port="$jmx_port" -Dcom.sun.management.jmxremote.rmi.port="$jmx_port" \
    -Dcom.sun.management.jmxremote.host=127.0.0.1 -Djava.rmi.server.hostname=127.0.0.1 \
    -Dcom.sun.management.jmxremote.authenticate=false -Dcom.sun.management.jmxremote.ssl=false \
    -javaagent:"$root/$agent=127.0.0.1:$metrics_port:$rules" kafka.Kafka "$dir/server.properties" \
    >"$dir/kafka.log" 2>&1 &
  local kafka_pid=$!
  pids+=("$kafka_pid")
  wait_port "$port" "Kafka ($name)" "$kafka_pid" || { tail -50 "$dir/kafka.log" >&2; return 1; }

  local bs=127.0.0.1:$port topic=metrics-ref
  jvm org.apache.kafka.tools.TopicCommand --bootstrap-server "$bs" --create --topic "$topic" \
    --partitions 3 --replication-factor 1 >"$dir/tools.log" 2>&1
  log "$name: producing 20000 records"
  jvm org.apache.kafka.tools.ProducerPerformance --topic "$topic" --num-records 20000 --record-size 100 \
    --throughput -1 --producer-props bootstrap.servers="$bs" acks=all >>"$dir/tools.log" 2>&1
  log "$name: consuming them in group metrics-ref-group"
  jvm org.apache.kafka.tools.consumer.ConsoleConsumer --bootstrap-server "$bs" --topic "$topic" \
    --from-beginning --max-messages 20000 --group metrics-ref-group --timeout-ms 30000 \
    >/dev/null 2>>"$dir/tools.log"
  jvm org.apache.kafka.tools.TopicCommand --bootstrap-server "$bs" --describe --topic no-such-topic \
    >>"$dir/tools.log" 2>&1 || true
  # Let the broker's own periodic gauges (log sizes, idle percents) take a turn after the load.
  sleep 5
  java -cp "$work/classes" DumpKafkaMBeans "$jmx_port" "http://127.0.0.1:$metrics_port/metrics" \
    "$out/kafka-3.9.1-$name-mbeans.txt" "$dir/scrape.prom"
  log "$name: scraped $(wc -l <"$dir/scrape.prom") lines"

  kill -TERM "$kafka_pid"
  for _ in $(seq 1 150); do kill -0 "$kafka_pid" 2>/dev/null || break; sleep 0.2; done
  kill -KILL "$kafka_pid" 2>/dev/null || true
  wait "$kafka_pid" 2>/dev/null || true

  python3 tests/kafka/summarize-metrics.py --rules "$rules_name" --agent "$agent_version" \
    "$dir/scrape.prom" >"$summary"
  # The raw scrape, less the JVM's own series and the exporter's.
  grep -vE '^(# (HELP|TYPE) )?(jvm_|jmx_)' "$dir/scrape.prom" >"$out/kafka-3.9.1-$name.prom"
}

capture strimzi "$root/tests/fixtures/metrics/kafka-metrics.yaml" tests/fixtures/metrics/kafka-metrics.yaml \
  "$out/kafka-3.9.1-series.txt"
# Confluent's file delays the exporter's first answer by 120s (startDelaySeconds); not here.
sed 's/^startDelaySeconds: .*/startDelaySeconds: 0/' tests/fixtures/metrics/confluent-kafka_broker.yml \
  >"$work/confluent-kafka_broker.yml"
capture confluent "$work/confluent-kafka_broker.yml" \
  "tests/fixtures/metrics/confluent-kafka_broker.yml (startDelaySeconds: 0)" "$out/kafka-3.9.1-series-confluent.txt"
log "wrote $out/kafka-3.9.1-series{,-confluent}.txt and $out/kafka-3.9.1-{strimzi,confluent}{.prom,-mbeans.txt}"
