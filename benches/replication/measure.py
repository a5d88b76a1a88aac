#!/usr/bin/env python3
"""Helper of benches/replication/run.sh, on top of benches/cluster/measure.py's wire client
(stdlib only; every figure comes from the brokers' own Metadata answers).

Subcommands:
  create --brokers ID=HOST:PORT:PID,... --partitions N --rf R [--timeout S]
      waits until every broker knows every broker and names one controller, sends CreateTopics
      of topic `bench` to it, and waits until every broker's Metadata shows every partition
      with a leader and a full ISR (R replicas), so the benchmark starts on a settled cluster.
  row TARGET FILE
      reads run.sh's JSON lines (one per run: msgs_s, mb_s, p50_ms, p99_ms, p999_ms,
      cpu_s_per_gb, producer_cpu_s_per_gb) and prints its Markdown table row: the median of each column over the runs
      and every run's throughput.
"""

import argparse
import importlib.util
import json
import os
import statistics
import sys
import time

_spec = importlib.util.spec_from_file_location(
    "cluster_measure", os.path.join(os.path.dirname(__file__), "..", "cluster", "measure.py"))
cluster = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cluster)


def cmd_create(args):
    brokers = [cluster.Broker(s) for s in args.brokers.split(",")]
    ids = {b.id for b in brokers}
    n, rf, limit = args.partitions, args.rf, args.timeout

    def all_registered(b, md):
        return None if md[0] >= ids and md[1] >= 0 else f"knows {sorted(md[0])}, controller {md[1]}"

    cluster.poll_until(brokers, all_registered, limit, "all brokers registered")
    controllers = {b.metadata([])[1] for b in brokers}
    if len(controllers) != 1 or not controllers <= ids:
        raise cluster.Abort(f"brokers name different or unknown controllers: {sorted(controllers)}")
    controller = next(b for b in brokers if b.id in controllers)
    t0 = time.monotonic()
    err, msg = controller.create_topic(cluster.TOPIC, n, rf, 60000)
    if err not in (0, cluster.REQUEST_TIMED_OUT):
        raise cluster.Abort(f"CreateTopics on broker {controller.id}: error {err} {msg or ''}")

    def settled(b, md):
        parts, reason = cluster.topic_partitions(md, n)
        if reason:
            return reason
        bad = sum(1 for _, leader, isr in parts if leader < 0 or len(isr) < rf)
        return f"{bad} partitions without a leader or a full ISR" if bad else None

    cluster.poll_until(brokers, settled, limit, "topic created with full ISRs")
    print(f"{time.monotonic() - t0:.2f}")
    for b in brokers:
        b.close()


def cmd_row(args):
    with open(args.file) as f:
        runs = [json.loads(line) for line in f if line.strip()]
    if not runs:
        raise cluster.Abort(f"{args.file}: no runs")

    def med(key, fmt):
        vals = [r[key] for r in runs if r.get(key) is not None]
        return format(statistics.median(vals), fmt) if vals else "-"

    each = " / ".join(f"{r['msgs_s']:.0f}" for r in runs)
    print(f"| {args.target} | {med('msgs_s', '.0f')} | {med('mb_s', '.1f')} | {med('p50_ms', '.0f')} "
          f"| {med('p99_ms', '.0f')} | {med('p999_ms', '.0f')} | {med('cpu_s_per_gb', '.1f')} "
          f"| {med('producer_cpu_s_per_gb', '.1f')} "
          f"| {len(runs)} | {each} |")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("create")
    c.add_argument("--brokers", required=True, help="ID=HOST:PORT:PID,...")
    c.add_argument("--partitions", type=int, default=6)
    c.add_argument("--rf", type=int, default=3)
    c.add_argument("--timeout", type=float, default=120, help="deadline of each wait, seconds")
    w = sub.add_parser("row")
    w.add_argument("target")
    w.add_argument("file")
    args = p.parse_args()
    try:
        {"create": cmd_create, "row": cmd_row}[args.cmd](args)
    except (cluster.Abort, ConnectionError) as e:
        print(f"measure.py {args.cmd}: {e}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
