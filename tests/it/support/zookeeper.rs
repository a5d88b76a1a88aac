//! A standalone ZooKeeper for tests (Debian's `zookeeper` package; `tests/run` installs it):
//! [`ZkServer::start`] runs it on 127.0.0.1 with a free port and a temp data dir, waits with a
//! deadline until `srvr` answers "Mode: standalone", and kills it by PID on drop. Sessions may
//! be 1 to 30 s (tick 500 ms). [`write_znode`] writes a node whatever exists already, creating
//! its parents, so tests can lay out hand-written znodes of any Kafka version.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use kcli::zk::recipes::create_recursive;
use kcli::zk::zookeeper::ZooKeeperClient;
use kcli::zk::{ZkClient, ZkError};

const ZK_JAR: &str = "/usr/share/java/zookeeper.jar";
/// The server's classpath: Debian's config dir (log4j), the jar and a logger.
pub const ZK_CLASSPATH: &str =
    "/etc/zookeeper/conf:/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-simple.jar";
const START_LIMIT: Duration = Duration::from_secs(30);

/// A standalone ZooKeeper server, killed on drop.
pub struct ZkServer {
    child: Child,
    addr: Ipv4Addr,
    port: u16,
    dir: tempfile::TempDir,
}

impl Drop for ZkServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn srvr_standalone(addr: Ipv4Addr, port: u16) -> bool {
    let Ok(mut s) = TcpStream::connect((addr, port)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(1)));
    if s.write_all(b"srvr").is_err() {
        return false;
    }
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    out.contains("Mode: standalone")
}

impl ZkServer {
    /// Starts a server and waits until it serves (blocking; call it from `spawn_blocking` in
    /// async tests).
    pub fn start() -> ZkServer {
        ZkServer::start_on(Ipv4Addr::LOCALHOST)
    }

    /// [`ZkServer::start`] listening on `addr` (a test network's bridge, say).
    pub fn start_on(addr: Ipv4Addr) -> ZkServer {
        assert!(
            std::path::Path::new(ZK_JAR).exists(),
            "{ZK_JAR} missing: apt-get install -y --no-install-recommends zookeeper (tests/run does)"
        );
        let dir = tempfile::tempdir().unwrap();
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let data = dir.path().join("data");
        std::fs::create_dir(&data).unwrap();
        let cfg = dir.path().join("zoo.cfg");
        std::fs::write(
            &cfg,
            format!(
                "tickTime=500\nminSessionTimeout=1000\nmaxSessionTimeout=30000\ndataDir={}\nclientPort={port}\n\
                 clientPortAddress={addr}\nadmin.enableServer=false\n4lw.commands.whitelist=ruok,srvr,stat\n",
                data.display()
            ),
        )
        .unwrap();
        let log = std::fs::File::create(dir.path().join("zk.log")).unwrap();
        let child = Command::new("java")
            .args(["-Xmx256m", "-XX:+UseSerialGC"])
            .arg(format!("-Dzookeeper.log.dir={}", dir.path().display()))
            .arg("-cp")
            .arg(ZK_CLASSPATH)
            .arg("org.apache.zookeeper.server.ZooKeeperServerMain")
            .arg(&cfg)
            .stdout(Stdio::from(log.try_clone().unwrap()))
            .stderr(Stdio::from(log))
            .spawn()
            .unwrap();
        let server = ZkServer {
            child,
            addr,
            port,
            dir,
        };
        let start = Instant::now();
        while !srvr_standalone(addr, port) {
            assert!(
                start.elapsed() < START_LIMIT,
                "ZooKeeper did not start:\n{}",
                server.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        server
    }

    /// Starts a server from async code.
    pub async fn start_async() -> ZkServer {
        tokio::task::spawn_blocking(ZkServer::start).await.unwrap()
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// `<address>:<port>`, Kafka's `zookeeper.connect` without a chroot.
    pub fn connect_string(&self) -> String {
        format!("{}:{}", self.addr, self.port)
    }

    /// The server's log, for failure messages.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("zk.log")).unwrap_or_default()
    }

    /// A new session (6 s) on `connect_string()` plus `chroot` ("" for none).
    pub async fn client(&self, chroot: &str) -> ZooKeeperClient {
        let connect = format!("{}{chroot}", self.connect_string());
        tokio::time::timeout(
            Duration::from_secs(20),
            ZooKeeperClient::connect(&connect, Duration::from_secs(6)),
        )
        .await
        .expect("ZooKeeper session within 20 s")
        .unwrap()
    }
}

/// Writes `data` at `path`: creates it (and its missing parents, empty) or replaces the data of
/// the node that is there.
pub async fn write_znode(client: &dyn ZkClient, path: &str, data: &[u8]) {
    match create_recursive(client, path, data).await {
        Ok(()) => {}
        Err(ZkError::NodeExists(_)) => {
            client.set_data(path, data, -1).await.unwrap();
        }
        Err(e) => panic!("writing {path}: {e}"),
    }
}
