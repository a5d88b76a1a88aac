#!/usr/bin/env python3
"""Cross-references the series the dashboards query (dashboard-queries.txt) with what Kafka 3.9.1
serves through the JMX exporter (kafka-3.9.1-series*.txt), and prints the Markdown tables of
tests/fixtures/metrics/README.md between its `<!-- crossref -->` markers (--write replaces them there).

Usage: tests/kafka/crossref-metrics.py [--write]
"""
import collections
import os
import re
import sys

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "metrics")
BEGIN, END = "<!-- crossref begin: tests/kafka/crossref-metrics.py --write -->", "<!-- crossref end -->"

# Why a series a dashboard queries is absent from the capture, where Kafka 3.9.1 has no such MBean
# or registers it only on an event the capture's load did not cause.
ABSENT = {
    "kafka_network_requestmetrics_deprecatedrequestspersec_fiveminuterate":
        "registered on the first request with a deprecated API version (none in the capture)",
    "jvm_memory_bytes_max": "client_java 0.x name; the 1.x exporter has jvm_memory_max_bytes",
    "container_cpu_usage_seconds_total": "cAdvisor (Kubernetes), not the broker",
    "container_memory_usage_bytes": "cAdvisor (Kubernetes), not the broker",
    "kubelet_volume_stats_available_bytes": "the kubelet (Kubernetes), not the broker",
}


def load_series(name):
    fams = {}
    for line in open(os.path.join(HERE, name), encoding="utf-8"):
        if line.startswith("#") or not line.strip():
            continue
        f = line.rstrip("\n").split("\t")
        fams[f[0]] = {"type": f[1], "labels": f[2], "enums": f[3], "mbean": f[4]}
    return fams


def load_queries():
    uses = collections.defaultdict(lambda: {"panels": [], "classes": set()})
    for line in open(os.path.join(HERE, "dashboard-queries.txt"), encoding="utf-8"):
        if line.startswith("#") or "\t" not in line:
            continue
        dashboard, title, cls, _, series, _ = line.rstrip("\n").split("\t")
        for s in series.split(","):
            if s != "-":
                u = uses[(dashboard, s)]
                if title not in u["panels"]:
                    u["panels"].append(title)
                u["classes"].add(cls.split("+")[0])
    return uses


def find(series, fams):
    """The family a series name belongs to: itself, or a summary's _sum/_count."""
    if series in fams:
        return fams[series]
    base, _, suffix = series.rpartition("_")
    f = fams.get(base)
    if f and f["type"].startswith(("summary", "histogram")) and f"_{suffix}" in f["type"]:
        return f
    return None


def split_mbean(m):
    name, _, attr = m.partition(" ")
    return name, attr


def cell(text):
    return text.replace("|", "\\|")


def main():
    strimzi = load_series("kafka-3.9.1-series.txt")
    confluent = load_series("kafka-3.9.1-series-confluent.txt")
    uses = load_queries()
    by_mbean = collections.defaultdict(list)
    for fam, f in strimzi.items():
        by_mbean[split_mbean(f["mbean"])].append(fam)

    out = []
    w = out.append
    must_serve = {}

    w("### Strimzi's Kafka dashboard (names from Strimzi's rules)\n")
    w("| series | in capture | type | label sets | MBean attribute | panels |")
    w("|---|---|---|---|---|---|")
    for (dashboard, s), u in sorted(uses.items()):
        if dashboard != "strimzi-kafka":
            continue
        f = find(s, strimzi)
        cls = "/".join(sorted(u["classes"]))
        if f:
            if cls in ("kafka", "process"):
                must_serve[s] = f
            w(f"| `{s}` | yes | {f['type']} | {cell(f['labels'])} | {cell(f['mbean'])} | {cell('; '.join(u['panels']))} |")
        else:
            w(f"| `{s}` | no ({cls}: {ABSENT.get(s, '?')}) | | | | {cell('; '.join(u['panels']))} |")

    w("\n### Confluent's Kafka cluster dashboard (names from Confluent's rules)\n")
    w("`same name` says whether Strimzi's rules give a family of that very name (and its type there);")
    w("`Strimzi's family` is what Strimzi's rules make of the same MBean attribute.\n")
    w("| series | in capture | type | label sets | MBean attribute | same name under Strimzi's rules | Strimzi's family for that MBean | panels |")
    w("|---|---|---|---|---|---|---|---|")
    for (dashboard, s), u in sorted(uses.items()):
        if dashboard != "confluent-kafka-cluster":
            continue
        cls = "/".join(sorted(u["classes"]))
        f = find(s, confluent)
        panels = cell("; ".join(u["panels"]))
        if not f:
            why = "Confluent Server only" if cls == "confluent-server" else ABSENT.get(s, "?")
            w(f"| `{s}` | no ({cls}: {why}) | | | | | | {panels} |")
            continue
        same = f"yes ({find(s, strimzi)['type']})" if find(s, strimzi) else "**no**"
        name, attr = split_mbean(f["mbean"])
        equiv = list(by_mbean.get((name, attr), [])) if name != "-" else ([s] if s in strimzi else [])
        if "quantile" in f["labels"]:
            equiv += by_mbean.get((name, "NNthPercentile"), [])
        if not equiv and attr in ("OneMinuteRate", "FiveMinuteRate", "FifteenMinuteRate"):
            alts = by_mbean.get((name, "MeanRate"), []) + by_mbean.get((name, "Count"), [])
            equiv_text = "none (Strimzi exports no " + attr + ")" + ("; nearest: " + ", ".join(f"`{e}`" for e in alts) if alts else "")
        else:
            equiv_text = ", ".join(f"`{e}`" for e in sorted(set(equiv))) or "none"
        if cls in ("kafka", "process"):
            for e in equiv or ([s] if s in strimzi else []):
                must_serve.setdefault(e, strimzi[e])
        w(f"| `{s}` | yes | {f['type']} | {cell(f['labels'])} | {cell(f['mbean'])} | {same} | {equiv_text} | {panels} |")

    w("\n### What kcli must serve, under Strimzi's names (both dashboards, Kafka and process series)\n")
    w("| family | type | label sets | enumerated label values in the capture | MBean attribute |")
    w("|---|---|---|---|---|")
    for s in sorted(must_serve):
        f = must_serve[s]
        enums = f["enums"] if len(f["enums"]) < 160 else f["enums"][:157] + "..."
        w(f"| `{s}` | {f['type']} | {cell(f['labels'])} | {cell(enums)} | {cell(f['mbean'])} |")
    text = "\n".join(out) + "\n"

    if "--write" in sys.argv:
        path = os.path.join(HERE, "README.md")
        readme = open(path, encoding="utf-8").read()
        pattern = re.compile(re.escape(BEGIN) + ".*?" + re.escape(END), re.S)
        if not pattern.search(readme):
            sys.exit(f"{path}: no {BEGIN} ... {END} markers")
        readme = pattern.sub(lambda _: BEGIN + "\n" + text + END, readme)
        open(path, "w", encoding="utf-8").write(readme)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
