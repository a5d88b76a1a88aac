//! The ZooKeeper session lifecycle against a real ZooKeeper (Debian's `zookeeper` package on
//! 127.0.0.1, a free port, a temp dir): the chroot created when missing, the connection timeout,
//! and a forced expiry. The session under test reaches ZooKeeper through a small TCP proxy; the
//! expiry is forced by cutting the proxy (a partition), reattaching a second client directly to
//! the session (its id and password) and closing it, which ends the session on the server, then
//! healing the partition: the first client learns of the expiry on reconnecting, as after a long
//! pause. (Reattaching without the partition lets the two clients take the session from each
//! other on reconnects.) A short partition first shows a disconnection that is not an expiry.
//! After the expiry: the states Disconnected, Expired, Connected in order, a new session id, the handlers run
//! in order, the registration re-created by a handler with CheckedEphemeral semantics, and the
//! watch it re-armed firing through the dispatcher.

use std::sync::Arc;
use std::time::{Duration, Instant};

use kcli::zk::session::ZkSession;
use kcli::zk::zookeeper::ZooKeeperClient;
use kcli::zk::{
    CreateMode, HandlerFuture, SessionState, StateChangeHandler, WatchDispatcher,
    ZNodeChildChangeHandler, ZkClient, ZkError, create_checked_ephemeral,
};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::serve_support::free_port;
use crate::support::delay_relay::DelayRelay;
use crate::support::zookeeper::ZkServer;

const SESSION: Duration = Duration::from_secs(4);
const DEADLINE: Duration = Duration::from_secs(20);

/// A TCP proxy to 127.0.0.1:`to` that can be cut (connections dropped, new ones refused at
/// once) and healed.
struct Proxy {
    port: u16,
    open: Arc<std::sync::atomic::AtomicBool>,
    conns: Arc<std::sync::Mutex<Vec<tokio::task::JoinHandle<()>>>>,
    accept: tokio::task::JoinHandle<()>,
}

impl Proxy {
    async fn start(to: u16) -> Proxy {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let open = Arc::new(std::sync::atomic::AtomicBool::new(true));
        let conns = Arc::new(std::sync::Mutex::new(Vec::new()));
        let (o, c) = (Arc::clone(&open), Arc::clone(&conns));
        let accept = tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                if !o.load(std::sync::atomic::Ordering::SeqCst) {
                    continue;
                }
                c.lock().unwrap().push(tokio::spawn(async move {
                    if let Ok(mut out) = tokio::net::TcpStream::connect(("127.0.0.1", to)).await {
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut out).await;
                    }
                }));
            }
        });
        Proxy {
            port,
            open,
            conns,
            accept,
        }
    }

    fn cut(&self) {
        self.open.store(false, std::sync::atomic::Ordering::SeqCst);
        for conn in self.conns.lock().unwrap().drain(..) {
            conn.abort();
        }
    }

    fn heal(&self) {
        self.open.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.cut();
        self.accept.abort();
    }
}

async fn recv<T>(rx: &mut UnboundedReceiver<T>, what: &str) -> T {
    tokio::time::timeout(DEADLINE, rx.recv())
        .await
        .unwrap_or_else(|_| panic!("no {what} within {DEADLINE:?}"))
        .unwrap()
}

/// The broker's registration, as a handler: records its hooks, re-registers with
/// CheckedEphemeral and re-arms the child watch on the new session.
struct Registration {
    zk: Arc<dyn ZkClient>,
    log: UnboundedSender<String>,
}

impl StateChangeHandler for Registration {
    fn name(&self) -> &str {
        "broker-registration"
    }
    fn before_initializing_session(&self) -> HandlerFuture<'_> {
        Box::pin(async move {
            let _ = self.log.send("before".into());
        })
    }
    fn after_initializing_session(&self) -> HandlerFuture<'_> {
        Box::pin(async move {
            let created = create_checked_ephemeral(&*self.zk, "/brokers/ids/1", b"{\"v\":5}").await;
            let rearmed = self.zk.get_children("/brokers/ids", true).await;
            let _ = self.log.send(format!(
                "after {:#x} {:?} {:?}",
                self.zk.session_id(),
                created.map(|s| s.ephemeral_owner == self.zk.session_id()),
                rearmed.map(|(kids, _)| kids)
            ));
        })
    }
}

/// A second handler, to show the order of registration is the order of running.
struct Second(UnboundedSender<String>);

impl StateChangeHandler for Second {
    fn name(&self) -> &str {
        "second"
    }
    fn after_initializing_session(&self) -> HandlerFuture<'_> {
        Box::pin(async move {
            let _ = self.0.send("second".into());
        })
    }
}

struct Children(UnboundedSender<String>);

impl ZNodeChildChangeHandler for Children {
    fn path(&self) -> &str {
        "/brokers/ids"
    }
    fn handle_child_change(&self) {
        let _ = self.0.send("children".into());
    }
}

async fn expiry_scenario(port: u16) {
    let proxy = Proxy::start(port).await;
    let direct = format!("127.0.0.1:{port}/kcli/test");
    let connect = format!("127.0.0.1:{}/kcli/test", proxy.port);
    let session = Arc::new(
        ZkSession::connect(&connect, SESSION, DEADLINE)
            .await
            .unwrap(),
    );
    // The chroot was created (with its parent) before the chrooted session connected.
    let bare = ZooKeeperClient::connect(&format!("127.0.0.1:{port}"), SESSION)
        .await
        .unwrap();
    assert!(bare.exists("/kcli/test", false).await.unwrap().is_some());
    let zk: Arc<dyn ZkClient> = session.clone();
    zk.create("/brokers", b"", CreateMode::Persistent)
        .await
        .unwrap();
    zk.create("/brokers/ids", b"", CreateMode::Persistent)
        .await
        .unwrap();
    // Seen through the chroot.
    assert!(
        bare.exists("/kcli/test/brokers/ids", false)
            .await
            .unwrap()
            .is_some()
    );

    let tasks = TaskTracker::new();
    let dispatcher =
        WatchDispatcher::start(Arc::clone(&zk), &tasks, CancellationToken::new()).unwrap();
    let (log_tx, mut log) = unbounded_channel();
    dispatcher.register_znode_child_change_handler(Arc::new(Children(log_tx.clone())));
    zk.register_state_change_handler(Arc::new(Registration {
        zk: Arc::clone(&zk),
        log: log_tx.clone(),
    }));
    zk.register_state_change_handler(Arc::new(Second(log_tx.clone())));
    let mut states = zk.subscribe_states().unwrap();

    let old_id = zk.session_id();
    // A short partition is a disconnection, not an expiry: the session comes back, and a call
    // made during the partition waits for it and succeeds.
    proxy.cut();
    assert_eq!(
        tokio::time::timeout(DEADLINE, states.recv())
            .await
            .unwrap()
            .unwrap(),
        SessionState::Disconnected
    );
    let during = tokio::spawn({
        let zk = Arc::clone(&zk);
        async move { zk.exists("/brokers/ids", false).await }
    });
    proxy.heal();
    assert_eq!(
        tokio::time::timeout(DEADLINE, states.recv())
            .await
            .unwrap()
            .unwrap(),
        SessionState::Connected
    );
    assert!(during.await.unwrap().unwrap().is_some());
    assert_eq!(zk.session_id(), old_id);
    assert!(log.try_recv().is_err(), "no handler runs without an expiry");

    let first = create_checked_ephemeral(&*zk, "/brokers/ids/1", b"{\"v\":5}")
        .await
        .unwrap();
    assert_eq!(first.ephemeral_owner, old_id);
    zk.get_children("/brokers/ids", true).await.unwrap();

    // Force the expiry.
    let info = session.session_info().await.unwrap();
    proxy.cut();
    let thief = ZooKeeperClient::reattach(&direct, info, SESSION)
        .await
        .unwrap();
    assert_eq!(thief.session_id(), old_id);
    thief.close().await.unwrap();
    // The session is gone on the server (its ephemeral with it) before the partition heals.
    let start = Instant::now();
    while bare
        .exists("/kcli/test/brokers/ids/1", false)
        .await
        .unwrap()
        .is_some()
    {
        assert!(
            start.elapsed() < DEADLINE,
            "the closed session's ephemeral stayed"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    proxy.heal();

    let mut seen = Vec::new();
    while seen.last() != Some(&SessionState::Connected) {
        let state = tokio::time::timeout(DEADLINE, states.recv())
            .await
            .unwrap()
            .unwrap();
        seen.push(state);
    }
    assert_eq!(
        seen,
        [
            SessionState::Disconnected,
            SessionState::Expired,
            SessionState::Connected
        ]
    );
    let new_id = zk.session_id();
    assert_ne!(new_id, old_id);
    assert_eq!(session.state(), SessionState::Connected);

    // The handlers ran in order on the new session: the registration is ours again (the old
    // one went with the old session) and the re-armed child watch saw it.
    assert_eq!(recv(&mut log, "before hook").await, "before");
    assert_eq!(
        recv(&mut log, "after hook").await,
        format!("after {new_id:#x} Ok(true) Ok([\"1\"])")
    );
    assert_eq!(recv(&mut log, "second handler").await, "second");
    let (data, stat) = zk.get_data("/brokers/ids/1", false).await.unwrap();
    assert_eq!(
        (data.as_slice(), stat.ephemeral_owner),
        (&b"{\"v\":5}"[..], new_id)
    );
    assert!(
        stat.czxid > first.czxid,
        "a new registration, so a new broker epoch"
    );
    // CheckedEphemeral: our own node is success, someone else's is NodeExists.
    assert_eq!(
        create_checked_ephemeral(&*zk, "/brokers/ids/1", b"x")
            .await
            .unwrap()
            .czxid,
        stat.czxid
    );
    let other = ZooKeeperClient::connect(&direct, SESSION).await.unwrap();
    assert_eq!(
        create_checked_ephemeral(&other, "/brokers/ids/1", b"x").await,
        Err(ZkError::NodeExists("/brokers/ids/1".into()))
    );
    // The watch the handler re-armed fires through the dispatcher on the new session.
    other
        .create("/brokers/ids/2", b"", CreateMode::Ephemeral)
        .await
        .unwrap();
    assert_eq!(recv(&mut log, "child change").await, "children");

    zk.close().await.unwrap();
    assert_eq!(
        tokio::time::timeout(DEADLINE, states.recv())
            .await
            .unwrap()
            .unwrap(),
        SessionState::Closed
    );
    assert_eq!(
        zk.exists("/brokers", false).await,
        Err(ZkError::SessionExpired)
    );
    // Closing ended the session: its registration is gone for the others.
    let start = Instant::now();
    while other
        .exists("/brokers/ids/1", false)
        .await
        .unwrap()
        .is_some()
    {
        assert!(
            start.elapsed() < DEADLINE,
            "the closed session's ephemeral stayed"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Dropping the dispatcher ends its routing task.
    drop(dispatcher);
    tasks.close();
    tokio::time::timeout(DEADLINE, tasks.wait()).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_expiry_rebuilds_the_session_and_runs_the_handlers() {
    let server = ZkServer::start_async().await;
    tokio::time::timeout(Duration::from_secs(90), expiry_scenario(server.port()))
        .await
        .unwrap();
}

/// A request in flight when its connection stops answering (nothing within the client's
/// connection timeout, 40% of the session's) fails in the crate with the error that broke the
/// connection. The session lives on, so this is the Java client's CONNECTIONLOSS, which Kafka's
/// `ZooKeeperClient` retries once connected again: the request is retried on the reconnected
/// session, not failed. (A controller whose write failed this way in the soak left a bounced
/// broker without its LeaderAndIsr for good.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_on_a_connection_that_stops_answering_is_retried_once_reconnected() {
    let server = ZkServer::start_async().await;
    let relay = DelayRelay::start(
        std::net::Ipv4Addr::LOCALHOST,
        std::net::SocketAddr::from(([127, 0, 0, 1], server.port())),
    );
    let connect = relay.addr().to_string();
    let zk = Arc::new(
        ZkSession::connect(&connect, SESSION, DEADLINE)
            .await
            .unwrap(),
    );
    zk.create("/slow", b"v", CreateMode::Persistent)
        .await
        .unwrap();
    let session_id = zk.session_id();
    // Past the connection timeout (1.6 s), well within the session (4 s).
    relay.set_delay(Duration::from_secs(3));
    let started = Instant::now();
    let read = {
        let zk = Arc::clone(&zk);
        tokio::spawn(async move { zk.get_data("/slow", false).await })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    // The connection in use stays slow; the next one is not.
    relay.set_delay(Duration::ZERO);
    let read = tokio::time::timeout(DEADLINE, read)
        .await
        .expect("the read finishes")
        .unwrap();
    let (data, _) = read.expect("the read is retried on the reconnected session");
    assert_eq!(data, b"v");
    assert_eq!(zk.session_id(), session_id, "the same session");
    assert!(
        started.elapsed() >= Duration::from_millis(1500),
        "the first connection timed out: {:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn first_connect_is_bounded_by_the_connection_timeout() {
    // Nothing listens on the port.
    let connect = format!("127.0.0.1:{}", free_port());
    let start = Instant::now();
    let err = ZkSession::connect(&connect, SESSION, Duration::from_millis(600))
        .await
        .unwrap_err();
    assert_eq!(
        err,
        ZkError::ConnectionTimeout {
            connect: connect.clone(),
            timeout_ms: 600
        }
    );
    assert!(err.to_string().contains(&connect), "{err}");
    assert!(
        start.elapsed() < Duration::from_secs(3),
        "{:?}",
        start.elapsed()
    );
}

/// An ensemble that loses quorum for longer than the crate waits (about 1.4 session timeouts)
/// and gets it back keeps every session, giving each a fresh timeout: the `ZkSession` resumes its
/// session rather than building a new one. The states are Disconnected then Connected, never
/// Expired (the servers' election may move the connection again, within the session); no
/// handler runs; the id and the ephemeral stay; and a watch armed before fires for a
/// change made after, and one on a node changed while the session was away fires at once.
async fn quorum_loss_scenario(ensemble: &mut crate::support::zk_ensemble::ZkEnsemble) {
    let connect = ensemble.connect_string();
    let session = ZkSession::connect(&connect, SESSION, Duration::from_secs(10))
        .await
        .unwrap();
    let zk: Arc<dyn ZkClient> = Arc::new(session);
    let mut states = zk.subscribe_states().unwrap();
    let (log, mut hooks) = unbounded_channel();
    zk.register_state_change_handler(Arc::new(Registration {
        zk: Arc::clone(&zk),
        log,
    }));
    let id = zk.session_id();
    zk.create("/e", b"", CreateMode::Ephemeral).await.unwrap();
    zk.create("/w", b"0", CreateMode::Persistent).await.unwrap();
    zk.create("/c", b"", CreateMode::Persistent).await.unwrap();
    let mut events = zk.take_events().unwrap();
    zk.get_data("/w", true).await.unwrap();
    zk.get_children("/c", true).await.unwrap();

    let leader = ensemble.leader();
    let down: Vec<usize> = (1..=3).filter(|s| *s != leader).collect();
    for s in &down {
        ensemble.kill9(*s);
    }
    assert_eq!(
        recv_state(&mut states).await,
        SessionState::Disconnected,
        "quorum lost"
    );
    // Past the crate's own limit, then quorum back.
    tokio::time::sleep(SESSION * 2).await;
    for s in &down {
        ensemble.restart(*s);
    }
    // Another session changes the child list before this one is back, if it is quick enough;
    // either way the child watch must fire (owed at once, or when the change lands).
    let other = ZooKeeperClient::connect(&connect, SESSION).await.unwrap();
    other
        .create("/c/x", b"", CreateMode::Persistent)
        .await
        .unwrap();
    assert_eq!(recv_state(&mut states).await, SessionState::Connected);
    assert_eq!(zk.session_id(), id, "the same session");
    let (_, stat) = zk.get_data("/e", false).await.unwrap();
    assert_eq!(stat.ephemeral_owner, id, "its ephemeral kept");
    assert_eq!(recv(&mut events, "the child watch").await.path, "/c");
    other.set_data("/w", b"1", -1).await.unwrap();
    assert_eq!(recv(&mut events, "the data watch").await.path, "/w");
    assert!(hooks.try_recv().is_err(), "no handler ran: no new session");
    let mut more = Vec::new();
    while let Ok(state) = states.try_recv() {
        more.push(state);
    }
    // The restarted servers' election may move the connection once more: no expiry, though.
    assert!(
        !more.contains(&SessionState::Expired) && more.last() != Some(&SessionState::Disconnected),
        "no expiry: {more:?}"
    );
    assert_eq!(zk.session_id(), id, "still the same session");
    let _ = other.close().await;
    let _ = zk.close().await;
}

async fn recv_state(states: &mut tokio::sync::broadcast::Receiver<SessionState>) -> SessionState {
    tokio::time::timeout(Duration::from_secs(60), states.recv())
        .await
        .expect("a state change within 60 s")
        .unwrap()
}

#[test]
fn a_session_lives_through_quorum_lost_past_its_timeout() {
    // Three JVMs: no cluster beside them.
    let _one = crate::support::cluster::exclusive();
    let mut ensemble = crate::support::zk_ensemble::ZkEnsemble::start(3);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        tokio::time::timeout(
            Duration::from_secs(120),
            quorum_loss_scenario(&mut ensemble),
        )
        .await
        .unwrap();
    });
}
