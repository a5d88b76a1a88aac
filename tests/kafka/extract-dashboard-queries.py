#!/usr/bin/env python3
"""Writes tests/fixtures/metrics/dashboard-queries.txt: every PromQL expression of the Kafka dashboards
in tests/fixtures/metrics/dashboards/ (each panel target's `expr`, and each templating variable's
query), one per line, classified, with the Grafana variables it uses.

Usage: tests/kafka/extract-dashboard-queries.py > tests/fixtures/metrics/dashboard-queries.txt
"""
import json
import os
import re
import sys

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "metrics")
DASHBOARDS = [
    ("strimzi-kafka", "dashboards/strimzi-kafka.json", "kafka-3.9.1-series.txt"),
    ("confluent-kafka-cluster", "dashboards/confluent-kafka-cluster.json", "kafka-3.9.1-series-confluent.txt"),
]
METRIC = re.compile(r"(?<![$\w{])((?:kafka|jvm|process|container|kubelet)_[a-z0-9_]+)")
VARIABLE = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?")
KUBERNETES_LABELS = re.compile(r"\b(namespace|pod|kubernetes_pod_name|container|persistentvolumeclaim|strimzi_io_cluster|strimzi_io_name)\s*(=|!=|=~|!~)")
# Series of MBeans that only Confluent Server (not Apache Kafka) registers: stray partitions
# (Confluent's log manager), tiered storage (TierArchiver, TierTasks, the Log TierSize gauge).
CONFLUENT_SERVER = re.compile(r"^(kafka_server_replicamanager_straypartitions|kafka_tier_|kafka_log_log_tiersize)")
DATASOURCE_VARIABLES = {"DS_PROMETHEUS", "Prometheus"}

HEADER = """\
# Every PromQL expression of the two Kafka dashboards issue 34 names, extracted by
# tests/kafka/extract-dashboard-queries.py from the dashboard JSON in dashboards/ (see README.md for
# their sources, commits and licenses). Do not edit by hand.
#
# One expression a line, tab-separated:
#   dashboard  panel-title  class  variables  series  expr
# dashboard  strimzi-kafka (Strimzi's strimzi-kafka.json; names from kafka-metrics.yaml's rules) or
#            confluent-kafka-cluster (jmx-monitoring-stacks' kafka-cluster.json; names from
#            confluent-kafka_broker.yml's rules, which differ: see README.md)
# panel-title  the panel's title; "(variable NAME)" for a templating variable's query, whose Grafana
#            wrapper (query_result(...), label_values(...)) is stripped to the PromQL inside it
# class      kafka      every series is one a Kafka broker's MBeans give (kcli must serve it)
#            process    uses process_* (the exporter's process collector; kcli serves it from /proc)
#            jvm        uses jvm_* (the JVM's; kcli will not serve it: the panel stays empty)
#            kubernetes uses container_* / kubelet_* (cAdvisor and the kubelet, not the broker)
#            confluent-server  a series only Confluent Server registers (stray partitions, tiered
#            storage): Apache Kafka 3.9.1 has none, so kcli has none either
#            A mixed expression takes the first of jvm, kubernetes, confluent-server, process, kafka.
#            `+k8s` is appended when it matches on a label only Kubernetes scraping adds.
# variables  the Grafana variables it uses, comma-separated ("-" for none)
# series     the metric names it reads, comma-separated
# expr       the expression with its whitespace collapsed to single spaces
#
# Substituting the variables for a plain Prometheus scrape (the test's own prometheus.yml):
#   The label matchers the dashboards put on Kubernetes and scrape-job labels are satisfied without
#   rewriting an expression by attaching the labels to each target in the test's scrape config:
#     job: kafka-broker                 (Confluent: job="kafka-broker"; name the scrape job so)
#     labels per target:
#       env: kcli                       (Confluent: env="$env")
#       namespace: kcli                 (Strimzi: namespace="$kubernetes_namespace")
#       strimzi_io_cluster: kcli        (Strimzi: strimzi_io_cluster="$strimzi_cluster_name")
#       strimzi_io_name: kcli-kafka     (Strimzi: strimzi_io_name="$strimzi_cluster_name-kafka")
#       kubernetes_pod_name: kcli-kafka-<broker id>   (Strimzi: kubernetes_pod_name=~"$strimzi_cluster_name-$kafka_broker")
#       pod: kcli-kafka-<broker id>     (Strimzi's container_*/kubelet_* panels only)
#       container: kafka                (Strimzi: container="kafka" on process_open_fds)
#   and then substituting the variables as Grafana would with "All" selected:
#     $kubernetes_namespace -> kcli            $strimzi_cluster_name -> kcli
#     $kafka_broker         -> kafka-.*        (regex: the variable's values are what follows
#                                               "$strimzi_cluster_name-" in kubernetes_pod_name)
#     $kafka_topic          -> .*              $kafka_partition      -> .*
#     $env / ${env}         -> kcli            $instance             -> .*  (one target: host:port;
#                                               two panels match instance="$instance" with =, so
#                                               substitute a real target there or rewrite = to =~)
#     $percentile           -> 0.99            (a value of label_values(quantile): 0.50 .. 0.999)
#     $__rate_interval / $__interval: used by neither dashboard; [5m] and irate() are, so scrape
#                                               every few seconds and wait two scrapes before a check.
#   Alternatively, drop the Kubernetes matchers (`+k8s` lines): remove namespace=, strimzi_io_*=,
#   kubernetes_pod_name=~, pod=~, container= matchers and rewrite "by (kubernetes_pod_name)" to
#   "by (instance)".
"""


def panels(ps):
    for p in ps or []:
        yield p
        yield from panels(p.get("panels"))


def classify(series):
    if any(s.startswith("jvm_") for s in series):
        return "jvm"
    if any(s.startswith(("container_", "kubelet_")) for s in series):
        return "kubernetes"
    if any(CONFLUENT_SERVER.match(s) for s in series):
        return "confluent-server"
    if any(s.startswith("process_") for s in series):
        return "process"
    return "kafka"


def line(dashboard, title, expr):
    expr = " ".join(expr.split())
    series = sorted(set(METRIC.findall(expr)))
    cls = classify(series)
    if KUBERNETES_LABELS.search(expr):
        cls += "+k8s"
    variables = sorted({v for v in VARIABLE.findall(expr)} - DATASOURCE_VARIABLES)
    return "\t".join([dashboard, title.strip() or "(untitled)", cls, ",".join(variables) or "-",
                      ",".join(series) or "-", expr])


def main():
    print(HEADER, end="")
    for name, path, _ in DASHBOARDS:
        with open(os.path.join(HERE, path), encoding="utf-8") as f:
            d = json.load(f)
        print(f"\n## {name}: {d.get('title')!r} ({path})")
        for v in d.get("templating", {}).get("list", []):
            q = v.get("query")
            if isinstance(q, dict):
                q = q.get("query")
            if v.get("type") != "query" or not q:
                continue
            m = re.fullmatch(r"\s*(?:query_result|label_values)\((.*?)(?:,\s*[a-z_]+)?\)\s*", q, re.S)
            inner = m.group(1) if m else q
            if not METRIC.search(inner):
                # label_values(env), label_values(quantile): any series with that label
                inner = f"count by ({inner}) ({{{inner}!=\"\"}})"
            print(line(name, f"(variable {v['name']})", inner))
        for p in panels(d.get("panels")):
            for t in p.get("targets") or []:
                if t.get("expr"):
                    print(line(name, p.get("title") or "", t["expr"]))


if __name__ == "__main__":
    sys.exit(main())
