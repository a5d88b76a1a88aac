#!/usr/bin/env python3
"""Produces flat out for a while and reports what was acknowledged when (a client over its
quota, held back by the broker's throttle).

    .venv/bin/python tests/clients/quota_producer.py --bootstrap 127.0.0.1:9093 --topic t \
        --seconds 24 [--mechanism SCRAM-SHA-512 --username alice --password alice-secret]

A confluent-kafka producer (librdkafka, whose confluent-kafka build has SCRAM) sends 10 KiB
records (acks=1, linger.ms=5, batch.size=32768, a 2 MiB queue) as fast as its queue allows for
--seconds, then flushes. With --mechanism it logs in over SASL_PLAINTEXT. Prints one JSON line:
{"ok": true, "acked": [[seconds since the start, bytes], ...], "errors": N,
"throttle_avg_ms": the largest average throttle time its statistics reported}; exits 3 when
the flush does not finish within 60 s.
"""

import argparse
import json
import sys
import time

from confluent_kafka import Producer

RECORD = 10 * 1024


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bootstrap", required=True)
    parser.add_argument("--topic", required=True)
    parser.add_argument("--seconds", type=float, required=True)
    parser.add_argument("--client-id", default="quota-producer")
    parser.add_argument("--mechanism")
    parser.add_argument("--username")
    parser.add_argument("--password")
    args = parser.parse_args()

    acked = []
    state = {"errors": 0, "throttle": 0}
    start = time.monotonic()

    def delivered(err, msg):
        if err is not None:
            state["errors"] += 1
        else:
            acked.append([round(time.monotonic() - start, 4), len(msg.value())])

    def stats(raw):
        for broker in json.loads(raw).get("brokers", {}).values():
            state["throttle"] = max(state["throttle"], broker.get("throttle", {}).get("avg", 0))

    config = {
        "bootstrap.servers": args.bootstrap,
        "client.id": args.client_id,
        "acks": 1,
        "linger.ms": 5,
        "batch.size": 32768,
        "queue.buffering.max.kbytes": 2048,
        "statistics.interval.ms": 1000,
        "stats_cb": stats,
    }
    if args.mechanism:
        config.update(
            {
                "security.protocol": "SASL_PLAINTEXT",
                "sasl.mechanism": args.mechanism,
                "sasl.username": args.username,
                "sasl.password": args.password,
            }
        )
    producer = Producer(config)
    payload = b"q" * RECORD
    while time.monotonic() - start < args.seconds:
        try:
            producer.produce(args.topic, payload, on_delivery=delivered)
            producer.poll(0)
        except BufferError:
            producer.poll(0.005)
    if producer.flush(60) > 0:
        print("FAIL: the flush did not finish within 60 s", file=sys.stderr)
        sys.exit(3)
    print(
        json.dumps(
            {
                "ok": True,
                "acked": acked,
                "errors": state["errors"],
                "throttle_avg_ms": state["throttle"],
            }
        )
    )


if __name__ == "__main__":
    main()
