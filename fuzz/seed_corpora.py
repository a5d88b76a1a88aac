#!/usr/bin/env python3
"""Seeds each fuzz target's corpus (fuzz/corpus/<target>/) from real files.

- decode_request: the client frames captured in tests/fixtures/frames/.
- validate_batches: the record batches inside those frames' Produce requests, and every entry
  of segments Apache Kafka 3.9.1 writes itself (tests/kafka/RebuildSegments.java: magic-2
  batches of every codec, control batches, legacy magic 0 and 1 message sets), each under a
  spread of flags (origin, compaction, timestamp type, topic codec; legacy for v0/v1).
- load_log: those Kafka-written segments (.log, .index, .timeindex), clean and unclean.
- sasl_exchange: the client messages real clients send (PLAIN, SCRAM first messages), raw and
  driven.
- server_properties: broker configurations as this repo's tests and docs write them.

Usage (from the repository root, with Kafka's jars in .tools/kafka-3.9.1 as tests/run installs
them, and a JDK): python3 fuzz/seed_corpora.py
"""

import glob
import hashlib
import os
import struct
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "fuzz", "corpus")


def put(target, data):
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    name = hashlib.sha1(data).hexdigest()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def batches_in_frame(frame):
    """Magic-2 batches with base offset 0 (what clients send), found by their header shape."""
    out = []
    for i in range(0, len(frame) - 61):
        if frame[i:i + 8] != b"\0" * 8 or frame[i + 16] != 2:
            continue
        (length,) = struct.unpack(">i", frame[i + 8:i + 12])
        if 49 <= length and i + 12 + length <= len(frame):
            out.append(frame[i:i + 12 + length])
    return out


def log_entries(log):
    """Every entry of a segment: offset(8) size(4) body, magic at byte 16."""
    pos = 0
    while pos + 17 <= len(log):
        (size,) = struct.unpack(">i", log[pos + 8:pos + 12])
        if size < 0 or pos + 12 + size > len(log):
            break
        yield log[pos:pos + 12 + size]
        pos += 12 + size


def kafka_segments(tmp):
    jars = os.path.join(ROOT, ".tools", "kafka-3.9.1")
    if not os.path.isdir(jars):
        sys.exit("fuzz/seed_corpora.py: Kafka's jars are missing in .tools/kafka-3.9.1 (run tests/install-kafka-tools)")
    classes = os.path.join(tmp, "classes")
    partition = os.path.join(tmp, "t-0")
    os.makedirs(partition)
    cp = jars + "/*"
    subprocess.run(["javac", "-nowarn", "-cp", cp, "-d", classes,
                    os.path.join(ROOT, "tests", "kafka", "RebuildSegments.java")], check=True)
    subprocess.run(["java", "-cp", classes + ":" + cp, "RebuildSegments", partition], check=True)
    segments = []
    for log in sorted(glob.glob(os.path.join(partition, "*.log"))):
        base = log[:-4]
        read = lambda p: open(p, "rb").read() if os.path.exists(p) else b""
        segments.append((read(log), read(base + ".index"), read(base + ".timeindex")))
    return segments


def main():
    frames = sorted(glob.glob(os.path.join(ROOT, "tests", "fixtures", "frames", "*", "*.bin")))
    for path in frames:
        put("decode_request", open(path, "rb").read())

    client_flags = [0x00, 0x04, 0x08, 0x10, 0x20, 0x30, 0x40, 0x50]
    for path in frames:
        if "-Produce-" in path:
            for batch in batches_in_frame(open(path, "rb").read()):
                for flags in client_flags:
                    put("validate_batches", bytes([flags]) + batch)

    with tempfile.TemporaryDirectory() as tmp:
        for log, index, time_index in kafka_segments(tmp):
            for clean in (0, 1):
                put("load_log", struct.pack("<HHB", len(index), len(time_index), clean)
                    + index + time_index + log)
            put("validate_batches", bytes([0x01]) + log)  # a follower's fetched records
            for entry in log_entries(log):
                if entry[16] == 2:
                    as_client = b"\0" * 8 + entry[8:]
                    for flags in client_flags:
                        put("validate_batches", bytes([flags]) + as_client)
                    put("validate_batches", bytes([0x02]) + entry)
                else:
                    put("validate_batches", bytes([0x80]) + entry)
                    put("validate_batches", bytes([0x80 | 0x40]) + entry)

    def tokens(*ts):
        return b"".join(struct.pack("<H", len(t)) + t for t in ts)

    for mech in (0, 1, 2):
        put("sasl_exchange", bytes([1, mech]) + b"fyko+d2lbbFgONRv9qkxdawL")
    put("sasl_exchange", bytes([0, 0]) + tokens(b"\0alice\0alice-secret", b"again"))
    put("sasl_exchange", bytes([0, 0]) + tokens(b"alice\0alice\0wrong"))
    for mech in (1, 2):
        put("sasl_exchange", bytes([0, mech]) + tokens(
            b"n,,n=alice,r=rOprNGfwEbeRWgbNEkqO",
            b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="))
        put("sasl_exchange", bytes([0, mech]) + tokens(b"n,a=bob,n=alice,r=abc,tokenauth=true"))
        put("sasl_exchange", bytes([1, mech]) + b"abc\0" + struct.pack("<HB", 40, 1))

    configs = [
        "broker.id=0\nlisteners=PLAINTEXT://127.0.0.1:9092\nlog.dirs=/tmp/kcli-fuzz-logs\n",
        "broker.id=1\nzookeeper.connect=127.0.0.1:2181/kcli\nlisteners=PLAINTEXT://:9092,SSL://:9093\n"
        "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SSL:SSL\ninter.broker.listener.name=PLAINTEXT\n"
        "num.partitions=3\ndefault.replication.factor=3\nmin.insync.replicas=2\n",
        "listeners=SASL_PLAINTEXT://127.0.0.1:9094\nsasl.enabled.mechanisms=SCRAM-SHA-512,PLAIN\n"
        "listener.name.sasl_plaintext.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule "
        "required username=\"admin\" password=\"admin-secret\" user_admin=\"admin-secret\";\n"
        "authorizer.class.name=kafka.security.authorizer.AclAuthorizer\nsuper.users=User:admin;User:ANONYMOUS\n",
        "# comment\n! other comment\nlog.retention.hours = 168\nlog.segment.bytes:1073741824\n"
        "log.cleanup.policy compact,delete\nkey\\ with\\ spaces=v\\u00e9\\\n  continued\n",
        "queued.max.request.bytes=134217728\nmax.connections=1000\nmax.connections.per.ip.overrides=127.0.0.1:5\n"
        "socket.request.max.bytes=104857600\nreplica.lag.time.max.ms=30000\nunclean.leader.election.enable=false\n",
    ]
    for text in configs:
        put("server_properties", text.encode("latin-1"))

    for target in sorted(os.listdir(CORPUS)):
        print(f"{target}: {len(os.listdir(os.path.join(CORPUS, target)))} seeds")


if __name__ == "__main__":
    main()
