#!/usr/bin/env python3
"""Drives a Kafka broker with the real kafka-python client and checks what comes back.

    .venv/bin/python tests/clients/kafka_python_check.py --bootstrap 127.0.0.1:9092 --topic t1
    .venv/bin/python tests/clients/kafka_python_check.py --bootstrap 127.0.0.1:9092 --topic t2 \
        --api-version 0.10.1

Default mode: creates the topic with KafkaAdminClient (3 partitions), produces with acks=1 and
then acks='all' (keys, a null value, an empty value, headers with a repeated key, records on
every partition), then reads everything back with a group-less KafkaConsumer (assign +
seek_to_beginning) and checks keys, values, headers, partitions, offsets and timestamps, plus
beginning_offsets / end_offsets / offsets_for_times.

--api-version 0.10.1: pins api_version=(0,10,1) on producer and consumer, so kafka-python speaks
Produce v2 / Fetch v3 / ListOffsets v1 with message format v1 (no headers). The topic is not
created up front; the broker auto-creates it on first use with its default partition count.

Prints one JSON line on stdout and exits 0 when everything matches; otherwise prints one line
starting with "FAIL:" on stderr and exits 1 (2 on a usage error, 3 when the overall deadline
passes).
"""

import argparse
import inspect
import json
import logging
import os
import signal
import sys
import threading
import time

DEADLINE_S = 60


def _die(code, msg):
    sys.stderr.write(msg.rstrip("\n") + "\n")
    sys.stderr.flush()
    os._exit(code)


def _arm_deadline():
    def on_alarm(_signum, _frame):
        _die(3, "FAIL: kafka_python_check: overall deadline of %ds passed" % DEADLINE_S)

    signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(DEADLINE_S)
    # Backstop in case the main thread is stuck somewhere a signal cannot reach it.
    t = threading.Timer(DEADLINE_S + 5, _die,
                        args=(3, "FAIL: kafka_python_check: overall deadline of %ds passed "
                                 "(watchdog)" % DEADLINE_S))
    t.daemon = True
    t.start()


class CheckFailed(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise CheckFailed(msg)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bootstrap", required=True, help="HOST:PORT")
    ap.add_argument("--topic", required=True)
    ap.add_argument("--api-version", default=None,
                    help="pin the client's api_version; only 0.10.1 is meaningful here")
    ap.add_argument("--partitions", type=int, default=3,
                    help="partitions to create the topic with (default mode only; default 3)")
    ap.add_argument("--debug", action="store_true", help="kafka-python DEBUG logging on stderr")
    args = ap.parse_args()

    _arm_deadline()
    if args.debug:
        logging.basicConfig(level=logging.DEBUG, stream=sys.stderr,
                            format="%(asctime)s %(name)s %(message)s")

    try:
        summary = run(args)
    except CheckFailed as e:
        _die(1, "FAIL: kafka_python_check: %s" % e)
    except Exception as e:  # any client error is a failure too, on one line
        _die(1, "FAIL: kafka_python_check: %s: %s" % (type(e).__name__, str(e).replace("\n", " ")))
    sys.stdout.write(json.dumps(summary, sort_keys=True) + "\n")
    sys.stdout.flush()
    os._exit(0)  # don't wait for client threads


def run(args):
    import kafka
    from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition

    started = time.monotonic()
    legacy = args.api_version is not None
    common = {
        "bootstrap_servers": [args.bootstrap],
        "request_timeout_ms": 15000,
        "reconnect_backoff_max_ms": 1000,
        "bootstrap_timeout_ms": 15000,
    }
    if legacy:
        parts = tuple(int(x) for x in args.api_version.split("."))
        check(parts == (0, 10, 1), "--api-version: only 0.10.1 is supported, got %s"
              % args.api_version)
        common["api_version"] = parts
    topic = args.topic

    # -- topic ---------------------------------------------------------------------------
    created = False
    if not legacy:
        admin = KafkaAdminClient(client_id="kcli-kafka-python-admin", **common)
        try:
            res = admin.create_topics(
                {topic: {"num_partitions": args.partitions, "replication_factor": 1}},
                timeout_ms=15000, wait_for_metadata=True)
            errs = [t for t in res.get("topics", []) if t.get("error_code", 0) != 0]
            check(not errs, "create_topics returned errors: %r" % errs)
            described = admin.describe_topics([topic])
            check(len(described) == 1 and len(described[0]["partitions"]) == args.partitions,
                  "describe_topics after create: %r" % described)
            check(topic in admin.list_topics(), "list_topics lacks %s" % topic)
            created = True
        finally:
            admin.close()

    # -- produce -------------------------------------------------------------------------
    pkw = dict(common)
    pkw.update(client_id="kcli-kafka-python-producer", max_block_ms=20000, linger_ms=5,
               retries=0)
    if "enable_idempotence" in KafkaProducer.DEFAULT_CONFIG or \
            "enable_idempotence" in inspect.signature(KafkaProducer.__init__).parameters:
        pkw["enable_idempotence"] = False

    base_ts = (int(time.time() * 1000) // 1000) * 1000 - 3600 * 1000  # an hour ago, whole s
    expected = []  # dicts: key, value, headers, partition (None = partitioner), ts
    seq = [0]

    def add(key, value, headers=None, partition=None):
        i = seq[0]
        seq[0] += 1
        expected.append({"i": i, "key": key, "value": value, "headers": headers or [],
                         "partition": partition, "ts": base_ts + i * 1000})

    producers_used = []
    for acks in (1, "all"):
        producer = KafkaProducer(acks=acks, **pkw)
        producers_used.append(acks)
        try:
            partitions = producer.partitions_for(topic)
            check(partitions, "producer sees no partitions for %s" % topic)
            partitions = sorted(partitions)
            if not legacy:
                check(len(partitions) == args.partitions,
                      "producer sees partitions %r, expected %d" % (partitions, args.partitions))
            start = len(expected)
            tag = "acks%s" % acks
            for p in partitions:  # explicit spread over every partition
                add(("%s-k-p%d" % (tag, p)).encode(), ("%s-v-p%d" % (tag, p)).encode(),
                    partition=p)
            for n in range(6):  # partitioner-chosen by key
                add(("%s-key-%d" % (tag, n)).encode(), ("%s-value-%d" % (tag, n)).encode())
            add(("%s-tombstone" % tag).encode(), None)  # null value
            add(("%s-empty" % tag).encode(), b"")  # empty (not null) value
            add(None, ("%s-no-key" % tag).encode(), partition=partitions[-1])  # null key
            add(b"", ("%s-empty-key" % tag).encode(), partition=partitions[0])
            if not legacy:
                add(("%s-hdr" % tag).encode(), ("%s-with-headers" % tag).encode(),
                    headers=[("h1", b"one"), ("dup", b"first"), ("h2", b""),
                             ("dup", b"second"), ("dup", b"third")])
                add(("%s-hdr2" % tag).encode(), None, headers=[("only", b"x")])
            add(("%s-big" % tag).encode(), bytes(range(256)) * 400)  # 100 KiB, binary

            futures = []
            for rec in expected[start:]:
                kw = {"key": rec["key"], "value": rec["value"], "timestamp_ms": rec["ts"]}
                if rec["headers"]:
                    kw["headers"] = rec["headers"]
                if rec["partition"] is not None:
                    kw["partition"] = rec["partition"]
                futures.append((rec, producer.send(topic, **kw)))
            producer.flush(timeout=20)
            for rec, fut in futures:
                md = fut.get(timeout=20)
                check(md.topic == topic, "RecordMetadata.topic %r" % md.topic)
                if rec["partition"] is not None:
                    check(md.partition == rec["partition"],
                          "record %d went to partition %d, asked for %d"
                          % (rec["i"], md.partition, rec["partition"]))
                check(md.offset >= 0, "record %d got offset %d" % (rec["i"], md.offset))
                rec["partition"] = md.partition
                rec["offset"] = md.offset
        finally:
            producer.close(timeout=10)

    by_tp = {}
    for rec in expected:
        by_tp.setdefault(rec["partition"], []).append(rec)
    all_partitions = sorted(set(partitions))
    for p, recs in by_tp.items():
        offs = [r["offset"] for r in recs]
        check(offs == list(range(len(recs))),
              "partition %d: produce offsets %r, expected 0..%d" % (p, offs, len(recs) - 1))
    # same key -> same partition
    keyed = {}
    for rec in expected:
        if rec["key"]:
            keyed.setdefault(rec["key"], set()).add(rec["partition"])
    check(all(len(v) == 1 for v in keyed.values()), "a key landed on two partitions")

    # -- consume -------------------------------------------------------------------------
    ckw = dict(common)
    ckw.update(client_id="kcli-kafka-python-consumer", group_id=None, enable_auto_commit=False,
               auto_offset_reset="earliest", fetch_max_wait_ms=200,
               max_partition_fetch_bytes=2 * 1024 * 1024)
    consumer = KafkaConsumer(**ckw)
    try:
        tps = [TopicPartition(topic, p) for p in all_partitions]
        cparts = consumer.partitions_for_topic(topic)
        check(cparts is not None and sorted(cparts) == all_partitions,
              "consumer partitions_for_topic %r, producer saw %r" % (cparts, all_partitions))
        consumer.assign(tps)
        consumer.seek_to_beginning(*tps)

        want = {(r["partition"], r["offset"]): r for r in expected}
        got = {}
        deadline = time.monotonic() + 30
        while len(got) < len(want):
            if time.monotonic() > deadline:
                missing = sorted(set(want) - set(got))[:10]
                raise CheckFailed("consumed %d of %d records within 30 s; first missing "
                                  "(partition, offset): %r" % (len(got), len(want), missing))
            batch = consumer.poll(timeout_ms=500)
            for tp, recs in batch.items():
                check(tp.topic == topic, "poll returned topic %r" % tp.topic)
                for r in recs:
                    k = (r.partition, r.offset)
                    check(k in want, "unexpected record at partition %d offset %d" % k)
                    check(k not in got, "record at partition %d offset %d seen twice" % k)
                    got[k] = r

        for k, rec in want.items():
            r = got[k]
            where = "partition %d offset %d" % k
            check(r.topic == topic, "%s: topic %r" % (where, r.topic))
            check(r.key == rec["key"], "%s: key %r, expected %r" % (where, r.key, rec["key"]))
            check(r.value == rec["value"], "%s: value %s, expected %s"
                  % (where, _short(r.value), _short(rec["value"])))
            hdrs = [(hk, bytes(hv)) for hk, hv in (r.headers or [])]
            check(hdrs == rec["headers"], "%s: headers %r, expected %r"
                  % (where, hdrs, rec["headers"]))
            check(r.timestamp == rec["ts"], "%s: timestamp %r, expected %r"
                  % (where, r.timestamp, rec["ts"]))
            check(r.timestamp_type == 0, "%s: timestamp_type %r, expected 0 (CreateTime)"
                  % (where, r.timestamp_type))
        check(any(r.value is None for r in got.values()), "no null value came back")

        # -- offsets ---------------------------------------------------------------------
        counts = {p: len(by_tp.get(p, [])) for p in all_partitions}
        begin = consumer.beginning_offsets(tps, timeout_ms=15000)
        end = consumer.end_offsets(tps, timeout_ms=15000)
        for tp in tps:
            check(begin[tp] == 0, "beginning_offsets[%d] = %r, expected 0"
                  % (tp.partition, begin[tp]))
            check(end[tp] == counts[tp.partition], "end_offsets[%d] = %r, expected %d"
                  % (tp.partition, end[tp], counts[tp.partition]))

        # offsets_for_times: for each non-empty partition, ask for the timestamp of its middle
        # record minus 1 ms: the answer is that record. Past the last timestamp: None.
        query, answers = {}, {}
        for tp in tps:
            recs = by_tp.get(tp.partition, [])
            if recs:
                mid = recs[len(recs) // 2]
                query[tp] = mid["ts"] - 1
                answers[tp] = (mid["offset"], mid["ts"])
        oft = consumer.offsets_for_times(dict(query), timeout_ms=15000)
        for tp, (off, ts) in answers.items():
            o = oft.get(tp)
            check(o is not None and o.offset == off and o.timestamp == ts,
                  "offsets_for_times[%d] = %r, expected offset %d timestamp %d"
                  % (tp.partition, o, off, ts))
        last_ts = max(r["ts"] for r in expected)
        oft_late = consumer.offsets_for_times({tp: last_ts + 60000 for tp in tps},
                                              timeout_ms=15000)
        for tp in tps:
            check(oft_late.get(tp) is None, "offsets_for_times past the end [%d] = %r, "
                  "expected None" % (tp.partition, oft_late.get(tp)))
        oft_early = consumer.offsets_for_times({tp: 0 for tp in tps}, timeout_ms=15000)
        for tp in tps:
            if counts[tp.partition]:
                o = oft_early.get(tp)
                check(o is not None and o.offset == 0,
                      "offsets_for_times(0)[%d] = %r, expected offset 0" % (tp.partition, o))
    finally:
        consumer.close()

    return {
        "driver": "kafka-python",
        "client_version": kafka.__version__,
        "mode": "api_version=%s" % args.api_version if legacy else "auto",
        "topic": topic,
        "created_topic": created,
        "partitions": len(all_partitions),
        "produced": len(expected),
        "consumed": len(got),
        "per_partition": {str(p): counts[p] for p in all_partitions},
        "acks": [str(a) for a in producers_used],
        "headers_checked": not legacy,
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
