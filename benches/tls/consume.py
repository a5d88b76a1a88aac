#!/usr/bin/env python3
"""Reads a topic's partition 0 from the beginning to COUNT records with confluent-kafka and
prints the records per second and MB/s of the read (not counting the first fetch's setup).

    .venv/bin/python benches/tls/consume.py BOOTSTRAP TOPIC COUNT [key=value ...]
"""
import sys
import time

from confluent_kafka import Consumer, TopicPartition, OFFSET_BEGINNING


def main():
    bootstrap, topic, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    conf = {"bootstrap.servers": bootstrap, "group.id": "tls-bench", "enable.auto.commit": False,
            "fetch.max.bytes": 52428800, "max.partition.fetch.bytes": 10485760}
    for kv in sys.argv[4:]:
        k, _, v = kv.partition("=")
        conf[k] = v
    c = Consumer(conf)
    c.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
    got, size, start = 0, 0, None
    while got < count:
        batch = c.consume(10000, 5.0)
        if not batch:
            continue
        if start is None:
            start = time.monotonic()
        for m in batch:
            if m.error():
                sys.exit("consume: %s" % m.error())
            size += len(m.value() or b"")
        got += len(batch)
    secs = time.monotonic() - start
    c.close()
    print("%d records in %.2f s: %.0f records/s, %.1f MB/s" % (got, secs, got / secs, size / secs / 1e6))


if __name__ == "__main__":
    main()
