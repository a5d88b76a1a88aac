//! The embedded store's transaction log: one record per write batch, appended and fsynced
//! before the write is acknowledged, holding the resulting state of every persistent node the
//! batch touched. On open the store loads the snapshot, replays the records newer than it,
//! writes a fresh snapshot and empties the log; it also compacts that way once the log grows
//! past [`COMPACT_BYTES`].
//!
//! Record format (big-endian): u32 body length, u32 CRC-32C of the body, body = i64 zxid,
//! u32 entry count, then per entry: u8 kind (0 = node removed, 1 = node state), u32 path
//! length, path, and for kind 1: u32 data length, data, i64 czxid, i64 mzxid, i64 ctime,
//! i64 mtime, i32 version, i32 cversion, i32 aversion, i64 pzxid. A torn or damaged tail (a
//! crash mid-append) ends the replay there; what was acknowledged was fsynced before it.

use std::collections::BTreeSet;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;

use super::client::{ZkError, validate_path};
use super::snapshot::{Reader, corrupt, put_stat};
use super::tree::{Node, Tree};

/// The log's file name inside the store's directory.
pub(crate) const FILE_NAME: &str = "zk-log";
/// Compact (snapshot + truncate) once the log is this large.
pub(crate) const COMPACT_BYTES: u64 = 4 << 20;

/// The open log file and how many bytes it holds.
#[derive(Debug)]
pub(crate) struct TxnLog {
    file: File,
    pub bytes: u64,
}

fn io(e: std::io::Error) -> ZkError {
    ZkError::Io(e.to_string())
}

impl TxnLog {
    /// Opens (creating) the log in `dir`, emptied.
    pub(super) fn create_empty(dir: &Path) -> Result<Self, ZkError> {
        let file = OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(true)
            .open(dir.join(FILE_NAME))
            .map_err(io)?;
        file.sync_all().map_err(io)?;
        File::open(dir).and_then(|d| d.sync_all()).map_err(io)?;
        Ok(TxnLog { file, bytes: 0 })
    }

    /// Appends the state after transaction `zxid` of `paths` in `tree` and fsyncs it.
    pub(super) fn append(
        &mut self,
        tree: &Tree,
        zxid: i64,
        paths: &BTreeSet<String>,
    ) -> Result<(), ZkError> {
        let mut body = Vec::new();
        body.extend_from_slice(&zxid.to_be_bytes());
        let entries: Vec<(&String, Option<&Node>)> = paths
            .iter()
            .map(|p| (p, tree.nodes.get(p)))
            .filter(|(_, n)| n.is_none_or(|n| n.stat.ephemeral_owner == 0))
            .collect();
        body.extend_from_slice(&(entries.len() as u32).to_be_bytes());
        for (path, node) in entries {
            body.push(u8::from(node.is_some()));
            body.extend_from_slice(&(path.len() as u32).to_be_bytes());
            body.extend_from_slice(path.as_bytes());
            if let Some(node) = node {
                body.extend_from_slice(&(node.data.len() as u32).to_be_bytes());
                body.extend_from_slice(&node.data);
                put_stat(&mut body, &node.stat);
            }
        }
        let mut record = Vec::with_capacity(body.len() + 8);
        record.extend_from_slice(&(body.len() as u32).to_be_bytes());
        record.extend_from_slice(&crc32c::crc32c(&body).to_be_bytes());
        record.extend_from_slice(&body);
        self.file.write_all(&record).map_err(io)?;
        self.file.sync_data().map_err(io)?;
        self.bytes += record.len() as u64;
        Ok(())
    }
}

/// Applies the records of `dir/zk-log` newer than `tree.zxid` to `tree`.
pub(crate) fn replay(dir: &Path, tree: &mut Tree) -> Result<(), ZkError> {
    let bytes = read_if_present(dir)?;
    replay_bytes(&bytes, tree)
}

/// The bytes of `dir/zk-log`, none when there is no log.
pub(crate) fn read_if_present(dir: &Path) -> Result<Vec<u8>, ZkError> {
    match std::fs::read(dir.join(FILE_NAME)) {
        Ok(b) => Ok(b),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(io(e)),
    }
}

/// Applies the complete records of a log's `bytes` newer than `tree.zxid` to `tree`. A record
/// cut short (being appended while the bytes were read, or torn by a crash) or failing its CRC
/// ends the replay.
pub(crate) fn replay_bytes(bytes: &[u8], tree: &mut Tree) -> Result<(), ZkError> {
    let mut rest = bytes;
    while rest.len() >= 8 {
        let len = u32::from_be_bytes([rest[0], rest[1], rest[2], rest[3]]) as usize;
        let crc = [rest[4], rest[5], rest[6], rest[7]];
        let Some(body) = rest.get(8..8 + len) else {
            break;
        };
        if crc32c::crc32c(body).to_be_bytes() != crc {
            break;
        }
        rest = &rest[8 + len..];
        apply_record(body, tree)?;
    }
    rebuild_children(tree)
}

fn apply_record(body: &[u8], tree: &mut Tree) -> Result<(), ZkError> {
    let mut r = Reader { buf: body };
    let zxid = r.i64()?;
    let count = r.u32()?;
    let skip = zxid <= tree.zxid;
    for _ in 0..count {
        let kind = r.take(1)?[0];
        let path = std::str::from_utf8(r.bytes()?)
            .map_err(|_| corrupt("path not UTF-8"))?
            .to_string();
        validate_path(&path).map_err(|_| corrupt("bad path"))?;
        let node = if kind == 1 {
            let data = r.bytes()?.to_vec();
            let stat = r.stat(data.len())?;
            Some(Node {
                data,
                stat,
                children: BTreeSet::new(),
            })
        } else {
            None
        };
        if skip {
            continue;
        }
        match node {
            Some(node) => {
                tree.nodes.insert(path, node);
            }
            None if path != "/" => {
                tree.nodes.remove(&path);
            }
            None => {}
        }
    }
    if !skip {
        tree.zxid = zxid;
    }
    Ok(())
}

/// Recomputes every node's children from the paths; drops nodes whose parent is gone.
pub(crate) fn rebuild_children(tree: &mut Tree) -> Result<(), ZkError> {
    let mut paths: Vec<String> = tree.nodes.keys().cloned().collect();
    paths.sort();
    for node in tree.nodes.values_mut() {
        node.children.clear();
    }
    for path in paths {
        let Some(parent) = super::client::parent_of(&path) else {
            continue;
        };
        let name = path[parent.len()..].trim_start_matches('/').to_string();
        match tree.nodes.get_mut(parent) {
            Some(p) => {
                p.children.insert(name);
            }
            None => {
                tree.nodes.remove(&path);
            }
        }
    }
    for node in tree.nodes.values_mut() {
        node.stat.num_children = i32::try_from(node.children.len()).unwrap_or(i32::MAX);
    }
    Ok(())
}
