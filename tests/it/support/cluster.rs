//! [`TestCluster`]: a real ZooKeeper and N `kcli serve` brokers, each a separate process on
//! 127.0.0.1 with a free port and a temp dir, broker ids 1..=N, under a chroot of their own. One
//! cluster runs at a time in the test binary ([`exclusive`], also taken by the tests that run a
//! Kafka broker), sessions are 6 s, and every wait is a poll with a deadline.
//!
//! Also here: [`metadata`], one broker's Metadata answer as plain data (raw protocol, so no
//! client cache sits between the test and the broker), and synchronous ZooKeeper reads.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use kcli::protocol::messages::metadata_request::MetadataRequest;
use kcli::protocol::messages::{RequestKind, ResponseKind};
use kcli::protocol::record::batch::RecordBatchHeader;
use kcli::protocol::record::batch_iter::BatchIter;
use kcli::zk::{Stat, ZkClient, ZkError};

use super::kafka_broker::KafkaBroker;
use super::netns::TestNetwork;
use super::zk_ensemble::{ClusterZk, ZkEnsemble};
use super::zookeeper::ZkServer;
use crate::serve_support::{KafkaConn, Launch, TestBroker};

mod racks;

/// The brokers' `zookeeper.session.timeout.ms`.
pub const SESSION_TIMEOUT: Duration = Duration::from_secs(6);

static ONE_CLUSTER: Mutex<()> = Mutex::new(());

/// Held while a cluster (of kcli or Kafka brokers) runs, so that two never share the 2 cores.
pub fn exclusive() -> MutexGuard<'static, ()> {
    ONE_CLUSTER.lock().unwrap_or_else(|e| e.into_inner())
}

/// Polls `f` every 50 ms until it gives `Some`, failing the test after `limit` with `what`.
pub fn wait_until<T>(what: &str, limit: Duration, mut f: impl FnMut() -> Option<T>) -> T {
    let start = Instant::now();
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(start.elapsed() < limit, "not within {limit:?}: {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Sends `sig` (`STOP`, `CONT`, ...) to the process `pid`. A `STOP` returns once every thread
/// of the process has stopped (the signal is delivered asynchronously: a thread still running
/// for a moment could, say, send one more fetch), or fails after 5 s.
pub fn signal(pid: u32, sig: &str) {
    let status = std::process::Command::new("kill")
        .arg(format!("-{sig}"))
        .arg(pid.to_string())
        .status()
        .unwrap();
    assert!(status.success(), "kill -{sig} {pid}");
    if sig == "STOP" {
        wait_until(
            &format!("every thread of {pid} stopped"),
            Duration::from_secs(5),
            || all_threads_stopped(pid).then_some(()),
        );
    }
}

/// Whether every thread of `pid` is in state `T` (stopped) in `/proc/<pid>/task/*/stat`.
fn all_threads_stopped(pid: u32) -> bool {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return false;
    };
    tasks.filter_map(Result::ok).all(|task| {
        std::fs::read_to_string(task.path().join("stat")).is_ok_and(|stat| {
            // The state follows the parenthesised command name, which may hold spaces.
            stat.rsplit_once(") ")
                .is_some_and(|(_, rest)| rest.starts_with('T') || rest.starts_with('t'))
        })
    })
}

/// One batch of a `.log` file: (base offset, leader epoch, CRC, bytes).
pub type Batch = (i64, i32, u32, Vec<u8>);

/// Every whole batch of a partition directory's segments, in offset order; a batch being
/// written (a torn tail) ends the read, and a directory being changed reads as empty.
pub fn log_batches(dir: &Path) -> Vec<Batch> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut logs: Vec<_> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .collect();
    logs.sort();
    let mut out = Vec::new();
    for log in logs {
        let Ok(bytes) = std::fs::read(&log) else {
            return Vec::new();
        };
        for entry in BatchIter::new(&bytes) {
            let Ok(entry) = entry else { break };
            let Ok(header) = RecordBatchHeader::parse(entry.bytes) else {
                break;
            };
            out.push((
                header.base_offset,
                header.partition_leader_epoch,
                header.crc,
                entry.bytes.to_vec(),
            ));
        }
    }
    out
}

/// The offset after the last whole batch of a partition directory's segments (0 for none); a
/// batch being written (a torn tail) ends the read.
pub fn log_end_offset(dir: &Path) -> i64 {
    let mut logs: Vec<_> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "log"))
                .collect()
        })
        .unwrap_or_default();
    logs.sort();
    let mut end = 0;
    for log in logs {
        let bytes = std::fs::read(&log).unwrap_or_default();
        for entry in BatchIter::new(&bytes) {
            let Ok(entry) = entry else { break };
            let Ok(header) = RecordBatchHeader::parse(entry.bytes) else {
                break;
            };
            end = header.base_offset + i64::from(header.last_offset_delta) + 1;
        }
    }
    end
}

/// One partition as a broker's Metadata shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionView {
    pub error_code: i16,
    pub leader: i32,
    pub leader_epoch: i32,
    pub replicas: Vec<i32>,
    pub isr: Vec<i32>,
}

/// A broker's Metadata answer: brokers (id → port), controller, topics.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetadataView {
    pub brokers: BTreeMap<i32, i32>,
    pub controller_id: i32,
    pub topics: BTreeMap<String, (i16, BTreeMap<i32, PartitionView>)>,
}

impl MetadataView {
    pub fn broker_ids(&self) -> BTreeSet<i32> {
        self.brokers.keys().copied().collect()
    }

    /// The partitions of `topic`, when every one of `count` has a leader among `alive`.
    pub fn led_partitions(
        &self,
        topic: &str,
        count: usize,
        alive: &BTreeSet<i32>,
    ) -> Option<&BTreeMap<i32, PartitionView>> {
        let (_, partitions) = self.topics.get(topic)?;
        (partitions.len() == count && partitions.values().all(|p| alive.contains(&p.leader)))
            .then_some(partitions)
    }
}

/// Metadata v9 (all topics) from the broker on `port` of 127.0.0.1; `None` when it does not
/// answer.
pub fn metadata(port: u16) -> Option<MetadataView> {
    metadata_at(std::net::SocketAddr::from((
        std::net::Ipv4Addr::LOCALHOST,
        port,
    )))
}

/// [`metadata`] from the broker at `addr` (one in a network namespace, say), within 2 s to
/// connect.
pub fn metadata_at(addr: std::net::SocketAddr) -> Option<MetadataView> {
    let stream = std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(2)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    let mut conn = KafkaConn::from_stream(stream, 1);
    let body = RequestKind::Metadata(MetadataRequest {
        topics: None,
        ..MetadataRequest::default()
    });
    conn.send(&body, 9).ok()?;
    let (_, response) = conn
        .recv(kcli::protocol::messages::ApiKey::Metadata, 9)
        .ok()?;
    let ResponseKind::Metadata(m) = response else {
        return None;
    };
    Some(MetadataView {
        brokers: m.brokers.iter().map(|b| (b.node_id, b.port)).collect(),
        controller_id: m.controller_id,
        topics: m
            .topics
            .iter()
            .filter_map(|t| {
                let name = t.name.as_ref()?.to_string();
                let partitions = t
                    .partitions
                    .iter()
                    .map(|p| {
                        (
                            p.partition_index,
                            PartitionView {
                                error_code: p.error_code,
                                leader: p.leader_id,
                                leader_epoch: p.leader_epoch,
                                replicas: p.replica_nodes.clone(),
                                isr: p.isr_nodes.clone(),
                            },
                        )
                    })
                    .collect();
                Some((name, (t.error_code, partitions)))
            })
            .collect(),
    })
}

/// Runs `f` against a fresh ZooKeeper session on `connect` (chroot included), blocking.
pub fn with_zk<T>(connect: &str, f: impl AsyncFnOnce(&dyn ZkClient) -> T) -> T {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let client = tokio::time::timeout(
            Duration::from_secs(20),
            kcli::zk::ZooKeeperClient::connect(connect, SESSION_TIMEOUT),
        )
        .await
        .expect("ZooKeeper session within 20 s")
        .unwrap();
        let out = f(&client).await;
        let _ = client.close().await;
        out
    })
}

/// A znode's data (as text) and stat on `connect` (chroot included), `None` when it does not
/// exist.
pub fn zk_get(connect: &str, path: &str) -> Option<(String, Stat)> {
    let path = path.to_string();
    with_zk(connect, async move |zk: &dyn ZkClient| {
        match zk.get_data(&path, false).await {
            Ok((data, stat)) => Some((String::from_utf8(data).unwrap(), stat)),
            Err(ZkError::NoNode(_)) => None,
            Err(e) => panic!("reading {path}: {e}"),
        }
    })
}

/// A real ZooKeeper and `n` kcli brokers (ids 1..=n). Fields drop in order: the brokers, then
/// ZooKeeper, then the network they ran in.
pub struct TestCluster {
    pub brokers: Vec<TestBroker>,
    /// Kafka 3.9.1's brokers in place of kcli's ([`TestCluster::start_partitionable_kafka`]):
    /// the same faults on the reference.
    kafka: Vec<KafkaBroker>,
    pub zk: ClusterZk,
    chroot: String,
    network: Option<TestNetwork>,
    _exclusive: MutexGuard<'static, ()>,
}

/// How a cluster starts beyond its overrides: the ZooKeeper it runs on (a standalone server on
/// 127.0.0.1 when `None`), each broker's [`Launch`] by id, a step with `zookeeper.connect`
/// before the brokers start, and the network it runs in.
#[derive(Default)]
struct Setup {
    zk: Option<ClusterZk>,
    launch: Option<Box<dyn Fn(i32) -> Launch>>,
    before_brokers: Option<BeforeBrokers>,
    network: Option<TestNetwork>,
}

/// A step run with `zookeeper.connect` before the brokers start.
type BeforeBrokers = Box<dyn FnOnce(&str)>;

impl TestCluster {
    /// Starts ZooKeeper and `n` brokers with `overrides` on top of the cluster settings, and
    /// waits until every broker's Metadata lists all `n`.
    pub fn start(n: i32, overrides: &[(&str, &str)]) -> TestCluster {
        TestCluster::start_inner(n, overrides, exclusive(), Setup::default())
    }

    /// [`TestCluster::start`] on a three-server ZooKeeper ensemble, for tests that fail its
    /// servers ([`TestCluster::ensemble`]).
    pub fn start_on_ensemble(n: i32, overrides: &[(&str, &str)]) -> TestCluster {
        let exclusive = exclusive();
        let zk = ClusterZk::Ensemble(ZkEnsemble::start(3));
        TestCluster::start_inner(
            n,
            overrides,
            exclusive,
            Setup {
                zk: Some(zk),
                ..Setup::default()
            },
        )
    }

    /// [`TestCluster::start`] with each broker in a network namespace of its own and ZooKeeper
    /// on the bridge between them, for tests that cut links ([`TestCluster::network`]).
    pub fn start_partitionable(n: i32, overrides: &[(&str, &str)]) -> TestCluster {
        TestCluster::start_in_network(n, overrides, false)
    }

    /// [`TestCluster::start_partitionable`] with every link between the brokers through a relay
    /// ([`TestNetwork::relay_between_hosts`]), for tests that slow links down
    /// ([`TestNetwork::slow_down`]) rather than cut them.
    pub fn start_slowable(n: i32, overrides: &[(&str, &str)]) -> TestCluster {
        TestCluster::start_in_network(n, overrides, true)
    }

    fn start_in_network(n: i32, overrides: &[(&str, &str)], relayed: bool) -> TestCluster {
        let exclusive = exclusive();
        let mut network = TestNetwork::create(usize::try_from(n).unwrap());
        if relayed {
            network.relay_between_hosts();
        }
        let zk = ClusterZk::Standalone(ZkServer::start_on(network.test_addr()));
        let namespaces: Vec<(String, std::net::Ipv4Addr)> = (1..=n)
            .map(|id| {
                let host = usize::try_from(id).unwrap();
                (network.ns(host), network.addr(host))
            })
            .collect();
        TestCluster::start_inner(
            n,
            overrides,
            exclusive,
            Setup {
                zk: Some(zk),
                launch: Some(Box::new(move |id| Launch {
                    netns: Some(namespaces[usize::try_from(id - 1).unwrap()].clone()),
                    ..Launch::default()
                })),
                network: Some(network),
                ..Setup::default()
            },
        )
    }

    /// [`TestCluster::start`] with Kafka 3.9.1's brokers (ids 1..=n, 256 MiB heaps) on
    /// 127.0.0.1: the reference the fault tests hold kcli to. `overrides` are
    /// `server.properties` lines.
    pub fn start_kafka(n: i32, overrides: &[(&str, &str)]) -> TestCluster {
        let exclusive = exclusive();
        let zk = ClusterZk::Standalone(ZkServer::start());
        TestCluster::start_kafka_inner(n, overrides, exclusive, zk, None)
    }

    /// [`TestCluster::start_kafka`] on a three-server ZooKeeper ensemble, as
    /// [`TestCluster::start_on_ensemble`].
    pub fn start_kafka_on_ensemble(n: i32, overrides: &[(&str, &str)]) -> TestCluster {
        let exclusive = exclusive();
        let zk = ClusterZk::Ensemble(ZkEnsemble::start(3));
        TestCluster::start_kafka_inner(n, overrides, exclusive, zk, None)
    }

    /// [`TestCluster::start_partitionable`] with Kafka 3.9.1's brokers in the namespaces, as
    /// [`TestCluster::start_kafka`] starts them.
    pub fn start_partitionable_kafka(n: i32, overrides: &[(&str, &str)]) -> TestCluster {
        TestCluster::start_kafka_in_network(n, overrides, false)
    }

    /// [`TestCluster::start_slowable`] with Kafka 3.9.1's brokers.
    pub fn start_slowable_kafka(n: i32, overrides: &[(&str, &str)]) -> TestCluster {
        TestCluster::start_kafka_in_network(n, overrides, true)
    }

    fn start_kafka_in_network(n: i32, overrides: &[(&str, &str)], relayed: bool) -> TestCluster {
        let exclusive = exclusive();
        let mut network = TestNetwork::create(usize::try_from(n).unwrap());
        if relayed {
            network.relay_between_hosts();
        }
        let zk = ClusterZk::Standalone(ZkServer::start_on(network.test_addr()));
        TestCluster::start_kafka_inner(n, overrides, exclusive, zk, Some(network))
    }

    fn start_kafka_inner(
        n: i32,
        overrides: &[(&str, &str)],
        exclusive: MutexGuard<'static, ()>,
        zk: ClusterZk,
        network: Option<TestNetwork>,
    ) -> TestCluster {
        let connect = format!("{}/kafka", zk.connect_string());
        // The chroot exists before any broker starts, as for kcli's clusters.
        with_zk(&zk.connect_string(), async |client: &dyn ZkClient| {
            let _ = client
                .create("/kafka", b"", kcli::zk::client::CreateMode::Persistent)
                .await;
        });
        let kafka: Vec<KafkaBroker> = (1..=n)
            .map(|id| match &network {
                Some(network) => {
                    let host = usize::try_from(id).unwrap();
                    KafkaBroker::launch_in(
                        id,
                        &connect,
                        overrides,
                        (network.ns(host), network.addr(host)),
                    )
                }
                None => KafkaBroker::launch(id, &connect, overrides),
            })
            .collect();
        let cluster = TestCluster {
            brokers: Vec::new(),
            kafka,
            zk,
            chroot: "/kafka".to_string(),
            network,
            _exclusive: exclusive,
        };
        let all: BTreeSet<i32> = (1..=n).collect();
        for id in 1..=n {
            wait_until(
                "every Kafka broker's Metadata lists every broker",
                Duration::from_secs(120),
                || metadata_at(cluster.addr(id)).filter(|m| m.broker_ids() == all),
            );
        }
        cluster
    }

    /// [`TestCluster::start`] with some brokers under an `ulimit -n` of their own: (broker id,
    /// limit) pairs.
    pub fn start_with_open_file_limits(
        n: i32,
        overrides: &[(&str, &str)],
        limits: &[(i32, u64)],
    ) -> TestCluster {
        let limits = limits.to_vec();
        TestCluster::start_inner(
            n,
            overrides,
            exclusive(),
            Setup {
                launch: Some(Box::new(move |id| Launch {
                    open_file_limit: limits.iter().find(|(b, _)| *b == id).map(|l| l.1),
                    ..Launch::default()
                })),
                ..Setup::default()
            },
        )
    }

    /// [`TestCluster::start`], running `setup` with `zookeeper.connect` (chroot included,
    /// created here rather than by the first broker) once ZooKeeper is up and before any broker
    /// starts: users the brokers need, say.
    pub fn start_after(
        n: i32,
        overrides: &[(&str, &str)],
        setup: impl FnOnce(&str) + 'static,
    ) -> TestCluster {
        TestCluster::start_inner(
            n,
            overrides,
            exclusive(),
            Setup {
                before_brokers: Some(Box::new(setup)),
                ..Setup::default()
            },
        )
    }

    fn start_inner(
        n: i32,
        overrides: &[(&str, &str)],
        exclusive: MutexGuard<'static, ()>,
        setup: Setup,
    ) -> TestCluster {
        let zk = setup
            .zk
            .unwrap_or_else(|| ClusterZk::Standalone(ZkServer::start()));
        let chroot = "/kcli".to_string();
        let connect = format!("{}{chroot}", zk.connect_string());
        if let Some(before_brokers) = setup.before_brokers {
            with_zk(&zk.connect_string(), async |zk: &dyn ZkClient| {
                let created = zk
                    .create(&chroot, b"", kcli::zk::client::CreateMode::Persistent)
                    .await;
                if let Err(e) = created {
                    panic!("creating {chroot}: {e}");
                }
            });
            before_brokers(&connect);
        }
        let session_ms = SESSION_TIMEOUT.as_millis().to_string();
        let brokers = (1..=n)
            .map(|broker_id| {
                let id = broker_id.to_string();
                let mut all = vec![
                    ("zookeeper.connect", connect.as_str()),
                    ("broker.id", id.as_str()),
                    ("zookeeper.session.timeout.ms", session_ms.as_str()),
                ];
                all.extend_from_slice(overrides);
                let launch = setup
                    .launch
                    .as_ref()
                    .map_or_else(Launch::default, |f| f(broker_id));
                TestBroker::start_with(&all, launch)
            })
            .collect();
        let cluster = TestCluster {
            brokers,
            kafka: Vec::new(),
            zk,
            chroot,
            network: setup.network,
            _exclusive: exclusive,
        };
        let all: BTreeSet<i32> = (1..=n).collect();
        for b in &cluster.brokers {
            wait_until(
                "every broker's Metadata lists every broker",
                Duration::from_secs(30),
                || metadata_at(b.addr()).filter(|m| m.broker_ids() == all),
            );
        }
        cluster
    }

    /// The network of a cluster started with [`TestCluster::start_partitionable`].
    pub fn network(&self) -> &TestNetwork {
        self.network
            .as_ref()
            .expect("a cluster on loopback: start_partitionable")
    }

    /// Broker `id`'s listener address.
    pub fn addr(&self, id: i32) -> std::net::SocketAddr {
        let index = usize::try_from(id - 1).unwrap();
        match self.kafka.get(index) {
            Some(kafka) => kafka.addr(),
            None => self.brokers[index].addr(),
        }
    }

    /// Broker `id`'s log dir (its only one), kcli's or Kafka's.
    pub fn data_dir(&self, id: i32) -> std::path::PathBuf {
        let index = usize::try_from(id - 1).unwrap();
        match self.kafka.get(index) {
            Some(kafka) => kafka.log_dir(),
            None => self.brokers[index].data_dir(),
        }
    }

    /// The brokers' ids, `1..=n`, kcli's or Kafka's.
    pub fn ids(&self) -> Vec<i32> {
        (1..=i32::try_from(self.brokers.len() + self.kafka.len()).unwrap()).collect()
    }

    /// Whether the brokers are Kafka's.
    pub fn is_kafka(&self) -> bool {
        !self.kafka.is_empty()
    }

    /// The brokers' kind as the fault tests' figures name it.
    pub fn kind(&self) -> &'static str {
        if self.is_kafka() {
            "Kafka 3.9.1"
        } else {
            "kcli"
        }
    }

    /// `zookeeper.connect` of the brokers, chroot included.
    pub fn connect(&self) -> String {
        format!("{}{}", self.zk.connect_string(), self.chroot)
    }

    /// The ensemble under a cluster started with [`TestCluster::start_on_ensemble`].
    pub fn ensemble(&mut self) -> &mut ZkEnsemble {
        match &mut self.zk {
            ClusterZk::Ensemble(ensemble) => ensemble,
            ClusterZk::Standalone(_) => panic!("a standalone ZooKeeper: start_on_ensemble"),
        }
    }

    /// The broker with this id.
    pub fn broker(&mut self, id: i32) -> &mut TestBroker {
        let index = usize::try_from(id - 1).unwrap();
        &mut self.brokers[index]
    }

    pub fn port(&self, id: i32) -> u16 {
        self.brokers[usize::try_from(id - 1).unwrap()].port()
    }

    /// `host:port,...` of every broker.
    pub fn bootstrap(&self) -> String {
        let mut all: Vec<String> = self.brokers.iter().map(TestBroker::bootstrap).collect();
        all.extend(self.kafka.iter().map(KafkaBroker::bootstrap));
        all.join(",")
    }

    /// A znode's data and stat, `None` when it does not exist.
    pub fn get(&self, path: &str) -> Option<(String, Stat)> {
        zk_get(&self.connect(), path)
    }

    /// Broker `id`'s process id, kcli's or Kafka's (to signal it).
    pub fn pid(&self, id: i32) -> u32 {
        let index = usize::try_from(id - 1).unwrap();
        match self.kafka.get(index) {
            Some(kafka) => kafka.pid(),
            None => self.brokers[index].pid(),
        }
    }

    /// Kills broker `id` with SIGKILL, kcli's or Kafka's.
    pub fn kill9(&mut self, id: i32) {
        let index = usize::try_from(id - 1).unwrap();
        match self.kafka.get_mut(index) {
            Some(kafka) => kafka.kill9(),
            None => self.brokers[index].kill9(),
        }
    }

    /// Restarts broker `id` (killed or stopped; kcli's or Kafka's) once its registration has
    /// left ZooKeeper, so the new process registers anew rather than racing its old session;
    /// waits `limit`.
    pub fn restart_once_deregistered(&mut self, id: i32, limit: Duration) {
        wait_until("the old registration gone", limit, || {
            self.get(&format!("/brokers/ids/{id}"))
                .is_none()
                .then_some(())
        });
        let index = usize::try_from(id - 1).unwrap();
        match self.kafka.get_mut(index) {
            Some(kafka) => kafka.restart(),
            None => self.brokers[index].restart(),
        }
    }

    /// The ISR of a partition as its state znode holds it; `None` before it is written.
    pub fn isr(&self, topic: &str, partition: i32) -> Option<Vec<i32>> {
        let (data, _) = self.get(&format!(
            "/brokers/topics/{topic}/partitions/{partition}/state"
        ))?;
        let json: serde_json::Value = serde_json::from_str(&data).unwrap();
        Some(
            json["isr"]
                .as_array()?
                .iter()
                .map(|id| i32::try_from(id.as_i64().unwrap()).unwrap())
                .collect(),
        )
    }

    /// The leader of a partition as its state znode holds it; `None` before it is written.
    pub fn leader(&self, topic: &str, partition: i32) -> Option<i32> {
        let (data, _) = self.get(&format!(
            "/brokers/topics/{topic}/partitions/{partition}/state"
        ))?;
        let json: serde_json::Value = serde_json::from_str(&data).ok()?;
        i32::try_from(json["leader"].as_i64()?).ok()
    }

    /// Each registered broker of ids `1..=n` with its registration's czxid (its broker epoch).
    pub fn registrations(&self, n: i32) -> BTreeMap<i32, i64> {
        (1..=n)
            .filter_map(|id| {
                let (_, stat) = self.get(&format!("/brokers/ids/{id}"))?;
                Some((id, stat.czxid))
            })
            .collect()
    }

    /// `/controller`'s broker id, if any.
    pub fn controller_id(&self) -> Option<i32> {
        let (data, _) = self.get("/controller")?;
        let json: serde_json::Value = serde_json::from_str(&data).unwrap();
        json["brokerid"]
            .as_i64()
            .map(|id| i32::try_from(id).unwrap())
    }

    /// `/controller_epoch`.
    pub fn controller_epoch(&self) -> i32 {
        let (data, _) = self.get("/controller_epoch").expect("/controller_epoch");
        data.trim().parse().unwrap()
    }

    /// Every broker's log, for failure messages.
    pub fn logs(&self) -> String {
        let kafka = self.kafka.iter().map(|k| {
            let log = k.log();
            let tail: Vec<&str> = log.lines().rev().take(60).collect();
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            format!(
                "--- Kafka broker {} (last 60 lines) ---\n{}\n",
                k.id(),
                tail.join("\n")
            )
        });
        self.brokers
            .iter()
            .map(TestBroker::stderr)
            .chain(kafka)
            .collect()
    }

    /// For failure messages: where each replica of `topic`'s partitions breaks a producer's
    /// sequence (a batch that does not continue the producer's last one), with the batch
    /// before it, read from the brokers' log dirs.
    pub fn producer_sequence_breaks(&self, topic: &str, partitions: i32) -> String {
        let mut out = String::new();
        for (i, broker) in self.brokers.iter().enumerate() {
            for p in 0..partitions {
                let dir = broker.data_dir().join(format!("{topic}-{p}"));
                for line in producer_sequence_breaks(&log_batches(&dir)) {
                    out.push_str(&format!("broker {} {topic}-{p}: {line}\n", i + 1));
                }
            }
        }
        format!("--- producer sequence breaks in the replicas' logs ---\n{out}")
    }
}

/// Each batch that does not continue its producer's previous batch (same epoch, next
/// sequence), described with that previous batch.
pub fn producer_sequence_breaks(batches: &[Batch]) -> Vec<String> {
    let describe = |h: &RecordBatchHeader| {
        format!(
            "offsets {}..={} leader epoch {} producer {} epoch {} sequences {}..={}",
            h.base_offset,
            h.last_offset(),
            h.partition_leader_epoch,
            h.producer_id,
            h.producer_epoch,
            h.base_sequence,
            h.last_sequence()
        )
    };
    let mut last: std::collections::HashMap<i64, RecordBatchHeader> = Default::default();
    let mut breaks = Vec::new();
    for (_, _, _, bytes) in batches {
        let Ok(h) = RecordBatchHeader::parse(bytes) else {
            continue;
        };
        if !h.has_producer_id() {
            continue;
        }
        if let Some(before) = last.get(&h.producer_id)
            && (before.producer_epoch != h.producer_epoch
                || i64::from(before.last_sequence()) + 1 != i64::from(h.base_sequence))
        {
            breaks.push(format!("{} after {}", describe(&h), describe(before)));
        }
        last.insert(h.producer_id, h);
    }
    breaks
}

/// The bytes of the `.log` segments in a partition's directory; 0 when it does not exist yet.
pub fn segment_bytes(partition_dir: &std::path::Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(partition_dir) else {
        return 0;
    };
    entries
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "log"))
        .filter_map(|e| e.metadata().ok())
        .map(|m| m.len())
        .sum()
}
