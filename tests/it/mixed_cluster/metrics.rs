//! kcli's metrics beside Kafka's, in one cluster: Kafka 3.9.1 broker 1 serves its MBeans through
//! the Prometheus JMX exporter javaagent with Strimzi's rules, kcli brokers 2 and 3 serve theirs on
//! `kcli.metrics.listener`, and each leads partitions that one librdkafka producer (acks=all)
//! loads alike. Then, series by series:
//!
//! - every family kcli serves is one the Kafka broker serves, with the same TYPE, each of its
//!   label-name sets one Kafka's has, and each value of a label Kafka's code fixes
//!   ([`ENUMERATED`]) one Kafka's has (every request type's time histograms on both, from
//!   startup); every family the Kafka broker serves that
//!   docs/metrics.md lists as served or Strimzi's dashboard reads, kcli serves with the same
//!   TYPE and label-name sets, less what docs/metrics.md says kcli does not serve
//!   ([`NOT_SERVED`], [`LABELS_NOT_SERVED`]);
//! - on each broker, `kafka_server_brokertopicmetrics_messagesin_total` of each topic is the
//!   records acknowledged on the partitions it leads (in Kafka, `MessagesInPerSec` is marked by
//!   `ReplicaManager.appendToLocalLog`, a leader's append; a follower's fetched records do not
//!   count), and the leader's `kafka_log_log_logendoffset` is what was acknowledged; the byte
//!   meters are the logs' sizes (see [`assert_the_load_is_counted`]);
//! - on each broker, ReplicaManager's LeaderCount, PartitionCount, UnderReplicatedPartitions,
//!   UnderMinIsrPartitionCount and AtMinIsrPartitionCount, KafkaController's
//!   ActiveControllerCount, OfflinePartitionsCount, PreferredReplicaImbalanceCount,
//!   GlobalTopicCount and GlobalPartitionCount, and the Partition gauges (UnderReplicated,
//!   UnderMinIsr, AtMinIsr, InSyncReplicasCount, ReplicasCount) are what `kcli
//!   describe-cluster --format json` says of the cluster; then again after kcli broker 3 is
//!   killed -9 (Kafka's controller moves its partitions; the survivors of both kinds shrink their
//!   ISRs and count them under-replicated; its lone partition goes offline), and after Kafka broker
//!   1 is killed -9 too (kcli broker 2 becomes the controller and counts both lone partitions
//!   offline).

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;
use std::sync::Mutex;
use std::time::Duration;

use rdkafka::ClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::producer::{BaseProducer, BaseRecord, DeliveryResult, Producer, ProducerContext};
use serde_json::Value;

use super::create_topic;
use crate::serve_support::run_within;
use crate::support::exposition::{Exposition, Family, scrape};
use crate::support::mixed_cluster::{MixedCluster, SESSION_TIMEOUT};

const TOPIC: &str = "metered";
/// Partition p is led by broker p+1 first: Kafka leads partition 0, kcli 1 and 2.
const ASSIGNMENT: &[&[i32]] = &[&[1, 2, 3], &[2, 3, 1], &[3, 1, 2]];
/// Records sent to each partition of [`TOPIC`]: different, so a count credited to the wrong
/// broker shows.
const RECORDS: &[usize] = &[300, 200, 100];
/// A partition only Kafka broker 1 holds, and one only kcli broker 3 holds: each goes offline
/// with its broker.
const ON_KAFKA: &str = "on-kafka-only";
const ON_KCLI: &str = "on-kcli-only";

/// Families Kafka serves that kcli does not, each as docs/metrics.md's "Not served" says.
const NOT_SERVED: &[(&str, &str)] = &[];

/// Label-name sets Kafka serves a family under that kcli, serving the family, does not serve,
/// each as docs/metrics.md's "Not served" says.
const LABELS_NOT_SERVED: &[(&str, &str, &str)] = &[(
    "kafka_network_requestchannel_responsequeuesize",
    "{processor}",
    "the per-processor ResponseQueueSize{processor}",
)];

const LIMIT: Duration = Duration::from_secs(60);

#[test]
fn metrics_of_kafka_and_kcli_brokers_agree_series_by_series_and_with_describe_cluster() {
    let mut cluster = MixedCluster::start_with_metrics(
        &[1],
        &[2, 3],
        &[
            // A dead replica leaves the ISRs of the partitions it followed within the lag.
            ("replica.lag.time.max.ms", "4000"),
            // No preferred-leader moves under the counts.
            ("auto.leader.rebalance.enable", "false"),
        ],
    );
    assert_eq!(cluster.controller_id(), Some(1), "Kafka is the controller");
    create_topic(&cluster, TOPIC, ASSIGNMENT, &[("min.insync.replicas", "2")]);
    create_topic(&cluster, ON_KAFKA, &[&[1]], &[]);
    create_topic(&cluster, ON_KCLI, &[&[3]], &[]);

    // The same load through both kinds: per (topic, partition), the records acknowledged.
    let mut sends: Vec<(&str, i32, usize)> = RECORDS
        .iter()
        .enumerate()
        .map(|(p, n)| (TOPIC, i32::try_from(p).unwrap(), *n))
        .collect();
    sends.extend([(ON_KAFKA, 0, 50), (ON_KCLI, 0, 70)]);
    let acked = produce_counted(&cluster, &sends);
    let described = Described::read(&cluster);
    for id in [1, 2, 3] {
        assert_the_load_is_counted(&cluster, id, &acked, &described);
    }

    // Names, types and labels: each kcli broker beside the Kafka broker.
    let kafka = scrape(cluster.metrics_port(1)).expect("the Kafka broker's exporter answers");
    for id in [2, 3] {
        let kcli = scrape(cluster.metrics_port(id)).expect("the kcli broker's endpoint answers");
        assert_families_agree(&kafka, &kcli, id);
    }

    wait_for_gauges_to_match_described(&cluster, "before any broker died", |_| true);

    // A kcli broker dies: Kafka's controller elects new leaders, the survivors' ISRs shrink.
    cluster.kill9(3);
    let described =
        wait_for_gauges_to_match_described(&cluster, "after kcli broker 3 was killed", |d| {
            settled_without(d, 3)
        });
    let under = |d: &Described, id| d.expected(id).under_replicated;
    assert!(
        under(&described, 1) > 0 && under(&described, 2) > 0,
        "both kinds lead under-replicated partitions: {described:?}"
    );
    assert_eq!(described.offline(), 1, "{ON_KCLI} is offline");
    let at_min = |d: &Described, id| d.expected(id).at_min_isr;
    assert!(
        at_min(&described, 1) > 0 && at_min(&described, 2) > 0,
        "both kinds lead partitions at their min ISR: {described:?}"
    );

    // The Kafka broker, the controller, dies too: kcli broker 2 takes over alone.
    cluster.kill9(1);
    let described =
        wait_for_gauges_to_match_described(&cluster, "after Kafka broker 1 was killed too", |d| {
            d.controller == Some(2) && settled_without(d, 1) && settled_without(d, 3)
        });
    assert_eq!(described.offline(), 2, "both lone partitions are offline");
    let survivor = described.expected(2);
    assert!(
        survivor.under_replicated > 0 && survivor.under_min_isr > 0,
        "{described:?}"
    );
}

/// Sends `count` records to each (topic, partition, count) of `sends` through one librdkafka
/// producer with acks=all and no retries (a retried batch could be appended twice, and Kafka
/// counts each append in MessagesInPerSec), and waits for every answer; the records acknowledged
/// per (topic, partition), all of them.
fn produce_counted(
    cluster: &MixedCluster,
    sends: &[(&str, i32, usize)],
) -> BTreeMap<(String, i32), u64> {
    let producer: BaseProducer<Counting> = ClientConfig::new()
        .set("bootstrap.servers", cluster.bootstrap())
        .set("acks", "all")
        .set("enable.idempotence", "false")
        .set("message.send.max.retries", "0")
        .set("message.timeout.ms", "60000")
        .create_with_context(Counting::default())
        .unwrap();
    for (topic, partition, count) in sends {
        for n in 0..*count {
            let value = format!("{topic}-{partition} record {n}");
            producer
                .send(
                    BaseRecord::<(), _>::to(topic)
                        .partition(*partition)
                        .payload(&value),
                )
                .unwrap_or_else(|(e, _)| panic!("queueing a record to {topic}: {e}"));
        }
    }
    producer
        .flush(LIMIT)
        .unwrap_or_else(|e| panic!("flushing: {e}\n{}", cluster.logs()));
    let failed = producer.context().failed.lock().unwrap().clone();
    assert!(
        failed.is_empty(),
        "records failed: {failed:?}\n{}",
        cluster.logs()
    );
    let acked = producer.context().acked.lock().unwrap().clone();
    for (topic, partition, count) in sends {
        let key = (topic.to_string(), *partition);
        assert_eq!(
            acked.get(&key).copied().unwrap_or(0),
            *count as u64,
            "acknowledged on {topic}-{partition}"
        );
    }
    acked
}

/// A producer's delivery reports: acknowledged records per (topic, partition), and failures.
#[derive(Default)]
struct Counting {
    acked: Mutex<BTreeMap<(String, i32), u64>>,
    failed: Mutex<Vec<String>>,
}

impl ClientContext for Counting {}

impl ProducerContext for Counting {
    type DeliveryOpaque = ();

    fn delivery(&self, result: &DeliveryResult<'_>, _: ()) {
        use rdkafka::Message;
        match result {
            Ok(m) => {
                *self
                    .acked
                    .lock()
                    .unwrap()
                    .entry((m.topic().to_string(), m.partition()))
                    .or_default() += 1;
            }
            Err((e, m)) => {
                self.failed
                    .lock()
                    .unwrap()
                    .push(format!("{}-{}: {e}", m.topic(), m.partition()))
            }
        }
    }
}

/// Waits until broker `id`'s BrokerTopicMetrics count the load as Kafka counts it, with `d`
/// (describe-cluster after the load) saying who leads and follows what:
/// `messagesin_total` of each topic, and in all, is the records acknowledged on the partitions it
/// leads (0, or no series, where it leads none), and its `kafka_log_log_logendoffset` of each is
/// what was acknowledged there; `bytesin_total` is the size of the logs it leads (a produce
/// request's record bytes, appended as they came: no compression, fresh logs);
/// `replicationbytesin_total` the size of the logs it follows, `replicationbytesout_total` the
/// size of those it leads once per follower (each follower fetched each byte once); and
/// `bytesout_total` 0: nothing but followers fetched, and a follower's fetch is not counted there.
fn assert_the_load_is_counted(
    cluster: &MixedCluster,
    id: i32,
    acked: &BTreeMap<(String, i32), u64>,
    d: &Described,
) {
    let meter = |name: &str| format!("kafka_server_brokertopicmetrics_{name}_total");
    let mut last = String::new();
    let agreed = poll(LIMIT, || {
        let Some(m) = scrape(cluster.metrics_port(id)) else {
            last = "no scrape".to_string();
            return false;
        };
        let mut want: BTreeMap<String, f64> = BTreeMap::new();
        let mut add = |series: String, v: f64| *want.entry(series).or_default() += v;
        let mut wrong = Vec::new();
        for p in d.partitions.iter().filter(|p| p.replicas.contains(&id)) {
            let part = p.partition.to_string();
            let labels = [("partition", part.as_str()), ("topic", p.topic.as_str())];
            let Some(size) = m.value("kafka_log_log_size", &labels) else {
                wrong.push(format!("{}-{part}: no kafka_log_log_size", p.topic));
                continue;
            };
            let topic = |name: &str| format!("{}{{topic={:?}}}", meter(name), p.topic);
            if p.leader == id {
                let count = acked[&(p.topic.clone(), p.partition)] as f64;
                add(topic("messagesin"), count);
                add(meter("messagesin"), count);
                add(topic("bytesin"), size);
                add(meter("bytesin"), size);
                add(
                    meter("replicationbytesout"),
                    size * (p.replicas.len() - 1) as f64,
                );
                let end = m.value("kafka_log_log_logendoffset", &labels);
                if end != Some(count) {
                    wrong.push(format!(
                        "{}-{part} log end offset {end:?}, acknowledged {count}",
                        p.topic
                    ));
                }
            } else {
                add(topic("messagesin"), 0.0);
                add(meter("replicationbytesin"), size);
            }
        }
        add(meter("bytesout"), 0.0);
        add(meter("replicationbytesin"), 0.0);
        add(meter("replicationbytesout"), 0.0);
        for (series, want) in &want {
            let (name, topic) = match series.split_once("{topic=") {
                Some((name, topic)) => (name, Some(topic.trim_end_matches('}').trim_matches('"'))),
                None => (series.as_str(), None),
            };
            let labels: Vec<(&str, &str)> = topic.map(|t| ("topic", t)).into_iter().collect();
            let got = m.value(name, &labels).unwrap_or(0.0);
            if got != *want {
                wrong.push(format!("{series} {got}, expected {want}"));
            }
        }
        last = wrong.join("\n");
        wrong.is_empty()
    });
    assert!(
        agreed,
        "broker {id} ({}): its BrokerTopicMetrics disagree with the load:\n{last}",
        kind(cluster, id)
    );
}

fn kind(cluster: &MixedCluster, id: i32) -> &'static str {
    if cluster.node(id).is_kafka() {
        "Kafka"
    } else {
        "kcli"
    }
}

/// Polls `f` every 200 ms until it holds, for at most `limit`; whether it did.
fn poll(limit: Duration, mut f: impl FnMut() -> bool) -> bool {
    let deadline = std::time::Instant::now() + limit;
    loop {
        if f() {
            return true;
        }
        if std::time::Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The families the comparison covers in Kafka's direction: every series name docs/metrics.md's
/// table of served series lists (a `..._suffix` entry stands for the previous name's stem with
/// that suffix), and every Kafka or process series Strimzi's dashboard reads.
fn families_kcli_says_it_serves() -> BTreeSet<String> {
    let root = env!("CARGO_MANIFEST_DIR");
    let docs = std::fs::read_to_string(format!("{root}/docs/metrics.md")).unwrap();
    let table = docs
        .split("## The series")
        .nth(1)
        .and_then(|rest| rest.split("\n#").next())
        .expect("docs/metrics.md has a section \"The series\"");
    let mut names = BTreeSet::new();
    for row in table.lines().filter(|l| l.starts_with("| `")) {
        let cell = row.split('|').nth(1).unwrap();
        let mut stem = String::new();
        for token in cell.split('`').skip(1).step_by(2) {
            if let Some(suffix) = token.strip_prefix("...") {
                // Every stem of the previous name: the docs do not say where it is cut.
                for (i, _) in stem.match_indices('_') {
                    names.insert(format!("{}{suffix}", &stem[..i]));
                }
                names.insert(format!("{stem}{suffix}"));
            } else {
                names.insert(token.to_string());
                stem = token.to_string();
            }
        }
    }
    assert!(
        names.len() > 60,
        "docs/metrics.md lists {} series",
        names.len()
    );
    let queries = std::fs::read_to_string(format!(
        "{root}/tests/fixtures/metrics/dashboard-queries.txt"
    ))
    .unwrap();
    for line in queries.lines().filter(|l| l.starts_with("strimzi-kafka\t")) {
        let cols: Vec<&str> = line.split('\t').collect();
        if cols[2].starts_with("kafka") || cols[2].starts_with("process") {
            names.extend(cols[4].split(',').map(String::from));
        }
    }
    names
}

/// `kcli` (broker `id`'s scrape) beside `kafka` (the Kafka broker's), family by family.
fn assert_families_agree(kafka: &Exposition, kcli: &Exposition, id: i32) {
    let mut wrong = Vec::new();
    // kcli's names are Kafka's.
    for (name, family) in &kcli.families {
        let Some(theirs) = kafka.families.get(name) else {
            wrong.push(format!("{name}: served by kcli, not by Kafka"));
            continue;
        };
        if family.kind != theirs.kind {
            wrong.push(format!(
                "{name}: TYPE {} on kcli, {} on Kafka",
                family.kind, theirs.kind
            ));
        }
        let extra: Vec<_> = family
            .label_sets()
            .difference(&theirs.label_sets())
            .cloned()
            .collect();
        if !extra.is_empty() {
            wrong.push(format!(
                "{name}: labelled {extra:?} on kcli, Kafka's: {:?}",
                theirs.label_sets()
            ));
        }
        // Values fixed by Kafka's code or config: each of kcli's is one Kafka's has.
        for label in ENUMERATED {
            let (ours, theirs) = (values_of(family, label), values_of(theirs, label));
            let extra: Vec<_> = ours.difference(&theirs).collect();
            if !extra.is_empty() {
                wrong.push(format!(
                    "{name}: {label} {extra:?} on kcli, Kafka's: {theirs:?}"
                ));
            }
            // A request's time histograms exist from startup, for every request type.
            if *label == "request" && name.contains("timems") && ours != theirs {
                let missing: Vec<_> = theirs.difference(&ours).collect();
                wrong.push(format!("{name}: request {missing:?} on Kafka, not on kcli"));
            }
        }
    }
    // Kafka's names that kcli says it serves, kcli serves, labelled alike.
    let documented = families_kcli_says_it_serves();
    let mut compared = 0;
    for (name, theirs) in kafka
        .families
        .iter()
        .filter(|(n, _)| documented.contains(*n))
    {
        if let Some((_, why)) = NOT_SERVED.iter().find(|(n, _)| n == name) {
            if kcli.families.contains_key(name) {
                wrong.push(format!(
                    "{name} is served now ({why}): take it off NOT_SERVED"
                ));
            }
            continue;
        }
        let Some(family) = kcli.families.get(name) else {
            wrong.push(format!(
                "{name}: served by Kafka (and documented), not by kcli"
            ));
            continue;
        };
        compared += 1;
        let mut missing: BTreeSet<String> = theirs
            .label_sets()
            .difference(&family.label_sets())
            .cloned()
            .collect();
        for (n, set, why) in LABELS_NOT_SERVED {
            if n == name && !missing.remove(*set) {
                wrong.push(format!(
                    "{name}{set} ({why}) is served now or Kafka lacks it"
                ));
            }
        }
        if !missing.is_empty() {
            wrong.push(format!(
                "{name}: labelled {missing:?} on Kafka, kcli's: {:?}",
                family.label_sets()
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "kcli broker {id}'s families differ from Kafka broker 1's:\n{}",
        wrong.join("\n")
    );
    assert!(
        compared >= 60,
        "only {compared} of Kafka's families compared"
    );
}

/// Labels whose values Kafka's code or the broker's config fixes (not topics, partitions or
/// versions a client happened to use).
const ENUMERATED: &[&str] = &[
    "quantile",
    "request",
    "delayedOperation",
    "clientId",
    "listener",
    "networkProcessor",
];

/// The values label `label` takes in `family`.
fn values_of<'a>(family: &'a Family, label: &str) -> BTreeSet<&'a str> {
    family
        .samples
        .iter()
        .filter_map(|s| s.labels.get(label).map(String::as_str))
        .collect()
}

/// What `kcli describe-cluster --format json` says of the cluster.
#[derive(Debug, Clone, PartialEq)]
struct Described {
    controller: Option<i32>,
    brokers: BTreeSet<i32>,
    partitions: Vec<DescribedPartition>,
}

#[derive(Debug, Clone, PartialEq)]
struct DescribedPartition {
    topic: String,
    partition: i32,
    /// -1 for none.
    leader: i32,
    replicas: Vec<i32>,
    isr: Vec<i32>,
    /// The topic's `min.insync.replicas` (1, the default, when it has none).
    min_isr: usize,
    flags: Vec<String>,
}

impl DescribedPartition {
    fn flagged(&self, flag: &str) -> bool {
        self.flags.iter().any(|f| f == flag)
    }
}

/// The gauges a broker must show for a [`Described`] cluster.
#[derive(Debug, Clone, Default, PartialEq)]
struct Gauges {
    /// ReplicaManager's LeaderCount, PartitionCount, UnderReplicatedPartitions,
    /// UnderMinIsrPartitionCount and AtMinIsrPartitionCount.
    leader_count: u64,
    partition_count: u64,
    under_replicated: u64,
    under_min_isr: u64,
    at_min_isr: u64,
    /// KafkaController's ActiveControllerCount, OfflinePartitionsCount,
    /// PreferredReplicaImbalanceCount, GlobalTopicCount and GlobalPartitionCount.
    active_controller: u64,
    offline: u64,
    preferred_imbalance: u64,
    global_topics: u64,
    global_partitions: u64,
    /// Per (topic, partition) hosted, the Partition gauges.
    partitions: BTreeMap<(String, i32), PartitionGauges>,
}

/// `kafka.cluster:type=Partition`'s UnderReplicated, UnderMinIsr, AtMinIsr,
/// InSyncReplicasCount and ReplicasCount.
#[derive(Debug, Clone, Default, PartialEq)]
struct PartitionGauges {
    under_replicated: u64,
    under_min_isr: u64,
    at_min_isr: u64,
    in_sync_replicas: u64,
    replicas: u64,
}

impl Described {
    fn read(cluster: &MixedCluster) -> Described {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_kcli"));
        cmd.args([
            "describe-cluster",
            "--zookeeper",
            &cluster.connect(),
            "--format",
            "json",
        ]);
        let (code, stdout, stderr) = run_within(cmd, b"", LIMIT);
        // 1: a partition is offline or under its min ISR, which this test makes happen.
        assert!(
            code == 0 || code == 1,
            "describe-cluster exited {code}:\n{stderr}"
        );
        let json: Value = serde_json::from_str(&stdout).unwrap();
        let int = |v: &Value| i32::try_from(v.as_i64().unwrap()).unwrap();
        let ints = |v: &Value| v.as_array().unwrap().iter().map(int).collect::<Vec<i32>>();
        let mut partitions = Vec::new();
        for topic in json["topics"].as_array().unwrap() {
            let min_isr = topic["configs"]["min.insync.replicas"]
                .as_str()
                .map_or(1, |m| m.parse().unwrap());
            for p in topic["partitions"].as_array().unwrap() {
                partitions.push(DescribedPartition {
                    topic: topic["name"].as_str().unwrap().to_string(),
                    partition: int(&p["partition"]),
                    leader: p["leader"]
                        .as_i64()
                        .map_or(-1, |l| i32::try_from(l).unwrap()),
                    replicas: ints(&p["replicas"]),
                    isr: ints(&p["isr"]),
                    min_isr,
                    flags: p["flags"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|f| f.as_str().unwrap().to_string())
                        .collect(),
                });
            }
        }
        Described {
            controller: json["controller"]["id"]
                .as_i64()
                .map(|c| i32::try_from(c).unwrap()),
            brokers: json["brokers"]
                .as_array()
                .unwrap()
                .iter()
                .map(|b| int(&b["id"]))
                .collect(),
            partitions,
        }
    }

    fn offline(&self) -> u64 {
        self.partitions
            .iter()
            .filter(|p| p.flagged("OFFLINE"))
            .count() as u64
    }

    /// Kafka's definitions, from what describe-cluster shows. ReplicaManager's: LeaderCount the
    /// partitions the broker leads, PartitionCount those it hosts, and of those it leads,
    /// UnderReplicatedPartitions those whose ISR is short of the replicas (UNDER-REPLICATED),
    /// UnderMinIsrPartitionCount those whose ISR is short of min(min.insync.replicas,
    /// replicas) (UNDER-MIN-ISR: Kafka's `Partition.effectiveMinIsr`), AtMinIsrPartitionCount
    /// those whose ISR is exactly that. The Partition gauges say the same of each partition,
    /// non-zero on its leader only. KafkaController's, 0 but on the controller: the OFFLINE
    /// partitions, the partitions whose leader is not their first replica (none, -1, counts:
    /// Kafka's `ControllerContext` compares the leader as the state znode holds it), the topics,
    /// and the partitions with a state.
    fn expected(&self, id: i32) -> Gauges {
        let mut g = Gauges::default();
        for p in self.partitions.iter().filter(|p| p.replicas.contains(&id)) {
            g.partition_count += 1;
            let mut gauges = PartitionGauges::default();
            if p.leader == id {
                let effective_min_isr = p.min_isr.min(p.replicas.len());
                gauges = PartitionGauges {
                    under_replicated: u64::from(p.flagged("UNDER-REPLICATED")),
                    under_min_isr: u64::from(p.flagged("UNDER-MIN-ISR")),
                    at_min_isr: u64::from(p.isr.len() == effective_min_isr),
                    in_sync_replicas: p.isr.len() as u64,
                    replicas: p.replicas.len() as u64,
                };
                g.leader_count += 1;
                g.under_replicated += gauges.under_replicated;
                g.under_min_isr += gauges.under_min_isr;
                g.at_min_isr += gauges.at_min_isr;
            }
            g.partitions.insert((p.topic.clone(), p.partition), gauges);
        }
        if self.controller == Some(id) {
            g.active_controller = 1;
            g.offline = self.offline();
            g.preferred_imbalance = self
                .partitions
                .iter()
                .filter(|p| p.replicas.first() != Some(&p.leader))
                .count() as u64;
            let topics: BTreeSet<&str> = self.partitions.iter().map(|p| p.topic.as_str()).collect();
            g.global_topics = topics.len() as u64;
            g.global_partitions = self.partitions.len() as u64;
        }
        g
    }
}

/// The gauges broker `id` serves now.
fn served(cluster: &MixedCluster, id: i32, expected: &Gauges) -> Option<Gauges> {
    let m = scrape(cluster.metrics_port(id))?;
    let get = |name: &str, labels: &[(&str, &str)]| {
        m.value(name, labels).map(|v| v as u64).unwrap_or(u64::MAX)
    };
    let mut partitions = BTreeMap::new();
    for (topic, partition) in expected.partitions.keys() {
        let p = partition.to_string();
        let labels = [("partition", p.as_str()), ("topic", topic.as_str())];
        let gauge = |name: &str| get(&format!("kafka_cluster_partition_{name}"), &labels);
        partitions.insert(
            (topic.clone(), *partition),
            PartitionGauges {
                under_replicated: gauge("underreplicated"),
                under_min_isr: gauge("underminisr"),
                at_min_isr: gauge("atminisr"),
                in_sync_replicas: gauge("insyncreplicascount"),
                replicas: gauge("replicascount"),
            },
        );
    }
    let replica_manager = |name: &str| get(&format!("kafka_server_replicamanager_{name}"), &[]);
    let controller = |name: &str| get(&format!("kafka_controller_kafkacontroller_{name}"), &[]);
    Some(Gauges {
        leader_count: replica_manager("leadercount"),
        partition_count: replica_manager("partitioncount"),
        under_replicated: replica_manager("underreplicatedpartitions"),
        under_min_isr: replica_manager("underminisrpartitioncount"),
        at_min_isr: replica_manager("atminisrpartitioncount"),
        active_controller: controller("activecontrollercount"),
        offline: controller("offlinepartitionscount"),
        preferred_imbalance: controller("preferredreplicaimbalancecount"),
        global_topics: controller("globaltopiccount"),
        global_partitions: controller("globalpartitioncount"),
        partitions,
    })
}

/// Whether broker `dead` is gone from the cluster as `d` shows it: unregistered, and out of the
/// ISR of every partition that has another replica.
fn settled_without(d: &Described, dead: i32) -> bool {
    !d.brokers.contains(&dead)
        && d.partitions
            .iter()
            .all(|p| p.leader != dead && (p.replicas.len() == 1 || !p.isr.contains(&dead)))
}

/// Polls until `settled` holds for what describe-cluster shows, and every registered broker's
/// gauges are what it shows, unchanged across the scrapes (read before and after them); the
/// cluster as described.
fn wait_for_gauges_to_match_described(
    cluster: &MixedCluster,
    when: &str,
    settled: impl Fn(&Described) -> bool,
) -> Described {
    let limit = LIMIT + SESSION_TIMEOUT * 2;
    let mut last = String::new();
    let mut result = None;
    let agreed = poll(limit, || {
        let before = Described::read(cluster);
        if !settled(&before) {
            last = format!("not settled: {before:?}");
            return false;
        }
        let mut wrong = Vec::new();
        // The registered brokers: once settled, the running ones.
        for id in before.brokers.iter().copied() {
            let expected = before.expected(id);
            match served(cluster, id, &expected) {
                Some(got) if got == expected => {}
                got => wrong.push(format!(
                    "broker {id} ({}): served {got:?}, described {expected:?}",
                    kind(cluster, id)
                )),
            }
        }
        let after = Described::read(cluster);
        if after != before {
            last = "the cluster changed under the scrapes".to_string();
            return false;
        }
        last = format!("{}\ndescribed: {before:?}", wrong.join("\n"));
        result = Some(before);
        wrong.is_empty()
    });
    assert!(
        agreed,
        "{when}: the gauges did not come to agree with describe-cluster within {limit:?}:\n{last}\n{}",
        cluster.logs()
    );
    result.unwrap()
}
