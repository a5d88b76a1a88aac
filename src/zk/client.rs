//! The `ZkClient` trait: what Kafka's `KafkaZkClient` needs from ZooKeeper (create in the four
//! classic modes, get/set/delete with versions, children, exists, atomic `multi`, one-shot
//! watches delivered on a channel, the session id), with ZooKeeper's error codes; and the session
//! lifecycle's vocabulary (Kafka's `ZooKeeperClient`): the states a session reports and the
//! `StateChangeHandler`s run around a new session after an expiry.
//!
//! The trait is object safe (`Arc<dyn ZkClient>`): every call returns a boxed future.

use std::future::Future;
use std::pin::Pin;

use std::sync::Arc;

use tokio::sync::broadcast;
use tokio::sync::mpsc::UnboundedReceiver;

/// A boxed, sendable future, so the trait stays usable as `dyn ZkClient`.
pub type ZkFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, ZkError>> + Send + 'a>>;

/// ZooKeeper's errors (`KeeperException.Code`), with the server's numeric codes in `code()`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ZkError {
    /// The node (or, for create, its parent) does not exist. Code -101.
    #[error("no node: {0}")]
    NoNode(String),
    /// The node already exists. Code -110.
    #[error("node exists: {0}")]
    NodeExists(String),
    /// The expected version did not match the node's version. Code -103.
    #[error("bad version: {0}")]
    BadVersion(String),
    /// The node has children and cannot be deleted. Code -111.
    #[error("not empty: {0}")]
    NotEmpty(String),
    /// Ephemeral nodes cannot have children. Code -108.
    #[error("ephemerals cannot have children: {0}")]
    NoChildrenForEphemerals(String),
    /// The session is closed or expired; every later call fails the same way. Code -112.
    #[error("session expired")]
    SessionExpired,
    /// The connection to the server was lost; the call may or may not have been applied. Code -4.
    #[error("connection loss")]
    ConnectionLoss,
    /// Malformed path or argument. Code -8.
    #[error("bad arguments: {0}")]
    BadArguments(String),
    /// An operation timed out. Code -7.
    #[error("operation timeout")]
    OperationTimeout,
    /// The embedded store could not read or write its snapshot (maps to ZooKeeper's system
    /// error, code -1).
    #[error("store i/o: {0}")]
    Io(String),
    /// The first connection to the ensemble was not made within `zookeeper.connection.timeout.ms`
    /// (Kafka's `ZooKeeperClientTimeoutException`).
    #[error("timed out after {timeout_ms} ms waiting for a connection to ZooKeeper at {connect}")]
    ConnectionTimeout { connect: String, timeout_ms: u64 },
    /// Any other server error, by its numeric code.
    #[error("zookeeper error code {0}")]
    Other(i32),
}

impl ZkError {
    /// ZooKeeper's numeric code for this error (`KeeperException.Code.intValue`).
    pub fn code(&self) -> i32 {
        match self {
            ZkError::NoNode(_) => -101,
            ZkError::NodeExists(_) => -110,
            ZkError::BadVersion(_) => -103,
            ZkError::NotEmpty(_) => -111,
            ZkError::NoChildrenForEphemerals(_) => -108,
            ZkError::SessionExpired => -112,
            ZkError::ConnectionLoss => -4,
            ZkError::BadArguments(_) => -8,
            ZkError::OperationTimeout | ZkError::ConnectionTimeout { .. } => -7,
            ZkError::Io(_) => -1,
            ZkError::Other(code) => *code,
        }
    }
}

/// How a node is created. Sequential modes append `%010d` of the parent's cversion to the name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CreateMode {
    Persistent,
    Ephemeral,
    PersistentSequential,
    EphemeralSequential,
}

impl CreateMode {
    /// Whether the node is owned by the creating session and deleted when it closes.
    pub fn is_ephemeral(self) -> bool {
        matches!(
            self,
            CreateMode::Ephemeral | CreateMode::EphemeralSequential
        )
    }
    /// Whether a `%010d` suffix is appended to the requested name.
    pub fn is_sequential(self) -> bool {
        matches!(
            self,
            CreateMode::PersistentSequential | CreateMode::EphemeralSequential
        )
    }
}

/// ZooKeeper's `Stat` of a node. Zxids are the transaction ids of the create (`czxid`), last
/// data change (`mzxid`) and last child change (`pzxid`); times are epoch milliseconds;
/// `version` counts data changes, `cversion` child changes; `ephemeral_owner` is the owning
/// session id or 0 for a persistent node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stat {
    pub czxid: i64,
    pub mzxid: i64,
    pub ctime: i64,
    pub mtime: i64,
    pub version: i32,
    pub cversion: i32,
    pub aversion: i32,
    pub ephemeral_owner: i64,
    pub data_length: i32,
    pub num_children: i32,
    pub pzxid: i64,
}

/// One operation of a `multi`. A version of -1 matches any version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// Fails the whole multi unless the node exists with this version.
    Check {
        path: String,
        version: i32,
    },
    Create {
        path: String,
        data: Vec<u8>,
        mode: CreateMode,
    },
    SetData {
        path: String,
        data: Vec<u8>,
        version: i32,
    },
    Delete {
        path: String,
        version: i32,
    },
}

/// The result of one operation of a successful `multi`, in the order of the ops.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OpResult {
    Check,
    /// The created path (with its sequential suffix, if any) and its stat, where the server
    /// sends one: ZooKeeper 3.8 answers a create inside a multi with the path alone, so a real
    /// ensemble gives `None` here. A created znode is at version 0 either way.
    Create {
        path: String,
        stat: Option<Stat>,
    },
    SetData {
        stat: Stat,
    },
    Delete,
}

/// The kind of change a one-shot watch reports (ZooKeeper's `Watcher.Event.EventType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WatchedEventType {
    NodeCreated,
    NodeDeleted,
    NodeDataChanged,
    NodeChildrenChanged,
}

/// A fired watch: what happened to which path. Each registered watch fires at most once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatchedEvent {
    pub event_type: WatchedEventType,
    pub path: String,
}

/// What a session reports to its subscribers (Kafka's `KeeperState`s that `ZooKeeperClient`
/// acts on). A session goes Connected → Disconnected (connection lost, the session may still be
/// alive) → Connected again, or → Expired, after which a new session is built and reported
/// Connected. Closed is final.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionState {
    Connected,
    Disconnected,
    Expired,
    Closed,
}

/// A boxed, sendable future of a state change handler.
pub type HandlerFuture<'a> = Pin<Box<dyn Future<Output = ()> + Send + 'a>>;

/// Kafka's `StateChangeHandler`: code run around the creation of a new session after an expiry,
/// to re-create ephemerals, re-arm watches and re-run elections. Handlers run one at a time in
/// registration order; registering a second handler of the same name replaces the first.
pub trait StateChangeHandler: Send + Sync {
    /// The handler's name (its key in the registry).
    fn name(&self) -> &str;
    /// Runs after the old session expired, before the new one is created.
    fn before_initializing_session(&self) -> HandlerFuture<'_> {
        Box::pin(async {})
    }
    /// Runs once the new session is connected; ZooKeeper calls made here use it.
    fn after_initializing_session(&self) -> HandlerFuture<'_>;
}

/// The ZooKeeper operations Kafka's metadata code uses, over one session.
///
/// Watches (`watch: true`) follow ZooKeeper: `get_data` and `exists` set a data watch (fired
/// by create, set_data or delete of the node; `exists` on a missing node waits for its
/// creation), `get_children` a child watch (fired by a child's create or delete, or the node's
/// delete). A watch fires once and is then gone; events go to the receiver from
/// [`ZkClient::take_events`].
pub trait ZkClient: Send + Sync + std::fmt::Debug {
    /// The session id; ephemeral nodes carry it as `ephemeral_owner`.
    fn session_id(&self) -> i64;

    /// The receiver of this session's watch events; `Some` only on the first call.
    fn take_events(&self) -> Option<UnboundedReceiver<WatchedEvent>>;

    /// Creates a node; returns its actual path (sequential suffix included) and stat.
    fn create<'a>(
        &'a self,
        path: &'a str,
        data: &'a [u8],
        mode: CreateMode,
    ) -> ZkFuture<'a, (String, Stat)>;

    /// The node's data and stat.
    fn get_data<'a>(&'a self, path: &'a str, watch: bool) -> ZkFuture<'a, (Vec<u8>, Stat)>;

    /// Replaces the data if `version` matches (-1: any); returns the new stat.
    fn set_data<'a>(&'a self, path: &'a str, data: &'a [u8], version: i32) -> ZkFuture<'a, Stat>;

    /// Deletes a childless node if `version` matches (-1: any).
    fn delete<'a>(&'a self, path: &'a str, version: i32) -> ZkFuture<'a, ()>;

    /// The children's names (not paths), sorted, and the node's stat.
    fn get_children<'a>(&'a self, path: &'a str, watch: bool) -> ZkFuture<'a, (Vec<String>, Stat)>;

    /// The stat if the node exists.
    fn exists<'a>(&'a self, path: &'a str, watch: bool) -> ZkFuture<'a, Option<Stat>>;

    /// Applies every op or none; on failure returns the first failing op's error.
    fn multi(&self, ops: Vec<Op>) -> ZkFuture<'_, Vec<OpResult>>;

    /// Closes the session: its ephemeral nodes are deleted, later calls get `SessionExpired`.
    fn close(&self) -> ZkFuture<'_, ()>;

    /// A receiver of every later session state, in order; `None` for a client whose session
    /// never changes state (the embedded store: always connected, never expires).
    fn subscribe_states(&self) -> Option<broadcast::Receiver<SessionState>> {
        None
    }

    /// Registers (or replaces, by name) a handler run around each new session after an expiry.
    /// A client whose session never expires never runs it.
    fn register_state_change_handler(&self, handler: Arc<dyn StateChangeHandler>) {
        let _ = handler;
    }

    /// Removes the handler of this name, if any.
    fn unregister_state_change_handler(&self, name: &str) {
        let _ = name;
    }
}

/// Checks a ZooKeeper path: absolute, no empty, `.` or `..` components, no trailing slash
/// (except the root), no NUL.
pub fn validate_path(path: &str) -> Result<(), ZkError> {
    let bad = || ZkError::BadArguments(format!("invalid path {path:?}"));
    if path == "/" {
        return Ok(());
    }
    let rest = path.strip_prefix('/').ok_or_else(bad)?;
    if path.contains('\0') {
        return Err(bad());
    }
    for part in rest.split('/') {
        if part.is_empty() || part == "." || part == ".." {
            return Err(bad());
        }
    }
    Ok(())
}

/// The parent of a valid non-root path (`/a/b` → `/a`, `/a` → `/`).
pub fn parent_of(path: &str) -> Option<&str> {
    if path == "/" {
        return None;
    }
    let at = path.rfind('/')?;
    Some(if at == 0 { "/" } else { &path[..at] })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths() {
        assert!(validate_path("/").is_ok());
        assert!(validate_path("/a/b").is_ok());
        for bad in ["", "a", "/a/", "//a", "/a/./b", "/a/../b"] {
            assert!(validate_path(bad).is_err(), "{bad}");
        }
        assert_eq!(parent_of("/a/b"), Some("/a"));
        assert_eq!(parent_of("/a"), Some("/"));
        assert_eq!(parent_of("/"), None);
    }

    #[test]
    fn codes() {
        assert_eq!(ZkError::NoNode(String::new()).code(), -101);
        assert_eq!(ZkError::SessionExpired.code(), -112);
    }
}
