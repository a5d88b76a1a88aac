#!/usr/bin/env python3
"""Drives a Kafka broker with the real confluent-kafka (librdkafka) client and checks what comes
back.

    .venv/bin/python tests/clients/confluent_kafka_check.py --bootstrap 127.0.0.1:9092 --topic t1

Creates the topic with AdminClient (4 partitions), produces with one producer per compression
codec (none, gzip, snappy, lz4, zstd; acks=all, enable.idempotence=false): keys, a null value,
an empty value, headers with repeated keys (and a null header value), records on every
partition, compressible payloads, and one 1 MiB record (the broker must allow
message.max.bytes >= 2000000). Then reads everything back with a Consumer that assign()s every
partition at OFFSET_BEGINNING (group.id is set because the client wants one, but nothing is
subscribed or committed), and checks keys, values, headers, partitions, offsets, timestamps,
plus offsets_for_times, get_watermark_offsets and list_topics metadata.

Prints one JSON line on stdout and exits 0 when everything matches; otherwise prints one line
starting with "FAIL:" on stderr and exits 1 (2 on a usage error, 3 when the overall deadline
passes). --debug passes librdkafka's debug=protocol,... through to stderr.
"""

import argparse
import collections
import json
import logging
import os
import random
import signal
import sys
import threading
import time

DEADLINE_S = 60
CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
PARTITIONS = 4
BIG = 1024 * 1024


def _die(code, msg):
    sys.stderr.write(msg.rstrip("\n") + "\n")
    sys.stderr.flush()
    os._exit(code)


def _arm_deadline():
    def on_alarm(_signum, _frame):
        _die(3, "FAIL: confluent_kafka_check: overall deadline of %ds passed" % DEADLINE_S)

    signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(DEADLINE_S)
    # librdkafka calls block in C; a Python signal handler only runs between bytecodes, so keep
    # a watchdog thread as a backstop.
    t = threading.Timer(DEADLINE_S + 5, _die,
                        args=(3, "FAIL: confluent_kafka_check: overall deadline of %ds passed "
                                 "(watchdog)" % DEADLINE_S))
    t.daemon = True
    t.start()


class CheckFailed(Exception):
    pass


class _Tail(logging.Handler):
    """Keeps librdkafka's last log lines (it would otherwise print every failed connect on
    stderr); the last one goes into the FAIL line."""

    def __init__(self):
        super().__init__()
        self.lines = collections.deque(maxlen=5)

    def emit(self, record):
        self.lines.append(record.getMessage())


TAIL = _Tail()


def _fail_line(msg):
    line = "FAIL: confluent_kafka_check: " + msg.replace("\n", " ")
    if TAIL.lines:
        line += " [last librdkafka log: %s]" % TAIL.lines[-1][:300].replace("\n", " ")
    return line


def check(cond, msg):
    if not cond:
        raise CheckFailed(msg)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bootstrap", required=True, help="HOST:PORT")
    ap.add_argument("--topic", required=True)
    ap.add_argument("--debug", nargs="?", const="protocol,broker,cgrp,topic,fetch,msg",
                    default=None, help="librdkafka debug contexts (logged on stderr)")
    args = ap.parse_args()
    _arm_deadline()
    try:
        summary = run(args)
    except CheckFailed as e:
        _die(1, _fail_line(str(e)))
    except Exception as e:
        _die(1, _fail_line("%s: %s" % (type(e).__name__, e)))
    sys.stdout.write(json.dumps(summary, sort_keys=True) + "\n")
    sys.stdout.flush()
    os._exit(0)


def run(args):
    import confluent_kafka
    from confluent_kafka import (OFFSET_BEGINNING, TIMESTAMP_CREATE_TIME, Consumer, KafkaError,
                                 Producer, TopicPartition)
    from confluent_kafka.admin import AdminClient, NewTopic

    started = time.monotonic()
    topic = args.topic
    common = {
        "bootstrap.servers": args.bootstrap,
        "socket.timeout.ms": 15000,
        "reconnect.backoff.max.ms": 1000,
        # 'error_cb' swallows transient connection errors; the checks below catch real ones.
        "error_cb": lambda err: None,
    }
    if args.debug:
        common["debug"] = args.debug
    else:
        rdlog = logging.getLogger("librdkafka")
        rdlog.propagate = False
        rdlog.addHandler(TAIL)
        rdlog.setLevel(logging.DEBUG)
        common["logger"] = rdlog

    # -- topic ---------------------------------------------------------------------------
    admin = AdminClient(dict(common, **{"client.id": "kcli-confluent-admin"}))
    futs = admin.create_topics([NewTopic(topic, num_partitions=PARTITIONS, replication_factor=1)],
                               operation_timeout=15, request_timeout=15)
    futs[topic].result(timeout=20)  # raises KafkaException on an error
    md = None
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:  # wait until every partition has a leader
        md = admin.list_topics(topic=topic, timeout=10)
        t = md.topics.get(topic)
        if t is not None and t.error is None and len(t.partitions) == PARTITIONS and \
                all(p.leader >= 0 for p in t.partitions.values()):
            break
        time.sleep(0.2)
    else:
        raise CheckFailed("topic metadata after create_topics: %r"
                          % (md.topics.get(topic) if md else None))

    phases = {"admin": round(time.monotonic() - started, 2)}
    t_phase = time.monotonic()

    # -- produce -------------------------------------------------------------------------
    base_ts = (int(time.time() * 1000) // 1000) * 1000 - 3600 * 1000  # an hour ago, whole s
    rng = random.Random(20250901)
    expected = []

    def add(codec, key, value, headers=None, partition=None):
        i = len(expected)
        expected.append({"i": i, "codec": codec, "key": key, "value": value,
                         "headers": headers, "partition": partition, "ts": base_ts + i * 1000})

    for codec in CODECS:
        text = ("%s compressible payload; " % codec).encode() * 100  # ~3 KB, compresses well
        for p in range(PARTITIONS):
            add(codec, ("%s-k-p%d" % (codec, p)).encode(), text + b"#%d" % p, partition=p)
        for n in range(4):
            add(codec, ("%s-key-%d" % (codec, n)).encode(), ("%s-value-%d" % (codec, n)).encode())
        add(codec, ("%s-tombstone" % codec).encode(), None)
        add(codec, ("%s-empty" % codec).encode(), b"")
        add(codec, None, ("%s-no-key" % codec).encode(), partition=PARTITIONS - 1)
        add(codec, ("%s-hdr" % codec).encode(), ("%s-with-headers" % codec).encode(),
            headers=[("h1", b"one"), ("dup", b"first"), ("nullhdr", None), ("dup", b"second"),
                     ("empty", b""), ("dup", b"third")])
        add(codec, ("%s-hdr-null-value" % codec).encode(), None, headers=[("only", b"x")])
        if codec == "none":
            add(codec, b"big-1MiB", rng.randbytes(BIG), partition=0)

    errors = []

    for codec in CODECS:
        producer = Producer(dict(common, **{
            "client.id": "kcli-confluent-producer-%s" % codec,
            "acks": "all",
            "enable.idempotence": False,
            "compression.type": codec,
            "linger.ms": 20,
            "message.max.bytes": 2000000,
            "message.timeout.ms": 20000,
            "request.timeout.ms": 15000,
            "retries": 0,
        }))
        for rec in expected:
            if rec["codec"] != codec:
                continue
            kw = {"key": rec["key"], "value": rec["value"], "timestamp": rec["ts"]}
            if rec["headers"] is not None:
                kw["headers"] = rec["headers"]
            if rec["partition"] is not None:
                kw["partition"] = rec["partition"]

            def cb(err, msg, rec=rec):
                if err is not None:
                    errors.append("codec %s record %d: delivery failed: %s"
                                  % (rec["codec"], rec["i"], err))
                    return
                rec["partition"] = msg.partition()
                rec["offset"] = msg.offset()
            producer.produce(topic, on_delivery=cb, **kw)
            producer.poll(0)
        left = producer.flush(20)
        check(left == 0, "codec %s: %d records still undelivered after flush(20)" % (codec, left))
        check(not errors, "; ".join(errors[:3]))

    for rec in expected:
        check("offset" in rec and rec["offset"] >= 0,
              "record %d (%s) has no delivery report offset" % (rec["i"], rec["codec"]))
    by_tp = {}
    for rec in expected:
        by_tp.setdefault(rec["partition"], []).append(rec)
    check(sorted(by_tp) == list(range(PARTITIONS)),
          "records landed on partitions %r" % sorted(by_tp))
    for p, recs in by_tp.items():
        offs = sorted(r["offset"] for r in recs)
        check(offs == list(range(len(recs))),
              "partition %d: delivered offsets %r, expected 0..%d" % (p, offs, len(recs) - 1))

    phases["produce"] = round(time.monotonic() - t_phase, 2)
    t_phase = time.monotonic()

    # -- consume -------------------------------------------------------------------------
    consumer = Consumer(dict(common, **{
        "client.id": "kcli-confluent-consumer",
        # librdkafka's Consumer wants a group.id; with assign() and no commits it is only a name.
        "group.id": "kcli-confluent-assign-only",
        "enable.auto.commit": False,
        "enable.auto.offset.store": False,
        "auto.offset.reset": "earliest",
        "fetch.max.bytes": 8 * 1024 * 1024,
        "max.partition.fetch.bytes": 4 * 1024 * 1024,
        "receive.message.max.bytes": 16 * 1024 * 1024,
        "fetch.wait.max.ms": 200,
        "session.timeout.ms": 10000,
    }))
    tps = [TopicPartition(topic, p) for p in range(PARTITIONS)]
    try:
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(PARTITIONS)])
        want = {(r["partition"], r["offset"]): r for r in expected}
        got = {}
        deadline = time.monotonic() + 30
        while len(got) < len(want):
            if time.monotonic() > deadline:
                missing = sorted(set(want) - set(got))[:10]
                raise CheckFailed("consumed %d of %d records within 30 s; first missing "
                                  "(partition, offset): %r" % (len(got), len(want), missing))
            for msg in consumer.consume(num_messages=500, timeout=0.5):
                err = msg.error()
                if err is not None:
                    if err.code() == KafkaError._PARTITION_EOF:
                        continue
                    raise CheckFailed("consumer error: %s" % err)
                k = (msg.partition(), msg.offset())
                check(msg.topic() == topic, "consumed topic %r" % msg.topic())
                check(k in want, "unexpected record at partition %d offset %d" % k)
                check(k not in got, "record at partition %d offset %d seen twice" % k)
                got[k] = (msg.key(), msg.value(), msg.headers(), msg.timestamp())

        for k, rec in want.items():
            key, value, headers, (ts_type, ts) = got[k]
            where = "partition %d offset %d (codec %s)" % (k[0], k[1], rec["codec"])
            check(key == rec["key"], "%s: key %r, expected %r" % (where, key, rec["key"]))
            check(value == rec["value"], "%s: value %s, expected %s"
                  % (where, _short(value), _short(rec["value"])))
            exp_h = rec["headers"]
            check((headers or None) == (exp_h or None), "%s: headers %r, expected %r"
                  % (where, headers, exp_h))
            check(ts_type == TIMESTAMP_CREATE_TIME and ts == rec["ts"],
                  "%s: timestamp (%r, %r), expected (CreateTime, %r)" % (where, ts_type, ts,
                                                                        rec["ts"]))
        big = [v for (_, v, _, _) in got.values() if v is not None and len(v) == BIG]
        check(len(big) == 1, "the 1 MiB record did not come back intact")

        phases["consume"] = round(time.monotonic() - t_phase, 2)
        t_phase = time.monotonic()

        # -- offsets ---------------------------------------------------------------------
        counts = {p: len(by_tp[p]) for p in range(PARTITIONS)}
        watermarks = {}
        for tp in tps:
            lo, hi = consumer.get_watermark_offsets(tp, timeout=10, cached=False)
            watermarks[tp.partition] = [lo, hi]
            check(lo == 0 and hi == counts[tp.partition],
                  "get_watermark_offsets[%d] = (%d, %d), expected (0, %d)"
                  % (tp.partition, lo, hi, counts[tp.partition]))

        query, answers = [], {}
        for p in range(PARTITIONS):
            recs = sorted(by_tp[p], key=lambda r: r["offset"])
            mid = recs[len(recs) // 2]
            query.append(TopicPartition(topic, p, mid["ts"] - 1))
            answers[p] = mid["offset"]
        for r in consumer.offsets_for_times(query, timeout=10):
            check(r.error is None, "offsets_for_times[%d] error %s" % (r.partition, r.error))
            check(r.offset == answers[r.partition], "offsets_for_times[%d] = %d, expected %d"
                  % (r.partition, r.offset, answers[r.partition]))
        last_ts = max(r["ts"] for r in expected)
        for r in consumer.offsets_for_times([TopicPartition(topic, p, last_ts + 60000)
                                             for p in range(PARTITIONS)], timeout=10):
            # Past the last timestamp: Kafka answers offset -1, which librdkafka reports as the
            # end (OFFSET_END, -1).
            check(r.error is None and r.offset == -1,
                  "offsets_for_times past the end [%d] = %d (error %s), expected -1"
                  % (r.partition, r.offset, r.error))
        for r in consumer.offsets_for_times([TopicPartition(topic, p, 0)
                                             for p in range(PARTITIONS)], timeout=10):
            check(r.error is None and r.offset == 0,
                  "offsets_for_times(0)[%d] = %d, expected 0" % (r.partition, r.offset))

        # -- metadata --------------------------------------------------------------------
        cmd = consumer.list_topics(topic=topic, timeout=10)
        t = cmd.topics.get(topic)
        check(t is not None and t.error is None, "list_topics(%s): %r" % (topic, t))
        check(sorted(t.partitions) == list(range(PARTITIONS)),
              "list_topics partitions %r" % sorted(t.partitions))
        broker_ids = set(cmd.brokers)
        check(broker_ids, "list_topics returned no brokers")
        for pm in t.partitions.values():
            check(pm.error is None, "partition %d metadata error %s" % (pm.id, pm.error))
            check(pm.leader in broker_ids, "partition %d leader %d not among brokers %r"
                  % (pm.id, pm.leader, sorted(broker_ids)))
            check(pm.replicas == [pm.leader] and pm.isrs == [pm.leader],
                  "partition %d replicas %r isrs %r" % (pm.id, pm.replicas, pm.isrs))
        all_md = consumer.list_topics(timeout=10)
        check(topic in all_md.topics, "list_topics() (all topics) lacks %s" % topic)
        cluster_id = cmd.cluster_id
        controller_id = cmd.controller_id
    finally:
        consumer.close()
    phases["offsets_metadata_close"] = round(time.monotonic() - t_phase, 2)

    return {
        "phases_s": phases,
        "driver": "confluent-kafka",
        "client_version": confluent_kafka.__version__,
        "librdkafka_version": confluent_kafka.libversion()[0],
        "topic": topic,
        "partitions": PARTITIONS,
        "codecs": list(CODECS),
        "produced": len(expected),
        "consumed": len(got),
        "per_partition": {str(p): counts[p] for p in range(PARTITIONS)},
        "watermarks": {str(p): v for p, v in watermarks.items()},
        "brokers": sorted(broker_ids),
        "cluster_id": cluster_id,
        "controller_id": controller_id,
        "elapsed_s": round(time.monotonic() - started, 2),
        "ok": True,
    }


def _short(v):
    if v is None:
        return "None"
    if len(v) > 40:
        return "<%d bytes %r...>" % (len(v), bytes(v[:16]))
    return repr(bytes(v))


if __name__ == "__main__":
    main()
