//! The `ZkClient` conformance scenario, run against the embedded store and against a real
//! ZooKeeper (Debian's `zookeeper` package, started here on 127.0.0.1 with a free port and a
//! temp dir; `tests/run` installs it), so both implementations keep the same semantics.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use kcli::zk::zookeeper::ZooKeeperClient;
use kcli::zk::{
    CreateMode, EmbeddedStore, Op, OpResult, WatchedEvent, WatchedEventType, ZkClient, ZkError,
};

const ZK_JAR: &str = "/usr/share/java/zookeeper.jar";

/// A standalone ZooKeeper server, killed on drop.
struct ZkServer {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Drop for ZkServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn srvr_standalone(port: u16) -> bool {
    let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else {
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

fn start_zookeeper() -> ZkServer {
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
             clientPortAddress=127.0.0.1\nadmin.enableServer=false\n4lw.commands.whitelist=ruok,srvr,stat\n",
            data.display()
        ),
    )
    .unwrap();
    let log = std::fs::File::create(dir.path().join("zk.log")).unwrap();
    let child = Command::new("java")
        .args(["-Xmx256m", "-XX:+UseSerialGC"])
        .arg(format!("-Dzookeeper.log.dir={}", dir.path().display()))
        .arg("-cp")
        .arg(format!(
            "/etc/zookeeper/conf:{ZK_JAR}:/usr/share/java/slf4j-simple.jar"
        ))
        .arg("org.apache.zookeeper.server.ZooKeeperServerMain")
        .arg(&cfg)
        .stdout(Stdio::from(log.try_clone().unwrap()))
        .stderr(Stdio::from(log))
        .spawn()
        .unwrap();
    let server = ZkServer {
        child,
        port,
        _dir: dir,
    };
    let start = Instant::now();
    while !srvr_standalone(port) {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "ZooKeeper did not start"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    server
}

async fn next(rx: &mut tokio::sync::mpsc::UnboundedReceiver<WatchedEvent>) -> WatchedEvent {
    tokio::time::timeout(Duration::from_secs(10), rx.recv())
        .await
        .unwrap()
        .unwrap()
}

/// The shared scenario: `a` and `b` are two sessions on the same store or ensemble.
async fn conformance(a: Arc<dyn ZkClient>, b: Arc<dyn ZkClient>) {
    const P: CreateMode = CreateMode::Persistent;
    assert_ne!(a.session_id(), b.session_id());
    let mut events = a.take_events().unwrap();
    // CRUD and versions.
    assert_eq!(
        a.create("/k/x", b"", P).await,
        Err(ZkError::NoNode("/k/x".into()))
    );
    let (path, st) = a.create("/k", b"one", P).await.unwrap();
    assert_eq!((path.as_str(), st.version, st.data_length), ("/k", 0, 3));
    assert_eq!(
        b.create("/k", b"", P).await,
        Err(ZkError::NodeExists("/k".into()))
    );
    assert_eq!(
        b.set_data("/k", b"two", 3).await,
        Err(ZkError::BadVersion("/k".into()))
    );
    let st = b.set_data("/k", b"two", 0).await.unwrap();
    assert_eq!(st.version, 1);
    assert_eq!(a.get_data("/k", false).await.unwrap().0, b"two");
    // Sequential names from the parent's cversion.
    let (s0, _) = a
        .create("/k/c_", b"", CreateMode::PersistentSequential)
        .await
        .unwrap();
    let (s1, _) = a
        .create("/k/c_", b"", CreateMode::PersistentSequential)
        .await
        .unwrap();
    assert_eq!(
        (s0.as_str(), s1.as_str()),
        ("/k/c_0000000000", "/k/c_0000000001")
    );
    assert_eq!(
        a.delete("/k", -1).await,
        Err(ZkError::NotEmpty("/k".into()))
    );
    let (kids, st) = a.get_children("/k", false).await.unwrap();
    assert_eq!(
        (kids, st.num_children),
        (
            vec!["c_0000000000".to_string(), "c_0000000001".to_string()],
            2
        )
    );
    // Multi: all or nothing.
    let failing = vec![
        Op::Create {
            path: "/k/m".into(),
            data: vec![],
            mode: P,
        },
        Op::Check {
            path: "/k".into(),
            version: 9,
        },
    ];
    assert_eq!(
        a.multi(failing).await,
        Err(ZkError::BadVersion("/k".into()))
    );
    assert!(a.exists("/k/m", false).await.unwrap().is_none());
    let ok = vec![
        Op::Check {
            path: "/k".into(),
            version: 1,
        },
        Op::Create {
            path: "/k/m".into(),
            data: b"d".to_vec(),
            mode: P,
        },
        Op::SetData {
            path: "/k".into(),
            data: b"3".to_vec(),
            version: 1,
        },
        Op::Delete {
            path: s0.clone(),
            version: 0,
        },
    ];
    let res = a.multi(ok).await.unwrap();
    assert!(matches!(&res[1], OpResult::Create { path, .. } if path == "/k/m"));
    assert!(matches!(&res[2], OpResult::SetData { stat } if stat.version == 2));
    // Ephemerals and watches: b's ephemeral vanishes when b closes, and a's watches fire once.
    let (_, st) = b.create("/k/e", b"", CreateMode::Ephemeral).await.unwrap();
    assert_eq!(st.ephemeral_owner, b.session_id());
    assert_eq!(
        b.create("/k/e/x", b"", P).await,
        Err(ZkError::NoChildrenForEphemerals("/k/e/x".into()))
    );
    a.exists("/k/e", true).await.unwrap();
    b.close().await.unwrap();
    assert_eq!(
        next(&mut events).await,
        WatchedEvent {
            event_type: WatchedEventType::NodeDeleted,
            path: "/k/e".into()
        }
    );
    assert!(a.exists("/k/e", false).await.unwrap().is_none());
    a.get_data("/k/m", true).await.unwrap();
    a.set_data("/k/m", b"1", -1).await.unwrap();
    a.set_data("/k/m", b"2", -1).await.unwrap();
    assert_eq!(
        next(&mut events).await,
        WatchedEvent {
            event_type: WatchedEventType::NodeDataChanged,
            path: "/k/m".into()
        }
    );
    a.get_children("/k", true).await.unwrap();
    a.create("/k/n", b"", P).await.unwrap();
    assert_eq!(
        next(&mut events).await,
        WatchedEvent {
            event_type: WatchedEventType::NodeChildrenChanged,
            path: "/k".into()
        }
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(events.try_recv().is_err(), "each watch fires once");
}

#[tokio::test]
async fn embedded_store_conforms() {
    let store = EmbeddedStore::in_memory();
    conformance(Arc::new(store.session()), Arc::new(store.session())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_zookeeper_conforms() {
    let server = tokio::task::spawn_blocking(start_zookeeper).await.unwrap();
    let connect = format!("127.0.0.1:{}", server.port);
    let a = ZooKeeperClient::connect(&connect, Duration::from_secs(6))
        .await
        .unwrap();
    let b = ZooKeeperClient::connect(&connect, Duration::from_secs(6))
        .await
        .unwrap();
    tokio::time::timeout(
        Duration::from_secs(60),
        conformance(Arc::new(a), Arc::new(b)),
    )
    .await
    .unwrap();
    drop(server);
}
