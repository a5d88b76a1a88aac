"""What a client over its byte-rate quota gets, second by second (docs/benchmarks.md).

Usage: quota_rates.py produce|consume BOOTSTRAP TOPIC CLIENT_ID SECONDS

produce: a librdkafka producer (confluent-kafka) sends 10 KiB records as fast as its queue
allows (acks=1, linger.ms=5, batch.size=32768, a 2 MiB queue) for SECONDS; consume: a
librdkafka consumer reads TOPIC from the beginning for SECONDS. Either prints one line: the
bytes acknowledged or consumed in each whole second since the start, in MiB, then the largest
average throttle time its statistics reported and the number of errors.
"""

import json
import sys
import time

from confluent_kafka import Consumer, KafkaError, Producer

RECORD = 10 * 1024


def main():
    mode, bootstrap, topic, client_id, seconds = sys.argv[1:6]
    seconds = int(seconds)
    per_second = [0] * (seconds + 30)
    state = {"throttle": 0, "errors": 0}
    start = time.monotonic()

    def count(n):
        second = int(time.monotonic() - start)
        if second < len(per_second):
            per_second[second] += n

    def stats(raw):
        for broker in json.loads(raw).get("brokers", {}).values():
            state["throttle"] = max(state["throttle"], broker.get("throttle", {}).get("avg", 0))

    common = {
        "bootstrap.servers": bootstrap,
        "client.id": client_id,
        "statistics.interval.ms": 1000,
        "stats_cb": stats,
    }
    if mode == "produce":

        def delivered(err, msg):
            if err is not None:
                state["errors"] += 1
            else:
                count(len(msg.value()))

        producer = Producer(
            {
                **common,
                "acks": 1,
                "linger.ms": 5,
                "batch.size": 32768,
                "queue.buffering.max.kbytes": 2048,
            }
        )
        payload = b"q" * RECORD
        while time.monotonic() - start < seconds:
            try:
                producer.produce(topic, payload, on_delivery=delivered)
                producer.poll(0)
            except BufferError:
                producer.poll(0.005)
        producer.flush(60)
    else:
        consumer = Consumer(
            {
                **common,
                "group.id": client_id,
                "auto.offset.reset": "earliest",
                "enable.auto.commit": False,
            }
        )
        consumer.subscribe([topic])
        while time.monotonic() - start < seconds:
            msg = consumer.poll(0.1)
            if msg is None:
                continue
            if msg.error() is not None:
                if msg.error().code() != KafkaError._PARTITION_EOF:
                    state["errors"] += 1
                continue
            count(len(msg.value()))
        consumer.close()
    mib = " ".join(f"{b / 1048576:.2f}" for b in per_second[:seconds])
    print(f"{mib} | throttle_avg_ms={state['throttle']} errors={state['errors']}")


if __name__ == "__main__":
    main()
