//! The embedded store: an in-process ZooKeeper with the same semantics (zxids, versions,
//! sequential names from the parent's cversion, session-owned ephemerals, one-shot watches,
//! all-or-nothing `multi`), persisted as a snapshot in a data directory. It is the single-node
//! default and the test double for everything that talks to `ZkClient`.
//!
//! Several sessions share one store ([`EmbeddedStore::session`]). Writes hold one mutex, apply
//! to the tree, append one fsynced record to the transaction log (when the store has a
//! directory) and then fire watches, so a write is durable before it is acknowledged. A log
//! append that fails rolls the tree back and the call fails with `ZkError::Io`. Opening a
//! directory loads the snapshot, replays the log and compacts both into a new snapshot.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{SystemTime, UNIX_EPOCH};

use nix::fcntl::{Flock, FlockArg};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

use crate::cluster::sync::lock;

use super::client::parent_of;
use super::client::{CreateMode, Op, OpResult, Stat, WatchedEvent, ZkClient, ZkError, ZkFuture};
use super::snapshot;
use super::tree::{Node, Tree, Trigger};
use super::txn_log::{self, TxnLog};

/// Shared state of the store.
#[derive(Debug)]
struct State {
    tree: Tree,
    dir: Option<PathBuf>,
    /// The transaction log, when the store has a directory.
    log: Option<TxnLog>,
    /// An exclusive `flock` on `<dir>/zk.lock`, held while the store is open: one store per
    /// directory, even within one process.
    _lock: Option<Flock<File>>,
    /// Open sessions and where their watch events go.
    sessions: HashMap<i64, UnboundedSender<WatchedEvent>>,
    next_session: i64,
    /// One-shot watches by path: the sessions waiting on data / child changes.
    data_watches: HashMap<String, HashSet<i64>>,
    child_watches: HashMap<String, HashSet<i64>>,
}

/// The path an op names.
fn op_path(op: &Op) -> &str {
    match op {
        Op::Check { path, .. }
        | Op::Create { path, .. }
        | Op::SetData { path, .. }
        | Op::Delete { path, .. } => path,
    }
}

impl State {
    /// Applies `ops` atomically for `session` under one zxid, appends them to the log, then
    /// fires watches. On any failure the tree is restored from the undo copies of the nodes
    /// the ops touched (each op's node and its parent).
    fn write(&mut self, session: i64, ops: &[Op]) -> Result<Vec<OpResult>, ZkError> {
        self.check_session(session)?;
        let zxid = self.tree.zxid + 1;
        let now = now_ms();
        let mut undo: HashMap<String, Option<Node>> = HashMap::new();
        let mut triggers = Vec::new();
        let mut results = Vec::with_capacity(ops.len());
        for op in ops {
            let path = op_path(op);
            for p in [Some(path), parent_of(path)].into_iter().flatten() {
                if !undo.contains_key(p) {
                    undo.insert(p.to_string(), self.tree.nodes.get(p).cloned());
                }
            }
            match self.tree.apply(op, zxid, now, session, &mut triggers) {
                Ok(r) => results.push(r),
                Err(e) => {
                    self.rollback(undo, &triggers);
                    return Err(e);
                }
            }
        }
        let previous_zxid = self.tree.zxid;
        self.tree.zxid = zxid;
        if let Err(e) = self.persist(zxid, &triggers) {
            self.rollback(undo, &triggers);
            self.tree.zxid = previous_zxid;
            return Err(e);
        }
        for t in triggers {
            self.fire(&t);
        }
        Ok(results)
    }

    fn rollback(&mut self, undo: HashMap<String, Option<Node>>, triggers: &[Trigger]) {
        // Nodes created by the batch (sequential names included) were absent before it.
        for t in triggers {
            if !undo.contains_key(&t.path) {
                self.tree.nodes.remove(&t.path);
            }
        }
        for (path, node) in undo {
            match node {
                Some(node) => {
                    self.tree.nodes.insert(path, node);
                }
                None => {
                    self.tree.nodes.remove(&path);
                }
            }
        }
    }

    /// Logs the nodes `triggers` name, as they are after transaction `zxid`; compacts the log
    /// into a new snapshot once it is large.
    fn persist(&mut self, zxid: i64, triggers: &[Trigger]) -> Result<(), ZkError> {
        let (Some(dir), Some(log)) = (&self.dir, &mut self.log) else {
            return Ok(());
        };
        let paths: BTreeSet<String> = triggers.iter().map(|t| t.path.clone()).collect();
        log.append(&self.tree, zxid, &paths)?;
        if log.bytes > txn_log::COMPACT_BYTES {
            // The write is already durable in the log; a failed compaction is retried later.
            let compacted = snapshot::write_atomic(dir, &snapshot::encode(&self.tree))
                .and_then(|()| TxnLog::create_empty(dir));
            match compacted {
                Ok(fresh) => *log = fresh,
                Err(e) => tracing::warn!(error = %e, "zk store: log compaction failed"),
            }
        }
        Ok(())
    }

    fn fire(&mut self, t: &Trigger) {
        let mut sessions = HashSet::new();
        if t.data {
            sessions.extend(self.data_watches.remove(&t.path).unwrap_or_default());
        }
        if t.child {
            sessions.extend(self.child_watches.remove(&t.path).unwrap_or_default());
        }
        for s in sessions {
            if let Some(tx) = self.sessions.get(&s) {
                // A session that dropped its receiver simply misses events.
                let _ = tx.send(WatchedEvent {
                    event_type: t.event_type,
                    path: t.path.clone(),
                });
            }
        }
    }

    fn check_session(&self, session: i64) -> Result<(), ZkError> {
        if self.sessions.contains_key(&session) {
            Ok(())
        } else {
            Err(ZkError::SessionExpired)
        }
    }

    /// Ends `session`: deletes its ephemerals (one transaction, like ZooKeeper's closeSession)
    /// and forgets its watches.
    fn close_session(&mut self, session: i64) -> Result<(), ZkError> {
        if !self.sessions.contains_key(&session) {
            return Ok(());
        }
        let paths = self.tree.ephemerals_of(session);
        let mut triggers = Vec::new();
        if !paths.is_empty() {
            let zxid = self.tree.zxid + 1;
            for p in &paths {
                // Ephemerals have no children, so these deletes cannot fail.
                self.tree.delete(p, -1, zxid, &mut triggers)?;
            }
            self.tree.zxid = zxid;
            // Only the parents' child counts are persistent state here.
            if let Err(e) = self.persist(zxid, &triggers) {
                tracing::warn!(error = %e, "zk store: logging a session close failed");
            }
        }
        self.sessions.remove(&session);
        for watches in [&mut self.data_watches, &mut self.child_watches] {
            for set in watches.values_mut() {
                set.remove(&session);
            }
            watches.retain(|_, s| !s.is_empty());
        }
        for t in triggers {
            self.fire(&t);
        }
        Ok(())
    }
}

/// The lock file's name inside the store's directory.
pub(crate) const LOCK_FILE: &str = "zk.lock";

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// The store: cheap to clone, shared by all its sessions.
#[derive(Debug, Clone)]
pub struct EmbeddedStore {
    state: Arc<Mutex<State>>,
}

impl EmbeddedStore {
    /// A store kept in `dir` (created if missing); loads the last snapshot if there is one.
    pub fn open(dir: &Path) -> Result<Self, ZkError> {
        std::fs::create_dir_all(dir).map_err(|e| ZkError::Io(e.to_string()))?;
        let lock_path = dir.join(LOCK_FILE);
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| ZkError::Io(format!("{}: {e}", lock_path.display())))?;
        let lock = Flock::lock(file, FlockArg::LockExclusiveNonblock).map_err(|(_, e)| {
            ZkError::Io(format!(
                "{} is held by another store: {e}",
                lock_path.display()
            ))
        })?;
        let mut tree = snapshot::read(dir)?.unwrap_or_else(Tree::new);
        txn_log::replay(dir, &mut tree)?;
        snapshot::write_atomic(dir, &snapshot::encode(&tree))?;
        let log = TxnLog::create_empty(dir)?;
        Ok(Self::with(
            tree,
            Some(dir.to_path_buf()),
            Some(log),
            Some(lock),
        ))
    }

    /// The state kept in `dir` as of its last complete transaction, in memory, for reading
    /// beside a broker that may have it open: neither `zk.lock` nor any file is touched, and
    /// nothing is written back. A log being appended is read up to its last complete record.
    /// The snapshot is read again after the log; if a compaction replaced it in between (the
    /// log read may then belong to the new snapshot), both are read again.
    /// `Ok(None)` when `dir` holds no store.
    pub(crate) fn read_only_copy(dir: &Path) -> Result<Option<Self>, ZkError> {
        const ATTEMPTS: usize = 10;
        let read_snapshot = || match std::fs::read(dir.join(snapshot::FILE_NAME)) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(ZkError::Io(format!(
                "{}: {e}",
                dir.join(snapshot::FILE_NAME).display()
            ))),
        };
        for _ in 0..ATTEMPTS {
            let before = read_snapshot()?;
            let log = txn_log::read_if_present(dir)?;
            if read_snapshot()? != before {
                continue;
            }
            let Some(snapshot_bytes) = before else {
                // A store always writes its snapshot when it opens.
                return Ok(None);
            };
            let mut tree = snapshot::decode(&snapshot_bytes)?;
            txn_log::replay_bytes(&log, &mut tree)?;
            return Ok(Some(Self::with(tree, None, None, None)));
        }
        Err(ZkError::Io(format!(
            "{} changed under every one of {ATTEMPTS} reads",
            dir.join(snapshot::FILE_NAME).display()
        )))
    }

    /// A store that lives only in memory.
    pub fn in_memory() -> Self {
        Self::with(Tree::new(), None, None, None)
    }

    fn with(
        tree: Tree,
        dir: Option<PathBuf>,
        log: Option<TxnLog>,
        lock: Option<Flock<File>>,
    ) -> Self {
        // Session ids start from the clock like ZooKeeper's, so ids differ across restarts.
        let next_session = (now_ms() << 16) | 1;
        let state = State {
            tree,
            dir,
            log,
            _lock: lock,
            sessions: HashMap::new(),
            next_session,
            data_watches: HashMap::new(),
            child_watches: HashMap::new(),
        };
        EmbeddedStore {
            state: Arc::new(Mutex::new(state)),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A poisoned lock only means another thread panicked mid-call; the tree is swapped in
        // whole, so it is still consistent.
        lock(&self.state)
    }

    /// Opens a new session on this store.
    pub fn session(&self) -> EmbeddedSession {
        let (tx, rx) = unbounded_channel();
        let mut st = self.lock();
        let id = st.next_session;
        st.next_session += 1;
        st.sessions.insert(id, tx);
        drop(st);
        EmbeddedSession {
            store: self.clone(),
            id,
            events: Mutex::new(Some(rx)),
        }
    }
}

/// One session on an [`EmbeddedStore`]. Dropping it closes the session.
#[derive(Debug)]
pub struct EmbeddedSession {
    store: EmbeddedStore,
    id: i64,
    events: Mutex<Option<UnboundedReceiver<WatchedEvent>>>,
}

impl EmbeddedSession {
    fn write_one(&self, op: Op) -> Result<OpResult, ZkError> {
        let mut results = self
            .store
            .lock()
            .write(self.id, std::slice::from_ref(&op))?;
        results.pop().ok_or(ZkError::Other(-1))
    }

    fn read<T>(&self, f: impl FnOnce(&mut State) -> Result<T, ZkError>) -> Result<T, ZkError> {
        let mut st = self.store.lock();
        st.check_session(self.id)?;
        f(&mut st)
    }
}

impl Drop for EmbeddedSession {
    fn drop(&mut self) {
        let _ = self.store.lock().close_session(self.id);
    }
}

impl ZkClient for EmbeddedSession {
    fn session_id(&self) -> i64 {
        self.id
    }

    fn take_events(&self) -> Option<UnboundedReceiver<WatchedEvent>> {
        lock(&self.events).take()
    }

    fn create<'a>(
        &'a self,
        path: &'a str,
        data: &'a [u8],
        mode: CreateMode,
    ) -> ZkFuture<'a, (String, Stat)> {
        Box::pin(async move {
            match self.write_one(Op::Create {
                path: path.to_string(),
                data: data.to_vec(),
                mode,
            })? {
                OpResult::Create {
                    path,
                    stat: Some(stat),
                } => Ok((path, stat)),
                _ => Err(ZkError::Other(-1)),
            }
        })
    }

    fn get_data<'a>(&'a self, path: &'a str, watch: bool) -> ZkFuture<'a, (Vec<u8>, Stat)> {
        Box::pin(async move {
            self.read(|st| {
                let node = st.tree.get(path)?;
                let out = (node.data.clone(), node.stat);
                if watch {
                    st.data_watches
                        .entry(path.to_string())
                        .or_default()
                        .insert(self.id);
                }
                Ok(out)
            })
        })
    }

    fn set_data<'a>(&'a self, path: &'a str, data: &'a [u8], version: i32) -> ZkFuture<'a, Stat> {
        Box::pin(async move {
            match self.write_one(Op::SetData {
                path: path.to_string(),
                data: data.to_vec(),
                version,
            })? {
                OpResult::SetData { stat } => Ok(stat),
                _ => Err(ZkError::Other(-1)),
            }
        })
    }

    fn delete<'a>(&'a self, path: &'a str, version: i32) -> ZkFuture<'a, ()> {
        Box::pin(async move {
            self.write_one(Op::Delete {
                path: path.to_string(),
                version,
            })
            .map(|_| ())
        })
    }

    fn get_children<'a>(&'a self, path: &'a str, watch: bool) -> ZkFuture<'a, (Vec<String>, Stat)> {
        Box::pin(async move {
            self.read(|st| {
                let node = st.tree.get(path)?;
                let out = (node.children.iter().cloned().collect(), node.stat);
                if watch {
                    st.child_watches
                        .entry(path.to_string())
                        .or_default()
                        .insert(self.id);
                }
                Ok(out)
            })
        })
    }

    fn exists<'a>(&'a self, path: &'a str, watch: bool) -> ZkFuture<'a, Option<Stat>> {
        Box::pin(async move {
            self.read(|st| {
                let out = match st.tree.get(path) {
                    Ok(node) => Some(node.stat),
                    Err(ZkError::NoNode(_)) => None,
                    Err(e) => return Err(e),
                };
                if watch {
                    st.data_watches
                        .entry(path.to_string())
                        .or_default()
                        .insert(self.id);
                }
                Ok(out)
            })
        })
    }

    fn multi(&self, ops: Vec<Op>) -> ZkFuture<'_, Vec<OpResult>> {
        Box::pin(async move { self.store.lock().write(self.id, &ops) })
    }

    fn close(&self) -> ZkFuture<'_, ()> {
        Box::pin(async move { self.store.lock().close_session(self.id) })
    }
}

#[cfg(test)]
#[path = "embedded_tests.rs"]
mod tests;
