//! The watch dispatcher: Kafka's `ZooKeeperClient.registerZNodeChangeHandler` and
//! `registerZNodeChildChangeHandler` over any `ZkClient` (a `ZkSession`, or the embedded store
//! for the single-node broker and unit tests). Components register one handler per path and kind
//! (a second registration for the path replaces the first, as Kafka's map does); one task reads
//! the client's watch events and calls the handler of each event's path. Watches are one-shot:
//! a handler re-arms its watch itself (typically by the read it does on the event), and after a
//! session expiry a `StateChangeHandler` re-arms them on the new session.
//!
//! An event no registered handler claims goes to the default handler, if one is set: the
//! controller's forwarding, whose per-topic watches (`/brokers/topics/<t>`) come and go with
//! the topics and are mapped to its events by path.
//!
//! Handlers are called on the dispatcher's task, so they must not block; Kafka's handlers put an
//! event on their component's queue, and so should these.

use crate::cluster::sync::lock;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::client::{WatchedEvent, WatchedEventType, ZkClient, ZkError};

/// Kafka's `ZNodeChangeHandler`: data watches on one path (set by `exists` or `get_data`).
pub trait ZNodeChangeHandler: Send + Sync {
    /// The watched path.
    fn path(&self) -> &str;
    fn handle_creation(&self) {}
    fn handle_deletion(&self) {}
    fn handle_data_change(&self) {}
}

/// Kafka's `ZNodeChildChangeHandler`: the child watch on one path (set by `get_children`).
pub trait ZNodeChildChangeHandler: Send + Sync {
    /// The watched path.
    fn path(&self) -> &str;
    fn handle_child_change(&self);
}

type NodeHandlers = HashMap<String, Arc<dyn ZNodeChangeHandler>>;
type ChildHandlers = HashMap<String, Arc<dyn ZNodeChildChangeHandler>>;

/// What gets the events of paths without a handler of their kind.
pub(crate) type DefaultHandler = Arc<dyn Fn(&WatchedEvent) + Send + Sync>;

#[derive(Default)]
struct Handlers {
    node: Mutex<NodeHandlers>,
    child: Mutex<ChildHandlers>,
    default: Mutex<Option<DefaultHandler>>,
}

impl Handlers {
    /// Kafka's `ZooKeeperClientWatcher.process` for a node event.
    fn dispatch(&self, event: &WatchedEvent) {
        // Cloned out of the lock, so a handler may (un)register handlers.
        if event.event_type == WatchedEventType::NodeChildrenChanged {
            let handler = lock(&self.child).get(&event.path).cloned();
            match handler {
                Some(h) => h.handle_child_change(),
                None => self.dispatch_default(event),
            }
            return;
        }
        let handler = lock(&self.node).get(&event.path).cloned();
        let Some(h) = handler else {
            self.dispatch_default(event);
            return;
        };
        match event.event_type {
            WatchedEventType::NodeCreated => h.handle_creation(),
            WatchedEventType::NodeDeleted => h.handle_deletion(),
            WatchedEventType::NodeDataChanged => h.handle_data_change(),
            WatchedEventType::NodeChildrenChanged => {}
        }
    }

    fn dispatch_default(&self, event: &WatchedEvent) {
        let handler = lock(&self.default).clone();
        if let Some(h) = handler {
            h(event);
        }
    }
}

/// Routes one client's watch events to the handlers registered per path. The routing task is
/// tracked by the tracker given to `start` and ends when its token is cancelled or the
/// dispatcher is dropped.
pub struct WatchDispatcher {
    zk: Arc<dyn ZkClient>,
    handlers: Arc<Handlers>,
    /// A child of the token given to `start`, cancelled on drop.
    stop: CancellationToken,
}

impl std::fmt::Debug for WatchDispatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WatchDispatcher")
            .field("node_paths", &lock(&self.handlers.node).len())
            .field("child_paths", &lock(&self.handlers.child).len())
            .finish_non_exhaustive()
    }
}

/// The dispatcher needs the client's one events receiver, and someone else took it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the watch events of ZooKeeper session {session_id:#x} were already taken")]
pub struct EventsTaken {
    pub session_id: i64,
}

impl WatchDispatcher {
    /// Takes `zk`'s events receiver and starts routing (on the current tokio runtime), on a task
    /// tracked by `tasks` and ended by `stop`.
    pub fn start(
        zk: Arc<dyn ZkClient>,
        tasks: &TaskTracker,
        stop: CancellationToken,
    ) -> Result<WatchDispatcher, EventsTaken> {
        let mut events = zk.take_events().ok_or(EventsTaken {
            session_id: zk.session_id(),
        })?;
        let handlers = Arc::new(Handlers::default());
        let routed = Arc::clone(&handlers);
        let stop = stop.child_token();
        let stopped = stop.clone();
        tasks.spawn(async move {
            loop {
                let event = tokio::select! {
                    event = events.recv() => event,
                    () = stopped.cancelled() => None,
                };
                let Some(event) = event else { break };
                routed.dispatch(&event);
            }
        });
        Ok(WatchDispatcher { zk, handlers, stop })
    }

    /// The client the watches are set on.
    pub fn client(&self) -> &Arc<dyn ZkClient> {
        &self.zk
    }

    pub fn register_znode_change_handler(&self, handler: Arc<dyn ZNodeChangeHandler>) {
        lock(&self.handlers.node).insert(handler.path().to_string(), handler);
    }

    pub fn register_znode_child_change_handler(&self, handler: Arc<dyn ZNodeChildChangeHandler>) {
        lock(&self.handlers.child).insert(handler.path().to_string(), handler);
    }

    pub fn unregister_znode_child_change_handler(&self, path: &str) {
        lock(&self.handlers.child).remove(path);
    }

    /// Sets (or replaces) the handler of events that no path handler claims.
    pub fn set_default_handler(&self, handler: DefaultHandler) {
        *lock(&self.handlers.default) = Some(handler);
    }

    /// Kafka's `registerZNodeChangeHandlerAndCheckExistence`: registers the handler, then arms
    /// its data watch with `exists`, which watches a missing node for its creation. Whether the
    /// node exists now.
    pub async fn register_znode_change_handler_and_check_existence(
        &self,
        handler: Arc<dyn ZNodeChangeHandler>,
    ) -> Result<bool, ZkError> {
        let path = handler.path().to_string();
        self.register_znode_change_handler(handler);
        Ok(self.zk.exists(&path, true).await?.is_some())
    }
}

impl Drop for WatchDispatcher {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::zk::{CreateMode, EmbeddedStore};
    use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};
    use tokio::time::{Duration, timeout};

    /// Reports what it was told, by path, on a channel.
    struct Probe {
        path: String,
        seen: UnboundedSender<String>,
    }

    impl ZNodeChangeHandler for Probe {
        fn path(&self) -> &str {
            &self.path
        }
        fn handle_creation(&self) {
            let _ = self.seen.send(format!("created {}", self.path));
        }
        fn handle_deletion(&self) {
            let _ = self.seen.send(format!("deleted {}", self.path));
        }
        fn handle_data_change(&self) {
            let _ = self.seen.send(format!("changed {}", self.path));
        }
    }

    impl ZNodeChildChangeHandler for Probe {
        fn path(&self) -> &str {
            &self.path
        }
        fn handle_child_change(&self) {
            let _ = self.seen.send(format!("children {}", self.path));
        }
    }

    fn probe(path: &str, seen: &UnboundedSender<String>) -> Arc<Probe> {
        Arc::new(Probe {
            path: path.to_string(),
            seen: seen.clone(),
        })
    }

    async fn next(rx: &mut tokio::sync::mpsc::UnboundedReceiver<String>) -> String {
        timeout(Duration::from_secs(5), rx.recv())
            .await
            .unwrap()
            .unwrap()
    }

    #[tokio::test]
    async fn routes_each_event_to_its_paths_handler() {
        const P: CreateMode = CreateMode::Persistent;
        let store = EmbeddedStore::in_memory();
        let zk: Arc<dyn ZkClient> = Arc::new(store.session());
        let writer = store.session();
        let tasks = TaskTracker::new();
        let stop = CancellationToken::new();
        let d = WatchDispatcher::start(Arc::clone(&zk), &tasks, stop.clone()).unwrap();
        assert_eq!(
            WatchDispatcher::start(Arc::clone(&zk), &tasks, stop.clone()).err(),
            Some(EventsTaken {
                session_id: zk.session_id()
            })
        );
        let (tx, mut rx) = unbounded_channel();
        // Two components, two paths; a missing node is watched for its creation.
        let controller = probe("/controller", &tx);
        let ids = probe("/brokers/ids", &tx);
        assert!(
            !d.register_znode_change_handler_and_check_existence(controller.clone())
                .await
                .unwrap()
        );
        writer.create("/brokers", b"", P).await.unwrap();
        writer.create("/brokers/ids", b"", P).await.unwrap();
        d.register_znode_child_change_handler(ids.clone());
        zk.get_children("/brokers/ids", true).await.unwrap();
        writer
            .create("/controller", b"1", CreateMode::Ephemeral)
            .await
            .unwrap();
        assert_eq!(next(&mut rx).await, "created /controller");
        writer
            .create("/brokers/ids/1", b"", CreateMode::Ephemeral)
            .await
            .unwrap();
        assert_eq!(next(&mut rx).await, "children /brokers/ids");
        // One-shot: nothing more until the handler's owner re-arms.
        writer.set_data("/controller", b"2", -1).await.unwrap();
        writer.create("/brokers/ids/2", b"", P).await.unwrap();
        zk.get_data("/controller", true).await.unwrap();
        writer.set_data("/controller", b"3", -1).await.unwrap();
        assert_eq!(next(&mut rx).await, "changed /controller");
        // A registration for the same path replaces the old handler.
        let (tx2, mut rx2) = unbounded_channel();
        d.register_znode_change_handler(probe("/controller", &tx2));
        zk.exists("/controller", true).await.unwrap();
        writer.delete("/controller", -1).await.unwrap();
        assert_eq!(next(&mut rx2).await, "deleted /controller");
        // An unregistered path's event goes nowhere; the dispatcher keeps routing after it.
        d.unregister_znode_child_change_handler("/brokers/ids");
        zk.get_children("/brokers/ids", true).await.unwrap();
        writer.delete("/brokers/ids/2", -1).await.unwrap();
        d.register_znode_change_handler(controller);
        zk.exists("/controller", true).await.unwrap();
        writer.create("/controller", b"", P).await.unwrap();
        assert_eq!(next(&mut rx).await, "created /controller");
        assert!(rx.try_recv().is_err());
        assert!(rx2.try_recv().is_err());
        // The default handler gets what no path handler claims, and only that.
        let (tx3, mut rx3) = unbounded_channel();
        d.set_default_handler(Arc::new(move |e: &WatchedEvent| {
            let _ = tx3.send(format!("{:?} {}", e.event_type, e.path));
        }));
        zk.get_children("/brokers/ids", true).await.unwrap();
        zk.exists("/controller", true).await.unwrap();
        writer.delete("/brokers/ids/1", -1).await.unwrap();
        writer.set_data("/controller", b"4", -1).await.unwrap();
        assert_eq!(next(&mut rx3).await, "NodeChildrenChanged /brokers/ids");
        assert_eq!(next(&mut rx).await, "changed /controller");
        assert!(rx3.try_recv().is_err());
        // Cancelling the token ends the routing task, and the tracker sees it end.
        stop.cancel();
        tasks.close();
        timeout(Duration::from_secs(5), tasks.wait()).await.unwrap();
    }

    #[tokio::test]
    async fn dropping_the_dispatcher_ends_its_task() {
        let store = EmbeddedStore::in_memory();
        let zk: Arc<dyn ZkClient> = Arc::new(store.session());
        let tasks = TaskTracker::new();
        let d = WatchDispatcher::start(zk, &tasks, CancellationToken::new()).unwrap();
        assert_eq!(tasks.len(), 1);
        drop(d);
        tasks.close();
        timeout(Duration::from_secs(5), tasks.wait()).await.unwrap();
    }
}
