//! `ZkClient` over a real ZooKeeper ensemble, through the `zookeeper-client` crate: the
//! ZooKeeper-mode counterpart of the embedded store. Nodes are created with open ACLs (Kafka's
//! default when `zookeeper.set.acl=false`). One-shot watches are forwarded to an event channel by
//! a small task each, tracked by the client and ended by `close` (or dropping it); session-state
//! events are not forwarded (`zk::session` follows them through
//! [`ZooKeeperClient::state_watcher`] and builds the next session on expiry, forwarding every
//! session's watch events to one channel). The watches armed and not yet fired are kept in a
//! `WatchRegistry` that a client resuming the same session shares, so that
//! [`ZooKeeperClient::rearm_watches`] can set them again.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use zookeeper_client as zkc;

use crate::cluster::sync::lock;

use super::client::{
    CreateMode, Op, OpResult, Stat, WatchedEvent, WatchedEventType, ZkClient, ZkError, ZkFuture,
};
use super::watch_registry::{PendingWatch, WatchKind, WatchRegistry};

/// How long `close` waits for the session's CloseSession to go out.
const CLOSE_WAIT: Duration = Duration::from_secs(2);

/// A session on a ZooKeeper ensemble. `close` (or dropping it) ends the session.
#[derive(Debug)]
pub struct ZooKeeperClient {
    /// `None` once closed; every call then fails with `SessionExpired`.
    client: Mutex<Option<zkc::Client>>,
    session_id: i64,
    events_tx: UnboundedSender<WatchedEvent>,
    events_rx: Mutex<Option<UnboundedReceiver<WatchedEvent>>>,
    /// The session's armed watches, shared with a client that resumes it.
    watches: Arc<WatchRegistry>,
    /// The watch forwarders; `stop` ends those still waiting (on `close` or drop).
    tasks: TaskTracker,
    stop: CancellationToken,
}

impl Drop for ZooKeeperClient {
    fn drop(&mut self) {
        // A forwarder outliving its client would wait for an event of a session no one uses.
        self.stop.cancel();
    }
}

fn map_err(e: zkc::Error) -> ZkError {
    match e {
        zkc::Error::NoNode => ZkError::NoNode(String::new()),
        zkc::Error::NodeExists => ZkError::NodeExists(String::new()),
        zkc::Error::BadVersion => ZkError::BadVersion(String::new()),
        zkc::Error::NotEmpty => ZkError::NotEmpty(String::new()),
        zkc::Error::NoChildrenForEphemerals => ZkError::NoChildrenForEphemerals(String::new()),
        zkc::Error::SessionExpired | zkc::Error::ClientClosed => ZkError::SessionExpired,
        zkc::Error::ConnectionLoss | zkc::Error::NoHosts => ZkError::ConnectionLoss,
        zkc::Error::Timeout => ZkError::OperationTimeout,
        zkc::Error::BadArguments(why) => ZkError::BadArguments((*why).to_string()),
        other => ZkError::Io(other.to_string()),
    }
}

/// An operation's error. The crate fails every request in flight with the error that broke
/// its connection (an I/O error, or nothing heard within the connection timeout) while the
/// session lives on: that is the Java client's CONNECTIONLOSS, which callers retry once
/// connected again, as Kafka's `ZooKeeperClient` does. (Connecting reports these as they are.)
fn op_err(e: zkc::Error) -> ZkError {
    match e {
        zkc::Error::Custom(_) => ZkError::ConnectionLoss,
        other => map_err(other),
    }
}

/// Adds the path to the crate's path-less errors of an operation.
fn with_path(e: zkc::Error, path: &str) -> ZkError {
    match op_err(e) {
        ZkError::NoNode(_) => ZkError::NoNode(path.to_string()),
        ZkError::NodeExists(_) => ZkError::NodeExists(path.to_string()),
        ZkError::BadVersion(_) => ZkError::BadVersion(path.to_string()),
        ZkError::NotEmpty(_) => ZkError::NotEmpty(path.to_string()),
        ZkError::NoChildrenForEphemerals(_) => ZkError::NoChildrenForEphemerals(path.to_string()),
        other => other,
    }
}

fn stat(s: &zkc::Stat) -> Stat {
    Stat {
        czxid: s.czxid,
        mzxid: s.mzxid,
        ctime: s.ctime,
        mtime: s.mtime,
        version: s.version,
        cversion: s.cversion,
        aversion: s.aversion,
        ephemeral_owner: s.ephemeral_owner,
        data_length: s.data_length,
        num_children: s.num_children,
        pzxid: s.pzxid,
    }
}

fn options(mode: CreateMode) -> zkc::CreateOptions<'static> {
    let mode = match mode {
        CreateMode::Persistent => zkc::CreateMode::Persistent,
        CreateMode::Ephemeral => zkc::CreateMode::Ephemeral,
        CreateMode::PersistentSequential => zkc::CreateMode::PersistentSequential,
        CreateMode::EphemeralSequential => zkc::CreateMode::EphemeralSequential,
    };
    mode.with_acls(zkc::Acls::anyone_all())
}

/// `None` for -1 (any version), as the crate spells it.
fn version(v: i32) -> Option<i32> {
    (v != -1).then_some(v)
}

impl ZooKeeperClient {
    /// Connects to `connect` (`host:port[,host:port...][/chroot]`, Kafka's `zookeeper.connect`).
    pub async fn connect(connect: &str, session_timeout: Duration) -> Result<Self, ZkError> {
        let (events_tx, events_rx) = unbounded_channel();
        let mut client = Self::connect_forwarding(connect, session_timeout, events_tx).await?;
        client.events_rx = Mutex::new(Some(events_rx));
        Ok(client)
    }

    /// Connects a session whose watch events go to `events_tx` (so that successive sessions
    /// feed one receiver); `take_events` on it returns `None`.
    pub async fn connect_forwarding(
        connect: &str,
        session_timeout: Duration,
        events_tx: UnboundedSender<WatchedEvent>,
    ) -> Result<Self, ZkError> {
        Self::connect_session(
            connect,
            session_timeout,
            events_tx,
            Arc::new(WatchRegistry::default()),
            None,
        )
        .await
    }

    /// Connects to `connect`: a new session, or with `resume` the session it names (its id and
    /// password), whose armed watches `watches` holds. Watch events go to `events_tx`. Resuming
    /// a session the ensemble has expired fails with `SessionExpired`.
    pub async fn connect_session(
        connect: &str,
        session_timeout: Duration,
        events_tx: UnboundedSender<WatchedEvent>,
        watches: Arc<WatchRegistry>,
        resume: Option<zkc::SessionInfo>,
    ) -> Result<Self, ZkError> {
        let mut connector = zkc::Client::connector().with_session_timeout(session_timeout);
        if let Some(session) = resume {
            connector = connector.with_session(session);
        }
        let client = connector.connect(connect).await.map_err(map_err)?;
        Ok(ZooKeeperClient {
            session_id: client.session_id().0,
            client: Mutex::new(Some(client)),
            events_tx,
            events_rx: Mutex::new(None),
            watches,
            tasks: TaskTracker::new(),
            stop: CancellationToken::new(),
        })
    }

    /// Connects to the session `session` already names (its id and password): ZooKeeper moves
    /// the session to this connection. Closing the result ends that session for every client
    /// holding it, which is how tests force an expiry on another client.
    pub async fn reattach(
        connect: &str,
        session: zkc::SessionInfo,
        session_timeout: Duration,
    ) -> Result<Self, ZkError> {
        let (events_tx, events_rx) = unbounded_channel();
        let mut client = Self::connect_session(
            connect,
            session_timeout,
            events_tx,
            Arc::new(WatchRegistry::default()),
            Some(session),
        )
        .await?;
        client.events_rx = Mutex::new(Some(events_rx));
        Ok(client)
    }

    /// Arms `pending` (the watches of this session that a client before this one had armed)
    /// again, and sends the event each owes for a change made while none was armed (ZooKeeper's
    /// `SetWatches`). On an error the watches not armed yet go back to the registry.
    pub async fn rearm_watches(&self, pending: Vec<PendingWatch>) -> Result<(), ZkError> {
        let mut left = pending.into_iter();
        while let Some(watch) = left.next() {
            let now = match self.read_watching(watch.kind, &watch.path).await {
                Ok(now) => now,
                Err(e) => {
                    for w in std::iter::once(watch).chain(left) {
                        self.watches.armed(w.kind, &w.path, w.seen);
                    }
                    return Err(e);
                }
            };
            if let Some(event_type) = watch.change_since(now.as_ref()) {
                let _ = self.events_tx.send(WatchedEvent {
                    event_type,
                    path: watch.path,
                });
            }
        }
        Ok(())
    }

    /// The node's stat (`None` when missing) by the read that arms a watch of `kind`.
    async fn read_watching(&self, kind: WatchKind, path: &str) -> Result<Option<Stat>, ZkError> {
        let read = match kind {
            WatchKind::Data => self.get_data(path, true).await.map(|(_, st)| st),
            WatchKind::Children => self.get_children(path, true).await.map(|(_, st)| st),
            WatchKind::Exists => return self.exists(path, true).await,
        };
        match read {
            Ok(st) => Ok(Some(st)),
            Err(ZkError::NoNode(_)) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The session's id and password (what [`ZooKeeperClient::reattach`] takes); `None` once
    /// closed.
    pub fn session_info(&self) -> Option<zkc::SessionInfo> {
        self.client().ok().map(|c| c.session().clone())
    }

    /// The registry of this session's armed watches.
    pub fn watches(&self) -> &Arc<WatchRegistry> {
        &self.watches
    }

    /// A watcher of the crate's session states from now on; `None` once closed.
    pub fn state_watcher(&self) -> Option<zkc::StateWatcher> {
        self.client().ok().map(|c| c.state_watcher())
    }

    fn client(&self) -> Result<zkc::Client, ZkError> {
        let guard = lock(&self.client);
        guard.clone().ok_or(ZkError::SessionExpired)
    }

    /// Records the watch of `kind` on `path` (the node then as `seen`) and forwards its node
    /// event to the session's channel. A session event ends it unfired: the session is gone or
    /// moves to another client, which re-arms it from the registry.
    fn forward(
        &self,
        watcher: zkc::OneshotWatcher,
        kind: WatchKind,
        path: &str,
        seen: Option<Stat>,
    ) {
        self.watches.armed(kind, path, seen);
        let tx = self.events_tx.clone();
        let watches = Arc::clone(&self.watches);
        let armed_path = path.to_string();
        let stop = self.stop.clone();
        self.tasks.spawn(async move {
            let ev = tokio::select! {
                ev = watcher.changed() => ev,
                () = stop.cancelled() => return,
            };
            let event_type = match ev.event_type {
                zkc::EventType::NodeCreated => WatchedEventType::NodeCreated,
                zkc::EventType::NodeDeleted => WatchedEventType::NodeDeleted,
                zkc::EventType::NodeDataChanged => WatchedEventType::NodeDataChanged,
                zkc::EventType::NodeChildrenChanged => WatchedEventType::NodeChildrenChanged,
                zkc::EventType::Session => return,
            };
            watches.fired(kind, &armed_path);
            let _ = tx.send(WatchedEvent {
                event_type,
                path: ev.path,
            });
        });
    }
}

impl ZkClient for ZooKeeperClient {
    fn session_id(&self) -> i64 {
        self.session_id
    }

    fn take_events(&self) -> Option<UnboundedReceiver<WatchedEvent>> {
        lock(&self.events_rx).take()
    }

    fn create<'a>(
        &'a self,
        path: &'a str,
        data: &'a [u8],
        mode: CreateMode,
    ) -> ZkFuture<'a, (String, Stat)> {
        Box::pin(async move {
            let client = self.client()?;
            let (st, seq) = client
                .create(path, data, &options(mode))
                .await
                .map_err(|e| with_path(e, path))?;
            let actual = if mode.is_sequential() {
                format!("{path}{seq}")
            } else {
                path.to_string()
            };
            Ok((actual, stat(&st)))
        })
    }

    fn get_data<'a>(&'a self, path: &'a str, watch: bool) -> ZkFuture<'a, (Vec<u8>, Stat)> {
        Box::pin(async move {
            let client = self.client()?;
            if watch {
                let (data, st, w) = client
                    .get_and_watch_data(path)
                    .await
                    .map_err(|e| with_path(e, path))?;
                let st = stat(&st);
                self.forward(w, WatchKind::Data, path, Some(st));
                Ok((data, st))
            } else {
                let (data, st) = client
                    .get_data(path)
                    .await
                    .map_err(|e| with_path(e, path))?;
                Ok((data, stat(&st)))
            }
        })
    }

    fn set_data<'a>(&'a self, path: &'a str, data: &'a [u8], v: i32) -> ZkFuture<'a, Stat> {
        Box::pin(async move {
            let client = self.client()?;
            let st = client
                .set_data(path, data, version(v))
                .await
                .map_err(|e| with_path(e, path))?;
            Ok(stat(&st))
        })
    }

    fn delete<'a>(&'a self, path: &'a str, v: i32) -> ZkFuture<'a, ()> {
        Box::pin(async move {
            let client = self.client()?;
            client
                .delete(path, version(v))
                .await
                .map_err(|e| with_path(e, path))
        })
    }

    fn get_children<'a>(&'a self, path: &'a str, watch: bool) -> ZkFuture<'a, (Vec<String>, Stat)> {
        Box::pin(async move {
            let client = self.client()?;
            let (mut kids, st) = if watch {
                let (kids, st, w) = client
                    .get_and_watch_children(path)
                    .await
                    .map_err(|e| with_path(e, path))?;
                self.forward(w, WatchKind::Children, path, Some(stat(&st)));
                (kids, st)
            } else {
                client
                    .get_children(path)
                    .await
                    .map_err(|e| with_path(e, path))?
            };
            kids.sort();
            Ok((kids, stat(&st)))
        })
    }

    fn exists<'a>(&'a self, path: &'a str, watch: bool) -> ZkFuture<'a, Option<Stat>> {
        Box::pin(async move {
            let client = self.client()?;
            let st = if watch {
                let (st, w) = client
                    .check_and_watch_stat(path)
                    .await
                    .map_err(|e| with_path(e, path))?;
                self.forward(w, WatchKind::Exists, path, st.as_ref().map(stat));
                st
            } else {
                client
                    .check_stat(path)
                    .await
                    .map_err(|e| with_path(e, path))?
            };
            Ok(st.as_ref().map(stat))
        })
    }

    fn multi(&self, ops: Vec<Op>) -> ZkFuture<'_, Vec<OpResult>> {
        Box::pin(async move {
            let client = self.client()?;
            let mut writer = client.new_multi_writer();
            for op in &ops {
                let added = match op {
                    Op::Check { path, version: v } => writer.add_check_version(path, *v),
                    Op::Create { path, data, mode } => {
                        writer.add_create(path, data, &options(*mode))
                    }
                    Op::SetData {
                        path,
                        data,
                        version: v,
                    } => writer.add_set_data(path, data, version(*v)),
                    Op::Delete { path, version: v } => writer.add_delete(path, version(*v)),
                };
                added.map_err(op_err)?;
            }
            let results = match writer.commit().await {
                Ok(results) => results,
                Err(zkc::MultiWriteError::OperationFailed { index, source }) => {
                    let path = ops.get(index).map_or("", |op| match op {
                        Op::Check { path, .. }
                        | Op::Create { path, .. }
                        | Op::SetData { path, .. }
                        | Op::Delete { path, .. } => path.as_str(),
                    });
                    return Err(with_path(source, path));
                }
                Err(zkc::MultiWriteError::RequestFailed { source }) => return Err(op_err(source)),
            };
            results
                .into_iter()
                .map(|r| match r {
                    zkc::MultiWriteResult::Check => Ok(OpResult::Check),
                    zkc::MultiWriteResult::Delete => Ok(OpResult::Delete),
                    // The crate reports a stat the server did not send as all -1.
                    zkc::MultiWriteResult::Create { path, stat: st } => Ok(OpResult::Create {
                        path,
                        stat: (st.czxid >= 0).then(|| stat(&st)),
                    }),
                    zkc::MultiWriteResult::SetData { stat: st } => {
                        Ok(OpResult::SetData { stat: stat(&st) })
                    }
                    #[allow(unreachable_patterns)]
                    _ => Err(ZkError::Other(-1)),
                })
                .collect()
        })
    }

    fn close(&self) -> ZkFuture<'_, ()> {
        Box::pin(async move {
            // The crate closes the session when the last clone of the client is dropped, from its
            // own task. Waiting for that task to report the session closed puts CloseSession on
            // the wire before a stopping process exits, so the server deletes the ephemerals
            // (the broker's registration) now rather than after the session timeout. A clone
            // still held by a call in flight delays it; the wait is bounded.
            let Some(client) = lock(&self.client).take() else {
                return Ok(());
            };
            let mut states = client.state_watcher();
            drop(client);
            let closed = async {
                while !states.state().is_terminated() {
                    states.changed().await;
                }
            };
            if tokio::time::timeout(CLOSE_WAIT, closed).await.is_err() {
                tracing::debug!("ZooKeeper session not closed within {CLOSE_WAIT:?}");
            }
            // The session's watches fired or died with it; forwarders still waiting end now.
            self.stop.cancel();
            self.tasks.close();
            self.tasks.wait().await;
            Ok(())
        })
    }
}
