#!/usr/bin/env bash
# The metrics scrape of a broker hosting many partitions (docs/benchmarks.md): one broker
# (kcli serve, release, with kcli.metrics.listener; or Apache Kafka 3.9.1 in KRaft mode with the
# Prometheus JMX exporter javaagent 1.0.1 and Strimzi's rules, tests/fixtures/metrics/),
# PARTITIONS partitions (default 10000, two topics of half each) created with Kafka's
# kafka-topics, records written to them with librdkafka's rdkafka_performance (three per
# partition on average); then SCRAPES scrapes (default 5) of /metrics
# with curl, one after another: the time of each, the bytes and the number of samples, the
# broker's RSS before and after, and its open descriptors.
# Usage: benches/serve/scrape.sh [targets...]   (targets: kcli kafka; default both)
# Needs: benches/serve/build-tools.sh, tests/install-kafka-tools; an open-file limit above
# PARTITIONS + 1000 (raised here to 65536 when allowed, else to the hard limit).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
targets=("${@:-kcli kafka}")
read -r -a targets <<<"${targets[*]}"
PARTITIONS=${PARTITIONS:-10000}
SCRAPES=${SCRAPES:-5}
perf=$root/.tools/librdkafka-bench/rdkafka_performance
cp="$root/.tools/kafka-3.9.1/*"
[ -n "${SKIP_BUILD:-}" ] || cargo build --release --quiet --bin kcli
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
work=$(mktemp -d)
pid=
cleanup() { [ -z "$pid" ] || kill "$pid" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() { for _ in $(seq 1 1200); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.05; done; echo "port $1 never opened" >&2; return 1; }
rss_mb() { awk '/VmRSS/{printf "%d", $2/1024}' "/proc/$1/status"; }

start_kcli() {
  "$root/target/release/kcli" serve --override "listeners=PLAINTEXT://127.0.0.1:$port" \
    --override "log.dirs=$work/data" --override "kcli.metrics.listener=127.0.0.1:$mport" \
    >"$work/broker.log" 2>&1 &
  pid=$!
}
start_kafka() {
  local cport; cport=$(free_port); mkdir -p "$work/kafka"
  cat >"$work/kafka/server.properties" <<EOF
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$cport
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$cport
advertised.listeners=PLAINTEXT://127.0.0.1:$port
controller.listener.names=CONTROLLER
log.dirs=$work/data
offsets.topic.replication.factor=1
EOF
  java -cp "$cp" kafka.tools.StorageTool format -t "$(java -cp "$cp" kafka.tools.StorageTool random-uuid)" \
    -c "$work/kafka/server.properties" >/dev/null
  java -Xmx2g -Xms2g \
    "-javaagent:$root/.tools/jmx_prometheus_javaagent-1.0.1.jar=127.0.0.1:$mport:$root/tests/fixtures/metrics/kafka-metrics.yaml" \
    -cp "$cp" kafka.Kafka "$work/kafka/server.properties" >"$work/broker.log" 2>&1 &
  pid=$!
}

echo "| target | partitions | scrape s (each) | bytes | samples | RSS MB before / after | open descriptors |"
echo "|---|---|---|---|---|---|---|"
for target in "${targets[@]}"; do
  rm -rf "$work/data" "$work/kafka"
  port=$(free_port); mport=$(free_port)
  "start_$target"; wait_port "$port"; wait_port "$mport"
  # Two topics of half the partitions each: Kafka's KRaft controller refuses a topic of 10,000
  # (more than its 10,000 records per operation); creating them takes longer than the admin
  # client's default 30 s.
  printf 'request.timeout.ms=600000\ndefault.api.timeout.ms=600000\n' >"$work/admin.properties"
  for topic in scrape-a scrape-b; do
    java -cp "$cp" org.apache.kafka.tools.TopicCommand --bootstrap-server "127.0.0.1:$port" \
      --create --command-config "$work/admin.properties" --topic "$topic" \
      --partitions $((PARTITIONS / 2)) --replication-factor 1 >/dev/null
    # Records to the partitions (rdkafka_performance's default partitioner spreads them at
    # random: three per partition on average, so nearly every one gets some).
    timeout 600 "$perf" -P -t "$topic" -b "127.0.0.1:$port" -s 100 -c $((PARTITIONS * 3 / 2)) -a 1 \
      -X linger.ms=5 -u -q >"$work/perf.log" 2>&1 ||
      { echo "rdkafka_performance failed:" >&2; tail -5 "$work/perf.log" >&2; }
  done
  before=$(rss_mb "$pid")
  times=()
  for _ in $(seq 1 "$SCRAPES"); do
    times+=("$(curl -sS --max-time 120 -o "$work/scrape.txt" -w '%{time_total}' "http://127.0.0.1:$mport/metrics")")
  done
  bytes=$(stat -c %s "$work/scrape.txt")
  samples=$(grep -vc '^#' "$work/scrape.txt")
  fds=$(find "/proc/$pid/fd" -mindepth 1 -maxdepth 1 | wc -l)
  echo "| $target | $PARTITIONS | ${times[*]} | $bytes | $samples | $before / $(rss_mb "$pid") | $fds |"
  kill "$pid"; wait "$pid" 2>/dev/null || true; pid=
done
