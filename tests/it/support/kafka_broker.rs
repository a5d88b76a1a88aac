//! A real Apache Kafka 3.9.1 broker in ZooKeeper mode, for tests that check kcli against what
//! Kafka itself writes and does: [`KafkaBroker::start`] runs `kafka.Kafka server.properties`
//! from `.tools/kafka-3.9.1/` (tests/install-kafka-tools) with a 256 MiB heap, a free port on
//! 127.0.0.1, a temp log dir and the given `zookeeper.connect`, and waits with a deadline until
//! its `/brokers/ids/<id>` registration appears and its own Metadata lists it (the controller
//! has sent it UpdateMetadata, so it can create topics). It is stopped by its PID: SIGTERM (a clean
//! shutdown, which closes its ZooKeeper session), SIGKILL, or on drop. One Kafka broker runs at
//! a time in this test binary (the machine is shared), so a start holds a lock until the drop.
//!
//! [`KafkaBroker::launch`] starts one without the lock and without waiting, for a caller that
//! holds the lock itself and runs Kafka brokers beside kcli ones (`support::mixed_cluster`);
//! [`KafkaBroker::restart`] starts the same broker again on its dir and port;
//! [`KafkaBroker::launch_in`] runs one in a network namespace of a
//! [`super::netns::TestNetwork`], listening on that namespace's address;
//! [`KafkaBroker::launch_exporting`] runs one with the Prometheus JMX exporter javaagent
//! (`.tools/jmx_prometheus_javaagent-1.0.1.jar`, Strimzi's rules) serving `/metrics` on a port.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::MutexGuard;
use std::time::{Duration, Instant};

use kcli::zk::ZkClient;

use crate::kafka_tools::support::{java, kafka_classpath, repo};
use crate::serve_support::{KafkaConn, free_port};

/// A JVM start plus the broker's startup; the machine is shared by several builds.
const START_LIMIT: Duration = Duration::from_secs(90);
const STOP_LIMIT: Duration = Duration::from_secs(30);

/// A running `kafka.Kafka` process, killed on drop.
pub struct KafkaBroker {
    child: Option<Child>,
    id: i32,
    port: u16,
    dir: tempfile::TempDir,
    logs: PathBuf,
    /// The network namespace it runs in and its address there; 127.0.0.1 when `None`.
    netns: Option<(String, std::net::Ipv4Addr)>,
    /// The port the JMX exporter javaagent serves `/metrics` on, when it runs one.
    exporter_port: Option<u16>,
    /// The one-cluster lock, when this broker took it itself ([`KafkaBroker::start`]).
    _turn: Option<MutexGuard<'static, ()>>,
}

impl KafkaBroker {
    /// Starts broker `id` against `zookeeper_connect` (with its chroot, if any), with the extra
    /// `server.properties` lines in `extra`, and waits until `zk` (a session on the same
    /// ZooKeeper and chroot) shows its registration.
    pub async fn start(
        id: i32,
        zookeeper_connect: &str,
        extra: &[(&str, &str)],
        zk: &dyn ZkClient,
    ) -> KafkaBroker {
        // One cluster at a time, kcli's or Kafka's.
        let turn = super::cluster::exclusive();
        let mut broker = KafkaBroker::launch(id, zookeeper_connect, extra);
        broker._turn = Some(turn);
        let port = broker.port;
        let path = format!("/brokers/ids/{id}");
        let start = Instant::now();
        loop {
            // Kafka registers before it opens its listener, and knows itself only once the
            // controller's UpdateMetadata has come.
            if zk.exists(&path, false).await.unwrap().is_some()
                && tokio::task::spawn_blocking(move || lists_itself(port, id))
                    .await
                    .unwrap()
            {
                return broker;
            }
            if !broker.is_running() || start.elapsed() > START_LIMIT {
                panic!(
                    "Kafka broker {id} did not register {path} within {START_LIMIT:?}:\n{}",
                    broker.log()
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Writes `server.properties` (a free port, a temp log dir, `zookeeper_connect`, then the
    /// lines of `extra`, which override the defaults before them) and starts the JVM, without
    /// waiting for it and without the one-cluster lock.
    pub fn launch(id: i32, zookeeper_connect: &str, extra: &[(&str, &str)]) -> KafkaBroker {
        let dir = tempfile::tempdir().unwrap();
        let logs = dir.path().join("logs");
        KafkaBroker::launch_at(id, zookeeper_connect, extra, dir, free_port(), logs)
    }

    /// [`KafkaBroker::launch`] inside the network namespace `ns`, listening on `addr` there.
    pub fn launch_in(
        id: i32,
        zookeeper_connect: &str,
        extra: &[(&str, &str)],
        ns: (String, std::net::Ipv4Addr),
    ) -> KafkaBroker {
        let listener = format!("PLAINTEXT://{}:{{port}}", ns.1);
        let mut all = vec![("listeners", listener.as_str())];
        all.extend_from_slice(extra);
        let dir = tempfile::tempdir().unwrap();
        let logs = dir.path().join("logs");
        let mut broker = KafkaBroker::configure(
            id,
            zookeeper_connect,
            &all,
            dir,
            super::netns::NETNS_PORT,
            logs,
        );
        broker.netns = Some(ns);
        broker.restart();
        broker
    }

    /// [`KafkaBroker::launch`] on a given port and log dir (a kcli broker's, say, on a rolling
    /// migration), keeping its own files in `dir`.
    pub fn launch_at(
        id: i32,
        zookeeper_connect: &str,
        extra: &[(&str, &str)],
        dir: tempfile::TempDir,
        port: u16,
        logs: PathBuf,
    ) -> KafkaBroker {
        let mut broker = KafkaBroker::configure(id, zookeeper_connect, extra, dir, port, logs);
        broker.restart();
        broker
    }

    /// [`KafkaBroker::launch_at`] with the Prometheus JMX exporter javaagent 1.0.1 and
    /// Strimzi's rules (tests/fixtures/metrics/kafka-metrics.yaml) in the JVM, serving
    /// `/metrics` on 127.0.0.1:`exporter_port`, as Strimzi runs its Kafka brokers; again on
    /// every [`KafkaBroker::restart`].
    pub fn launch_exporting(
        id: i32,
        zookeeper_connect: &str,
        extra: &[(&str, &str)],
        dir: tempfile::TempDir,
        (port, exporter_port): (u16, u16),
        logs: PathBuf,
    ) -> KafkaBroker {
        let mut broker = KafkaBroker::configure(id, zookeeper_connect, extra, dir, port, logs);
        broker.exporter_port = Some(exporter_port);
        broker.restart();
        broker
    }

    /// Writes `server.properties` (an `extra` line replaces a default one; `{port}` in a value
    /// is the broker's port), without starting the JVM.
    fn configure(
        id: i32,
        zookeeper_connect: &str,
        extra: &[(&str, &str)],
        dir: tempfile::TempDir,
        port: u16,
        logs: PathBuf,
    ) -> KafkaBroker {
        let _ = kafka_classpath();
        let mut props = format!(
            "broker.id={id}\nlisteners=PLAINTEXT://127.0.0.1:{port}\nlog.dirs={}\n\
             zookeeper.connect={zookeeper_connect}\nzookeeper.session.timeout.ms=6000\n\
             offsets.topic.replication.factor=1\ngroup.initial.rebalance.delay.ms=0\n",
            logs.display()
        );
        for (k, v) in extra {
            // A later line wins in a properties file.
            props.push_str(&format!("{k}={}\n", v.replace("{port}", &port.to_string())));
        }
        std::fs::write(dir.path().join("server.properties"), props).unwrap();
        KafkaBroker {
            child: None,
            id,
            port,
            dir,
            logs,
            netns: None,
            exporter_port: None,
            _turn: None,
        }
    }

    /// Starts the JVM (again) on the same `server.properties`, log dir and port; its output is
    /// appended to the same log.
    pub fn restart(&mut self) {
        assert!(self.child.is_none(), "Kafka broker {} is running", self.id);
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.path().join("kafka.log"))
            .unwrap();
        let mut jvm: Command = java("kafka.Kafka");
        if let Some(port) = self.exporter_port {
            jvm = with_exporter(&jvm, port);
        }
        let mut cmd = match &self.netns {
            // `ip netns exec` execs the JVM: the PID is the broker's.
            Some((ns, _)) => {
                let mut cmd = Command::new("ip");
                cmd.args(["netns", "exec", ns])
                    .arg(jvm.get_program())
                    .args(jvm.get_args());
                cmd
            }
            None => jvm,
        };
        cmd.arg(self.dir.path().join("server.properties"))
            .stdin(Stdio::null())
            .stdout(Stdio::from(log.try_clone().unwrap()))
            .stderr(Stdio::from(log));
        self.child = Some(cmd.spawn().unwrap());
    }

    /// Fails the test with the broker's log if the JVM has exited.
    pub fn assert_running(&mut self, what: &str) {
        if !self.is_running() {
            panic!("Kafka broker {} exited {what}:\n{}", self.id, self.log());
        }
    }

    pub fn id(&self) -> i32 {
        self.id
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn bootstrap(&self) -> String {
        self.addr().to_string()
    }

    /// Its listener: 127.0.0.1, or its namespace's address.
    pub fn addr(&self) -> std::net::SocketAddr {
        let host = self
            .netns
            .as_ref()
            .map_or(std::net::Ipv4Addr::LOCALHOST, |(_, addr)| *addr);
        std::net::SocketAddr::from((host, self.port))
    }

    pub fn log_dir(&self) -> PathBuf {
        self.logs.clone()
    }

    /// What the broker printed (stdout and stderr), for failure messages.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("kafka.log")).unwrap_or_default()
    }

    pub fn pid(&self) -> u32 {
        self.child.as_ref().expect("broker is not running").id()
    }

    pub fn is_running(&mut self) -> bool {
        self.child
            .as_mut()
            .is_some_and(|c| c.try_wait().ok().flatten().is_none())
    }

    /// SIGTERM and wait (bounded) for the exit: a controlled shutdown that closes the session,
    /// so its ephemeral znodes go at once.
    pub fn stop(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        let status = Command::new("kill")
            .arg("-TERM")
            .arg(child.id().to_string())
            .status()
            .unwrap();
        assert!(status.success(), "kill -TERM {}: {status}", child.id());
        let start = Instant::now();
        while child.try_wait().unwrap().is_none() {
            if start.elapsed() > STOP_LIMIT {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "Kafka broker {} ignored SIGTERM for {STOP_LIMIT:?}",
                    self.id
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// SIGKILL: the registration stays until the session times out.
    pub fn kill9(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// `jvm` (a `java ... <main class>` command) with the JMX exporter javaagent among the JVM's
/// options, before the main class: `-javaagent:<jar>=127.0.0.1:<port>:<Strimzi's rules>`.
fn with_exporter(jvm: &Command, port: u16) -> Command {
    let agent = repo().join(".tools/jmx_prometheus_javaagent-1.0.1.jar");
    assert!(
        agent.exists(),
        "{} is missing: run tests/install-kafka-tools",
        agent.display()
    );
    let rules = repo().join("tests/fixtures/metrics/kafka-metrics.yaml");
    let mut args: Vec<std::ffi::OsString> = jvm.get_args().map(ToOwned::to_owned).collect();
    let main_class = args.len() - 1;
    args.insert(
        main_class,
        format!(
            "-javaagent:{}=127.0.0.1:{port}:{}",
            agent.display(),
            rules.display()
        )
        .into(),
    );
    let mut cmd = Command::new(jvm.get_program());
    cmd.args(args);
    cmd
}

/// Whether the broker on `port` answers Metadata (v12) with itself among the brokers.
fn lists_itself(port: u16, id: i32) -> bool {
    use kcli::protocol::messages::metadata_request::MetadataRequest;
    use kcli::protocol::messages::{RequestKind, ResponseKind};
    let Ok(stream) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    stream
        .set_write_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut conn = KafkaConn::from_stream(stream, 1);
    let request = RequestKind::Metadata(MetadataRequest {
        topics: Some(vec![]),
        ..Default::default()
    });
    if conn.send(&request, 12).is_err() {
        return false;
    }
    match conn.recv(kcli::protocol::messages::ApiKey::Metadata, 12) {
        Ok((_, ResponseKind::Metadata(r))) => r.brokers.iter().any(|b| b.node_id == id),
        _ => false,
    }
}

impl Drop for KafkaBroker {
    fn drop(&mut self) {
        self.kill9();
    }
}
