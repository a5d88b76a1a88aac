//! `ZkSession`: Kafka's `ZooKeeperClient` over a real ensemble, a `ZkClient` that survives the
//! expiry of its session. It follows the current session's states and reports Connected,
//! Disconnected and Expired to subscribers.
//!
//! The crate gives a session up when it has reached no server for about 1.4 session timeouts,
//! although the ensemble may still hold it: one that lost quorum for longer than that and got it
//! back gives every session a fresh timeout. So, as Kafka's client does, a session the crate
//! gave up is resumed (its id and password on a new connection, its unfired watches armed
//! again with the events they owe) until the ensemble answers that it expired; meanwhile it is
//! Disconnected, and calls wait. Only an expiry the ensemble confirms is an expiry: then it
//! runs the registered
//! `StateChangeHandler`s' `before_initializing_session`, builds a new session (retrying with
//! backoff until one connects), then runs their `after_initializing_session`, in registration
//! order (Kafka's `reinitialize`). Calls made meanwhile wait for the new session, as Kafka's
//! `initializationLock` makes them; a call that loses its connection waits until the session is
//! connected again and is retried (Kafka's `retryRequestsUntilConnected`), so a create may then
//! find its own node (`checked_ephemeral` treats that as success). Watch events of every session
//! go to the one receiver `take_events` hands out.
//!
//! Also here: `ensure_chroot`, the chroot creation Kafka's `KafkaZkClient.apply` does with a
//! chroot-less client before connecting with the chroot.

use crate::cluster::sync::lock;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio::sync::{RwLock, broadcast, watch};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use zookeeper_client as zkc;

use super::client::{
    CreateMode, Op, OpResult, SessionState, Stat, StateChangeHandler, WatchedEvent, ZkClient,
    ZkError, ZkFuture,
};
use super::metrics::ZooKeeperClientMetrics;
use super::recipes::create_recursive;
use super::watch_registry::WatchRegistry;
use super::zookeeper::ZooKeeperClient;

/// The first and the largest pause between attempts to build a new session after an expiry.
/// Kafka retries every second; starting lower re-registers sooner once ZooKeeper is back.
const RETRY_BACKOFF_MIN: Duration = Duration::from_millis(100);
const RETRY_BACKOFF_MAX: Duration = Duration::from_secs(1);

/// A ZooKeeper client whose session is rebuilt after an expiry. Cheap to share as
/// `Arc<dyn ZkClient>`; `close` ends it for good.
#[derive(Debug)]
pub struct ZkSession {
    inner: Arc<Inner>,
}

struct Inner {
    connect: String,
    session_timeout: Duration,
    /// The current session. Written only while a new session is built, so calls wait for it.
    current: RwLock<Arc<ZooKeeperClient>>,
    /// Mirrors the current session's id so that `session_id()` needs no lock.
    session_id: AtomicI64,
    /// Every state change, for subscribers; `state` holds the latest, for waiting on it.
    states: broadcast::Sender<SessionState>,
    state: watch::Sender<SessionState>,
    handlers: Mutex<Vec<Arc<dyn StateChangeHandler>>>,
    events_tx: UnboundedSender<WatchedEvent>,
    events_rx: Mutex<Option<UnboundedReceiver<WatchedEvent>>>,
    /// The current session's armed watches, carried to a client that resumes it.
    watches: Arc<WatchRegistry>,
    closed: AtomicBool,
    /// The task that follows the sessions (`follow_sessions`); `stop` ends it, on `close` or
    /// when the `ZkSession` is dropped.
    tasks: TaskTracker,
    stop: CancellationToken,
    /// Each request's latency and each state published (the SessionExpireListener meters).
    metrics: Arc<ZooKeeperClientMetrics>,
}

impl std::fmt::Debug for Inner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ZkSession")
            .field("connect", &self.connect)
            .field("session_id", &self.session_id.load(Ordering::Relaxed))
            .field("state", &*self.state.borrow())
            .finish_non_exhaustive()
    }
}

/// Creates the chroot of `connect` (`host:port,.../chroot`) when it is missing, over a
/// chroot-less session that is closed again; a connect string without a chroot is left alone.
pub async fn ensure_chroot(
    connect: &str,
    session_timeout: Duration,
    connection_timeout: Duration,
) -> Result<(), ZkError> {
    let Some(at) = connect.find('/') else {
        return Ok(());
    };
    let (hosts, chroot) = connect.split_at(at);
    if chroot == "/" {
        return Ok(());
    }
    let client = connect_within(hosts, session_timeout, connection_timeout, None).await?;
    let made = match client.exists(chroot, false).await {
        Ok(Some(_)) => Ok(()),
        Ok(None) => match create_recursive(&client, chroot, b"").await {
            Ok(()) | Err(ZkError::NodeExists(_)) => Ok(()),
            Err(e) => Err(e),
        },
        Err(e) => Err(e),
    };
    let _ = client.close().await;
    made
}

/// One session, bounded by the connection timeout (the crate alone would keep trying for the
/// session timeout), the error naming the connect string.
async fn connect_within(
    connect: &str,
    session_timeout: Duration,
    connection_timeout: Duration,
    events_tx: Option<UnboundedSender<WatchedEvent>>,
) -> Result<ZooKeeperClient, ZkError> {
    let attempt = async {
        match events_tx {
            Some(tx) => ZooKeeperClient::connect_forwarding(connect, session_timeout, tx).await,
            None => ZooKeeperClient::connect(connect, session_timeout).await,
        }
    };
    let timed_out = || ZkError::ConnectionTimeout {
        connect: connect.to_string(),
        timeout_ms: u64::try_from(connection_timeout.as_millis()).unwrap_or(u64::MAX),
    };
    match tokio::time::timeout(connection_timeout, attempt).await {
        Ok(Ok(client)) => Ok(client),
        // The crate gives up on its own after about the session timeout.
        Ok(Err(ZkError::OperationTimeout | ZkError::ConnectionLoss)) => Err(timed_out()),
        Ok(Err(e)) => Err(e),
        Err(_) => Err(timed_out()),
    }
}

impl ZkSession {
    /// Creates the chroot if missing, then connects to `connect` (Kafka's `zookeeper.connect`),
    /// waiting at most `connection_timeout` for the first session.
    pub async fn connect(
        connect: &str,
        session_timeout: Duration,
        connection_timeout: Duration,
    ) -> Result<ZkSession, ZkError> {
        ensure_chroot(connect, session_timeout, connection_timeout).await?;
        let (events_tx, events_rx) = unbounded_channel();
        let first = connect_within(
            connect,
            session_timeout,
            connection_timeout,
            Some(events_tx.clone()),
        )
        .await?;
        let watches = Arc::clone(first.watches());
        let (states, _) = broadcast::channel(64);
        let (state, _) = watch::channel(SessionState::Connected);
        let watcher = first.state_watcher();
        let inner = Arc::new(Inner {
            connect: connect.to_string(),
            session_timeout,
            session_id: AtomicI64::new(first.session_id()),
            current: RwLock::new(Arc::new(first)),
            states,
            state,
            handlers: Mutex::new(Vec::new()),
            events_tx,
            events_rx: Mutex::new(Some(events_rx)),
            watches,
            closed: AtomicBool::new(false),
            tasks: TaskTracker::new(),
            stop: CancellationToken::new(),
            metrics: Arc::default(),
        });
        // The first session's SyncConnected, which Kafka's watcher counts too.
        inner.metrics.sync_connects.mark(1);
        if let Some(watcher) = watcher {
            let stop = inner.stop.clone();
            let follow = follow_sessions(Arc::downgrade(&inner), watcher);
            inner.tasks.spawn(async move {
                tokio::select! {
                    () = follow => {}
                    () = stop.cancelled() => {}
                }
            });
        }
        Ok(ZkSession { inner })
    }

    /// The client's metrics (ZooKeeperClientMetrics, SessionExpireListener), for the server
    /// to register.
    pub fn metrics(&self) -> Arc<dyn crate::metrics::MetricsSource> {
        Arc::clone(&self.inner.metrics) as Arc<dyn crate::metrics::MetricsSource>
    }

    /// The latest state.
    pub fn state(&self) -> SessionState {
        *self.inner.state.borrow()
    }

    /// Waits until the session is connected; `SessionExpired` once closed.
    pub async fn wait_until_connected(&self) -> Result<(), ZkError> {
        self.inner.wait_until_connected().await
    }

    /// The current session's id and password, for tests that force its expiry by closing it
    /// from a second client ([`ZooKeeperClient::reattach`]).
    pub async fn session_info(&self) -> Option<zkc::SessionInfo> {
        self.inner.current.read().await.session_info()
    }
}

impl Drop for ZkSession {
    fn drop(&mut self) {
        self.inner.stop.cancel();
    }
}

impl Inner {
    fn publish(&self, state: SessionState) {
        match state {
            SessionState::Connected => self.metrics.sync_connects.mark(1),
            SessionState::Disconnected => self.metrics.disconnects.mark(1),
            SessionState::Expired => self.metrics.expires.mark(1),
            SessionState::Closed => {}
        }
        self.state.send_replace(state);
        // No subscriber is not an error.
        let _ = self.states.send(state);
    }

    async fn wait_until_connected(&self) -> Result<(), ZkError> {
        let mut rx = self.state.subscribe();
        let state = rx
            .wait_for(|s| matches!(s, SessionState::Connected | SessionState::Closed))
            .await
            .map(|s| *s)
            .map_err(|_| ZkError::SessionExpired)?;
        match state {
            SessionState::Connected => Ok(()),
            _ => Err(ZkError::SessionExpired),
        }
    }

    /// Whether the session is being resumed: a call that found it gone waits for it.
    fn resuming(&self) -> bool {
        !self.closed.load(Ordering::Acquire) && *self.state.borrow() == SessionState::Disconnected
    }

    /// The session to use now, waiting while a new one is built.
    async fn current(&self) -> Result<Arc<ZooKeeperClient>, ZkError> {
        if self.closed.load(Ordering::Acquire) {
            return Err(ZkError::SessionExpired);
        }
        Ok(self.current.read().await.clone())
    }

    fn handlers(&self) -> Vec<Arc<dyn StateChangeHandler>> {
        lock(&self.handlers).clone()
    }
}

/// Follows the current session's states for as long as the `ZkSession` lives, and rebuilds the
/// session after each expiry.
async fn follow_sessions(inner: Weak<Inner>, mut watcher: zkc::StateWatcher) {
    let mut reported = SessionState::Connected;
    loop {
        let crate_state = watcher.changed().await;
        let Some(strong) = inner.upgrade() else {
            return;
        };
        if strong.closed.load(Ordering::Acquire) {
            return;
        }
        match crate_state {
            zkc::SessionState::AuthFailed => strong.metrics.auth_failures.mark(1),
            zkc::SessionState::ConnectedReadOnly => strong.metrics.read_only_connects.mark(1),
            _ => {}
        }
        let state = match crate_state {
            zkc::SessionState::SyncConnected | zkc::SessionState::ConnectedReadOnly => {
                SessionState::Connected
            }
            zkc::SessionState::Disconnected => SessionState::Disconnected,
            zkc::SessionState::Expired => SessionState::Expired,
            // Only `close` ends a session on purpose; anything else terminal (a failed
            // authentication) leaves the session unusable, which is an expiry to us.
            zkc::SessionState::Closed | zkc::SessionState::AuthFailed => SessionState::Expired,
        };
        if state == reported {
            continue;
        }
        if state != SessionState::Expired {
            strong.publish(state);
            reported = state;
            continue;
        }
        // The crate's watch channel keeps only the latest state, but an expiry is learnt only
        // on reconnecting, so a Disconnected it coalesced away did happen: report it first.
        if reported == SessionState::Connected {
            strong.publish(SessionState::Disconnected);
        }
        drop(strong);
        match resume(&inner).await {
            Resumption::Resumed(next) => {
                watcher = next;
                reported = SessionState::Connected;
                continue;
            }
            Resumption::Closed => return,
            Resumption::Expired => {}
        }
        let Some(strong) = inner.upgrade() else {
            return;
        };
        strong.publish(SessionState::Expired);
        tracing::info!(connect = %strong.connect, "ZooKeeper session expired; building a new one");
        strong.watches.clear();
        drop(strong);
        match reinitialize(&inner).await {
            Some(next) => {
                watcher = next;
                reported = SessionState::Connected;
            }
            None => return,
        }
    }
}

/// How an attempt to resume a session the crate gave up ended.
enum Resumption {
    /// The ensemble still held it: it is current again, followed by this watcher.
    Resumed(zkc::StateWatcher),
    /// The ensemble answered that it expired.
    Expired,
    /// The `ZkSession` was closed or dropped meanwhile.
    Closed,
}

/// Connects to the current session again (its id and password) until the ensemble takes it
/// back or answers that it expired, retrying with backoff while no server answers; a session
/// taken back gets its unfired watches armed again.
async fn resume(inner: &Weak<Inner>) -> Resumption {
    let mut backoff = RETRY_BACKOFF_MIN;
    let mut attempts = 0u32;
    loop {
        let Some(strong) = inner.upgrade() else {
            return Resumption::Closed;
        };
        if strong.closed.load(Ordering::Acquire) {
            return Resumption::Closed;
        }
        let Some(session) = strong.current.read().await.session_info() else {
            return Resumption::Expired;
        };
        let attempt = tokio::time::timeout(
            strong.session_timeout,
            ZooKeeperClient::connect_session(
                &strong.connect,
                strong.session_timeout,
                strong.events_tx.clone(),
                Arc::clone(&strong.watches),
                Some(session),
            ),
        )
        .await;
        attempts += 1;
        match attempt {
            Ok(Ok(client)) => {
                let Some(watcher) = client.state_watcher() else {
                    continue;
                };
                let client = Arc::new(client);
                // The client replaced gave the session up and holds no connection: dropping
                // it closes nothing.
                *strong.current.write().await = Arc::clone(&client);
                let pending = strong.watches.take_all();
                let rearmed = pending.len();
                if let Err(error) = client.rearm_watches(pending).await {
                    // The connection went again; the crate reports it, and what is not armed
                    // yet is back in the registry.
                    tracing::warn!(%error, "cannot arm the resumed session's watches yet");
                }
                tracing::info!(
                    connect = %strong.connect,
                    session_id = format_args!("{:#x}", client.session_id()),
                    attempts, rearmed, "resumed the ZooKeeper session"
                );
                strong.publish(SessionState::Connected);
                return Resumption::Resumed(watcher);
            }
            Ok(Err(ZkError::SessionExpired)) => return Resumption::Expired,
            Ok(Err(error)) => {
                if attempts == 1 {
                    tracing::info!(connect = %strong.connect, %error,
                        "ZooKeeper unreachable past the session timeout; resuming the session until the ensemble answers");
                }
            }
            Err(_) => {}
        }
        drop(strong);
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(RETRY_BACKOFF_MAX);
    }
}

/// Kafka's `reinitialize`: the handlers' before-hooks, a new session (retried with backoff until
/// it connects), the handlers' after-hooks. `None` when the `ZkSession` was closed or dropped.
async fn reinitialize(inner: &Weak<Inner>) -> Option<zkc::StateWatcher> {
    let handlers = inner.upgrade()?.handlers();
    for handler in &handlers {
        handler.before_initializing_session().await;
    }
    drop(handlers);
    let mut backoff = RETRY_BACKOFF_MIN;
    let watcher = loop {
        let strong = inner.upgrade()?;
        if strong.closed.load(Ordering::Acquire) {
            return None;
        }
        let mut current = strong.current.write().await;
        let attempt = ZooKeeperClient::connect_session(
            &strong.connect,
            strong.session_timeout,
            strong.events_tx.clone(),
            Arc::clone(&strong.watches),
            None,
        )
        .await;
        match attempt {
            Ok(client) => {
                let Some(watcher) = client.state_watcher() else {
                    continue;
                };
                strong
                    .session_id
                    .store(client.session_id(), Ordering::Release);
                let old = std::mem::replace(&mut *current, Arc::new(client));
                drop(current);
                let _ = old.close().await;
                tracing::info!(
                    connect = %strong.connect,
                    session_id = format_args!("{:#x}", strong.session_id.load(Ordering::Acquire)),
                    "new ZooKeeper session"
                );
                strong.publish(SessionState::Connected);
                break watcher;
            }
            Err(e) => {
                drop(current);
                tracing::info!(connect = %strong.connect, error = %e,
                    "cannot build a new ZooKeeper session yet; retrying");
                drop(strong);
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(RETRY_BACKOFF_MAX);
            }
        }
    };
    let handlers = inner.upgrade()?.handlers();
    for handler in &handlers {
        handler.after_initializing_session().await;
    }
    Some(watcher)
}

/// Runs one call on the current session, retrying it after a connection loss once the session
/// is connected again (on the same session, or a new one if it expired meanwhile).
macro_rules! retrying {
    ($self:ident, |$c:ident| $call:expr) => {
        loop {
            let $c = $self.inner.current().await?;
            let started = std::time::Instant::now();
            let result = $call.await;
            $self.inner.metrics.record_request(started.elapsed());
            match result {
                Err(ZkError::ConnectionLoss) => $self.inner.wait_until_connected().await?,
                Err(ZkError::SessionExpired) if $self.inner.resuming() => {
                    $self.inner.wait_until_connected().await?
                }
                result => break result,
            }
        }
    };
}

impl ZkClient for ZkSession {
    fn session_id(&self) -> i64 {
        self.inner.session_id.load(Ordering::Acquire)
    }

    fn take_events(&self) -> Option<UnboundedReceiver<WatchedEvent>> {
        lock(&self.inner.events_rx).take()
    }

    fn create<'a>(
        &'a self,
        path: &'a str,
        data: &'a [u8],
        mode: CreateMode,
    ) -> ZkFuture<'a, (String, Stat)> {
        Box::pin(async move { retrying!(self, |c| c.create(path, data, mode)) })
    }

    fn get_data<'a>(&'a self, path: &'a str, watch: bool) -> ZkFuture<'a, (Vec<u8>, Stat)> {
        Box::pin(async move { retrying!(self, |c| c.get_data(path, watch)) })
    }

    fn set_data<'a>(&'a self, path: &'a str, data: &'a [u8], v: i32) -> ZkFuture<'a, Stat> {
        Box::pin(async move { retrying!(self, |c| c.set_data(path, data, v)) })
    }

    fn delete<'a>(&'a self, path: &'a str, v: i32) -> ZkFuture<'a, ()> {
        Box::pin(async move { retrying!(self, |c| c.delete(path, v)) })
    }

    fn get_children<'a>(&'a self, path: &'a str, watch: bool) -> ZkFuture<'a, (Vec<String>, Stat)> {
        Box::pin(async move { retrying!(self, |c| c.get_children(path, watch)) })
    }

    fn exists<'a>(&'a self, path: &'a str, watch: bool) -> ZkFuture<'a, Option<Stat>> {
        Box::pin(async move { retrying!(self, |c| c.exists(path, watch)) })
    }

    fn multi(&self, ops: Vec<Op>) -> ZkFuture<'_, Vec<OpResult>> {
        Box::pin(async move { retrying!(self, |c| c.multi(ops.clone())) })
    }

    fn close(&self) -> ZkFuture<'_, ()> {
        Box::pin(async move {
            if self.inner.closed.swap(true, Ordering::AcqRel) {
                return Ok(());
            }
            self.inner.publish(SessionState::Closed);
            // A session being resumed or rebuilt holds `current` until it connects: stop that
            // first. The task never closes the session itself, so waiting for it cannot hang.
            self.inner.stop.cancel();
            self.inner.tasks.close();
            self.inner.tasks.wait().await;
            let current = self.inner.current.read().await.clone();
            current.close().await
        })
    }

    fn subscribe_states(&self) -> Option<broadcast::Receiver<SessionState>> {
        Some(self.inner.states.subscribe())
    }

    fn register_state_change_handler(&self, handler: Arc<dyn StateChangeHandler>) {
        let mut handlers = lock(&self.inner.handlers);
        match handlers.iter_mut().find(|h| h.name() == handler.name()) {
            Some(slot) => *slot = handler,
            None => handlers.push(handler),
        }
    }

    fn unregister_state_change_handler(&self, name: &str) {
        lock(&self.inner.handlers).retain(|h| h.name() != name);
    }
}
