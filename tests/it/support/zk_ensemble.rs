//! A three-server ZooKeeper ensemble for fault tests (Debian's `zookeeper` package, one JVM per
//! server, `QuorumPeerMain`): every server on 127.0.0.1 with free client, quorum and election
//! ports and a temp data dir, killed by PID on drop. Servers can be killed -9, paused with
//! SIGSTOP and restarted on their data; [`ZkEnsemble::leader`] and [`ZkEnsemble::serving`] ask
//! each server with `srvr`, polling with deadlines.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use super::cluster::{signal, wait_until};
use super::zookeeper::{ZK_CLASSPATH, ZkServer};

/// How long an ensemble may take to elect a leader and serve.
const SERVE_LIMIT: Duration = Duration::from_secs(45);

/// One server of the ensemble: its process while it runs, its ports and its directory.
struct EnsembleServer {
    child: Option<Child>,
    client_port: u16,
    dir: PathBuf,
}

/// A ZooKeeper ensemble on 127.0.0.1; servers are numbered from 1, as their `myid`s.
pub struct ZkEnsemble {
    servers: Vec<EnsembleServer>,
    _dir: tempfile::TempDir,
}

impl Drop for ZkEnsemble {
    fn drop(&mut self) {
        for server in &mut self.servers {
            if let Some(mut child) = server.child.take() {
                // A paused JVM dies of SIGKILL too.
                let _ = child.kill();
                let _ = child.wait();
            }
        }
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The `Mode:` a server reports to `srvr` (`leader`, `follower`), `None` while it does not
/// serve (no quorum, not started, paused).
fn mode(port: u16) -> Option<String> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(1))).ok()?;
    s.write_all(b"srvr").ok()?;
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    out.lines()
        .find_map(|l| l.strip_prefix("Mode: "))
        .map(str::to_string)
}

impl ZkEnsemble {
    /// Starts `n` servers and waits until they all serve under one leader.
    pub fn start(n: usize) -> ZkEnsemble {
        let dir = tempfile::tempdir().unwrap();
        let ports: Vec<(u16, u16, u16)> = (0..n)
            .map(|_| (free_port(), free_port(), free_port()))
            .collect();
        let members: String = ports
            .iter()
            .enumerate()
            .map(|(i, (_, quorum, election))| {
                format!("server.{}=127.0.0.1:{quorum}:{election}\n", i + 1)
            })
            .collect();
        let servers = ports
            .iter()
            .enumerate()
            .map(|(i, (client_port, _, _))| {
                let server_dir = dir.path().join(format!("zk{}", i + 1));
                let data = server_dir.join("data");
                std::fs::create_dir_all(&data).unwrap();
                std::fs::write(data.join("myid"), format!("{}\n", i + 1)).unwrap();
                std::fs::write(
                    server_dir.join("zoo.cfg"),
                    format!(
                        "tickTime=500\ninitLimit=20\nsyncLimit=4\nminSessionTimeout=1000\n\
                         maxSessionTimeout=30000\ndataDir={}\nclientPort={client_port}\n\
                         clientPortAddress=127.0.0.1\nadmin.enableServer=false\n\
                         4lw.commands.whitelist=ruok,srvr,stat\n{members}",
                        data.display()
                    ),
                )
                .unwrap();
                EnsembleServer {
                    child: None,
                    client_port: *client_port,
                    dir: server_dir,
                }
            })
            .collect();
        let mut ensemble = ZkEnsemble { servers, _dir: dir };
        for id in 1..=n {
            ensemble.spawn(id);
        }
        ensemble.wait_serving(&(1..=n).collect::<Vec<_>>());
        ensemble
    }

    fn server(&self, id: usize) -> &EnsembleServer {
        &self.servers[id - 1]
    }

    fn spawn(&mut self, id: usize) {
        let server = &mut self.servers[id - 1];
        assert!(server.child.is_none(), "zk{id} runs already");
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(server.dir.join("zk.log"))
            .unwrap();
        let child = Command::new("java")
            .args(["-Xmx128m", "-XX:+UseSerialGC"])
            .arg(format!("-Dzookeeper.log.dir={}", server.dir.display()))
            .arg("-cp")
            .arg(ZK_CLASSPATH)
            .arg("org.apache.zookeeper.server.quorum.QuorumPeerMain")
            .arg(server.dir.join("zoo.cfg"))
            .stdout(Stdio::from(log.try_clone().unwrap()))
            .stderr(Stdio::from(log))
            .spawn()
            .unwrap();
        server.child = Some(child);
    }

    /// Waits until each server of `ids` serves, one of them or another as the leader.
    pub fn wait_serving(&self, ids: &[usize]) {
        wait_until("the ensemble serving", SERVE_LIMIT, || {
            ids.iter()
                .all(|id| mode(self.server(*id).client_port).is_some())
                .then_some(())
        });
    }

    /// `127.0.0.1:<port>,...` of every server, Kafka's `zookeeper.connect` without a chroot.
    pub fn connect_string(&self) -> String {
        let hosts: Vec<String> = self
            .servers
            .iter()
            .map(|s| format!("127.0.0.1:{}", s.client_port))
            .collect();
        hosts.join(",")
    }

    /// The server that leads the ensemble now (waiting for one).
    pub fn leader(&self) -> usize {
        wait_until("a ZooKeeper leader", SERVE_LIMIT, || {
            (1..=self.servers.len())
                .find(|id| mode(self.server(*id).client_port).as_deref() == Some("leader"))
        })
    }

    /// Whether server `id` serves requests now.
    pub fn serving(&self, id: usize) -> bool {
        mode(self.server(id).client_port).is_some()
    }

    fn pid(&self, id: usize) -> u32 {
        self.server(id).child.as_ref().expect("running").id()
    }

    /// kill -9 of server `id`; it stays down until [`ZkEnsemble::restart`].
    pub fn kill9(&mut self, id: usize) {
        let mut child = self.servers[id - 1].child.take().expect("running");
        child.kill().unwrap();
        child.wait().unwrap();
    }

    /// Starts server `id` again on its data, without waiting for it to serve.
    pub fn restart(&mut self, id: usize) {
        self.spawn(id);
    }

    /// SIGSTOP of server `id` (returns once every thread has stopped).
    pub fn pause(&self, id: usize) {
        signal(self.pid(id), "STOP");
    }

    /// SIGCONT of a paused server `id`.
    pub fn resume(&self, id: usize) {
        signal(self.pid(id), "CONT");
    }

    /// Every server's log, for failure messages.
    pub fn logs(&self) -> String {
        self.servers
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let log = std::fs::read_to_string(s.dir.join("zk.log")).unwrap_or_default();
                let tail: Vec<&str> = log.lines().rev().take(40).collect();
                let tail: Vec<&str> = tail.into_iter().rev().collect();
                format!("--- zk{} ---\n{}\n", i + 1, tail.join("\n"))
            })
            .collect()
    }
}

/// The ZooKeeper a [`super::cluster::TestCluster`] runs on: one standalone server, or an
/// ensemble for the tests that fail its servers.
pub enum ClusterZk {
    Standalone(ZkServer),
    Ensemble(ZkEnsemble),
}

impl ClusterZk {
    pub fn connect_string(&self) -> String {
        match self {
            ClusterZk::Standalone(server) => server.connect_string(),
            ClusterZk::Ensemble(ensemble) => ensemble.connect_string(),
        }
    }
}
