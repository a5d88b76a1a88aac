#!/usr/bin/env python3
"""Produces and consumes over a SASL_PLAINTEXT (or SASL_SSL) listener with a real Python client.

    .venv/bin/python tests/clients/sasl_check.py --client confluent-kafka \
        --bootstrap 127.0.0.1:9093 --topic t1 --mechanism SCRAM-SHA-512 \
        --username alice --password alice-secret
    .venv/bin/python tests/clients/sasl_check.py --client kafka-python --api-version 0.10.1 \
        --bootstrap 127.0.0.1:9093 --topic t2 --mechanism PLAIN --username alice --password s

Produces 20 keyed records (acks=all, idempotence off) to partition 0 of the topic (created by
the broker on first use), then reads them back with a group-less consumer (assign from the
beginning) and checks keys, values and offsets. kafka-python pinned to api_version (0,10,1)
authenticates with SaslHandshake v0 and then unframed SASL tokens; the other clients use
SaslHandshake v1 and SaslAuthenticate.

--ssl-ca FILE (confluent-kafka only): the listener is SASL_SSL; trust the CA in FILE (PEM).

--expect-auth-failure: the client must fail to authenticate (a wrong password): the check
passes when no metadata can be had and the error says authentication failed.

--expect-write-denied: the user authenticates but may not write to the topic: one record sent
to partition 0 must fail with TOPIC_AUTHORIZATION_FAILED.

Prints one JSON line on stdout and exits 0 when everything matches; otherwise one line starting
with "FAIL:" on stderr and exit 1 (2 on a usage error, 3 when the 60 s deadline passes).
"""

import argparse
import json
import os
import signal
import sys
import threading
import time

DEADLINE_S = 60
COUNT = 20


def _die(code, msg):
    sys.stderr.write(msg.rstrip("\n") + "\n")
    sys.stderr.flush()
    os._exit(code)


def _arm_deadline():
    signal.signal(signal.SIGALRM,
                  lambda *_: _die(3, "FAIL: sasl_check: overall deadline of %ds passed" % DEADLINE_S))
    signal.alarm(DEADLINE_S)
    t = threading.Timer(DEADLINE_S + 5, _die,
                        args=(3, "FAIL: sasl_check: deadline passed (watchdog)"))
    t.daemon = True
    t.start()


def records():
    return [(("k%d" % i).encode(), ("value-%d" % i).encode()) for i in range(COUNT)]


def run_confluent(args):
    from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
    common = {
        "bootstrap.servers": args.bootstrap,
        "security.protocol": "SASL_SSL" if args.ssl_ca else "SASL_PLAINTEXT",
        "sasl.mechanism": args.mechanism,
        "sasl.username": args.username,
        "sasl.password": args.password,
    }
    if args.ssl_ca:
        common["ssl.ca.location"] = args.ssl_ca
    if args.expect_auth_failure:
        errors = []
        # log_level 0: librdkafka would log every failed attempt on stderr.
        p = Producer(dict(common, error_cb=lambda e: errors.append(str(e)), log_level=0))
        try:
            p.list_topics(timeout=5)
            _die(1, "FAIL: sasl_check: metadata came back with a wrong password")
        except KafkaException as e:
            errors.append(str(e))
        # The error callback runs only from poll().
        end = time.time() + 10
        while not any("uthentication" in e for e in errors) and time.time() < end:
            p.poll(0.2)
        text = " ".join(errors)
        if "uthentication" not in text:
            _die(1, "FAIL: sasl_check: no authentication error: %s" % text)
        return {"auth_failed": True}
    if args.expect_write_denied:
        from confluent_kafka import KafkaError
        p = Producer(dict(common, **{"acks": "all", "enable.idempotence": False,
                                     "message.timeout.ms": 20000, "log_level": 0}))
        delivered = []
        p.produce(args.topic, value=b"denied", partition=0,
                  on_delivery=lambda err, msg: delivered.append(err))
        p.flush(30)
        if len(delivered) != 1 or delivered[0] is None \
                or delivered[0].code() != KafkaError.TOPIC_AUTHORIZATION_FAILED:
            _die(1, "FAIL: sasl_check: expected TOPIC_AUTHORIZATION_FAILED, got %r" % (delivered,))
        return {"write_denied": True, "error": str(delivered[0])}
    p = Producer(dict(common, **{"acks": "all", "enable.idempotence": False, "linger.ms": 5}))
    delivered = []
    for key, value in records():
        p.produce(args.topic, value=value, key=key, partition=0,
                  on_delivery=lambda err, msg: delivered.append((err, msg.offset() if msg else None)))
    p.flush(30)
    bad = [d for d in delivered if d[0] is not None]
    if len(delivered) != COUNT or bad:
        _die(1, "FAIL: sasl_check: deliveries %r" % (delivered,))
    c = Consumer(dict(common, **{"group.id": "sasl-check-unused", "enable.auto.commit": False}))
    c.assign([TopicPartition(args.topic, 0, 0)])
    got = []
    end = time.time() + 30
    while len(got) < COUNT and time.time() < end:
        m = c.poll(0.5)
        if m is None:
            continue
        if m.error():
            _die(1, "FAIL: sasl_check: consumer error %s" % m.error())
        got.append((m.offset(), m.key(), m.value()))
    c.close()
    return check(got)


def run_kafka_python(args):
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition
    from kafka.errors import KafkaError
    common = {
        "bootstrap_servers": args.bootstrap,
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": args.mechanism,
        "sasl_plain_username": args.username,
        "sasl_plain_password": args.password,
    }
    if args.api_version:
        common["api_version"] = tuple(int(x) for x in args.api_version.split("."))
    if args.expect_auth_failure:
        try:
            KafkaProducer(max_block_ms=5000, **common).partitions_for(args.topic)
        except KafkaError as e:
            text = "%s: %s" % (type(e).__name__, e)
            if "uthentication" not in text and "NoBrokersAvailable" not in text \
                    and "KafkaTimeoutError" not in text:
                _die(1, "FAIL: sasl_check: unexpected error %s" % text)
            return {"auth_failed": True, "error": text}
        _die(1, "FAIL: sasl_check: metadata came back with a wrong password")
    if args.expect_write_denied:
        from kafka.errors import TopicAuthorizationFailedError
        p = KafkaProducer(acks="all", retries=0, **common)
        try:
            p.send(args.topic, value=b"denied", partition=0).get(timeout=30)
        except TopicAuthorizationFailedError as e:
            return {"write_denied": True, "error": "%s: %s" % (type(e).__name__, e)}
        except KafkaError as e:
            _die(1, "FAIL: sasl_check: expected TopicAuthorizationFailedError, got %s: %s"
                 % (type(e).__name__, e))
        _die(1, "FAIL: sasl_check: a denied write was acknowledged")
    p = KafkaProducer(acks="all", **common)
    futures = [p.send(args.topic, key=k, value=v, partition=0) for k, v in records()]
    p.flush(30)
    offsets = [f.get(timeout=30).offset for f in futures]
    if offsets != list(range(COUNT)):
        _die(1, "FAIL: sasl_check: produced at offsets %r" % offsets)
    p.close()
    c = KafkaConsumer(enable_auto_commit=False, **common)
    tp = TopicPartition(args.topic, 0)
    c.assign([tp])
    c.seek_to_beginning(tp)
    got = []
    end = time.time() + 30
    while len(got) < COUNT and time.time() < end:
        for batch in c.poll(timeout_ms=500).values():
            got.extend((m.offset, m.key, m.value) for m in batch)
    c.close()
    return check(got)


def check(got):
    want = [(i, k, v) for i, (k, v) in enumerate(records())]
    if got != want:
        _die(1, "FAIL: sasl_check: consumed %r, expected %r" % (got, want))
    return {"produced": COUNT, "consumed": len(got)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--client", choices=["confluent-kafka", "kafka-python"], required=True)
    ap.add_argument("--bootstrap", required=True)
    ap.add_argument("--topic", required=True)
    ap.add_argument("--mechanism", required=True)
    ap.add_argument("--username", required=True)
    ap.add_argument("--password", required=True)
    ap.add_argument("--api-version")
    ap.add_argument("--ssl-ca")
    ap.add_argument("--expect-auth-failure", action="store_true")
    ap.add_argument("--expect-write-denied", action="store_true")
    args = ap.parse_args()
    if args.ssl_ca and args.client != "confluent-kafka":
        _die(2, "FAIL: sasl_check: --ssl-ca is for confluent-kafka only")
    _arm_deadline()
    try:
        run = run_confluent if args.client == "confluent-kafka" else run_kafka_python
        summary = run(args)
    except Exception as e:  # noqa: BLE001 - any client exception is a failed check
        _die(1, "FAIL: sasl_check: %s: %s" % (type(e).__name__, e))
    summary.update({"ok": True, "client": args.client, "mechanism": args.mechanism})
    print(json.dumps(summary, sort_keys=True))
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
