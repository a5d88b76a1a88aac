//! The embedded store: an in-process ZooKeeper with the same semantics (zxids, versions,
//! sequential names from the parent's cversion, session-owned ephemerals, one-shot watches,
//! all-or-nothing `multi`), persisted as a snapshot in a data directory. It is the single-node
//! default and the test double for everything that talks to `ZkClient`.
//!
//! Several sessions share one store ([`EmbeddedStore::session`]). Writes hold one mutex, apply
//! to the tree, write the snapshot (when the store has a directory) and then fire watches, so
//! a write is durable before it is acknowledged. A snapshot that fails to write rolls the tree
//! back and the call fails with `ZkError::Io`.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{SystemTime, UNIX_EPOCH};

use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

use super::client::{CreateMode, Op, OpResult, Stat, WatchedEvent, ZkClient, ZkError, ZkFuture};
use super::snapshot;
use super::tree::{Tree, Trigger};

/// Shared state of the store.
#[derive(Debug)]
struct State {
    tree: Tree,
    dir: Option<PathBuf>,
    /// Open sessions and where their watch events go.
    sessions: HashMap<i64, UnboundedSender<WatchedEvent>>,
    next_session: i64,
    /// One-shot watches by path: the sessions waiting on data / child changes.
    data_watches: HashMap<String, HashSet<i64>>,
    child_watches: HashMap<String, HashSet<i64>>,
}

impl State {
    /// Applies `ops` atomically for `session`, persists, then fires watches.
    fn write(&mut self, session: i64, ops: &[Op]) -> Result<Vec<OpResult>, ZkError> {
        if !self.sessions.contains_key(&session) {
            return Err(ZkError::SessionExpired);
        }
        let mut scratch = self.tree.clone();
        let zxid = scratch.zxid + 1;
        let now = now_ms();
        let mut triggers = Vec::new();
        let mut results = Vec::with_capacity(ops.len());
        for op in ops {
            results.push(scratch.apply(op, zxid, now, session, &mut triggers)?);
        }
        scratch.zxid = zxid;
        self.commit(scratch, triggers)?;
        Ok(results)
    }

    /// Installs `tree`, writing the snapshot first when persistent nodes may have changed.
    fn commit(&mut self, tree: Tree, triggers: Vec<Trigger>) -> Result<(), ZkError> {
        if let Some(dir) = &self.dir {
            snapshot::write_atomic(dir, &snapshot::encode(&tree))?;
        }
        self.tree = tree;
        for t in triggers {
            self.fire(&t);
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
        let mut tree = self.tree.clone();
        let paths = tree.ephemerals_of(session);
        let mut triggers = Vec::new();
        if !paths.is_empty() {
            let zxid = tree.zxid + 1;
            for p in &paths {
                tree.delete(p, -1, zxid, &mut triggers)?;
            }
            tree.zxid = zxid;
        }
        self.sessions.remove(&session);
        for watches in [&mut self.data_watches, &mut self.child_watches] {
            for set in watches.values_mut() {
                set.remove(&session);
            }
            watches.retain(|_, s| !s.is_empty());
        }
        // Ephemerals are not in the snapshot, so only the in-memory tree changes.
        self.tree = tree;
        for t in triggers {
            self.fire(&t);
        }
        Ok(())
    }
}

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
        let tree = snapshot::read(dir)?.unwrap_or_else(Tree::new);
        Ok(Self::with(tree, Some(dir.to_path_buf())))
    }

    /// A store that lives only in memory.
    pub fn in_memory() -> Self {
        Self::with(Tree::new(), None)
    }

    fn with(tree: Tree, dir: Option<PathBuf>) -> Self {
        // Session ids start from the clock like ZooKeeper's, so ids differ across restarts.
        let next_session = (now_ms() << 16) | 1;
        let state = State {
            tree,
            dir,
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
        self.state.lock().unwrap_or_else(|e| e.into_inner())
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
        self.events.lock().unwrap_or_else(|e| e.into_inner()).take()
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
                OpResult::Create { path, stat } => Ok((path, stat)),
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
