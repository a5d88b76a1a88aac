#!/usr/bin/env python3
"""Summarises one Prometheus text-format scrape of a Kafka broker's JMX exporter into the reference
kcli's metrics endpoint is checked against: one line per metric family (tab-separated) with

    family   TYPE   label sets   enumerated label values   MBean (from the exporter's HELP)

* label sets: every distinct set of label NAMES the family's samples carry, each as {a,b}, sorted;
  `{} {topic}` means some samples have no label (Kafka's all-topics MBean) and others a `topic`.
* enumerated label values: kept only for labels whose values are a small enumeration fixed by Kafka's
  code or the broker's config, not by the data (see ENUMERATED); `request=<all>` means the family
  has every request name the RequestMetrics families have. Values of other labels (topic,
  partition, logDirectory, client software names, broker ids) depend on the run and are dropped.
* MBean: the object name and attribute the exporter names in HELP (the first MBean of the family it
  met), with the values of keys that became labels written as `*`; NNthPercentile stands for the
  50th..999thPercentile attributes that the rules turn into `quantile` labels. For Kafka's own
  (non-Yammer) metrics such as socket-server-metrics the exporter's HELP names no key but `type`.

Families are grouped: `kafka` (the broker's MBeans: what kcli serves), `process` (the exporter's
process collector: kcli serves these from /proc), and `jvm` (jvm_*, java_lang_*, jmx_*: the JVM's
and the exporter's own, which kcli does not serve).

Usage: summarize-metrics.py --rules NAME --agent VERSION scrape.prom > series.txt
"""
import argparse
import re
import sys
from collections import defaultdict

ENUMERATED = {
    # RequestMetrics: Kafka's request names (ApiKeys plus FetchConsumer/FetchFollower,
    # AddPartitionsToTxnVerification), error names (Errors), the API version a client used.
    "request", "error", "version", "api_name", "api_version",
    # Histograms rendered as quantile gauges by the rules.
    "quantile",
    # Fixed by Kafka's code: purgatory names, fetcher kinds and their client ids.
    "delayedOperation", "delayedoperation", "fetcherType", "fetchertype", "clientId", "clientid",
    # Fixed by the broker's config: listener names, network processor and request-channel ids.
    "listener", "networkProcessor", "networkprocessor", "network_processor", "processor",
}

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)(\s+\S+)?$')
LABEL = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?')


def parse_labels(text):
    labels, pos = {}, 0
    while pos < len(text):
        m = LABEL.match(text, pos)
        if not m:
            raise ValueError(f"bad labels: {text!r}")
        labels[m.group(1)] = m.group(2)
        pos = m.end()
    return labels


def group(name):
    if name.startswith(("jvm_", "java_lang_", "jmx_")):
        return "jvm"
    if name.startswith("process_"):
        return "process"
    return "kafka"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rules", required=True)
    ap.add_argument("--agent", required=True)
    ap.add_argument("scrape")
    args = ap.parse_args()

    types, helps = {}, {}
    labelsets = defaultdict(set)
    values = defaultdict(lambda: defaultdict(set))
    suffixes = defaultdict(set)
    family = None
    for line in open(args.scrape, encoding="utf-8"):
        line = line.rstrip("\n")
        if not line:
            continue
        if line.startswith("# HELP "):
            name, _, text = line[7:].partition(" ")
            helps[name] = text
            continue
        if line.startswith("# TYPE "):
            family, kind = line[7:].split(" ")
            types[family] = kind
            continue
        if line.startswith("#"):
            continue
        m = SAMPLE.match(line)
        if not m:
            raise ValueError(f"bad sample line: {line!r}")
        name, labels = m.group(1), parse_labels(m.group(3) or "")
        if family is None or not name.startswith(family):
            raise ValueError(f"sample {name} outside its family {family}")
        suffix = name[len(family):]
        if suffix:
            suffixes[family].add(suffix)
        labelsets[family].add(tuple(sorted(labels)))
        for k, v in labels.items():
            if k in ENUMERATED:
                values[family][k].add(v)

    everything = defaultdict(set)
    for fam in values:
        for k, vs in values[fam].items():
            everything[k] |= vs

    def mbean(fam):
        text = helps.get(fam, "")
        m = re.search(r"(\S+:\S*attribute=\S+)$", text)
        if not m:
            return "-"
        name = m.group(1)
        domain, _, keys = name.partition(":")
        label_keys = {k for ls in labelsets[fam] for k in ls}
        out, attribute = [], None
        for kv in keys.split(","):
            k, _, v = kv.partition("=")
            if k == "attribute":
                attribute = v
                continue
            if (k, v) == ("name", "null"):
                continue
            san = re.sub(r"[^a-zA-Z0-9_]", "_", k)
            out.append(f"{k}={'*' if k in label_keys or san in label_keys or san.lower() in label_keys else v}")
        order = {"type": 0, "name": 1}
        out.sort(key=lambda kv: order.get(kv.split("=")[0], 2))
        if attribute and re.fullmatch(r"\d+thPercentile", attribute):
            attribute = "NNthPercentile"
        return f"{domain}:{','.join(out)}" + (f" {attribute}" if attribute else "")

    def render(fam):
        sets = " ".join("{" + ",".join(ls) + "}" for ls in sorted(labelsets[fam], key=lambda s: (len(s), s)))
        enums = []
        for k in sorted(values[fam]):
            vs = values[fam][k]
            shown = "<all>" if k == "request" and vs == everything[k] and len(vs) > 20 else \
                "|".join(sorted(vs, key=lambda v: (len(v), v) if v.isdigit() or k == "quantile" else (0, v)))
            enums.append(f"{k}={shown}")
        kind = types[fam] + ("" if not suffixes[fam] else "(" + ",".join(sorted(suffixes[fam])) + ")")
        return "\t".join([fam, kind, sets, " ".join(enums) or "-", mbean(fam)])

    fams = sorted(types)
    print(f"# Kafka 3.9.1 (ZooKeeper mode, one broker) through jmx_prometheus_javaagent {args.agent} with {args.rules}.")
    print("# Made by tests/kafka/capture-jmx-metrics.sh (tests/kafka/summarize-metrics.py); do not edit by hand.")
    print("# Columns (tab-separated): family, TYPE, label-name sets, enumerated label values, MBean attribute.")
    print("# A label set {} beside {topic} is Kafka's all-topics MBean beside its per-topic ones.")
    print("# Enumerated labels (values kept): " + ", ".join(sorted(ENUMERATED)) + ";")
    print("# the values of every other label (topic, partition, logDirectory, clientSoftware*, broker_id, ...)")
    print("# depend on the run and are dropped. request=<all> is every request name:")
    if everything.get("request"):
        print("#   " + "|".join(sorted(everything["request"])))
    for title, grp in (("Kafka's MBeans", "kafka"), ("process collector", "process"),
                       ("JVM and exporter internals (not served by kcli)", "jvm")):
        members = [f for f in fams if group(f) == grp]
        print(f"\n## {title}: {len(members)} families")
        for f in members:
            print(render(f))


if __name__ == "__main__":
    sys.exit(main())
