#!/usr/bin/env python3
"""Drives a Kafka broker's group coordinator with a real Python client's consumer groups and
checks what comes back.

    .venv/bin/python tests/clients/group_check.py --client kafka-python \\
        --bootstrap 127.0.0.1:9092 --topic t1 --group g1
    .venv/bin/python tests/clients/group_check.py --client confluent-kafka ...

With either client (kafka-python 3.0.12, or confluent-kafka 2.16.1 = librdkafka):
  1. creates the topic (4 partitions) and produces 200 keyed records (idempotence off);
  2. one consumer subscribes in the group, reads all 200, commits synchronously and closes (a
     clean leave); its committed offsets must equal the end offsets;
  3. 100 more records; a new consumer in the same group must read exactly those 100 (it resumes
     from the committed offsets), then commits and closes;
  4. 100 more records; two consumers in the group, each in its own thread, read until the 100
     are consumed between them: no record twice, each consumer assigned some partitions and
     together all four;
  5. the group is listed and described by the admin client (confluent-kafka), or by
     KafkaAdminClient (kafka-python), with its committed offsets.

Prints one JSON line on stdout and exits 0 when everything matches; otherwise prints one line
starting with "FAIL:" on stderr and exits 1 (2 on a usage error, 3 when the overall deadline of
90 s passes). --debug logs the client's protocol on stderr.
"""

import argparse
import json
import logging
import os
import signal
import sys
import threading
import time

DEADLINE_S = 90
PARTITIONS = 4
FIRST, MORE = 200, 100


def _die(code, msg):
    sys.stderr.write(msg.rstrip("\n") + "\n")
    sys.stderr.flush()
    os._exit(code)


def _arm_deadline():
    signal.signal(signal.SIGALRM,
                  lambda *_: _die(3, "FAIL: group_check: overall deadline of %ds passed"
                                  % DEADLINE_S))
    signal.alarm(DEADLINE_S)
    t = threading.Timer(DEADLINE_S + 5, _die,
                        args=(3, "FAIL: group_check: overall deadline passed (watchdog)"))
    t.daemon = True
    t.start()


class CheckFailed(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise CheckFailed(msg)


class KafkaPython:
    """The steps above with kafka-python."""

    def __init__(self, args):
        self.args = args
        self.common = {"bootstrap_servers": [args.bootstrap], "request_timeout_ms": 15000}

    def create_topic(self):
        from kafka import KafkaAdminClient
        admin = KafkaAdminClient(**self.common)
        try:
            admin.create_topics({self.args.topic: {"num_partitions": PARTITIONS,
                                                   "replication_factor": 1}},
                                timeout_ms=15000, wait_for_metadata=True)
        finally:
            admin.close()

    def produce(self, start, count):
        from kafka import KafkaProducer
        p = KafkaProducer(acks="all", enable_idempotence=False, linger_ms=5, **self.common)
        try:
            for i in range(start, start + count):
                p.send(self.args.topic, key=b"k%d" % i, value=b"v%d" % i,
                       partition=i % PARTITIONS)
            p.flush(timeout=20)
        finally:
            p.close(timeout=10)

    def consumer(self):
        from kafka import KafkaConsumer
        c = KafkaConsumer(group_id=self.args.group, auto_offset_reset="earliest",
                          enable_auto_commit=False, session_timeout_ms=10000,
                          heartbeat_interval_ms=500, max_poll_interval_ms=30000,
                          **self.common)
        c.subscribe([self.args.topic])
        return c

    @staticmethod
    def poll(c):
        out = []
        # kafka-python 3.0.12 can lose a join that completes after poll()'s timeout has fired
        # (seen on a loaded host: the assignment arrives, fetching never starts), so each poll
        # gets a timeout longer than a join takes.
        for tp, msgs in c.poll(timeout_ms=2000).items():
            out.extend((tp.partition, m.offset, m.value.decode()) for m in msgs)
        return out

    @staticmethod
    def assigned(c):
        return sorted(tp.partition for tp in c.assignment())

    @staticmethod
    def commit_and_close(c):
        c.commit()
        c.close()

    def committed(self):
        from kafka import KafkaAdminClient
        admin = KafkaAdminClient(**self.common)
        try:
            offsets = admin.list_group_offsets({self.args.group: None})
            groups = {g["group_id"]: g for g in admin.list_groups()}
            listed = groups.get(self.args.group, {})
            check(listed.get("protocol_type") == "consumer", "list_groups: %r" % (groups,))
            desc = admin.describe_groups([self.args.group])[self.args.group]
            check(desc["error"] is None and desc["group_state"] == "Empty"
                  and desc["members"] == [], "describe_groups: %r" % (desc,))
            return {tp.partition: om.offset for tp, om in offsets[self.args.group].items()
                    if tp.topic == self.args.topic}
        finally:
            admin.close()

    def end_offsets(self):
        from kafka import KafkaConsumer, TopicPartition
        c = KafkaConsumer(**self.common)
        try:
            tps = [TopicPartition(self.args.topic, p) for p in range(PARTITIONS)]
            return {tp.partition: o for tp, o in c.end_offsets(tps).items()}
        finally:
            c.close()


class ConfluentKafka:
    """The steps above with confluent-kafka."""

    def __init__(self, args):
        self.args = args
        self.common = {"bootstrap.servers": args.bootstrap}
        if args.debug:
            self.common["debug"] = "protocol,cgrp"

    def create_topic(self):
        from confluent_kafka.admin import AdminClient, NewTopic
        admin = AdminClient(self.common)
        for f in admin.create_topics([NewTopic(self.args.topic, PARTITIONS, 1)]).values():
            f.result(timeout=15)

    def produce(self, start, count):
        from confluent_kafka import Producer
        p = Producer(dict(self.common, **{"enable.idempotence": False, "acks": "all",
                                          "linger.ms": 5}))
        errors = []
        for i in range(start, start + count):
            p.produce(self.args.topic, key=b"k%d" % i, value=b"v%d" % i,
                      partition=i % PARTITIONS,
                      on_delivery=lambda err, _m: err and errors.append(err))
        check(p.flush(20) == 0, "producer did not flush")
        check(not errors, "delivery errors: %r" % errors)

    def consumer(self):
        from confluent_kafka import Consumer
        c = Consumer(dict(self.common, **{"group.id": self.args.group,
                                          "auto.offset.reset": "earliest",
                                          "enable.auto.commit": False,
                                          "session.timeout.ms": 10000,
                                          "heartbeat.interval.ms": 500}))
        c.subscribe([self.args.topic])
        return c

    @staticmethod
    def poll(c):
        m = c.poll(0.2)
        if m is None:
            return []
        check(m.error() is None, "consumer error: %s" % m.error())
        return [(m.partition(), m.offset(), m.value().decode())]

    @staticmethod
    def assigned(c):
        return sorted(tp.partition for tp in c.assignment())

    @staticmethod
    def commit_and_close(c):
        c.commit(asynchronous=False)
        c.close()

    def committed(self):
        from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition
        from confluent_kafka.admin import AdminClient
        admin = AdminClient(self.common)
        listed = admin.list_consumer_groups().result(timeout=15)
        ids = [g.group_id for g in listed.valid]
        check(self.args.group in ids, "list_consumer_groups lacks the group: %r" % ids)
        desc = admin.describe_consumer_groups([self.args.group])[self.args.group].result(15)
        check(desc.group_id == self.args.group and not desc.members
              and str(desc.state).endswith("EMPTY"), "describe: %r %s" % (desc, desc.state))
        req = ConsumerGroupTopicPartitions(
            self.args.group, [TopicPartition(self.args.topic, p) for p in range(PARTITIONS)])
        res = admin.list_consumer_group_offsets([req])[self.args.group].result(15)
        return {tp.partition: tp.offset for tp in res.topic_partitions}

    def end_offsets(self):
        from confluent_kafka import Consumer, TopicPartition
        c = Consumer(dict(self.common, **{"group.id": "end-offsets-probe"}))
        try:
            return {p: c.get_watermark_offsets(TopicPartition(self.args.topic, p), 10)[1]
                    for p in range(PARTITIONS)}
        finally:
            c.close()


def read_until(client, c, want, seen, limit_s=40):
    """Polls `c` until `seen` holds `want` records; fails on a duplicate."""
    deadline = time.monotonic() + limit_s
    while len(seen) < want:
        check(time.monotonic() < deadline, "read %d of %d records" % (len(seen), want))
        for p, off, value in client.poll(c):
            check((p, off) not in seen, "record %d/%d delivered twice" % (p, off))
            seen[(p, off)] = value


def run(args):
    client = KafkaPython(args) if args.client == "kafka-python" else ConfluentKafka(args)
    client.create_topic()

    # 2. one member reads everything and leaves cleanly.
    client.produce(0, FIRST)
    c = client.consumer()
    seen = {}
    read_until(client, c, FIRST, seen)
    client.commit_and_close(c)
    check(sorted(seen.values()) == sorted("v%d" % i for i in range(FIRST)), "first read differs")
    ends = client.end_offsets()
    committed = client.committed()
    check(committed == ends, "committed %r != end offsets %r" % (committed, ends))

    # 3. a new member resumes from the committed offsets.
    client.produce(FIRST, MORE)
    c = client.consumer()
    seen = {}
    read_until(client, c, MORE, seen)
    time.sleep(1)  # anything beyond the new records would show up now
    for p, off, value in client.poll(c):
        seen[(p, off)] = value
    client.commit_and_close(c)
    check(sorted(seen.values()) == sorted("v%d" % i for i in range(FIRST, FIRST + MORE)),
          "the resumed member read %d records, not exactly the %d new ones" % (len(seen), MORE))

    # 4. two members share the partitions: once both hold some and together all, the new
    # records are produced, and each must come from its reader's own partitions.
    shared, lock, stop = {}, threading.Lock(), threading.Event()
    assignments, failures = {}, []

    def member(name):
        try:
            c = client.consumer()
            while not stop.is_set():
                for p, off, value in client.poll(c):
                    with lock:
                        if (p, off) in shared:
                            failures.append("record %d/%d delivered twice" % (p, off))
                        if p not in assignments.get(name, []):
                            failures.append("%s read partition %d outside its assignment %r"
                                            % (name, p, assignments.get(name)))
                        shared[(p, off)] = value
                        if len(shared) >= MORE:
                            stop.set()
                with lock:
                    assignments[name] = client.assigned(c)
            client.commit_and_close(c)
        except Exception as e:  # reported by the main thread
            failures.append("%s: %s: %s" % (name, type(e).__name__, e))
            stop.set()

    threads = [threading.Thread(target=member, args=(n,), daemon=True) for n in ("a", "b")]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 40
    while True:
        with lock:
            a, b = assignments.get("a", []), assignments.get("b", [])
        if a and b and sorted(a + b) == list(range(PARTITIONS)):
            break
        check(not failures, "; ".join(failures))
        check(time.monotonic() < deadline, "the members never shared the partitions: %r"
              % assignments)
        time.sleep(0.1)
    client.produce(FIRST + MORE, MORE)
    for t in threads:
        t.join(timeout=40)
    check(not failures, "; ".join(failures))
    check(sorted(shared.values()) == sorted("v%d" % i for i in range(FIRST + MORE,
                                                                      FIRST + 2 * MORE)),
          "the two members read %d records" % len(shared))
    ends = client.end_offsets()
    committed = client.committed()
    check(committed == ends, "committed %r != end offsets %r" % (committed, ends))
    return {"ok": True, "client": args.client, "consumed": FIRST + 2 * MORE,
            "assignments": assignments}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--client", required=True, choices=("kafka-python", "confluent-kafka"))
    ap.add_argument("--bootstrap", required=True, help="HOST:PORT")
    ap.add_argument("--topic", required=True)
    ap.add_argument("--group", required=True)
    ap.add_argument("--debug", action="store_true")
    args = ap.parse_args()
    _arm_deadline()
    if args.debug:
        logging.basicConfig(level=logging.DEBUG, stream=sys.stderr)
    try:
        summary = run(args)
    except CheckFailed as e:
        _die(1, "FAIL: group_check: %s" % e)
    except Exception as e:
        _die(1, "FAIL: group_check: %s: %s" % (type(e).__name__, str(e).replace("\n", " ")))
    sys.stdout.write(json.dumps(summary, sort_keys=True) + "\n")
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
