#!/usr/bin/env python3
"""Drives a Kafka broker's transactions with the real confluent-kafka (librdkafka) client.

    .venv/bin/python tests/clients/transactions_check.py --bootstrap 127.0.0.1:9092 --topic t

Creates the topic (2 partitions). A transactional producer commits, aborts and commits again
on both partitions, the last transaction also sending a consumer group's offsets
(send_offsets_to_transaction); an aborted one sends other offsets. A read_committed consumer
must read exactly the committed records and a read_uncommitted one every record; the group's
committed offsets must be the committed transaction's.

Prints one JSON line on stdout and exits 0 when everything matches; otherwise prints one line
starting with "FAIL:" on stderr and exits 1 (2 on a usage error, 3 when the overall deadline
passes).
"""

import argparse
import json
import os
import signal
import sys
import threading
import time

DEADLINE_S = 90
PARTITIONS = 2
GROUP = "ck-txn-group"


def _die(code, msg):
    sys.stderr.write(msg.rstrip("\n") + "\n")
    sys.stderr.flush()
    os._exit(code)


def _arm_deadline():
    msg = "FAIL: transactions_check: overall deadline of %ds passed" % DEADLINE_S
    signal.signal(signal.SIGALRM, lambda _s, _f: _die(3, msg))
    signal.alarm(DEADLINE_S)
    t = threading.Timer(DEADLINE_S + 5, _die, args=(3, msg + " (watchdog)"))
    t.daemon = True
    t.start()


class CheckFailed(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise CheckFailed(msg)


def read_all(bootstrap, topic, isolation):
    """Every value of the topic up to its end for `isolation`, per partition."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, TopicPartition

    c = Consumer({
        "bootstrap.servers": bootstrap,
        "group.id": "ck-txn-reader",
        "isolation.level": isolation,
        "enable.partition.eof": True,
        "enable.auto.commit": False,
    })
    c.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(PARTITIONS)])
    out = {p: [] for p in range(PARTITIONS)}
    at_end = set()
    deadline = time.monotonic() + 30
    while len(at_end) < PARTITIONS:
        check(time.monotonic() < deadline, "%s read did not reach the end: %r" % (isolation, out))
        m = c.poll(0.2)
        if m is None:
            continue
        if m.error():
            check(m.error().code() == KafkaError._PARTITION_EOF, "%s read: %s" % (isolation, m.error()))
            at_end.add(m.partition())
            continue
        out[m.partition()].append(m.value().decode())
    c.close()
    return out


def run(bootstrap, topic):
    from confluent_kafka import Consumer, Producer, TopicPartition
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    for f in admin.create_topics([NewTopic(topic, PARTITIONS, 1)]).values():
        f.result(30)
    time.sleep(0.5)
    p = Producer({"bootstrap.servers": bootstrap, "transactional.id": "ck-txn"})
    p.init_transactions(30)
    group_consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": GROUP,
                               "enable.auto.commit": False})
    metadata = group_consumer.consumer_group_metadata()
    # The group's coordinator up first (the first lookup creates __consumer_offsets): the
    # producer's send_offsets_to_transaction retries a COORDINATOR_NOT_AVAILABLE lookup only
    # twice, 100 ms apart, and then waits forever (librdkafka 2.x); the consumer's OffsetFetch
    # retries until the coordinator answers, as against Kafka, whose coordinator also answers
    # COORDINATOR_NOT_AVAILABLE until the topic's partitions are loaded.
    group_consumer.committed([TopicPartition(topic, 0)], 30)
    for tag, count, commit, offset in (("c1", 3, True, None), ("a1", 2, False, 9),
                                       ("c2", 2, True, 4)):
        p.begin_transaction()
        for part in range(PARTITIONS):
            for i in range(count):
                p.produce(topic, value="%s-%d-%d" % (tag, part, i), partition=part)
        if offset is not None:
            p.send_offsets_to_transaction(
                [TopicPartition(topic, part, offset) for part in range(PARTITIONS)], metadata, 30)
        if commit:
            p.commit_transaction(30)
        else:
            p.flush(30)
            p.abort_transaction(30)
    committed = read_all(bootstrap, topic, "read_committed")
    everything = read_all(bootstrap, topic, "read_uncommitted")
    for part in range(PARTITIONS):
        want = ["c1-%d-%d" % (part, i) for i in range(3)] + ["c2-%d-%d" % (part, i) for i in range(2)]
        check(committed[part] == want, "read_committed %d: %r != %r" % (part, committed[part], want))
        check(len(everything[part]) == 7, "read_uncommitted %d: %r" % (part, everything[part]))
    offsets = group_consumer.committed([TopicPartition(topic, part) for part in range(PARTITIONS)], 30)
    check([o.offset for o in offsets] == [4] * PARTITIONS, "group offsets: %r" % offsets)
    group_consumer.close()
    return {
        "ok": True,
        "committed": sum(len(v) for v in committed.values()),
        "read_uncommitted": sum(len(v) for v in everything.values()),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bootstrap", required=True)
    ap.add_argument("--topic", required=True)
    try:
        args = ap.parse_args()
    except SystemExit:
        os._exit(2)
    _arm_deadline()
    try:
        summary = run(args.bootstrap, args.topic)
    except CheckFailed as e:
        _die(1, "FAIL: transactions_check: %s" % e)
    except Exception as e:  # noqa: BLE001 - any client error is a failure to report
        _die(1, "FAIL: transactions_check: %s: %s" % (type(e).__name__, e))
    sys.stdout.write(json.dumps(summary) + "\n")
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
