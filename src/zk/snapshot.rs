//! The embedded store's snapshot file: every persistent znode as of one zxid, written
//! atomically (temp file, fsync, rename, fsync of the directory) when the store opens and when
//! the transaction log (`txn_log`) is compacted. Ephemeral nodes are never saved: their
//! sessions end with the process.
//!
//! Format (big-endian): magic `KZKS`, u32 format version 1, i64 last zxid, u32 node count, then
//! per node: u32 path length, path (UTF-8), u32 data length, data, i64 czxid, i64 mzxid,
//! i64 ctime, i64 mtime, i32 version, i32 cversion, i32 aversion, i64 pzxid; then a u32
//! CRC-32C of everything before it. Children and `num_children` are rebuilt from the paths.

use std::collections::BTreeSet;
use std::fs::{self, File};
use std::io::Write;
use std::path::Path;

use super::client::{Stat, ZkError, parent_of, validate_path};
use super::tree::{Node, Tree};

const MAGIC: &[u8; 4] = b"KZKS";
const FORMAT_VERSION: u32 = 1;
/// The snapshot's file name inside the store's directory.
pub(crate) const FILE_NAME: &str = "zk-snapshot";

/// Serializes the persistent nodes of `tree`.
pub(crate) fn encode(tree: &Tree) -> Vec<u8> {
    let mut paths: Vec<&String> = tree
        .nodes
        .iter()
        .filter(|(_, n)| n.stat.ephemeral_owner == 0)
        .map(|(p, _)| p)
        .collect();
    paths.sort();
    let mut out = Vec::new();
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_be_bytes());
    out.extend_from_slice(&tree.zxid.to_be_bytes());
    out.extend_from_slice(&(paths.len() as u32).to_be_bytes());
    for path in paths {
        let Some(node) = tree.nodes.get(path) else {
            continue;
        };
        out.extend_from_slice(&(path.len() as u32).to_be_bytes());
        out.extend_from_slice(path.as_bytes());
        out.extend_from_slice(&(node.data.len() as u32).to_be_bytes());
        out.extend_from_slice(&node.data);
        put_stat(&mut out, &node.stat);
    }
    let crc = crc32c::crc32c(&out);
    out.extend_from_slice(&crc.to_be_bytes());
    out
}

/// Appends the persisted fields of a stat: czxid, mzxid, ctime, mtime, version, cversion,
/// aversion, pzxid.
pub(crate) fn put_stat(out: &mut Vec<u8>, s: &Stat) {
    for v in [s.czxid, s.mzxid, s.ctime, s.mtime] {
        out.extend_from_slice(&v.to_be_bytes());
    }
    for v in [s.version, s.cversion, s.aversion] {
        out.extend_from_slice(&v.to_be_bytes());
    }
    out.extend_from_slice(&s.pzxid.to_be_bytes());
}

/// A bounds-checked reader over the snapshot or log bytes.
pub(crate) struct Reader<'a> {
    pub buf: &'a [u8],
}

impl<'a> Reader<'a> {
    /// The stat written by [`put_stat`], for a node holding `data_len` bytes.
    pub(super) fn stat(&mut self, data_len: usize) -> Result<Stat, ZkError> {
        Ok(Stat {
            czxid: self.i64()?,
            mzxid: self.i64()?,
            ctime: self.i64()?,
            mtime: self.i64()?,
            version: self.i32()?,
            cversion: self.i32()?,
            aversion: self.i32()?,
            pzxid: self.i64()?,
            data_length: i32::try_from(data_len).unwrap_or(i32::MAX),
            ..Stat::default()
        })
    }
    pub(super) fn take(&mut self, n: usize) -> Result<&'a [u8], ZkError> {
        if self.buf.len() < n {
            return Err(corrupt("truncated"));
        }
        let (head, rest) = self.buf.split_at(n);
        self.buf = rest;
        Ok(head)
    }
    pub(super) fn u32(&mut self) -> Result<u32, ZkError> {
        let b = self.take(4)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }
    pub(super) fn i32(&mut self) -> Result<i32, ZkError> {
        Ok(self.u32()? as i32)
    }
    pub(super) fn i64(&mut self) -> Result<i64, ZkError> {
        let b = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(i64::from_be_bytes(a))
    }
    pub(super) fn bytes(&mut self) -> Result<&'a [u8], ZkError> {
        let len = self.u32()? as usize;
        self.take(len)
    }
}

pub(crate) fn corrupt(why: &str) -> ZkError {
    ZkError::Io(format!("corrupt zk snapshot: {why}"))
}

/// Parses a snapshot; every length is checked against the bytes remaining.
pub(crate) fn decode(bytes: &[u8]) -> Result<Tree, ZkError> {
    if bytes.len() < 4 {
        return Err(corrupt("too short"));
    }
    let (body, crc) = bytes.split_at(bytes.len() - 4);
    if crc32c::crc32c(body).to_be_bytes() != crc {
        return Err(corrupt("crc mismatch"));
    }
    let mut r = Reader { buf: body };
    if r.take(4)? != MAGIC {
        return Err(corrupt("bad magic"));
    }
    if r.u32()? != FORMAT_VERSION {
        return Err(corrupt("unknown format version"));
    }
    let mut tree = Tree::new();
    tree.zxid = r.i64()?;
    let count = r.u32()?;
    for _ in 0..count {
        let path = std::str::from_utf8(r.bytes()?)
            .map_err(|_| corrupt("path not UTF-8"))?
            .to_string();
        validate_path(&path).map_err(|_| corrupt("bad path"))?;
        let data = r.bytes()?.to_vec();
        let stat = r.stat(data.len())?;
        tree.nodes.insert(
            path,
            Node {
                data,
                stat,
                children: BTreeSet::new(),
            },
        );
    }
    if !r.buf.is_empty() {
        return Err(corrupt("trailing bytes"));
    }
    // Rebuild the children sets; a node whose parent is missing means a corrupt file.
    let paths: Vec<String> = tree
        .nodes
        .keys()
        .filter(|p| p.as_str() != "/")
        .cloned()
        .collect();
    for path in paths {
        let parent = parent_of(&path).ok_or_else(|| corrupt("bad path"))?;
        let name = path[parent.len()..].trim_start_matches('/').to_string();
        let node = tree
            .nodes
            .get_mut(parent)
            .ok_or_else(|| corrupt("orphan node"))?;
        node.children.insert(name);
    }
    for node in tree.nodes.values_mut() {
        node.stat.num_children = i32::try_from(node.children.len()).unwrap_or(i32::MAX);
    }
    Ok(tree)
}

/// Writes `bytes` to `dir/zk-snapshot` atomically and durably.
pub(crate) fn write_atomic(dir: &Path, bytes: &[u8]) -> Result<(), ZkError> {
    let io = |e: std::io::Error| ZkError::Io(e.to_string());
    let tmp = dir.join(format!("{FILE_NAME}.tmp"));
    let mut file = File::create(&tmp).map_err(io)?;
    file.write_all(bytes).map_err(io)?;
    file.sync_all().map_err(io)?;
    drop(file);
    fs::rename(&tmp, dir.join(FILE_NAME)).map_err(io)?;
    File::open(dir).and_then(|d| d.sync_all()).map_err(io)?;
    Ok(())
}

/// Reads `dir/zk-snapshot`; `None` when there is none yet.
pub(crate) fn read(dir: &Path) -> Result<Option<Tree>, ZkError> {
    match fs::read(dir.join(FILE_NAME)) {
        Ok(bytes) => decode(&bytes).map(Some),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(ZkError::Io(e.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::zk::client::{CreateMode, Op};

    #[test]
    fn round_trip_drops_ephemerals_and_rejects_damage() {
        let mut tree = Tree::new();
        let mut t = Vec::new();
        let ops = [
            Op::Create {
                path: "/a".into(),
                data: b"x".to_vec(),
                mode: CreateMode::Persistent,
            },
            Op::Create {
                path: "/a/b".into(),
                data: vec![],
                mode: CreateMode::Persistent,
            },
            Op::Create {
                path: "/a/e".into(),
                data: vec![],
                mode: CreateMode::Ephemeral,
            },
        ];
        for (i, op) in ops.iter().enumerate() {
            tree.zxid = i as i64 + 1;
            tree.apply(op, tree.zxid, 0, 7, &mut t).unwrap();
        }
        let bytes = encode(&tree);
        let back = decode(&bytes).unwrap();
        assert_eq!(back.zxid, 3);
        assert!(!back.nodes.contains_key("/a/e"));
        assert_eq!(back.nodes["/a"].data, b"x");
        assert_eq!(back.nodes["/a"].stat.num_children, 1);
        for cut in 0..bytes.len() {
            assert!(decode(&bytes[..cut]).is_err());
        }
        let mut flipped = bytes.clone();
        flipped[10] ^= 1;
        assert!(decode(&flipped).is_err());
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..256)) {
            let _ = decode(&bytes);
            // And through the log replay, with a valid-looking record frame around them.
            let dir = tempfile::tempdir().unwrap();
            let mut framed = (bytes.len() as u32).to_be_bytes().to_vec();
            framed.extend_from_slice(&crc32c::crc32c(&bytes).to_be_bytes());
            framed.extend_from_slice(&bytes);
            std::fs::write(dir.path().join(crate::zk::txn_log::FILE_NAME), &framed).unwrap();
            let mut tree = Tree::new();
            let _ = crate::zk::txn_log::replay(dir.path(), &mut tree);
        }
    }
}
