#!/usr/bin/env python3
"""Produces N records to a topic with confluent-kafka (librdkafka with OpenSSL) and reads them
back, with client settings given as -X key=value (security.protocol=SSL, ssl.ca.location, ...).

    .venv/bin/python tests/clients/ssl_round_trip.py --bootstrap 127.0.0.1:9093 --topic t \
        --count 100 -X security.protocol=SSL -X ssl.ca.location=ca.pem

Prints "OK <count>" and exits 0 when every record came back in order with its key and value;
otherwise one line starting with "FAIL:" on stderr and exit 1 (3 when the deadline passes).
"""

import argparse
import sys
import threading
import os

from confluent_kafka import Consumer, Producer, TopicPartition, OFFSET_BEGINNING

DEADLINE_S = 50


def fail(msg, code=1):
    sys.stderr.write("FAIL: " + msg + "\n")
    sys.stderr.flush()
    os._exit(code)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bootstrap", required=True)
    parser.add_argument("--topic", required=True)
    parser.add_argument("--count", type=int, default=10)
    parser.add_argument("-X", action="append", default=[])
    args = parser.parse_args()
    timer = threading.Timer(DEADLINE_S, lambda: fail("deadline passed", 3))
    timer.daemon = True
    timer.start()
    conf = {"bootstrap.servers": args.bootstrap}
    for kv in args.X:
        key, _, value = kv.partition("=")
        conf[key] = value
    errors = []
    producer = Producer(dict(conf, **{"enable.idempotence": False, "linger.ms": 5,
                                      "message.timeout.ms": 30000}))
    for i in range(args.count):
        producer.produce(args.topic, key=b"k%d" % i, value=b"value-%d" % i,
                         on_delivery=lambda err, msg: err and errors.append(str(err)))
        producer.poll(0)
    if producer.flush(30) != 0 or errors:
        fail("produce: %s" % (errors[:3] or "not all delivered"))
    consumer = Consumer(dict(conf, **{"group.id": "ssl-check", "enable.auto.commit": False}))
    consumer.assign([TopicPartition(args.topic, 0, OFFSET_BEGINNING)])
    got = []
    while len(got) < args.count:
        msg = consumer.poll(1.0)
        if msg is None:
            continue
        if msg.error():
            fail("consume: %s" % msg.error())
        got.append((msg.offset(), msg.key(), msg.value()))
    consumer.close()
    for i, (offset, key, value) in enumerate(got):
        if (offset, key, value) != (i, b"k%d" % i, b"value-%d" % i):
            fail("record %d came back as %r" % (i, (offset, key, value)))
    print("OK %d" % len(got))


if __name__ == "__main__":
    main()
