//! Kafka's `ZkNodeChangeNotificationListener`: follows a path of sequential change
//! notifications (`/config/changes/config_change_N`, `/kafka-acl-changes/acl_changes_N`, ...)
//! that any broker or tool may write, and hands each new one's data, in sequence order and once,
//! to a [`NotificationHandler`].
//!
//! One task per listener, woken by the child watch on the path (through the `WatchDispatcher`)
//! and once at start. Each pass lists the children (re-arming the watch), takes those whose
//! sequence number is above the last one processed, in sequence order, reads each and hands its
//! bytes to the handler; then every notification older than 15 minutes (`changeExpirationMs`)
//! is deleted, by whichever listener sees it first. A notification that vanished before it was
//! read (purged by another broker) is passed over.
//!
//! A store error (from the listing, a read, a purge, or the handler) ends the pass without
//! moving past the notification it was at, and the pass is retried after a second; a missing
//! path is such an error, retried until it exists. After a session expiry (a
//! `StateChangeHandler` named `change-notification-<path>`, as Kafka's) the next pass first
//! calls the handler's [`NotificationHandler::reload_all`], since notifications may have been
//! purged while this broker was away, and then reads the notifications as usual, which re-arms
//! the watch on the new session.
//!
//! Lock order: none held across an await; handlers take their own components' locks.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::client::{HandlerFuture, StateChangeHandler, ZkClient, ZkError};
use super::watch_dispatcher::{WatchDispatcher, ZNodeChildChangeHandler};

/// Kafka's default `changeExpirationMs`: 15 minutes.
pub(crate) const CHANGE_EXPIRATION_MS: i64 = 15 * 60 * 1000;

/// The pause before a pass that a store error ended is tried again.
const RETRY_BACKOFF: Duration = Duration::from_secs(1);

/// What a handler's calls return: `Err` is a store error, after which the same notification
/// (or the reload) is tried again.
pub(crate) type NotificationFuture<'a> =
    Pin<Box<dyn Future<Output = Result<(), ZkError>> + Send + 'a>>;

/// Kafka's `NotificationHandler`, plus the reload after a new session.
pub(crate) trait NotificationHandler: Send + Sync {
    /// One notification's data. Unreadable data is the handler's to log and pass over; only
    /// store errors are returned.
    fn process_notification<'a>(&'a self, notification: &'a [u8]) -> NotificationFuture<'a>;

    /// Re-reads everything the notifications would name, after a session expiry. By default
    /// nothing.
    fn reload_all(&self) -> NotificationFuture<'_> {
        Box::pin(async { Ok(()) })
    }
}

/// The sequence number of a notification's name after `prefix`:
/// `config_change_0000000042` → 42.
pub(crate) fn change_number(prefix: &str, name: &str) -> Option<i64> {
    name.strip_prefix(prefix)?.parse().ok()
}

struct Inner {
    zk: Arc<dyn ZkClient>,
    seq_node_root: &'static str,
    seq_node_prefix: &'static str,
    handler: Arc<dyn NotificationHandler>,
    wake: Notify,
    /// Set by the state change handler: the next pass reloads everything first.
    reload_all: AtomicBool,
    now_ms: Arc<dyn Fn() -> i64 + Send + Sync>,
    session_handler_name: String,
}

/// A started listener; dropping it does not stop the task (the `stop` token does).
pub(crate) struct ZkNodeChangeNotificationListener {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for ZkNodeChangeNotificationListener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ZkNodeChangeNotificationListener")
            .field("seq_node_root", &self.inner.seq_node_root)
            .finish_non_exhaustive()
    }
}

impl ZkNodeChangeNotificationListener {
    /// Kafka's `init`: registers the child watch handler on `watches` and the state change
    /// handler on its client, and starts the task (tracked by `tasks`, ended by `stop`), which
    /// makes a first pass at once. Notifications are the children of `seq_node_root` named
    /// `seq_node_prefix` and a number; `now_ms` is the clock their ages are measured with.
    pub(crate) fn start(
        watches: &WatchDispatcher,
        seq_node_root: &'static str,
        seq_node_prefix: &'static str,
        handler: Arc<dyn NotificationHandler>,
        now_ms: impl Fn() -> i64 + Send + Sync + 'static,
        tasks: &TaskTracker,
        stop: CancellationToken,
    ) -> ZkNodeChangeNotificationListener {
        let zk = Arc::clone(watches.client());
        let inner = Arc::new(Inner {
            zk: Arc::clone(&zk),
            seq_node_root,
            seq_node_prefix,
            handler,
            wake: Notify::new(),
            reload_all: AtomicBool::new(false),
            now_ms: Arc::new(now_ms),
            session_handler_name: format!("change-notification-{seq_node_root}"),
        });
        watches.register_znode_child_change_handler(Arc::new(ChangesWatch(Arc::clone(&inner))));
        zk.register_state_change_handler(Arc::new(NewSession(Arc::clone(&inner))));
        tasks.spawn(run(Arc::clone(&inner), stop));
        ZkNodeChangeNotificationListener { inner }
    }

    /// Kafka's `addChangeNotification`: asks for a pass now, as a fired watch does; the
    /// tests' way to force a pass.
    #[cfg(test)]
    pub(crate) fn wake(&self) {
        self.inner.wake.notify_one();
    }

    /// What the state change handler does after a new session: the next pass reloads
    /// everything first. The tests' way to stand in for a session expiry.
    #[cfg(test)]
    pub(crate) fn after_new_session(&self) {
        after_new_session(&self.inner);
    }
}

/// The child watch on the notifications' path.
struct ChangesWatch(Arc<Inner>);

impl ZNodeChildChangeHandler for ChangesWatch {
    fn path(&self) -> &str {
        self.0.seq_node_root
    }
    fn handle_child_change(&self) {
        self.0.wake.notify_one();
    }
}

/// Kafka's `ZkStateChangeHandler` of the listener.
struct NewSession(Arc<Inner>);

impl StateChangeHandler for NewSession {
    fn name(&self) -> &str {
        &self.0.session_handler_name
    }
    fn after_initializing_session(&self) -> HandlerFuture<'_> {
        after_new_session(&self.0);
        Box::pin(async {})
    }
}

fn after_new_session(inner: &Inner) {
    inner.reload_all.store(true, Ordering::Release);
    inner.wake.notify_one();
}

async fn run(inner: Arc<Inner>, stop: CancellationToken) {
    let mut last_executed_change = -1;
    loop {
        let pass = async {
            if inner.reload_all.swap(false, Ordering::AcqRel)
                && let Err(err) = inner.handler.reload_all().await
            {
                inner.reload_all.store(true, Ordering::Release);
                return Err(err);
            }
            process_notifications(&inner, &mut last_executed_change).await
        };
        let result = tokio::select! {
            _ = stop.cancelled() => return,
            result = pass => result,
        };
        if let Err(err) = result {
            tracing::warn!(
                path = inner.seq_node_root,
                %err,
                "processing change notifications; trying again"
            );
            tokio::select! {
                _ = stop.cancelled() => return,
                () = tokio::time::sleep(RETRY_BACKOFF) => {}
            }
            continue;
        }
        tokio::select! {
            _ = stop.cancelled() => return,
            () = inner.wake.notified() => {}
        }
    }
}

/// Kafka's `processNotifications`: the new notifications in order, then the purge.
async fn process_notifications(
    inner: &Inner,
    last_executed_change: &mut i64,
) -> Result<(), ZkError> {
    let (mut names, _) = inner.zk.get_children(inner.seq_node_root, true).await?;
    let now = (inner.now_ms)();
    let number = |name: &str| change_number(inner.seq_node_prefix, name);
    names.retain(|n| number(n).is_some());
    names.sort_unstable_by_key(|n| number(n));
    let mut path = String::with_capacity(inner.seq_node_root.len() + 1 + 32);
    for name in &names {
        let Some(change_id) = number(name) else {
            continue;
        };
        if change_id <= *last_executed_change {
            continue;
        }
        notification_path(&mut path, inner.seq_node_root, name);
        match inner.zk.get_data(&path, false).await {
            Ok((data, _)) => inner.handler.process_notification(&data).await?,
            // Purged by another broker meanwhile; what it named is re-read at the next one.
            Err(ZkError::NoNode(_)) => {
                tracing::warn!(path, "change notification vanished before it was read");
            }
            Err(e) => return Err(e),
        }
        *last_executed_change = change_id;
    }
    for name in &names {
        notification_path(&mut path, inner.seq_node_root, name);
        purge_if_obsolete(inner, &path, now).await?;
    }
    Ok(())
}

fn notification_path(path: &mut String, root: &str, name: &str) {
    path.clear();
    path.push_str(root);
    path.push('/');
    path.push_str(name);
}

/// Kafka's `purgeObsoleteNotifications` for one notification.
async fn purge_if_obsolete(inner: &Inner, path: &str, now: i64) -> Result<(), ZkError> {
    let Some(stat) = inner.zk.exists(path, false).await? else {
        return Ok(());
    };
    if now - stat.ctime > CHANGE_EXPIRATION_MS {
        tracing::debug!(path, "purging change notification");
        match inner.zk.delete(path, -1).await {
            Ok(()) | Err(ZkError::NoNode(_)) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};
    use tokio::time::timeout;

    use super::*;
    use crate::zk::recipes::create_recursive;
    use crate::zk::{CreateMode, EmbeddedStore};

    const ROOT: &str = "/changes";
    const PREFIX: &str = "change_";
    const WAIT: Duration = Duration::from_secs(10);

    /// Reports each notification's data and each reload; the first `fail` notifications fail
    /// as a store error would.
    struct Recorder {
        tx: UnboundedSender<String>,
        fail: Mutex<u32>,
    }

    impl NotificationHandler for Recorder {
        fn process_notification<'a>(&'a self, data: &'a [u8]) -> NotificationFuture<'a> {
            Box::pin(async move {
                {
                    let mut fail = crate::cluster::sync::lock(&self.fail);
                    if *fail > 0 {
                        *fail -= 1;
                        return Err(ZkError::ConnectionLoss);
                    }
                }
                let _ = self.tx.send(String::from_utf8_lossy(data).into_owned());
                Ok(())
            })
        }
        fn reload_all(&self) -> NotificationFuture<'_> {
            let _ = self.tx.send("reload".into());
            Box::pin(async { Ok(()) })
        }
    }

    #[test]
    fn change_numbers_follow_the_prefix() {
        assert_eq!(
            change_number("acl_changes_", "acl_changes_0000000042"),
            Some(42)
        );
        assert_eq!(change_number("config_change_", "acl_changes_1"), None);
        assert_eq!(change_number("config_change_", "config_change_x"), None);
    }

    #[tokio::test]
    async fn notifications_are_handed_over_in_order_once_and_a_failure_is_retried() {
        let store = EmbeddedStore::in_memory();
        let zk: Arc<dyn ZkClient> = Arc::new(store.session());
        create_recursive(zk.as_ref(), ROOT, b"").await.unwrap();
        let (tasks, stop) = (TaskTracker::new(), CancellationToken::new());
        let watches = WatchDispatcher::start(Arc::clone(&zk), &tasks, stop.clone()).unwrap();
        let other = store.session();
        let seq = format!("{ROOT}/{PREFIX}");
        other
            .create(&seq, b"early", CreateMode::PersistentSequential)
            .await
            .unwrap();
        let (tx, mut rx) = unbounded_channel();
        let listener = ZkNodeChangeNotificationListener::start(
            &watches,
            ROOT,
            PREFIX,
            Arc::new(Recorder {
                tx,
                fail: Mutex::new(1),
            }),
            || 0,
            &tasks,
            stop.clone(),
        );
        let mut next = async || timeout(WAIT, rx.recv()).await.unwrap().unwrap();
        // The first try failed; the retry hands it over.
        assert_eq!(next().await, "early");
        for data in ["a", "b"] {
            other
                .create(&seq, data.as_bytes(), CreateMode::PersistentSequential)
                .await
                .unwrap();
        }
        assert_eq!(next().await, "a");
        assert_eq!(next().await, "b");
        listener.after_new_session();
        assert_eq!(next().await, "reload");
        other
            .create(&seq, b"c", CreateMode::PersistentSequential)
            .await
            .unwrap();
        assert_eq!(next().await, "c");
        stop.cancel();
    }
}
