//! [`MixedCluster`]: Apache Kafka 3.9.1 brokers and kcli brokers in one ZooKeeper cluster, each a
//! separate process on 127.0.0.1 with a free port and a temp dir, under the chroot `/mixed` of a
//! real ZooKeeper. Both kinds get the same settings ([`SHARED`] and the test's own), so they agree
//! on the IBP, the offsets topic and the session timeout. Kafka brokers start first, so the
//! first of them is the controller. It holds the one-cluster lock for its whole life, and
//! every wait is a poll with a deadline (a JVM gets [`JVM_START`] to serve).
//!
//! [`MixedCluster::start_with_metrics`] also serves each broker's metrics in Prometheus's format
//! on a free port of its own ([`MixedCluster::metrics_port`]): the JMX exporter javaagent with
//! Strimzi's rules in the Kafka brokers' JVMs, `kcli.metrics.listener` on the kcli brokers.
//!
//! Also here: [`dump_log_segments`], Kafka's own `kafka.tools.DumpLogSegments` over every
//! segment of a partition directory, for comparing replicas across kinds.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::MutexGuard;
use std::time::Duration;

use kcli::zk::{Stat, ZkClient, ZkError};

use super::cluster::{exclusive, metadata, wait_until, with_zk, zk_get};
use super::kafka_broker::KafkaBroker;
use super::zookeeper::ZkServer;
use crate::kafka_tools::support::java;
use crate::serve_support::{TestBroker, free_port, run_within};

/// Settings every broker of either kind gets: the IBP Kafka's controller selects its request
/// versions by, a small RF-3 offsets topic (so a LeaderAndIsr for it is small), no initial
/// rebalance delay, 6 s sessions, and topics created by the test only.
pub const SHARED: &[(&str, &str)] = &[
    ("inter.broker.protocol.version", "3.9"),
    ("zookeeper.session.timeout.ms", "6000"),
    ("offsets.topic.num.partitions", "3"),
    ("offsets.topic.replication.factor", "3"),
    ("group.initial.rebalance.delay.ms", "0"),
    ("auto.create.topics.enable", "false"),
];

/// The brokers' session timeout ([`SHARED`]).
pub const SESSION_TIMEOUT: Duration = Duration::from_secs(6);

/// A JVM start plus Kafka's startup, on a shared 2-core machine.
pub const JVM_START: Duration = Duration::from_secs(90);

/// One broker of the cluster, of either kind.
pub enum Node {
    Kafka(KafkaBroker),
    Kcli(TestBroker),
}

impl Node {
    pub fn is_kafka(&self) -> bool {
        matches!(self, Node::Kafka(_))
    }

    /// What the broker printed, for failure messages.
    pub fn log(&self) -> String {
        match self {
            Node::Kafka(b) => b.log(),
            Node::Kcli(b) => b.stderr(),
        }
    }

    pub fn pid(&self) -> u32 {
        match self {
            Node::Kafka(b) => b.pid(),
            Node::Kcli(b) => b.pid(),
        }
    }
}

/// Where a broker id lives: its port, its metrics port, and its log dir `logs/` under a temp
/// dir.
struct Home {
    dir: tempfile::TempDir,
    port: u16,
    metrics_port: u16,
}

impl Home {
    fn logs(&self) -> PathBuf {
        self.dir.path().join("logs")
    }
}

/// A real ZooKeeper with Kafka 3.9.1 and kcli brokers under one chroot.
pub struct MixedCluster {
    pub zk: ZkServer,
    nodes: BTreeMap<i32, Node>,
    /// Each broker id's port and log dir, kept when the id's broker is replaced by one of the
    /// other kind.
    homes: BTreeMap<i32, Home>,
    /// Brokers replaced by one of the other kind, kept for their logs.
    retired: Vec<(i32, Node)>,
    settings: Vec<(String, String)>,
    /// Settings of one broker id's own, after the shared ones (its `broker.rack`, say).
    own: BTreeMap<i32, Vec<(String, String)>>,
    /// Whether every broker serves its metrics (on its home's `metrics_port`).
    metrics: bool,
    _exclusive: MutexGuard<'static, ()>,
}

impl MixedCluster {
    /// Starts ZooKeeper, the Kafka brokers `kafka` (the first becomes the controller), then the
    /// kcli brokers `kcli`, all with [`SHARED`] and `settings`, and waits until every broker's
    /// Metadata lists every broker.
    pub fn start(kafka: &[i32], kcli: &[i32], settings: &[(&str, &str)]) -> MixedCluster {
        MixedCluster::start_serving(kafka, kcli, settings, false, BTreeMap::new())
    }

    /// [`MixedCluster::start`] with settings of each broker's own after the shared ones
    /// (`broker.rack`, say): `(id, settings)` pairs.
    pub fn start_with_own_settings(
        kafka: &[i32],
        kcli: &[i32],
        settings: &[(&str, &str)],
        own: &[(i32, &[(&str, &str)])],
    ) -> MixedCluster {
        let own = own
            .iter()
            .map(|(id, kv)| {
                let kv = kv.iter().map(|(k, v)| (k.to_string(), v.to_string()));
                (*id, kv.collect())
            })
            .collect();
        MixedCluster::start_serving(kafka, kcli, settings, false, own)
    }

    /// [`MixedCluster::start`] with every broker serving its metrics on
    /// [`MixedCluster::metrics_port`]: the Kafka brokers through the JMX exporter javaagent with
    /// Strimzi's rules, the kcli brokers through `kcli.metrics.listener`.
    pub fn start_with_metrics(
        kafka: &[i32],
        kcli: &[i32],
        settings: &[(&str, &str)],
    ) -> MixedCluster {
        MixedCluster::start_serving(kafka, kcli, settings, true, BTreeMap::new())
    }

    fn start_serving(
        kafka: &[i32],
        kcli: &[i32],
        settings: &[(&str, &str)],
        metrics: bool,
        own: BTreeMap<i32, Vec<(String, String)>>,
    ) -> MixedCluster {
        let exclusive = exclusive();
        let zk = ZkServer::start();
        let mut cluster = MixedCluster {
            zk,
            nodes: BTreeMap::new(),
            homes: BTreeMap::new(),
            retired: Vec::new(),
            settings: SHARED
                .iter()
                .chain(settings)
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            own,
            metrics,
            _exclusive: exclusive,
        };
        for (i, id) in kafka.iter().enumerate() {
            cluster.start_kafka(*id);
            // One at a time, so the first is the controller.
            cluster.wait_registered(*id);
            if i == 0 {
                // Kafka elects on its controller's event thread after registering: a kcli
                // broker started before that would take `/controller` first.
                cluster.wait_znode(*id, "/controller");
            }
        }
        for id in kcli {
            cluster.start_kcli(*id);
        }
        cluster.wait_all_listed();
        cluster
    }

    /// `zookeeper.connect` of the brokers, chroot included.
    pub fn connect(&self) -> String {
        format!("{}/mixed", self.zk.connect_string())
    }

    /// The settings of broker `id`: the shared ones, then its own.
    fn settings(&self, id: i32) -> Vec<(&str, &str)> {
        self.settings
            .iter()
            .chain(self.own.get(&id).into_iter().flatten())
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect()
    }

    /// The port and log dir of broker `id`, made on its first start.
    fn home(&mut self, id: i32) -> (u16, PathBuf) {
        let home = self.homes.entry(id).or_insert_with(|| Home {
            dir: tempfile::tempdir().unwrap(),
            port: free_port(),
            metrics_port: free_port(),
        });
        (home.port, home.logs())
    }

    /// Starts a Kafka 3.9.1 broker `id` on its port and log dir (not waiting for it).
    pub fn start_kafka(&mut self, id: i32) {
        assert!(!self.nodes.contains_key(&id), "broker {id} runs");
        let (port, logs) = self.home(id);
        let dir = tempfile::tempdir().unwrap();
        let broker = if self.metrics {
            let ports = (port, self.homes[&id].metrics_port);
            KafkaBroker::launch_exporting(id, &self.connect(), &self.settings(id), dir, ports, logs)
        } else {
            KafkaBroker::launch_at(id, &self.connect(), &self.settings(id), dir, port, logs)
        };
        self.nodes.insert(id, Node::Kafka(broker));
    }

    /// The port broker `id` listens on (chosen now if it never ran).
    pub fn port_of(&mut self, id: i32) -> u16 {
        self.home(id).0
    }

    /// Starts a kcli broker `id` on its port and log dir; it serves when this returns.
    pub fn start_kcli(&mut self, id: i32) {
        self.start_kcli_with(id, &[]);
    }

    /// [`MixedCluster::start_kcli`] with `extra` settings of its own after the shared ones.
    pub fn start_kcli_with(&mut self, id: i32, extra: &[(&str, &str)]) {
        assert!(!self.nodes.contains_key(&id), "broker {id} runs");
        let (port, logs) = self.home(id);
        let connect = self.connect();
        let id_text = id.to_string();
        let listeners = format!("PLAINTEXT://127.0.0.1:{port}");
        let log_dirs = logs.display().to_string();
        let metrics_listener = format!("127.0.0.1:{}", self.homes[&id].metrics_port);
        let mut all = vec![
            ("zookeeper.connect", connect.as_str()),
            ("broker.id", id_text.as_str()),
            ("listeners", listeners.as_str()),
            ("log.dirs", log_dirs.as_str()),
        ];
        if self.metrics {
            all.push(("kcli.metrics.listener", metrics_listener.as_str()));
        }
        all.extend(self.settings(id));
        all.extend_from_slice(extra);
        let broker = TestBroker::start(&all);
        assert!(
            logs.join("meta.properties").exists()
                && !broker.data_dir().join("meta.properties").exists(),
            "kcli broker {id} runs on {}",
            logs.display()
        );
        self.nodes.insert(id, Node::Kcli(broker));
    }

    /// Stops broker `id` cleanly (SIGTERM: a controlled shutdown) and starts one of the other
    /// kind on the same `broker.id`, port and log dir, as a rolling migration does; waits until
    /// every broker lists it.
    pub fn replace(&mut self, id: i32) {
        let was_kafka = self.node(id).is_kafka();
        match self.node_mut(id) {
            Node::Kafka(b) => b.stop(),
            Node::Kcli(b) => b.stop(),
        }
        let old = self.nodes.remove(&id).unwrap();
        self.retired.push((id, old));
        if was_kafka {
            self.start_kcli(id);
        } else {
            self.start_kafka(id);
        }
        self.wait_all_listed();
    }

    pub fn node(&self, id: i32) -> &Node {
        self.nodes
            .get(&id)
            .unwrap_or_else(|| panic!("no broker {id}"))
    }

    fn node_mut(&mut self, id: i32) -> &mut Node {
        self.nodes
            .get_mut(&id)
            .unwrap_or_else(|| panic!("no broker {id}"))
    }

    pub fn ids(&self) -> BTreeSet<i32> {
        self.nodes.keys().copied().collect()
    }

    pub fn port(&self, id: i32) -> u16 {
        self.homes[&id].port
    }

    /// The port broker `id` serves `/metrics` on (with [`MixedCluster::start_with_metrics`]).
    pub fn metrics_port(&self, id: i32) -> u16 {
        assert!(self.metrics, "the cluster was started without metrics");
        self.homes[&id].metrics_port
    }

    pub fn log_dir(&self, id: i32) -> PathBuf {
        self.homes[&id].logs()
    }

    /// `host:port,...` of every broker.
    pub fn bootstrap(&self) -> String {
        let all: Vec<String> = self
            .nodes
            .keys()
            .map(|id| format!("127.0.0.1:{}", self.port(*id)))
            .collect();
        all.join(",")
    }

    /// kill -9 of broker `id` (its registration stays until its session expires).
    pub fn kill9(&mut self, id: i32) {
        match self.node_mut(id) {
            Node::Kafka(b) => b.kill9(),
            Node::Kcli(b) => b.kill9(),
        }
    }

    /// Starts broker `id` again, on its dir and port, once its old registration has left
    /// ZooKeeper (so it registers anew rather than racing its old session), and waits until
    /// every broker lists it.
    pub fn restart(&mut self, id: i32) {
        let path = format!("/brokers/ids/{id}");
        wait_until("the old registration gone", SESSION_TIMEOUT * 3, || {
            self.get(&path).is_none().then_some(())
        });
        match self.node_mut(id) {
            Node::Kafka(b) => b.restart(),
            Node::Kcli(b) => b.restart(),
        }
        self.wait_all_listed();
    }

    /// Waits until broker `id` has registered in ZooKeeper.
    fn wait_registered(&mut self, id: i32) {
        self.wait_znode(id, &format!("/brokers/ids/{id}"));
    }

    /// Waits until `path` exists, while broker `id` (starting) keeps running.
    fn wait_znode(&mut self, id: i32, path: &str) {
        let connect = self.connect();
        let started = std::time::Instant::now();
        loop {
            if exists(&connect, path) {
                return;
            }
            if let Node::Kafka(b) = self.node_mut(id) {
                b.assert_running("before registering");
            }
            assert!(
                started.elapsed() < JVM_START,
                "{path} did not appear within {JVM_START:?} of starting broker {id}:\n{}",
                self.node(id).log()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Waits until every running broker serves and its Metadata lists exactly the brokers
    /// registered in ZooKeeper, all of them (a JVM gets [`JVM_START`]).
    pub fn wait_all_listed(&mut self) {
        let started = std::time::Instant::now();
        loop {
            let registered = self.registered();
            let all = self.nodes.iter().all(|(id, _)| {
                metadata(self.port(*id)).is_some_and(|m| m.broker_ids() == registered)
            });
            if all && registered == self.ids() {
                return;
            }
            for (id, n) in self.nodes.iter_mut() {
                if let Node::Kafka(b) = n {
                    b.assert_running(&format!("(broker {id}) before the cluster settled"));
                }
            }
            assert!(
                started.elapsed() < JVM_START,
                "the brokers' Metadata did not list {:?} within {JVM_START:?} (registered: \
                 {registered:?})\n{}",
                self.ids(),
                self.logs()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// The broker ids registered in ZooKeeper.
    pub fn registered(&self) -> BTreeSet<i32> {
        with_zk(&self.connect(), async |zk: &dyn ZkClient| {
            match zk.get_children("/brokers/ids", false).await {
                Ok((ids, _)) => ids.iter().filter_map(|i| i.parse().ok()).collect(),
                Err(ZkError::NoNode(_)) => BTreeSet::new(),
                Err(e) => panic!("reading /brokers/ids: {e}"),
            }
        })
    }

    /// A znode's data and stat, `None` when it does not exist.
    pub fn get(&self, path: &str) -> Option<(String, Stat)> {
        zk_get(&self.connect(), path)
    }

    /// A JSON znode, `None` when it does not exist.
    pub fn get_json(&self, path: &str) -> Option<serde_json::Value> {
        self.get(path)
            .map(|(data, _)| serde_json::from_str(&data).unwrap())
    }

    /// `/controller`'s broker id, if any.
    pub fn controller_id(&self) -> Option<i32> {
        self.get_json("/controller")?["brokerid"]
            .as_i64()
            .map(|id| i32::try_from(id).unwrap())
    }

    /// `/controller_epoch`.
    pub fn controller_epoch(&self) -> i32 {
        let (data, _) = self.get("/controller_epoch").expect("/controller_epoch");
        data.trim().parse().unwrap()
    }

    /// A partition's state znode as JSON and its zkVersion (the partition epoch).
    pub fn partition_state(&self, topic: &str, partition: i32) -> Option<(serde_json::Value, i32)> {
        let (data, stat) = self.get(&format!(
            "/brokers/topics/{topic}/partitions/{partition}/state"
        ))?;
        Some((serde_json::from_str(&data).unwrap(), stat.version))
    }

    /// The ISR of a partition as its state znode holds it.
    pub fn isr(&self, topic: &str, partition: i32) -> Option<Vec<i32>> {
        let (state, _) = self.partition_state(topic, partition)?;
        Some(
            state["isr"]
                .as_array()?
                .iter()
                .map(|id| i32::try_from(id.as_i64().unwrap()).unwrap())
                .collect(),
        )
    }

    /// The leader of a partition as its state znode holds it.
    pub fn leader(&self, topic: &str, partition: i32) -> Option<i32> {
        let (state, _) = self.partition_state(topic, partition)?;
        state["leader"].as_i64().map(|l| i32::try_from(l).unwrap())
    }

    /// Every broker's log (the replaced ones' first), for failure messages.
    pub fn logs(&self) -> String {
        self.retired
            .iter()
            .map(|(id, n)| (id, n))
            .chain(self.nodes.iter())
            .map(|(id, n)| {
                let kind = if n.is_kafka() { "Kafka" } else { "kcli" };
                format!("=== broker {id} ({kind}) ===\n{}\n", tail(&n.log(), 120))
            })
            .collect()
    }
}

/// The last `lines` lines of `text`.
fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

fn exists(connect: &str, path: &str) -> bool {
    let path = path.to_string();
    with_zk(connect, async move |zk: &dyn ZkClient| {
        zk.exists(&path, false).await.unwrap().is_some()
    })
}

/// Kafka's `DumpLogSegments --deep-iteration` over every `.log` segment of the partition
/// directory `dir`, in offset order, as one listing of its batches and records: the lines
/// naming files and segment positions are left out, since replicas of one log roll at different
/// offsets and lay their batches out in different files. Fails on a segment the tool reports
/// corrupt.
pub fn dump_log_segments(dir: &Path) -> Vec<String> {
    let mut logs: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .collect();
    logs.sort();
    if logs.is_empty() {
        return Vec::new();
    }
    let files: Vec<String> = logs.iter().map(|p| p.display().to_string()).collect();
    let mut cmd = java("kafka.tools.DumpLogSegments");
    cmd.args(["--deep-iteration", "--files", &files.join(",")]);
    let (code, stdout, stderr) = run_within(cmd, b"", Duration::from_secs(120));
    assert_eq!(code, 0, "DumpLogSegments on {}: {stderr}", dir.display());
    assert!(
        !stdout.contains("isvalid: false") && !stdout.contains("Found invalid"),
        "DumpLogSegments found a corrupt batch in {}:\n{stdout}",
        dir.display()
    );
    stdout
        .lines()
        .filter(|l| !l.starts_with("Dumping ") && !l.starts_with("Log starting offset"))
        .map(without_position)
        .collect()
}

/// A batch line without its `position: N` (the byte offset in its segment file).
fn without_position(line: &str) -> String {
    let mut out = Vec::new();
    let mut words = line.split(' ').peekable();
    while let Some(w) = words.next() {
        if w == "position:" {
            words.next();
            continue;
        }
        out.push(w);
    }
    out.join(" ")
}
