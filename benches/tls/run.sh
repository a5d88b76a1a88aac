#!/usr/bin/env bash
# The TLS fetch path on its own (docs/benchmarks.md, "TLS"): one `kcli serve` (release) with a
# PLAINTEXT and an SSL listener on 127.0.0.1; COUNT 1 KiB records produced once over PLAINTEXT
# (kafka-producer-perf style, with confluent-kafka), then read back RUNS times over each
# listener by the same confluent-kafka consumer (benches/tls/consume.py). PLAINTEXT fetches go by
# sendfile(2); SSL fetches are copied through the connection's 64 KiB staging buffer and
# encrypted by rustls (TLS 1.3, AES-GCM by the client's choice). Broker CPU per run from /proc.
# Usage: benches/tls/run.sh    (COUNT=500000 RUNS=3 by default)
set -euo pipefail
cd "$(dirname "$0")/../.."
COUNT=${COUNT:-500000}
RUNS=${RUNS:-3}
py=.venv/bin/python
[ -n "${SKIP_BUILD:-}" ] || cargo build --release --quiet --bin kcli
work=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
cpu_ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }
# A CA and a broker certificate for 127.0.0.1.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=bench-ca \
  -keyout "$work/ca.key" -out "$work/ca.pem" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=broker \
  -keyout "$work/broker.key" -out "$work/broker.csr" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' >"$work/ext"
openssl x509 -req -in "$work/broker.csr" -CA "$work/ca.pem" -CAkey "$work/ca.key" -CAcreateserial \
  -days 2 -extfile "$work/ext" -out "$work/broker.crt" 2>/dev/null
cat "$work/broker.key" "$work/broker.crt" "$work/ca.pem" >"$work/broker.pem"
plain=$(free_port); tls=$(free_port)
RUST_LOG=warn target/release/kcli serve --override "listeners=PLAINTEXT://127.0.0.1:$plain,SSL://127.0.0.1:$tls" \
  --override "log.dirs=$work/data" --override ssl.keystore.type=PEM \
  --override "ssl.keystore.location=$work/broker.pem" 2>"$work/broker.log" &
pid=$!
for _ in $(seq 1 600); do (exec 3<>"/dev/tcp/127.0.0.1/$tls") 2>/dev/null && break; sleep 0.05; done
"$py" - "$plain" "$COUNT" <<'PY'
import sys
from confluent_kafka import Producer
p = Producer({"bootstrap.servers": "127.0.0.1:" + sys.argv[1], "linger.ms": 20,
              "batch.size": 1000000, "enable.idempotence": False, "acks": 1})
value = bytes(range(256)) * 4
for i in range(int(sys.argv[2])):
    while True:
        try:
            p.produce("tls-bench", value, partition=0)
            break
        except BufferError:
            p.poll(0.05)
    p.poll(0)
assert p.flush(120) == 0
PY
for run in $(seq 1 "$RUNS"); do
  for listener in PLAINTEXT SSL; do
    if [ $listener = SSL ]; then
      args=("127.0.0.1:$tls" security.protocol=SSL "ssl.ca.location=$work/ca.pem")
    else
      args=("127.0.0.1:$plain")
    fi
    before=$(cpu_ticks "$pid")
    out=$("$py" benches/tls/consume.py "${args[0]}" tls-bench "$COUNT" "${args[@]:1}")
    after=$(cpu_ticks "$pid")
    echo "run $run $listener: $out; broker CPU $(( (after - before) * 10 )) ms"
  done
done
