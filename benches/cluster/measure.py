#!/usr/bin/env python3
"""Measuring client for benches/cluster/run.sh: speaks Kafka's wire protocol directly over one
socket per broker (stdlib only), so every figure is what that broker's own Metadata answers,
with no client-side cache or routing in between.

Subcommands:
  zk-wait PORT TIMEOUT_S
      waits until ZooKeeper on 127.0.0.1:PORT answers `srvr` with "Mode: standalone".
  run --brokers ID=HOST:PORT:PID,... [--partitions N] [--rf R] [--timeout S]
      one benchmark run on a fresh three-broker cluster, printing one JSON object:
        create_s      CreateTopics sent to the controller -> every broker's Metadata shows topic
                      `bench` with N partitions, each with a leader >= 0
        create_resp_s CreateTopics sent -> its response received (informative)
        isr_s         then, until every broker shows every partition with a full ISR (the
                      cluster is settled before the kill)
        failover_s    kill -9 of the controller -> every surviving broker's Metadata shows every
                      partition of `bench` with a leader that is neither -1 nor the killed id
        controller_s  kill -9 -> every survivor's Metadata names a live controller (informative)
        controller, new_controller, moved (partitions the killed broker led)
  row TARGET SESSION_MS FILE
      reads the JSON lines of `run` and prints run.sh's Markdown table row: the medians, the
      session timeout, and every run's create and failover times.

Messages used (all non-flexible versions, so the encoding stays small): Metadata v4 (topics
["bench"], allow_auto_topic_creation=false), CreateTopics v3. Request header v1, response
header v0. Every wait has a deadline; on expiry the command exits 1 with a message saying what
was still missing.
"""

import argparse
import json
import os
import signal
import socket
import statistics
import struct
import sys
import time

TOPIC = "bench"
POLL_S = 0.05
METADATA, CREATE_TOPICS = 3, 19
REQUEST_TIMED_OUT = 7


class Abort(Exception):
    """A wait ran past its deadline or a broker answered an error: the run is void."""


# --- encoding -------------------------------------------------------------------------------

def enc_str(s):
    b = s.encode()
    return struct.pack(">h", len(b)) + b


def enc_nullable_str(s):
    return struct.pack(">h", -1) if s is None else enc_str(s)


class Reader:
    """Cursor over a response body; every read checks the bounds (a short frame raises)."""

    def __init__(self, buf):
        self.buf, self.pos = buf, 0

    def take(self, fmt):
        size = struct.calcsize(fmt)
        if self.pos + size > len(self.buf):
            raise Abort(f"short response ({len(self.buf)} bytes)")
        (v,) = struct.unpack_from(fmt, self.buf, self.pos)
        self.pos += size
        return v

    def i8(self):
        return self.take(">b")

    def i16(self):
        return self.take(">h")

    def i32(self):
        return self.take(">i")

    def nullable_str(self):
        n = self.i16()
        if n < 0:
            return None
        if self.pos + n > len(self.buf):
            raise Abort("short string")
        s = self.buf[self.pos:self.pos + n].decode()
        self.pos += n
        return s

    def array(self, item):
        n = self.i32()
        return [] if n < 0 else [item() for _ in range(n)]


# --- connections ----------------------------------------------------------------------------

class Broker:
    """One broker: its id, address, process id, and a lazily (re)opened connection."""

    def __init__(self, spec):
        bid, rest = spec.split("=", 1)
        host, port, pid = rest.rsplit(":", 2)
        self.id, self.host, self.port, self.pid = int(bid), host, int(port), int(pid)
        self.sock = None
        self.corr = 0

    def close(self):
        if self.sock is not None:
            self.sock.close()
            self.sock = None

    def request(self, api_key, version, body, timeout=5.0):
        """Sends one request and returns the response body after the correlation id."""
        try:
            if self.sock is None:
                self.sock = socket.create_connection((self.host, self.port), timeout=timeout)
                self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.sock.settimeout(timeout)
            self.corr += 1
            header = struct.pack(">hhi", api_key, version, self.corr) + enc_nullable_str("bench")
            msg = header + body
            self.sock.sendall(struct.pack(">i", len(msg)) + msg)
            size = struct.unpack(">i", self.recv_exact(4))[0]
            frame = self.recv_exact(size)
        except (OSError, struct.error) as e:
            self.close()
            raise ConnectionError(f"broker {self.id} ({self.host}:{self.port}): {e}") from e
        (corr,) = struct.unpack_from(">i", frame, 0)
        if corr != self.corr:
            self.close()
            raise ConnectionError(f"broker {self.id}: correlation id {corr}, wanted {self.corr}")
        return Reader(frame[4:])

    def recv_exact(self, n):
        out = bytearray()
        while len(out) < n:
            chunk = self.sock.recv(n - len(out))
            if not chunk:
                raise OSError("connection closed")
            out += chunk
        return bytes(out)

    def metadata(self, topics):
        """Metadata v4 for `topics` (a list; [] asks for no topics), without auto-creation.
        Returns (broker ids, controller id, {topic: (error, [(partition, leader, isr)])})."""
        body = struct.pack(">i", len(topics)) + b"".join(enc_str(t) for t in topics)
        body += struct.pack(">b", 0)
        r = self.request(METADATA, 4, body)
        r.i32()  # throttle_time_ms

        def broker():
            node = r.i32()
            r.nullable_str()
            r.i32()
            r.nullable_str()
            return node

        brokers = r.array(broker)
        r.nullable_str()  # cluster_id
        controller = r.i32()

        def partition():
            r.i16()
            index, leader = r.i32(), r.i32()
            r.array(r.i32)  # replica_nodes
            isr = r.array(r.i32)
            return index, leader, isr

        def topic():
            err, name = r.i16(), r.nullable_str()
            r.i8()  # is_internal
            return name, (err, r.array(partition))

        return set(brokers), controller, dict(r.array(topic))

    def create_topic(self, name, partitions, rf, timeout_ms):
        """CreateTopics v3 for one topic; returns (error code, error message)."""
        body = struct.pack(">i", 1) + enc_str(name) + struct.pack(">ihii", partitions, rf, 0, 0)
        body += struct.pack(">ib", timeout_ms, 0)
        r = self.request(CREATE_TOPICS, 3, body, timeout=timeout_ms / 1000 + 30)
        r.i32()  # throttle_time_ms
        topics = r.array(lambda: (r.nullable_str(), r.i16(), r.nullable_str()))
        if len(topics) != 1:
            raise Abort(f"CreateTopics answered {len(topics)} topics")
        return topics[0][1], topics[0][2]


# --- waiting --------------------------------------------------------------------------------

def poll_until(brokers, check, deadline_s, what):
    """Polls every broker each POLL_S until `check(broker, metadata)` holds for all of them in
    the same round; returns the seconds taken. `check` returns None when satisfied, or a short
    reason. A broker that does not answer counts as not satisfied."""
    start = time.monotonic()
    deadline = start + deadline_s
    while True:
        reasons = []
        for b in brokers:
            try:
                reason = check(b, b.metadata([TOPIC]))
            except ConnectionError as e:
                reason = str(e)
            if reason is not None:
                reasons.append(f"broker {b.id}: {reason}")
        now = time.monotonic()
        if not reasons:
            return now - start
        if now > deadline:
            raise Abort(f"{what}: not reached in {deadline_s:.0f} s; " + "; ".join(reasons))
        time.sleep(POLL_S)


def topic_partitions(md, n):
    """The partitions of `bench` in one Metadata answer, or a reason they are not all there."""
    _, _, topics = md
    if TOPIC not in topics:
        return None, "topic absent"
    err, parts = topics[TOPIC]
    if err != 0:
        return None, f"topic error {err}"
    if len(parts) != n:
        return None, f"{len(parts)}/{n} partitions"
    return parts, None


def cmd_run(args):
    brokers = [Broker(s) for s in args.brokers.split(",")]
    ids = {b.id for b in brokers}
    n, rf, limit = args.partitions, args.rf, args.timeout

    # Every broker knows every broker.
    def all_registered(b, md):
        return None if md[0] >= ids else f"knows {sorted(md[0])}"

    poll_until(brokers, all_registered, limit, "all brokers registered")

    def the_controller():
        """The broker every broker's Metadata names as the controller."""
        seen = set()

        def known(b, md):
            if md[1] < 0:
                return "no controller"
            seen.add(md[1])
            return None

        poll_until(brokers, known, limit, "a controller")
        if len(seen) != 1 or not seen <= ids:
            raise Abort(f"brokers name different or unknown controllers: {sorted(seen)}")
        return next(b for b in brokers if b.id in seen)

    controller = the_controller()

    # Topic creation, sent to the controller (ZooKeeper-mode Kafka answers NOT_CONTROLLER
    # elsewhere). A ZooKeeper-mode broker answers once its own metadata has every leader, or
    # REQUEST_TIMED_OUT after timeout_ms with the topic still being created: the polls below
    # decide either way.
    t0 = time.monotonic()
    err, msg = controller.create_topic(TOPIC, n, rf, args.create_timeout_ms)
    create_resp = time.monotonic() - t0
    if err not in (0, REQUEST_TIMED_OUT):
        raise Abort(f"CreateTopics on broker {controller.id}: error {err} {msg or ''}")

    def all_led(b, md):
        parts, reason = topic_partitions(md, n)
        if reason:
            return reason
        missing = sum(1 for _, leader, _ in parts if leader < 0)
        return f"{missing} partitions without a leader" if missing else None

    create = create_resp + poll_until(brokers, all_led, limit, "topic created")

    def full_isr(b, md):
        parts, reason = topic_partitions(md, n)
        if reason:
            return reason
        short = sum(1 for _, _, isr in parts if len(isr) < rf)
        return f"{short} partitions with a short ISR" if short else None

    isr = poll_until(brokers, full_isr, limit, "full ISR")

    # Controller failover: the controller is re-read, since it is the broker to kill now.
    victim = the_controller()
    parts, reason = topic_partitions(victim.metadata([TOPIC]), n)
    if reason:
        raise Abort(f"broker {victim.id} before the kill: {reason}")
    moved = sum(1 for _, leader, _ in parts if leader == victim.id)
    survivors = [b for b in brokers if b is not victim]
    victim.close()

    t0 = time.monotonic()
    os.kill(victim.pid, signal.SIGKILL)
    done = {}

    def all_alive_leaders(b, md):
        if md[1] >= 0 and md[1] != victim.id and b.id not in done:
            done[b.id] = time.monotonic() - t0
        parts, reason = topic_partitions(md, n)
        if reason:
            return reason
        bad = sum(1 for _, leader, _ in parts if leader < 0 or leader == victim.id)
        return f"{bad} partitions led by {victim.id} or none" if bad else None

    failover = poll_until(survivors, all_alive_leaders, limit, "failover")
    new_controllers = set()
    for b in survivors:
        _, c, _ = b.metadata([])
        new_controllers.add(c)
    print(json.dumps({
        "create_s": round(create, 3),
        "create_resp_s": round(create_resp, 3),
        "isr_s": round(isr, 3),
        "failover_s": round(failover, 3),
        "controller_s": round(max(done.values()), 3) if len(done) == len(survivors) else None,
        "controller": victim.id,
        "new_controller": sorted(new_controllers),
        "moved": moved,
    }), flush=True)
    for b in brokers:
        b.close()


def cmd_zk_wait(args):
    deadline = time.monotonic() + args.timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", args.port), timeout=1) as s:
                s.sendall(b"srvr")
                out = b""
                while chunk := s.recv(4096):
                    out += chunk
            if b"Mode: standalone" in out:
                return
        except OSError:
            pass
        time.sleep(POLL_S)
    raise Abort(f"ZooKeeper on port {args.port} did not serve within {args.timeout} s")


def cmd_row(args):
    with open(args.file) as f:
        runs = [json.loads(line) for line in f if line.strip()]
    if not runs:
        raise Abort(f"{args.file}: no runs")

    def values(key):
        return [r[key] for r in runs if r.get(key) is not None]

    def median(key):
        vals = values(key)
        return f"{statistics.median(vals):.2f} s" if vals else "-"

    def each(key):
        return " / ".join(f"{v:.2f}" for v in values(key))

    print(f"| {args.target} | {median('create_s')} | {median('failover_s')} | {args.session_ms} ms "
          f"| {median('controller_s')} | {len(runs)} "
          f"| create {each('create_s')}; failover {each('failover_s')} |")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    z = sub.add_parser("zk-wait")
    z.add_argument("port", type=int)
    z.add_argument("timeout", type=float)
    r = sub.add_parser("run")
    r.add_argument("--brokers", required=True, help="ID=HOST:PORT:PID,...")
    r.add_argument("--partitions", type=int, default=1000)
    r.add_argument("--rf", type=int, default=3)
    r.add_argument("--timeout", type=float, default=180, help="deadline of each wait, seconds")
    r.add_argument("--create-timeout-ms", type=int, default=60000,
                   help="CreateTopics' timeout_ms (how long the controller may wait to answer)")
    w = sub.add_parser("row")
    w.add_argument("target")
    w.add_argument("session_ms")
    w.add_argument("file")
    args = p.parse_args()
    try:
        {"zk-wait": cmd_zk_wait, "run": cmd_run, "row": cmd_row}[args.cmd](args)
    except (Abort, ConnectionError) as e:
        print(f"measure.py {args.cmd}: {e}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
