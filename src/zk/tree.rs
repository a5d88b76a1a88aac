//! The data tree of the embedded store: nodes with ZooKeeper's stats, and the write operations
//! (create, set, delete, check) with ZooKeeper's rules and the watch triggers each one causes.
//!
//! Invariants: the root `/` always exists; every node's parent exists and lists it in
//! `children`; `stat.num_children == children.len()`; ephemeral nodes have no children.

use std::collections::{BTreeSet, HashMap};

use super::client::{
    CreateMode, Op, OpResult, Stat, WatchedEventType, ZkError, parent_of, validate_path,
};

/// One znode: its data, stat and children's names.
#[derive(Debug, Clone, Default)]
pub(crate) struct Node {
    pub data: Vec<u8>,
    pub stat: Stat,
    pub children: BTreeSet<String>,
}

/// A watch trigger produced by a write: fire data watches and/or child watches on `path`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Trigger {
    pub path: String,
    pub event_type: WatchedEventType,
    /// Which watch kinds the event reaches: data watches, child watches.
    pub data: bool,
    pub child: bool,
}

/// The whole tree, by absolute path.
#[derive(Debug, Clone)]
pub(crate) struct Tree {
    pub nodes: HashMap<String, Node>,
    /// The last zxid handed out.
    pub zxid: i64,
}

impl Tree {
    /// A tree with only the root.
    pub(super) fn new() -> Self {
        let mut nodes = HashMap::new();
        nodes.insert("/".to_string(), Node::default());
        Tree { nodes, zxid: 0 }
    }

    pub(super) fn get(&self, path: &str) -> Result<&Node, ZkError> {
        validate_path(path)?;
        self.nodes
            .get(path)
            .ok_or_else(|| ZkError::NoNode(path.to_string()))
    }

    /// Applies one op under transaction id `zxid` at time `now`; `session` owns ephemerals.
    pub(super) fn apply(
        &mut self,
        op: &Op,
        zxid: i64,
        now: i64,
        session: i64,
        triggers: &mut Vec<Trigger>,
    ) -> Result<OpResult, ZkError> {
        match op {
            Op::Check { path, version } => {
                let node = self.get(path)?;
                check_version(path, node.stat.version, *version)?;
                Ok(OpResult::Check)
            }
            Op::Create { path, data, mode } => {
                let (path, stat) = self.create(path, data, *mode, zxid, now, session, triggers)?;
                Ok(OpResult::Create {
                    path,
                    stat: Some(stat),
                })
            }
            Op::SetData {
                path,
                data,
                version,
            } => {
                validate_path(path)?;
                let node = self
                    .nodes
                    .get_mut(path.as_str())
                    .ok_or_else(|| ZkError::NoNode(path.clone()))?;
                check_version(path, node.stat.version, *version)?;
                node.data.clone_from(data);
                node.stat.version = node.stat.version.wrapping_add(1);
                node.stat.mzxid = zxid;
                node.stat.mtime = now;
                node.stat.data_length = len_i32(data.len());
                triggers.push(Trigger {
                    path: path.clone(),
                    event_type: WatchedEventType::NodeDataChanged,
                    data: true,
                    child: false,
                });
                Ok(OpResult::SetData { stat: node.stat })
            }
            Op::Delete { path, version } => {
                self.delete(path, *version, zxid, triggers)?;
                Ok(OpResult::Delete)
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn create(
        &mut self,
        path: &str,
        data: &[u8],
        mode: CreateMode,
        zxid: i64,
        now: i64,
        session: i64,
        triggers: &mut Vec<Trigger>,
    ) -> Result<(String, Stat), ZkError> {
        validate_path(path)?;
        if path == "/" {
            return Err(ZkError::NodeExists(path.to_string()));
        }
        let parent_path = parent_of(path).ok_or_else(|| ZkError::BadArguments(path.to_string()))?;
        let parent = self
            .nodes
            .get(parent_path)
            .ok_or_else(|| ZkError::NoNode(path.to_string()))?;
        if parent.stat.ephemeral_owner != 0 {
            return Err(ZkError::NoChildrenForEphemerals(path.to_string()));
        }
        let actual = if mode.is_sequential() {
            format!("{path}{:010}", parent.stat.cversion)
        } else {
            path.to_string()
        };
        if self.nodes.contains_key(&actual) {
            return Err(ZkError::NodeExists(actual));
        }
        let stat = Stat {
            czxid: zxid,
            mzxid: zxid,
            ctime: now,
            mtime: now,
            pzxid: zxid,
            ephemeral_owner: if mode.is_ephemeral() { session } else { 0 },
            data_length: len_i32(data.len()),
            ..Stat::default()
        };
        let name = actual[parent_path.len()..]
            .trim_start_matches('/')
            .to_string();
        if let Some(parent) = self.nodes.get_mut(parent_path) {
            parent.children.insert(name);
            parent.stat.cversion = parent.stat.cversion.wrapping_add(1);
            parent.stat.pzxid = zxid;
            parent.stat.num_children = len_i32(parent.children.len());
        }
        self.nodes.insert(
            actual.clone(),
            Node {
                data: data.to_vec(),
                stat,
                children: BTreeSet::new(),
            },
        );
        triggers.push(Trigger {
            path: actual.clone(),
            event_type: WatchedEventType::NodeCreated,
            data: true,
            child: false,
        });
        triggers.push(Trigger {
            path: parent_path.to_string(),
            event_type: WatchedEventType::NodeChildrenChanged,
            data: false,
            child: true,
        });
        Ok((actual, stat))
    }

    pub(super) fn delete(
        &mut self,
        path: &str,
        version: i32,
        zxid: i64,
        triggers: &mut Vec<Trigger>,
    ) -> Result<(), ZkError> {
        validate_path(path)?;
        if path == "/" {
            return Err(ZkError::BadArguments("cannot delete /".to_string()));
        }
        let node = self
            .nodes
            .get(path)
            .ok_or_else(|| ZkError::NoNode(path.to_string()))?;
        check_version(path, node.stat.version, version)?;
        if !node.children.is_empty() {
            return Err(ZkError::NotEmpty(path.to_string()));
        }
        self.nodes.remove(path);
        let parent_path = parent_of(path).unwrap_or("/");
        if let Some(parent) = self.nodes.get_mut(parent_path) {
            parent
                .children
                .remove(path[parent_path.len()..].trim_start_matches('/'));
            parent.stat.cversion = parent.stat.cversion.wrapping_add(1);
            parent.stat.pzxid = zxid;
            parent.stat.num_children = len_i32(parent.children.len());
        }
        triggers.push(Trigger {
            path: path.to_string(),
            event_type: WatchedEventType::NodeDeleted,
            data: true,
            child: true,
        });
        triggers.push(Trigger {
            path: parent_path.to_string(),
            event_type: WatchedEventType::NodeChildrenChanged,
            data: false,
            child: true,
        });
        Ok(())
    }

    /// Paths of the ephemeral nodes owned by `session`.
    pub(super) fn ephemerals_of(&self, session: i64) -> Vec<String> {
        let mut paths: Vec<String> = self
            .nodes
            .iter()
            .filter(|(_, n)| n.stat.ephemeral_owner == session)
            .map(|(p, _)| p.clone())
            .collect();
        paths.sort();
        paths
    }
}

fn check_version(path: &str, actual: i32, expected: i32) -> Result<(), ZkError> {
    if expected != -1 && expected != actual {
        return Err(ZkError::BadVersion(path.to_string()));
    }
    Ok(())
}

/// Lengths in a stat are `int`s; data over 2 GiB cannot occur (saturate rather than wrap).
fn len_i32(len: usize) -> i32 {
    i32::try_from(len).unwrap_or(i32::MAX)
}
